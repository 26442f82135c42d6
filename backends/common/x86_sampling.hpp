// Sampling at counter overflow, the part of the x86 drivers (p6, archperf, amd) that is the same
// in each: `period=N` on an event, the counter preset to -N with its interrupt bit set, the PMI
// handler that reloads it and records the interrupted PC, and the ProfilingDriver that gives a
// session the samples; `freq=N`, the handler adjusting the period so that about N interrupts
// come a second of the simulated CPU's clock (perf's freq mode). Header-only: each backend
// plugin compiles its own copy.
//
// The interrupt (docs/hardware/p6.md section 4a, archperf.md section 4a, amd.md section 4a): a
// counter with INT (PerfEvtSel bit 20; a fixed counter's PMI bit) raises a PMI at each wrap,
// through the local APIC's LVT performance-counter entry LVTPC (FEE00340H, mask bit 16). A
// driver presets the counter to -period, and its handler reloads it at each interrupt.
//
// Where the handler runs: the PMI reaches the kernel, so only a driver in the kernel can take it.
// Access "sim" has one: the simulated kernel's PMI handler in the device model, programmed
// through the registers docs/profiling.md lists ("The simulated PMI handler"), which the models
// declare in sim/models/common/x86_pmi.hpp; the constants below are the same addresses, written
// from that document. Access "msr" cannot receive the interrupt in user space, and the session
// refuses a `period=` there before anything reaches the driver.
#pragma once

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/profile.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/sdk/profiling.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <string_view>

