// The alpha21064 model plugin: exports the emulated Alpha 21064 (alpha21064.hpp), CPU 0 of its
// own system (the CPUID of the host says nothing about an emulated Alpha).
#include "alpha21064.hpp"

#include <pmc/sdk/model.hpp>

namespace pmc::sim::alpha21064_plugin {
namespace {
Device* create(const CpuInfo*, char* error, std::size_t error_size) noexcept {
  try {
    return new Alpha21064Device();
  } catch (const std::exception& e) {
    std::size_t n = 0;
    for (const char* p = e.what(); error && *p && n + 1 < error_size; ++p) error[n++] = *p;
    if (error && error_size) error[n] = '\0';
  }
  return nullptr;
}
}  // namespace

const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "alpha21064",
                                      "DEC Alpha 21064 (EV4) counters behind OSF/1 pfm(7), emulated", &create, nullptr};
}  // namespace pmc::sim::alpha21064_plugin

PMC_EXPORT_MODEL(pmc::sim::alpha21064_plugin::descriptor);
