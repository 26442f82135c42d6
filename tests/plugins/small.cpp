// Case (f): a descriptor whose struct_size claims fewer bytes than the host's descriptor (as
// one from an older SDK would): only abi_version and struct_size. The host must not read
// further.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

#include <cstdlib>

namespace pmc::test_small {

namespace {
Backend* create() { std::abort(); }  // must never be called
}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, 2 * sizeof(std::uint32_t), "small", &create};

}  // namespace pmc::test_small

PMC_EXPORT_BACKEND(pmc::test_small::descriptor)
