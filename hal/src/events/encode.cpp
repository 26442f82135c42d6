// The shared encoder: event string + catalog (register format, declared modifiers) -> the
// event-select value. Modifier meanings come from the catalog ([modifier.NAME]) or the built-in
// libpfm4 set (u -> usr, k -> os, e -> edge, i -> inv, c -> cmask, t -> any). Backends call
// this and add their own rules.
#include <pmc/sdk/backend.hpp>

#include "encode_tables.hpp"
#include "event_names.hpp"
#include "text.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

namespace pmc {

namespace {

using detail::join;

using detail::iequal;

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

// A list on the stack for up to N elements (an event string names a few unit masks and
// modifiers, an event accepts a few modifiers), on the heap beyond: encoding allocates nothing
// but the Encoding it returns.
template <class T, std::size_t N = 16>
class Few {
 public:
  Few() = default;
  Few(std::size_t n, const T& value) {
    for (std::size_t i = 0; i < n; ++i) push_back(value);
  }
  Few(const Few&) = delete;
  Few& operator=(const Few&) = delete;
  void push_back(const T& value) {
    if (size_ < N) [[likely]] {
      inline_[size_++] = value;
      return;
    }
    spill(value);
  }
  void append(const T* from, std::size_t n) {
    if (size_ + n <= N) {
      std::copy(from, from + n, inline_.data() + size_);
      size_ += n;
      return;
    }
    for (std::size_t i = 0; i < n; ++i) push_back(from[i]);
  }
  [[nodiscard]] T* begin() { return size_ > N ? heap_.data() : inline_.data(); }
  [[nodiscard]] T* end() { return begin() + size_; }
  [[nodiscard]] const T* begin() const { return size_ > N ? heap_.data() : inline_.data(); }
  [[nodiscard]] const T* end() const { return begin() + size_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return begin()[i]; }
  const T& operator[](std::size_t i) const { return begin()[i]; }
  const T& front() const { return *begin(); }

