// Intel P6 family backend: Pentium Pro, Pentium II, Celeron, Pentium III, Pentium M.
//
// The backend is its data file (p6.toml: events, register fields, counters, registers, probe
// table) plus the quirks below (docs/hardware/p6.md; Intel SDM vol. 3B "Pentium Pro processor
// performance monitoring"; Linux arch/x86/events/intel/p6.c; FreeBSD hwpmc_ppro.c):
//  - One enable bit for both counters: EN (bit 22) exists only in PerfEvtSel0 and switches both
//    counters on; in PerfEvtSel1 it is reserved. The driver therefore writes PerfEvtSel0 with
//    EN even when only counter 1 is used (the rest of PerfEvtSel0 zero, so counter 0 counts
//    nothing), and stops everything by clearing EN.
//  - Counter writes keep bits 31:0 and copy bit 31 into bits 39:32, so only values below 2^31
//    or from 2^40 - 2^31 up can be preset.
//  - No overflow status register: an overflow is visible as an interrupt (INT, bit 20), or by
//    software from bit 39 after a negative preset.
//  - PPro erratum 26: RDPMC is unreliable before stepping 9 of the Pentium Pro (model 1).
//  - Family-6 parts with architectural perfmon (CPUID.0AH version above 0) are archperf's.
//  - Pentium M only: IA32_MISC_ENABLE (MSR 0x1A0) bit 7 "performance monitoring available" is
//    read-only and must be 1 (p6.md section 1; perfctr intel_p6_init refuses the CPU otherwise).
//    program() reads it before it writes anything and refuses a Pentium M whose firmware
//    cleared it; 0x1A0 is among the registers the driver may touch on "pm" only (p6.toml).
//  - Counter constraints (FLOPS, FP_COMP_OPS_EXE, CYCLES_DIV_BUSY on counter 0; FP_ASSIST, MUL,
//    DIV on counter 1) are data in p6.toml; the scheduler is generic.
//  - Sampling (backends/common/x86_sampling.hpp; p6.md section 4a): `period=N` sets INT (bit 20)
//    and presets the counter to -N, so N is at most 2^31 - 1 (the preset keeps bits 31:0 and
//    sign-extends bit 31). The PMI handler reloads -N at each overflow and records the
//    interrupted PC and mode; the ProfilingDriver reads them (access "sim").
#include "x86_sampling.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/raw_event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace pmc::p6 {

namespace {

// The registers, EN and the counter width are p6.toml's ([[pmu.counters]], [[pmu.registers]],
// [format] en). Bit 7 of IA32_MISC_ENABLE is not: the data schema declares registers, not
// their fields.
constexpr std::string_view kMiscEnable = "IA32_MISC_ENABLE";  // [[pmu.registers]], Pentium M
constexpr std::uint64_t kPerfmonAvailable = 1ull << 7;      // its bit 7, read-only (p6.md section 1)

// IA32_MISC_ENABLE when the data declares it for the CPU's tag (p6.toml: cpus = ["pm"]), else
// nullptr. A CPU without a tag (not a P6 part, the backend forced onto it) has none.
const RegisterDecl* misc_enable(const EventCatalog& data, std::string_view tag) {
  if (tag.empty()) return nullptr;
  for (const RegisterDecl& r : data.pmu().registers)
    if (r.name == kMiscEnable && (r.cpus.empty() || std::find(r.cpus.begin(), r.cpus.end(), tag) != r.cpus.end()))
      return &r;
  return nullptr;
}

// PerfEvtSel0's EN, the global enable ([format] en).
std::uint64_t global_enable(const EventCatalog& data) {
  const auto en = data.format().field("en");
  if (!en) throw Error(errc::not_supported, "p6.toml's [format] has no field en (PerfEvtSel0's global enable)");
  return en->mask();
}

// Counter 0, whose PerfEvtSel holds EN.
const CounterInfo& counter0(const PmuInfo& pmu) {
  const CounterInfo* c = pmu.general(0);
  if (!c) throw Error(errc::not_supported, "p6.toml declares no general counter 0 (PerfEvtSel0 holds EN)");
  return *c;
}

// The selection of counter `index` in the session's set (0: unused).
std::uint64_t selection(std::span<const Assignment> set, unsigned index) {
  for (const auto& a : set)
    if (a.counter->index == index) return a.encoding->config;
  return 0;
}

// The largest sampling period: a preset of -N keeps bits 31:0 and copies bit 31 up (p6.md section 4).
constexpr std::uint64_t kMaxPeriod = (1ull << 31) - 1;

class P6Backend final : public Backend {
 public:
  const ProfilingDriver* profiling() const noexcept override { return &sampling_; }

