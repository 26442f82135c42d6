// Intel architectural performance monitoring, versions 1 to 5 (CPUID leaf 0AH).
//
// Everything about the PMU comes from CPUID (fact sheet docs/hardware/archperf.md,
// sections 1, 2 and 6; Intel SDM vol 3B 18.2; Linux arch/x86/events/intel/core.c
// intel_pmu_init; KVM selftests pmu.h):
//   - general counters: EAX[15:8] of them, EAX[23:16] bits wide, IA32_PERFEVTSELx at 0x186 + x
//     and IA32_PMCx at 0xC1 + x; each has its own enable bit EN (bit 22), unlike P6;
//   - fixed counters (version 2 and later): EDX[4:0] of them, EDX[12:5] bits wide, and in
//     version 5 also every counter whose bit is set in the ECX bitmap; IA32_FIXED_CTRi at
//     0x309 + i, all controlled by IA32_FIXED_CTR_CTRL (0x38D, 4 bits per counter);
//   - the architectural events CPUID.0AH:EBX marks unavailable (bit set) or does not enumerate
//     (bit index >= EAX[31:24]) are refused by encode(), naming the bit and the CPU;
//   - AnyThread (modifier t: PERFEVTSEL bit 21, fixed control bit 4i+2) exists from version 3 on
//     and not where CPUID.0AH:EDX[15] deprecates it.
//
// Quirks:
//  - Core 2 (and other early Core parts) report version 2 with EDX = 0 although they have three
//    fixed counters (SDM note "wrong version-2 data"; fact sheet 1). Linux intel_pmu_init assumes
//    at least three fixed counters for versions 2 to 4 unless running under a hypervisor
//    (CPUID.1:ECX[31]). [U] We apply it where the note does: version 2 reporting no fixed
//    counter at all, not under a hypervisor (a guest's CPUID is what its hypervisor emulates);
//    the width is the general counters' when EDX[12:5] is 0.
//  - Version 1 has no global control: the driver starts and stops each counter with its EN bit.
//    Version 2 and later: PERF_GLOBAL_CTRL (0x38F) gates everything; its reset value enables all
//    general counters, so program() clears it before it writes event selects that include EN.
//  - Writes to IA32_PMCx keep EAX[31:0] sign-extended to the counter width (SDM 18.2.5). A value
//    that sign extension cannot produce needs the full-width alias IA32_A_PMCx (0x4C1 + x), which
//    exists when IA32_PERF_CAPABILITIES[13] (0x345, present when CPUID.1:ECX[15] PDCM) is set.
//  - Fixed counters take full-width writes at 0x309 + i; bits above the width must be zero
//    (writing them #GPs on Core 2 model 23, perfctr), so the driver never writes them.
//  - Hybrid parts (CPUID.07H:EDX[15]): each core type has its own PMU. CPUID.23H subleaf 1 (when
//    CPUID.(7,1):EAX[8] and 23H.0:EAX[1] say it exists) gives this core type's general and fixed
//    counter bitmaps, and replaces the 0AH counts; CPUID.1AH:EAX[31:24] names the core type
//    (20H Atom, 40H Core). Without 23H, leaf 0AH is all we know: the probe says so.
//  - Top-down level 1 and 2 (Ice Lake and later P-cores; docs/hardware/archperf.md section 12):
//    PERF_METRICS (329H) holds one byte per metric, a fraction of fixed counter 3's slots. The
//    CPUs that have it are data (cpu/index_topdown.toml loads the PERF_METRICS events); each byte
//    is a pseudo fixed counter 16 + byte, as Linux numbers them, run through fixed counter 3 and
//    GLOBAL_CTRL bit 48 (topdown.cpp). FIXED_CTR3 and 329H are reset together, in that order.
//  - VIA / Zhaoxin ("CentaurHauls", "  Shanghai  ") may report leaf 0AH, but their architectural
//    event encodings differ (Linux drives them with arch/x86/events/zhaoxin/core.c, cycles =
//    0x0082) and Nano parts #GP on RDPMC of fixed counters: not matched here.
//
// The encoding: `config` is the value the driver writes to IA32_PERFEVTSELx, EN (bit 22)
// included, INT and PC never set; `fixed_control` is the 4-bit IA32_FIXED_CTR_CTRL field for the
// event's fixed counter (bit 0 OS, 1 USR, 2 AnyThread; PMI, bit 3, never set), unshifted. Raw
// model-specific events are perf's `rNNN` (the IA32_PERFEVTSELx value in hex: r01C2 is umask 01,
// event select C2; r18400C0 adds CMASK 1, INV, EDGE) or `cpu/event=0xC2,umask=0x01/`, both read
// by the SDK's one parser (pmc/sdk/raw_event.hpp) with archperf.toml's [perf_format] terms.
//
// encode() must know the EBX vector and the AnyThread state: it reads them from the CPU its
// context carries (facts_of). The data file (archperf.toml) holds the events, the register
// format and the modifiers; the geometry and the probe are code, because they come from CPUID.
#include "archperf.hpp"
#include "x86_sampling.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pmc::archperf {

