// Overflow interrupts in the x86 device models that have them (p6, archperf, amd): the local
// APIC's performance-counter LVT entry, and the simulated kernel's PMI handler that a driver
// installs to sample. Part of pmcmodel_x86 (x86_pmu.hpp's X86Device holds a PmiUnit).
//
// The hardware (docs/hardware/p6.md section 4, archperf.md section 4, amd.md section 4):
//  - A counter whose event select has INT (bit 20), or a fixed counter whose PMI bit is set,
//    raises a PMI each time it wraps. The PMI goes through the local APIC's LVT performance
//    counter entry, LVTPC, at FEE00340H (Intel SDM vol. 3A, "Local Vector Table", figure
//    "Local Vector Table (LVT)"): vector 7:0, delivery mode 10:8 (000 fixed, 100 NMI), delivery
//    status 12 (read-only), mask 16 (1: masked); 0001_0000H after reset. The RegisterFile
//    reaches it at address 0xFEE00340 (its xAPIC physical address; the models have no x2APIC).
//    A write keeps bits 7:0, 10:8 and 16; the others read as 0 [U].
//  - A PMI raised while LVTPC is unmasked is delivered, and delivering it sets the mask bit
//    (the SDM states it for the Pentium 4; perfctr for the Pentium M and later; FreeBSD's P6
//    driver and Linux's x86 handler unmask it at every PMI) [I]: a second PMI is delivered only
//    after software unmasks the entry again. AMD's PerfMonV2 parts do not mask on delivery
//    (amd.md section 4; set_mask_on_delivery). A PMI raised while masked is not delivered
//    (lost); Device::interrupts() counts every PMI raised, delivered or not.
//
// The simulated PMI handler (docs/profiling.md, "The simulated PMI handler"). Segments run in
// closed form, so the interrupt service routine a driver would install runs inside the model,
// programmed through registers no x86 MSR uses (as the Alpha model holds its pfm(7) handler):
//   0x50000000 HANDLER   1: installed, 0: none. Installed and LVTPC unmasked, each delivered
//                        PMI runs it: it records the sample, writes RELOAD[c] + the events past
//                        the wrap into each counter c that overflowed (the driver's -period,
//                        keeping the overshoot as Linux's x86_perf_event_set_period does),
//                        counts the reload, acknowledges the overflow in the model's status
//                        register (archperf GLOBAL_STATUS via STATUS_RESET, AMD PerfMonV2
//                        GlobalStatus via StatusClr), undoes a freeze on PMI, and unmasks LVTPC.
//   0x50000001 PROFILE   0 no PC profile, 1 user PCs, 2 kernel PCs, over [PSTART, PEND)
//   0x50000002 PSTART, 0x50000003 PEND
//   0x50000004 KERNEL, 0x50000005 USER: samples taken in kernel (ring 0) and user (ring 3)
//                        mode (write 0 to clear)
//   0x50000006 CLOCK     the simulated CPU's clock in Hz, read-only: the nominal clock its
//                        CPUID gives (nominal_clock_hz), or the device setting clock_hz; 0: none
//   0x50000100 + c RELOAD[c]   the value the handler reloads counter c with (0: none)
//   0x50000200 + c RELOADS[c]  how many times it did (write 0 to clear)
//   0x50000300 + c FREQ[c]     0: RELOAD[c] is the reload (period=). N > 0: frequency mode
//                        (freq=N): at each overflow the handler adjusts PERIOD[c] so that about N
//                        interrupts come a second of simulated time (cycles / CLOCK), and
//                        reloads 2^width - PERIOD[c]. Writing it forgets the last interrupt's time.
//   0x50000400 + c PERIOD[c]   frequency mode: the period in force (the driver writes the first, >= 1)
//   0x50000500 + c ELAPSED[c]  frequency mode: the events of the periods completed, modulo 2^64
//                        (write 0 to clear): a counter's count is raw - reload + ELAPSED[c]
// The adjustment is the kernel's for perf's freq mode (kernel/events/core.c, perf_adjust_period
// and perf_calculate_period), with simulated time for the kernel's clock: at an overflow t
// cycles after the counter's previous one, whose period was P (the events between the two),
// the period that would give N a second is W = P x CLOCK / (t x N); the new period moves an
// eighth of the way there, P + (W - P + 7) / 8 with the division truncated as C's is, and is
// at least 1 and at most 2^(width-1) - 1. Two overflows in one cycle (t = 0; the kernel's time
// delta 0) and the first overflow after FREQ is written (no previous one) leave it. The kernel
// also adjusts at each timer tick and throttles above perf_event_max_sample_rate; this handler
// does neither. Starting from period 1, as the kernel's freq mode starts, the period reaches
// W after some 40 interrupts; the ramp adds about 8 samples to the N x seconds of a steady rate.
// Its cost is one step per cycle in which a frequency counter overflows.
//   0x50100000 + b       PC profile bucket b (16 bytes each; fewer than 2^20), read-only;
//                        writing PROFILE empties the profile.
// Counter numbers c are the overflow-status bit numbers: general-purpose counter i is c = i,
// fixed counter i is c = 32 + i.
//
// The interrupted instruction: the m-th interrupt of a counter in a segment is taken in the
// cycle in which the counter reaches its m-th overflow (no skid), and the PC of cycle j of a
// segment of N cycles over pc = [b, e) is b + floor(j (e - b) / N), as the Alpha model has it
// (sim/models/alpha21064/alpha21064_model.cpp [U9]); a segment without `pc` gives none. The mode
// is the segment's.
#pragma once

