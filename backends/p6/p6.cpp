// Intel P6 family backend: Pentium Pro, Pentium II, Celeron, Pentium III, Pentium M.
//
// Quirks (shared/reference/p6.md; Intel SDM vol. 3B "Pentium Pro processor performance
// monitoring"; Linux arch/x86/events/intel/p6.c; FreeBSD hwpmc_ppro.c):
//  - One enable bit for both counters: EN (bit 22) exists only in PerfEvtSel0 and switches both
//    counters on; in PerfEvtSel1 it is reserved. The driver therefore writes PerfEvtSel0 with
//    EN even when only counter 1 is used (the rest of PerfEvtSel0 zero, so counter 0 counts
//    nothing), and stops everything by clearing EN.
//  - Counter writes keep bits 31:0 and copy bit 31 into bits 39:32, so only values below 2^31
//    or from 2^40 - 2^31 up can be preset.
//  - No overflow status register: an overflow is only visible as an interrupt (INT, bit 20).
//  - PPro erratum 26: RDPMC is unreliable before stepping 9 of the Pentium Pro (model 1).
//  - Pentium M only: IA32_MISC_ENABLE (MSR 0x1A0) bit 7 "performance monitoring available" is
//    read-only and must be 1 (sheet section 1; perfctr intel_p6_init refuses the CPU otherwise).
//    program() reads it before it writes anything and refuses a Pentium M whose firmware
//    cleared it; 0x1A0 is among the registers the driver may touch on "pm" only.
//  - Counter constraints (FLOPS, FP_COMP_OPS_EXE, CYCLES_DIV_BUSY on counter 0; FP_ASSIST, MUL,
//    DIV on counter 1) are data in events.toml; the scheduler is generic.
#include <pmc/backend.hpp>
#include <pmc/backend_export.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <new>

namespace pmc::p6 {

namespace {

constexpr std::uint32_t kPerfCtr0 = 0x0C1;
constexpr std::uint32_t kPerfCtr1 = 0x0C2;
constexpr std::uint32_t kPerfEvtSel0 = 0x186;
constexpr std::uint32_t kPerfEvtSel1 = 0x187;
constexpr std::uint64_t kEnable = 1ull << 22;
constexpr std::uint32_t kMiscEnable = 0x1A0;                // IA32_MISC_ENABLE, Pentium M
constexpr std::uint64_t kPerfmonAvailable = 1ull << 7;      // its bit 7, read-only
constexpr unsigned kWidth = 40;

struct Model {
  unsigned model;
  const char* tag;
  const char* name;
};

// CPUID family 6 models with the P6 PMU (Linux p6_pmu_init; perfctr adds 0 and 4).
constexpr Model kModels[] = {
    {0, "ppro", "Pentium Pro (A-step)"},
    {1, "ppro", "Pentium Pro"},
    {3, "pii", "Pentium II (Klamath)"},
    {4, "ppro", "Pentium II OverDrive for Pentium Pro sockets (P55CT, treated as P6 by perfctr)"},
    {5, "pii", "Pentium II (Deschutes)"},
    {6, "pii", "Celeron (Mendocino)"},
    {7, "piii", "Pentium III (Katmai)"},
    {8, "piii", "Pentium III (Coppermine)"},
    {9, "pm", "Pentium M (Banias)"},
    {10, "piii", "Pentium III Xeon (Cascades)"},
    {11, "piii", "Pentium III (Tualatin)"},
    {13, "pm", "Pentium M (Dothan)"},
};

const Model* find_model(const CpuInfo& cpu) {
  for (const auto& m : kModels)
    if (m.model == cpu.model) return &m;
  return nullptr;
}

class P6Backend final : public Backend {
 public:
  std::string_view name() const override { return "p6"; }
  std::string_view description() const override {
    return "Intel P6 family: two 40-bit counters, PerfEvtSel0/1 with one global enable";
  }

  Match probe(const CpuInfo& cpu) const override {
    Match m;
    std::string who = fmt::format("{} family {} model {}", cpu.vendor, cpu.family, cpu.model);
    if (!cpu.is_intel()) {
      m.reason = fmt::format("{}: vendor is not GenuineIntel", who);
    } else if (cpu.family != 6) {
      m.reason = fmt::format("{}: not the P6 family (family 6)", who);
    } else if (cpu.arch.version > 0) {
      m.reason = fmt::format("{}: has architectural perfmon version {} (CPUID.0AH), which archperf drives", who,
                             cpu.arch.version);
    } else if (const Model* model = find_model(cpu)) {
      m.score = 10;
      m.cpu_tag = model->tag;
      m.reason = fmt::format("{}: {}", who, model->name);
      if (cpu.model == 1 && cpu.stepping < 9)
        m.reason += fmt::format("; stepping {} has PPro erratum 26 (RDPMC unreliable), counters are read with RDMSR",
                                cpu.stepping);
      if (std::string_view(model->tag) == "pm")
        m.reason += "; counting needs IA32_MISC_ENABLE (0x1A0) bit 7 (performance monitoring available, set by "
                    "firmware), checked before the counters are programmed";
    } else {
      m.reason = fmt::format("{}: unsupported P6 model (no CPUID.0AH and not a known P6 part)", who);
    }
    return m;
  }