  Encoding encode(const EventSpec& spec, const PmuContext& ctx) const override {
    // A catalog event, or a raw one: perf's rNNN (the PerfEvtSel value) or cpu/event=..,umask=../
    // with p6.toml's [perf_format] terms, read by the SDK's one parser (pmc/sdk/raw_event.hpp).
    EventSpec scratch;
    const EventSpec& counted = x86_sampling::without_period(spec, scratch);
    const std::optional<RawEvent> raw = raw_event(counted, ctx.catalog, ctx.pmu);
    Encoding e = raw ? encode_raw(spec, *raw, ctx.catalog, ctx.pmu) : encode_with_catalog(counted, ctx.catalog, ctx.pmu);
    e.event = spec.text;
    const std::uint64_t period = x86_sampling::period_of(
        spec, kMaxPeriod, "a P6 counter can be preset for (a write keeps bits 31:0 and sign-extends bit 31)");
    x86_sampling::set_sampling(e, spec, period, x86_sampling::frequency_of(spec));
    if (e.interrupt) ctx.catalog.format().set(e.config, "int", 1);  // INT: a PMI at each overflow (p6.md section 3)
    return e;
  }

  Match probe(const CpuInfo& cpu, const EventCatalog& data) const override {
    if (cpu.is_intel() && cpu.family == 6 && cpu.arch.version > 0)
      return Match{0,
                   fmt::format("{} family {} model {}: has architectural perfmon version {} (CPUID.0AH), which archperf "
                               "drives",
                               cpu.vendor, cpu.family, cpu.model, cpu.arch.version),
                   {},
                   {}};
    Match m = probe_table(cpu, data);
    if (!m.matched()) return m;
    if (cpu.model == 1 && cpu.stepping < 9)
      m.reason += fmt::format("; stepping {} has PPro erratum 26 (RDPMC unreliable), counters are read with RDMSR",
                              cpu.stepping);
    if (const RegisterDecl* misc = misc_enable(data, m.cpu_tag))
      m.reason += fmt::format("; counting needs {} (0x{:X}) bit 7 (performance monitoring available, set by "
                              "firmware), checked before the counters are programmed",
                              misc->name, misc->address);
    return m;
  }

  PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match& verdict) const override {
    PmuInfo p = pmu_from_data(cpu, data, verdict.cpu_tag);
    p.description = verdict.matched() ? fmt::format("Intel P6 ({})", verdict.part)
                                      : std::string("Intel P6 (CPU not a P6 part: every model's events)");
    return p;
  }

  void program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    // Pentium M: firmware may report the PMU unavailable (p6.md section 1). Checked before any
    // write, so a refused session leaves the registers as they were.
    if (const RegisterDecl* misc = misc_enable(ctx.catalog, ctx.pmu.cpu_tag);
        misc && (regs.read(misc->address) & kPerfmonAvailable) == 0)
      throw Error(errc::not_supported,
                  fmt::format("{} (0x{:X}) bit 7 is 0: performance monitoring is unavailable on this Pentium M "
                              "(disabled by firmware)",
                              misc->name, misc->address));
    // PerfEvtSel0 without EN: nothing counts until start().
    for (const CounterInfo& c : ctx.pmu.counters)
      if (c.kind == CounterKind::general) regs.write(c.control_msr, selection(set, c.index));
    x86_sampling::program_reloads(regs, set);
  }

  void start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    // EN starts both counters at once; with counter 0 unused PerfEvtSel0 is EN alone (USR and
    // OS clear), so counter 0 stays frozen while counter 1 counts.
    regs.write(counter0(ctx.pmu).control_msr, selection(set, 0) | global_enable(ctx.catalog));
  }

  void stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    // EN clear: both counters stop in the same instant
    regs.write(counter0(ctx.pmu).control_msr, selection(set, 0));
  }

  std::uint64_t read_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c) const override {
    return x86_sampling::events(regs, c, Backend::read_counter(regs, ctx, c));
  }

  void write_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c, std::uint64_t value) const override {
    value = x86_sampling::preset(regs, c, value);  // a sampling counter starts at -period
    // 2^width - 2^31, written so that a 64-bit counter does not shift by 64
    const std::uint64_t high_start = c.width_mask() - ((1ull << 31) - 1);
    value &= c.width_mask();
    if (value >= (1ull << 31) && value < high_start)
      throw Error(errc::invalid_argument,
                  fmt::format("P6 counter {} cannot be preset to 0x{:X}: a write keeps bits 31:0 and copies bit 31 "
                              "into bits {}:32, so only values below 2^31 or from 2^{}-2^31 up can be written",
                              c.index, value, c.width - 1, c.width));
    regs.write(c.counter_msr, value & 0xFFFFFFFFull);
  }

 private:
  x86_sampling::Driver sampling_;
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "p6", kBackendProfiles,
                                        &make_backend<P6Backend>};

}  // namespace pmc::p6

PMC_EXPORT_BACKEND(pmc::p6::descriptor);
