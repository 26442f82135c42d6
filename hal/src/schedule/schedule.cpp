// Scheduling events onto counters is bipartite matching (events on one side, counters on the
// other, an edge where the event allows the counter). Augmenting paths (Kuhn's algorithm) find
// an assignment whenever one exists; first-fit would not ({A: 0|1, B: 0} fails first-fit).
// When an event cannot be placed, the events reached while searching for it form a set that
// needs more counters than its allowed counters number (Hall's condition): the error names it.
// A merge event (Encoding::merge, AMD's large-increment events) takes an even counter and the
// odd one after it; the few placements of such pairs are tried in turn, each with a matching of
// the other events on the counters left. What else a set must satisfy (exclusive events alone,
// the extra registers' values) is placement.cpp's.
#include "counters.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace pmc::detail {

namespace {

// Candidate counter slots (indexes into pmu.counters) of one event: its fixed counter first,
// so fixed-capable events leave general counters to the rest, then the general ones.
std::vector<std::size_t> candidates(const PmuInfo& pmu, const Encoding& e) {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < pmu.counters.size(); ++s) {
    const auto& c = pmu.counters[s];
    if (c.kind == CounterKind::fixed && e.fixed && *e.fixed == c.index) out.push_back(s);
  }
  for (std::size_t s = 0; s < pmu.counters.size(); ++s) {
    const auto& c = pmu.counters[s];
    if (c.kind == CounterKind::general &&
        std::find(e.counters.begin(), e.counters.end(), c.index) != e.counters.end())
      out.push_back(s);
  }
  return out;
}

struct Matcher {
  const std::vector<std::vector<std::size_t>>& options;
  std::vector<long> owner;               // slot -> event or -1
  std::vector<bool> seen;                // slot visited in this search
  std::set<std::size_t> events_reached;  // events touched in this search

  bool augment(std::size_t event) {
    events_reached.insert(event);
    // A free counter first, so events keep the counters they were given when more are added.
    for (std::size_t slot : options[event]) {
      if (owner[slot] < 0 && !seen[slot]) {
        seen[slot] = true;
        owner[slot] = static_cast<long>(event);
        return true;
      }
    }
    for (std::size_t slot : options[event]) {
      if (seen[slot]) continue;
      seen[slot] = true;
      if (owner[slot] < 0 || augment(static_cast<std::size_t>(owner[slot]))) {
        owner[slot] = static_cast<long>(event);
        return true;
      }
    }
    return false;
  }
};

std::string counter_name(const CounterInfo& c) {
  return fmt::format("{}{}", c.kind == CounterKind::fixed ? "fixed " : "", c.index);
}

}  // namespace

namespace {

std::vector<std::size_t> match(const PmuInfo& pmu, const std::vector<Encoding>& events,
                               std::vector<std::vector<std::size_t>> options);

// The slot of the general counter with this index, or npos.
std::size_t general_slot(const PmuInfo& pmu, unsigned index) {
  for (std::size_t s = 0; s < pmu.counters.size(); ++s)
    if (pmu.counters[s].kind == CounterKind::general && pmu.counters[s].index == index) return s;
  return static_cast<std::size_t>(-1);
}

// Places merge events from `next` on: each on an even counter whose odd neighbour exists and is
// free, then matches the rest. nullopt when no placement works.
std::optional<std::vector<std::size_t>> place_pairs(const PmuInfo& pmu, const std::vector<Encoding>& events,
                                                    std::vector<std::vector<std::size_t>> options, std::size_t next,
                                                    std::vector<bool>& taken) {
  while (next < events.size() && !events[next].merge) ++next;
  if (next == events.size()) {
    try {
      return match(pmu, events, std::move(options));
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  for (std::size_t slot : options[next]) {
    const CounterInfo& c = pmu.counters[slot];
    if (c.kind != CounterKind::general || c.index % 2 != 0 || taken[slot]) continue;
    const std::size_t odd = general_slot(pmu, c.index + 1);
    if (odd == static_cast<std::size_t>(-1) || taken[odd]) continue;
    taken[slot] = taken[odd] = true;
    auto opts = options;
    opts[next] = {slot};
    for (std::size_t e = 0; e < events.size(); ++e)  // the pair's counters are no one else's
      if (e != next) std::erase_if(opts[e], [&](std::size_t s) { return s == slot || s == odd; });
    auto placed = place_pairs(pmu, events, std::move(opts), next + 1, taken);
    taken[slot] = taken[odd] = false;
    if (placed) return placed;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::size_t> match_counters(const PmuInfo& pmu, const std::vector<Encoding>& events) {
  std::vector<std::vector<std::size_t>> options;
  for (const auto& e : events) options.push_back(candidates(pmu, e));
  if (std::any_of(events.begin(), events.end(), [](const Encoding& e) { return e.merge; })) {
    std::vector<bool> taken(pmu.counters.size(), false);
    if (auto placed = place_pairs(pmu, events, options, 0, taken)) return *placed;
    std::string names;
    for (const auto& e : events) names += (names.empty() ? "" : ", ") + (e.def ? e.def->name : e.event);
    throw Error(errc::no_counter,
                fmt::format("cannot count {} together: a large-increment event needs an even counter and the odd "
                            "counter after it (for the merge event), and no placement of every event exists",
                            names));
  }
  return match(pmu, events, std::move(options));
}

namespace {

std::vector<std::size_t> match(const PmuInfo& pmu, const std::vector<Encoding>& events,
                               std::vector<std::vector<std::size_t>> options) {
  Matcher m{options, std::vector<long>(pmu.counters.size(), -1), {}, {}};
  for (std::size_t e = 0; e < events.size(); ++e) {
    m.seen.assign(pmu.counters.size(), false);
    m.events_reached.clear();
    if (m.augment(e)) continue;
    std::set<std::size_t> slots;
    std::string names;
    for (std::size_t r : m.events_reached) {
      names += (names.empty() ? "" : ", ") + (events[r].def ? events[r].def->name : events[r].event);
      for (std::size_t s : options[r]) slots.insert(s);
    }
    std::string counters;
    for (std::size_t s : slots) counters += (counters.empty() ? "" : ", ") + counter_name(pmu.counters[s]);
    if (slots.empty())
      throw Error(errc::no_counter, fmt::format("event {} can use no counter of the {} PMU", events[e].event, pmu.name));
    throw Error(errc::no_counter,
                fmt::format("cannot count {} together: {} event{} compete for counter{} {} ({} available)", names,
                            m.events_reached.size(), m.events_reached.size() == 1 ? "" : "s",
                            slots.size() == 1 ? "" : "s", counters, slots.size()));
  }
  std::vector<std::size_t> result(events.size());
  for (std::size_t s = 0; s < m.owner.size(); ++s)
    if (m.owner[s] >= 0) result[static_cast<std::size_t>(m.owner[s])] = s;
  return result;
}

}  // namespace

}  // namespace pmc::detail
