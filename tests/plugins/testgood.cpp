// A tiny valid backend, "testgood": one 40-bit general counter, matching no CPU (score 0), so
// a directory holding it and broken plugins shows that the good one still loads. Its driver
// uses P6-like registers (select 0x186 with enable bit 22, counter 0xC1) so that, named
// explicitly, it can run on the simulated P6.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>

#include <new>

namespace pmc::test_good {

namespace {

constexpr std::uint32_t kSelect = 0x186;
constexpr std::uint32_t kCounter = 0x0C1;
constexpr std::uint64_t kEnable = 1ull << 22;

class TestGood final : public Backend {
 public:
  std::string_view name() const override { return "testgood"; }
  std::string_view description() const override { return "pmchal test backend: one counter"; }
  Match probe(const CpuInfo&) const override {
    Match m;
    m.reason = "testgood is a test backend and matches no CPU";
    return m;
  }
  PmuInfo pmu(const CpuInfo&) const override {
    PmuInfo p;
    p.name = "testgood";
    p.description = "pmchal test backend (one counter)";
    p.device_model = "p6";
    p.counters = {CounterInfo{CounterKind::general, 0, 40, kSelect, kCounter}};
    p.registers = {kSelect, kCounter};
    return p;
  }
  void program(RegisterFile& regs, const PmuInfo&, const std::vector<Assignment>& set) const override {
    regs.write(kSelect, set.empty() ? 0 : set.front().encoding->config);
  }
  void start(RegisterFile& regs, const PmuInfo&, const std::vector<Assignment>& set) const override {
    regs.write(kSelect, (set.empty() ? 0 : set.front().encoding->config) | kEnable);
  }
  void stop(RegisterFile& regs, const PmuInfo&, const std::vector<Assignment>& set) const override {
    regs.write(kSelect, set.empty() ? 0 : set.front().encoding->config);
  }
};

Backend* create() { return new (std::nothrow) TestGood(); }

}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, sizeof(pmc_backend_descriptor), "testgood", &create};

}  // namespace pmc::test_good

PMC_EXPORT_BACKEND(pmc::test_good::descriptor)
