// Case (a): references a symbol that no library defines, so dlopen with RTLD_NOW fails with
// "undefined symbol: pmc_test_missing_symbol". Linked with --unresolved-symbols=ignore-all.
#include <pmc/sdk/backend.hpp>

extern "C" void pmc_test_missing_symbol();

namespace pmc::test_unloadable {

namespace {
Backend* create(char* /*error*/, std::size_t /*error_size*/) noexcept {
  pmc_test_missing_symbol();
  return nullptr;
}
}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "unloadable", 0, &create};

}  // namespace pmc::test_unloadable

PMC_EXPORT_BACKEND(pmc::test_unloadable::descriptor);
