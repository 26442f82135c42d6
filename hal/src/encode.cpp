// The shared encoder: event string + catalog + register format -> event-select value.
// Modifier meanings follow libpfm4: u -> usr, k -> os, e -> edge, i -> inv, c -> cmask,
// t -> any. Backends call this and add their own rules.
#include <pmc/backend.hpp>
#include "text.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace pmc {

namespace {

using detail::iequal;
using detail::join;

struct FieldModifier {
  const char* modifier;
  const char* field;
  bool boolean;
};
constexpr FieldModifier kFieldModifiers[] = {
    {"u", "usr", true}, {"k", "os", true}, {"e", "edge", true}, {"i", "inv", true}, {"c", "cmask", false}, {"t", "any", true},
};

const FieldModifier* field_modifier(std::string_view name) {
  for (const auto& f : kFieldModifiers)
    if (name == f.modifier) return &f;
  return nullptr;
}

}  // namespace

Encoding encode_with_catalog(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu) {
  auto fail = [&](errc code, std::size_t column, std::string_view what) -> Error {
    return Error(code, event_error(spec, column, what));
  };
  if (!spec.pmu.empty() && spec.pmu != pmu.name)
    throw fail(errc::not_found, 1, fmt::format("PMU '{}' is not the active backend '{}'", spec.pmu, pmu.name));
  std::size_t name_column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;

  // 1. The event: a catalog name, or a generic name.
  std::vector<std::string> masks = spec.unit_masks;
  std::vector<std::size_t> mask_columns = spec.unit_mask_columns;
  const EventDef* def = catalog.find(spec.name, pmu.cpu_tag);
  if (!def) {
    std::vector<std::string> generic_masks;
    def = catalog.find_generic(spec.name, pmu.cpu_tag, &generic_masks);
    if (def) {
      if (!masks.empty())
        throw fail(errc::unit_mask, mask_columns.front(),
                   fmt::format("generic event '{}' takes no unit masks (it stands for {})", spec.name, def->name));
      masks = generic_masks;
      mask_columns.assign(masks.size(), 0);
    }
  }
  if (!def) {
    if (const EventDef* elsewhere = catalog.find(spec.name)) {
      // Every definition of the name (one per set of CPUs, docs/event-format.md) says where.
      std::vector<std::string> cpus;
      for (const auto& e : catalog.events()) {
        bool named = iequal(e.name, spec.name);
        for (const auto& a : e.aliases) named = named || iequal(a, spec.name);
        if (!named) continue;
        for (const auto& c : e.cpus)
          if (std::find(cpus.begin(), cpus.end(), c) == cpus.end()) cpus.push_back(c);
      }
      throw fail(errc::not_found, name_column,
                 fmt::format("event {} does not exist on this CPU ({}); it exists on: {}", elsewhere->name,
                             pmu.cpu_tag, join(cpus)));
    }
    throw fail(errc::not_found, name_column,
               fmt::format("unknown event '{}' for backend {} (see 'pmc list')", spec.name, pmu.name));
  }

  const RegisterFormat& format = catalog.format();
  Encoding enc;
  enc.event = spec.text;
  enc.def = def;
  std::uint64_t config = 0;
  format.set(config, "event", def->code);

  // 2. Unit masks.
  std::uint64_t umask = def->fixed_umask.value_or(0);
  std::vector<const UnitMask*> chosen;
  if (!masks.empty() && !def->unit_masks)
    throw fail(errc::unit_mask, mask_columns.front(), fmt::format("event {} takes no unit masks", def->name));
  if (def->unit_masks) {
    const UnitMaskGroup& group = *def->unit_masks;
    std::vector<std::string> names;
    for (const auto& m : group.masks) names.push_back(m.name);
    const std::vector<std::string>& wanted = masks.empty() ? group.default_masks : masks;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      std::size_t column = masks.empty() ? 0 : mask_columns[i];
      auto it = std::find_if(group.masks.begin(), group.masks.end(),
                             [&](const UnitMask& m) { return iequal(m.name, wanted[i]); });
      if (it == group.masks.end())
        throw fail(errc::unit_mask, column,
                   fmt::format("unknown unit mask '{}' for event {} (valid: {})", wanted[i], def->name, join(names)));
      if (std::find(chosen.begin(), chosen.end(), &*it) != chosen.end())
        throw fail(errc::unit_mask, column, fmt::format("unit mask '{}' given twice", it->name));
      if (!group.combinable && !chosen.empty())
        throw fail(errc::unit_mask, column,
                   fmt::format("unit masks {} and {} of event {} cannot be combined (choose one of: {})",
                               chosen.front()->name, it->name, def->name, join(names)));
      chosen.push_back(&*it);
      umask |= it->value;
    }
    if (chosen.empty())
      throw fail(errc::unit_mask, name_column,
                 fmt::format("event {} needs a unit mask (one of: {})", def->name, join(names)));
    std::sort(chosen.begin(), chosen.end());  // declaration order (pointers into one vector)
  }
  if (def->unit_masks || def->fixed_umask || umask != 0) format.set(config, "umask", umask);

  // 3. Modifiers.
  std::map<std::string, std::uint64_t, std::less<>> values;
  for (const auto& m : spec.modifiers) {
    if (std::find(def->modifiers.begin(), def->modifiers.end(), m.name) == def->modifiers.end())
      throw fail(errc::attribute, m.column,
                 fmt::format("unknown modifier '{}' for event {} (accepted: {})", m.name, def->name,
                             def->modifiers.empty() ? std::string("none") : join(def->modifiers)));
    if (values.count(m.name)) throw fail(errc::attribute, m.column, fmt::format("modifier '{}' given twice", m.name));
    const FieldModifier* fm = field_modifier(m.name);
    std::uint64_t v = m.value.value_or(1);
    if (fm && fm->boolean && v > 1)
      throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' takes 0 or 1, not {}", m.name, v));
    if (fm && !fm->boolean) {
      if (!m.value) throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' needs a value ({}=N)", m.name, m.name));
      auto field = format.field(fm->field);
      if (field && v > field->max_value())
        throw fail(errc::attribute_value, m.column,
                   fmt::format("{}={} does not fit the {}-bit {} field (0-{})", m.name, v, field->width, fm->field,
                               field->max_value()));
    }
    values[m.name] = v;
  }
  // Privilege: default user + kernel; naming one level alone selects just that level; an
  // explicit 0 turns a level off and leaves the other as it was.
  bool has_u = values.count("u"), has_k = values.count("k");
  std::uint64_t u = has_u ? values["u"] : (has_k && values["k"] == 1 ? 0 : 1);
  std::uint64_t k = has_k ? values["k"] : (has_u && values["u"] == 1 ? 0 : 1);
  if (u == 0 && k == 0)
    throw fail(errc::feature_combination, 0, "counts in neither user nor kernel mode (u=0 and k=0)");
  bool accepts_u = std::find(def->modifiers.begin(), def->modifiers.end(), "u") != def->modifiers.end();
  if (accepts_u) {
    values["u"] = u;
    values["k"] = k;
  }
  for (const auto& name : def->modifiers) {
    const FieldModifier* fm = field_modifier(name);
    if (!fm) continue;
    std::uint64_t v = values.count(name) ? values[name] : 0;
    values[name] = v;
    if (v != 0 || format.field(fm->field)) format.set(config, fm->field, v);
  }

  // 4. Counters.
  if (def->counters.empty()) {
    for (const auto& c : pmu.counters)
      if (c.kind == CounterKind::general) enc.counters.push_back(c.index);
  } else {
    for (unsigned c : def->counters)
      if (pmu.general(c)) enc.counters.push_back(c);
  }
  if (def->fixed && pmu.fixed(*def->fixed)) enc.fixed = def->fixed;
  if (enc.counters.empty() && !enc.fixed)
    throw fail(errc::no_counter, name_column,
               fmt::format("event {} can use no counter of this PMU", def->name));

  // 5. Canonical string: pmu::NAME:MASKS in declaration order:modifiers in the event's order.
  enc.canonical = fmt::format("{}::{}", pmu.name, def->name);
  for (const UnitMask* m : chosen) enc.canonical += ":" + m->name;
  for (const auto& name : def->modifiers)
    if (values.count(name)) enc.canonical += fmt::format(":{}={}", name, values[name]);
  enc.config = config;
  return enc;
}

}  // namespace pmc
