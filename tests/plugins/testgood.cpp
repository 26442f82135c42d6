// A tiny valid backend, "testgood": one 40-bit general counter, matching no CPU (score 0), so
// a directory holding it and broken plugins shows that the good one still loads. Everything it
// is lives in its data file, testgood.toml (copied next to the library): P6-like registers
// (select 0x186 with the enable bit 22, counter 0xC1) so that, named explicitly, it can run on
// the simulated P6 with the default driver; no probe rule, so its probe refuses every CPU with
// the [pmu] `unmatched` reason.
#include <pmc/sdk/backend.hpp>

namespace pmc::test_good {

namespace {
class TestGood final : public Backend {};
}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "testgood", 0,
                                        &make_backend<TestGood>};

}  // namespace pmc::test_good

PMC_EXPORT_BACKEND(pmc::test_good::descriptor);
