// Case (d): the factory throws. The host catches it (while the library is still loaded) and
// reports the plugin as broken with the exception's message.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

#include <stdexcept>

namespace pmc::test_throwing {

namespace {
Backend* create() { throw std::runtime_error("deliberate failure"); }
}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, sizeof(pmc_backend_descriptor), "throwing", &create};

}  // namespace pmc::test_throwing

PMC_EXPORT_BACKEND(pmc::test_throwing::descriptor)