#include <pmc/sdk/counting.hpp>
#include <pmc/workload.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace pmc::sim::x86 {

inline constexpr std::uint32_t kLvtpc = 0xFEE00340;
inline constexpr std::uint64_t kLvtMask = std::uint64_t{1} << 16;
inline constexpr std::uint64_t kLvtWritable = 0xFF | (0x7 << 8) | kLvtMask;

inline constexpr std::uint32_t kHandler = 0x50000000;
inline constexpr std::uint32_t kProfile = 0x50000001;
inline constexpr std::uint32_t kProfileStart = 0x50000002;
inline constexpr std::uint32_t kProfileEnd = 0x50000003;
inline constexpr std::uint32_t kKernelSamples = 0x50000004;
inline constexpr std::uint32_t kUserSamples = 0x50000005;
inline constexpr std::uint32_t kClock = 0x50000006;
inline constexpr std::uint32_t kReload0 = 0x50000100;
inline constexpr std::uint32_t kReloads0 = 0x50000200;
inline constexpr std::uint32_t kFreq0 = 0x50000300;
inline constexpr std::uint32_t kPeriod0 = 0x50000400;
inline constexpr std::uint32_t kElapsed0 = 0x50000500;
inline constexpr std::uint32_t kBucket0 = 0x50100000;
inline constexpr unsigned kHandlerCounters = 64;
inline constexpr std::uint64_t kBucketBytes = 16;
inline constexpr std::uint64_t kMaxBuckets = std::uint64_t{1} << 20;

// How a counter advances through one segment under its filter (counting::advance's reading):
// `times` increments of `per_time` events, the t-th (from 0) in cycle t, or all in cycle 0 when
// `first_cycle` (edge detect: at most one, at the segment's start).
struct Increments {
  counting::u128 per_time = 0;
  std::uint64_t times = 0;
  bool first_cycle = false;
};
// Updates the edge-detector memory as counting::advance does.
Increments increments(std::uint64_t n, counting::u128 k, const counting::Filter& f, bool& asserted);

// What a counter did through one segment.
struct CounterStep {
  std::uint64_t value = 0;                 // afterwards, below 2^width
  counting::u128 wraps = 0;                // overflows (each raises a PMI when its INT is set)
  std::optional<std::uint64_t> first;      // the cycle of the first overflow, if any
};

