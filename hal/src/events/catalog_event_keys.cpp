// The keys of model-specific catalogs (docs/event-format.md, "Events of one model"): the
// file-level [extra.NAME] registers, and an event's umask2, set, extra, extra_msrs, code2,
// exclusive, deprecated, period, precise, errata and topic. Read after the event's other keys
// (catalog_load.cpp): `set` needs its modifiers.
#include "catalog_loader.hpp"
#include "text.hpp"
#include "toml_util.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

namespace pmc {

namespace detail {

namespace {

// An array of MSR addresses (0 to 0xFFFFFFFF), non-empty.
std::vector<std::uint32_t> read_msrs(const toml::table& t, std::string_view key) {
  std::vector<std::uint32_t> out;
  const toml::node& n = node_of(t, key);
  const auto values = get_ints(t, key, true);
  const auto& arr = *n.as_array();
  if (values->empty()) fail_at(n, errc::invalid_argument, fmt::format("'{}' must not be empty", key));
  for (std::size_t i = 0; i < values->size(); ++i) {
    const std::int64_t v = (*values)[i];
    if (v < 0 || v > 0xFFFFFFFFll)
      fail_at(arr[i], errc::attribute_value, fmt::format("MSR address {} is out of range 0-0xFFFFFFFF", v));
    const auto msr = static_cast<std::uint32_t>(v);
    if (std::find(out.begin(), out.end(), msr) != out.end())
      fail_at(arr[i], errc::invalid_argument, fmt::format("MSR 0x{:X} is listed twice", msr));
    out.push_back(msr);
  }
  return out;
}

std::string msr_list(const std::vector<std::uint32_t>& msrs) {
  std::string out;
  for (std::uint32_t m : msrs) out += fmt::format("{}0x{:X}", out.empty() ? "" : ", ", m);
  return out;
}

bool is_name(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

// [extra.NAME] tables: a later declaration of a name replaces the earlier one.
void CatalogLoader::read_extra_decls(EventCatalog& cat, const toml::node& node) {
  if (!node.is_table()) fail_at(node, errc::invalid_argument, "'extra' must be a table of [extra.NAME] tables");
  for (const auto& [key, value] : *node.as_table()) {
    const std::string name(key.str());
    if (!is_name(name))
      fail_at(key.source(), errc::invalid_argument,
              fmt::format("extra register name '{}' may hold only letters, digits and '_'", name));
    if (!value.is_table())
      fail_at(value, errc::invalid_argument, fmt::format("[extra.{}] must be a table with 'msrs'", name));
    const auto& t = *value.as_table();
    check_keys(t, {"msrs", "desc"}, fmt::format("[extra.{}]", name));
    ExtraRegDef d;
    d.name = name;
    d.msrs = read_msrs(t, "msrs");
    d.description = get_string(t, "desc").value_or("");
    d.source = ref_of(value);
    auto it = std::find_if(cat.extra_regs_.begin(), cat.extra_regs_.end(),
                           [&](const ExtraRegDef& x) { return x.name == name; });
    if (it == cat.extra_regs_.end()) cat.extra_regs_.push_back(std::move(d));
    else *it = std::move(d);
  }
}

void CatalogLoader::read_event_keys(const EventCatalog& cat, const toml::table& t, EventDef& e) {
  const RegisterFormat& format = cat.format_;
  if (t.get("umask2")) {
    const auto field = format.field("umask2");
    if (!field)
      fail_at(node_of(t, "umask2"), errc::not_found, "'umask2' needs a field 'umask2' in [format]");
    e.umask2 = read_unsigned(t, "umask2", field, "unit mask extension");
  }
  if (const toml::node* s = t.get("set")) {
    if (!s->is_table()) fail_at(*s, errc::invalid_argument, "'set' must be a table of [format] field = value");
    for (const auto& [key, value] : *s->as_table()) {
      const std::string name(key.str());
      const auto field = format.field(name);
      if (!field) fail_at(key.source(), errc::not_found, fmt::format("'set' names field '{}', which is not in [format]", name));
      if (name == "event" || name == "umask" || name == "umask2")
        fail_at(key.source(), errc::invalid_argument,
                fmt::format("'set' cannot write field '{}': the event's own key does", name));
      for (const auto& m : e.modifiers)
        if (const ModifierDef* md = cat.modifier(m); md && md->field == name)
          fail_at(key.source(), errc::invalid_argument,
                  fmt::format("'set' writes field '{}', which modifier '{}' of event {} sets (give it in 'defaults')",
                              name, m, e.name));
      if (!value.is_integer() || value.as_integer()->get() < 0)
        fail_at(value, errc::attribute_value, fmt::format("'set' value of field '{}' must be an integer >= 0", name));
      const auto v = static_cast<std::uint64_t>(value.as_integer()->get());
      if (v > field->max_value())
        fail_at(value, errc::attribute_value,
                fmt::format("'set' value 0x{:X} does not fit the {}-bit field '{}' at bits {}", v, field->width(), name,
                            field->str()));
      e.set[name] = v;
    }
  }
  if (const toml::node* x = t.get("extra")) {
    if (!x->is_table() || x->as_table()->size() != 1)
      fail_at(*x, errc::invalid_argument, "'extra' must be a table of one entry, { NAME = value }");
    const auto entry = x->as_table()->begin();
    const toml::key& key = entry->first;
    const toml::node& value = entry->second;
    const std::string name(key.str());
    if (!cat.extra_reg(name)) {
      std::vector<std::string> known;
      for (const auto& d : cat.extra_regs_) known.push_back(d.name);
      fail_at(key.source(), errc::not_found,
              fmt::format("unknown extra register '{}' (declared: {}; declare it in [extra.{}])", name,
                          known.empty() ? std::string("none") : join(known), name));
    }
    // A TOML integer is signed: a value with bit 63 set is written as a hex string ("0x8000000000000044").
    if (value.is_string()) {
      const std::string& s = value.as_string()->get();
      std::uint64_t v = 0;
      const bool hex = s.size() > 2 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
      const auto [end, ec] = hex ? std::from_chars(s.data() + 2, s.data() + s.size(), v, 16)
                                 : std::from_chars(s.data(), s.data(), v, 16);
      if (!hex || ec != std::errc() || end != s.data() + s.size())
        fail_at(value, errc::attribute_value,
                fmt::format("the value of extra register '{}' must be an integer >= 0 or a hex string such as "
                            "\"0x8000000000000044\" (got \"{}\")",
                            name, s));
      e.extra_value = v;
    } else if (!value.is_integer() || value.as_integer()->get() < 0) {
      fail_at(value, errc::attribute_value, fmt::format("the value of extra register '{}' must be an integer >= 0", name));
    } else {
      e.extra_value = static_cast<std::uint64_t>(value.as_integer()->get());
    }
    e.extra = name;
  }
  if (t.get("extra_msrs")) {
    if (e.extra.empty()) fail_at(node_of(t, "extra_msrs"), errc::invalid_argument, "'extra_msrs' needs 'extra'");
    const ExtraRegDef& d = *cat.extra_reg(e.extra);
    e.extra_msrs = read_msrs(t, "extra_msrs");
    const auto& arr = *node_of(t, "extra_msrs").as_array();
    for (std::size_t i = 0; i < e.extra_msrs.size(); ++i)
      if (std::find(d.msrs.begin(), d.msrs.end(), e.extra_msrs[i]) == d.msrs.end())
        fail_at(arr[i], errc::invalid_argument,
                fmt::format("MSR 0x{:X} is not one of extra register '{}' ({})", e.extra_msrs[i], d.name,
                            msr_list(d.msrs)));
  }
  if (t.get("code2")) e.code2 = read_unsigned(t, "code2", format.field("event"), "second event code");
  e.exclusive = get_bool(t, "exclusive").value_or(false);
  e.deprecated = get_bool(t, "deprecated").value_or(false);
  if (t.get("period")) e.period = read_unsigned(t, "period", std::nullopt, "'period'");
  if (t.get("precise")) {
    const std::uint64_t p = read_unsigned(t, "precise", std::nullopt, "'precise'");
    if (p > 3) fail_at(node_of(t, "precise"), errc::attribute_value, fmt::format("'precise' {} is out of range 0-3", p));
    e.precise = static_cast<unsigned>(p);
  }
  e.errata = get_string(t, "errata").value_or("");
  e.topic = get_string(t, "topic").value_or("");
}

}  // namespace detail

const ExtraRegDef* EventCatalog::extra_reg(std::string_view name) const {
  for (const auto& d : extra_regs_)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace pmc
