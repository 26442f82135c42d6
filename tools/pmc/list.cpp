// pmc list [WORD...] [--topic T] [--counter N|fixed] [--deprecated]: the backend's events for this
// CPU, one line each with its encoding and counters (under the file they came from; unit masks
// and aliases on lines of their own), then the HAL events, which count with any backend or none.
#include "cli.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <optional>

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

// The general counters an event may use on this PMU: those of the catalog's list this PMU has
// (all of them when the catalog does not say), as the encoder allows them.
std::vector<unsigned> general_counters(const pmc::EventDef& e, const pmc::PmuInfo& pmu) {
  std::vector<unsigned> c;
  if (e.fixed_only) return c;  // `counters = []`: its fixed counter alone
  for (const auto& ci : pmu.counters)
    if (ci.kind == pmc::CounterKind::general &&
        (e.counters.empty() || std::find(e.counters.begin(), e.counters.end(), ci.index) != e.counters.end()))
      c.push_back(ci.index);
  return c;
}

// "0-3", "0,2-3": counter indexes, runs as ranges.
std::string ranges(std::vector<unsigned> v) {
  std::sort(v.begin(), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  return out;
}

// What the event programs, in the spelling of its fields and modifiers: "event=0xD1 umask=0x20",
// "event=0x14 umask=0x09 c=1", "event=0xB7,0xBB umask=0x01 offcore_rsp=0x10001".
std::string fields_of(const pmc::EventDef& e) {
  std::string s = fmt::format("event=0x{:02X}", e.code);
  if (e.code2) s += fmt::format(",0x{:02X}", *e.code2);
  if (e.fixed_umask) s += fmt::format(" umask=0x{:02X}", *e.fixed_umask);
  if (e.umask2) s += fmt::format(" umask2=0x{:02X}", e.umask2);
  for (const auto& [field, value] : e.set) s += fmt::format(" {}={}", field, value);
  for (const auto& [mod, value] : e.defaults)
    if (mod != "u" && mod != "k" && value != 0) s += fmt::format(" {}={}", mod, value);
  if (!e.extra.empty()) s += fmt::format(" {}=0x{:X}", e.extra, e.extra_value);
  return s;
}

// "counters 0-3", "counters 0-3, fixed 1", "fixed 3".
std::string where_of(const pmc::EventDef& e, const pmc::PmuInfo& pmu) {
  std::string s;
  if (const auto g = general_counters(e, pmu); !g.empty()) s = "counters " + ranges(g);
  if (e.fixed && pmu.fixed(*e.fixed)) s += fmt::format("{}fixed {}", s.empty() ? "" : ", ", *e.fixed);
  return s;
}

// --counter N|fixed|fixedN: whether the event can use that counter.
struct CounterFilter {
  bool fixed = false;
  std::optional<unsigned> index;  // fixed: which one (any when absent); general: required
  bool accepts(const pmc::EventDef& e, const pmc::PmuInfo& pmu) const {
    if (fixed) return e.fixed && pmu.fixed(*e.fixed) && (!index || *e.fixed == *index);
    const auto g = general_counters(e, pmu);
    return std::find(g.begin(), g.end(), *index) != g.end();
  }
};

CounterFilter counter_filter(const std::string& text, const pmc::PmuInfo& pmu) {
  CounterFilter f;
  std::string digits = text;
  if (text.rfind("fixed", 0) == 0) {
    f.fixed = true;
    digits = text.substr(5);
    if (digits.empty()) return f;
  }
  const bool number = !digits.empty() && digits.size() <= 3 &&
                      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!number)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("--counter {}: give a general counter's index (0, 1, ...), fixed, or fixedN", text));
  f.index = static_cast<unsigned>(std::stoul(digits));
  if (f.fixed ? !pmu.fixed(*f.index) : !pmu.general(*f.index)) {
    std::vector<unsigned> have;
    for (const auto& c : pmu.counters)
      if ((c.kind == pmc::CounterKind::fixed) == f.fixed) have.push_back(c.index);
    throw pmc::Error(pmc::errc::not_found,
                     fmt::format("--counter {}: the {} has no {} counter {} (it has {})", text, pmu.description,
                                 f.fixed ? "fixed" : "general", *f.index,
                                 have.empty() ? std::string("none") : ranges(have)));
  }
  return f;
}

