// The emulation's rules (docs/emulation.md, "Activity and signals, per model"): which of
// cachegrind's quantities drive which device-model signals. They are data, so that the core names
// no model: data/emulation.toml (installed as share/pmchal/emulation/generic.toml) holds the
// generic signals every model counts and the notes the rules share; each model's own signals are
// in its folder, sim/models/<model>/emulation.toml (share/pmchal/emulation/<model>.toml), looked
// up by the PMU's device_model. A rule's conditions are data too, evaluated here generically.
#include "cachegrind.hpp"
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
enum class CacheCondition { none, ll_is_l2 };

constexpr std::string_view kL2Reason =
    "it counts L2 misses or requests reaching the last level; the emulation simulates two cache levels (L1 and the "
    "last), and this CPU's last level is its L3, with an L2 between";

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
    if (*when != "ll_is_l2")
      detail::fail_at(detail::node_of(t, "when"), errc::invalid_argument,
                      fmt::format("unknown condition '{}' (expected: ll_is_l2)", *when));
    r.when = CacheCondition::ll_is_l2;
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
  const toml::table top = detail::parse_toml_file(file);
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
std::vector<Rule> rules_for(std::string_view model) {
  const std::filesystem::path dir = default_paths().data / "emulation";
  Notes notes;
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

}  // namespace

std::string SignalMap::describe() const {
  std::string out;
  for (const EmulatedSignal& s : signals) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.signal, terms_text(s.terms));
  return out;
}

SignalMap emulated_signals(const Hal& hal, const CacheHierarchy& caches) {
  (void)hal.require_backend();
  SignalMap map;
  map.model = hal.pmu().device_model;
  const CpuInfo& cpu = hal.cpu();
  for (Rule& r : rules_for(map.model)) {
    if (!on_this_cpu(r, cpu)) continue;
    if (r.when == CacheCondition::ll_is_l2 && caches.ll_level != 2) {
      map.withheld.push_back({std::move(r.signal.signal), std::string(kL2Reason)});
      continue;
    }
    map.signals.push_back(std::move(r.signal));
  }
  return map;
}

}  // namespace pmc
