// The emulated Alpha 21064 performance counters and the OSF/1 pfm(7) pseudo-device.
//
// Sources: docs/hardware/alpha21064.md ("sheet", by section) and the OSF/1 3.0 pfm(7)
// manual page ("pfm(7)"). Facts the sources state are cited where they are applied; policies
// they leave open are marked [U] and gathered here:
//
// The chip
//  [U1] Counter i is a counter of interval(i, PC) events: on reaching it, it raises an interrupt
//       and starts again from 0 (sheet 2). The hardware widths (16 and 12 bits) are not visible.
//  [U2] A write of the ICCSR that changes counter i's MUX or PC restarts counter i from 0 (a new
//       measurement); one that leaves them alone lets its partial interval carry on.
//  [U3] ISSUES and NONISSUES ("/2", sheet 3; pfm(7): +1 per dual-issue cycle, +1/2 per
//       single-issue cycle) count half events: the counter keeps the odd half, so 3 issues and
//       then 1 issue make 2 events. NONISSUES adds 1 per cycle with no issue and 1/2 per cycle
//       with one; DUAL counts cycles with 2 or more issues (the 21064 issues at most 2; a
//       workload rate above 2 is taken as that many issues by ISSUES).
//  [U4] CYCLES counts every cycle, `halted` ones too: the 21064 has no halt state, its idle
//       thread spins (the model reads `halted` as "the idle thread runs", see [U8]).
//  [U5] wrperfmon enable/disable are latched and take effect at the next IPL write (sheet 5.6):
//       set_ipl(), a segment at an IPL other than the current one, and the return from every
//       pfm system call and every RegisterFile write of PERFMON, which returns through rei and
//       so writes the caller's IPL. A disabled chip counts nothing and pr_cycle stands still.
//  [U6] wrperfmon(3) takes 1 (all) or 2 (selected); 3 and other values are refused.
//  [U7] Counter interrupts are at IPL 6 (pfm(7)): while a segment runs at IPL 6 or 7 they are
//       masked. The first overflow of a counter stays pending, later ones are lost (one request
//       line per counter), and a pending interrupt is delivered in the first cycle of the next
//       segment that runs below IPL 6, which is where the handler samples IPL and PC. That is
//       why slot 6 is unused and slot 7 can mean "idle".
//  [U8] The IPL histogram slot of an interrupt: 8 in user mode; in kernel mode 7 when the IPL
//       is 0 and the segment is `halted` (the idle thread), else the IPL (0..5). User-mode
//       segments must have IPL 0 and no segment may have an IPL above 7 (invalid_argument).
//  [U9] The PC of cycle j of a segment of N cycles over pc = [b, e) is b + floor(j (e - b) / N);
//       a segment without `pc` has no PC to sample. The m-th interrupt of a counter in a
//       segment happens in the cycle in which the counter reaches its interval.
//  [U10] A disabled counter (ICCSR bit 35 or 36) still counts and interrupts; the handler
//       dismisses its interrupts without recording anything (pfm(7) NOTES). Both disabled, or
//       an undefined MUX0, is refused (pfm(7): EINVAL; the register write: register_fault).
//  [U11] PCNTLOGSELECT counts only segments whose `pid` has PCB_PME_BIT; process 0 never
//       has it; a segment with `parent` creates its `pid` with the parent's bit the first time
//       the pid is seen (fork; exec keeps the pid and the bit). pr_cycle counts every cycle of
//       a CPU with monitoring enabled, selected or not.
//
// The driver (pfm(7))
//  [U12] Handles: busy is per CPU. PCNTOPENONE needs the caller bound to a CPU (EINVAL if it
//       is not, ENODEV if that CPU does not exist) and finds it busy (EBUSY) only if that CPU is
//       open; EACH and ALL need every CPU free. Open flags without a mode are EINVAL.
//  [U13] Open: PCNTDISABLE, PCNTLOGALL, items = PFM_COUNTERS (pfm(7)); counts, IPL histogram
//       and the ICCSR are kept. Close: PCNTDISABLE and the profile buffer is freed.
//  [U14] ioctls act on every CPU the handle opened. ALL aggregates by summing (pr_cycle too).
//  [U15] PCNTSETITEMS refuses 0 and bits other than 1, 2, 4 (EINVAL). PCNTSETUADDR/KADDR need
//       PFM_PROFILING among the items (pfm(7) "open for profiling") and start < end (EINVAL);
//       a range of 2^24 bytes (2^20 buckets) or more per CPU is ENOMEM. Setting a range
//       starts an empty profile and selects that mode (user or kernel), replacing the other.
//  [U16] GETRSIZE = 4 bytes per bucket, ceil((end - start) / 16) buckets (pfm(7): one fourth
//       of the range), times the CPUs for EACH. read(2) returns the buckets as 32-bit counts
//       (modulo 2^32), from the first one each time.
#include "alpha21064_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string>

