#include "tsc.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <sys/prctl.h>
#include <time.h>

#include <cmath>
#include <mutex>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define PMC_HAVE_TSC 1
#else
#define PMC_HAVE_TSC 0
#endif

namespace pmc {

namespace detail {

bool tsc_available(std::string* why_not) {
#if PMC_HAVE_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & (1u << 4))) {
    if (why_not) *why_not = "this CPU has no time-stamp counter (CPUID.1:EDX[4] clear)";
    return false;
  }
  int mode = 0;
  if (prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV) {
    if (why_not) *why_not = "this process may not execute rdtsc (prctl PR_SET_TSC is PR_TSC_SIGSEGV)";
    return false;
  }
  return true;
#else
  if (why_not) *why_not = "rdtsc is an x86 instruction and this is not an x86 machine";
  return false;
#endif
}

std::uint64_t read_tsc() {
#if PMC_HAVE_TSC
  return __rdtsc();
#else
  return 0;
#endif
}

std::optional<TscFrequency> tsc_frequency_from_cpuid(const CpuidTable& cpuid) {
  auto l0 = cpuid.get(0);
  if (!l0) return std::nullopt;
  const std::uint32_t max_leaf = l0->eax;
  if (max_leaf >= 0x15) {
    if (auto l15 = cpuid.get(0x15); l15 && l15->eax && l15->ebx && l15->ecx) {
      TscFrequency f;
      f.hz = static_cast<double>(l15->ecx) * l15->ebx / l15->eax;
      f.uncertainty_hz = 0;  // as enumerated; the crystal's own tolerance is not
      f.method = fmt::format("cpuid 15H: crystal {} Hz * {}/{} (nominal)", l15->ecx, l15->ebx, l15->eax);
      return f;
    }
  }
  if (max_leaf >= 0x16) {
    if (auto l16 = cpuid.get(0x16); l16 && (l16->eax & 0xFFFF)) {
      TscFrequency f;
      f.hz = (l16->eax & 0xFFFF) * 1e6;
      f.uncertainty_hz = 0.5e6;  // whole MHz
      f.method = fmt::format("cpuid 16H: base frequency {} MHz", l16->eax & 0xFFFF);
      return f;
    }
  }
  return std::nullopt;
}

TscFrequency tsc_frequency_from_samples(const TscSample& first, const TscSample& last) {
  TscFrequency f;
  f.method = "measured against CLOCK_MONOTONIC_RAW";
  if (last.ns <= first.ns || last.tsc_before <= first.tsc_after) return f;
  // Midpoints in double: the sums of two 64-bit tick values may not fit 64 bits.
  const double mid0 = (static_cast<double>(first.tsc_before) + static_cast<double>(first.tsc_after)) / 2;
  const double mid1 = (static_cast<double>(last.tsc_before) + static_cast<double>(last.tsc_after)) / 2;
  const double ticks = mid1 - mid0;
  const double ns = static_cast<double>(last.ns - first.ns);
  const double tick_error =
      (static_cast<double>(first.tsc_after - first.tsc_before) + static_cast<double>(last.tsc_after - last.tsc_before)) / 2;
  const double ns_error = 2;  // 1 ns resolution at each end
  f.hz = ticks / ns * 1e9;
  f.uncertainty_hz = f.hz * (tick_error / ticks + ns_error / ns);
  f.method = fmt::format("measured against CLOCK_MONOTONIC_RAW over {:.0f} ms", ns / 1e6);
  return f;
}

namespace {

std::uint64_t raw_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The tightest of a few brackets: an interrupt inside one only widens that one.
TscSample sample() {
  TscSample best;
  for (int i = 0; i < 8; ++i) {
    TscSample s;
    s.tsc_before = read_tsc();
    s.ns = raw_ns();
    s.tsc_after = read_tsc();
    if (i == 0 || s.tsc_after - s.tsc_before < best.tsc_after - best.tsc_before) best = s;
  }
  return best;
}

TscFrequency measure() {
  const TscSample first = sample();
  timespec pause{0, 30 * 1000 * 1000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  return tsc_frequency_from_samples(first, sample());
}

}  // namespace

TscAccess::TscAccess() {
  std::string why;
  if (!tsc_available(&why)) throw Error(errc::not_supported, fmt::format("event tsc: {}", why));
}

std::size_t TscAccess::add() { return events_++; }

void TscAccess::start() {
  if (running_) return;
  running_ = true;
  started_ns_ = monotonic_ns();
  started_tsc_ = read_tsc();
}

void TscAccess::stop() {
  if (!running_) return;
  ticks_ += read_tsc() - started_tsc_;
  enabled_ns_ += monotonic_ns() - started_ns_;
  running_ = false;
}

void TscAccess::reset() {
  ticks_ = 0;
  enabled_ns_ = 0;
  if (running_) {
    started_ns_ = monotonic_ns();
    started_tsc_ = read_tsc();
  }
}

std::vector<std::vector<Count>> TscAccess::read() {
  Count c;
  c.value = ticks_ + (running_ ? read_tsc() - started_tsc_ : 0);
  c.time_enabled = enabled_ns_ + (running_ ? monotonic_ns() - started_ns_ : 0);
  c.time_running = c.time_enabled;
  return std::vector<std::vector<Count>>(events_, std::vector<Count>{c});
}

}  // namespace detail

TscFrequency tsc_frequency() {
  static std::once_flag once;
  static TscFrequency result;
  std::call_once(once, [] {
    std::string why;
    if (!detail::tsc_available(&why)) {
      result.method = why;
      return;
    }
    try {
      if (auto f = detail::tsc_frequency_from_cpuid(read_native_cpu().raw)) {
        result = *f;
        return;
      }
    } catch (const Error&) {  // no usable CPUID: measure
    }
    result = detail::measure();
  });
  return result;
}

}  // namespace pmc
