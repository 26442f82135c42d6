// Case (c): a backend built against a future plugin SDK: the next ABI major version (another
// major is an incompatible ABI). The host must refuse it before calling anything in it.
#include <pmc/sdk/backend.hpp>

#include <cstdlib>

namespace pmc::test_abinext {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{(kAbiMajor + 1) << 24, sizeof(pmc_backend_descriptor), "abinext", 0, &create};

}  // namespace pmc::test_abinext

PMC_EXPORT_BACKEND(pmc::test_abinext::descriptor);
