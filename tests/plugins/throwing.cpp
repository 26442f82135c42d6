// Case (d): constructing the backend throws. The SDK factory (pmc::make_backend) must not let
// the exception out (the descriptor's create is noexcept): it returns nullptr with the
// exception's message in the error buffer, and the host reports the plugin as broken with it.
#include <pmc/sdk/backend.hpp>

#include <stdexcept>

namespace pmc::test_throwing {

namespace {
class Throwing final : public Backend {
 public:
  Throwing() { throw std::runtime_error("deliberate failure"); }
};
}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "throwing", 0,
                                        &make_backend<Throwing>};

}  // namespace pmc::test_throwing

PMC_EXPORT_BACKEND(pmc::test_throwing::descriptor);