namespace {

// Registers (fact sheet section 2).
constexpr std::uint32_t kPmc0 = 0x0C1;              // IA32_PMCx = 0xC1 + x
constexpr std::uint32_t kPerfEvtSel0 = 0x186;       // IA32_PERFEVTSELx = 0x186 + x
constexpr std::uint32_t kAPmc0 = 0x4C1;             // IA32_A_PMCx, full-width writes
constexpr std::uint32_t kFixedCtr0 = 0x309;         // IA32_FIXED_CTRi = 0x309 + i
constexpr std::uint32_t kPerfCapabilities = 0x345;  // IA32_PERF_CAPABILITIES (read-only)
constexpr std::uint32_t kFixedCtrCtrl = 0x38D;      // IA32_FIXED_CTR_CTRL
constexpr std::uint32_t kGlobalStatus = 0x38E;      // IA32_PERF_GLOBAL_STATUS (read-only)
constexpr std::uint32_t kGlobalCtrl = 0x38F;        // IA32_PERF_GLOBAL_CTRL
constexpr std::uint32_t kGlobalOvfCtrl = 0x390;     // GLOBAL_OVF_CTRL (v2-3) = STATUS_RESET (v4+)
constexpr std::uint32_t kGlobalStatusSet = 0x391;   // IA32_PERF_GLOBAL_STATUS_SET (v4+)


bool contains(const std::vector<std::uint32_t>& v, std::uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// ---------------------------------------------------------------------------------------------
class ArchPerfBackend final : public Backend {
 public:
  // The CPU tag: the version (v1..v5), and v5e for a version 5 core without architectural event
  // 7 (TOPDOWN.SLOTS; the E-cores): it lists neither that event nor the metrics built on it.
  static std::string version_tag(const Geometry& g) {
    const unsigned v = std::clamp(g.version, 1u, 5u);
    if (v == 5 && (g.ebx_length < 8 || bit(g.ebx, 7))) return "v5e";
    return fmt::format("v{}", v);
  }

  Match probe(const CpuInfo& cpu, const EventCatalog& data) const override {
    Match m;
    const std::string who = probe_subject(cpu);
    try {
      const Geometry g = geometry(cpu);
      if (!g.refusal.empty()) {
        m.reason = fmt::format("{}: {}", who, g.refusal);
        if (cpu.is_intel() && cpu.family == 6 && cpu.arch.version == 0) m.reason += " (P6-family parts are p6's)";
        return m;
      }
      m.score = data.pmu().score;  // archperf.toml: 20, above p6's 10 (p6 refuses version >= 1 anyway)
      m.cpu_tag = version_tag(g);
      m.reason = fmt::format("{}: architectural perfmon version {}: {}", who, g.version, summary(g));
      for (const auto& n : g.notes) m.reason += "; " + n;
    } catch (const std::exception& e) {  // probe must not throw
      m = Match{0, fmt::format("{}: {}", who, e.what()), {}, {}};
    }
    return m;
  }

  PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match&) const override {
    const Geometry g = geometry(cpu);
    PmuInfo p;
    p.name = data.backend();
    p.device_model = data.pmu().model;
    p.reserved = data.pmu().reserved;
    p.cpu_tag = version_tag(g);
    const bool global = g.version >= 2;
    for (unsigned i : g.general) {
      CounterInfo c{CounterKind::general, i, g.general_width, kPerfEvtSel0 + i, kPmc0 + i, 0, 0, i};
      p.counters.push_back(c);
      p.registers.push_back(kPmc0 + i);
      p.registers.push_back(kPerfEvtSel0 + i);
      if (g.pdcm) p.registers.push_back(kAPmc0 + i);
    }
    for (unsigned i : g.fixed) {
      // RDPMC reads fixed counter i with ECX bit 30 set (docs/hardware/archperf.md section 5).
      CounterInfo c{CounterKind::fixed, i, g.fixed_width, kFixedCtrCtrl, kFixedCtr0 + i, 0, 0, (1u << 30) | i};
      p.counters.push_back(c);
      p.registers.push_back(kFixedCtr0 + i);
    }
    if (g.pdcm) p.registers.push_back(kPerfCapabilities);
    if (global) {
      for (std::uint32_t r : {kFixedCtrCtrl, kGlobalStatus, kGlobalCtrl, kGlobalOvfCtrl}) p.registers.push_back(r);
      if (g.version >= 4) p.registers.push_back(kGlobalStatusSet);
    }
    // The extra registers the catalog declares ([extra.NAME]: offcore response, load latency,
    // frontend): a session on access "msr" writes the one an event's placement chose before
    // counting starts and clears it after (hal/src/access/access.cpp).
    for (const ExtraRegDef& x : data.extra_regs())
      for (std::uint32_t msr : x.msrs) p.registers.push_back(msr);
    // PERF_METRICS (topdown.cpp): one pseudo counter per byte the CPU's catalog has events for.
    add_metric_counters(p, data);
    std::sort(p.registers.begin(), p.registers.end());
    p.registers.erase(std::unique(p.registers.begin(), p.registers.end()), p.registers.end());
    // The probe's reason carries the notes (quirks applied, hybrid core type); the description
    // stays one readable line.
    p.description = fmt::format("Intel architectural perfmon v{}{} on {}: {}", g.version == 0 ? 1 : g.version,
                                g.hybrid.empty() ? "" : " (" + g.hybrid + ")", describe(cpu), summary(g));
    p.cpu = describe(cpu);
    return p;
  }

  Encoding encode(const EventSpec& given, const PmuContext& ctx) const override {
    return encode_event_for_cpu(given, ctx);
  }

  void program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    const PmuInfo& pmu = ctx.pmu;
    const bool global = contains(pmu.registers, kGlobalCtrl);
    // Version 2+: PERF_GLOBAL_CTRL resets to "all general counters on", and the selects below
    // carry EN: switch everything off first.
    if (global) regs.write(kGlobalCtrl, 0);
    const std::uint64_t en = select_bits(ctx.catalog).en;
    std::uint64_t fixed_ctrl = 0, status = 0;
    bool any_fixed = false;
    for (const auto& c : pmu.counters) {
      if (c.kind == CounterKind::fixed) {
        any_fixed = true;
        continue;
      }
      std::uint64_t sel = 0;
      for (const auto& a : set)
        if (a.counter->kind == CounterKind::general && a.counter->index == c.index)
          sel = global ? (a.encoding->config | en) : (a.encoding->config & ~en);
      regs.write(c.control_msr, sel);
    }
    for (const auto& a : set) {
      if (is_metric(*a.counter)) continue;  // fixed counter 3's field, below
      if (a.counter->kind == CounterKind::fixed) {
        fixed_ctrl |= (a.encoding->fixed_control & 0xF) << (4 * a.counter->index);  // OS, USR, AnyThread, PMI
      }
    }
    status = enable_bits(set);
    // TOPDOWN.SLOTS and the PERF_METRICS events share fixed counter 3's field (topdown.cpp).
    if (const auto slots = slots_control(set)) fixed_ctrl |= *slots << (4 * kSlotsCounter);
    if (global) {
      if (any_fixed) regs.write(kFixedCtrCtrl, fixed_ctrl);
      regs.write(kGlobalOvfCtrl, status);  // clear stale overflow bits of the counters we use
    }
    x86_sampling::program_reloads(regs, set);  // the PMI handler's reloads (period=)
  }