namespace pmc::sim {

namespace {
__extension__ typedef unsigned __int128 u128;  // exact products of 64-bit cycles and rates
}  // namespace

namespace alpha21064 {

namespace {

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

std::uint64_t sat(u128 v) { return v > kMax64 ? kMax64 : static_cast<std::uint64_t>(v); }
std::uint64_t sat_add(std::uint64_t a, u128 b) { return sat(static_cast<u128>(a) + b); }

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

bool mux0_defined(unsigned mux0) {
  switch (mux0) {
    case kIssues: case kPipeDry: case kLoadI: case kPipeFrozen: case kBranchI:
    case kCycles: case kPalMode: case kNonIssues: case kExtPin0:
      return true;
    default:
      return false;
  }
}

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

// ---------------------------------------------------------------------------------------------
// ProcessTable

bool ProcessTable::monitored(std::uint64_t pid) const {
  auto it = pme_.find(pid);
  return pid != 0 && it != pme_.end() && it->second;
}

bool ProcessTable::known(std::uint64_t pid) const { return pme_.count(pid) != 0; }

void ProcessTable::set_monitored(std::uint64_t pid, bool on) {
  if (pid == 0) {
    throw Error(errc::invalid_argument,
                "process 0 stands for the kernel's own threads and cannot be selected");
  }
  pme_[pid] = on;
}

void ProcessTable::fork(std::uint64_t parent, std::uint64_t child) {
  if (child == 0) throw Error(errc::invalid_argument, "a forked process needs a pid other than 0");
  pme_[child] = monitored(parent);
}

}  // namespace alpha21064

// =============================================================================================
// Alpha21064Device

using namespace alpha21064;

namespace {

[[noreturn]] void fault(std::string what) { throw Error(errc::register_fault, std::move(what)); }

unsigned mux0_of(std::uint64_t iccsr) { return static_cast<unsigned>((iccsr & kMux0Mask) >> kMux0Shift); }
unsigned mux1_of(std::uint64_t iccsr) { return static_cast<unsigned>((iccsr & kMux1Mask) >> kMux1Shift); }
bool pc_of(unsigned counter, std::uint64_t iccsr) { return (iccsr & (counter == 0 ? kPc0 : kPc1)) != 0; }
bool disabled(unsigned counter, std::uint64_t iccsr) {
  return (iccsr & (counter == 0 ? kDisable0 : kDisable1)) != 0;
}

Rate rate_of(unsigned counter, std::uint64_t iccsr, const Segment& s) {
  return counter == 0 ? mux0_rate(mux0_of(iccsr), s) : mux1_rate(mux1_of(iccsr), s);
}

unsigned divisor_of(unsigned counter, std::uint64_t iccsr) {
  return counter == 0 && (mux0_of(iccsr) == kIssues || mux0_of(iccsr) == kNonIssues) ? 2 : 1;
}

// Why an ICCSR image is refused, or empty.
std::string refusal(std::uint64_t iccsr) {
  if (!mux0_defined(mux0_of(iccsr))) {
    return fmt::format("MUX0 {:#x} is not a defined counter-0 select (defined: 0x0, 0x2, 0x4, 0x6, "
                       "0x8, 0xA, 0xB, 0xC, 0xE)",
                       mux0_of(iccsr));
  }
  if ((iccsr & (kDisable0 | kDisable1)) == (kDisable0 | kDisable1)) {
    return "disable = 3 would disable both counters";
  }
  return {};
}

constexpr const char* kRegisterMap =
    "the 21064 model has registers 0 (ICCSR) to 9, 0x10-0x18 (IPL histogram) and 0x100000 + b (PC profile "
    "bucket b)";

// Ceiling of a / b for b > 0.
u128 ceil_div(u128 a, u128 b) { return a / b + (a % b != 0 ? 1 : 0); }

unsigned slot_of(const Segment& s) {  // [U8]
  if (s.mode == Mode::user) return kSlotUser;
  if (s.ipl == 0 && s.halted) return kSlotIdle;
  return s.ipl;
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

Alpha21064Device::Alpha21064Device(unsigned cpu_number, std::shared_ptr<ProcessTable> processes)
    : cpu_(cpu_number),
      processes_(processes ? std::move(processes) : std::make_shared<ProcessTable>()) {}

std::uint64_t Alpha21064Device::read(std::uint32_t address) {
  switch (address) {
    case kRegIccsr: return iccsr_;
    case kRegCount0: return count_[0];
    case kRegCount1: return count_[1];
    case kRegCycles: return cycles_;
    case kRegPerfmon: return enabled_ ? 1 : 0;
    case kRegLog: return log_;
    case kRegItems: return items_;
    case kRegProfile: return static_cast<std::uint64_t>(profile_.mode);
    case kRegProfileStart: return profile_start_;
    case kRegProfileEnd: return profile_end_;
    default: break;
  }
  if (address >= kRegIplSlot0 && address < kRegIplSlot0 + kIplSlots) return ipl_hist_[address - kRegIplSlot0];
  if (address >= kRegBucket0 && address - kRegBucket0 < profile_.buckets.size())
    return profile_.buckets[address - kRegBucket0];
  if (address >= kRegBucket0 && address - kRegBucket0 < kMaxProfileBuckets)
    fault(fmt::format("read of register {:#x}: PC profile bucket {} does not exist (the profile has {})", address,
                      address - kRegBucket0, profile_.buckets.size()));
  fault(fmt::format("read of register {:#x}: {}", address, kRegisterMap));
}

void Alpha21064Device::write(std::uint32_t address, std::uint64_t value) {
  switch (address) {
    case kRegIccsr:
      if (!apply_iccsr(value)) fault(fmt::format("ICCSR = {:#x} refused: {}", value, refusal(value)));
      return;
    case kRegCount0:
    case kRegCount1:
    case kRegCycles:
      if (value != 0) {
        fault(fmt::format("register {} = {:#x}: the pfm driver's counts can only be cleared (written 0)",
                          address, value));
      }
      if (address == kRegCycles) cycles_ = 0;
      else count_[address - kRegCount0] = 0;  // the partial interval carries on (sheet 5.8)
      return;
    case kRegPerfmon:
      if (value > 1) fault(fmt::format("PERFMON = {:#x}: 0 disables, 1 enables", value));
      (void)wrperfmon(value, 0);
      set_ipl(ipl_);  // [U5] the system call returns through rei: an IPL write
      return;
    case kRegLog:
      if (wrperfmon(3, value) == 0) {
        fault(fmt::format("LOG = {:#x}: 1 logs all processes, 2 selected ones", value));
      }
      return;
    case kRegItems:
      if (value == 0 || value > kItemsAll) {
        fault(fmt::format("ITEMS = {:#x}: items are 1 (counters), 2 (IPL), 4 (profiling), or-ed", value));
      }
      items_ = static_cast<unsigned>(value);
      return;
    case kRegProfile:
      write_profile(value);
      return;
    case kRegProfileStart:
      profile_start_ = value;
      return;
    case kRegProfileEnd:
      profile_end_ = value;
      return;
    default: break;
  }
  if (address >= kRegIplSlot0 && address < kRegIplSlot0 + kIplSlots) {
    if (value != 0) {
      fault(fmt::format("IPL histogram slot {} = {:#x}: the histogram can only be cleared (written 0)",
                        address - kRegIplSlot0, value));
    }
    ipl_hist_[address - kRegIplSlot0] = 0;
    return;
  }
  if (address >= kRegBucket0 && address - kRegBucket0 < kMaxProfileBuckets)
    fault(fmt::format("write of register {:#x}: PC profile buckets are read only; write PROFILE (7) to start an "
                      "empty profile",
                      address));
  fault(fmt::format("write of register {:#x}: {}", address, kRegisterMap));
}

std::uint64_t Alpha21064Device::rdpmc(std::uint32_t index) {
  fault(fmt::format("RDPMC {}: the 21064 has no instruction to read its counters; the pfm driver "
                    "counts their interrupts (registers 1 and 2)",
                    index));
}

std::uint64_t Alpha21064Device::interrupts() const { return sat_add(delivered_[0], delivered_[1]); }

void Alpha21064Device::set_reader_cpl(unsigned cpl) {
  if (cpl > 3) throw Error(errc::invalid_argument, fmt::format("CPL {} does not exist (0..3)", cpl));
}

void Alpha21064Device::set_cr4_pce(bool /*enabled*/) {}

std::uint64_t Alpha21064Device::wrperfmon(std::uint64_t function, std::uint64_t argument) {
  switch (function) {
    case 0: latch_ = false; return 1;
    case 1: latch_ = true; return 1;
    case 2: return apply_iccsr(argument) ? 1 : 0;
    case 3:
      if (argument != kLogAll && argument != kLogSelect) return 0;  // [U6]
      log_ = static_cast<unsigned>(argument);
      return 1;
    default: return 0;  // functions 4-9 exist on EV5 and later only (sheet 4a)
  }
}

bool Alpha21064Device::apply_iccsr(std::uint64_t value) {
  if (!refusal(value).empty()) return false;
  // The ignore fields are ignored (sheet 5.4: "ignored ... do not fault"). pfm(7) tells
  // programs "Do not set these fields. Must be zero."; the model follows the sheet, which
  // describes what the chip does with them, and the C shim's header repeats pfm(7)'s advice.
  const std::uint64_t next = value & kIccsrFields;
  for (unsigned i = 0; i < 2; ++i) {
    const std::uint64_t select = i == 0 ? (kMux0Mask | kPc0) : (kMux1Mask | kPc1);
    if ((next & select) != (iccsr_ & select)) acc_[i] = 0;  // [U2]
  }
  iccsr_ = next;
  return true;
}

void Alpha21064Device::set_ipl(unsigned ipl) {
  if (ipl > 7) throw Error(errc::invalid_argument, fmt::format("IPL {} is not 0..7", ipl));
  if (latch_) enabled_ = *latch_;  // [U5]
  latch_.reset();
  ipl_ = ipl;
}

void Alpha21064Device::set_items(unsigned items) {
  if (items == 0 || items > kItemsAll) {
    throw Error(errc::invalid_argument, fmt::format("items {:#x}: 1 counters, 2 IPL, 4 profiling, or-ed", items));
  }
  items_ = items;
}

std::uint64_t Alpha21064Device::interrupt_count(unsigned counter) const { return count_.at(counter); }
std::uint64_t Alpha21064Device::interrupts(unsigned counter) const { return delivered_.at(counter); }
std::uint64_t Alpha21064Device::dismissed(unsigned counter) const { return dismissed_.at(counter); }
std::uint64_t Alpha21064Device::lost_interrupts(unsigned counter) const { return lost_.at(counter); }
bool Alpha21064Device::pending(unsigned counter) const { return pending_.at(counter); }
std::uint64_t Alpha21064Device::partial(unsigned counter) const {
  return acc_.at(counter) / divisor_of(counter, iccsr_);
}

void Alpha21064Device::set_profile(ProfileMode mode, std::uint64_t start, std::uint64_t end) {
  if (mode == ProfileMode::off) {
    profile_ = Profile{};
    return;
  }
  if (start >= end) {
    throw Error(errc::invalid_argument,
                fmt::format("profile range [{:#x}, {:#x}) is empty: start must be below end", start, end));
  }
  const std::uint64_t n = (end - start) / kBucketBytes + ((end - start) % kBucketBytes != 0 ? 1 : 0);
  profile_ = Profile{mode, start, end, std::vector<std::uint64_t>(n, 0)};
}

// The PROFILE register: PCNTSETUADDR / PCNTSETKADDR with the range in PSTART and PEND [U15].
void Alpha21064Device::write_profile(std::uint64_t value) {
  if (value > 2) fault(fmt::format("PROFILE = {:#x}: 0 stops the profile, 1 profiles user PCs, 2 kernel PCs", value));
  const auto mode = static_cast<ProfileMode>(value);
  if (mode == ProfileMode::off) return set_profile(mode, 0, 0);
  if (!(items_ & kItemProfiling))
    fault(fmt::format("PROFILE = {}: ITEMS ({:#x}) does not include 4 (profiling)", value, items_));
  if (profile_start_ >= profile_end_)
    fault(fmt::format("PROFILE = {}: the range [PSTART, PEND) = [{:#x}, {:#x}) is empty", value, profile_start_,
                      profile_end_));
  if ((profile_end_ - profile_start_) / kBucketBytes >= kMaxProfileBuckets)
    fault(fmt::format("PROFILE = {}: the range [{:#x}, {:#x}) needs {} buckets of {} bytes; the driver's buffer holds "
                      "fewer than {} (ENOMEM)",
                      value, profile_start_, profile_end_,
                      (profile_end_ - profile_start_ + kBucketBytes - 1) / kBucketBytes, kBucketBytes,
                      kMaxProfileBuckets));
  set_profile(mode, profile_start_, profile_end_);
}

void Alpha21064Device::clear_counts() {
  count_ = {};
  cycles_ = 0;
}

void Alpha21064Device::clear_ipl_histogram() { ipl_hist_ = {}; }

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
  if (s.ipl > 7) {
    throw Error(errc::invalid_argument,
                fmt::format("ipl {} is not an IPL of the 21064 model (OSF/1 uses 0..7; user mode is "
                            "mode = \"user\", which the IPL histogram counts in slot 8)",
                            s.ipl));
  }
  if (s.mode == Mode::user && s.ipl != 0) {
    throw Error(errc::invalid_argument,
                fmt::format("a user-mode segment runs at IPL 0, not {} (kernel activity is mode = \"kernel\")",
                            s.ipl));
  }
  if (s.ipl != ipl_) set_ipl(s.ipl);  // an IPL change applies a latched enable/disable [U5]
  if (s.parent != 0 && s.pid != 0 && !processes_->known(s.pid)) processes_->fork(s.parent, s.pid);  // [U11]
  if (s.ipl < kCounterIpl) deliver_pending(s);
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
    if (s.ipl >= kCounterIpl) {  // masked [U7]
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

// =============================================================================================
// PfmDriver

namespace {
}

PfmDriver::PfmDriver(unsigned cpus) : processes_(std::make_shared<ProcessTable>()) {
  if (cpus == 0 || cpus > kMaxCpus) {
    throw Error(errc::invalid_argument, fmt::format("{} CPUs: the emulated system has 1..{}", cpus, kMaxCpus));
  }
  for (unsigned i = 0; i < cpus; ++i) cpus_.push_back(std::make_unique<Alpha21064Device>(i, processes_));
  busy_.assign(cpus, false);
}

Alpha21064Device& PfmDriver::cpu(unsigned index) {
  if (index >= cpus_.size()) {
    throw Error(errc::invalid_argument, fmt::format("CPU {} does not exist (the system has {})", index, cpus()));
  }
  return *cpus_[index];
}

void PfmDriver::run(const Segment& segment) { cpu(segment.cpu).run(segment); }

void PfmDriver::run(const Workload& workload) {
  for (std::size_t i = 0; i < workload.size(); ++i) {
    if (workload.segment(i).cpu >= cpus_.size()) {
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {} runs on CPU {}, but the emulated system has {} CPU(s)",
                              workload.source.empty() ? workload.name : workload.source, i + 1,
                              workload.segment(i).cpu, cpus()));
    }
  }
  for (std::size_t i = 0; i < workload.size(); ++i) {
    const Segment s = workload.segment(i);
    cpus_[s.cpu]->run(s);
  }
}

const PfmDriver::Open* PfmDriver::find(int handle) const {
  auto it = open_.find(handle);
  return it == open_.end() ? nullptr : &it->second;
}

std::vector<Alpha21064Device*> PfmDriver::cpus_of(const Open& o) {
  std::vector<Alpha21064Device*> out;
  if (o.mode == kOpenOne) {
    out.push_back(cpus_[o.cpu].get());
  } else {
    for (auto& c : cpus_) out.push_back(c.get());
  }
  return out;
}

void PfmDriver::syscall_return(const Open& o) {
  for (auto* c : cpus_of(o)) c->set_ipl(c->ipl());  // [U5], [U14]
}

int PfmDriver::open(int flags, const Caller& caller, int& handle) {
  const int mode = flags & kOpenMask;
  Open o{mode, 0};
  if (mode == kOpenOne) {
    if (!caller.bound_cpu) return EINVAL;  // pfm(7): must be bound "or the open will fail" [U12]
    if (*caller.bound_cpu >= cpus_.size()) return ENODEV;
    if (busy_[*caller.bound_cpu]) return EBUSY;
    o.cpu = *caller.bound_cpu;
    busy_[o.cpu] = true;
  } else if (mode == kOpenEach || mode == kOpenAll) {
    if (std::find(busy_.begin(), busy_.end(), true) != busy_.end()) return EBUSY;
    busy_.assign(busy_.size(), true);
  } else {
    return EINVAL;
  }
  handle = next_handle_++;
  open_[handle] = o;
  for (auto* c : cpus_of(o)) {  // [U13]
    (void)c->wrperfmon(0, 0);
    (void)c->wrperfmon(3, kLogAll);
    c->set_items(kItemCounters);
  }
  syscall_return(o);
  return 0;
}

int PfmDriver::close(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) {
    (void)c->wrperfmon(0, 0);
    c->set_profile(ProfileMode::off, 0, 0);
  }
  syscall_return(*o);
  if (o->mode == kOpenOne) busy_[o->cpu] = false;
  else busy_.assign(busy_.size(), false);
  open_.erase(handle);
  return 0;
}

int PfmDriver::disable(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(0, 0);
  syscall_return(*o);
  return 0;
}

int PfmDriver::enable(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(1, 0);
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_mux(int handle, std::uint64_t iccsr) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (!refusal(iccsr).empty()) return EINVAL;  // pfm(7): disable = 3; sheet 5.3: undefined MUX0
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(2, iccsr);
  syscall_return(*o);
  return 0;
}

int PfmDriver::log_all(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(3, kLogAll);
  syscall_return(*o);
  return 0;
}

int PfmDriver::log_select(int handle, const Caller& caller) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (caller.pid != 0) processes_->set_monitored(caller.pid, true);  // pfm(7): "for this process"
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(3, kLogSelect);
  syscall_return(*o);
  return 0;
}

int PfmDriver::clear(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  const unsigned items = cpus.front()->items();
  if (!(items & (kItemCounters | kItemIpl))) return EINVAL;  // pfm(7): profiling only
  for (auto* c : cpus) {
    if (items & kItemCounters) c->clear_counts();
    if (items & kItemIpl) c->clear_ipl_histogram();
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_counts(int handle, std::vector<Counts>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (!(cpus.front()->items() & kItemCounters)) return EINVAL;  // pfm(7)
  out.clear();
  for (auto* c : cpus) {
    Counts n{c->interrupt_count(0), c->interrupt_count(1), c->cycle_count()};
    if (o->mode == kOpenAll && !out.empty()) {  // [U14]
      out[0].cntr0 = sat_add(out[0].cntr0, n.cntr0);
      out[0].cntr1 = sat_add(out[0].cntr1, n.cntr1);
      out[0].cycles = sat_add(out[0].cycles, n.cycles);
    } else {
      out.push_back(n);
    }
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_ipl_histograms(int handle, std::vector<IplHistogram>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (!(cpus.front()->items() & kItemIpl)) return EINVAL;  // pfm(7)
  out.clear();
  for (auto* c : cpus) {
    if (o->mode == kOpenAll && !out.empty()) {
      for (std::size_t k = 0; k < kIplSlots; ++k) out[0][k] = sat_add(out[0][k], c->ipl_histogram()[k]);
    } else {
      out.push_back(c->ipl_histogram());
    }
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_rsize(int handle, std::uint64_t& bytes) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  const Alpha21064Device& c = *cpus.front();
  bytes = 0;
  if ((c.items() & kItemProfiling) && c.profile().mode != ProfileMode::off) {  // [U16]
    bytes = 4 * c.profile().buckets.size() * (o->mode == kOpenEach ? cpus.size() : 1);
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_items(int handle, std::int64_t items) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (items <= 0 || items > static_cast<std::int64_t>(kItemsAll)) return EINVAL;  // pfm(7), [U15]
  for (auto* c : cpus_of(*o)) c->set_items(static_cast<unsigned>(items));
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_range(int handle, ProfileMode mode, std::uint64_t start, std::uint64_t end) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (mode == ProfileMode::off || !(cpus.front()->items() & kItemProfiling)) return EINVAL;
  if (start >= end) return EINVAL;
  if ((end - start) / kBucketBytes >= kMaxProfileBuckets) return ENOMEM;  // [U15]
  for (auto* c : cpus) c->set_profile(mode, start, end);
  syscall_return(*o);
  return 0;
}

int PfmDriver::read_profile(int handle, std::vector<std::uint32_t>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  std::uint64_t bytes = 0;
  if (int e = get_rsize(handle, bytes)) return e;
  out.clear();
  if (bytes == 0) return 0;
  const auto cpus = cpus_of(*o);
  const std::size_t n = cpus.front()->profile().buckets.size();
  if (o->mode == kOpenEach) {
    for (auto* c : cpus)
      for (std::uint64_t v : c->profile().buckets) out.push_back(static_cast<std::uint32_t>(v));  // [U16]
  } else {
    std::vector<std::uint64_t> sum(n, 0);
    for (auto* c : cpus)
      for (std::size_t k = 0; k < n; ++k) sum[k] = sat_add(sum[k], c->profile().buckets[k]);
    for (std::uint64_t v : sum) out.push_back(static_cast<std::uint32_t>(v));
  }
  return 0;
}

int PfmDriver::entries(int handle, std::size_t& n) const {
  const Open* o = find(handle);
  if (!o) return EBADF;
  n = o->mode == kOpenEach ? cpus_.size() : 1;
  return 0;
}

}  // namespace pmc::sim
