// Case (c): a backend built against a future plugin SDK: ABI major version 3 (another major is
// an incompatible ABI). The host must refuse it before calling anything in it.
#include <pmc/sdk/backend.hpp>

#include <cstdlib>

namespace pmc::test_abi3 {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{3u << 24, sizeof(pmc_backend_descriptor), "abi3", 0, &create};

}  // namespace pmc::test_abi3

PMC_EXPORT_BACKEND(pmc::test_abi3::descriptor);
