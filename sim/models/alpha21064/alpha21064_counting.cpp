// The emulated Alpha 21064 performance counters: what a segment of activity counts, where the
// counter interrupts fall, and what the pfm driver's interrupt handler records for them (the
// interrupt counts, the IPL histogram, the PC profile). Facts cite docs/hardware/alpha21064.md
// ("sheet", by section) and the OSF/1 3.0 pfm(7) manual page; the policies [U1]..[U11] are
// listed at the top of alpha21064_model.cpp.
#include "alpha21064_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace pmc::sim {

namespace alpha21064 {

namespace {

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

std::uint64_t sat(u128 v) { return v > kMax64 ? kMax64 : static_cast<std::uint64_t>(v); }

// k(name) + k(alias), saturating.
std::uint64_t signal(const Segment& s, std::string_view name, std::string_view alias = {}) {
  u128 k = s.per_cycle(name);
  if (!alias.empty()) k += s.per_cycle(alias);
  return sat(k);
}

// Instructions issued per cycle: `issues`, plus the generic `instructions` (the model does not
// speculate: every issued instruction retires, and a load replay is the workload's business).
std::uint64_t issues(const Segment& s) { return signal(s, "issues", "instructions"); }

}  // namespace

// Signals (docs/workload-format.md): each select counts its pfm(7) name in lowercase, plus a
// generic signal where one exists; ISSUES, NONISSUES and DUAL derive from the issue rate.
Rate mux0_rate(unsigned mux0, const Segment& s) {
  switch (mux0) {
    case kIssues: return {issues(s), 2};                                     // [U3]
    case kPipeDry: return {signal(s, "pf_pipedry")};
    case kLoadI: return {signal(s, "pf_loadi", "loads")};
    case kPipeFrozen: return {signal(s, "pf_pipefrozen")};
    case kBranchI: return {signal(s, "pf_branchi", "branches")};
    case kCycles: return {1};                                                // [U4]
    case kPalMode: return {signal(s, "pf_palmode")};
    case kNonIssues: return {2 - std::min<std::uint64_t>(issues(s), 2), 2};  // [U3]
    case kExtPin0: return {signal(s, "pf_extpin0")};
    default: return {0};
  }
}

Rate mux1_rate(unsigned mux1, const Segment& s) {
  switch (mux1) {
    case kDcache: return {signal(s, "pf_dcache", "l1d-misses")};
    case kIcache: return {signal(s, "pf_icache", "l1i-misses")};
    case kDual: return {issues(s) >= 2 ? 1U : 0U};                           // [U3]
    case kBranchMiss: return {signal(s, "pf_branchmiss", "branch-misses")};
    case kFpInst: return {signal(s, "pf_fpinst", "flops")};
    case kIntOps: return {signal(s, "pf_intops")};
    case kStoreI: return {signal(s, "pf_storei", "stores")};
    case kExtPin1: return {signal(s, "pf_extpin1")};
    default: return {0};
  }
}

}  // namespace alpha21064

// =============================================================================================
// Alpha21064Device: counting, interrupts, the handler

using namespace alpha21064;

namespace {

Rate rate_of(unsigned counter, std::uint64_t iccsr, const Segment& s) {
  return counter == 0 ? mux0_rate(mux0_of(iccsr), s) : mux1_rate(mux1_of(iccsr), s);
}

// Ceiling of a / b for b > 0.
u128 ceil_div(u128 a, u128 b) { return a / b + (a % b != 0 ? 1 : 0); }

// The segment's interrupt priority level: the level signal `ipl` (docs/workload-format.md,
// "Alpha 21064 signals"), 0 when the segment does not have it. The caller checks it is 0..7.
std::uint64_t ipl_of(const Segment& s) {
  static const Signal kIpl = pmc::signal("ipl");
  return s.per_cycle(kIpl);
}

unsigned slot_of(const Segment& s) {  // [U8]
  if (s.mode == Mode::user) return kSlotUser;
  const auto ipl = static_cast<unsigned>(ipl_of(s));
  if (ipl == 0 && s.halted) return kSlotIdle;
  return ipl;
}

}  // namespace

// Where the interrupts of one counter fall in one segment [U9]: the counter held `start` units
// and adds `units` per cycle, and interrupts every `modulus` units. F(j), the interrupts in the
// first j cycles, is (j * units + start) / modulus; the m-th happens in cycle
// ceil((m * modulus - start) / units) - 1. `at_start`: one interrupt delivered in cycle 0 (a
// pending one).
struct Alpha21064Device::Tick {
  u128 start = 0;
  u128 units = 0;
  u128 modulus = 1;
  u128 count = 0;  // interrupts
  bool at_start = false;

  [[nodiscard]] u128 before(u128 j) const { return at_start ? (j > 0 ? 1 : 0) : (j * units + start) / modulus; }
  [[nodiscard]] u128 cycle_of(u128 m) const {
    return at_start ? 0 : ceil_div(m * modulus - start, units) - 1;
  }
};