// Every field of a catalog event (pmc list --json).
json event_json(const pmc::EventDef& e, const pmc::PmuInfo& pmu, const pmc::EventCatalog& catalog) {
  json masks = json::array();
  if (e.unit_masks)
    for (const auto& m : e.unit_masks->masks) {
      bool is_default = std::find(e.unit_masks->default_masks.begin(), e.unit_masks->default_masks.end(), m.name) !=
                        e.unit_masks->default_masks.end();
      masks.push_back({{"name", m.name}, {"value", hex(m.value)}, {"desc", m.description}, {"default", is_default}});
    }
  json extra = nullptr;
  if (!e.extra.empty()) {
    // The MSRs the event may use: its own list, else every MSR of the register's declaration.
    const pmc::ExtraRegDef* declared = catalog.extra_reg(e.extra);
    json msrs = json::array();
    for (std::uint32_t m : !e.extra_msrs.empty() || !declared ? e.extra_msrs : declared->msrs) msrs.push_back(hex(m));
    extra = {{"name", e.extra}, {"value", hex(e.extra_value)}, {"msrs", msrs}};
  }
  json defaults = json::object();
  for (const auto& [k, v] : e.defaults) defaults[k] = v;
  json set = json::object();
  for (const auto& [k, v] : e.set) set[k] = v;
  auto opt_string = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
  return {{"name", e.name},
          {"code", hex(e.code)},
          {"code2", e.code2 ? json(hex(*e.code2)) : json(nullptr)},
          {"umask", e.fixed_umask ? json(hex(*e.fixed_umask)) : json(nullptr)},
          {"umask2", e.umask2 ? json(hex(e.umask2)) : json(nullptr)},
          {"set", set},
          {"defaults", defaults},
          {"encoding", fields_of(e)},
          {"desc", e.description},
          {"counters", general_counters(e, pmu)},
          {"fixed", e.fixed ? json(*e.fixed) : json(nullptr)},
          {"generic", opt_string(e.generic)},
          {"unit_masks", masks},
          {"combinable", e.unit_masks ? e.unit_masks->combinable : false},
          {"modifiers", e.modifiers},
          {"cpus", e.cpus},
          {"aliases", e.aliases},
          {"extra", extra},
          {"exclusive", e.exclusive},
          {"deprecated", e.deprecated},
          {"period", e.period ? json(e.period) : json(nullptr)},
          {"precise", e.precise},
          {"errata", opt_string(e.errata)},
          {"topic", opt_string(e.topic)},
          {"pmu", pmu.name},
          {"source", e.source.str()}};
}

}  // namespace

// `pmc list --metrics`: every metric of the generic file, the backend's and the CPU model's:
// the trees (top-down) drawn as trees, the others by group, each with its formula, the events it
// needs and whether this machine can compute it; then every group with its size.
namespace {

void print_metric(const pmc::MetricDef& m, const std::string& why, int depth) {
  const std::string indent(static_cast<std::size_t>(2 + 2 * depth), ' ');
  std::string names = m.name;
  for (const auto& a : m.aliases) names += ", " + a;
  print("{}{} [{}]{}\n", indent, names, m.unit, m.by_default ? " (shown by default)" : "");
  const std::string more = indent + "    ";
  if (!m.description.empty()) print("{}{}\n", more, m.description);
  print("{}= {}\n", more, m.formula);
  std::string events;
  for (const auto& in : m.events)
    events += (events.empty() ? "" : ", ") +
              (in.variable == in.event ? in.event : fmt::format("{} = {}", in.variable, in.event));
  print("{}events: {}{}\n", more, events, m.uses_duration ? ", duration_time" : "");
  if (!m.constants.empty()) print("{}constants: {}\n", more, fmt::format("{}", fmt::join(m.constants, ", ")));
  if (!m.threshold.empty()) print("{}bottleneck when: {}\n", more, m.threshold);
  if (m.groups.size() > 1) print("{}groups: {}\n", more, fmt::format("{}", fmt::join(m.groups, ", ")));
  if (!why.empty()) print("{}not available here: {}\n", more, why);
}

void print_subtree(const pmc::MetricCatalog& catalog, const pmc::MetricDef& node, int depth,
                   const std::function<std::string(const pmc::MetricDef&)>& why) {
  print_metric(node, why(node), depth);
  for (const auto& m : catalog.metrics())
    if (m.level > 0 && m.parent == node.name && &m != &node) print_subtree(catalog, m, depth + 1, why);
}

}  // namespace

