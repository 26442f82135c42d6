#include "signal_map.hpp"

#include <pmc/error.hpp>
#include <pmc/event_spec.hpp>

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <limits>

namespace pmc::detail {

void SignalMap::learn(const Segment& segment) {
  for (const SignalCount& c : segment.signals) {
    const std::uint32_t id = c.signal.id;
    if (id >= to_.size()) to_.resize(std::size_t{id} + 1, kUnknown);
    if (to_[id] != kUnknown) continue;
    const std::optional<Signal> target = resolve_(signal_name(c.signal));
    to_[id] = target && *target != c.signal ? target->id : kSame;
  }
  if (buffer_.capacity() < segment.signals.size()) buffer_.reserve(segment.signals.size());
}

Segment SignalMap::apply(const Segment& segment) {
  bool mapped = false;
  for (const SignalCount& c : segment.signals) {
    if (c.signal.id >= to_.size() || to_[c.signal.id] == kUnknown) {
      learn(segment);  // not seen by the check before the run (a caller that skipped it)
      return apply(segment);
    }
    mapped = mapped || to_[c.signal.id] != kSame;
  }
  if (!mapped) return segment;
  buffer_.clear();
  for (const SignalCount& c : segment.signals) {
    const std::uint32_t to = to_[c.signal.id];
    const Signal s = to == kSame ? c.signal : Signal{to};
    bool merged = false;
    for (SignalCount& b : buffer_) {
      if (b.signal != s) continue;
      constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
      b.per_cycle = c.per_cycle > kMax - b.per_cycle ? kMax : b.per_cycle + c.per_cycle;
      merged = true;
      break;
    }
    if (!merged) buffer_.push_back({s, c.per_cycle});
  }
  Segment out = segment;
  out.signals = buffer_;
  return out;
}

SignalMap::Resolve event_signal_resolver(const Context& ctx, const RegisterAccess& regs) {
  const pmc_model_descriptor* d = regs.model_descriptor();
  // (The loader refused descriptors smaller than this pmchal's: signal_of is there.)
  if (!d || !ctx.has_backend() || !d->signal_of || !regs.device()) return nullptr;
  const Device* device = regs.device();
  auto* const signal_of = d->signal_of;
  const std::string model = d->name ? d->name : "";
  return [&ctx, device, signal_of, model](std::string_view name) -> std::optional<Signal> {
    EventSpec spec;
    try {
      spec = parse_event(name);
    } catch (const Error&) {
      return std::nullopt;  // not an event string ("raw.0x01C2" may be; "l2-requests.m" is not)
    }
    if (!spec.pmu.empty()) return std::nullopt;
    // A perf generic name ("instructions", "branch-misses") is the device's own generic signal.
    const UnitMask* mask = nullptr;
    if (ctx.catalog.find_generic_mask(spec.name, ctx.pmu.cpu_tag, &mask)) return std::nullopt;
    // A name the catalog has must encode; any other name is an event only if the backend
    // encodes it as a catalog event (perf's "event.umask" spelling of a libpfm4 catalog).
    const EventDef* def = ctx.catalog.find(spec.name, ctx.pmu.cpu_tag);
    Encoding encoding;
    try {
      encoding = ctx.backend().encode(spec, ctx.pmu_context());
    } catch (const Error& e) {
      if (!def) return std::nullopt;  // the device's own signal ("raw.0x01C2"), or a name nothing counts
      throw Error(e.kind(), fmt::format("workload signal '{}' names an event that does not encode: {}", name, e.what()));
    }
    if (encoding.name.empty()) return std::nullopt;  // a raw event string: not an event's name
    if (!spec.modifiers.empty())
      throw Error(errc::invalid_argument,
                  fmt::format("workload signal '{}' names event {} with the modifier '{}': a signal names an event "
                              "(and its unit masks) only; the event counted brings its own filters",
                              name, encoding.name, spec.modifiers.front().name));
    std::array<char, 256> buffer{};
    const std::size_t n = signal_of(device, &encoding, buffer.data(), buffer.size());
    if (n == 0) return std::nullopt;  // the device counts no signal for it: the name counts nothing
    if (n >= buffer.size())
      throw Error(errc::plugin, fmt::format("device model '{}' names a signal of {} characters for {} (at most {})",
                                            model, n, encoding.name, buffer.size() - 1));
    const Signal target = signal(std::string_view(buffer.data(), n));
    if (target == kCyclesSignal)
      throw Error(errc::invalid_argument,
                  fmt::format("workload signal '{}' names {}, which counts cycles: cycles are implicit (1 per "
                              "unhalted cycle, none while halted) and cannot be given",
                              name, encoding.name));
    return target;
  };
}

}  // namespace pmc::detail
