// The emulation's rules (docs/emulation.md, "Activity and signals, per model"): which of
// cachegrind's quantities drive which device-model signals. They are data, so that the core names
// no model: data/emulation.toml (installed as share/pmchal/emulation/generic.toml) holds the
// generic signals every model counts and the notes the rules share; each model's own signals are
// in its folder, sim/models/<model>/emulation.toml (share/pmchal/emulation/<model>.toml), looked
// up by the PMU's device_model. A rule's conditions are data too, evaluated here generically.
#include "cachegrind.hpp"
#include "catalog_rules.hpp"
#include "toml_util.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/paths.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

namespace {

// A condition on the simulated caches: where it fails, the signal is withheld (and its events
// refused with the reason) rather than left out, since the model counts it on such CPUs too.
enum class CacheCondition { none, ll_is_l2, ll_is_l3 };

constexpr std::string_view kL2Reason =
    "it counts L2 misses or requests reaching the last level; the emulation simulates two cache levels (L1 and the "
    "last), and this CPU's last level is its L3, with an L2 between";

constexpr std::string_view kL3Reason =
    "it counts L3 misses, and the simulated last level stands for this CPU's L2 (the CPU description gives no L3: "
    "see the caches in the report)";

struct Rule {
  EmulatedSignal signal;
  CacheCondition when = CacheCondition::none;
  // The CPUs on which the model's signal is this one (none given: every CPU); elsewhere the rule
  // is left out, because there the signal is another event's (or none).
  std::vector<std::string> vendors;
  std::optional<std::int64_t> family_min;
};

using Notes = std::map<std::string, std::string, std::less<>>;

constexpr std::string_view kRuleContext = "a [[signal]] rule";

std::vector<Quantity> read_quantities(const toml::table& t) {
  const toml::node& node = detail::node_of(t, "quantities");
  const toml::array* list = node.as_array();
  if (!list) detail::fail_at(node, errc::invalid_argument, "'quantities' must be an array of cachegrind event names");
  if (list->empty()) detail::fail_at(node, errc::invalid_argument, "'quantities' names no cachegrind event");
  std::vector<Quantity> out;
  for (const toml::node& item : *list) {
    const auto name = item.value<std::string>();
    if (!name) detail::fail_at(item, errc::invalid_argument, "a quantity must be a string (a cachegrind event name)");
    const auto q = detail::quantity_of(*name);
    if (!q) {
      std::string known;
      for (std::size_t i = 0; i < kQuantities; ++i)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", quantity_name(static_cast<Quantity>(i)));
      detail::fail_at(item, errc::invalid_argument, fmt::format("unknown quantity '{}' (expected one of: {})", *name, known));
    }
    out.push_back(*q);
  }
  return out;
}

Rule read_rule(const toml::table& t, const Notes& notes) {
  detail::check_keys(t, {"name", "quantities", "meaning", "note", "shared_note", "when", "vendors", "family_min"},
                     kRuleContext);
  Rule r;
  r.signal.signal = *detail::get_string(t, "name", true);
  if (r.signal.signal.empty()) detail::fail_at(detail::node_of(t, "name"), errc::invalid_argument, "'name' is empty");
  if (!t.contains("quantities"))
    throw Error(errc::invalid_argument, fmt::format("{}: {} has no 'quantities'", detail::where_table(t), kRuleContext));
  r.signal.terms = read_quantities(t);
  r.signal.meaning = *detail::get_string(t, "meaning", true);
  const auto note = detail::get_string(t, "note");
  const auto shared = detail::get_string(t, "shared_note");
  if (note && shared)
    detail::fail_at(detail::node_of(t, "shared_note"), errc::invalid_argument,
                    "a rule has 'note' (its own text) or 'shared_note' (a name from [notes]), not both");
  if (note) r.signal.note = *note;
  if (shared) {
    const auto it = notes.find(*shared);
    if (it == notes.end()) {
      std::string known;
      for (const auto& n : notes) known += fmt::format("{}{}", known.empty() ? "" : ", ", n.first);
      detail::fail_at(detail::node_of(t, "shared_note"), errc::invalid_argument,
                      fmt::format("unknown shared note '{}' (the [notes] of data/emulation.toml: {})", *shared,
                                  known.empty() ? "none" : known));
    }
    r.signal.note = it->second;
  }
  if (const auto when = detail::get_string(t, "when")) {
    if (*when != "ll_is_l2" && *when != "ll_is_l3")
      detail::fail_at(detail::node_of(t, "when"), errc::invalid_argument,
                      fmt::format("unknown condition '{}' (expected: ll_is_l2, ll_is_l3)", *when));
    r.when = *when == "ll_is_l2" ? CacheCondition::ll_is_l2 : CacheCondition::ll_is_l3;
  }
  if (const auto vendors = detail::get_strings(t, "vendors")) {
    if (vendors->empty())
      detail::fail_at(detail::node_of(t, "vendors"), errc::invalid_argument,
                      "'vendors' is empty (leave it out for every vendor)");
    r.vendors = *vendors;
  }
  r.family_min = detail::get_int(t, "family_min");
  if (r.family_min && *r.family_min < 0)
    detail::fail_at(detail::node_of(t, "family_min"), errc::invalid_argument, "'family_min' must not be negative");
  return r;
}

// Reads one rules file's [[signal]] rules into `out` (and, from the generic file, its [notes]).
void read_file(const std::filesystem::path& file, bool generic, Notes& notes, std::vector<Rule>& out) {
  const toml::table top = detail::parse_toml_file(file, InputKind::emulation_rules);
  if (generic)
    detail::check_keys(top, {"notes", "signal"}, "the emulation's generic rules");
  else
    detail::check_keys(top, {"signal"}, "a model's emulation rules (its notes are its rules' 'note')");
  if (const toml::node* n = top.get("notes")) {
    const toml::table* table = n->as_table();
    if (!table) detail::fail_at(*n, errc::invalid_argument, "'notes' must be a table of texts");
    for (const auto& [key, value] : *table) {
      const auto text = value.value<std::string>();
      if (!text) detail::fail_at(value, errc::invalid_argument, fmt::format("note '{}' must be a string", key.str()));
      notes.emplace(std::string(key.str()), *text);
    }
  }
  const toml::node* list = top.get("signal");
  if (!list) return;
  const toml::array* rules = list->as_array();
  if (!rules) detail::fail_at(*list, errc::invalid_argument, "'signal' must be an array of tables ([[signal]])");
  for (const toml::node& item : *rules) {
    const toml::table* t = item.as_table();
    if (!t) detail::fail_at(item, errc::invalid_argument, "a [[signal]] rule must be a table");
    Rule r = read_rule(*t, notes);
    if (std::any_of(out.begin(), out.end(), [&](const Rule& o) { return o.signal.signal == r.signal.signal; }))
      detail::fail_at(detail::node_of(*t, "name"), errc::invalid_argument,
                      fmt::format("signal '{}' has a rule already", r.signal.signal));
    out.push_back(std::move(r));
  }
}

// The generic rules, then the model's own (when it has a file: a model may count the generic
// signals only), in the files' order.
std::vector<Rule> rules_for(std::string_view model, Notes& notes) {
  const std::filesystem::path dir = default_paths().data / "emulation";
  std::vector<Rule> out;
  read_file(dir / "generic.toml", true, notes, out);
  if (!model.empty() && model.find('/') == std::string_view::npos) {
    const std::filesystem::path own = dir / (std::string(model) + ".toml");
    std::error_code ec;
    if (std::filesystem::is_regular_file(own, ec)) read_file(own, false, notes, out);
  }
  return out;
}

bool on_this_cpu(const Rule& r, const CpuInfo& cpu) {
  if (!r.vendors.empty() && std::find(r.vendors.begin(), r.vendors.end(), cpu.vendor) == r.vendors.end())
    return false;
  return !r.family_min || std::int64_t{cpu.family} >= *r.family_min;
}

std::string terms_text(const std::vector<Quantity>& terms) {
  std::string out;
  for (Quantity q : terms) out += (out.empty() ? "" : " + ") + std::string(quantity_name(q));
  return out;
}

// Where a rule's cache condition fails: the reason its signal is withheld ("" where it holds).
std::string_view withheld_because(const Rule& r, const CacheHierarchy& caches) {
  if (r.when == CacheCondition::ll_is_l2 && caches.ll_level != 2) return kL2Reason;
  if (r.when == CacheCondition::ll_is_l3 && caches.ll_level != 3) return kL3Reason;
  return {};
}

// Reads one catalog event's entry as a [[signal]] rule: its signal, or the reason it is withheld.
std::optional<std::string> read_event_rule(const toml::table& t, const Notes& notes, const CacheHierarchy& caches,
                                           EmulatedSignal& out) {
  Rule r = read_rule(t, notes);
  if (!r.vendors.empty() || r.family_min)
    detail::fail_at(detail::node_of(t, r.vendors.empty() ? "family_min" : "vendors"), errc::invalid_argument,
                    "a catalog event's rule takes no CPU condition (its catalog is the condition)");
  out = std::move(r.signal);
  out.event_signal = true;
  const std::string_view why = withheld_because(r, caches);
  if (!why.empty()) return std::string(why);
  return std::nullopt;
}

}  // namespace