int list_metrics(const Options& o, const pmc::Hal& hal) {
  const pmc::MetricCatalog catalog = pmc::builtin_metrics(hal);
  const pmc::MetricConstants constants = pmc::metric_constants(hal);
  const auto why = [&](const pmc::MetricDef& m) { return pmc::metric_unavailable(hal, m, constants); };
  if (o.json) {
    json out = json::array();
    for (const auto& m : catalog.metrics()) {
      json events = json::array();
      for (const auto& in : m.events) events.push_back({{"variable", in.variable}, {"event", in.event}});
      const std::string reason = why(m);
      json j{{"name", m.name},
             {"aliases", m.aliases},
             {"group", m.group},
             {"groups", m.groups},
             {"formula", m.formula},
             {"unit", m.unit},
             {"description", m.description},
             {"events", events},
             {"constants", m.constants},
             {"backend", m.backend.empty() ? json(nullptr) : json(m.backend)},
             {"default", m.by_default},
             {"available", reason.empty()},
             {"unavailable", reason.empty() ? json(nullptr) : json(reason)},
             {"source", m.source.str()}};
      if (m.level > 0) j["level"] = m.level;
      if (!m.parent.empty()) j["parent"] = m.parent;
      if (!m.threshold.empty()) j["threshold"] = m.threshold;
      out.push_back(std::move(j));
    }
    print("{}\n", out.dump(2));
    return 0;
  }
  std::size_t available = 0;
  for (const auto& m : catalog.metrics()) available += why(m).empty();
  print("{} metrics ({} with every event and constant this CPU has) from {}; pmc stat -M NAME or -M GROUP, "
        "pmc stat --topdown\n",
        catalog.metrics().size(), available, fmt::format("{}", fmt::join(catalog.files(), ", ")));
  const bool trees = std::any_of(catalog.metrics().begin(), catalog.metrics().end(),
                                 [](const pmc::MetricDef& m) { return m.level > 0; });
  if (trees) {
    print("\nTop-down tree (-M TopdownL<N>, or a node's children with -M tma_<node>_group):\n");
    for (const auto& m : catalog.metrics())
      if (m.level > 0 && (m.parent.empty() || !catalog.find(m.parent))) print_subtree(catalog, m, 0, why);
  }
  std::vector<std::string> headers;
  for (const auto& m : catalog.metrics())
    if (m.level == 0 && std::find(headers.begin(), headers.end(), m.group) == headers.end()) headers.push_back(m.group);
  for (const std::string& group : headers) {
    print("\n{}:\n", group.empty() ? "(no group)" : group);
    for (const auto& m : catalog.metrics())
      if (m.level == 0 && m.group == group) print_metric(m, why(m), 0);
  }
  std::vector<std::string> sizes;
  for (const std::string& g : catalog.groups()) sizes.push_back(fmt::format("{} ({})", g, catalog.select(g).size()));
  print("\nGroups: {}\n", fmt::format("{}", fmt::join(sizes, ", ")));
  return 0;
}

