// The amd model plugin: exports the AMD core PMU device model (amd_model.hpp) under its name.
#include "amd_model.hpp"

#include <pmc/sdk/model.hpp>

namespace pmc::sim::amd_plugin {
const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "amd",
                                      "AMD core PMU, K7 to Zen 5: 48-bit counters, PerfCtrExtCore, PerfMonV2",
                                      &make_device<AmdDevice>, &device_signal<AmdDevice>};
}  // namespace pmc::sim::amd_plugin

PMC_EXPORT_MODEL(pmc::sim::amd_plugin::descriptor);
