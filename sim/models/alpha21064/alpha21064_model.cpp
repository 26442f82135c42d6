// The emulated Alpha 21064 performance counters: the chip's registers and PALcode state.
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
// This file: the process table, the ICCSR and the RegisterFile view (read, write, wrperfmon,
// the IPL latch, items, the PC profile's range). alpha21064_counting.cpp: what segments count,
// where the interrupts fall and what the handler records. pfm_driver.cpp: the pfm(7)
// pseudo-device and its policies [U12]..[U16].
#include "alpha21064_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <string>

namespace pmc::sim {

namespace alpha21064 {

bool mux0_defined(unsigned mux0) {
  switch (mux0) {
    case kIssues: case kPipeDry: case kLoadI: case kPipeFrozen: case kBranchI:
    case kCycles: case kPalMode: case kNonIssues: case kExtPin0:
      return true;
    default:
      return false;
  }
}

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
// Alpha21064Device: the registers

using namespace alpha21064;

namespace {

[[noreturn]] void fault(std::string what) { throw Error(errc::register_fault, std::move(what)); }

unsigned divisor_of(unsigned counter, std::uint64_t iccsr) {
  return counter == 0 && (mux0_of(iccsr) == kIssues || mux0_of(iccsr) == kNonIssues) ? 2 : 1;
}

constexpr const char* kRegisterMap =
    "the 21064 model has registers 0 (ICCSR) to 9, 0x10-0x18 (IPL histogram) and 0x100000 + b (PC profile "
    "bucket b)";

}  // namespace

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

}  // namespace pmc::sim