namespace {

// The events of one PMU to list: the CPU's, or one core type's of a hybrid CPU.
struct Section {
  const pmc::PmuInfo* pmu = nullptr;
  const pmc::EventCatalog* catalog = nullptr;
  const pmc::BackendInfo::HybridPart* part = nullptr;  // hybrid CPUs only
  std::vector<const pmc::EventDef*> events;
  std::size_t all = 0, hidden = 0;
  // What a user types: "NAME" for the CPU's own core type, "adl_grt::NAME" for another.
  [[nodiscard]] std::string name_of(const pmc::EventDef& e) const {
    return part && !part->own ? fmt::format("{}::{}", part->name, e.name) : e.name;
  }
};

void print_section(const Options& o, const Section& s) {
  const pmc::PmuInfo& pmu = *s.pmu;
  const std::string cpu_tag = pmu.cpu_tag.empty() ? "" : fmt::format(" [cpu tag {}]", pmu.cpu_tag);
  const std::string on = !s.part ? ""
                                 : fmt::format(" on the {} cores ({}{}{})", s.part->name, s.part->shown,
                                               s.part->perf_pmu.empty() ? "" : ", Linux perf's ", s.part->perf_pmu);
  std::string narrowed;
  if (!o.filters.empty()) narrowed += fmt::format(" match {}", quoted_words(o.filters));
  if (!o.topics.empty()) narrowed += fmt::format(" of topic {}", quoted_words(o.topics));
  if (!o.counter.empty()) narrowed += fmt::format(" for counter {}", o.counter);
  if (narrowed.empty())
    print("{} events for {}{}{}", s.events.size(), pmu.description, cpu_tag, on);
  else
    print("{} of {} events for {}{}{}{}", s.events.size(), s.all, pmu.description, cpu_tag, on, narrowed);
  print("{}\n", s.hidden ? fmt::format(" ({} deprecated hidden: --deprecated)", s.hidden) : std::string());
  // Columns as wide as this listing needs (capped: a long name pushes its own line only).
  std::size_t name_w = 8, fields_w = 8, where_w = 8;
  for (const auto* e : s.events) {
    name_w = std::max(name_w, std::min<std::size_t>(s.name_of(*e).size(), 48));
    fields_w = std::max(fields_w, std::min<std::size_t>(fields_of(*e).size(), 44));
    where_w = std::max(where_w, where_of(*e, pmu).size());
  }
  const std::string* file = nullptr;
  for (const auto* e : s.events) {
    if (!file || *file != e->source.file) {
      file = &e->source.file;
      print("\nfrom {}:\n", *file);
    }
    print("{:<{}} {:<{}} {:<{}} {}{}{}{}\n", s.name_of(*e), name_w, fields_of(*e), fields_w, where_of(*e, pmu), where_w,
          e->description, e->generic.empty() ? "" : fmt::format(" [{}]", e->generic),
          e->exclusive ? " [exclusive]" : "", e->deprecated ? " [deprecated]" : "");
    if (!e->aliases.empty()) print("    aliases: {}\n", fmt::format("{}", fmt::format("{}", fmt::join(e->aliases, ", "))));
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
    if (pmu.cpu_tag.empty() && !e->cpus.empty()) print("    for CPUs: {}\n", fmt::format("{}", fmt::format("{}", fmt::join(e->cpus, ", "))));
  }
}

}  // namespace

