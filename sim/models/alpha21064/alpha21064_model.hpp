// The emulated Alpha 21064 (EV4) and its OSF/1 pfm(7) pseudo-device. The classes are public
// (alpha21064.hpp: tests, the C shim <pmc/pfm.h> and a future histogram API use them); this
// header adds what only the model's sources share:
//   alpha21064_model.cpp     the chip's registers (ICCSR, the RegisterFile view, wrperfmon,
//                            the handler's data as registers) and the process table;
//   alpha21064_counting.cpp  how a segment of activity feeds each MUX0 / MUX1 select, where the
//                            counter interrupts fall, and what the handler records for them
//                            (interrupt counts, IPL histogram, PC profile);
//   pfm_driver.cpp           the pfm(7) pseudo-device over the CPUs of one system (PfmDriver).
// The policies the sources leave open ([U1]..[U11] the chip, [U12]..[U16] the driver) are
// listed at the top of alpha21064_model.cpp and pfm_driver.cpp.
#pragma once

#include "alpha21064.hpp"
#include <pmc/sdk/counting.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <string>

namespace pmc::sim::alpha21064 {

// What one select counts per cycle of a segment: `units` per cycle, `divisor` units per event.
// The divisor is 2 for ISSUES and NONISSUES, "total ... divided by 2" (pfm(7): +1 per
// dual-issue cycle, +1/2 per single-issue cycle), 1 for every other select. Units per cycle
// saturate at 2^64 - 1.
struct Rate {
  std::uint64_t units = 0;
  unsigned divisor = 1;
};

[[nodiscard]] Rate mux0_rate(unsigned mux0, const Segment& s);
[[nodiscard]] Rate mux1_rate(unsigned mux1, const Segment& s);

// ---------------------------------------------------------------------------------------------
// Shared by the model's sources.

using counting::u128;  // exact products of 64-bit cycles and rates

// a + b, saturating at 2^64 - 1 (every count the driver keeps).
inline std::uint64_t sat_add(std::uint64_t a, u128 b) { return counting::saturating_add(a, b); }

// The ICCSR fields of an image in write format (sheet 2).
inline unsigned mux0_of(std::uint64_t iccsr) { return static_cast<unsigned>((iccsr & kMux0Mask) >> kMux0Shift); }
inline unsigned mux1_of(std::uint64_t iccsr) { return static_cast<unsigned>((iccsr & kMux1Mask) >> kMux1Shift); }
inline bool pc_of(unsigned counter, std::uint64_t iccsr) { return (iccsr & (counter == 0 ? kPc0 : kPc1)) != 0; }
inline bool disabled(unsigned counter, std::uint64_t iccsr) {
  return (iccsr & (counter == 0 ? kDisable0 : kDisable1)) != 0;
}

// Why an ICCSR image is refused (an undefined MUX0, both counters disabled), or empty: the
// register write's fault and PCNTSETMUX's EINVAL.
[[nodiscard]] std::string refusal(std::uint64_t iccsr);

}  // namespace pmc::sim::alpha21064