namespace pmc::x86_sampling {

inline constexpr std::uint32_t kLvtpc = 0xFEE00340;       // local APIC LVT performance counter
inline constexpr std::uint64_t kLvtNmi = 0x4u << 8;       // delivery mode 100b (NMI), unmasked
inline constexpr std::uint32_t kHandler = 0x50000000;
inline constexpr std::uint32_t kProfile = 0x50000001;
inline constexpr std::uint32_t kProfileStart = 0x50000002;
inline constexpr std::uint32_t kProfileEnd = 0x50000003;
inline constexpr std::uint32_t kKernelSamples = 0x50000004;
inline constexpr std::uint32_t kUserSamples = 0x50000005;
inline constexpr std::uint32_t kClock = 0x50000006;        // the simulated CPU's clock in Hz (0: unknown)
inline constexpr std::uint32_t kReload0 = 0x50000100;
inline constexpr std::uint32_t kReloads0 = 0x50000200;
inline constexpr std::uint32_t kFreq0 = 0x50000300;        // freq=N: the handler adjusts the period
inline constexpr std::uint32_t kPeriod0 = 0x50000400;      // freq=N: the period in force
inline constexpr std::uint32_t kElapsed0 = 0x50000500;     // freq=N: events of the periods completed
inline constexpr std::uint32_t kBucket0 = 0x50100000;
inline constexpr std::uint64_t kBucketBytes = 16;
inline constexpr std::uint64_t kMaxRangeBytes = kBucketBytes << 20;  // 2^20 buckets

// A counter's number in the handler (and in the overflow-status registers): general-purpose
// counter i is i, fixed counter i is 32 + i.
inline unsigned handler_index(const CounterInfo& c) { return c.kind == CounterKind::fixed ? 32 + c.index : c.index; }
inline constexpr unsigned kHandlerCounters = 64;  // RELOAD / RELOADS registers; pseudo counters beyond have none

// Whether the registers are the simulated machine's, where the handler lives.
inline bool simulated(const RegisterFile& regs) { return dynamic_cast<const Device*>(&regs) != nullptr; }

// The period an event string asks for: its `period=N` (0 when it has none). `max` is the largest
// period the counter can be preset for (`why` says why); period=0, a bare `period` and anything
// above max are refused naming the event.
inline std::uint64_t period_of(const EventSpec& spec, std::uint64_t max, std::string_view why) {
  const EventModifier* m = spec.modifier("period");
  if (!m) return 0;
  if (!m->value || *m->value == 0)
    throw Error(errc::attribute_value,
                event_error(spec, m->column,
                            fmt::format("period{} is not a sampling period: give the number of events between two "
                                        "samples, 1 to {} (period=N)",
                                        m->value ? "=0" : "", max)));
  if (*m->value > max)
    throw Error(errc::attribute_value,
                event_error(spec, m->column, fmt::format("period={} is above {}, the largest period {}", *m->value, max,
                                                         why)));
  return *m->value;
}

// perf record's default sampling frequency (4,000 a second: `perf record -e cpu-clock -- true`
// then `perf evlist -v` shows sample_freq 4000, freq 1), which an event with :p/:pp/:ppp and
// neither period= nor freq= samples at, as perf record's does.
inline constexpr std::uint64_t kDefaultFrequency = 4000;

// The frequency an event string asks for: its `freq=N` (0 when it has none). freq=0, a bare
// `freq`, and freq= beside period= are refused naming the event.
inline std::uint64_t frequency_of(const EventSpec& spec) {
  const EventModifier* m = spec.modifier("freq");
  if (!m) return 0;
  if (!m->value || *m->value == 0)
    throw Error(errc::attribute_value,
                event_error(spec, m->column,
                            fmt::format("freq{} is not a sampling frequency: give the samples a second to take, 1 or "
                                        "more (freq=N)",
                                        m->value ? "=0" : "")));
  if (spec.modifier("period"))
    throw Error(errc::feature_combination,
                event_error(spec, m->column,
                            "freq= and period= together: an event samples every N events (period=N) or about N times "
                            "a second (freq=N), not both"));
  return *m->value;
}

// perf's precision modifiers: :p, :pp, :ppp (precise_ip 1 to 3).
inline bool precision_modifier(const EventModifier& m) { return m.name == "p" || m.name == "pp" || m.name == "ppp"; }

// The event string without its period=, freq= and :p/:pp/:ppp, for the catalog's encoder (an
// event's own modifier list need not name them: every event of a backend that samples takes them).
// `spec` itself when it has none of them (no copy: the common case, encoded at every add), else
// `scratch`, filled with the copy without them.
inline bool sampling_modifier(const EventModifier& m) {
  return m.name == "period" || m.name == "freq" || precision_modifier(m);
}
inline const EventSpec& without_period(const EventSpec& spec, EventSpec& scratch) {
  if (std::none_of(spec.modifiers.begin(), spec.modifiers.end(), sampling_modifier)) return spec;
  scratch = spec;
  std::erase_if(scratch.modifiers, sampling_modifier);
  return scratch;
}

// Sets a sampling encoding's period or frequency, precision (perf's precise_ip, from
// :p/:pp/:ppp: access "perf" passes it to the kernel; the simulated handler samples the
// overflow's own cycle, with no skid, whatever it is) and canonical form. A precision without a
// period or a frequency samples at perf record's default frequency (kDefaultFrequency), as perf
// record does.
inline void set_sampling(Encoding& e, const EventSpec& spec, std::uint64_t period, std::uint64_t frequency = 0) {
  for (const EventModifier& m : spec.modifiers) {
    if (!precision_modifier(m)) continue;
    if (m.value)
      throw Error(errc::attribute_value,
                  event_error(spec, m.column, fmt::format(":{} takes no value (p, pp or ppp: the precision)", m.name)));
    e.precise = std::max<unsigned>(e.precise, static_cast<unsigned>(m.name.size()));
  }
  if (period == 0 && frequency == 0 && e.precise) frequency = kDefaultFrequency;
  if (period == 0 && frequency == 0) return;
  e.interrupt = true;
  e.period = period;
  e.frequency = frequency;
  e.canonical += period ? fmt::format(":period={}", period) : fmt::format(":freq={}", frequency);
  if (e.precise) e.canonical += ":" + std::string(e.precise, 'p');
}

// Backend::program's part (access "sim" only): each assigned counter's reload value, 2^width -
// period for an event that samples and 0 for the others, and the handler installed when one
// samples. An event given freq=N starts at period 1, as the kernel's freq mode does, and the
// handler adjusts it (FREQ, PERIOD): the simulated CPU needs a clock for that (CLOCK), and
// without one the event is refused with the reason. On another RegisterFile nothing is written
// (the session refused the periods).
inline void program_reloads(RegisterFile& regs, std::span<const Assignment> set) {
  if (!simulated(regs)) return;
  bool any = false;
  for (const Assignment& a : set) {
    if (a.encoding->frequency && regs.read(kClock) == 0)
      throw Error(errc::not_supported,
                  fmt::format("event '{}': freq= samples about N times a second of the simulated CPU's clock, and "
                              "this CPU gives none (no CPUID 15H or 16H, no frequency in its brand string): sample "
                              "every N events with period=N instead, or give the model its clock (the device "
                              "setting clock_hz, docs/profiling.md)",
                              a.encoding->event));
  }
  for (const Assignment& a : set) {
    const unsigned c = handler_index(*a.counter);
    if (c >= kHandlerCounters) continue;
    const std::uint64_t f = a.encoding->frequency;
    const std::uint64_t p = f ? 1 : a.encoding->period;
    regs.write(kFreq0 + c, f);
    if (f) regs.write(kPeriod0 + c, p);
    regs.write(kReload0 + c, p ? (a.counter->width_mask() - p + 1) & a.counter->width_mask() : 0);
    any = any || p != 0;
  }
  regs.write(kHandler, any ? 1 : 0);
  if (any) regs.write(kLvtpc, kLvtNmi);  // the PMI as an NMI, unmasked (Linux's APIC_DM_NMI)
}

// The reload the handler gives counter c now: RELOAD[c], or for freq= 2^width - PERIOD[c].
inline std::uint64_t current_reload(RegisterFile& regs, const CounterInfo& c) {
  const unsigned i = handler_index(c);
  if (regs.read(kFreq0 + i) == 0) return regs.read(kReload0 + i);
  return (c.width_mask() - regs.read(kPeriod0 + i) + 1) & c.width_mask();
}

// Backend::write_counter's part: the raw value that stands for `value` events counted on a
// sampling counter (value + its reload, -period), the handler's reload tally cleared. A counter
// that does not sample keeps `value`. freq=: the period the handler has reached is kept, as
// the kernel keeps it when an event is reset.
inline std::uint64_t preset(RegisterFile& regs, const CounterInfo& c, std::uint64_t value) {
  if (!simulated(regs) || handler_index(c) >= kHandlerCounters) return value;
  const std::uint64_t reload = current_reload(regs, c);
  if (reload == 0) return value;
  regs.write(kReloads0 + handler_index(c), 0);
  if (regs.read(kFreq0 + handler_index(c))) regs.write(kElapsed0 + handler_index(c), 0);
  return (value + reload) & c.width_mask();
}

// Backend::read_counter's part: the events a sampling counter counted since its preset,
// modulo 2^width: raw - reload + reloads x period (each reload skipped a period of the count);
// freq=: raw - reload + the events of the periods completed (ELAPSED), the period changing.
inline std::uint64_t events(RegisterFile& regs, const CounterInfo& c, std::uint64_t raw) {
  if (!simulated(regs) || handler_index(c) >= kHandlerCounters) return raw;
  const unsigned i = handler_index(c);
  const std::uint64_t reload = current_reload(regs, c);
  if (reload == 0) return raw;
  if (regs.read(kFreq0 + i)) return (raw - reload + regs.read(kElapsed0 + i)) & c.width_mask();
  const std::uint64_t period = (c.width_mask() - reload + 1) & c.width_mask();
  return (raw - reload + regs.read(kReloads0 + i) * period) & c.width_mask();
}

// The ProfilingDriver of an x86 backend that samples: the level histogram (kernel, user) and the
// PC profile of the handler's samples.
class Driver final : public ProfilingDriver {
 public:
  void check_profile(const PmuContext&, const ProfileRequest& request) const override {
    if (!request.pc) return;
    const PcRange& r = *request.pc;
    if (r.start >= r.end)
      throw Error(errc::invalid_argument,
                  fmt::format("PC range [{:#x}, {:#x}) is empty: its start must be below its end", r.start, r.end));
    if (r.end - r.start > kMaxRangeBytes)
      throw Error(errc::invalid_argument,
                  fmt::format("PC range [{:#x}, {:#x}) is {} bytes; the PMI handler's profile covers at most {} bytes "
                              "({} buckets of {}): choose a smaller range",
                              r.start, r.end, r.end - r.start, kMaxRangeBytes, kMaxRangeBytes / kBucketBytes,
                              kBucketBytes));
  }