  PmuInfo pmu(const CpuInfo& cpu) const override {
    PmuInfo p;
    p.name = "p6";
    const Match m = probe(cpu);
    p.cpu_tag = m.cpu_tag;
    const Model* model = find_model(cpu);
    p.description = m.matched() && model ? fmt::format("Intel P6 ({})", model->name)
                                         : std::string("Intel P6 (CPU not a P6 part: every model's events)");
    p.device_model = "p6";
    p.cpu = describe(cpu);
    p.counters = {
        CounterInfo{CounterKind::general, 0, kWidth, kPerfEvtSel0, kPerfCtr0},
        CounterInfo{CounterKind::general, 1, kWidth, kPerfEvtSel1, kPerfCtr1},
    };
    p.registers = {kPerfCtr0, kPerfCtr1, kPerfEvtSel0, kPerfEvtSel1};
    if (p.cpu_tag == "pm") p.registers.push_back(kMiscEnable);  // read by program(), never written
    return p;
  }

  Encoding encode(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu) const override {
    Encoding e = encode_with_catalog(spec, catalog, pmu);
    // The encoder never sets EN or INT; PC (bit 19) and bit 21 are not settable (perfctr
    // refuses both), so a catalog that produced them is broken.
    if (e.config & ((1ull << 19) | (1ull << 21) | kEnable | (0xFFFFFFFFull << 32)))
      throw Error(errc::invalid_argument,
                  fmt::format("event '{}' encodes to 0x{:X}, which sets bits a P6 event may not set", spec.text, e.config));
    return e;
  }

  void program(RegisterFile& regs, const PmuInfo& pmu, const std::vector<Assignment>& set) const override {
    // Pentium M: firmware may report the PMU unavailable (sheet section 1). Checked before any
    // write, so a refused session leaves the registers as they were.
    if (pmu.cpu_tag == "pm" && (regs.read(kMiscEnable) & kPerfmonAvailable) == 0)
      throw Error(errc::not_supported,
                  "IA32_MISC_ENABLE (0x1A0) bit 7 is 0: performance monitoring is unavailable on this Pentium M "
                  "(disabled by firmware)");
    std::uint64_t sel[2] = {0, 0};
    for (const auto& a : set) sel[a.counter->index] = a.encoding->config;
    // PerfEvtSel0 without EN: nothing counts until start().
    regs.write(kPerfEvtSel0, sel[0]);
    regs.write(kPerfEvtSel1, sel[1]);
  }

  void start(RegisterFile& regs, const PmuInfo&, const std::vector<Assignment>& set) const override {
    std::uint64_t sel0 = 0;
    for (const auto& a : set)
      if (a.counter->index == 0) sel0 = a.encoding->config;
    // EN starts both counters at once; with counter 0 unused PerfEvtSel0 is EN alone (USR and
    // OS clear), so counter 0 stays frozen while counter 1 counts.
    regs.write(kPerfEvtSel0, sel0 | kEnable);
  }

  void stop(RegisterFile& regs, const PmuInfo&, const std::vector<Assignment>& set) const override {
    std::uint64_t sel0 = 0;
    for (const auto& a : set)
      if (a.counter->index == 0) sel0 = a.encoding->config;
    regs.write(kPerfEvtSel0, sel0);  // EN clear: both counters stop in the same instant
  }

  void write_counter(RegisterFile& regs, const CounterInfo& c, std::uint64_t value) const override {
    const std::uint64_t top = 1ull << kWidth;
    value &= top - 1;
    if (value >= (1ull << 31) && value < top - (1ull << 31))
      throw Error(errc::invalid_argument,
                  fmt::format("P6 counter {} cannot be preset to 0x{:X}: a write keeps bits 31:0 and copies bit 31 "
                              "into bits 39:32, so only values below 2^31 or from 2^40-2^31 up can be written",
                              c.index, value));
    regs.write(c.counter_msr, value & 0xFFFFFFFFull);
  }
};

Backend* create() { return new (std::nothrow) P6Backend(); }

}  // namespace

const pmc_backend_descriptor descriptor{kBackendAbiVersion, sizeof(pmc_backend_descriptor), "p6", &create};

}  // namespace pmc::p6

PMC_EXPORT_BACKEND(pmc::p6::descriptor)
