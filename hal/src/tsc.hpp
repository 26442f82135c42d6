// The time-stamp counter: the `tsc` HAL event (rdtsc between start and stop) and its rate.
// The seeds' drivers returned the TSC with "an approximate rate"; pmc::tsc_frequency() says how
// approximate: the CPUID leaves when the CPU enumerates them, otherwise a measurement against
// CLOCK_MONOTONIC_RAW with the width of its brackets as the uncertainty.
#pragma once

#include "access.hpp"

#include <pmc/cpu.hpp>
#include <pmc/export.hpp>
#include <pmc/hal.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace pmc::detail {

// Whether this thread may execute rdtsc: an x86 CPU with CPUID.1:EDX[4] and the TSC not
// restricted to the kernel (prctl PR_GET_TSC). When not, why_not says why.
bool tsc_available(std::string* why_not = nullptr);
// RDTSC. Only after tsc_available().
std::uint64_t read_tsc();

// The rate CPUID leaf 15H (TSC/crystal ratio, crystal clock) or 16H (base MHz) states, or
// nullopt when neither enumerates it. Pure: reads the table only.
std::optional<TscFrequency> tsc_frequency_from_cpuid(const CpuidTable& cpuid);

// One reading of CLOCK_MONOTONIC_RAW bracketed by two TSC reads.
struct TscSample {
  std::uint64_t tsc_before = 0;
  std::uint64_t ns = 0;
  std::uint64_t tsc_after = 0;
};
// The rate between two bracketed samples: ticks between the bracket midpoints over the
// nanoseconds between the clock readings. The uncertainty adds the half-widths of both brackets
// (where in its bracket the clock was read is unknown) and 1 ns of clock resolution at each end.
// Pure.
TscFrequency tsc_frequency_from_samples(const TscSample& first, const TscSample& last);

// The `tsc` event: every tsc entry of a session reads the same ticks.
class TscAccess final : public Access {
 public:
  TscAccess();  // throws not_supported when rdtsc is unavailable, saying why
  [[nodiscard]] std::string_view name() const override { return "tsc"; }
  std::size_t add();
  void start() override;
  void stop() override;
  void reset() override;
  [[nodiscard]] std::vector<std::vector<Count>> read() override;

 private:
  std::size_t events_ = 0;
  bool running_ = false;
  std::uint64_t ticks_ = 0;        // accumulated while stopped
  std::uint64_t started_tsc_ = 0;
  std::uint64_t enabled_ns_ = 0;
  std::uint64_t started_ns_ = 0;
};

}  // namespace pmc::detail