  const ProfilingDriver* profiling() const noexcept override { return &sampling_; }

  void start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (contains(ctx.pmu.registers, kGlobalCtrl)) {
      regs.write(kGlobalCtrl, enable_bits(set));
      return;
    }
    const std::uint64_t en = select_bits(ctx.catalog).en;
    for (const auto& a : set)  // version 1: each counter's own EN
      regs.write(a.counter->control_msr, a.encoding->config | en);
  }

  void stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (contains(ctx.pmu.registers, kGlobalCtrl)) {
      regs.write(kGlobalCtrl, 0);
      return;
    }
    const std::uint64_t en = select_bits(ctx.catalog).en;
    for (const auto& a : set) regs.write(a.counter->control_msr, a.encoding->config & ~en);
  }

  std::uint64_t read_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c) const override {
    if (is_metric(c)) return read_metric(regs, ctx.pmu, c);
    return x86_sampling::events(regs, c, regs.read(c.counter_msr) & c.width_mask());
  }

  void write_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c, std::uint64_t value) const override {
    if (is_metric(c)) {
      // A PERF_METRICS byte is a fraction of FIXED_CTR3: both start from zero together, fixed
      // counter 3 first (docs/hardware/archperf.md section 12). Only a reset can be written.
      if (value != 0)
        throw Error(errc::invalid_argument,
                    fmt::format("PERF_METRICS byte {} cannot be preset to {}: it is a fraction of fixed counter 3, "
                                "which software only resets (FIXED_CTR3 and MSR 0x329 to 0)",
                                c.index - kMetricBase, value));
      regs.write(ctx.pmu.fixed(kSlotsCounter)->counter_msr, 0);
      regs.write(kPerfMetrics, 0);
      return;
    }
    const std::uint64_t mask = c.width_mask();
    value = x86_sampling::preset(regs, c, value) & mask;  // a sampling counter starts at -period
    if (c.kind == CounterKind::fixed) {  // full width; bits above it must be written as zeros
      regs.write(c.counter_msr, value);
      return;
    }
    // IA32_PMCx takes EAX[31:0] sign-extended: what a 32-bit write can produce.
    const std::uint64_t low = value & 0xFFFFFFFFull;
    const std::uint64_t extended = (low & 0x80000000ull) ? (low | 0xFFFFFFFF00000000ull) : low;
    if ((extended & mask) == value) {
      regs.write(c.counter_msr, low);
      return;
    }
    std::uint64_t caps = 0;
    try {
      caps = regs.read(kPerfCapabilities);
    } catch (const Error&) {
      caps = 0;  // no IA32_PERF_CAPABILITIES (CPUID.1:ECX[15] PDCM clear): no full-width writes
    }
    if (!(caps & (1ull << 13)))
      throw Error(errc::invalid_argument,
                  fmt::format("general counter {} cannot be preset to 0x{:X}: IA32_PMC{} takes 32 bits sign-extended "
                              "and this CPU has no full-width writes (IA32_PERF_CAPABILITIES[13] clear or absent)",
                              c.index, value, c.index));
    regs.write(kAPmc0 + c.index, value);
  }

 private:
  // GLOBAL_CTRL (and GLOBAL_STATUS) bits of a set: i, 32 + i; a PERF_METRICS event needs fixed
  // counter 3 (35) and EN_PERF_METRICS (48), which is where Linux's pseudo index 32 + 16 lands.
  static std::uint64_t enable_bits(std::span<const Assignment> set) {
    std::uint64_t bits = 0;
    for (const auto& a : set) {
      if (is_metric(*a.counter))
        bits |= (1ull << (32 + kSlotsCounter)) | (1ull << kEnPerfMetrics);
      else
        bits |= a.counter->kind == CounterKind::fixed ? 1ull << (32 + a.counter->index) : 1ull << a.counter->index;
    }
    return bits;
  }

  x86_sampling::Driver sampling_;
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "archperf", kBackendProfiles,
                                        &make_backend<ArchPerfBackend>};

}  // namespace pmc::archperf

PMC_EXPORT_BACKEND(pmc::archperf::descriptor);
