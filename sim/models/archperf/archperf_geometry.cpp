// The Intel architectural PMU device model (versions 1 to 5): its geometry, which counters and
// registers a CPUID gives it, and why an address is absent. Facts cite docs/hardware/archperf.md
// by section; policies the fact sheet leaves open are marked [U] and explained where they are
// applied (and summed up in archperf_model.hpp).
#include "archperf_model.hpp"
#include "archperf_registers.hpp"
#include "archperf_topdown.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

namespace pmc::sim {

using namespace archperf;

namespace {

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
  pmi().set_clock(x86::nominal_clock_hz(cpu));  // freq= (x86_pmi.hpp, CLOCK)
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

  // Top-down [12]: a part of archperf_topdown.hpp counts width x unhalted cycles on fixed
  // counter 3 (when it has one), and has PERF_METRICS when IA32_PERF_CAPABILITIES can say so.
  if (const TopdownPart* td = topdown_part(cpu.family, cpu.model, cpu.core_type); td && has_fixed(3)) {
    slot_width_ = td->width;
    if (perf_capabilities_ && version_ >= 5) metric_bytes_ = td->level >= 2 ? 8 : 4;
  }

  // Without CPUID 23H: bits N-1..0. With it: the present counters [U].
  const std::uint64_t gp_mask = gp_present_;
  if (has_global()) {
    status_bits_ = gp_mask | (std::uint64_t{fixed_present_} << kFixedBit0) |
                   (1ULL << kOvfBufBit) | (1ULL << kCondChgdBit);
    if (version_ >= 3) status_bits_ |= 1ULL << kOvfUncoreBit;
    if (version_ >= 4) {
      status_bits_ |= (1ULL << kTraceToPaPmiBit) | (1ULL << kLbrFrzBit) | (1ULL << kCtrFrzBit);
    }
    if (metric_bytes_ != 0) status_bits_ |= 1ULL << kPerfMetricsBit;  // [3.4, 12]
    // Reset value: EN_PMC(N-1..0) set, everything else (the fixed counters) clear [3]; with
    // CPUID 23H, EN_PMCi of every present counter i [U].
    global_ctrl_ = gp_mask;
  }
  init_signals();
}


// ---------------------------------------------------------------------------------------------
// Register names and faults.

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
      return "MSR_PERF_METRICS: this CPU has no PERF_METRICS (IA32_PERF_CAPABILITIES[15] = 0)";
    default:
      return "not implemented by the archperf PMU model";
  }
}

void ArchPerfDevice::no_such_msr(std::string_view op, std::uint32_t msr) const {
  x86::msr_fault(op, msr, missing_reason(msr));
}

}  // namespace pmc::sim
