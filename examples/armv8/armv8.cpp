// An out-of-tree pmchal backend for the Arm PMUv3, the Performance Monitors Extension of ARMv8-A:
// the common events (armv8.toml), PMCR_EL0.N event counters and the cycle counter PMCCNTR_EL0.
// It is built against an installed pmchal (README.md) and counts on its own device model
// (model.cpp) on any machine, or on a real arm64 Linux machine through perf.
//
// Most of it is data (armv8.toml: the registers, the PMEVTYPER fields, the events, the probe
// table). The code holds what a table cannot say. Quirks:
//  - Probe: the CPU must be AArch64 (CpuInfo::isa) with a PMUv3 (ID_AA64DFR0_EL1.PMUVer 1, or 4
//    and later; 0 is no PMU, 0xF an IMPLEMENTATION DEFINED one); only then does the [[probe]]
//    table name the part, matching MIDR_EL1 as CpuInfo maps it (vendor = implementer, model =
//    PartNum).
//  - Shape: the data declares all 31 event counters; the CPU has PMCR_EL0.N of them. From
//    PMUv3p5 (PMUVer 6) the event counters are 64 bits wide when PMCR_EL0.LP is set, which the
//    driver does.
//  - Privilege: PMEVTYPER<n>_EL0.U (bit 30) and .P (bit 31) EXCLUDE EL0 and EL1, where the
//    catalog's u/k pair sets a bit for each level to count: encode() inverts both.
//  - The cycle counter's PMCCFILTR_EL0 holds the filter bits only (its event field is RES0).
//  - Enabling is two-level: PMCR_EL0.E for the whole PMU (set by program(), with LC: the cycle
//    counter overflows at 64 bits), PMCNTENSET_EL0 / PMCNTENCLR_EL0 bit n per event counter and
//    bit 31 for the cycle counter (start() and stop()).
//
// Exceptions: backend methods throw pmc::Error only; the factory never throws.
#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>

#include <algorithm>
#include <string>

namespace armv8 {

namespace {

// System register numbers (armv8.toml's header explains the encoding).
constexpr std::uint32_t kPmcr = 0xDCE0;
constexpr std::uint32_t kPmcntenset = 0xDCE1;
constexpr std::uint32_t kPmcntenclr = 0xDCE2;

constexpr std::uint64_t kPmcrE = 1u << 0;    // enable
constexpr std::uint64_t kPmcrLc = 1u << 6;   // long cycle counter: overflow at 64 bits
constexpr std::uint64_t kPmcrLp = 1u << 7;   // long event counters (PMUv3p5)
constexpr std::uint64_t kU = 1ull << 30;     // PMEVTYPER.U: do not count at EL0
constexpr std::uint64_t kP = 1ull << 31;     // PMEVTYPER.P: do not count at EL1
constexpr std::uint64_t kNsh = 1ull << 27;   // PMEVTYPER.NSH: count at EL2
constexpr std::uint64_t kFilterBits = kP | kU | kNsh;
constexpr unsigned kCycleCounterBit = 31;    // PMCNTENSET/CLR bit of PMCCNTR_EL0
constexpr unsigned kPmuV3p5 = 6;             // PMUVer of PMUv3p5: 64-bit event counters

std::string hex(unsigned v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

std::string pmu_version_name(unsigned v) {
  switch (v) {
    case 1: return "PMUv3";
    case 4: return "PMUv3p1";
    case 5: return "PMUv3p4";
    case 6: return "PMUv3p5";
    case 7: return "PMUv3p7";
    case 8: return "PMUv3p8";
    case 9: return "PMUv3p9";
    default: return "PMUVer " + std::to_string(v);
  }
}

// The counters the session uses, as a PMCNTENSET_EL0 / PMCNTENCLR_EL0 mask.
std::uint64_t enable_mask(std::span<const pmc::Assignment> set) {
  std::uint64_t mask = 0;
  for (const auto& a : set)
    mask |= std::uint64_t{1} << (a.counter->kind == pmc::CounterKind::fixed ? kCycleCounterBit : a.counter->index);
  return mask;
}

// Without PMCR_EL0 (running natively, Linux hides it) the number of event counters is unknown:
// six, what the Cortex-A cores of this catalog have, is assumed; Linux itself, which knows N,
// multiplexes when perf is asked for more.
constexpr unsigned kAssumedCounters = 6;

unsigned event_counters(const pmc::CpuInfo& cpu) {
  if (cpu.arm.pmu_inferred && cpu.arm.pmu_counters == 0) return kAssumedCounters;
  return cpu.arm.pmu_counters;
}

}  // namespace

class Armv8Backend final : public pmc::Backend {
 public:
  pmc::Match probe(const pmc::CpuInfo& cpu, const pmc::EventCatalog& data) const override {
    pmc::Match m;
    if (cpu.isa != pmc::Isa::aarch64) {
      m.reason = pmc::describe(cpu) + ": not an AArch64 CPU";
      return m;
    }
    const unsigned ver = cpu.arm.pmu_version;
    const std::string who = pmc::describe(cpu);
    if (ver == 0) {
      m.reason = who + ": ID_AA64DFR0_EL1.PMUVer = 0, no Performance Monitors Extension";
      return m;
    }
    if (ver == 0xF || (ver >= 2 && ver <= 3)) {
      m.reason = who + ": ID_AA64DFR0_EL1.PMUVer = " + hex(ver) + ", not a PMUv3 (IMPLEMENTATION DEFINED PMU)";
      return m;
    }
    // The part's name and tag from the table.
    pmc::Match t = pmc::probe_table(cpu, data);
    if (!t.matched()) return t;
    const unsigned n = event_counters(cpu);
    m = t;
    m.reason = who + ": " + t.part + ", " + pmu_version_name(ver) + " (ID_AA64DFR0_EL1.PMUVer " + std::to_string(ver) +
               "), " + std::to_string(n) + " event counters (PMCR_EL0.N" +
               (cpu.arm.pmu_inferred ? std::string(" not readable here: assumed") : std::string()) +
               ") and the cycle counter";
    return m;
  }

