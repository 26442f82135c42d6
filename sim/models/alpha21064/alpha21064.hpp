// The DEC Alpha 21064 (EV4) performance counters as software sees them through PALcode
// (wrperfmon) and the OSF/1 pfm(7) pseudo-device, emulated: the chip (the ICCSR fields, two
// counters that interrupt every 2^16 / 2^12 and 2^12 / 2^8 events), the driver's interrupt
// handler (interrupt counts, the 9-slot IPL histogram, the PC profile), and the pfm(7) device
// with its open modes over several CPUs.
//
// Written from docs/hardware/alpha21064.md (the fact sheet, "sheet" below, by section) and
// the OSF/1 3.0 pfm(7) manual page (the seed, "pfm(7)"), not from the alpha21064_sim backend.
// Policies neither states are marked [U]; the full list is at the top of
// sim/models/alpha21064/alpha21064_model.cpp (the chip) and pfm_driver.cpp (the driver).
#pragma once

#include <pmc/export.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace pmc::sim {

namespace alpha21064 {

// ---------------------------------------------------------------------------------------------
// The ICCSR fields in write format (sheet 2; DEC's struct iccsr, LSB first). Every other bit is
// an "ignore" field: a write may set them, the chip ignores them, a read gives them as 0.
inline constexpr std::uint64_t kPc1 = 1ULL << 0;             // counter-1 interval select
inline constexpr std::uint64_t kPc0 = 1ULL << 3;             // counter-0 interval select
inline constexpr unsigned kMux0Shift = 8;                    // MUX0, bits 11:8
inline constexpr std::uint64_t kMux0Mask = 0xFULL << kMux0Shift;
inline constexpr unsigned kMux1Shift = 32;                   // MUX1, bits 34:32
inline constexpr std::uint64_t kMux1Mask = 0x7ULL << kMux1Shift;
inline constexpr std::uint64_t kDisable0 = 1ULL << 35;       // "disable" bits 36:35 [I]
inline constexpr std::uint64_t kDisable1 = 1ULL << 36;
inline constexpr std::uint64_t kIccsrFields = kPc1 | kPc0 | kMux0Mask | kMux1Mask | kDisable0 | kDisable1;

// MUX0 selects (sheet 3). 0x1, 0x3, 0x5, 0x7, 0x9, 0xD and 0xF are undefined and refused.
enum Mux0 : unsigned {
  kIssues = 0x0, kPipeDry = 0x2, kLoadI = 0x4, kPipeFrozen = 0x6, kBranchI = 0x8,
  kCycles = 0xA, kPalMode = 0xB, kNonIssues = 0xC, kExtPin0 = 0xE,
};
// MUX1 selects (sheet 3): all eight values are defined.
enum Mux1 : unsigned {
  kDcache = 0x0, kIcache = 0x1, kDual = 0x2, kBranchMiss = 0x3,
  kFpInst = 0x4, kIntOps = 0x5, kStoreI = 0x6, kExtPin1 = 0x7,
};
[[nodiscard]] bool mux0_defined(unsigned mux0);

// Events between two interrupts of counter 0 or 1 for its PC bit (sheet 2, pfm(7) iccsr_pc0/1:
// 0 selects the longer interval).
[[nodiscard]] constexpr std::uint64_t interval(unsigned counter, bool pc) {
  return counter == 0 ? (pc ? 4096 : 65536) : (pc ? 256 : 4096);
}

// ---------------------------------------------------------------------------------------------
// The RegisterFile view (addresses like MSRs) a driver, such as the alpha21064_sim backend,
// programs. [U]: the 21064 has no such map (software reaches the counters through PALcode and
// the pfm driver); these registers are the operations of sheet 4a/4b, one per address.
//
//  addr  name     read                                   write
//   0    ICCSR    the PC/MUX/disable fields last set      wrperfmon(2): PCNTSETMUX's checks; an
//                 (the ignore bits read 0)                undefined MUX0 or disable = 3 faults
//   1    COUNT0   the driver's counter-0 interrupt count  0 only: clears it (PCNTCLEARCNT, one
//   2    COUNT1   the driver's counter-1 interrupt count          counter); the interval carries on
//   3    CYCLES   pr_cycle: cycles counted while          0 only: clears it
//                 monitoring was enabled
//   4    PERFMON  1 when monitoring is enabled            1 = wrperfmon(1), 0 = wrperfmon(0),
//                                                         taking effect at once (see below)
//   5    LOG      1 = all processes, 2 = selected only    wrperfmon(3): 1 or 2
//   6    ITEMS    the PCNTSETITEMS items                  1..7 (PFM_COUNTERS | PFM_IPL | ...)
//   7    PROFILE  the PC profile's mode: 0 off,           0 stops and frees the profile; 1 or 2
//                 1 user, 2 kernel                        starts an empty one over [PSTART, PEND)
//                                                         (PCNTSETUADDR / PCNTSETKADDR: needs
//                                                         ITEMS & 4, PSTART < PEND, and a range
//                                                         under kMaxProfileBuckets x 16 bytes)
//   8    PSTART   the range start for the next PROFILE    any value
//   9    PEND     the range end for the next PROFILE      any value
//  0x10+s IPLHIS  slot s (0..8) of the IPL histogram      0 only: clears that slot
//  0x100000+b     samples in bucket b of the PC profile   read only
//   BUCKET
// Any other address, or a refused value, is a register_fault that changes nothing.
inline constexpr std::uint32_t kRegIccsr = 0;
inline constexpr std::uint32_t kRegCount0 = 1;
inline constexpr std::uint32_t kRegCount1 = 2;
inline constexpr std::uint32_t kRegCycles = 3;
inline constexpr std::uint32_t kRegPerfmon = 4;
inline constexpr std::uint32_t kRegLog = 5;
inline constexpr std::uint32_t kRegItems = 6;
inline constexpr std::uint32_t kRegProfile = 7;
inline constexpr std::uint32_t kRegProfileStart = 8;
inline constexpr std::uint32_t kRegProfileEnd = 9;
inline constexpr std::uint32_t kRegIplSlot0 = 0x10;
inline constexpr std::uint32_t kRegBucket0 = 0x100000;

// Items collected at each interrupt (pfm(7) PCNTSETITEMS; sheet 4b values).
inline constexpr unsigned kItemCounters = 1;
inline constexpr unsigned kItemIpl = 2;
inline constexpr unsigned kItemProfiling = 4;
inline constexpr unsigned kItemsAll = kItemCounters | kItemIpl | kItemProfiling;

// wrperfmon function 3 options (sheet 4a): bit 0 log all processes, bit 1 only selected ones.
inline constexpr unsigned kLogAll = 1;
inline constexpr unsigned kLogSelect = 2;

// The IPL histogram (pfm(7) PCNTGETIPLHIS): slots 0-5 are IPL 0-5, 6 is unused (IPL 6 is the
// level of the counter interrupts), 7 counts idle ticks, 8 user-mode ticks.
inline constexpr std::size_t kIplSlots = 9;
inline constexpr unsigned kSlotIdle = 7;
inline constexpr unsigned kSlotUser = 8;
inline constexpr unsigned kCounterIpl = 6;  // counter interrupts are masked at IPL >= 6
using IplHistogram = std::array<std::uint64_t, kIplSlots>;

// The PC profile (pfm(7) PCNTSETUADDR / PCNTSETKADDR): one bucket per 4 instructions.
inline constexpr std::uint64_t kBucketBytes = 16;
// [U] The driver's buffer limit: a range of this many buckets' bytes (2^24) or more is refused
// (pfm(7) ENOMEM).
inline constexpr std::uint64_t kMaxProfileBuckets = 1ULL << 20;
enum class ProfileMode { off, user, kernel };  // also the PROFILE register's values 0, 1, 2
struct Profile {
  ProfileMode mode = ProfileMode::off;
  std::uint64_t start = 0, end = 0;       // [start, end): bucket b covers start + 16b .. + 15
  std::vector<std::uint64_t> buckets;     // ceil((end - start) / 16) samples per bucket
};

// Which processes have PCB_PME_BIT set (pfm(7) PCNTLOGSELECT), shared by the CPUs of one
// system. Process 0 stands for "no process" (kernel threads, the idle thread) and is never
// selected. [U] A process the table has not seen has the bit clear.
class ProcessTable {
 public:
  [[nodiscard]] bool monitored(std::uint64_t pid) const;
  [[nodiscard]] bool known(std::uint64_t pid) const;
  // Sets or clears the bit (PCNTLOGSELECT sets it for the calling process). Throws
  // invalid_argument for pid 0.
  void set_monitored(std::uint64_t pid, bool on);
  // fork (or exec, which keeps the pid): the child starts with the parent's bit.
  void fork(std::uint64_t parent, std::uint64_t child);

