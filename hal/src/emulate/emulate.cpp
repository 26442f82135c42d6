// Emulated counting (docs/emulation.md): a real program's activity, as Valgrind's cachegrind
// simulates it, counted by a backend's device model. The steps, one file each:
//   1. cache_hierarchy() (cache_geometry.cpp): the chosen CPU's caches from its CPUID (leaf 4,
//      8000001DH, leaf 2, 80000005H/6H), fitted to what Valgrind can simulate;
//   2. run_under_valgrind() (valgrind.cpp): the program under cachegrind with those caches and
//      branch simulation; parse_cachegrind() (cachegrind.cpp) reads its output (per function and
//      source line);
//   3. emulated_signals() (rules.cpp): which device-model signals that activity becomes, from
//      the rules in data (data/emulation.toml for every model, sim/models/<model>/emulation.toml
//      for each model's own signals);
//   4. check_emulated_event() (model_counting.cpp): whether an event counts only that activity,
//      in proportion (black box: it is run on the model);
//   5. count_emulated() (here): each event alone on the model, line by line.
#include "model_counting.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc {

namespace {

// What the emulation provides, for messages.
constexpr std::string_view kProvides =
    "the program's user-mode instructions, loads, stores, conditional and indirect branches and their "
    "mispredictions, and L1 instruction, L1 data and last-level cache misses, as Valgrind's cachegrind "
    "simulates them";

// The verdict of each event, with the check that the signals it reads are in the activity (a
// cachegrind run without branch or cache simulation lacks some); throws for refused ones.
std::vector<EmulationVerdict> verdicts(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events,
                                       const ProgramActivity* activity) {
  std::vector<EmulationVerdict> out;
  std::string refused;
  for (const std::string& e : events) {
    EmulationVerdict v = check_emulated_event(hal, map, e);
    if (v.producible && activity) {
      std::string missing;
      for (const auto& read : v.reads) {
        const auto it = std::find_if(map.signals.begin(), map.signals.end(),
                                     [&](const EmulatedSignal& s) { return s.signal == read.first; });
        for (Quantity q : it->terms)
          if (!activity->present[static_cast<std::size_t>(q)])
            missing += fmt::format("{}{} ({})", missing.empty() ? "" : ", ", quantity_name(q), quantity_description(q));
      }
      if (!missing.empty()) {
        v.producible = false;
        v.reason = fmt::format("{} has no {}: Valgrind ran without that simulation", activity->source, missing);
      }
    }
    if (!v.producible) refused += fmt::format("{}cannot emulate {}: {}", refused.empty() ? "" : "; ", e, v.reason);
    out.push_back(std::move(v));
  }
  if (!refused.empty()) {
    std::string list;
    for (const std::string& c : emulated_events(hal, map)) list += (list.empty() ? "" : ", ") + c;
    throw Error(errc::not_supported,
                fmt::format("{}. The emulation provides {}; on the {} model: {}; events that count them on this CPU: "
                            "{}",
                            refused, kProvides, map.model, map.describe(), list.empty() ? "none" : list));
  }
  return out;
}

}  // namespace

void require_emulated_events(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events) {
  detail::require_sim(hal);
  (void)verdicts(hal, map, events, nullptr);
}

EmulatedCounts count_emulated(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events,
                              const ProgramActivity& activity) {
  detail::require_sim(hal);
  EmulatedCounts out;
  std::vector<EmulationVerdict> v = verdicts(hal, map, events, &activity);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EmulatedEvent ev;
    ev.event = events[i];
    ev.reads = std::move(v[i].reads);
    out.events.push_back(std::move(ev));
  }
  out.per_line.resize(out.events.size());
  out.per_function.resize(out.events.size());
  for (std::size_t e = 0; e < out.events.size(); ++e) {
    detail::count_one(hal, map, activity, out.events[e], out.per_line[e]);
    out.per_function[e].assign(activity.functions.size(), 0);
    for (std::size_t i = 0; i < activity.lines.size(); ++i)
      out.per_function[e][activity.lines[i].function] += out.per_line[e][i];
  }
  return out;
}

}  // namespace pmc