class PmiUnit {
 public:
  // LVTPC and the handler's registers: true when `msr` is one of them (read / write done).
  // A write of a bad value throws register_fault.
  bool read(std::uint32_t msr, std::uint64_t& value) const;
  bool write(std::uint32_t msr, std::uint64_t value);

  [[nodiscard]] bool masked() const { return (lvtpc_ & kLvtMask) != 0; }
  [[nodiscard]] bool handler() const { return handler_; }
  // The handler runs at the PMIs: installed and LVTPC unmasked.
  [[nodiscard]] bool sampling() const { return handler_ && !masked(); }

  // Counter c (status numbering) of `width` bits holding `value` through `segment`, gaining
  // `inc` (increments()). With `interrupt` (INT / PMI set) and sampling(), each overflow is a
  // sample recorded for the segment and the counter is reloaded (RELOAD[c] plus the overshoot);
  // otherwise it only wraps. The PMIs raised are the result's wraps when `interrupt`; the
  // caller tallies them and calls delivered() once it has run every counter.
  CounterStep advance(unsigned c, std::uint64_t value, unsigned width, const Segment& segment, const Increments& inc,
                      bool interrupt);
  // The cycle of the first overflow of a counter (status numbering c) in a segment of `inc`,
  // without changing anything; nullopt when it does not overflow there.
  [[nodiscard]] static std::optional<std::uint64_t> first_overflow(std::uint64_t value, unsigned width,
                                                                   const Increments& inc);
  // After a segment in which `pmis` PMIs were raised: without the handler running, the first one
  // delivered masks LVTPC (the rest are lost), unless the model's APIC does not mask on delivery.
  void raised(counting::u128 pmis);
  // After a segment of `cycles` cycles in which `pmis` PMIs were raised (every counter has run):
  // raised(pmis), and simulated time moves on.
  void ran(counting::u128 pmis, std::uint64_t cycles) {
    raised(pmis);
    now_ += cycles;
  }
  // Whether delivering a PMI sets the LVTPC mask bit (true after reset; AMD PerfMonV2: false).
  void set_mask_on_delivery(bool masks) { mask_on_delivery_ = masks; }
  // The simulated CPU's clock in Hz (CLOCK), 0 when it has none.
  void set_clock(std::uint64_t hz) { clock_hz_ = hz; }

 private:
  void record(const Segment& segment, std::uint64_t cycle, counting::u128 samples = 1);
  // advance() for a counter in frequency mode (FREQ[c] != 0), with the handler running.
  CounterStep advance_at_frequency(unsigned c, std::uint64_t value, unsigned width, const Segment& segment,
                                   const Increments& inc);
  // The period after an overflow `cycles` cycles after the previous one, P = PERIOD[c] events
  // apart (the rule above).
  [[nodiscard]] std::uint64_t adjusted_period(unsigned c, std::uint64_t cycles, unsigned width) const;

  std::uint64_t lvtpc_ = kLvtMask;  // value after reset: 0001_0000H
  bool handler_ = false;
  bool mask_on_delivery_ = true;
  unsigned profile_ = 0;
  std::uint64_t start_ = 0, end_ = 0;
  std::uint64_t kernel_ = 0, user_ = 0;
  std::array<std::uint64_t, kHandlerCounters> reload_{};
  std::array<std::uint64_t, kHandlerCounters> reloads_{};
  std::array<std::uint64_t, kHandlerCounters> freq_{};
  std::array<std::uint64_t, kHandlerCounters> period_{};
  std::array<std::uint64_t, kHandlerCounters> elapsed_{};
  std::array<std::uint64_t, kHandlerCounters> last_{};  // the cycle (now_) of the last overflow
  std::array<bool, kHandlerCounters> timed_{};          // last_ holds one
  std::uint64_t clock_hz_ = 0;
  std::uint64_t now_ = 0;  // simulated time: the cycles of the segments run so far
  std::vector<std::uint64_t> buckets_;
};

}  // namespace pmc::sim::x86
