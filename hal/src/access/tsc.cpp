#include "tsc.hpp"

#include "clock.hpp"
#include "cpu_native.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <algorithm>
#include <atomic>
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
  std::optional<CpuidRegs> leaf1;
  try {
    leaf1 = native_cpu().raw.get(1);
  } catch (const Error&) {  // no CPUID instruction at all
  }
  if (!leaf1 || !(leaf1->edx & (1u << 4))) {
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

std::optional<TscFrequency> tsc_frequency_from_hypervisor(const CpuidTable& cpuid) {
  constexpr std::uint32_t kBase = 0x40000000, kTiming = 0x40000010;
  const auto base = cpuid.get(kBase);
  if (!base || base->eax < kTiming || base->eax > kBase + 0xFF) return std::nullopt;
  const auto timing = cpuid.get(kTiming);
  if (!timing || timing->eax == 0) return std::nullopt;
  TscFrequency f;
  f.hz = timing->eax * 1e3;
  f.uncertainty_hz = 500;  // whole kHz
  f.method = fmt::format("hypervisor CPUID 40000010H: {} kHz", timing->eax);
  return f;
}

std::optional<TscFrequency> tsc_frequency_from_perf_page(bool cap_user_time, std::uint32_t time_mult,
                                                         std::uint16_t time_shift) {
  if (!cap_user_time || time_mult == 0 || time_shift >= 64) return std::nullopt;
  TscFrequency f;
  // ns per tick = time_mult / 2^time_shift, the kernel's calibration rounded to an integer
  // time_mult: the rate lies within one unit of time_mult of it.
  const double scale = std::ldexp(1.0, time_shift);
  f.hz = 1e9 * scale / time_mult;
  f.uncertainty_hz = f.hz / time_mult;
  f.method = fmt::format("the kernel's calibration (perf mmap page: time_mult {}, time_shift {})", time_mult,
                         time_shift);
  return f;
}

std::optional<TscFrequency> tsc_frequency_from_cpuinfo(std::string_view cpuinfo) {
  // The first processor's block: up to the first empty line.
  if (const auto end = cpuinfo.find("\n\n"); end != std::string_view::npos) cpuinfo = cpuinfo.substr(0, end);
  std::string_view mhz, flags;
  while (!cpuinfo.empty()) {
    const auto nl = cpuinfo.find('\n');
    const std::string_view line = cpuinfo.substr(0, nl);
    cpuinfo = nl == std::string_view::npos ? std::string_view{} : cpuinfo.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (key == "cpu MHz") mhz = value;
    if (key == "flags") flags = value;
  }
  auto has_flag = [&](std::string_view f) {
    for (std::size_t at = flags.find(f); at != std::string_view::npos; at = flags.find(f, at + 1)) {
      const bool starts = at == 0 || flags[at - 1] == ' ';
      const bool ends = at + f.size() == flags.size() || flags[at + f.size()] == ' ';
      if (starts && ends) return true;
    }
    return false;
  };
  if (mhz.empty() || !has_flag("hypervisor") || !has_flag("tsc_known_freq") || has_flag("aperfmperf"))
    return std::nullopt;
  // "2596.132": whole MHz, '.', three digits of kHz.
  const auto dot = mhz.find('.');
  const std::string_view whole = mhz.substr(0, dot), frac = dot == std::string_view::npos ? "" : mhz.substr(dot + 1);
  if (whole.empty() || frac.size() != 3) return std::nullopt;
  std::uint64_t khz = 0;
  for (char c : std::string(whole) + std::string(frac)) {
    if (c < '0' || c > '9') return std::nullopt;
    khz = khz * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (khz == 0) return std::nullopt;
  TscFrequency f;
  f.hz = static_cast<double>(khz) * 1e3;
  f.uncertainty_hz = 500;
  f.method = fmt::format("the kernel's calibration (/proc/cpuinfo: cpu MHz {} in a virtual machine whose "
                         "hypervisor states the TSC rate)",
                         mhz);
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

// The process's first sample (note_tsc_in_use, or the measurement's own start).
struct FirstSample {
  std::mutex mutex;
  std::atomic<bool> taken{false};
  TscSample sample;
};
FirstSample& first_sample() {
  static FirstSample f;
  return f;
}

TscSample take_first_sample() {
  FirstSample& f = first_sample();
  std::lock_guard lock(f.mutex);
  if (!f.taken.load(std::memory_order_relaxed)) {
    f.sample = sample();
    f.taken.store(true, std::memory_order_release);
  }
  return f.sample;
}

// The last resort: against CLOCK_MONOTONIC_RAW since the first sample, sleeping only while the
// brackets' widths still exceed kTscMeasurePrecision of the interval (well under a millisecond
// on a quiet machine), and at most until kTscMeasureMaxNs after the first sample.
TscFrequency measure() {
  const TscSample first = take_first_sample();
  for (;;) {
    const TscSample last = sample();
    TscFrequency f = tsc_frequency_from_samples(first, last);
    const std::uint64_t elapsed = last.ns > first.ns ? last.ns - first.ns : 0;
    const double relative = f.hz > 0 ? f.uncertainty_hz / f.hz : 1.0;
    if ((f.hz > 0 && relative <= kTscMeasurePrecision) || elapsed >= kTscMeasureMaxNs) return f;
    // The uncertainty falls as 1/interval: wait for the interval that reaches the precision.
    double want = static_cast<double>(std::max<std::uint64_t>(elapsed, 1)) * relative / kTscMeasurePrecision;
    want = std::min(want, static_cast<double>(kTscMeasureMaxNs));
    const auto wait = static_cast<std::uint64_t>(want) > elapsed ? static_cast<std::uint64_t>(want) - elapsed : 1000;
    timespec pause{static_cast<time_t>(wait / 1000000000ull), static_cast<long>(wait % 1000000000ull)};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
}

// What the kernel's perf mmap page says, from a software event on this thread (no counting).
std::optional<TscFrequency> from_cpuinfo() {
  std::FILE* f = std::fopen("/proc/cpuinfo", "re");
  if (!f) return std::nullopt;
  // The first processor's block is well within the first 8 KiB.
  std::string text(8192, '\0');
  const std::size_t n = std::fread(text.data(), 1, text.size(), f);
  std::fclose(f);
  text.resize(n);
  return tsc_frequency_from_cpuinfo(text);
}

std::optional<TscFrequency> from_kernel() {
  // Any event's page carries the conversion. A disabled task-clock event, not the dummy event:
  // the dummy is one of the software events whose first opening (and last closing) in the whole
  // system makes the kernel patch its code with a static key, IPIs to every CPU (about 0.1 ms
  // each way on the project's guests); the clock events have no static key.
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const auto page_size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, page_size, PROT_READ, MAP_SHARED, static_cast<int>(fd), 0);
  std::optional<TscFrequency> out;
  if (map != MAP_FAILED) {
    const auto& page = *static_cast<const volatile perf_event_mmap_page*>(map);
    bool cap = false;
    std::uint32_t mult = 0;
    std::uint16_t shift = 0;
    std::uint32_t seq = 0;
    do {
      seq = page.lock;
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      cap = page.cap_user_time;
      mult = page.time_mult;
      shift = page.time_shift;
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } while (page.lock != seq);
    out = tsc_frequency_from_perf_page(cap, mult, shift);
    munmap(map, page_size);
  }
  ::close(static_cast<int>(fd));
  return out;
}

}  // namespace

void note_tsc_in_use() {
  if (!first_sample().taken.load(std::memory_order_acquire)) (void)take_first_sample();
}

TscAccess::TscAccess() {
  std::string why;
  if (!tsc_available(&why)) throw Error(errc::not_supported, fmt::format("event tsc: {}", why));
}

std::size_t TscAccess::add() { return events_++; }

void TscAccess::start() {
  if (running_) return;
  note_tsc_in_use();
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

void TscAccess::read_counts(std::span<Count> out) {
  Count c;
  c.value = ticks_ + (running_ ? read_tsc() - started_tsc_ : 0);
  c.time_enabled = enabled_ns_ + (running_ ? monotonic_ns() - started_ns_ : 0);
  c.time_running = c.time_enabled;
  const std::size_t n = std::min(out.size(), events_);
  for (std::size_t i = 0; i < n; ++i) out[i] = c;
}

std::vector<std::vector<Count>> TscAccess::read() {
  Count c;
  read_counts(std::span<Count>(&c, events_ ? 1 : 0));
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
    // The native CPU's leaves 15H and 16H, and the hypervisor's 40000000H and 40000010H, which
    // the native reading leaves to those who need them.
    CpuInfo native = detail::native_cpu();
    detail::read_native_leaf(native, 0x40000010, 0);
    const CpuidTable& cpuid = native.raw;
    if (auto f = detail::tsc_frequency_from_cpuid(cpuid)) {
      result = *f;
      return;
    }
    if (auto f = detail::tsc_frequency_from_hypervisor(cpuid)) {
      result = *f;
      return;
    }
    // /proc/cpuinfo states the rate only in a virtual machine (its "hypervisor" flag is
    // CPUID.1:ECX[31]), and there it comes first: it is the kernel's calibration to the kHz, and
    // the perf page needs a perf event on this thread, whose opening can cost 6 to 20 ms when no
    // task has had one for a second (the kernel then switches its scheduler hooks on and waits
    // for an RCU grace period: docs/performance.md).
    const auto leaf1 = cpuid.get(1);
    if (leaf1 && (leaf1->ecx & (1u << 31))) {
      if (auto f = detail::from_cpuinfo()) {
        result = *f;
        return;
      }
    }
    if (auto f = detail::from_kernel()) {
      result = *f;
      return;
    }
    result = detail::measure();
  });
  return result;
}

}  // namespace pmc
