// pmc list [WORD...]: the backend's events for this CPU (with unit masks, counters, aliases and
// the file each came from), then the HAL events, which count with any backend or none.
#include "cli.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace pmc_cli {

namespace {

// ASCII case-insensitive "text contains word".
bool icontains(std::string_view text, std::string_view word) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  return std::search(text.begin(), text.end(), word.begin(), word.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

// `pmc list WORD...`: an event is shown when its name or one of its aliases contains any of the
// words, ignoring case.
bool matches_filter(const pmc::EventDef& e, const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return icontains(e.name, w) ||
           std::any_of(e.aliases.begin(), e.aliases.end(), [&](const std::string& a) { return icontains(a, w); });
  });
}

std::string quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == words.size() ? " or " : ", ", words[i]);
  return out;
}

bool matches_filter(const pmc::HalEventDescription& e, const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& w) { return icontains(e.name, w) || (!e.alias.empty() && icontains(e.alias, w)); });
}

// The backend's events for this CPU, then the HAL events (tsc, the OS software events), which
// count with any backend or none: without a backend, only those, and a note on stderr.
}  // namespace

// `pmc list --metrics`: every metric of the generic file and the backend's, by group, with its
// formula and the events it needs, and whether this machine can compute it.
int list_metrics(const Options& o, const pmc::Hal& hal) {
  const pmc::MetricCatalog catalog = pmc::builtin_metrics(hal);
  if (o.json) {
    json out = json::array();
    for (const auto& m : catalog.metrics()) {
      json events = json::array();
      for (const auto& in : m.events) events.push_back({{"variable", in.variable}, {"event", in.event}});
      const std::string why = pmc::metric_unavailable(hal, m);
      out.push_back({{"name", m.name},
                     {"group", m.group},
                     {"formula", m.formula},
                     {"unit", m.unit},
                     {"description", m.description},
                     {"events", events},
                     {"backend", m.backend.empty() ? json(nullptr) : json(m.backend)},
                     {"default", m.by_default},
                     {"available", why.empty()},
                     {"unavailable", why.empty() ? json(nullptr) : json(why)},
                     {"source", m.source.str()}});
    }
    print("{}\n", out.dump(2));
    return 0;
  }
  print("{} metrics ({}); pmc stat -M NAME or -M GROUP\n", catalog.metrics().size(),
        hal.backend() ? fmt::format("generic and backend {}", hal.backend()->name) : std::string("generic"));
  for (const std::string& group : catalog.groups()) {
    print("\n{}:\n", group);
    for (const auto* m : catalog.select(group)) {
      const std::string why = pmc::metric_unavailable(hal, *m);
      print("  {:<24} {} [{}]{}\n", m->name, m->description, m->unit, m->by_default ? " (shown by default)" : "");
      print("  {:<24} = {}\n", "", m->formula);
      std::string events;
      for (const auto& in : m->events)
        events += (events.empty() ? "" : ", ") +
                  (in.variable == in.event ? in.event : fmt::format("{} = {}", in.variable, in.event));
      print("  {:<24} events: {}{}\n", "", events, m->uses_duration ? ", duration_time" : "");
      if (!why.empty()) print("  {:<24} not available here: {}\n", "", why);
    }
  }
  return 0;
}

