// A backend plugin for "toy", an imaginary PMU: the smallest complete pmchal backend, built out
// of tree against an installed pmchal (README.md). Copy this folder to start a real one.
//
// The toy PMU (no CPU has it; the registers are made up):
//   ToyEvtSel  MSR 0x7000   event 7:0, umask 15:8, usr 16, os 17, enable 22 (events.toml [format])
//   ToyCtr     MSR 0x7001   one 32-bit counter
// Its probe matches only a CPU whose CPUID vendor string is "ToyVendorCPU" (toy-cpuid.txt is
// such a CPU, as a CPUID dump); on every real CPU it answers score 0, with its reason.
//
// Exceptions: backend methods may throw pmc::Error only (RegisterFile::write already throws
// pmc::Error(register_fault) for a register or bit the hardware refuses); the factory returns
// nullptr instead of throwing.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>
#include <pmc/error.hpp>

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace toy {

namespace {

constexpr std::uint32_t kToyEvtSel = 0x7000;
constexpr std::uint32_t kToyCtr = 0x7001;
constexpr std::uint64_t kEnable = 1ull << 22;
constexpr unsigned kWidth = 32;

// The event-select value of the one counter: the encoding the session scheduled on it, if any.
std::uint64_t selection(const std::vector<pmc::Assignment>& set) {
  for (const auto& a : set)
    if (a.counter->index == 0) return a.encoding->config;
  return 0;
}

class ToyBackend final : public pmc::Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "toy"; }
  [[nodiscard]] std::string_view description() const override {
    return "toy: an imaginary PMU with one 32-bit counter (the pmchal backend skeleton)";
  }

  // Hal::open calls it once per backend with the decoded CPUID; the highest score wins under
  // backend = "auto". It must not throw and never executes CPUID itself. The reason is shown
  // by `pmc probe` whether or not it matches.
  [[nodiscard]] pmc::Match probe(const pmc::CpuInfo& cpu) const override {
    pmc::Match m;
    if (cpu.vendor != "ToyVendorCPU") {
      m.reason = "toy backend: matches no real CPU";
      return m;
    }
    m.score = 1;
    m.cpu_tag = "toy1";  // declared in events.toml [cpus]
    m.reason = "ToyVendorCPU family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
               ": the imaginary toy PMU";
    return m;
  }

  // Called once, for the chosen backend, right after probing (also when backend = "toy" is
  // forced on a CPU the probe rejected).
  [[nodiscard]] pmc::PmuInfo pmu(const pmc::CpuInfo& cpu) const override {
    pmc::PmuInfo p;
    p.name = "toy";  // must equal the events.toml `backend`
    p.description = "Toy PMU (imaginary, one 32-bit counter)";
    p.cpu_tag = probe(cpu).cpu_tag;
    // sim/ has no model of this PMU: a session (access "sim") fails with "no simulated device
    // model 'toy'". probe, list and encode work without one.
    p.device_model = "toy";
    p.counters = {pmc::CounterInfo{pmc::CounterKind::general, 0, kWidth, kToyEvtSel, kToyCtr}};
    p.registers = {kToyEvtSel, kToyCtr};
    return p;
  }

  // encode() is inherited: pmc::encode_with_catalog over events.toml. read_counter() and
  // write_counter() are inherited too: RDMSR/WRMSR of counter_msr, masked to the width.

  // The session calls program() while the PMU is stopped (at the first start() after the event
  // set changed), then write_counter(0) for each counter; start() and stop() around counting.
  void program(pmc::RegisterFile& regs, const pmc::PmuInfo&, const std::vector<pmc::Assignment>& set) const override {
    regs.write(kToyEvtSel, selection(set));  // without the enable bit: nothing counts yet
  }
  void start(pmc::RegisterFile& regs, const pmc::PmuInfo&, const std::vector<pmc::Assignment>& set) const override {
    regs.write(kToyEvtSel, selection(set) | kEnable);
  }
  void stop(pmc::RegisterFile& regs, const pmc::PmuInfo&, const std::vector<pmc::Assignment>& set) const override {
    regs.write(kToyEvtSel, selection(set));
  }
};

// The factory: nullptr on failure, never an exception.
pmc::Backend* create() { return new (std::nothrow) ToyBackend(); }

}  // namespace

// Checked by the host before anything else: ABI major, descriptor size, name, factory.
const pmc::pmc_backend_descriptor descriptor{pmc::kBackendAbiVersion, sizeof(pmc::pmc_backend_descriptor), "toy",
                                             &create};

}  // namespace toy

// Exports the descriptor under the alias "pmc_backend_v1" (pass a qualified name).
PMC_EXPORT_BACKEND(toy::descriptor)