  pmc::PmuInfo pmu(const pmc::CpuInfo& cpu, const pmc::EventCatalog& data, const pmc::Match& verdict) const override {
    pmc::PmuInfo p = pmc::pmu_from_data(cpu, data, verdict.cpu_tag);
    const unsigned n = event_counters(cpu);
    const bool long_counters = cpu.arm.pmu_version >= kPmuV3p5 && cpu.arm.pmu_version != 0xF;
    std::vector<pmc::CounterInfo> kept;
    std::vector<std::uint32_t> dropped;
    for (const auto& c : p.counters) {
      if (c.kind == pmc::CounterKind::general && c.index >= n) {
        dropped.push_back(c.control_msr);
        dropped.push_back(c.counter_msr);
        continue;
      }
      kept.push_back(c);
      if (c.kind == pmc::CounterKind::general && long_counters) kept.back().width = 64;
    }
    p.counters = std::move(kept);
    p.registers.erase(std::remove_if(p.registers.begin(), p.registers.end(),
                                     [&](std::uint32_t r) {
                                       return std::find(dropped.begin(), dropped.end(), r) != dropped.end();
                                     }),
                      p.registers.end());
    return p;
  }

  pmc::Encoding encode(const pmc::EventSpec& spec, const pmc::PmuContext& ctx) const override {
    pmc::Encoding e = pmc::encode_with_catalog(spec, ctx.catalog, ctx.pmu);
    e.config ^= kU | kP;  // "count at EL0 / EL1" -> "do not count at EL0 / EL1"
    return e;
  }

  void program(pmc::RegisterFile& regs, const pmc::PmuContext& ctx, std::span<const pmc::Assignment> set) const override {
    std::uint64_t all = std::uint64_t{1} << kCycleCounterBit;
    for (const auto& c : ctx.pmu.counters)
      if (c.kind == pmc::CounterKind::general) all |= std::uint64_t{1} << c.index;
    regs.write(kPmcntenclr, all);  // every counter off while it is reprogrammed
    for (const auto& c : ctx.pmu.counters) {
      std::uint64_t type = 0;
      for (const auto& a : set)
        if (a.counter == &c || (a.counter->kind == c.kind && a.counter->index == c.index)) type = a.encoding->config;
      if (c.kind == pmc::CounterKind::fixed) type &= kFilterBits;  // PMCCFILTR_EL0: no event field
      regs.write(c.control_msr, type);
    }
    const bool long_counters = std::any_of(ctx.pmu.counters.begin(), ctx.pmu.counters.end(), [](const auto& c) {
      return c.kind == pmc::CounterKind::general && c.width == 64;
    });
    // As Linux's driver does: D (divide by 64), X and DP cleared, LC set.
    regs.write(kPmcr, kPmcrE | kPmcrLc | (long_counters ? kPmcrLp : 0));
  }

  void start(pmc::RegisterFile& regs, const pmc::PmuContext&, std::span<const pmc::Assignment> set) const override {
    regs.write(kPmcntenset, enable_mask(set));
  }

  void stop(pmc::RegisterFile& regs, const pmc::PmuContext&, std::span<const pmc::Assignment> set) const override {
    regs.write(kPmcntenclr, enable_mask(set));
  }
};

// Checked by the host before anything else: ABI version, descriptor size, name (also the name of
// the data file, armv8.toml), capabilities (none: no profiling), factory.
const pmc::pmc_backend_descriptor descriptor{pmc::kAbiVersion, sizeof(pmc::pmc_backend_descriptor), "armv8", 0,
                                             &pmc::make_backend<Armv8Backend>};

}  // namespace armv8

PMC_EXPORT_BACKEND(armv8::descriptor);
