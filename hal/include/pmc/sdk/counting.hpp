// Model SDK: the event-select counting rules the x86 device models share, in closed form. The
// P6 (docs/hardware/p6.md section 3), the architectural PMU (docs/hardware/archperf.md section 3)
// and AMD's (docs/hardware/amd.md section 3) filter events the same way: CMASK threshold, INV, edge detect, then a wrap
// modulo 2^width. A segment is N identical cycles, so the filter's condition is constant over it
// and the whole segment costs a few 128-bit operations, whatever N.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/counting.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <cstdint>
#include <limits>

namespace pmc::counting {

__extension__ typedef unsigned __int128 u128;  // exact products of 64-bit cycles and counts

// The filter fields of an event select.
struct Filter {
  unsigned cmask = 0;  // 0: add the events of each cycle; c > 0: add 1 per cycle with >= c events
  bool inv = false;    // with cmask > 0: add 1 per cycle with < c events; ignored when cmask = 0
  bool edge = false;   // add 1 per deasserted -> asserted transition of the condition
};

// Bits width-1..0 set; width in 1..64.
constexpr std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? std::numeric_limits<std::uint64_t>::max()
                     : (std::uint64_t{1} << width) - 1;
}

struct Advance {
  std::uint64_t value = 0;  // the counter afterwards, below 2^width
  u128 wraps = 0;           // how many times it passed 2^width (each one is an overflow)
};

// A counter of `width` bits (1..64) holding `value`, through n cycles of k events each under the
// filter f. `asserted` is the counter's edge-detector memory: whether the condition held in the
// last cycle the counter counted; it is updated when n > 0. The caller decides whether the
// counter counts at all (enable bits, privilege filter) and calls this only when it does.
//
// The per-cycle condition: with CMASK = 0 it is "at least one event this cycle" (INV ignored;
// docs/hardware/p6.md section 3, the "at least one" is inferred [I]); otherwise k >= CMASK, or k < CMASK with INV.
// Edge detect adds at most 1 per segment: the condition is constant over the segment, so its
// only possible rising edge is the first cycle, when the previous counted cycle did not assert.
inline Advance advance(std::uint64_t value, unsigned width, std::uint64_t n, u128 k,
                       const Filter& f, bool& asserted) {
  if (n == 0) return {value, 0};
  const bool holds = f.cmask == 0 ? k > 0 : (f.inv ? k < f.cmask : k >= f.cmask);
  u128 per_time = k;  // this segment adds n_times * per_time events
  std::uint64_t n_times = n;
  if (f.edge) {
    per_time = 1;
    n_times = (holds && !asserted) ? 1 : 0;
  } else if (f.cmask != 0) {
    per_time = 1;
    n_times = holds ? n : 0;
  }
  asserted = holds;
  // value + n_times * per_time modulo 2^width, and the number of wraps, without loops: split
  // per_time at bit `width` so every product fits in 128 bits (per_time < 2^67 in every model).
  const std::uint64_t mask = width_mask(width);
  const u128 lo = static_cast<u128>(value) + static_cast<u128>(n_times) * (per_time & mask);
  const u128 wraps = static_cast<u128>(n_times) * (per_time >> width) + (lo >> width);
  return {static_cast<std::uint64_t>(lo & mask), wraps};
}

// The event-select word. The P6's PerfEvtSel0/1 (docs/hardware/p6.md section 3) and
// IA32_PERFEVTSELx (docs/hardware/archperf.md section 3) hold the fields these rules read at the same bits. The rest stays with
// each model: EN (the P6's PerfEvtSel0.EN enables both counters, reserved in PerfEvtSel1; an
// architectural counter has its own, gated by GLOBAL_CTRL), AnyThread, the reserved bits, which
// signal EventSelect/UMask pick, and what an overflow records besides the PMI (archperf v2+:
// GLOBAL_STATUS).
namespace evtsel {

inline constexpr std::uint64_t kUsr = std::uint64_t{1} << 16;   // count at CPL 1-3
inline constexpr std::uint64_t kOs = std::uint64_t{1} << 17;    // count at CPL 0
inline constexpr std::uint64_t kEdge = std::uint64_t{1} << 18;  // E: edge detect
inline constexpr std::uint64_t kInt = std::uint64_t{1} << 20;   // a PMI on each overflow
inline constexpr std::uint64_t kInv = std::uint64_t{1} << 23;   // invert the CMASK comparison
inline constexpr unsigned kCmaskShift = 24;                     // CMASK: bits 31:24

// Whether `sel` counts a cycle run at this privilege: USR in user mode (the workloads' user mode
// is CPL 3), OS in kernel mode (CPL 0).
constexpr bool counts_at(std::uint64_t sel, bool user_mode) {
  return (sel & (user_mode ? kUsr : kOs)) != 0;
}

// The CMASK / INV / E filter `sel` programs.
constexpr Filter filter(std::uint64_t sel) {
  return Filter{static_cast<unsigned>(sel >> kCmaskShift) & 0xFF, (sel & kInv) != 0,
                (sel & kEdge) != 0};
}

// Whether each wrap of the counter `sel` programs raises a PMI.
constexpr bool interrupts(std::uint64_t sel) { return (sel & kInt) != 0; }

}  // namespace evtsel

// a + b, saturating at 2^64 - 1 (interrupt tallies).
constexpr std::uint64_t saturating_add(std::uint64_t a, u128 b) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const u128 total = static_cast<u128>(a) + b;
  return total > kMax ? kMax : static_cast<std::uint64_t>(total);
}

}  // namespace pmc::counting

#endif  // C++20
