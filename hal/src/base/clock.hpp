// The library's one monotonic clock: the wall time of sessions (time_enabled of the access
// methods without a clock of their own: hal/src/access/access.cpp, tsc.cpp), of regions
// (hal/src/regions/region.cpp) and of counted commands (hal/src/process/process.cpp).
// CLOCK_MONOTONIC, as std::chrono::steady_clock is on Linux, read through the vDSO: no system
// call, no allocation, so the hot paths may call it.
#pragma once

#include <time.h>

#include <cstdint>

namespace pmc::detail {

// Nanoseconds of CLOCK_MONOTONIC (since an unspecified start, the same for the whole machine).
inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace pmc::detail
