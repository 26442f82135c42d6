// The time-stamp counter: the `tsc` HAL event (rdtsc between start and stop) and its rate.
// The seeds' drivers returned the TSC with "an approximate rate"; pmc::tsc_frequency() says how
// approximate. Sources, first that answers: the CPUID leaves 15H/16H, the hypervisor's timing
// leaf 40000010H, the kernel's calibration (the perf mmap page's time conversion; in a virtual
// machine /proc/cpuinfo's first, where it states the rate), and as a
// last resort a measurement against CLOCK_MONOTONIC_RAW with the width of its brackets as the
// uncertainty. Nothing sleeps to find it unless all of these fail, and then only as long as
// the precision needs beyond the time since the first `tsc` event started.
#pragma once

#include "access.hpp"

#include <pmc/cpu.hpp>
#include <pmc/export.hpp>
#include <pmc/hal_events.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
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

// The rate a hypervisor states in its timing leaf: CPUID 40000010H EAX, the TSC in kHz (VMware's
// convention, which KVM and others follow when configured to), when the hypervisor range of
// the table (40000000H EAX: its largest leaf) reaches it. nullopt otherwise. Pure.
std::optional<TscFrequency> tsc_frequency_from_hypervisor(const CpuidTable& cpuid);

// The kernel's own TSC calibration, as the mmap page of a perf event states it for user-space
// time conversion (include/uapi/linux/perf_event.h: ns = cycles * time_mult >> time_shift, valid
// when cap_user_time is set): hz = 10^9 * 2^time_shift / time_mult, to within one unit of
// time_mult. nullopt when the page offers no conversion. Pure.
std::optional<TscFrequency> tsc_frequency_from_perf_page(bool cap_user_time, std::uint32_t time_mult,
                                                         std::uint16_t time_shift);

// The kernel's calibration as /proc/cpuinfo shows it: "cpu MHz" is the kernel's cpu_khz, which
// is the TSC's rate in a virtual machine whose hypervisor states it (flags "hypervisor" and
// "tsc_known_freq": KVM's kvmclock, VMware and Hyper-V set cpu_khz and tsc_khz from the same
// value) and that has no APERF/MPERF (flag "aperfmperf": the field would be the current clock
// instead). The first processor's block decides; to within half a kHz. nullopt otherwise. Pure.
std::optional<TscFrequency> tsc_frequency_from_cpuinfo(std::string_view cpuinfo);

// How precisely a measurement is wanted: the measurement stops once the brackets' uncertainty
// is below this fraction of the rate (or after kTscMeasureMaxNs).
inline constexpr double kTscMeasurePrecision = 1e-4;
inline constexpr std::uint64_t kTscMeasureMaxNs = 30'000'000;

// The first TSC sample of the process, taken the first time a `tsc` event starts (nothing
// else happens then), so that a measurement of the rate, when one is needed at all, spans the
// time the program already ran instead of sleeping.
void note_tsc_in_use();

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
  void read_counts(std::span<Count> out) override;

 private:
  std::size_t events_ = 0;
  bool running_ = false;
  std::uint64_t ticks_ = 0;        // accumulated while stopped
  std::uint64_t started_tsc_ = 0;
  std::uint64_t enabled_ns_ = 0;
  std::uint64_t started_ns_ = 0;
};

}  // namespace pmc::detail
