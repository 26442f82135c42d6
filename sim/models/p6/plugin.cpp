// The p6 model plugin: exports the P6 device model (p6_model.hpp) under its name.
#include "p6_model.hpp"

#include <pmc/sdk/model.hpp>

namespace pmc::sim::p6_plugin {
const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "p6",
                                      "Intel P6 PMU (Pentium Pro to Pentium M): PerfEvtSel0/1, two 40-bit counters",
                                      &make_device<P6Device>, nullptr};
}  // namespace pmc::sim::p6_plugin

PMC_EXPORT_MODEL(pmc::sim::p6_plugin::descriptor);
