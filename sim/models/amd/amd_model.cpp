// The AMD core PMU device model. Facts cite docs/hardware/amd.md by section; the policies the
// docs leave open are marked [U] and summed up in amd_model.hpp.
#include "amd_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace pmc::sim {

namespace {

using counting::u128;
using counting::width_mask;

// PERF_CTL fields [3.1]. EventSelect[7:0], UnitMask and EN are x86_pmu.hpp's; USR, OS, E, INT,
// INV and CntMask are counting::evtsel's.
constexpr unsigned kEventHighShift = 32;            // EventSelect[11:8] at 35:32
constexpr std::uint64_t kGuestOnly = 1ull << 40;
constexpr std::uint64_t kHostOnly = 1ull << 41;

// Reserved PERF_CTL bits by family [3.2].
constexpr std::uint64_t kBit21 = 1ull << 21;
constexpr std::uint64_t kHigh32 = 0xFFFFFFFF00000000ull;       // 63:32 (K7, K8)
constexpr std::uint64_t kBits36to39 = 0xFull << 36;
constexpr std::uint64_t kBits40up = ~0ull << 40;              // 63:40 (family 11h)
constexpr std::uint64_t kBits42up = ~0ull << 42;              // 63:42

constexpr unsigned kLbrFrozenBit = 58;  // GlobalStatus: LBRs frozen [2.3]

std::uint64_t event_code(std::uint64_t sel) {
  return x86::event_select(sel) | (((sel >> kEventHighShift) & 0xF) << 8);
}
std::uint64_t unit_mask(std::uint64_t sel) { return x86::unit_mask(sel); }

// The generation of a CPU, as docs/hardware/amd.md 1.3 assigns it by family and model.
enum class Gen { other, k7, k8, f10, f11, f12, f14, f15, f16, zen1, zen2, zen3, zen4, zen5 };

bool in(unsigned v, unsigned lo, unsigned hi) { return v >= lo && v <= hi; }

Gen generation(const CpuInfo& cpu) {
  const unsigned f = cpu.family, m = cpu.model;
  if (cpu.vendor == "HygonGenuine") return Gen::zen1;  // Dhyana: a Zen 1 core [1.2]
  switch (f) {
    case 0x6: return Gen::k7;
    case 0xF: return Gen::k8;
    case 0x10: return Gen::f10;
    case 0x11: return Gen::f11;
    case 0x12: return Gen::f12;
    case 0x14: return Gen::f14;
    case 0x15: return Gen::f15;
    case 0x16: return Gen::f16;
    case 0x17: return in(m, 0x00, 0x2F) || in(m, 0x50, 0x5F) ? Gen::zen1 : Gen::zen2;
    case 0x19: return in(m, 0x00, 0x0F) || in(m, 0x20, 0x5F) ? Gen::zen3 : Gen::zen4;
    default: return f > 0x19 ? Gen::zen5 : Gen::other;  // [U] families after 1Ah count as Zen 5
  }
}

// Family 15h: the PERF_CTL indices an event counts on (amd.md 5.2, 5.3 items 1-3, from Linux
// amd_get_event_constraints_f15h), as a bit mask; codes the table does not list count anywhere [U].
std::uint64_t f15h_counters(std::uint64_t code, std::uint64_t umask) {
  constexpr std::uint64_t all = 0x3F, c012 = 0x07, c345 = 0x38, c3 = 0x08, c0 = 0x01, c03 = 0x09;
  const int bits = std::popcount(umask);
  switch (code) {
    case 0x000: return (umask & 0x0F) != 0 && (umask & 0xF0) != 0 ? c3 : c345;
    case 0x004: return bits > 1 ? c3 : c345;
    case 0x003:
    case 0x00B:
    case 0x00D: return c3;
    case 0x031: return bits > 1 ? 0 : c012;
    case 0x023:
    case 0x043:
    case 0x045:
    case 0x046:
    case 0x054:
    case 0x055: return c012;
    case 0x02D: return c3;
    case 0x02E: return c03;
    case 0x1C0: return c345;
    case 0x08F:
    case 0x187:
    case 0x188: return c0;
    case 0x1D6:
    case 0x1D8: return all;
    default: break;
  }
  if (code <= 0x01F) return c345;                                              // FP
  if (in(static_cast<unsigned>(code), 0x020, 0x05F) || in(static_cast<unsigned>(code), 0x0C0, 0x0CF) ||
      in(static_cast<unsigned>(code), 0x1C0, 0x1CF))
    return all;                                                                // LS, DC, EX_LS
  if (in(static_cast<unsigned>(code), 0x0DB, 0x0DF)) return all;
  if (in(static_cast<unsigned>(code), 0x060, 0x09F) || in(static_cast<unsigned>(code), 0x0D0, 0x0DF) ||
      in(static_cast<unsigned>(code), 0x160, 0x16F))
    return c012;                                                               // CU, IC/DE, DE
  if (in(static_cast<unsigned>(code), 0x0A0, 0x0BF) || in(static_cast<unsigned>(code), 0x0E0, 0x0FF))
    return 0;                                                                  // not core events
  return all;
}

std::string raw_name(std::uint64_t code, std::uint64_t umask) {
  return fmt::format("amd.0x{:03X}.0x{:02X}", code, umask);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Geometry [1.5, 2].

AmdDevice::AmdDevice(const CpuInfo& cpu) : family_(cpu.family), cpu_(describe(cpu)) {
  const bool amd = cpu.vendor == "AuthenticAMD";
  const bool hygon = cpu.vendor == "HygonGenuine";
  if (!amd && !hygon)
    throw Error(errc::not_supported,
                fmt::format("{}: not an AMD (or Hygon) processor: no AMD core PMU to model", cpu_));
  if (cpu.family < 6)
    throw Error(errc::not_supported,
                fmt::format("{}: family {} (K5, K6 and earlier) has no PerfEvtSel/PerfCtr registers: they start "
                            "with the K7",
                            cpu_, cpu.family));
  ext_core_ = cpu.amd.perfctr_core;
  v2_ = cpu.amd.perfmon_v2;
  pmi().set_mask_on_delivery(!v2_);  // PerfMonV2: the APIC does not mask LVTPC on a PMI [4]
  pmi().set_clock(x86::nominal_clock_hz(cpu));  // freq= (x86_pmi.hpp, CLOCK): AMD's brand strings name none
  n_ = 4;
  if (ext_core_) n_ = v2_ && cpu.amd.v2_core_counters != 0 ? cpu.amd.v2_core_counters : 6;
  if (v2_ && cpu.max_ext_leaf >= 0x80000022)
    if (const auto e22 = cpu.raw.get(0x80000022)) lbr_v2_ = ((e22->eax >> 1) & 1u) != 0;
  apic_ = !(cpu.family == 6 && cpu.model == 1);  // K7 model 1: no local APIC [4]
  pairs_ = hygon || cpu.family >= 0x17;          // PMU_FL_PAIR [5.3 item 5]
  reserved_ = cpu.family <= 0xF    ? kBit21 | kHigh32
              : cpu.family == 0x11 ? kBit21 | kBits36to39 | kBits40up
                                   : kBit21 | kBits36to39 | kBits42up;
  global_ctl_ = width_mask(n_);  // [8.3] every implemented counter enabled at reset

  // The generic signals of this generation [6.1, 6.3].
  auto add = [&](std::uint16_t code, std::uint8_t umask, std::string_view signal) {
    generics_.at(generic_count_++) = Generic{code, umask, signal};
  };
  add(0x076, 0x00, "cycles");
  add(0x0C0, 0x00, "instructions");
  add(0x0C2, 0x00, "branches");
  add(0x0C3, 0x00, "branch-misses");
  switch (generation(cpu)) {
    case Gen::k8:
    case Gen::f10:
    case Gen::f11:
    case Gen::f12:
    case Gen::f15:
      add(0x07D, 0x07, "cache-references");
      add(0x07E, 0x07, "cache-misses");
      add(0x0D0, 0x00, "stalled-cycles-frontend");
      add(0x0D1, 0x00, "stalled-cycles-backend");
      break;
    case Gen::f14:
      add(0x07D, 0x03, "cache-references");
      add(0x07E, 0x03, "cache-misses");
      break;
    case Gen::zen1:
      add(0x060, 0xFF, "cache-references");
      add(0x064, 0x09, "cache-misses");
      add(0x087, 0x02, "stalled-cycles-frontend");
      add(0x087, 0x01, "stalled-cycles-backend");
      break;
    case Gen::zen2:
    case Gen::zen3:
      add(0x060, 0xFF, "cache-references");
      add(0x064, 0x09, "cache-misses");
      add(0x0A9, 0x00, "stalled-cycles-frontend");
      break;
    case Gen::zen4:
    case Gen::zen5:
      add(0x060, generation(cpu) == Gen::zen5 ? 0xF7 : 0xFF, "cache-references");
      add(0x064, 0x09, "cache-misses");
      add(0x0A9, 0x00, "stalled-cycles-frontend");
      add(0x120, 0x01, "ref-cycles");
      break;
    default: break;  // K7, family 16h, no AMD parts: the four above
  }
  for (unsigned i = 0; i < kMaxCounters; ++i) select(i, 0);
}

// ---------------------------------------------------------------------------------------------
// Register map [2].

AmdDevice::Decoded AmdDevice::decode(std::uint32_t msr) const {
  const unsigned legacy = std::min(n_, 4u);
  if (msr >= kPerfEvtSel0 && msr < kPerfEvtSel0 + legacy) return {Reg::ctl, msr - kPerfEvtSel0};
  if (msr >= kPerfCtr0 && msr < kPerfCtr0 + legacy) return {Reg::ctr, msr - kPerfCtr0};
  if (ext_core_ && msr >= kPerfCtl0 && msr < kPerfCtl0 + 2 * n_) {
    const unsigned off = msr - kPerfCtl0;
    return {off % 2 == 0 ? Reg::ctl : Reg::ctr, off / 2};
  }
  if (v2_) {
    switch (msr) {
      case kGlobalStatus: return {Reg::global_status, 0};
      case kGlobalCtl: return {Reg::global_ctl, 0};
      case kGlobalStatusClr: return {Reg::status_clr, 0};
      case kGlobalStatusSet: return {Reg::status_set, 0};
      default: break;
    }
  }
  return {};
}

std::string AmdDevice::missing_reason(std::uint32_t msr) const {
  if (msr >= kPerfCtl0 && msr < kPerfCtl0 + 2 * kMaxCounters) {
    const unsigned i = (msr - kPerfCtl0) / 2;
    const char* reg = (msr - kPerfCtl0) % 2 == 0 ? "PERF_CTL" : "PERF_CTR";
    if (!ext_core_)
      return fmt::format("{}{}: no PerfCtrExtCore (CPUID 0x80000001:ECX[23] = 0): the counters are the four legacy "
                         "ones at 0xC0010000-0xC0010007",
                         reg, i);
    return fmt::format("{}{}: this PMU has {} counters", reg, i, n_);
  }
  if (msr >= kGlobalStatus && msr <= kGlobalStatusSet)
    return "PerfMonV2 global register: CPUID 0x80000022:EAX[0] (PerfMonV2) = 0";
  if (msr >= kPerfEvtSel0 && msr <= kPerfCtr0 + 3) return fmt::format("this PMU has {} counters", n_);
  return "not implemented by the amd PMU model";
}

void AmdDevice::no_such_msr(std::string_view op, std::uint32_t msr) const {
  x86::msr_fault(op, msr, missing_reason(msr));
}

namespace {

[[noreturn]] void fault(std::string_view reg, std::uint32_t msr, std::uint64_t value, std::string_view detail) {
  x86::wrmsr_fault(reg, msr, value, detail);
}

}  // namespace

std::uint64_t AmdDevice::read(std::uint32_t msr) {
  if (std::uint64_t v = 0; pmi().read(msr, v)) return v;  // LVTPC, the PMI handler [4a]
  const Decoded d = decode(msr);
  switch (d.reg) {
    case Reg::ctl: return ctl_[d.index];
    case Reg::ctr: return ctr_[d.index];  // bits 63:48 read 0 [8.2]
    case Reg::global_status: return global_status_;
    case Reg::global_ctl: return global_ctl_;
    case Reg::status_clr:
    case Reg::status_set: return 0;  // [U] command registers
    case Reg::none: break;
  }
  no_such_msr("rdmsr", msr);
}

void AmdDevice::select(unsigned i, std::uint64_t value) {
  ctl_[i] = value;
  asserted_[i] = false;  // [U] a new selection forgets the last condition
  const std::uint64_t code = event_code(value), umask = unit_mask(value);
  raw_[i] = signal(raw_name(code, umask));
  generic_[i].reset();
  for (unsigned g = 0; g < generic_count_; ++g)
    if (generics_[g].code == code && generics_[g].umask == umask)
      generic_[i] = generics_[g].signal == "cycles" ? kCyclesSignal : signal(generics_[g].signal);
}

std::string AmdDevice::signal_of(const Encoding& encoding) const {
  const std::uint64_t code = event_code(encoding.config);
  if (pairs_ && code == kMergeEvent) return {};  // the merge event counts its partner's wraps
  return raw_name(code, unit_mask(encoding.config));
}

void AmdDevice::write(std::uint32_t msr, std::uint64_t value) {
  if (pmi().write(msr, value)) return;  // LVTPC, the PMI handler [4a]
  const Decoded d = decode(msr);
  const std::string reg = ext_core_ && msr >= kPerfCtl0 ? fmt::format("PERF_{}{}", d.reg == Reg::ctl ? "CTL" : "CTR", d.index)
                          : d.reg == Reg::ctl           ? fmt::format("PerfEvtSel{}", d.index)
                                                        : fmt::format("PerfCtr{}", d.index);
  const std::uint64_t counter_bits = width_mask(n_);
  const std::uint64_t status_bits = counter_bits | (lbr_v2_ ? 1ull << kLbrFrozenBit : 0);
  switch (d.reg) {
    case Reg::ctl:
      if (const std::uint64_t bad = value & reserved_; bad != 0) {
        const int b = std::countr_zero(bad);
        const char* why = b == 21                          ? ""
                          : family_ <= 0xF && b < 36       ? " (K7/K8: no EventSelect[11:8])"
                          : family_ <= 0xF && b >= 40 && b <= 41 ? " (K7/K8: no HostOnly/GuestOnly)"
                          : family_ == 0x11 && b <= 41 && b >= 40 ? " (family 11h: no HostOnly/GuestOnly)"
                                                                  : "";
        fault(reg, msr, value, fmt::format("reserved bit {} set{}", b, why));
      }
      select(d.index, value);
      return;
    case Reg::ctr: {
      // 48 bits; 63:48 zero or the sign extension of bit 47 [4, 8.1].
      const std::uint64_t high = value >> kWidth;
      const bool bit47 = ((value >> (kWidth - 1)) & 1u) != 0;
      if (high != 0 && !(high == 0xFFFF && bit47))
        fault(reg, msr, value,
              "bits 63:48 are neither 0 nor the sign extension of bit 47 (a 48-bit counter takes a 64-bit signed "
              "value in [-2^47, 2^47) or a zero-extended 48-bit one)");
      ctr_[d.index] = value & width_mask(kWidth);
      return;
    }
    case Reg::global_status:
      fault("PerfCntrGlobalStatus", msr, value, "the register is read-only (clear bits through 0xC0000302)");
    case Reg::global_ctl:
      if (const std::uint64_t bad = value & ~counter_bits; bad != 0)
        fault("PerfCntrGlobalCtl", msr, value,
              fmt::format("reserved bit {} set (this PMU has {} counters)", std::countr_zero(bad), n_));
      global_ctl_ = value;
      return;
    case Reg::status_clr:
    case Reg::status_set: {
      const char* name = d.reg == Reg::status_clr ? "PerfCntrGlobalStatusClr" : "PerfCntrGlobalStatusSet";
      if (const std::uint64_t bad = value & ~status_bits; bad != 0)
        fault(name, msr, value,
              fmt::format("reserved bit {} set (status bits: counters 0-{}{})", std::countr_zero(bad), n_ - 1,
                          lbr_v2_ ? ", 58 LBRs frozen" : ""));
      if (d.reg == Reg::status_clr)
        global_status_ &= ~value;
      else
        global_status_ |= value;
      return;
    }
    case Reg::none: break;
  }
  no_such_msr("wrmsr", msr);
}

// ---------------------------------------------------------------------------------------------
// RDPMC [2.1, 4].

std::uint64_t AmdDevice::rdpmc(std::uint32_t index) {
  if (index >= n_)
    x86::rdpmc_fault(index, fmt::format("the counter index must be 0-{} (a counter number, not an MSR address){}",
                                        n_ - 1, ext_core_ ? "" : "; without PerfCtrExtCore there are four counters"));
  check_rdpmc_privilege();
  return ctr_[index];
}

// ---------------------------------------------------------------------------------------------
// Counting [3.3, 3.4, 4, 5.3].

bool AmdDevice::enabled(unsigned i) const {
  if (!x86::enabled(ctl_[i])) return false;
  return !v2_ || ((global_ctl_ >> i) & 1u) != 0;  // PerfMonV2: EN and GlobalCtl[i] [3.4]
}

bool AmdDevice::merge_partner(unsigned i) const {
  return pairs_ && i % 2 == 1 && event_code(ctl_[i]) == kMergeEvent && enabled(i);
}

void AmdDevice::run(const Segment& segment) {
  if (segment.cycles == 0) return;
  const bool handled = pmi().sampling();  // the simulated PMI handler takes the PMIs [4a]
  u128 pmis = 0;
  for (unsigned i = 0; i < n_; ++i)
    if (!merge_partner(i)) pmis += count(i, segment, handled);  // a partner counts its even counter's wraps
  pmi().ran(pmis, segment.cycles);
}

u128 AmdDevice::count(unsigned i, const Segment& segment, bool handled) {
  const std::uint64_t sel = ctl_[i];
  if (!enabled(i)) return 0;
  if (!counting::evtsel::counts_at(sel, segment.mode == Mode::user)) return 0;
  // [U] A host with no guest: GuestOnly alone never counts; both bits count as neither [3.3].
  if ((sel & kGuestOnly) != 0 && (sel & kHostOnly) == 0) return 0;
  // Family 15h: an event on a counter that cannot count it counts nothing [5.2, 5.3].
  if (family_ == 0x15 && ((f15h_counters(event_code(sel), unit_mask(sel)) >> i) & 1u) == 0) return 0;
  u128 k = segment.per_cycle(raw_[i]);
  if (generic_[i]) k += segment.per_cycle(*generic_[i]);
  // With INT and the simulated handler running, each overflow is a sample and a reload [4a].
  const x86::Increments inc = x86::increments(segment.cycles, k, counting::evtsel::filter(sel), asserted_[i]);
  const x86::CounterStep step = pmi().advance(i, ctr_[i], kWidth, segment, inc, raises_pmi(i));
  ctr_[i] = step.value;
  u128 pmis = overflow(i, step.wraps, handled);
  // The odd partner with the merge event counts the wraps: N + 2^48 (N+1) [5.3 item 5].
  if (step.wraps != 0 && i + 1 < n_ && merge_partner(i + 1)) {
    const u128 total = static_cast<u128>(ctr_[i + 1]) + step.wraps;
    ctr_[i + 1] = static_cast<std::uint64_t>(total & width_mask(kWidth));
    pmis += overflow(i + 1, total >> kWidth, handled);
  }
  return pmis;
}

// Counter i raises a PMI at each overflow: INT, and a local APIC to send it (item 14).
bool AmdDevice::raises_pmi(unsigned i) const { return counting::evtsel::interrupts(ctl_[i]) && apic_; }

u128 AmdDevice::overflow(unsigned i, u128 wraps, bool handled) {
  if (wraps == 0) return 0;
  // [4] PerfMonV2: GlobalStatus[i], INT or not; the simulated handler, when it takes the PMI,
  // clears it again through PerfCntrGlobalStatusClr [4a].
  if (v2_ && !(raises_pmi(i) && handled)) global_status_ |= 1ull << i;
  if (!raises_pmi(i)) return 0;
  raise_pmis(wraps);
  return wraps;
}

}  // namespace pmc::sim