std::string SignalMap::describe() const {
  std::string out;
  std::size_t events = 0;
  for (const EmulatedSignal& s : signals) {
    if (s.event_signal) {
      ++events;
      continue;
    }
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.signal, terms_text(s.terms));
  }
  if (events)
    out += fmt::format("{}and {} signal{} named after the catalog events they count", out.empty() ? "" : ", ", events,
                       events == 1 ? "" : "s");
  return out;
}

SignalMap emulated_signals(const Hal& hal, const CacheHierarchy& caches) {
  (void)hal.require_backend();
  SignalMap map;
  map.model = hal.pmu().device_model;
  const CpuInfo& cpu = hal.cpu();
  Notes notes;
  for (Rule& r : rules_for(map.model, notes)) {
    if (!on_this_cpu(r, cpu)) continue;
    const std::string_view why = withheld_because(r, caches);
    if (!why.empty()) {
      map.withheld.push_back({std::move(r.signal.signal), std::string(why)});
      continue;
    }
    map.signals.push_back(std::move(r.signal));
  }
  // The catalog events' own signals: sim/models/<model>/emulation-events.toml.
  if (!map.model.empty() && map.model.find('/') == std::string::npos) {
    const std::filesystem::path file = default_paths().data / "emulation" / (map.model + "-events.toml");
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec))
      detail::add_catalog_rules(hal, file, map, [&](const toml::table& t, EmulatedSignal& s) {
        return read_event_rule(t, notes, caches, s);
      });
  }
  return map;
}

}  // namespace pmc