// The backend's events for this CPU (each core type's, on a hybrid CPU), narrowed by the words,
// topics and counter asked for, and deprecated ones only when asked; then the HAL events (tsc,
// the OS software events), which count with any backend or none (they have no topic or counter:
// not listed when those narrow the list).
int cmd_list(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  if (o.list_metrics) return list_metrics(o, hal);
  const pmc::BackendInfo* backend = hal.backend();
  std::vector<Section> sections;
  if (backend && backend->hybrid.empty()) sections.push_back({&hal.pmu(), &hal.events(), nullptr, {}, 0, 0});
  if (backend)
    for (const auto& part : backend->hybrid)
      sections.push_back({&hal.pmu(part.name), &hal.events(part.name), &part, {}, 0, 0});
  for (auto& s : sections) {
    s.events = s.catalog->for_cpu(s.pmu->cpu_tag);
    s.all = s.events.size();
  }
  std::vector<pmc::HalEventDescription> builtin = pmc::hal_events();
  const std::size_t all_builtin = builtin.size();
  const std::string who = backend ? fmt::format("backend {}", backend->name) : std::string("backend");
  if (!backend && (!o.topics.empty() || !o.counter.empty()))
    throw pmc::Error(pmc::errc::not_supported,
                     fmt::format("--topic and --counter select PMU events, and there are none: {}", hal.why()));
  std::size_t hidden = 0, left = 0, of_topic = 0;
  for (auto& s : sections) {
    if (!o.deprecated) hidden += s.hidden = std::erase_if(s.events, [](const pmc::EventDef* e) { return e->deprecated; });
    if (!o.topics.empty())
      std::erase_if(s.events, [&](const pmc::EventDef* e) {
        return std::none_of(o.topics.begin(), o.topics.end(), [&](const std::string& t) {
          return t.size() == e->topic.size() && icontains(e->topic, t);
        });
      });
    of_topic += s.events.size();
    if (!o.counter.empty()) {
      const CounterFilter f = counter_filter(o.counter, *s.pmu);
      std::erase_if(s.events, [&](const pmc::EventDef* e) { return !f.accepts(*e, *s.pmu); });
    }
    if (!o.filters.empty())
      std::erase_if(s.events, [&](const pmc::EventDef* e) { return !matches_filter(*e, o.filters); });
    left += s.events.size();
  }
  if (!o.topics.empty() && of_topic == 0) {
    std::vector<std::string> topics;  // the ones there are, for the message
    for (const auto& s : sections)
      for (const auto* e : s.catalog->for_cpu(s.pmu->cpu_tag))
        if (!e->topic.empty() && std::find(topics.begin(), topics.end(), e->topic) == topics.end())
          topics.push_back(e->topic);
    throw pmc::Error(pmc::errc::not_found,
                     fmt::format("no event of {} has topic {} (topics here: {})", who, quoted_words(o.topics),
                                 topics.empty() ? std::string("none") : fmt::format("{}", fmt::format("{}", fmt::join(topics, ", ")))));
  }
  if (!o.topics.empty() || !o.counter.empty()) builtin.clear();
  if (!o.filters.empty())
    std::erase_if(builtin, [&](const pmc::HalEventDescription& e) { return !matches_filter(e, o.filters); });
  if (left == 0 && builtin.empty()) {
    std::string what = backend ? fmt::format("no event of {} matches {}", who, quoted_words(o.filters))
                               : fmt::format("no HAL event matches {} (and no backend matches this CPU)",
                                             quoted_words(o.filters));
    if (o.filters.empty()) what = fmt::format("no event of {} can use counter {}", who, o.counter);
    if (hidden) what += fmt::format(" ({} deprecated events are hidden: --deprecated lists them)", hidden);
    throw pmc::Error(pmc::errc::not_found, what);
  }
  if (!backend)
    print_to(stderr, "pmc: no PMU events: {}; a simulated PMU's events: --cpuid-dump (pentium-iii, core2, ...) or "
                  "--backend\n",
          hal.why());
  if (o.json) {
    json out = json::array();
    for (const auto& s : sections)
      for (const auto* e : s.events) {
        json j = event_json(*e, *s.pmu, *s.catalog);
        if (s.part) {
          j["part"] = s.part->name;
          j["perf_pmu"] = s.part->perf_pmu.empty() ? json(nullptr) : json(s.part->perf_pmu);
          j["core_type"] = hex(s.part->core_type);
        }
        out.push_back(std::move(j));
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
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (i) print("\n");
    print_section(o, sections[i]);
  }
  if (!builtin.empty()) {
    if (backend) print("\n");
    if (o.filters.empty())
      print("{} HAL events, counted by pmchal with any backend or none:\n\n", builtin.size());
    else
      print("{} of {} HAL events, counted by pmchal with any backend or none, match {}:\n\n", builtin.size(),
                 all_builtin, quoted_words(o.filters));
    for (const auto& e : builtin)
      print("{:<32} {:<6} {}{}\n", e.name, e.unit, e.description,
                 e.alias.empty() ? "" : fmt::format(" [also {}]", e.alias));
  }
  return 0;
}

}  // namespace pmc_cli
