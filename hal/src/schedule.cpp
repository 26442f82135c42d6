// Scheduling events onto counters is bipartite matching (events on one side, counters on the
// other, an edge where the event allows the counter). Augmenting paths (Kuhn's algorithm) find
// an assignment whenever one exists; first-fit would not ({A: 0|1, B: 0} fails first-fit).
// When an event cannot be placed, the events reached while searching for it form a set that
// needs more counters than its allowed counters number (Hall's condition): the error names it.
#include <pmc/error.hpp>
#include <pmc/session.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace pmc {

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

std::vector<std::size_t> schedule(const PmuInfo& pmu, const std::vector<Encoding>& events) {
  std::vector<std::vector<std::size_t>> options;
  for (const auto& e : events) options.push_back(candidates(pmu, e));
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

}  // namespace pmc
