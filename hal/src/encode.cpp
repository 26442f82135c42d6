// The shared encoder: event string + catalog (register format, declared modifiers) -> the
// event-select value. Modifier meanings come from the catalog ([modifier.NAME]) or the built-in
// libpfm4 set (u -> usr, k -> os, e -> edge, i -> inv, c -> cmask, t -> any). Backends call
// this and add their own rules.
#include <pmc/sdk/backend.hpp>

#include "text.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace pmc {

namespace {

using detail::iequal;
using detail::join;

bool accepts(const EventDef& def, std::string_view modifier) {
  return std::find(def.modifiers.begin(), def.modifiers.end(), modifier) != def.modifiers.end();
}

bool has_unit_mask(const EventDef& def, std::string_view name) {
  if (!def.unit_masks) return false;
  return std::any_of(def.unit_masks->masks.begin(), def.unit_masks->masks.end(),
                     [&](const UnitMask& m) { return iequal(m.name, name); });
}

}  // namespace

namespace {

Encoding encode_definition(const EventSpec& spec, const EventDef& def_in, std::vector<std::string> masks,
                           std::vector<std::size_t> mask_columns, std::string generic, bool by_generic,
                           const EventCatalog& catalog, const PmuInfo& pmu);

}  // namespace

Encoding encode_event(const EventSpec& spec, const EventDef& def, const EventCatalog& catalog, const PmuInfo& pmu) {
  Encoding e = encode_definition(spec, def, spec.unit_masks, spec.unit_mask_columns, {}, false, catalog, pmu);
  e.def = nullptr;  // `def` is the caller's: it may not outlive this call
  return e;
}

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
  std::string generic;
  const EventDef* def = catalog.find(spec.name, pmu.cpu_tag);
  bool by_generic = false;
  if (!def) {
    std::vector<std::string> generic_masks;
    def = catalog.find_generic(spec.name, pmu.cpu_tag, &generic_masks);
    if (def) {
      by_generic = true;
      generic = std::string(detail::perf_generic_name(spec.name));
      std::transform(generic.begin(), generic.end(), generic.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      // Bare words a generic event takes are its flag modifiers (":h"); unit masks it takes none.
      for (std::size_t i = 0; i < masks.size(); ++i) {
        const ModifierDef* m = catalog.modifier(masks[i]);
        if (!m || m->kind != ModifierDef::Kind::flag || !accepts(*def, masks[i]))
          throw fail(errc::unit_mask, mask_columns[i],
                     fmt::format("generic event '{}' takes no unit masks (it stands for {})", spec.name, def->name));
      }
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
      // The tags, then what each stands for ("p5mmx (p5mmx: Pentium with MMX ...)").
      std::vector<std::string> what;
      for (const auto& c : cpus)
        for (const auto& t : catalog.cpu_tags())
          if (t.name == c && !t.description.empty()) what.push_back(fmt::format("{}: {}", c, t.description));
      std::string where = join(cpus);
      if (!what.empty()) where += fmt::format(" ({})", join(what, "; "));
      throw fail(errc::not_found, name_column,
                 fmt::format("event {} does not exist on this CPU ({}); it exists on: {}", elsewhere->name,
                             pmu.cpu_tag, where));
    }
    throw fail(errc::not_found, name_column,
               fmt::format("unknown event '{}' for backend {} (see 'pmc list')", spec.name, pmu.name));
  }

  return encode_definition(spec, *def, std::move(masks), std::move(mask_columns), std::move(generic), by_generic,
                           catalog, pmu);
}

