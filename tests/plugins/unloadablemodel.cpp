// A model-only library that cannot be loaded (an undefined symbol, as case (a)): the loader lists
// it without loading it (its symbol table defines only pmc_model_v2), and reports it when a
// model is first needed or the plugins are listed. Linked with --unresolved-symbols=ignore-all.
#include <pmc/sdk/model.hpp>

extern "C" void pmc_test_missing_model_symbol();

namespace pmc::test_unloadable_model {

namespace {
Device* create(const CpuInfo* /*cpu*/, char* /*error*/, std::size_t /*error_size*/) noexcept {
  pmc_test_missing_model_symbol();
  return nullptr;
}
}  // namespace

const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "unloadablemodel", "never loads",
                                      &create, nullptr};

}  // namespace pmc::test_unloadable_model

PMC_EXPORT_MODEL(pmc::test_unloadable_model::descriptor);