int cmd_list(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  if (o.list_metrics) return list_metrics(o, hal);
  const pmc::BackendInfo* backend = hal.backend();
  std::vector<const pmc::EventDef*> events;
  if (backend) events = hal.events().for_cpu(hal.pmu().cpu_tag);
  const std::size_t all = events.size();
  std::vector<pmc::HalEventDescription> builtin = pmc::hal_events();
  const std::size_t all_builtin = builtin.size();
  if (!o.filters.empty()) {
    std::erase_if(events, [&](const pmc::EventDef* e) { return !matches_filter(*e, o.filters); });
    std::erase_if(builtin, [&](const pmc::HalEventDescription& e) { return !matches_filter(e, o.filters); });
    if (events.empty() && builtin.empty())
      throw pmc::Error(pmc::errc::not_found,
                       backend ? fmt::format("no event of backend {} matches {}", backend->name, quoted_words(o.filters))
                               : fmt::format("no HAL event matches {} (and no backend matches this CPU)",
                                             quoted_words(o.filters)));
  }
  if (!backend)
    print_to(stderr, "pmc: no PMU events: {}; a simulated PMU's events: --cpuid-dump (pentium-iii, core2, ...) or "
                  "--backend\n",
          hal.why());
  static const pmc::PmuInfo kNoPmu;
  const pmc::PmuInfo& pmu = backend ? hal.pmu() : kNoPmu;
  auto counters_of = [&](const pmc::EventDef& e) {
    std::vector<unsigned> c = e.counters;
    if (c.empty())
      for (const auto& ci : pmu.counters)
        if (ci.kind == pmc::CounterKind::general) c.push_back(ci.index);
    return c;
  };
  if (o.json) {
    json out = json::array();
    for (const auto* e : events) {
      json masks = json::array();
      if (e->unit_masks)
        for (const auto& m : e->unit_masks->masks) {
          bool is_default = std::find(e->unit_masks->default_masks.begin(), e->unit_masks->default_masks.end(),
                                      m.name) != e->unit_masks->default_masks.end();
          masks.push_back({{"name", m.name}, {"value", hex(m.value)}, {"desc", m.description}, {"default", is_default}});
        }
      out.push_back({{"name", e->name},
                     {"code", hex(e->code)},
                     {"desc", e->description},
                     {"counters", counters_of(*e)},
                     {"fixed", e->fixed ? json(*e->fixed) : json(nullptr)},
                     {"generic", e->generic.empty() ? json(nullptr) : json(e->generic)},
                     {"unit_masks", masks},
                     {"combinable", e->unit_masks ? e->unit_masks->combinable : false},
                     {"modifiers", e->modifiers},
                     {"cpus", e->cpus},
                     {"aliases", e->aliases},
                     {"pmu", pmu.name},
                     {"source", e->source.str()}});
    }
    for (const auto& e : builtin)
      out.push_back({{"name", e.name},
                     {"pmu", "hal"},
                     {"desc", e.description},
                     {"unit", e.unit},
                     {"aliases", e.alias.empty() ? json::array() : json::array({e.alias})}});
    print("{}\n", out.dump(2));
    return 0;
  }
  auto print_builtin = [&] {
    if (o.filters.empty())
      print("{} HAL events, counted by pmchal with any backend or none:\n\n", builtin.size());
    else
      print("{} of {} HAL events, counted by pmchal with any backend or none, match {}:\n\n", builtin.size(),
                 all_builtin, quoted_words(o.filters));
    for (const auto& e : builtin)
      print("{:<32} {:<6} {}{}\n", e.name, e.unit, e.description,
                 e.alias.empty() ? "" : fmt::format(" [also {}]", e.alias));
  };
  if (!backend) {
    print_builtin();
    return 0;
  }
  const std::string cpu_tag = pmu.cpu_tag.empty() ? "" : fmt::format(" [cpu tag {}]", pmu.cpu_tag);
  if (o.filters.empty())
    print("{} events for {}{}\n\n", events.size(), pmu.description, cpu_tag);
  else
    print("{} of {} events for {}{} match {}\n\n", events.size(), all, pmu.description, cpu_tag,
               quoted_words(o.filters));
  for (const auto* e : events) {
    std::string counters;
    for (unsigned c : counters_of(*e)) counters += (counters.empty() ? "" : ",") + std::to_string(c);
    print("{:<32} 0x{:02X}  counters {:<4} {}{}\n", e->name, e->code, counters, e->description,
               e->generic.empty() ? "" : fmt::format(" [{}]", e->generic));
    if (!e->aliases.empty()) {
      std::string aliases;
      for (const auto& a : e->aliases) aliases += (aliases.empty() ? "" : ", ") + a;
      print("    aliases: {}\n", aliases);
    }
    if (e->unit_masks) {
      const auto& g = *e->unit_masks;
      for (const auto& m : g.masks) {
        bool is_default = std::find(g.default_masks.begin(), g.default_masks.end(), m.name) != g.default_masks.end();
        print("    :{:<24} 0x{:02X}{} {}{}\n", m.name, m.value, is_default ? " (default)" : "          ",
                   m.description, m.generic.empty() ? "" : fmt::format(" [{}]", m.generic));
      }
      print("    ({})\n", g.combinable ? "unit masks combine" : "choose one unit mask");
    }
    // Without a CPU tag (a backend forced onto a CPU it has no tag for) every definition is
    // listed, the per-CPU ones of one name too: say which CPUs each is for.
    if (pmu.cpu_tag.empty() && !e->cpus.empty()) print("    for CPUs: {}\n", fmt::format("{}", fmt::join(e->cpus, ", ")));
    print("    from {}\n", e->source.str());
  }
  if (!builtin.empty()) {
    print("\n");
    print_builtin();
  }
  return 0;
}

}  // namespace pmc_cli
