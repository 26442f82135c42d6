// Modifiers (docs/event-format.md, "Modifiers"): the [modifier.NAME] declarations of an events
// file, the `modifiers` lists that name them, and the built-in ones a file that declares none gets.
#include "catalog_loader.hpp"
#include "text.hpp"
#include "toml_util.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace pmc {

namespace detail {

// The names a `modifiers` list may use: built in, or declared by [modifier.NAME] in this or an
// earlier file.
std::vector<std::string> read_modifiers(const toml::table& t, std::string_view key, const EventCatalog& cat) {
  auto mods = get_strings(t, key);
  if (!mods) return {};
  const auto& arr = *t.get(key)->as_array();
  for (std::size_t i = 0; i < mods->size(); ++i)
    if (!cat.modifier((*mods)[i])) {
      std::vector<std::string> known;
      for (const auto& m : cat.modifiers()) known.push_back(m.name);
      for (const auto& m : builtin_modifiers())
        if (std::find(known.begin(), known.end(), m.name) == known.end()) known.push_back(m.name);
      fail_at(arr[i], errc::attribute,
                      fmt::format("unknown modifier '{}' (known: {}; declare others in [modifier.NAME])", (*mods)[i],
                                  join(known)));
    }
  return *mods;
}

// [modifier.NAME] tables: a later declaration of a name replaces the earlier one.
void CatalogLoader::read_modifier_decls(EventCatalog& cat, const toml::node& node) {
  if (!node.is_table()) fail_at(node, errc::invalid_argument, "'modifier' must be a table of [modifier.NAME] tables");
  for (const auto& [key, value] : *node.as_table()) {
    const std::string mname(key.str());
    if (!value.is_table()) fail_at(value, errc::invalid_argument, fmt::format("[modifier.{}] must be a table", mname));
    const auto& t = *value.as_table();
    check_keys(t, {"field", "kind", "polarity", "max", "desc", "refuse"}, fmt::format("[modifier.{}]", mname));
    bool ok = !mname.empty();
    for (char ch : mname) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok) fail_at(key.source(), errc::invalid_argument,
                     fmt::format("modifier name '{}' may hold only letters, digits and '_'", mname));
    ModifierDef m;
    m.name = mname;
    m.source = ref_of(value);
    m.description = get_string(t, "desc").value_or("");
    m.refusal = get_string(t, "refuse").value_or("");
    if (!m.refusal.empty()) {
      if (t.get("field") || t.get("kind"))
        fail_at(t, errc::invalid_argument, fmt::format("[modifier.{}] refuses the modifier: it takes no field or kind", mname));
    } else {
      const std::string kind = get_string(t, "kind").value_or("flag");
      if (kind == "flag") m.kind = ModifierDef::Kind::flag;
      else if (kind == "value") m.kind = ModifierDef::Kind::value;
      else if (kind == "user") m.kind = ModifierDef::Kind::user;
      else if (kind == "kernel") m.kind = ModifierDef::Kind::kernel;
      else fail_at(node_of(t, "kind"), errc::invalid_argument,
                   fmt::format("unknown kind '{}' (flag, value, user or kernel)", kind));
      m.field = *get_string(t, "field", true);
      if (!cat.format_.field(m.field))
        fail_at(node_of(t, "field"), errc::not_found,
                fmt::format("field '{}' of modifier '{}' is not in [format]", m.field, mname));
      if (auto pol = get_string(t, "polarity")) {
        if (*pol == "inverted") m.inverted = true;
        else if (*pol != "normal")
          fail_at(node_of(t, "polarity"), errc::invalid_argument,
                  fmt::format("polarity must be \"normal\" or \"inverted\", not \"{}\"", *pol));
        if (m.inverted && m.kind != ModifierDef::Kind::flag)
          fail_at(node_of(t, "polarity"), errc::invalid_argument, "only a flag can have an inverted polarity");
      }
      if (auto max = get_int(t, "max")) {
        if (m.kind != ModifierDef::Kind::value)
          fail_at(node_of(t, "max"), errc::invalid_argument, "'max' is for modifiers of kind \"value\"");
        const std::uint64_t field_max = cat.format_.field(m.field)->max_value();
        if (*max < 0 || static_cast<std::uint64_t>(*max) > field_max)
          fail_at(node_of(t, "max"), errc::attribute_value,
                  fmt::format("'max' {} does not fit field '{}' (at most {})", *max, m.field, field_max));
        m.max = static_cast<std::uint64_t>(*max);
      }
      if (m.kind != ModifierDef::Kind::value && cat.format_.field(m.field)->width() != 1)
        fail_at(node_of(t, "field"), errc::invalid_argument,
                fmt::format("modifier '{}' of kind {} needs a one-bit field; '{}' has {} bits", mname, kind, m.field,
                            cat.format_.field(m.field)->width()));
    }
    auto it = std::find_if(cat.modifiers_.begin(), cat.modifiers_.end(),
                           [&](const ModifierDef& d) { return d.name == m.name; });
    if (it == cat.modifiers_.end()) cat.modifiers_.push_back(std::move(m));
    else *it = std::move(m);
  }
}

}  // namespace detail

const std::vector<ModifierDef>& builtin_modifiers() {
  using K = ModifierDef::Kind;
  static const std::vector<ModifierDef> mods = [] {
    std::vector<ModifierDef> v;
    auto add = [&](const char* name, const char* field, K kind, const char* desc) {
      ModifierDef m;
      m.name = name;
      m.field = field;
      m.kind = kind;
      m.description = desc;
      m.source.file = "built in";
      v.push_back(std::move(m));
    };
    add("u", "usr", K::user, "count at user level");
    add("k", "os", K::kernel, "count at kernel level");
    add("e", "edge", K::flag, "edge detect: count transitions into the counted condition");
    add("i", "inv", K::flag, "invert the counter-mask comparison");
    add("c", "cmask", K::value, "counter mask: count cycles with at least this many events");
    add("t", "any", K::flag, "count the events of every hardware thread of the core (AnyThread)");
    add("period", "", K::value, "the backend's sampling period");
    return v;
  }();
  return mods;
}

const ModifierDef* EventCatalog::modifier(std::string_view name) const {
  for (const auto& m : modifiers_)
    if (m.name == name) return &m;
  for (const auto& m : builtin_modifiers())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace pmc
