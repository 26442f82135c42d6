// The p5 model plugin: exports the Pentium PMU device model (p5_model.hpp) under its name.
#include "p5_model.hpp"

#include <pmc/sdk/model.hpp>

namespace pmc::sim::p5_plugin {
const pmc_model_descriptor descriptor{kAbiVersion, sizeof(pmc_model_descriptor), "p5",
                                      "Intel Pentium PMU (P5, P54C, P55C): CESR halves, two 40-bit counters",
                                      &make_device<P5Device>, nullptr};
}  // namespace pmc::sim::p5_plugin

PMC_EXPORT_MODEL(pmc::sim::p5_plugin::descriptor);
