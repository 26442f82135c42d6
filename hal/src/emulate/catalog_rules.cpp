// The catalog events' own rules (docs/emulation.md, "Catalog events, per model"): per catalog
// file, which of its events (by exact name, "EVENT:MASK" for a unit mask) cachegrind's quantities
// drive, as signals named after them, and which cannot be emulated and why. The files are data
// generated from the catalogs (scripts/gen_emulation_events.py); this reads them generically.
#include "catalog_rules.hpp"

#include "text.hpp"
#include "toml_util.hpp"

#include <pmc/catalog.hpp>
#include <pmc/error.hpp>
#include <pmc/event_spec.hpp>
#include <pmc/hal.hpp>
#include <pmc/pmu.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

namespace {

// The catalog event an entry names on this CPU, when it is defined in that catalog file and has
// the unit mask the entry names (if any); nullptr otherwise.
const EventDef* entry_event(const Hal& hal, std::string_view name, std::string_view catalog) {
  const auto colon = name.find(':');
  const EventDef* def = hal.events().find(name.substr(0, colon), hal.pmu().cpu_tag);
  if (!def || std::filesystem::path(def->source.file).filename() != catalog) return nullptr;
  if (colon == std::string_view::npos) return def;
  if (!def->unit_masks) return nullptr;
  const std::string_view mask = name.substr(colon + 1);
  const auto& masks = def->unit_masks->masks;
  return std::any_of(masks.begin(), masks.end(), [&](const UnitMask& m) { return iequal(m.name, mask); }) ? def
                                                                                                          : nullptr;
}

const toml::array& array_of(const toml::table& t, std::string_view key) {
  const toml::node& n = node_of(t, key);
  const toml::array* a = n.as_array();
  if (!a) fail_at(n, errc::invalid_argument, fmt::format("'{}' must be an array of inline tables", key));
  return *a;
}

const toml::table& table_of(const toml::node& n) {
  const toml::table* t = n.as_table();
  if (!t) fail_at(n, errc::invalid_argument, "an entry must be a table ({ name = ..., ... })");
  return *t;
}

}  // namespace

void add_catalog_rules(const Hal& hal, const std::filesystem::path& file, SignalMap& map, const EventRuleReader& read) {
  const toml::table top = parse_toml_file(file, InputKind::emulation_rules);
  check_keys(top, {"reasons", "catalog"}, "a model's catalog-event rules");
  std::map<std::string, std::string, std::less<>> reasons;
  if (const toml::node* n = top.get("reasons")) {
    const toml::table* t = n->as_table();
    if (!t) fail_at(*n, errc::invalid_argument, "'reasons' must be a table of texts");
    for (const auto& [key, value] : *t) {
      const auto text = value.value<std::string>();
      if (!text) fail_at(value, errc::invalid_argument, fmt::format("reason '{}' must be a string", key.str()));
      reasons.emplace(std::string(key.str()), *text);
    }
  }
  const toml::node* list = top.get("catalog");
  if (!list) return;
  const toml::array* catalogs = list->as_array();
  if (!catalogs) fail_at(*list, errc::invalid_argument, "'catalog' must be an array of tables ([[catalog]])");
  // The catalog files loaded for this Hal: the others' entries cannot apply.
  std::vector<std::string> loaded;
  for (const std::string& f : hal.events().files()) loaded.push_back(std::filesystem::path(f).filename().string());
  auto known = [&](const std::string& name) {
    return std::any_of(map.signals.begin(), map.signals.end(), [&](const EmulatedSignal& s) { return s.signal == name; }) ||
           std::any_of(map.withheld.begin(), map.withheld.end(), [&](const WithheldSignal& s) { return s.signal == name; });
  };
  for (const toml::node& item : *catalogs) {
    const toml::table& cat = table_of(item);
    check_keys(cat, {"file", "events", "cannot"}, "a [[catalog]] table");
    const std::string catalog = *get_string(cat, "file", true);
    if (std::find(loaded.begin(), loaded.end(), catalog) == loaded.end()) continue;
    if (cat.contains("events")) {
      for (const toml::node& e : array_of(cat, "events")) {
        const toml::table& t = table_of(e);
        const std::string name = *get_string(t, "name", true);
        if (!entry_event(hal, name, catalog)) continue;
        EmulatedSignal s;
        const auto withheld = read(t, s);
        if (known(s.signal))
          fail_at(node_of(t, "name"), errc::invalid_argument, fmt::format("signal '{}' has a rule already", s.signal));
        if (withheld)
          map.withheld.push_back({std::move(s.signal), *withheld});
        else
          map.signals.push_back(std::move(s));
      }
    }
    if (cat.contains("cannot")) {
      for (const toml::node& e : array_of(cat, "cannot")) {
        const toml::table& t = table_of(e);
        check_keys(t, {"name", "reason"}, "a 'cannot' entry");
        const std::string name = *get_string(t, "name", true);
        const std::string reason = *get_string(t, "reason", true);
        const auto it = reasons.find(reason);
        if (it == reasons.end())
          fail_at(node_of(t, "reason"), errc::invalid_argument,
                  fmt::format("unknown reason '{}' (the file's [reasons] name them)", reason));
        if (entry_event(hal, name, catalog)) map.refused.push_back({name, it->second});
      }
    }
  }
}

std::string catalog_event_key(const Hal& hal, std::string_view event) {
  const EventSpec spec = parse_event(event);
  const EventDef* def = hal.events().find(spec.name, hal.pmu().cpu_tag);
  if (!def) return {};
  std::string key = def->name;
  if (def->unit_masks)
    for (const std::string& m : spec.unit_masks)
      for (const UnitMask& u : def->unit_masks->masks)
        if (iequal(u.name, m)) key += ":" + u.name;
  return key;
}

}  // namespace pmc::detail
