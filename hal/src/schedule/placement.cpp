// Placing a set of events: the counter matching (schedule.cpp), then what the counters alone do
// not say.
//  - An exclusive event (Encoding::exclusive, Intel's "taken alone") must be the only event of its
//    set: beside others, the set is refused (no_counter), so a session counts it in an event set
//    of its own (multiplexed with the rest, as perf counts such an event in a group of its own).
//  - An event that needs an extra register (Encoding::extra: offcore response, load latency,
//    frontend) takes one MSR of Encoding::extra_msrs, and one MSR holds one value: events with
//    the same value may share an MSR, events with different values need one MSR each. The events
//    are split into classes of the same value and the same MSR list (two events of one class can
//    always share an MSR), and the classes whose MSR lists overlap are placed together by trying
//    the MSRs in turn: a handful of MSRs and classes, so the search is small.
#include "counters.hpp"

#include <pmc/error.hpp>
#include <pmc/schedule.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>

namespace pmc {

namespace {

std::string name_of(const Encoding& e) { return e.def ? e.def->name : e.event; }

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

void check_exclusive(const std::vector<Encoding>& events) {
  if (events.size() < 2) return;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!events[i].exclusive) continue;
    std::vector<std::string> others;
    for (std::size_t j = 0; j < events.size(); ++j)
      if (j != i) others.push_back(name_of(events[j]));
    throw Error(errc::no_counter,
                fmt::format("cannot count {} together with {}: {} must be the only event counting (exclusive: its "
                            "catalog marks it taken alone), so it needs an event set of its own",
                            name_of(events[i]), join_names(others), name_of(events[i])));
  }
}

// Events of the same value and MSR list: one MSR serves them all.
struct ExtraClass {
  std::uint64_t value = 0;
  std::vector<std::uint32_t> msrs;
  std::vector<std::size_t> events;
  std::size_t component = 0;
};

bool assign(const std::vector<ExtraClass*>& classes, std::size_t k, std::map<std::uint32_t, std::uint64_t>& held,
            std::vector<std::uint32_t>& chosen) {
  if (k == classes.size()) return true;
  for (std::uint32_t msr : classes[k]->msrs) {
    const auto it = held.find(msr);
    if (it != held.end() && it->second != classes[k]->value) continue;
    const bool fresh = it == held.end();
    if (fresh) held[msr] = classes[k]->value;
    chosen[k] = msr;
    if (assign(classes, k + 1, held, chosen)) return true;
    if (fresh) held.erase(msr);
  }
  return false;
}

[[noreturn]] void extra_conflict(const std::vector<Encoding>& events, const std::vector<ExtraClass*>& classes) {
  std::vector<std::string> names, values, registers;
  std::vector<std::uint32_t> msrs;
  std::vector<std::uint64_t> distinct;
  for (const ExtraClass* c : classes) {
    if (std::find(distinct.begin(), distinct.end(), c->value) == distinct.end()) distinct.push_back(c->value);
    for (std::size_t e : c->events) {
      names.push_back(name_of(events[e]));
      values.push_back(fmt::format("{} 0x{:X}", name_of(events[e]), c->value));
      if (std::find(registers.begin(), registers.end(), events[e].extra) == registers.end())
        registers.push_back(events[e].extra);
    }
    for (std::uint32_t m : c->msrs)
      if (std::find(msrs.begin(), msrs.end(), m) == msrs.end()) msrs.push_back(m);
  }
  std::sort(msrs.begin(), msrs.end());
  std::vector<std::string> msr_names;
  for (std::uint32_t m : msrs) msr_names.push_back(fmt::format("0x{:X}", m));
  throw Error(errc::no_counter,
              fmt::format("cannot count {} together: they need {} different values in extra register {} ({}), and "
                          "{} {} {}",
                          join_names(names), distinct.size(), join_names(registers), fmt::join(values, ", "),
                          msrs.size() == 1 ? "MSR" : "MSRs", join_names(msr_names),
                          msrs.size() == 1 ? "holds one value" : "hold one value each"));
}