 private:
  [[gnu::noinline]] void spill(const T& value) {
    if (heap_.empty()) heap_.assign(inline_.begin(), inline_.end());
    heap_.push_back(value);
    ++size_;
  }
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  std::size_t size_ = 0;
};

struct Given {
  std::string_view name;
  std::optional<std::uint64_t> value;
  std::size_t column = 0;
};

Encoding encode_definition(const EventSpec& spec, const EventDef& def, const detail::ResolvedName& named,
                           std::string generic, const EventCatalog& catalog, const PmuInfo& pmu);

std::vector<std::string> mask_names(const UnitMaskGroup& group) {
  std::vector<std::string> names;
  for (const auto& m : group.masks) names.push_back(m.name);
  return names;
}

// The modifier's position in the event's list, or npos.
std::size_t position(const EventDef& def, std::string_view modifier) {
  for (std::size_t i = 0; i < def.modifiers.size(); ++i)
    if (def.modifiers[i] == modifier) return i;
  return std::string_view::npos;
}

// Writes value into a field the tables know (found by index); the format's own set(), by name,
// for anything else, which also reports a value that does not fit or a field that is absent.
inline void put(const RegisterFormat& format, std::uint64_t& config, const detail::EncodeTables::Field* field,
                std::string_view name, std::uint64_t value) {
  if (field && field->present && value <= field->max) {
    config = (config & ~field->mask) | (field->contiguous ? value << field->low : field->bits.place(value));
    return;
  }
  format.set(config, name, value);
}


}  // namespace

Encoding encode_event(const EventSpec& spec, const EventDef& def, const EventCatalog& catalog, const PmuInfo& pmu) {
  Encoding e = encode_definition(spec, def, detail::ResolvedName{}, {}, catalog, pmu);
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

  // 1. The event: a catalog name (or another tool's spelling of one), or a generic name.
  std::string generic;
  const detail::ResolvedName named = detail::resolve_event_name(spec, catalog, pmu.cpu_tag);
  const EventDef* def = named.def;
  if (def && named.by_generic) {
    generic = std::string(detail::perf_generic_name(spec.name));
    std::transform(generic.begin(), generic.end(), generic.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Bare words a generic event takes are its flag modifiers (":h"); unit masks it takes none.
    for (std::size_t i = 0; i < spec.unit_masks.size(); ++i) {
      const ModifierDef* m = catalog.modifier(spec.unit_masks[i]);
      if (!m || m->kind != ModifierDef::Kind::flag || !accepts(*def, spec.unit_masks[i]))
        throw fail(errc::unit_mask, spec.unit_mask_columns[i],
                   fmt::format("generic event '{}' takes no unit masks (it stands for {})", spec.name, def->name));
    }
  }
  if (!def) {
    if (const EventDef* elsewhere = detail::resolve_event_name(spec, catalog, {}, false).def) {
      // Every definition of the name (one per set of CPUs, docs/event-format.md) says where.
      std::vector<std::string> cpus;
      for (const auto& e : catalog.events()) {
        bool same = iequal(e.name, elsewhere->name);
        for (const auto& a : e.aliases) same = same || iequal(a, elsewhere->name);
        if (!same) continue;
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
               fmt::format("unknown event '{}' for backend {}", spec.name, pmu.name));
  }

  return encode_definition(spec, *def, named, std::move(generic), catalog, pmu);
}

namespace {

Encoding encode_definition(const EventSpec& spec, const EventDef& def_ref, const detail::ResolvedName& named,
                           std::string generic, const EventCatalog& catalog, const PmuInfo& pmu) {
  const bool by_generic = named.by_generic;
  const UnitMask* generic_mask = named.generic_mask;
  auto fail = [&](errc code, std::size_t column, std::string_view what) -> Error {
    return Error(code, event_error(spec, column, what));
  };
  const std::size_t name_column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
  const EventDef* def = &def_ref;

  // Bare words that are not the event's unit masks but flag modifiers it accepts (":h", ":pc").
  Few<Given> given;
  for (const auto& m : spec.modifiers) given.push_back({m.name, m.value, m.column});
  Few<std::string_view> masks;
  Few<std::size_t> mask_columns;
  if (!named.lead_mask.empty()) {  // perf's event.umask: the unit mask comes first
    masks.push_back(named.lead_mask);
    mask_columns.push_back(named.lead_column);
  }
  for (std::size_t i = named.skip; i < spec.unit_masks.size(); ++i) {
    const std::string& word = spec.unit_masks[i];
    const ModifierDef* m = accepts(*def, word) ? catalog.modifier(word) : nullptr;
    const bool flag = m && m->refusal.empty() && m->kind == ModifierDef::Kind::flag;
    if (flag && !has_unit_mask(*def, word)) {
      given.push_back({word, std::nullopt, by_generic ? 0 : spec.unit_mask_columns[i]});
    } else if (!by_generic) {
      masks.push_back(word);
      mask_columns.push_back(spec.unit_mask_columns[i]);
    }
  }
  if (by_generic && generic_mask) {
    masks.push_back(generic_mask->name);
    mask_columns.push_back(0);
  }

  const RegisterFormat& format = catalog.format();
  // Fields and modifier definitions by index when the event is one of the catalog's.
  const detail::EncodeTables* tables = detail::EncodeTables::of(catalog);
  const std::size_t at = tables ? detail::EncodeTables::position(catalog, def) : std::string_view::npos;
  if (at == std::string_view::npos) tables = nullptr;
  Encoding enc;
  enc.event = spec.text;
  enc.def = def;
  enc.name = def->name;
  enc.merge = def->merge;
  std::uint64_t config = 0;
  put(format, config, tables ? &tables->event : nullptr, "event", def->code);

  // 2. Unit masks.
  std::uint64_t umask = def->fixed_umask.value_or(0);
  Few<const UnitMask*> chosen;
  if (!masks.empty() && !def->unit_masks)
    throw fail(errc::unit_mask, mask_columns.front(), fmt::format("event {} takes no unit masks", def->name));
  if (def->unit_masks) {
    const UnitMaskGroup& group = *def->unit_masks;
    const std::size_t wanted = masks.empty() ? group.default_masks.size() : masks.size();
    for (std::size_t i = 0; i < wanted; ++i) {
      const std::string_view name = masks.empty() ? std::string_view(group.default_masks[i]) : masks[i];
      const std::size_t column = masks.empty() ? 0 : mask_columns[i];
      auto it = std::find_if(group.masks.begin(), group.masks.end(),
                             [&](const UnitMask& m) { return iequal(m.name, name); });
      if (it == group.masks.end())
        throw fail(errc::unit_mask, column,
                   fmt::format("unknown unit mask '{}' for event {} (valid: {})", name, def->name,
                               join(mask_names(group))));
      if (std::find(chosen.begin(), chosen.end(), &*it) != chosen.end())
        throw fail(errc::unit_mask, column, fmt::format("unit mask '{}' given twice", it->name));
      if (!group.combinable && !chosen.empty())
        throw fail(errc::unit_mask, column,
                   fmt::format("unit masks {} and {} of event {} cannot be combined (choose one of: {})",
                               chosen.front()->name, it->name, def->name, join(mask_names(group))));
      chosen.push_back(&*it);
      umask |= it->value;
    }
    if (chosen.empty())
      throw fail(errc::unit_mask, name_column,
                 fmt::format("event {} needs a unit mask (one of: {})", def->name, join(mask_names(group))));
    std::sort(chosen.begin(), chosen.end());  // declaration order (pointers into one vector)
  }
  if (def->unit_masks || def->fixed_umask || umask != 0) put(format, config, tables ? &tables->umask : nullptr, "umask", umask);
  if (def->umask2 != 0) put(format, config, tables ? &tables->umask2 : nullptr, "umask2", def->umask2);
  for (const auto& [field, value] : def->set) format.set(config, field, value);  // the loader checked them
  if (generic.empty()) {
    if (masks.empty()) generic = def->generic;
    if (generic.empty() && chosen.size() == 1) generic = chosen.front()->generic;
  }
  enc.generic = std::move(generic);

  // 3. Modifiers: each one the event accepts, once; a modifier this PMU does not have is refused
  //    with the reason its data file gives. Values by position in the event's modifier list.
  Few<std::optional<std::uint64_t>> values(def->modifiers.size(), std::nullopt);
  Few<const ModifierDef*> defs(def->modifiers.size(), nullptr);
  Few<const detail::EncodeTables::Field*> fields(def->modifiers.size(), nullptr);  // tables only
  const ModifierDef* declared = catalog.modifiers().data();
  const std::size_t declared_count = catalog.modifiers().size();
  const ModifierDef* builtins = tables ? builtin_modifiers().data() : nullptr;
  for (std::size_t j = 0; j < def->modifiers.size(); ++j) {
    if (!tables) {
      defs[j] = catalog.modifier(def->modifiers[j]);
      continue;
    }
    const std::uint16_t id = tables->ids[tables->first[at] + j];
    if (id == detail::EncodeTables::kUnknown) continue;
    const auto& m = tables->modifiers[id];
    defs[j] = m.def < declared_count ? declared + m.def : builtins + (m.def - declared_count);
    fields[j] = &m.field;
  }
  for (const auto& m : given) {
    const std::size_t p = position(*def, m.name);
    const ModifierDef* md = p != std::string_view::npos ? defs[p] : catalog.modifier(m.name);
    if (md && !md->refusal.empty())
      throw fail(errc::attribute, m.column, fmt::format("modifier '{}' refused: {}", m.name, md->refusal));
    const std::size_t j = md ? p : std::string_view::npos;
    if (j == std::string_view::npos)
      throw fail(errc::attribute, m.column,
                 fmt::format("unknown modifier '{}' for event {} (accepted: {})", m.name, def->name,
                             def->modifiers.empty() ? std::string("none") : join(def->modifiers)));
    if (values[j]) throw fail(errc::attribute, m.column, fmt::format("modifier '{}' given twice", m.name));
    std::uint64_t v = m.value.value_or(1);
    if (md->kind != ModifierDef::Kind::value && v > 1)
      throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' takes 0 or 1, not {}", m.name, v));
    if (md->kind == ModifierDef::Kind::value) {
      if (!m.value) throw fail(errc::attribute_value, m.column, fmt::format("modifier '{}' needs a value ({}=N)", m.name, m.name));
      std::optional<BitField> field;
      if (!md->field.empty()) field = fields[j] ? (fields[j]->present ? std::optional(fields[j]->bits) : std::nullopt)
                                                : format.field(md->field);
      const std::optional<std::uint64_t> max = md->max ? md->max : field ? std::optional(field->max_value()) : std::nullopt;
      if (max && v > *max)
        throw fail(errc::attribute_value, m.column,
                   field ? fmt::format("{}={} does not fit the {}-bit {} field (0-{})", m.name, v, field->width(),
                                       md->field, *max)
                         : fmt::format("{}={} is above the largest value {}", m.name, v, *max));
    }
    values[j] = v;
  }
  // Privilege (the user/kernel pair): default both; naming one level alone selects just that
  // level; an explicit 0 turns a level off and leaves the other as it was.
  std::size_t user = std::string_view::npos, kernel = std::string_view::npos;
  for (std::size_t j = 0; j < defs.size(); ++j)
    if (defs[j] && defs[j]->refusal.empty()) {
      if (defs[j]->kind == ModifierDef::Kind::user) user = j;
      if (defs[j]->kind == ModifierDef::Kind::kernel) kernel = j;
    }
  if (user != std::string_view::npos && kernel != std::string_view::npos) {
    const bool has_u = values[user].has_value(), has_k = values[kernel].has_value();
    const std::uint64_t u = has_u ? *values[user] : (has_k && *values[kernel] == 1 ? 0 : 1);
    const std::uint64_t k = has_k ? *values[kernel] : (has_u && *values[user] == 1 ? 0 : 1);
    if (u == 0 && k == 0)
      throw fail(errc::feature_combination, 0,
                 fmt::format("counts in neither user nor kernel mode ({}=0 and {}=0)", defs[user]->name,
                             defs[kernel]->name));
    values[user] = u;
    values[kernel] = k;
  }
  // Defaults the event declares for the other modifiers the string left out.
  for (const auto& [name, v] : def->defaults)
    if (const std::size_t j = position(*def, name); j != std::string_view::npos && !values[j]) values[j] = v;
  for (std::size_t j = 0; j < defs.size(); ++j) {
    const ModifierDef* md = defs[j];
    if (!md || !md->refusal.empty() || md->field.empty()) continue;
    const std::uint64_t v = values[j].value_or(0);
    values[j] = v;
    const std::uint64_t bits = md->inverted ? 1 - v : v;
    if (fields[j]) {
      if (bits != 0 || fields[j]->present) put(format, config, fields[j], md->field, bits);
    } else if (bits != 0 || format.field(md->field)) {
      format.set(config, md->field, bits);
    }
  }

  // 4. Bits no encoding may hold: the PMU's reserved bits, and the driver's own fields.
  std::uint64_t driver_bits = 0;
  if (tables) {
    driver_bits = config & tables->driver_mask;
  } else {
    for (const auto& f : catalog.pmu().driver_fields)
      if (auto field = format.field(f); field && (config & field->mask())) driver_bits |= config & field->mask();
  }
  if (config & pmu.reserved)
    throw fail(errc::invalid_argument, name_column,
               fmt::format("encodes to 0x{:X}, which sets bits the {} PMU reserves (0x{:X})", config, pmu.name,
                           config & pmu.reserved));
  if (driver_bits) {
    std::vector<std::string> driver_names;
    for (const auto& f : catalog.pmu().driver_fields)
      if (auto field = format.field(f); field && (config & field->mask())) driver_names.push_back(f);
    throw fail(errc::invalid_argument, name_column,
               fmt::format("encodes to 0x{:X}, which sets the driver's own field{} {}", config,
                           driver_names.size() > 1 ? "s" : "", join(driver_names)));
  }

  // 5. Counters.
  enc.counters.reserve(def->counters.empty() ? pmu.counters.size() : def->counters.size());
  if (def->fixed_only) {
    // a fixed counter only (Intel's pseudo-encodings such as INST_RETIRED.ANY, 00H/01H)
  } else if (def->counters.empty()) {
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

  // 6. Canonical string: pmu::NAME:MASKS in declaration order:modifiers in the event's order,
  //    written on the stack and copied once.
  Few<char, 256> text;
  auto add = [&text](std::string_view part) { text.append(part.data(), part.size()); };
  add(pmu.name);
  add("::");
  add(def->name);
  for (const UnitMask* m : chosen) {
    text.push_back(':');
    add(m->name);
  }
  for (std::size_t j = 0; j < defs.size(); ++j)
    if (values[j]) {
      text.push_back(':');
      add(def->modifiers[j]);
      text.push_back('=');
      char digits[24];
      const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, *values[j]);
      (void)ec;
      add(std::string_view(digits, static_cast<std::size_t>(end - digits)));
    }
  enc.canonical.assign(text.begin(), text.size());
  enc.config = config;

  // 7. The extra register and whether the event must count alone.
  if (!def->extra.empty()) {
    enc.extra = def->extra;
    enc.extra_value = def->extra_value;
    if (!def->extra_msrs.empty()) enc.extra_msrs = def->extra_msrs;
    else if (const ExtraRegDef* x = catalog.extra_reg(def->extra)) enc.extra_msrs = x->msrs;
  }
  enc.exclusive = def->exclusive;
  return enc;
}

}  // namespace

}  // namespace pmc