  void program_profile(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set,
                       const ProfileRequest& request) const override {
    bool samples = false;
    for (const Assignment& a : set) samples = samples || a.encoding->period != 0 || a.encoding->frequency != 0;
    if (!samples)
      throw Error(errc::invalid_argument,
                  fmt::format("a profile on {} samples at the overflow interrupts of an event given a period, and "
                              "none of the session's events has one: add period=N to an event, or freq=N (for instance "
                              "{}:period=100000)",
                              ctx.pmu.name, set.empty() ? std::string("cycles") : set.front().encoding->event));
    regs.write(kKernelSamples, 0);
    regs.write(kUserSamples, 0);
    regs.write(kProfile, 0);
    if (request.pc) {
      regs.write(kProfileStart, request.pc->start);
      regs.write(kProfileEnd, request.pc->end);
      regs.write(kProfile, request.pc->space == AddressSpace::user ? 1 : 2);
    }
  }

  void clear_profile(RegisterFile& regs, const PmuContext&, const ProfileRequest& request) const override {
    regs.write(kKernelSamples, 0);
    regs.write(kUserSamples, 0);
    if (request.pc) regs.write(kProfile, request.pc->space == AddressSpace::user ? 1 : 2);  // empty again
  }

  LevelHistogram read_levels(RegisterFile& regs, const PmuContext&) const override {
    LevelHistogram h;
    h.bins.push_back({"kernel (ring 0)", regs.read(kKernelSamples)});
    h.bins.push_back({"user (ring 3)", regs.read(kUserSamples)});
    return h;
  }

  PcProfile read_pc_profile(RegisterFile& regs, const PmuContext&, const PcRange& range) const override {
    PcProfile p;
    p.range = range;
    p.bucket_bytes = kBucketBytes;
    const std::uint64_t buckets = (range.end - range.start + kBucketBytes - 1) / kBucketBytes;
    p.samples.reserve(buckets);
    for (std::uint64_t b = 0; b < buckets; ++b)
      p.samples.push_back(regs.read(kBucket0 + static_cast<std::uint32_t>(b)));
    return p;
  }
};

}  // namespace pmc::x86_sampling
