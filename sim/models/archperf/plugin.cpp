// The archperf model plugin: exports the architectural-perfmon device model (archperf_model.hpp).
#include "archperf_model.hpp"

#include <pmc/sdk/model.hpp>

namespace pmc::sim::archperf_plugin {
const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "archperf",
                                      "Intel architectural performance monitoring v1-v5, geometry from CPUID",
                                      &make_device<ArchPerfDevice>,
                                      &device_signal<ArchPerfDevice>};
}  // namespace pmc::sim::archperf_plugin

PMC_EXPORT_MODEL(pmc::sim::archperf_plugin::descriptor);
