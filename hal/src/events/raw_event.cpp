// perf's raw events for every backend (pmc/sdk/raw_event.hpp): "rNNN" and "PMU/term=value,.../",
// each a config value, read back through the PMU's register format into an event definition
// that the shared encoder (encode.cpp) encodes like a catalog event.
#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/raw_event.hpp>

#include "text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>
#include <vector>

namespace pmc {

namespace {

using detail::join;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::size_t name_column(const EventSpec& spec) { return spec.pmu.empty() ? 1 : spec.pmu.size() + 3; }

std::vector<std::string> names_of(const std::map<std::string, BitField, std::less<>>& fields) {
  std::vector<std::string> out;
  for (const auto& [name, field] : fields) out.push_back(fmt::format("{} (config:{})", name, field.str()));
  return out;
}

// The names of the fields of `format` that `bits` touches, in bit order.
std::string fields_touching(const RegisterFormat& format, std::uint64_t bits) {
  std::vector<std::pair<unsigned, std::string>> hit;
  for (const auto& [name, field] : format.fields())
    if (field.mask() & bits) hit.emplace_back(field.low(), name);
  std::sort(hit.begin(), hit.end());
  std::vector<std::string> names;
  for (auto& [low, name] : hit) names.push_back(std::move(name));
  return join(names);
}

// The config value the terms of "PMU/term=value,.../" write.
std::uint64_t terms_config(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu) {
  if (!spec.pmu.empty() && spec.pmu != "cpu" && spec.pmu != pmu.name)
    throw Error(errc::not_found, event_error(spec, 1, fmt::format("unknown PMU '{}': this CPU's core PMU is 'cpu' "
                                                                  "(Linux perf's name; also '{}')",
                                                                  spec.pmu, pmu.name)));
  const RegisterFormat& format = catalog.format();
  const std::string shown = spec.pmu.empty() ? std::string("cpu") : spec.pmu;
  if (format.terms().empty())
    throw Error(errc::not_supported,
                event_error(spec, 1, fmt::format("the {} PMU has no perf format terms (Linux perf has no driver for "
                                                 "it, so no PMU/term=value/ form): write the event's name, or rNNN "
                                                 "with the bits of its register",
                                                 pmu.name)));
  std::uint64_t config = 0;
  for (const EventModifier& t : spec.terms)
    if (t.name == "config") config = t.value.value_or(0);  // perf's whole value; the terms write over it
  for (const EventModifier& t : spec.terms) {
    if (t.name == "config") continue;
    const std::optional<BitField> field = format.term(t.name);
    if (!field)
      throw Error(errc::attribute,
                  event_error(spec, t.column, fmt::format("PMU '{}' has no term '{}' (its terms: {}; and config=, "
                                                          "period=)",
                                                          shown, t.name, join(names_of(format.terms())))));
    const std::uint64_t value = t.value.value_or(1);
    if (value > field->max_value())
      throw Error(errc::attribute_value,
                  event_error(spec, t.column, fmt::format("term '{}' value {:#x} does not fit config:{} ({} bits, at "
                                                          "most {:#x})",
                                                          t.name, value, field->str(), field->width(),
                                                          field->max_value())));
    config = (config & ~field->mask()) | field->place(value);
  }
  return config;
}

// The event definition of a config value: the register format's fields read back.
RawEvent decode(const EventSpec& spec, std::uint64_t config, const EventCatalog& catalog, const PmuInfo& pmu) {
  const RegisterFormat& format = catalog.format();
  const std::size_t column = spec.perf_terms() ? 1 : name_column(spec);
  auto refuse = [&](errc code, const std::string& what) { throw Error(code, event_error(spec, column, what)); };
  RawEvent raw;
  raw.config = config;
  EventDef& d = raw.def;
  d.description = "raw event";
  d.modifiers = catalog.default_modifiers();
  std::uint64_t rest = config;   // bits not yet read
  std::uint64_t named = 0;       // bits the name shows: event, unit masks, fixed fields
  auto take = [&](std::string_view name) -> std::optional<std::uint64_t> {
    const std::optional<BitField> f = format.field(name);
    if (!f) return std::nullopt;
    rest &= ~f->mask();
    if (f->extract(config) != 0) named |= config & f->mask();
    return f->extract(config);
  };
  d.code = take("event").value_or(0);
  if (const auto umask = take("umask")) d.fixed_umask = *umask;
  d.umask2 = take("umask2").value_or(0);
  // The fields the event's modifiers set: their values become its defaults.
  std::uint64_t privilege = 0;
  for (const std::string& name : d.modifiers) {
    const ModifierDef* m = catalog.modifier(name);
    if (!m || !m->refusal.empty() || m->field.empty()) continue;
    const std::optional<BitField> f = format.field(m->field);
    if (!f || !(rest & f->mask())) {
      if (f && m->inverted && m->kind != ModifierDef::Kind::value) d.defaults[name] = 1;  // field 0 holds 1
      continue;
    }
    rest &= ~f->mask();
    if (m->kind == ModifierDef::Kind::user || m->kind == ModifierDef::Kind::kernel) {
      privilege |= config & f->mask();
      continue;
    }
    const std::uint64_t bits = f->extract(config);
    const std::uint64_t value = m->inverted && m->kind != ModifierDef::Kind::value ? 1 - bits : bits;
    if (value != 0) d.defaults[name] = value;
    else d.defaults.erase(name);
  }
  if (privilege)
    refuse(errc::invalid_argument,
           fmt::format("raw config {:#x} sets {} ({:#x}): the privilege levels of a raw event are its modifiers, "
                       "as in perf (:u, :k, :uk); leave those bits 0",
                       config, fields_touching(format, privilege), privilege));
  // Other fields: the driver's are refused, the rest written as given (eq, a model's fields).
  std::uint64_t driver = 0;
  for (const std::string& name : catalog.pmu().driver_fields)
    if (const auto f = format.field(name)) driver |= rest & f->mask();
  if (driver)
    refuse(errc::invalid_argument,
           fmt::format("raw config {:#x} sets {} ({:#x}), the driver's own field{}", config,
                       fields_touching(format, driver), driver, std::popcount(driver) > 1 ? "s" : ""));
  for (const auto& [name, f] : format.fields()) {
    if (!(rest & f.mask())) continue;
    d.set[name] = f.extract(config);
    named |= config & f.mask();
    rest &= ~f.mask();
  }
  if (rest)
    refuse(errc::invalid_argument, fmt::format("raw config {:#x} sets bits {:#x}, which no field of the {} PMU's "
                                               "register holds (reserved)",
                                               config, rest, pmu.name));
  // A modifier of the string that contradicts the value's bits: one of them is a mistake.
  for (const auto& [name, value] : d.defaults) {
    const EventModifier* m = spec.modifier(name);
    if (m && m->value.value_or(1) != value)
      throw Error(errc::feature_combination,
                  event_error(spec, m->column, fmt::format("modifier '{}={}' contradicts the raw config {:#x}, which "
                                                           "holds {}={}: give it once",
                                                           name, m->value.value_or(1), config, name, value)));
  }
  // The name: "r" and the bits that are not modifiers, as many hex digits as the low event and
  // unit-mask fields span ("r00C0" on Intel, "r16" on the Pentium).
  unsigned top = 0;
  for (const char* f : {"event", "umask"})
    if (const auto field = format.field(f)) top = std::max(top, field->ranges[0].low + field->ranges[0].width);
  d.name = fmt::format("r{:0{}X}", named, std::max(1u, (top + 3) / 4));
  raw.spec = spec;
  raw.spec.name = d.name;
  raw.spec.terms.clear();
  return raw;
}

}  // namespace

std::optional<std::uint64_t> raw_config(const EventSpec& spec) {
  const std::string& n = spec.name;
  if (spec.perf_terms() || n.size() < 2 || n[0] != 'r' || !std::all_of(n.begin() + 1, n.end(), is_hex))
    return std::nullopt;
  if (n.size() - 1 > 16)
    throw Error(errc::invalid_argument,
                event_error(spec, name_column(spec),
                            fmt::format("raw event '{}' has {} hex digits; a raw config value has at most 16 (64 bits)",
                                        n, n.size() - 1)));
  std::uint64_t value = 0;
  std::from_chars(n.data() + 1, n.data() + n.size(), value, 16);
  return value;
}

std::optional<RawEvent> raw_event(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu) {
  if (spec.perf_terms()) return decode(spec, terms_config(spec, catalog, pmu), catalog, pmu);
  if (!spec.pmu.empty() && spec.pmu != pmu.name) return std::nullopt;
  if (catalog.find(spec.name)) return std::nullopt;
  const std::optional<std::uint64_t> config = raw_config(spec);
  if (!config) return std::nullopt;
  return decode(spec, *config, catalog, pmu);
}

Encoding encode_raw(const EventSpec& given, const RawEvent& raw, const EventCatalog& catalog, const PmuInfo& pmu) {
  Encoding e = encode_event(raw.spec, raw.def, catalog, pmu);
  e.event = given.text;
  return e;
}

}  // namespace pmc
