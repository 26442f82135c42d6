// The emulated Alpha 21064 (EV4) and its OSF/1 pfm(7) pseudo-device. The classes are public
// (<pmc/sim/alpha21064.hpp>: tests, the C shim <pmc/pfm.h> and a future histogram API use
// them); this header adds what only the model needs: how a segment of activity feeds each
// MUX0 / MUX1 select.
#pragma once

#include "alpha21064.hpp"
#include <pmc/workload.hpp>

#include <cstdint>

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

}  // namespace pmc::sim::alpha21064
