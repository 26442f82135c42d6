// A backend plugin for "toy", an imaginary PMU: the smallest complete pmchal backend, built out
// of tree against an installed pmchal (README.md). Copy this folder to start a real one.
//
// A backend is its data file (toy.toml: the probe table, the counters and registers, the
// register format, the modifiers and the events) plus code for what a table cannot say. The
// toy PMU has no quirk, so this class overrides nothing: the SDK's defaults probe from the
// table, build the counters from [[pmu.counters]], encode from the events, and drive the
// counter through its "en" bit. A real PMU overrides the operations its quirks need
// (<pmc/sdk/backend.hpp>; pmchal's backends/p6/p6.cpp overrides four).
//
// Exceptions: backend methods may throw pmc::Error only; the factory (pmc::make_backend) never
// throws across the plugin boundary.
#include <pmc/sdk/backend.hpp>

namespace toy {

class ToyBackend final : public pmc::Backend {};

// Checked by the host before anything else: ABI version, descriptor size, name (also the name
// of the data file, toy.toml), capabilities (none: no profiling), factory.
const pmc::pmc_backend_descriptor descriptor{pmc::kAbiVersion, sizeof(pmc::pmc_backend_descriptor), "toy", 0,
                                             &pmc::make_backend<ToyBackend>};

}  // namespace toy

// Exports the descriptor under the symbol "pmc_backend_v2" (pass a qualified name).
PMC_EXPORT_BACKEND(toy::descriptor);
