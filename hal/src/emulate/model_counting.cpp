// Counting through the device model (docs/emulation.md, "Which events can be emulated" and "How
// it works", step 6): the black-box probes that decide whether an event can be emulated, and the
// count of one event, each source line's totals run on the model as a staircase of segments.
#include "model_counting.hpp"

#include "catalog_rules.hpp"
#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace pmc {

namespace {

std::uint64_t sum_terms(const Activity& a, const std::vector<Quantity>& terms) {
  std::uint64_t total = 0;
  for (Quantity q : terms) {
    if (a[q] > std::numeric_limits<std::uint64_t>::max() - total)
      throw Error(errc::invalid_argument, "an emulated signal's total exceeds 2^64 - 1");
    total += a[q];
  }
  return total;
}

// running the segments.
struct ProbeSegment {
  std::uint64_t cycles = 1;
  Mode mode = Mode::user;
  std::vector<SignalCount> signals;
};

std::uint64_t probe(const Hal& hal, std::string_view event, const std::vector<ProbeSegment>& segments) {
  Session s = hal.session();
  s.add(event);
  Workload w;
  for (const ProbeSegment& p : segments) {
    Segment seg;
    seg.cycles = p.cycles;
    seg.mode = p.mode;
    seg.signals = p.signals;
    w.add(seg);
  }
  s.run(w);
  return s.read().front().value;
}

// The modifiers of an event string that set anything besides the privilege levels and the
// sampling period (shown when an event's count is not proportional to the activity).
std::string shaping_modifiers(const Hal& hal, const EventSpec& spec) {
  std::string out;
  auto add = [&](std::string_view name, std::optional<std::uint64_t> value) {
    out += fmt::format("{}:{}{}", out.empty() ? "" : " ", name, value ? fmt::format("={}", *value) : "");
  };
  for (const EventModifier& m : spec.modifiers) {
    if (m.name == "u" || m.name == "k" || m.name == "period") continue;
    if (m.value && *m.value == 0) continue;
    add(m.name, m.value);
  }
  // A bare word is parsed as a unit mask; the encoder reads it as a flag when the backend
  // declares a modifier of that name (the Pentium's :d).
  for (const std::string& w : spec.unit_masks)
    if (const ModifierDef* d = hal.events().modifier(w); d && d->refusal.empty() && w != "u" && w != "k") add(w, {});
  return out;
}

EmulationVerdict refuse(std::string reason) {
  EmulationVerdict v;
  v.reason = std::move(reason);
  return v;
}

// An event's count of one signal: 1 per cycle for 1 cycle, for 2 cycles, and 2 in 1 cycle. The
// emulation can feed the signal's totals only if the count is in proportion to them.
struct Proportion {
  std::uint64_t a11 = 0, a21 = 0, a12 = 0;
  [[nodiscard]] bool none() const { return a11 == 0 && a21 == 0 && a12 == 0; }
  [[nodiscard]] bool proportional() const { return a11 != 0 && a21 == 2 * a11 && a12 == 2 * a11; }
  [[nodiscard]] std::string refusal(const std::string& with, const std::string& signal) const {
    return fmt::format(
        "its count{} of {} is not in proportion to the occurrences (1 per cycle for 1 cycle: {}, for 2 cycles: {}; 2 "
        "in 1 cycle: {}): it depends on how they spread over cycles, which the emulation does not know",
        with, signal, a11, a21, a12);
  }
};

Proportion proportion(const Hal& hal, std::string_view event, Signal id) {
  return {probe(hal, event, {{1, Mode::user, {{id, 1}}}}), probe(hal, event, {{2, Mode::user, {{id, 1}}}}),
          probe(hal, event, {{1, Mode::user, {{id, 2}}}})};
}

// The verdict of a catalog event by its own rule (key: its name as the rules give it): counted
// through the signal named after it, withheld on these caches, or refused by the rules with their
// reason; nullopt when the rules do not name it.
std::optional<EmulationVerdict> event_signal_verdict(const Hal& hal, const SignalMap& map, std::string_view event,
                                                     const std::string& key, const std::string& with) {
  const auto same = [&](const std::string& name) { return detail::iequal(name, key); };
  const auto own = std::find_if(map.signals.begin(), map.signals.end(),
                                [&](const EmulatedSignal& s) { return s.event_signal && same(s.signal); });
  if (own != map.signals.end()) {
    const Signal id = signal(own->signal);
    const Proportion p = proportion(hal, event, id);
    if (p.none()) {
      if (probe(hal, event, {{1, Mode::kernel, {{id, 1}}}}) != 0)
        return refuse("it counts kernel mode only, and the emulation sees the program's user mode only");
      return refuse(fmt::format(
          "the rules give it {} as the signal {}, and the {} device model counts nothing{} for that signal", [&] {
            std::string t;
            for (Quantity q : own->terms) t += (t.empty() ? "" : " + ") + std::string(quantity_name(q));
            return t;
          }(), own->signal, map.model, with));
    }
    if (!p.proportional()) return refuse(p.refusal(with, own->signal));
    EmulationVerdict v;
    v.producible = true;
    v.reads.emplace_back(own->signal, p.a11);
    return v;
  }
  for (const WithheldSignal& w : map.withheld)
    if (same(w.signal)) return refuse(fmt::format("it counts the {} signal: {}", w.signal, w.reason));
  for (const RefusedEvent& r : map.refused)
    if (same(r.event)) return refuse(r.reason);
  // A rule for the event whatever its unit mask ("EVENT" for "EVENT:MASK").
  const auto colon = key.find(':');
  if (colon != std::string::npos)
    for (const RefusedEvent& r : map.refused)
      if (detail::iequal(r.event, std::string_view(key).substr(0, colon))) return refuse(r.reason);
  return std::nullopt;
}

}  // namespace