 private:
  std::map<std::uint64_t, bool> pme_;
};

}  // namespace alpha21064

// One emulated 21064: the chip's performance-monitoring state plus the per-CPU data of the
// pfm driver's interrupt handler (interrupt counts, pr_cycle, IPL histogram, PC profile).
//
// Activity (Segment, docs/workload-format.md "Alpha 21064 signals"): the CPU runs only the
// segments whose `cpu` is its number; the level signal `ipl`, `mode`, `halted` (the idle
// thread), `pc`, `pid` and `parent` are read as the sheet and pfm(7) describe, in closed form per segment.
class Alpha21064Device final : public Device {
 public:
  // CPU `cpu_number` of a system whose processes are `processes` (a table of its own when null).
  explicit Alpha21064Device(unsigned cpu_number = 0,
                            std::shared_ptr<alpha21064::ProcessTable> processes = nullptr);

  // Device.
  [[nodiscard]] std::string_view name() const override { return "alpha21064"; }
  std::uint64_t read(std::uint32_t address) override;
  void write(std::uint32_t address, std::uint64_t value) override;
  // The 21064's counters cannot be read by software (sheet 4b): always a register_fault.
  std::uint64_t rdpmc(std::uint32_t index) override;
  void run(const Segment& segment) override;
  // The segments of this CPU only (Segment::cpu == cpu_number()).
  [[nodiscard]] bool executes(const Segment& segment) const override { return segment.cpu == cpu_; }
  // Counter interrupts delivered to the CPU (each one entered the handler, including those it
  // dismissed because the counter's disable bit was set).
  [[nodiscard]] std::uint64_t interrupts() const override;
  void set_reader_cpl(unsigned cpl) override;      // no RDPMC on the Alpha: checked, not used
  void set_cr4_pce(bool enabled) override;         // no CR4 on the Alpha: ignored

