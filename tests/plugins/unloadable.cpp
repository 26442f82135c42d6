// Case (a): references a symbol that no library defines, so dlopen with RTLD_NOW fails with
// "undefined symbol: pmc_test_missing_symbol". Linked with --unresolved-symbols=ignore-all.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

extern "C" void pmc_test_missing_symbol();

namespace pmc::test_unloadable {

namespace {
Backend* create() {
  pmc_test_missing_symbol();
  return nullptr;
}
}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, sizeof(pmc_backend_descriptor), "unloadable", &create};

}  // namespace pmc::test_unloadable

PMC_EXPORT_BACKEND(pmc::test_unloadable::descriptor)