namespace {

Encoding encode_definition(const EventSpec& spec, const EventDef& def_in, std::vector<std::string> masks,
                           std::vector<std::size_t> mask_columns, std::string generic, bool by_generic,
                           const EventCatalog& catalog, const PmuInfo& pmu) {
  auto fail = [&](errc code, std::size_t column, std::string_view what) -> Error {
    return Error(code, event_error(spec, column, what));
  };
  const std::size_t name_column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
  const EventDef* def = &def_in;

  // Bare words that are not the event's unit masks but flag modifiers it accepts (":h", ":pc").
  std::vector<EventModifier> given = spec.modifiers;
  {
    std::vector<std::string> kept;
    std::vector<std::size_t> kept_columns;
    for (std::size_t i = 0; i < masks.size(); ++i) {
      const ModifierDef* m = catalog.modifier(masks[i]);
      const bool flag = m && m->refusal.empty() && m->kind == ModifierDef::Kind::flag && accepts(*def, masks[i]);
      if (flag && !has_unit_mask(*def, masks[i])) {
        given.push_back(EventModifier{masks[i], std::nullopt, by_generic ? 0 : mask_columns[i]});
      } else {
        kept.push_back(masks[i]);
        kept_columns.push_back(mask_columns[i]);
      }
    }
    if (by_generic) {
      kept.clear();
      kept_columns.clear();
      std::vector<std::string> generic_masks;
      (void)catalog.find_generic(spec.name, pmu.cpu_tag, &generic_masks);
      kept = generic_masks;
      kept_columns.assign(kept.size(), 0);
    }
    masks = std::move(kept);
    mask_columns = std::move(kept_columns);
  }

  const RegisterFormat& format = catalog.format();
  Encoding enc;
  enc.event = spec.text;
  enc.def = def;
  enc.name = def->name;
  enc.merge = def->merge;
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
  if (generic.empty()) {
    if (masks.empty()) generic = def->generic;
    if (generic.empty() && chosen.size() == 1) generic = chosen.front()->generic;
  }
  enc.generic = generic;

  // 3. Modifiers: each one the event accepts, once; a modifier this PMU does not have is refused
  //    with the reason its data file gives.
  std::map<std::string, std::uint64_t, std::less<>> values;
  for (const auto& m : given) {
    const ModifierDef* md = catalog.modifier(m.name);
    if (md && !md->refusal.empty())
      throw fail(errc::attribute, m.column, fmt::format("modifier '{}' refused: {}", m.name, md->refusal));
    if (!md || !accepts(*def, m.name))
      throw fail(errc::attribute, m.column,
                 fmt::format("unknown modifier '{}' for event {} (accepted: {})", m.name, def->name,
                             def->modifiers.empty() ? std::string("none") : join(def->modifiers)));
    if (values.count(m.name)) throw fail(errc::attribute, m.column, fmt::format("modifier '{}' given twice", m.name));
    std::uint64_t v = m.value.value_or(1);
    if (md->kind != ModifierDef::Kind::value && v > 1)
      throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' takes 0 or 1, not {}", m.name, v));
    if (md->kind == ModifierDef::Kind::value) {
      if (!m.value) throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' needs a value ({}=N)", m.name, m.name));
      auto field = md->field.empty() ? std::nullopt : format.field(md->field);
      const std::optional<std::uint64_t> max = md->max ? md->max : field ? std::optional(field->max_value()) : std::nullopt;
      if (max && v > *max)
        throw fail(errc::attribute_value, m.column,
                   field ? fmt::format("{}={} does not fit the {}-bit {} field (0-{})", m.name, v, field->width(),
                                       md->field, *max)
                         : fmt::format("{}={} is above the largest value {}", m.name, v, *max));
    }
    values[m.name] = v;
  }
  // Privilege (the user/kernel pair): default both; naming one level alone selects just that
  // level; an explicit 0 turns a level off and leaves the other as it was.
  const ModifierDef* user = nullptr;
  const ModifierDef* kernel = nullptr;
  for (const auto& name : def->modifiers)
    if (const ModifierDef* md = catalog.modifier(name); md && md->refusal.empty()) {
      if (md->kind == ModifierDef::Kind::user) user = md;
      if (md->kind == ModifierDef::Kind::kernel) kernel = md;
    }
  if (user && kernel) {
    const bool has_u = values.count(user->name), has_k = values.count(kernel->name);
    const std::uint64_t u = has_u ? values[user->name] : (has_k && values[kernel->name] == 1 ? 0 : 1);
    const std::uint64_t k = has_k ? values[kernel->name] : (has_u && values[user->name] == 1 ? 0 : 1);
    if (u == 0 && k == 0)
      throw fail(errc::feature_combination, 0,
                 fmt::format("counts in neither user nor kernel mode ({}=0 and {}=0)", user->name, kernel->name));
    values[user->name] = u;
    values[kernel->name] = k;
  }
  // Defaults the event declares for the other modifiers the string left out.
  for (const auto& [name, v] : def->defaults)
    if (!values.count(name)) values[name] = v;
  for (const auto& name : def->modifiers) {
    const ModifierDef* md = catalog.modifier(name);
    if (!md || !md->refusal.empty() || md->field.empty()) continue;
    std::uint64_t v = values.count(name) ? values[name] : 0;
    values[name] = v;
    const std::uint64_t bits = md->inverted ? 1 - v : v;
    if (bits != 0 || format.field(md->field)) format.set(config, md->field, bits);
  }

  // 4. Bits no encoding may hold: the PMU's reserved bits, and the driver's own fields.
  std::uint64_t driver_bits = 0;
  std::vector<std::string> driver_names;
  for (const auto& f : catalog.pmu().driver_fields)
    if (auto field = format.field(f); field && (config & field->mask())) {
      driver_bits |= config & field->mask();
      driver_names.push_back(f);
    }
  if (config & pmu.reserved)
    throw fail(errc::invalid_argument, name_column,
               fmt::format("encodes to 0x{:X}, which sets bits the {} PMU reserves (0x{:X})", config, pmu.name,
                           config & pmu.reserved));
  if (driver_bits)
    throw fail(errc::invalid_argument, name_column,
               fmt::format("encodes to 0x{:X}, which sets the driver's own field{} {}", config,
                           driver_names.size() > 1 ? "s" : "", join(driver_names)));

  // 5. Counters.
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

  // 6. Canonical string: pmu::NAME:MASKS in declaration order:modifiers in the event's order.
  enc.canonical = fmt::format("{}::{}", pmu.name, def->name);
  for (const UnitMask* m : chosen) enc.canonical += ":" + m->name;
  for (const auto& name : def->modifiers)
    if (values.count(name)) enc.canonical += fmt::format(":{}={}", name, values[name]);
  enc.config = config;
  return enc;
}

}  // namespace

}  // namespace pmc