std::vector<std::uint32_t> place_extras(const std::vector<Encoding>& events) {
  std::vector<std::uint32_t> out(events.size(), 0);
  std::vector<ExtraClass> classes;
  for (std::size_t e = 0; e < events.size(); ++e) {
    const Encoding& enc = events[e];
    if (enc.extra.empty()) continue;
    if (enc.extra_msrs.empty())
      throw Error(errc::not_supported,
                  fmt::format("event {} needs extra register '{}', and no MSR holds it (the catalog declares none "
                              "for it: [extra.{}] msrs)",
                              name_of(enc), enc.extra, enc.extra));
    auto same = std::find_if(classes.begin(), classes.end(), [&](const ExtraClass& c) {
      return c.value == enc.extra_value && c.msrs == enc.extra_msrs;
    });
    if (same == classes.end()) {
      classes.push_back({enc.extra_value, enc.extra_msrs, {}, classes.size()});
      same = classes.end() - 1;
    }
    same->events.push_back(e);
  }
  if (classes.empty()) return out;
  // Classes whose MSR lists overlap compete: one component each (union by relabelling; few).
  for (std::size_t a = 0; a < classes.size(); ++a)
    for (std::size_t b = a + 1; b < classes.size(); ++b) {
      const bool overlap = std::any_of(classes[a].msrs.begin(), classes[a].msrs.end(), [&](std::uint32_t m) {
        return std::find(classes[b].msrs.begin(), classes[b].msrs.end(), m) != classes[b].msrs.end();
      });
      if (!overlap || classes[a].component == classes[b].component) continue;
      const std::size_t from = classes[b].component, to = classes[a].component;
      for (auto& c : classes)
        if (c.component == from) c.component = to;
    }
  std::vector<std::size_t> components;
  for (const auto& c : classes)
    if (std::find(components.begin(), components.end(), c.component) == components.end())
      components.push_back(c.component);
  for (std::size_t component : components) {
    std::vector<ExtraClass*> group;
    for (auto& c : classes)
      if (c.component == component) group.push_back(&c);
    std::map<std::uint32_t, std::uint64_t> held;
    std::vector<std::uint32_t> chosen(group.size(), 0);
    if (!assign(group, 0, held, chosen)) extra_conflict(events, group);
    for (std::size_t k = 0; k < group.size(); ++k)
      for (std::size_t e : group[k]->events) out[e] = chosen[k];
  }
  return out;
}

}  // namespace

Placement place(const PmuInfo& pmu, const std::vector<Encoding>& events) {
  check_exclusive(events);
  Placement p;
  p.slots = detail::match_counters(pmu, events);
  p.extra_msrs = place_extras(events);
  return p;
}

std::vector<std::size_t> schedule(const PmuInfo& pmu, const std::vector<Encoding>& events) {
  return place(pmu, events).slots;
}

Encoding bind_extra_msr(Encoding e, std::uint32_t msr, const RegisterFormat& format) {
  const auto it = std::find(e.extra_msrs.begin(), e.extra_msrs.end(), msr);
  if (it == e.extra_msrs.end())
    throw Error(errc::invalid_argument,
                fmt::format("event {} cannot use MSR 0x{:X} for extra register '{}' (its MSRs: {})", name_of(e), msr,
                            e.extra.empty() ? std::string("none") : e.extra,
                            e.extra_msrs.empty() ? std::string("none") : fmt::format("0x{:X}", fmt::join(e.extra_msrs, ", 0x"))));
  if (it - e.extra_msrs.begin() == 1 && e.def && e.def->code2)
    if (const auto field = format.field("event"); field && *e.def->code2 <= field->max_value())
      e.config = (e.config & ~field->mask()) | field->place(*e.def->code2);
  e.extra_msrs = {msr};
  return e;
}

}  // namespace pmc