  // PALcode wrperfmon, EV4 functions (sheet 4a): 0 disable, 1 enable (both latched until the
  // next IPL write), 2 mux_ctl = ICCSR fields in write format, 3 logging options (kLogAll,
  // kLogSelect). Returns v0: 1 on success, 0 when refused (an unknown function, an undefined
  // MUX0, both counters disabled, an unknown option) [U: the sheet says failure is "not
  // generated"; the model reports it].
  std::uint64_t wrperfmon(std::uint64_t function, std::uint64_t argument);
  // An IPL write (swpipl, or rei at the end of a system call): applies a latched enable or
  // disable; 0..7.
  void set_ipl(unsigned ipl);
  [[nodiscard]] unsigned ipl() const { return ipl_; }
  [[nodiscard]] bool monitoring() const { return enabled_; }    // in effect now
  [[nodiscard]] std::optional<bool> latched() const { return latch_; }
  [[nodiscard]] std::uint64_t iccsr() const { return iccsr_; }
  [[nodiscard]] unsigned log_option() const { return log_; }
  [[nodiscard]] unsigned items() const { return items_; }
  void set_items(unsigned items);                  // 1..7, else invalid_argument
  [[nodiscard]] unsigned cpu_number() const { return cpu_; }
  [[nodiscard]] alpha21064::ProcessTable& processes() { return *processes_; }

  // The driver's data for this CPU.
  [[nodiscard]] std::uint64_t interrupt_count(unsigned counter) const;  // pf_cntr0 / pf_cntr1
  [[nodiscard]] std::uint64_t cycle_count() const { return cycles_; }  // pr_cycle
  [[nodiscard]] const alpha21064::IplHistogram& ipl_histogram() const { return ipl_hist_; }
  [[nodiscard]] const alpha21064::Profile& profile() const { return profile_; }
  // Starts a profile of [start, end) in user or kernel mode with empty buckets (off: stops and
  // frees it). Throws invalid_argument when start >= end.
  void set_profile(alpha21064::ProfileMode mode, std::uint64_t start, std::uint64_t end);
  void clear_counts();         // interrupt counts and pr_cycle; partial intervals carry on
  void clear_ipl_histogram();

  // The chip and the handler, for tests and reports.
  [[nodiscard]] std::uint64_t interrupts(unsigned counter) const;       // delivered
  [[nodiscard]] std::uint64_t dismissed(unsigned counter) const;        // delivered, disabled
  [[nodiscard]] std::uint64_t lost_interrupts(unsigned counter) const;  // overflows while one was pending
  [[nodiscard]] bool pending(unsigned counter) const;                   // raised at IPL >= 6
  // Events counted since the last interrupt, in events (half events of ISSUES/NONISSUES are
  // rounded down).
  [[nodiscard]] std::uint64_t partial(unsigned counter) const;

 private:
  struct Tick;  // where one counter's interrupts of a segment happen (alpha21064_counting.cpp)
  bool apply_iccsr(std::uint64_t value);
  void write_profile(std::uint64_t value);
  void record(unsigned counter, const Segment& s, const Tick& tick);
  void deliver_pending(const Segment& s);

