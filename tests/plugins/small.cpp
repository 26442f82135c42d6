// Case (f): a descriptor whose struct_size claims fewer bytes than the host's descriptor (as
// one from an older SDK would): only abi_version and struct_size. The host must not read
// further.
#include <pmc/sdk/backend.hpp>

#include <cstdlib>

namespace pmc::test_small {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, 2 * sizeof(std::uint32_t), "small", 0, &create};

}  // namespace pmc::test_small

PMC_EXPORT_BACKEND(pmc::test_small::descriptor);
