// Case (e'): the descriptor has no factory at all (create == nullptr). The host must not call it.
#include <pmc/sdk/backend.hpp>

namespace pmc::test_nocreate {

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "nocreate", 0, nullptr};

}  // namespace pmc::test_nocreate

PMC_EXPORT_BACKEND(pmc::test_nocreate::descriptor);