  unsigned cpu_;
  std::shared_ptr<alpha21064::ProcessTable> processes_;
  std::uint64_t iccsr_ = 0;
  bool enabled_ = false;
  std::optional<bool> latch_;
  unsigned ipl_ = 0;
  unsigned log_ = alpha21064::kLogAll;
  unsigned items_ = alpha21064::kItemCounters;
  std::uint64_t profile_start_ = 0, profile_end_ = 0;  // PSTART, PEND
  std::array<std::uint64_t, 2> acc_{};        // the counter in units (half events for /2 events)
  std::array<std::uint64_t, 2> count_{};      // interrupt counts (pf_cntr0/1)
  std::array<std::uint64_t, 2> delivered_{};
  std::array<std::uint64_t, 2> dismissed_{};
  std::array<std::uint64_t, 2> lost_{};
  std::array<bool, 2> pending_{};
  std::uint64_t cycles_ = 0;
  alpha21064::IplHistogram ipl_hist_{};
  alpha21064::Profile profile_;
};

// The pfm(7) pseudo-device of an emulated multiprocessor: the kernel side of open(2), ioctl(2),
// read(2) and close(2) on /dev/pfcntr. Every call returns 0 or an errno value (EBUSY, EINVAL,
// ENODEV, ENOMEM, EBADF); copying to and from user memory (EFAULT) is the caller's part (the C
// shim, <pmc/pfm.h>). Handles are small integers, as file descriptors are.
class PfmDriver {
 public:
  // Open modes OR-ed into the open(2) flags (sheet 4b, pfcntr.h 2001).
  static constexpr int kOpenOne = 0100000;
  static constexpr int kOpenEach = 0200000;
  static constexpr int kOpenAll = 0300000;
  static constexpr int kOpenMask = 0300000;
  static constexpr unsigned kMaxCpus = 64;

  // The calling process: its id and the CPU it is bound to, if any.
  struct Caller {
    std::optional<unsigned> bound_cpu;
    std::uint64_t pid = 1;
  };
  // struct pfcntrs: interrupt counts and pr_cycle.
  struct Counts {
    std::uint64_t cntr0 = 0, cntr1 = 0, cycles = 0;
  };

  explicit PfmDriver(unsigned cpus = 1);  // 1..kMaxCpus, else invalid_argument
  [[nodiscard]] unsigned cpus() const { return static_cast<unsigned>(cpus_.size()); }
  [[nodiscard]] Alpha21064Device& cpu(unsigned index);   // throws invalid_argument
  [[nodiscard]] alpha21064::ProcessTable& processes() { return *processes_; }

  // Activity: each segment runs on the CPU its `cpu` names; invalid_argument when there is
  // no such CPU (checked for the whole workload before anything runs).
  void run(const Segment& segment);
  void run(const Workload& workload);

  int open(int flags, const Caller& caller, int& handle);
  int close(int handle);
  int disable(int handle);                              // PCNTRDISABLE
  int enable(int handle);                               // PCNTRENABLE
  int set_mux(int handle, std::uint64_t iccsr);         // PCNTSETMUX
  int log_all(int handle);                              // PCNTLOGALL
  int log_select(int handle, const Caller& caller);     // PCNTLOGSELECT
  int clear(int handle);                                // PCNTCLEARCNT
  int get_counts(int handle, std::vector<Counts>& out);                       // PCNTGETCNT
  int get_rsize(int handle, std::uint64_t& bytes);                            // PCNTGETRSIZE
  int get_ipl_histograms(int handle, std::vector<alpha21064::IplHistogram>& out);  // PCNTGETIPLHIS
  int set_items(int handle, std::int64_t items);                              // PCNTSETITEMS
  int set_range(int handle, alpha21064::ProfileMode mode, std::uint64_t start,
                std::uint64_t end);                     // PCNTSETUADDR / PCNTSETKADDR
  // read(2): the profile as 32-bit buckets (each CPU's in turn when opened EACH).
  int read_profile(int handle, std::vector<std::uint32_t>& out);
  // How many struct pfcntrs / pfipls GETCNT and GETIPLHIS write: the CPUs for EACH, else 1.
  int entries(int handle, std::size_t& n) const;

 private:
  struct Open {
    int mode = 0;
    unsigned cpu = 0;  // PCNTOPENONE
  };
  [[nodiscard]] const Open* find(int handle) const;
  [[nodiscard]] std::vector<Alpha21064Device*> cpus_of(const Open& o);
  void syscall_return(const Open& o);

  std::shared_ptr<alpha21064::ProcessTable> processes_;
  std::vector<std::unique_ptr<Alpha21064Device>> cpus_;
  std::vector<bool> busy_;
  std::map<int, Open> open_;
  int next_handle_ = 3;
};

}  // namespace pmc::sim
