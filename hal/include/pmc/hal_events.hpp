// The HAL events: what pmchal counts itself with any backend or none (tsc, the OS software events).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/hal_events.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string>
#include <vector>

namespace pmc {

// The rate of this machine's time-stamp counter (the `tsc` event). From CPUID 15H (crystal
// clock * TSC/crystal ratio), else CPUID 16H (base frequency, MHz), else the hypervisor's
// timing leaf (CPUID 40000010H), else the kernel's calibration (the perf mmap page's time
// conversion), else measured against CLOCK_MONOTONIC_RAW since the first `tsc` event started,
// to 100 ppm (sleeping only for what that interval lacks). Computed once per process.
struct TscFrequency {
  double hz = 0;              // 0 when this machine has no usable TSC
  double uncertainty_hz = 0;  // half-width of the interval the true rate lies in
  std::string method;         // "cpuid 15H...", "cpuid 16H...", "hypervisor...", "the kernel's...", "measured..."
};
PMC_API TscFrequency tsc_frequency();

// The events pmchal counts itself, with any backend or none (docs/user-guide.md "HAL
// events"): `tsc` and the OS software events.
struct HalEventDescription {
  std::string name;         // "context-switches"
  std::string alias;        // perf's other spelling ("cs"), or ""
  std::string unit;         // the Reading::unit of its counts: "ns", "ticks" or ""
  std::string description;
};
PMC_API std::vector<HalEventDescription> hal_events();

}  // namespace pmc

#endif  // C++20