namespace detail {

void require_sim(const Hal& hal) {
  (void)hal.require_backend();
  if (hal.access() != "sim")
    throw Error(errc::not_supported,
                fmt::format("emulated counting runs on the simulated PMU (access \"sim\"), not access \"{}\"",
                            hal.access()));
}

// One probe of an event on the model: a fresh session (no edge-detector memory carried over)


std::vector<const EmulatedSignal*> signals_read(const SignalMap& map, const EmulatedEvent& event) {
  std::vector<const EmulatedSignal*> out;
  for (const EmulatedSignal& s : map.signals)
    if (std::any_of(event.reads.begin(), event.reads.end(), [&](const auto& r) { return r.first == s.signal; }))
      out.push_back(&s);
  return out;
}

void line_segments(const std::vector<const EmulatedSignal*>& signals, const Activity& activity, Workload& out) {
  // The line's totals as a staircase: while a signal's total is not reached it occurs once per
  // cycle, so the segments' cycles are the largest total and every rule that adds
  // cycles x occurrences counts each total exactly.
  out.clear();
  std::vector<std::pair<std::uint64_t, Signal>> totals;
  for (const EmulatedSignal* s : signals) {
    const std::uint64_t t = sum_terms(activity, s->terms);
    if (t) totals.emplace_back(t, signal(s->signal));
  }
  std::sort(totals.begin(), totals.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SignalCount> counts;
  std::uint64_t done = 0;
  for (std::size_t k = 0; k < totals.size(); ++k) {
    if (totals[k].first == done) continue;
    counts.clear();
    for (std::size_t j = k; j < totals.size(); ++j) counts.push_back({totals[j].second, 1});
    Segment seg;
    seg.cycles = totals[k].first - done;
    seg.mode = Mode::user;
    seg.signals = counts;
    out.add(seg);
    done = totals[k].first;
  }
}

// Counts one event over every line of the activity, with the signals it reads (the others count
// nothing for it, and a catalog event's own signal is fed to that event alone).
void count_one(const Hal& hal, const SignalMap& map, const ProgramActivity& activity, EmulatedEvent& result,
               std::vector<std::uint64_t>& per_line) {
  const std::vector<const EmulatedSignal*> used = signals_read(map, result);
  Session session = hal.session();
  session.add(result.event);
  per_line.assign(activity.lines.size(), 0);
  Workload w;
  w.reserve(used.size(), used.size() * used.size());
  std::uint64_t value = 0, previous = 0;
  WorkloadRun last;
  session.start();
  for (std::size_t i = 0; i < activity.lines.size(); ++i) {
    line_segments(used, activity.lines[i].activity, w);
    if (w.empty()) continue;
    last = session.run(w);
    session.read(std::span<std::uint64_t>(&value, 1));
    per_line[i] = value - previous;
    previous = value;
  }
  session.stop();
  result.reading = session.read().front();
  result.reading.time_enabled = result.reading.time_running = 0;
  result.interrupts = last.interrupts;
}

}  // namespace detail

EmulationVerdict check_emulated_event(const Hal& hal, const SignalMap& map, std::string_view event) {
  detail::require_sim(hal);
  const EventSpec spec = parse_event(event);
  for (const EventModifier& m : spec.modifiers) {
    if ((m.name == "e" || m.name == "i" || m.name == "c") && (!m.value || *m.value != 0))
      return refuse(fmt::format(
          "with :{} its count depends on how the events spread over cycles (edge detection, inversion and counter "
          "masks look at each cycle), and the emulation knows the totals only",
          m.name));
  }
  {
    Session s = hal.session();
    s.add(event);
    if (s.read().front().hal)
      return refuse("it is a HAL event (time or an OS count of this process), not the emulated program's");
  }
  // The model's own signals first (any event may count them); a catalog event's signal only when
  // the event counts none of those (so nothing is counted twice).
  std::vector<Signal> ids;
  std::vector<const EmulatedSignal*> generic;
  for (const EmulatedSignal& s : map.signals)
    if (!s.event_signal) {
      ids.push_back(signal(s.signal));
      generic.push_back(&s);
    }
  const std::string shaping = shaping_modifiers(hal, spec);
  const std::string with = shaping.empty() ? std::string() : fmt::format(" with {}", shaping);

  if (probe(hal, event, {{2, Mode::user, {}}}) != 0)
    return refuse(fmt::format(
        "it counts{} in cycles without any activity: it counts cycles or a duration (stalls, bus or timing events), "
        "and the emulation has no time",
        with));
  std::vector<SignalCount> all;
  for (Signal id : ids) all.push_back({id, 1});
  const std::uint64_t together = probe(hal, event, {{1, Mode::user, all}});
  EmulationVerdict v;
  if (together != 0) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Proportion p = proportion(hal, event, ids[i]);
      if (p.none()) continue;
      if (!p.proportional()) return refuse(p.refusal(with, generic[i]->signal));
      v.reads.emplace_back(generic[i]->signal, p.a11);
      sum += p.a11;
    }
    if (!v.reads.empty() && sum != together)
      return refuse(fmt::format("its count{} of the signals together ({}) is not the sum of their counts apart ({})",
                                with, together, sum));
    if (v.reads.empty())
      return refuse(fmt::format("its count{} depends on how the activity spreads over cycles", with));
    v.producible = true;
    return v;
  }
  const std::string key = detail::catalog_event_key(hal, event);
  if (!key.empty()) {
    if (auto own = event_signal_verdict(hal, map, event, key, with)) return std::move(*own);
  }
  for (const WithheldSignal& w : map.withheld)
    if (probe(hal, event, {{1, Mode::user, {{signal(w.signal), 1}}}}) != 0)
      return refuse(fmt::format("it counts the {} signal: {}", w.signal, w.reason));
  if (!all.empty() && probe(hal, event, {{1, Mode::kernel, all}}) != 0)
    return refuse("it counts kernel mode only, and the emulation sees the program's user mode only");
  return refuse(fmt::format("it counts{} none of the activity the emulation provides", with));
}

std::vector<std::string> emulated_events(const Hal& hal, const SignalMap& map) {
  detail::require_sim(hal);
  std::vector<std::string> out;
  for (const EventDef* def : hal.events().for_cpu(hal.pmu().cpu_tag)) {
    if (std::find(out.begin(), out.end(), def->name) != out.end()) continue;
    try {
      if (check_emulated_event(hal, map, def->name).producible) out.push_back(def->name);
    } catch (const Error&) {
      // needs a unit mask, or not on this CPU: not counted with its defaults
    }
  }
  return out;
}

}  // namespace pmc
