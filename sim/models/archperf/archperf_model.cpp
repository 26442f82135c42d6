// The Intel architectural PMU device model (versions 1 to 5). Facts cite
// docs/hardware/archperf.md by section; policies the fact sheet leaves open are marked [U] and
// explained where they are applied (and summed up in archperf_model.hpp).
#include "archperf_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

namespace pmc::sim {

namespace {

using counting::u128;
using counting::width_mask;

// IA32_PERFEVTSELx fields [3]. USR, OS, E, INT, INV and CMASK, at the P6's bits, are
// counting::evtsel's.
constexpr std::uint64_t kEventMask = 0xFF;        // 7:0
constexpr unsigned kUmaskShift = 8;               // 15:8
constexpr std::uint64_t kAnyThread = 1ULL << 21;  // v3+, unless deprecated
constexpr std::uint64_t kEn = 1ULL << 22;         // per-counter enable
// 63:32: reserved. The model-specific bits there (IN_TX 32, IN_TXCP 33, adaptive PEBS 34) belong
// to parts with TSX / PEBS, which the model does not have [U].
constexpr std::uint64_t kSelHigh = 0xFFFFFFFF00000000ULL;

// IA32_FIXED_CTR_CTRL: one 4-bit block per fixed counter [3].
constexpr unsigned kBlockBits = 4;
constexpr std::uint64_t kFixedOs = 0x1;
constexpr std::uint64_t kFixedUsr = 0x2;
constexpr std::uint64_t kFixedAnyThread = 0x4;
constexpr std::uint64_t kFixedPmi = 0x8;

// IA32_PERF_GLOBAL_CTRL / STATUS [3].
constexpr unsigned kFixedBit0 = 32;  // bit 32 + i: fixed counter i
constexpr unsigned kPerfMetricsBit = 48;
constexpr unsigned kTraceToPaPmiBit = 55;
constexpr unsigned kLbrFrzBit = 58;
constexpr unsigned kCtrFrzBit = 59;
constexpr unsigned kAsciBit = 60;
constexpr unsigned kOvfUncoreBit = 61;
constexpr unsigned kOvfBufBit = 62;
constexpr unsigned kCondChgdBit = 63;
constexpr std::uint64_t kCtrFrz = 1ULL << kCtrFrzBit;
// IA32_PERF_GLOBAL_INUSE: PMI_InUse. The sheet's source prints "[bit 32]", a typo (bit 32 is
// FC0_InUse); bit 63 is the believed position [3, U].
constexpr std::uint64_t kPmiInUse = 1ULL << 63;

// IA32_PERF_CAPABILITIES [3].
constexpr std::uint64_t kFwWrite = 1ULL << 13;

// RDPMC ECX [5]: ECX[31:16] is the counter type, ECX[15:0] the index.
constexpr std::uint32_t kRdpmcFixedType = 0x4000;  // bit 30
constexpr std::uint32_t kRdpmcMetrics = 1U << 29;
constexpr std::uint32_t kRdpmcFast = 1U << 31;

constexpr std::uint32_t kPerfMetricsMsr = 0x329;
constexpr std::uint32_t kDebugCtlMsr = 0x1D9;

// How many PMC / PERFEVTSEL / A_PMC addresses a fault message names whatever the CPU (IA32_PMC0..7
// etc.); beyond that only the CPU's own counters are named (0x1A0, for one, is IA32_MISC_ENABLE,
// not IA32_PERFEVTSEL26).
constexpr unsigned kNamedGp = 8;

// ---------------------------------------------------------------------------------------------
// Signals. The architectural events [7a], by EBX bit index. An empty signal means "no generic
// signal": the event counts its raw signal like any model-specific event.
struct ArchEvent {
  std::uint8_t event;
  std::uint8_t umask;
  std::string_view signal;
};

// clang-format off
constexpr ArchEvent kArchEvents[] = {
    {0x3C, 0x00, "cycles"},          // 0 UnHalted Core Cycles (implicit: 1 per unhalted cycle)
    {0xC0, 0x00, "instructions"},    // 1 Instructions Retired
    {0x3C, 0x01, "ref-cycles"},      // 2 UnHalted Reference Cycles
    {0x2E, 0x4F, "llc-references"},  // 3 LLC Reference
    {0x2E, 0x41, "llc-misses"},      // 4 LLC Misses
    {0xC4, 0x00, "branches"},        // 5 Branch Instructions Retired
    {0xC5, 0x00, "branch-misses"},   // 6 Branch Misses Retired
    {0xA4, 0x01, "slots"},           // 7 Topdown Slots
    {0xA4, 0x02, {}},                // 8 Topdown Backend Bound
    {0x73, 0x00, {}},                // 9 Topdown Bad Speculation
    {0x9C, 0x01, {}},                // 10 Topdown Frontend Bound
    {0xC2, 0x02, {}},                // 11 Topdown Retiring
    {0xE4, 0x01, {}},                // 12 LBR Inserts
};
// clang-format on

// The fixed counters' events [7b]: 0 INST_RETIRED.ANY, 1 CPU_CLK_UNHALTED.CORE,
// 2 CPU_CLK_UNHALTED.REF, 3 TOPDOWN.SLOTS. Counters 4..15 (none in versions 1-5) count
// "fixed.<i>" [U].
constexpr std::string_view kFixedSignals[] = {"instructions", "cycles", "ref-cycles", "slots"};

// Occurrences per cycle of a signal. "ref-cycles" defaults to the unhalted cycles when the
// workload does not give it [U]: reference cycles tick at a fixed (TSC) rate, which a workload
// without frequency changes sees as equal to the core clock. Given explicitly, it counts as
// given (halted or not, like every other signal).
u128 per_cycle(const Segment& s, std::string_view signal) {
  if (signal == "ref-cycles") {
    static const Signal ref = pmc::signal("ref-cycles");
    for (const SignalCount& c : s.signals)
      if (c.signal == ref) return c.per_cycle;
    return s.per_cycle(kCyclesSignal);
  }
  return s.per_cycle(signal);
}

// "raw.0xUUEE": the signal of event EE with unit mask UU.
std::string raw_signal(unsigned event, unsigned umask) {
  return fmt::format("raw.0x{:02X}{:02X}", umask, event);
}

std::string list_bits(std::uint32_t mask) {
  std::string out;
  for (unsigned i = 0; i < 32; ++i) {
    if (((mask >> i) & 1U) == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(i);
  }
  return out;
}

// [U] CPUID.23H sub-leaf 1 (this core type's counter bitmaps), when the CPU announces it. The
// fact sheet says nothing about leaf 23H; the gate is the archperf backend's reading (see
// archperf_model.hpp): CPUID.0:EAX >= 23H, CPUID.(7,1):EAX[8] = 1 (leaf 23H exists; sub-leaf
// (7,1) itself exists only when CPUID.(7,0):EAX, the highest sub-leaf of leaf 7, is >= 1) and
// CPUID.23H.0:EAX[1] = 1 (sub-leaf 1 exists). nullopt: leaf 0AH alone gives the geometry.
std::optional<CpuidRegs> counter_bitmaps(const CpuInfo& cpu) {
  constexpr std::uint32_t kLeaf = 0x23;
  if (cpu.max_leaf < kLeaf) return std::nullopt;
  const auto l70 = cpu.raw.get(7, 0);
  if (!l70 || l70->eax < 1) return std::nullopt;
  const auto l71 = cpu.raw.get(7, 1);
  if (!l71 || ((l71->eax >> 8) & 1U) == 0) return std::nullopt;
  const auto l23 = cpu.raw.get(kLeaf, 0);
  if (!l23 || ((l23->eax >> 1) & 1U) == 0) return std::nullopt;
  return cpu.raw.get(kLeaf, 1);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Geometry [1, 2, 6].

ArchPerfDevice::ArchPerfDevice(const CpuInfo& cpu) : cpu_(describe(cpu)) {
  const ArchPerfmon& a = cpu.arch;
  if (a.version == 0) {
    throw Error(errc::not_supported,
                fmt::format("{} has no architectural performance monitoring "
                            "(CPUID.0AH:EAX[7:0] = 0): no archperf device model",
                            cpu_));
  }
  auto unsupported = [&](const std::string& what) {
    throw Error(errc::not_supported, fmt::format("{}: {}: the archperf model cannot hold it",
                                                 cpu_, what));
  };
  // [U] Versions above 5 are modelled with the version-5 rules (every version adds to the last).
  version_ = std::min(a.version, 5U);
  // [U] CPUID.23H.1, when announced, replaces leaf 0AH's counts: EAX is the general-purpose
  // bitmap, EBX the fixed one (archperf_model.hpp). Widths stay leaf 0AH's.
  const std::optional<CpuidRegs> bitmaps = counter_bitmaps(cpu);
  from_23h_ = bitmaps.has_value();
  if (from_23h_) {
    gp_present_ = bitmaps->eax;  // at most 32 counters: EAX has 32 bits
  } else {
    if (a.gp_counters > kMaxGp) {
      unsupported(fmt::format("CPUID.0AH:EAX[15:8] reports {} general-purpose counters "
                              "(GLOBAL_CTRL has room for 32)",
                              a.gp_counters));
    }
    gp_present_ = static_cast<std::uint32_t>((std::uint64_t{1} << a.gp_counters) - 1);
  }
  gp_end_ = static_cast<unsigned>(32 - std::countl_zero(gp_present_));
  gp_width_ = a.gp_width;
  if (gp_present_ != 0 && (gp_width_ == 0 || gp_width_ > 64)) {
    unsupported(fmt::format("CPUID.0AH:EAX[23:16] reports {}-bit general-purpose counters",
                            gp_width_));
  }

  if (version_ >= 2) {
    // Fixed counter i exists iff i < EDX[4:0], or (v5) ECX bit i [1]. ECX is reserved before v5.
    std::uint64_t present = a.fixed_counters >= 64 ? ~std::uint64_t{0}
                                                   : (std::uint64_t{1} << a.fixed_counters) - 1;
    if (version_ >= 5) present |= a.fixed_bitmap;
    unsigned width = a.fixed_width;
    // [U] The Core 2 quirk: version 2 with EDX[4:0] = 0 is the early-Core "wrong version-2
    // data" [1]; the hardware has the three fixed counters version 2 defines [2, 6].
    if (version_ == 2 && a.fixed_counters == 0) present = 0x7;
    // [U] With CPUID 23H, its EBX bitmap alone says which fixed counters exist (no quirk, no
    // union with EDX[4:0] / ECX). Version 1 never gets here: it has no fixed counters [6].
    if (from_23h_) present = bitmaps->ebx;
    if ((present >> kMaxFixed) != 0) {
      unsupported(fmt::format("{} reports fixed counter {} (FIXED_CTR_CTRL has 16 blocks)",
                              from_23h_ ? "CPUID.23H.1:EBX" : "CPUID.0AH",
                              63 - std::countl_zero(present)));
    }
    // [U] A fixed width of 0 (Core 2's EDX = 0, or a bitmap without EDX data) is the GP width.
    if (present != 0 && width == 0) width = gp_width_;
    if (present != 0 && (width == 0 || width > 64)) {
      unsupported(fmt::format("CPUID.0AH:EDX[12:5] reports {}-bit fixed counters", width));
    }
    fixed_present_ = static_cast<std::uint32_t>(present);
    fixed_width_ = width;
  }

  // AnyThread: version 3 and later, unless CPUID.0AH:EDX[15] deprecates it [1, 3].
  anythread_ = version_ >= 3 && !a.anythread_deprecated;
  // IA32_PERF_CAPABILITIES exists iff CPUID.1:ECX[15] (PDCM) [1]; [U] FW_WRITE from version 2.
  if (const auto leaf1 = cpu.raw.get(1)) perf_capabilities_ = ((leaf1->ecx >> 15) & 1U) != 0;
  full_width_ = perf_capabilities_ && version_ >= 2;
  ebx_length_ = a.ebx_length;
  unavailable_ = a.unavailable_events;

  // Without CPUID 23H: bits N-1..0. With it: the present counters [U].
  const std::uint64_t gp_mask = gp_present_;
  if (has_global()) {
    status_bits_ = gp_mask | (std::uint64_t{fixed_present_} << kFixedBit0) |
                   (1ULL << kOvfBufBit) | (1ULL << kCondChgdBit);
    if (version_ >= 3) status_bits_ |= 1ULL << kOvfUncoreBit;
    if (version_ >= 4) {
      status_bits_ |= (1ULL << kTraceToPaPmiBit) | (1ULL << kLbrFrzBit) | (1ULL << kCtrFrzBit);
    }
    // Reset value: EN_PMC(N-1..0) set, everything else (the fixed counters) clear [3]; with
    // CPUID 23H, EN_PMCi of every present counter i [U].
    global_ctrl_ = gp_mask;
  }
}

// ---------------------------------------------------------------------------------------------
// Register names and faults.

namespace {

std::string gp_register(std::string_view prefix, unsigned i) {
  return fmt::format("{}{}", prefix, i);
}

}  // namespace

// Why general-purpose counter i does not exist, in a few words (the register's name elsewhere).
// CPUID.23H's bitmaps are 32 bits wide: they speak for counters 0-31 only.
std::string ArchPerfDevice::gp_absent(unsigned i) const {
  if (from_23h_) {
    return i < 32 ? fmt::format("CPUID.23H says general-purpose counter {} is absent", i)
                  : fmt::format("general-purpose counter {} is beyond CPUID.23H's bitmap", i);
  }
  return fmt::format("this PMU has {} general-purpose counters", gp_end_);
}

std::string ArchPerfDevice::fixed_absent(unsigned i) const {
  if (from_23h_ && version_ >= 2 && i < 32) {
    return fmt::format("CPUID.23H says fixed counter {} is absent", i);
  }
  return fmt::format("fixed counter {} does not exist", i);
}

std::string ArchPerfDevice::missing_reason(std::uint32_t msr) const {
  const unsigned named_gp = std::max(gp_end_, kNamedGp);
  // Without CPUID 23H the general-purpose counters are 0..N-1: say N. With it, which are there.
  auto gp_missing = [&](unsigned i) {
    if (!from_23h_) {
      return fmt::format("this PMU has {} general-purpose counter{}", gp_end_,
                         gp_end_ == 1 ? "" : "s");
    }
    return fmt::format("{} (CPUID.23H.1:EAX = {:#x}: this core type's general-purpose counters "
                       "are {})",
                       gp_absent(i), gp_present_,
                       gp_present_ == 0 ? std::string("none") : list_bits(gp_present_));
  };
  auto fixed_missing = [&](unsigned i) {
    if (version_ == 1) return std::string("version 1 has no fixed counters");
    const std::string list = fixed_present_ == 0
                                 ? std::string("no fixed counters")
                                 : fmt::format("fixed counters are {}", list_bits(fixed_present_));
    if (from_23h_) {
      return fmt::format("{} (CPUID.23H.1:EBX = {:#x}: this core type has {})", fixed_absent(i),
                         fixed_present_, list);
    }
    return fixed_present_ == 0 ? "this PMU has " + list : "this PMU's " + list;
  };
  auto from_v = [&](unsigned v) {
    return fmt::format("it exists from version {}; this PMU is version {}", v, version_);
  };
  if (msr >= kPmc0 && msr < kPmc0 + named_gp) {
    return fmt::format("IA32_PMC{}: {}", msr - kPmc0, gp_missing(msr - kPmc0));
  }
  if (msr >= kPerfEvtSel0 && msr < kPerfEvtSel0 + named_gp) {
    return fmt::format("IA32_PERFEVTSEL{}: {}", msr - kPerfEvtSel0,
                       gp_missing(msr - kPerfEvtSel0));
  }
  if (msr >= kAPmc0 && msr < kAPmc0 + named_gp) {
    const std::string name = gp_register("IA32_A_PMC", msr - kAPmc0);
    if (!perf_capabilities_) {
      return name + ": no full-width writes (no IA32_PERF_CAPABILITIES: CPUID.1:ECX[15] = 0)";
    }
    if (!full_width_) {
      return name + ": no full-width writes (IA32_PERF_CAPABILITIES[13] = 0)";
    }
    return fmt::format("{}: {}", name, gp_missing(msr - kAPmc0));
  }
  if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kMaxFixed) {
    return fmt::format("IA32_FIXED_CTR{}: {}", msr - kFixedCtr0, fixed_missing(msr - kFixedCtr0));
  }
  switch (msr) {
    case kPerfCapabilities:
      return "IA32_PERF_CAPABILITIES: CPUID.1:ECX[15] (PDCM) = 0";
    case kFixedCtrCtrl:
      return "IA32_FIXED_CTR_CTRL: version 1 has no fixed counters or global MSRs";
    case kGlobalStatus:
      return "IA32_PERF_GLOBAL_STATUS: version 1 has no global MSRs";
    case kGlobalCtrl:
      return "IA32_PERF_GLOBAL_CTRL: version 1 has no global MSRs";
    case kGlobalOvfCtrl:
      return "IA32_PERF_GLOBAL_OVF_CTRL: version 1 has no global MSRs";
    case kGlobalStatusSet:
      return "IA32_PERF_GLOBAL_STATUS_SET: " + from_v(4);
    case kGlobalInuse:
      return "IA32_PERF_GLOBAL_INUSE: " + from_v(4);
    case kPerfMetricsMsr:
      return "MSR_PERF_METRICS: not modelled (IA32_PERF_CAPABILITIES[15] = 0)";
    case kDebugCtlMsr:
      return "IA32_DEBUGCTL: not modelled (no freeze on PMI, no LBRs)";
    default:
      return "not implemented by the archperf PMU model";
  }
}

void ArchPerfDevice::no_such_msr(std::string_view op, std::uint32_t msr) const {
  throw Error(errc::register_fault,
              fmt::format("#GP: {} of MSR {:#x}: {}", op, msr, missing_reason(msr)));
}

namespace {

[[noreturn]] void fault(std::string_view reg, std::uint32_t msr, std::uint64_t value,
                        const std::string& detail) {
  throw Error(errc::register_fault,
              fmt::format("#GP: wrmsr {} (MSR {:#x}) = {:#x}: {}", reg, msr, value, detail));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RDMSR / WRMSR [2, 3, 4].

std::uint64_t ArchPerfDevice::inuse() const {
  std::uint64_t v = 0;
  bool pmi = false;
  for (unsigned n = 0; n < gp_end_; ++n) {
    if (!has_gp(n)) continue;
    if ((evtsel_[n] & kEventMask) != 0) v |= std::uint64_t{1} << n;
    pmi = pmi || counting::evtsel::interrupts(evtsel_[n]);
  }
  for (unsigned i = 0; i < kMaxFixed; ++i) {
    if (!has_fixed(i)) continue;
    const std::uint64_t block = (fixed_ctrl_ >> (kBlockBits * i)) & 0xF;
    if ((block & (kFixedOs | kFixedUsr)) != 0) v |= std::uint64_t{1} << (kFixedBit0 + i);
    pmi = pmi || (block & kFixedPmi) != 0;
  }
  if (pmi) v |= kPmiInUse;
  return v;
}

std::uint64_t ArchPerfDevice::read(std::uint32_t msr) {
  // Counters read zero-extended [4].
  if (gp_msr(msr, kPmc0)) return pmc_[msr - kPmc0];
  if (gp_msr(msr, kPerfEvtSel0)) return evtsel_[msr - kPerfEvtSel0];
  if (full_width_ && gp_msr(msr, kAPmc0)) return pmc_[msr - kAPmc0];
  if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kMaxFixed && has_fixed(msr - kFixedCtr0)) {
    return fixed_[msr - kFixedCtr0];
  }
  if (msr == kPerfCapabilities && perf_capabilities_) return full_width_ ? kFwWrite : 0;
  if (has_global()) {
    switch (msr) {
      case kFixedCtrCtrl: return fixed_ctrl_;
      case kGlobalStatus: return global_status_;
      case kGlobalCtrl: return global_ctrl_;
      case kGlobalOvfCtrl: return 0;  // [U] a command register: reads return 0
      default: break;
    }
  }
  if (version_ >= 4) {
    if (msr == kGlobalStatusSet) return 0;  // [U] as 0x390
    if (msr == kGlobalInuse) return inuse();
  }
  no_such_msr("rdmsr", msr);
}

void ArchPerfDevice::write(std::uint32_t msr, std::uint64_t value) {
  auto anythread_why = [this] {
    return version_ < 3
               ? fmt::format(" (AnyThread exists from version 3; this PMU is version {})",
                             version_)
               : std::string(" (AnyThread is deprecated: CPUID.0AH:EDX[15] = 1)");
  };

  // IA32_PMCi: EAX[31:0] sign-extended to the counter width; EDX ignored [4].
  if (gp_msr(msr, kPmc0)) {
    std::uint64_t v = value & 0xFFFFFFFFULL;
    if ((v & 0x80000000ULL) != 0) v |= 0xFFFFFFFF00000000ULL;
    pmc_[msr - kPmc0] = v & width_mask(gp_width_);
    return;
  }
  // IA32_A_PMCi: the full width, no sign extension; a bit above the width is a #GP [4, U].
  if (full_width_ && gp_msr(msr, kAPmc0)) {
    const unsigned i = msr - kAPmc0;
    if (const std::uint64_t bad = value & ~width_mask(gp_width_); bad != 0) {
      fault(gp_register("IA32_A_PMC", i), msr, value,
            fmt::format("bit {} set above the {}-bit counter width", std::countr_zero(bad),
                        gp_width_));
    }
    pmc_[i] = value;
    return;
  }
  if (gp_msr(msr, kPerfEvtSel0)) {
    const unsigned i = msr - kPerfEvtSel0;
    const std::uint64_t reserved = kSelHigh | (anythread_ ? 0 : kAnyThread);
    if (const std::uint64_t bad = value & reserved; bad != 0) {
      const int bit = std::countr_zero(bad);
      fault(gp_register("IA32_PERFEVTSEL", i), msr, value,
            fmt::format("reserved bit {} set{}", bit,
                        bit >= 32 ? std::string(" (bits 63:32 are reserved)") : anythread_why()));
    }
    evtsel_[i] = value;
    // [U] as in the P6 model: writing the event select starts a new measurement, so the edge
    // detector forgets the previous condition.
    asserted_[i] = false;
    return;
  }
  // IA32_FIXED_CTRi: bits above the fixed width "must be written as zeros": #GP [4, design].
  if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kMaxFixed && has_fixed(msr - kFixedCtr0)) {
    const unsigned i = msr - kFixedCtr0;
    if (const std::uint64_t bad = value & ~width_mask(fixed_width_); bad != 0) {
      fault(gp_register("IA32_FIXED_CTR", i), msr, value,
            fmt::format("bit {} set above the {}-bit fixed counter width",
                        std::countr_zero(bad), fixed_width_));
    }
    fixed_[i] = value;
    return;
  }
  if (msr == kPerfCapabilities && perf_capabilities_) {
    fault("IA32_PERF_CAPABILITIES", msr, value, "the register is read-only");
  }
  if (has_global()) {
    switch (msr) {
      case kFixedCtrCtrl: {
        std::uint64_t valid = 0;
        const std::uint64_t block =
            kFixedOs | kFixedUsr | kFixedPmi | (anythread_ ? kFixedAnyThread : 0);
        for (unsigned i = 0; i < kMaxFixed; ++i)
          if (has_fixed(i)) valid |= block << (kBlockBits * i);
        if (const std::uint64_t bad = value & ~valid; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          const unsigned counter = bit / kBlockBits;
          const std::string why =
              !has_fixed(counter) ? fmt::format(" ({})", fixed_absent(counter))
              : bit % kBlockBits == 2 ? anythread_why()
                                      : std::string();
          fault("IA32_FIXED_CTR_CTRL", msr, value, fmt::format("reserved bit {} set{}", bit, why));
        }
        fixed_ctrl_ = value;
        return;
      }
      case kGlobalCtrl: {
        const std::uint64_t valid =
            std::uint64_t{gp_present_} | (std::uint64_t{fixed_present_} << kFixedBit0);
        if (const std::uint64_t bad = value & ~valid; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          const std::string why =
              bit < kFixedBit0 ? fmt::format(" ({})", gp_absent(bit))
              : bit < kPerfMetricsBit ? fmt::format(" ({})", fixed_absent(bit - kFixedBit0))
              : bit == kPerfMetricsBit ? std::string(" (EN_PERF_METRICS: no PERF_METRICS)")
                                       : std::string();
          fault("IA32_PERF_GLOBAL_CTRL", msr, value,
                fmt::format("reserved bit {} set{}", bit, why));
        }
        global_ctrl_ = value;
        return;
      }
      case kGlobalStatus:
        fault("IA32_PERF_GLOBAL_STATUS", msr, value,
              "the register is read-only (clear bits through MSR 0x390)");
      case kGlobalOvfCtrl:
      case kGlobalStatusSet: {
        if (msr == kGlobalStatusSet && version_ < 4) break;
        const char* name = msr == kGlobalStatusSet ? "IA32_PERF_GLOBAL_STATUS_SET"
                           : version_ >= 4         ? "IA32_PERF_GLOBAL_STATUS_RESET"
                                                   : "IA32_PERF_GLOBAL_OVF_CTRL";
        if (const std::uint64_t bad = value & ~status_bits_; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          std::string why;
          if (bit < kFixedBit0) {
            why = fmt::format(" ({})", gp_absent(bit));
          } else if (bit < kPerfMetricsBit) {
            why = fmt::format(" ({})", fixed_absent(bit - kFixedBit0));
          } else if (bit == kPerfMetricsBit) {
            why = " (no PERF_METRICS)";
          } else if (bit == kOvfUncoreBit) {
            why = " (Ovf_Uncore exists from version 3)";
          } else if (bit == kTraceToPaPmiBit || bit == kLbrFrzBit || bit == kCtrFrzBit) {
            why = " (exists from version 4)";
          } else if (bit == kAsciBit) {
            why = " (ASCI: no SGX in this model)";
          }
          fault(name, msr, value, fmt::format("reserved bit {} set{}", bit, why));
        }
        // 0x390: 1 clears the status bit, 0 has no effect; 0x391: 1 sets it [3].
        if (msr == kGlobalOvfCtrl) {
          global_status_ &= ~value;
        } else {
          global_status_ |= value;
        }
        return;
      }
      case kGlobalInuse:
        if (version_ < 4) break;
        fault("IA32_PERF_GLOBAL_INUSE", msr, value, "the register is read-only");
      default: break;
    }
  }
  no_such_msr("wrmsr", msr);
}

// ---------------------------------------------------------------------------------------------
// RDPMC [5].

std::uint64_t ArchPerfDevice::rdpmc(std::uint32_t index) {
  const std::uint32_t type = index >> 16;
  const unsigned i = index & 0xFFFF;
  std::uint64_t value = 0;
  if (type == 0 && has_gp(i)) {
    value = pmc_[i];
  } else if (type == kRdpmcFixedType && has_fixed(i)) {
    value = fixed_[i];
  } else {
    std::string why;
    if ((index & kRdpmcFast) != 0) {
      why = "bit 31 (fast read) does not exist on the architectural PMU";
    } else if ((index & kRdpmcMetrics) != 0) {
      why = "bit 29 (PERF_METRICS) is not supported: no PERF_METRICS";
    } else if (type == 0) {
      why = gp_absent(i);
    } else if (type == kRdpmcFixedType) {
      why = fixed_absent(i);
    } else {
      why = fmt::format("ECX[31:16] = {:#x} is no counter type (0 general-purpose, 0x4000 fixed)",
                        type);
    }
    throw Error(errc::register_fault,
                fmt::format("#GP: RDPMC with ECX = {:#x}: {}", index, why));
  }
  if (reader_cpl_ > 0 && !cr4_pce_) {
    throw Error(errc::register_fault,
                fmt::format("#GP: RDPMC at CPL {} with CR4.PCE = 0", reader_cpl_));
  }
  return value;  // EDX:EAX, unimplemented high bits 0
}

void ArchPerfDevice::set_reader_cpl(unsigned cpl) {
  if (cpl > 3) {
    throw Error(errc::invalid_argument, fmt::format("CPL {} does not exist (0..3)", cpl));
  }
  reader_cpl_ = cpl;
}

// ---------------------------------------------------------------------------------------------
// Counting [4].

void ArchPerfDevice::run(const Segment& segment) {
  if (segment.cycles == 0) return;
  // v4+: CTR_Frz stops every counter until cleared through STATUS_RESET [4]. Frozen cycles are
  // not counted cycles: they leave the edge detectors alone.
  if (version_ >= 4 && (global_status_ & kCtrFrz) != 0) return;
  for (unsigned i = 0; i < gp_end_; ++i)
    if (has_gp(i)) count_gp(i, segment);
  for (unsigned i = 0; i < kMaxFixed; ++i)
    if (has_fixed(i)) count_fixed(i, segment);
}

void ArchPerfDevice::count_gp(unsigned i, const Segment& segment) {
  const std::uint64_t sel = evtsel_[i];
  // EN, then (v2+) GLOBAL_CTRL[i], then USR (CPL 1-3; the workload's user mode is CPL 3) or OS
  // (CPL 0) [4].
  if ((sel & kEn) == 0) return;
  if (has_global() && ((global_ctrl_ >> i) & 1U) == 0) return;
  if (!counting::evtsel::counts_at(sel, segment.mode == Mode::user)) return;

  const unsigned event = static_cast<unsigned>(sel & kEventMask);
  const unsigned umask = static_cast<unsigned>(sel >> kUmaskShift) & 0xFF;
  // Which signal the event select reads [7a]. An architectural event (index j < EAX[31:24])
  // that EBX marks unavailable counts nothing [U]; an enumerated one counts its generic signal.
  // An encoding that is not an enumerated architectural event on this CPU (j >= EAX[31:24], or
  // any other event/umask pair) is a model-specific event: it counts "raw.0xUUEE" [U].
  u128 k = 0;
  bool decided = false;
  for (unsigned j = 0; j < std::size(kArchEvents); ++j) {
    const ArchEvent& e = kArchEvents[j];
    if (e.event != event || e.umask != umask || j >= ebx_length_) continue;
    decided = true;
    if (((unavailable_ >> j) & 1U) != 0) {
      k = 0;
    } else if (!e.signal.empty()) {
      k = per_cycle(segment, e.signal);
    } else {
      decided = false;  // enumerated, but without a generic signal: its raw signal
    }
    break;
  }
  if (!decided) k = segment.per_cycle(raw_signal(event, umask));

  // AnyThread (bit 21) counts like a plain event: the model is a single logical processor [U].
  const counting::Advance step = counting::advance(pmc_[i], gp_width_, segment.cycles, k,
                                                   counting::evtsel::filter(sel), asserted_[i]);
  pmc_[i] = step.value;
  overflow(i, counting::evtsel::interrupts(sel), step.wraps);
}

void ArchPerfDevice::count_fixed(unsigned i, const Segment& segment) {
  const std::uint64_t block = (fixed_ctrl_ >> (kBlockBits * i)) & 0xF;
  // Enable field: 1 OS (CPL 0), 2 USR (CPL > 0), 3 both; and GLOBAL_CTRL[32+i] [3, 4].
  if ((block & (segment.mode == Mode::user ? kFixedUsr : kFixedOs)) == 0) return;
  if (((global_ctrl_ >> (kFixedBit0 + i)) & 1U) == 0) return;
  // Fixed counters have no event select and no filter; they count their event whatever EBX
  // says about its GP twin [U].
  const u128 k = i < std::size(kFixedSignals)
                     ? per_cycle(segment, kFixedSignals[i])
                     : u128{segment.per_cycle(fmt::format("fixed.{}", i))};
  bool no_edge = false;
  const counting::Advance step =
      counting::advance(fixed_[i], fixed_width_, segment.cycles, k, counting::Filter{}, no_edge);
  fixed_[i] = step.value;
  overflow(kFixedBit0 + i, (block & kFixedPmi) != 0, step.wraps);
}

void ArchPerfDevice::overflow(unsigned status_bit, bool pmi, counting::u128 wraps) {
  if (wraps == 0) return;
  // v2+: the overflow sets GLOBAL_STATUS whether or not a PMI is requested [4, U (recommended)].
  if (has_global()) global_status_ |= std::uint64_t{1} << status_bit;
  // Each wrap with INT / the fixed PMI bit raises one PMI through the local APIC LVTPC [4].
  if (pmi) interrupts_ = counting::saturating_add(interrupts_, wraps);
}

}  // namespace pmc::sim