// One counter's interrupts of segment s, entering the handler (not dismissed).
void Alpha21064Device::record(unsigned counter, const Segment& s, const Tick& t) {
  if (items_ & kItemCounters) count_[counter] = sat_add(count_[counter], t.count);
  if (items_ & kItemIpl) ipl_hist_[slot_of(s)] = sat_add(ipl_hist_[slot_of(s)], t.count);
  if (!(items_ & kItemProfiling) || profile_.mode == ProfileMode::off) return;
  if ((profile_.mode == ProfileMode::user) != (s.mode == Mode::user)) return;  // pfm(7): the mode
  if (s.pc_end <= s.pc_begin) return;  // [U9] no PC
  // The PCs the segment and the profile share: [x0, x1).
  const std::uint64_t x0 = std::max(s.pc_begin, profile_.start);
  const std::uint64_t x1 = std::min(s.pc_end, profile_.end);
  if (x0 >= x1) return;
  const u128 b = s.pc_begin, width = s.pc_end - s.pc_begin, n = s.cycles;
  auto pc_of_cycle = [&](u128 j) { return static_cast<std::uint64_t>(b + j * width / n); };
  // The first cycle whose PC is >= x (x in [b, e]).
  auto first_cycle_at = [&](std::uint64_t x) { return std::min<u128>(n, ceil_div((x - b) * n, width)); };
  const std::uint64_t first = (x0 - profile_.start) / kBucketBytes;
  const std::uint64_t last = (x1 - 1 - profile_.start) / kBucketBytes;
  const u128 buckets = static_cast<u128>(last - first) + 1;
  if (t.count <= buckets) {
    // Few interrupts: place each one.
    for (u128 m = 1; m <= t.count; ++m) {
      const std::uint64_t pc = pc_of_cycle(t.cycle_of(m));
      if (pc < profile_.start || pc >= profile_.end) continue;  // sheet 5.10: outside: no sample
      auto& bucket = profile_.buckets[(pc - profile_.start) / kBucketBytes];
      bucket = sat_add(bucket, 1);
    }
    return;
  }
  // Many interrupts: count those in each bucket's cycles, F(hi) - F(lo).
  for (std::uint64_t k = first; k <= last; ++k) {
    const std::uint64_t lo = std::max(x0, profile_.start + k * kBucketBytes);
    const std::uint64_t hi = std::min(x1, profile_.start + k * kBucketBytes + kBucketBytes);
    const u128 in_bucket = t.before(first_cycle_at(hi)) - t.before(first_cycle_at(lo));
    profile_.buckets[k] = sat_add(profile_.buckets[k], in_bucket);
  }
}

void Alpha21064Device::deliver_pending(const Segment& s) {  // [U7]
  for (unsigned i = 0; i < 2; ++i) {
    if (!pending_[i]) continue;
    pending_[i] = false;
    delivered_[i] = sat_add(delivered_[i], 1);
    if (disabled(i, iccsr_)) {
      dismissed_[i] = sat_add(dismissed_[i], 1);
      continue;
    }
    Tick t;
    t.count = 1;
    t.at_start = true;
    record(i, s, t);
  }
}

void Alpha21064Device::run(const Segment& s) {
  if (s.cpu != cpu_ || s.cycles == 0) return;
  const std::uint64_t level = ipl_of(s);
  if (level > 7) {
    throw Error(errc::invalid_argument,
                fmt::format("signal ipl = {} is not an IPL of the 21064 model (OSF/1 uses 0..7; user mode is "
                            "mode = \"user\", which the IPL histogram counts in slot 8)",
                            level));
  }
  if (s.mode == Mode::user && level != 0) {
    throw Error(errc::invalid_argument,
                fmt::format("a user-mode segment runs at IPL 0, not ipl = {} (kernel activity is mode = \"kernel\")",
                            level));
  }
  const auto ipl = static_cast<unsigned>(level);
  if (ipl != ipl_) set_ipl(ipl);  // an IPL change applies a latched enable/disable [U5]
  if (s.parent != 0 && s.pid != 0 && !processes_->known(s.pid)) processes_->fork(s.parent, s.pid);  // [U11]
  if (ipl < kCounterIpl) deliver_pending(s);
  if (!enabled_) return;
  cycles_ = sat_add(cycles_, s.cycles);
  if (log_ == kLogSelect && !processes_->monitored(s.pid)) return;  // [U11] the chip is off for it

  for (unsigned i = 0; i < 2; ++i) {
    const Rate r = rate_of(i, iccsr_, s);
    if (r.units == 0) continue;
    Tick t;
    t.start = acc_[i];
    t.units = r.units;
    t.modulus = static_cast<u128>(interval(i, pc_of(i, iccsr_))) * r.divisor;
    const u128 total = t.start + static_cast<u128>(s.cycles) * t.units;
    t.count = total / t.modulus;
    acc_[i] = static_cast<std::uint64_t>(total % t.modulus);
    if (t.count == 0) continue;
    if (ipl >= kCounterIpl) {  // masked [U7]
      lost_[i] = sat_add(lost_[i], pending_[i] ? t.count : t.count - 1);
      pending_[i] = true;
      continue;
    }
    delivered_[i] = sat_add(delivered_[i], t.count);
    if (disabled(i, iccsr_)) {  // [U10]
      dismissed_[i] = sat_add(dismissed_[i], t.count);
      continue;
    }
    record(i, s, t);
  }
}

}  // namespace pmc::sim
