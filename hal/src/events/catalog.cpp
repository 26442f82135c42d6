// The events TOML loader (docs/event-format.md) and catalog queries.
#include "catalog_cache.hpp"
#include "encode_tables.hpp"
#include "root_safety.hpp"
#include "toml_util.hpp"

#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pmc {

namespace {

using detail::iequal;

SourceRef ref_of(const toml::node& n) {
  const auto& s = n.source();
  return SourceRef{s.path ? std::string(*s.path) : std::string(), s.begin.line, s.begin.column};
}

// The names a `modifiers` list may use: built in, or declared by [modifier.NAME] in this or an
// earlier file.
std::vector<std::string> read_modifiers(const toml::table& t, std::string_view key, const EventCatalog& cat) {
  auto mods = detail::get_strings(t, key);
  if (!mods) return {};
  const auto& arr = *t.get(key)->as_array();
  for (std::size_t i = 0; i < mods->size(); ++i)
    if (!cat.modifier((*mods)[i])) {
      std::vector<std::string> known;
      for (const auto& m : cat.modifiers()) known.push_back(m.name);
      for (const auto& m : builtin_modifiers())
        if (std::find(known.begin(), known.end(), m.name) == known.end()) known.push_back(m.name);
      detail::fail_at(arr[i], errc::attribute,
                      fmt::format("unknown modifier '{}' (known: {}; declare others in [modifier.NAME])", (*mods)[i],
                                  detail::join(known)));
    }
  return *mods;
}

std::uint64_t read_unsigned(const toml::table& t, std::string_view key, std::optional<BitField> field,
                            std::string_view what) {
  auto v = detail::get_int(t, key, true);
  const toml::node& n = detail::node_of(t, key);
  if (*v < 0) detail::fail_at(n, errc::attribute_value, fmt::format("{} must not be negative", what));
  auto u = static_cast<std::uint64_t>(*v);
  if (field && u > field->max_value())
    detail::fail_at(n, errc::attribute_value,
                    fmt::format("{} 0x{:X} does not fit the {}-bit field at bits {}", what, u, field->width(),
                                field->str()));
  return u;
}

// "5", "0-8" or [5, "7-8"]: a list of inclusive ranges (probe rules' family, model, stepping).
std::vector<ValueRange> read_ranges(const toml::table& t, std::string_view key) {
  std::vector<ValueRange> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  auto one = [&](const toml::node& item) {
    if (const auto* i = item.as_integer()) {
      if (i->get() < 0 || i->get() > 0xFFFF)
        detail::fail_at(item, errc::attribute_value, fmt::format("'{}' {} is out of range 0-65535", key, i->get()));
      const auto v = static_cast<unsigned>(i->get());
      out.push_back({v, v});
      return;
    }
    if (const auto* str = item.as_string()) {
      const std::string& text = str->get();
      auto number = [&](std::string_view part) {
        unsigned v = 0;
        int base = 10;
        if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
          part.remove_prefix(2);
          base = 16;
        }
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
        if (part.empty() || ec != std::errc() || p != part.data() + part.size())
          detail::fail_at(item, errc::invalid_argument,
                          fmt::format("'{}' \"{}\" must be a number or \"LOW-HIGH\"", key, text));
        return v;
      };
      const auto dash = text.find('-');
      const unsigned low = number(std::string_view(text).substr(0, dash));
      const unsigned high = dash == std::string::npos ? low : number(std::string_view(text).substr(dash + 1));
      if (high < low) detail::fail_at(item, errc::invalid_argument, fmt::format("'{}' \"{}\" is an empty range", key, text));
      out.push_back({low, high});
      return;
    }
    detail::fail_at(item, errc::invalid_argument,
                    fmt::format("'{}' must be an integer, a \"LOW-HIGH\" string or an array of them", key));
  };
  if (const auto* arr = n->as_array()) {
    if (arr->empty()) detail::fail_at(*n, errc::invalid_argument, fmt::format("'{}' must not be empty", key));
    for (const auto& item : *arr) one(item);
  } else {
    one(*n);
  }
  return out;
}

// "LEAF[:SUBLEAF].REG.BITS": "1.edx.23", "0xa.eax.0-7", "0x80000001.ecx.23", "7:1.eax.8".
CpuidField parse_cpuid_field(const toml::node& item) {
  auto bad = [&]() {
    detail::fail_at(item, errc::invalid_argument,
                    "a CPUID field is \"LEAF[:SUBLEAF].REG.BITS\" such as \"1.edx.23\" or \"0xa.eax.0-7\"");
  };
  if (!item.is_string()) bad();
  const std::string text = item.as_string()->get();
  CpuidField f;
  f.text = text;
  const auto dot1 = text.find('.');
  const auto dot2 = dot1 == std::string::npos ? std::string::npos : text.find('.', dot1 + 1);
  if (dot2 == std::string::npos) bad();
  auto number = [&](std::string_view part) {
    std::uint32_t v = 0;
    int base = 10;
    if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
      part.remove_prefix(2);
      base = 16;
    }
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size()) bad();
    return v;
  };
  std::string_view leaf = std::string_view(text).substr(0, dot1);
  if (auto colon = leaf.find(':'); colon != std::string_view::npos) {
    f.subleaf = number(leaf.substr(colon + 1));
    leaf = leaf.substr(0, colon);
  }
  f.leaf = number(leaf);
  const std::string reg = text.substr(dot1 + 1, dot2 - dot1 - 1);
  static constexpr const char* kRegs[] = {"eax", "ebx", "ecx", "edx"};
  bool found = false;
  for (unsigned r = 0; r < 4; ++r)
    if (reg == kRegs[r]) {
      f.reg = r;
      found = true;
    }
  if (!found) bad();
  BitField bits;
  try {
    bits = parse_bit_range(std::string_view(text).substr(dot2 + 1));
  } catch (const Error&) {
    bad();
  }
  if (bits.count != 1 || bits.ranges[0].low + bits.ranges[0].width > 32) bad();
  f.low = bits.ranges[0].low;
  f.width = bits.ranges[0].width;
  return f;
}

std::uint32_t read_u32(const toml::table& t, std::string_view key, std::uint32_t fallback, bool required = false) {
  auto v = detail::get_int(t, key, required);
  if (!v) return fallback;
  if (*v < 0 || *v > 0xFFFFFFFFll)
    detail::fail_at(detail::node_of(t, key), errc::attribute_value,
                    fmt::format("'{}' {} is out of range 0-0xFFFFFFFF", key, *v));
  return static_cast<std::uint32_t>(*v);
}

unsigned read_small(const toml::table& t, std::string_view key, unsigned fallback, unsigned max, bool required = false) {
  auto v = detail::get_int(t, key, required);
  if (!v) return fallback;
  if (*v < 0 || *v > max)
    detail::fail_at(detail::node_of(t, key), errc::attribute_value,
                    fmt::format("'{}' {} is out of range 0-{}", key, *v, max));
  return static_cast<unsigned>(*v);
}

UnitMaskGroup read_group(const toml::table& t, std::string name, const RegisterFormat& format) {
  detail::check_keys(t, {"combinable", "default", "masks"}, fmt::format("unit-mask group '{}'", name));
  UnitMaskGroup g;
  g.name = std::move(name);
  g.combinable = detail::get_bool(t, "combinable").value_or(false);
  const toml::node* masks = t.get("masks");
  if (!masks) detail::fail_at(t.source(), errc::invalid_argument,
                              fmt::format("unit-mask group '{}' has no 'masks'", g.name));
  if (!masks->is_array())
    detail::fail_at(*masks, errc::invalid_argument, "'masks' must be an array of inline tables");
  for (const auto& item : *masks->as_array()) {
    if (!item.is_table()) detail::fail_at(item, errc::invalid_argument, "each unit mask must be an inline table");
    const auto& mt = *item.as_table();
    detail::check_keys(mt, {"name", "value", "desc", "generic"}, "a unit mask");
    UnitMask m;
    m.name = *detail::get_string(mt, "name", true);
    m.value = read_unsigned(mt, "value", format.field("umask"), "unit mask value");
    m.description = detail::get_string(mt, "desc").value_or("");
    m.generic = detail::get_string(mt, "generic").value_or("");
    for (const auto& other : g.masks) {
      if (iequal(other.name, m.name))
        detail::fail_at(item, errc::unit_mask, fmt::format("unit mask '{}' declared twice", m.name));
      if (g.combinable && (other.value & m.value))
        detail::fail_at(item, errc::unit_mask,
                        fmt::format("combinable unit masks '{}' and '{}' share bits 0x{:X}", other.name, m.name,
                                    other.value & m.value));
    }
    g.masks.push_back(std::move(m));
  }
  if (auto defaults = detail::get_strings(t, "default")) {
    const auto& arr = *t.get("default")->as_array();
    for (std::size_t i = 0; i < defaults->size(); ++i) {
      bool found = std::any_of(g.masks.begin(), g.masks.end(),
                               [&](const UnitMask& m) { return iequal(m.name, (*defaults)[i]); });
      if (!found)
        detail::fail_at(arr[i], errc::unit_mask,
                        fmt::format("default unit mask '{}' is not one of the group's masks", (*defaults)[i]));
    }
    if (!g.combinable && defaults->size() > 1)
      detail::fail_at(*t.get("default"), errc::unit_mask, "a group that is not combinable has one default at most");
    g.default_masks = *defaults;
  }
  return g;
}

// Definitions of one event name may coexist when they apply to different CPUs: both carry a
// `cpus` list and the lists are disjoint (docs/event-format.md, "One name, several CPUs").
// shared_cpu() says whether two definitions could apply to the same CPU: nullopt when they
// cannot, else the first tag they share, or "" when one of them has no `cpus` (every CPU).
std::optional<std::string> shared_cpu(const EventDef& a, const EventDef& b) {
  if (a.cpus.empty() || b.cpus.empty()) return std::string();
  for (const auto& t : a.cpus)
    if (std::find(b.cpus.begin(), b.cpus.end(), t) != b.cpus.end()) return t;
  return std::nullopt;
}

// " for CPU 'pm'", or "" when the definitions share every CPU, for duplicate messages.
std::string on_cpu(const std::string& tag) { return tag.empty() ? std::string() : fmt::format(" for CPU '{}'", tag); }

constexpr std::string_view kDisjointHint = "(definitions of one name need disjoint, non-empty cpus lists)";

}  // namespace

namespace detail {

struct CatalogLoader {
  // A later file's definition of a name replaces the earlier definitions of that name for the
  // CPUs it applies to: an earlier definition whose CPUs it covers is dropped (its aliases go
  // with it), one that also applies to other CPUs keeps those (an earlier definition without
  // `cpus` keeps every tag declared so far but the later definition's). The later definition
  // takes the place of the first one it touches, or goes last.
  static void merge(EventCatalog& cat, EventDef e) {
    std::size_t at = cat.events_.size();
    bool placed = false;
    for (std::size_t i = 0; i < cat.events_.size();) {
      EventDef& d = cat.events_[i];
      if (!iequal(d.name, e.name) || !shared_cpu(d, e)) {
        ++i;
        continue;
      }
      std::vector<std::string> keep;  // the CPUs d still applies to
      if (!e.cpus.empty()) {
        std::vector<std::string> d_cpus = d.cpus;
        if (d_cpus.empty())
          for (const auto& t : cat.cpus_) d_cpus.push_back(t.name);
        for (const auto& t : d_cpus)
          if (std::find(e.cpus.begin(), e.cpus.end(), t) == e.cpus.end()) keep.push_back(t);
      }
      if (keep.empty()) {
        cat.events_.erase(cat.events_.begin() + static_cast<std::ptrdiff_t>(i));
        if (!placed) at = i;
      } else {
        d.cpus = std::move(keep);
        ++i;
        if (!placed) at = i;
      }
      placed = true;
    }
    cat.events_.insert(cat.events_.begin() + static_cast<std::ptrdiff_t>(at), std::move(e));
  }

  // [modifier.NAME] tables: a later declaration of a name replaces the earlier one.
  static void read_modifier_decls(EventCatalog& cat, const toml::node& node) {
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

  static std::vector<std::string> cpu_list(const EventCatalog& cat, const toml::table& t) {
    auto cpus = get_strings(t, "cpus");
    if (!cpus) return {};
    const auto& arr = *t.get("cpus")->as_array();
    for (std::size_t i = 0; i < cpus->size(); ++i) {
      bool known = std::any_of(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& c) { return c.name == (*cpus)[i]; });
      if (!known) fail_at(arr[i], errc::not_found, fmt::format("cpu tag '{}' is not declared in [cpus]", (*cpus)[i]));
    }
    return *cpus;
  }

  // [pmu], [[pmu.counters]], [[pmu.registers]]: a later file's keys replace the earlier ones.
  static void read_pmu(EventCatalog& cat, const toml::node& node) {
    if (!node.is_table()) fail_at(node, errc::invalid_argument, "'pmu' must be a table");
    const auto& t = *node.as_table();
    check_keys(t, {"description", "model", "score", "reserved", "driver_fields", "merge_event", "unmatched", "counters",
                   "registers"},
               "[pmu]");
    PmuDescription& p = cat.pmu_;
    if (auto d = get_string(t, "description")) p.description = *d;
    if (auto m = get_string(t, "model")) p.model = *m;
    if (auto u = get_string(t, "unmatched")) p.unmatched = *u;
    if (t.get("score")) p.score = static_cast<int>(read_small(t, "score", 1, 1000));
    if (auto reserved = get_strings(t, "reserved")) {
      const auto& arr = *t.get("reserved")->as_array();
      p.reserved = 0;
      for (std::size_t i = 0; i < reserved->size(); ++i) {
        try {
          p.reserved |= parse_bit_range((*reserved)[i]).mask();
        } catch (const Error& e) {
          fail_at(arr[i], errc::invalid_argument, e.what());
        }
      }
    }
    if (auto fields = get_strings(t, "driver_fields")) {
      const auto& arr = *t.get("driver_fields")->as_array();
      for (std::size_t i = 0; i < fields->size(); ++i)
        if (!cat.format_.field((*fields)[i]))
          fail_at(arr[i], errc::not_found, fmt::format("driver field '{}' is not in [format]", (*fields)[i]));
      p.driver_fields = *fields;
    }
    if (t.get("merge_event")) p.merge_event = read_unsigned(t, "merge_event", cat.format_.field("event"), "merge event");
    if (const toml::node* c = t.get("counters")) {
      const toml::array* arr = c->as_array();
      if (!arr || !arr->is_array_of_tables() || arr->empty())
        fail_at(*c, errc::invalid_argument, "'pmu.counters' must be an array of tables ([[pmu.counters]])");
      p.counters.clear();
      for (const auto& item : *arr) {
        const auto& g = *item.as_table();
        check_keys(g, {"kind", "first", "count", "width", "control", "control_stride", "counter", "counter_stride",
                       "control_shift", "control_shift_stride", "control_bits", "rdpmc", "cpus"},
                   "[[pmu.counters]]");
        CounterGroup group;
        const std::string kind = get_string(g, "kind").value_or("general");
        if (kind == "general") group.kind = CounterKind::general;
        else if (kind == "fixed") group.kind = CounterKind::fixed;
        else fail_at(node_of(g, "kind"), errc::invalid_argument,
                     fmt::format("counter kind must be \"general\" or \"fixed\", not \"{}\"", kind));
        group.first = read_small(g, "first", 0, 63);
        group.count = read_small(g, "count", 0, 64, true);
        if (group.count == 0 || group.first + group.count > 64)
          fail_at(node_of(g, "count"), errc::attribute_value, "a counter group holds 1 to 64 counters, indices below 64");
        group.width = read_small(g, "width", 0, 64, true);
        if (group.width == 0) fail_at(node_of(g, "width"), errc::attribute_value, "counter width must be 1 to 64");
        group.control = read_u32(g, "control", 0, true);
        group.control_stride = read_u32(g, "control_stride", 1);
        group.counter = read_u32(g, "counter", 0, true);
        group.counter_stride = read_u32(g, "counter_stride", 1);
        group.control_shift = read_small(g, "control_shift", 0, 63);
        group.control_shift_stride = read_small(g, "control_shift_stride", 0, 63);
        group.control_bits = read_small(g, "control_bits", 0, 64);
        if (group.control_bits != 0 &&
            group.control_shift + (group.count - 1) * group.control_shift_stride + group.control_bits > 64)
          fail_at(g, errc::attribute_value, "the counters' parts of the control register do not fit in 64 bits");
        if (g.get("rdpmc")) group.rdpmc = read_small(g, "rdpmc", 0, 0xFFFF);
        group.cpus = cpu_list(cat, g);
        p.counters.push_back(std::move(group));
      }
    }
    if (const toml::node* r = t.get("registers")) {
      const toml::array* arr = r->as_array();
      if (!arr || !arr->is_array_of_tables())
        fail_at(*r, errc::invalid_argument, "'pmu.registers' must be an array of tables ([[pmu.registers]])");
      p.registers.clear();
      for (const auto& item : *arr) {
        const auto& g = *item.as_table();
        check_keys(g, {"address", "name", "cpus"}, "[[pmu.registers]]");
        RegisterDecl d;
        d.address = read_u32(g, "address", 0, true);
        d.name = get_string(g, "name").value_or("");
        d.cpus = cpu_list(cat, g);
        p.registers.push_back(std::move(d));
      }
    }
  }

  // [[probe]] rules, in file order.
  static void read_probe(EventCatalog& cat, const toml::node& node) {
    const toml::array* arr = node.as_array();
    if (!arr || !arr->is_array_of_tables())
      fail_at(node, errc::invalid_argument, "'probe' must be an array of tables ([[probe]])");
    for (const auto& item : *arr) {
      const auto& t = *item.as_table();
      check_keys(t, {"vendor", "family", "model", "stepping", "cpuid_set", "cpuid_clear", "tag", "name", "refuse"},
                 "[[probe]]");
      ProbeRule r;
      r.source = ref_of(item);
      if (const toml::node* v = t.get("vendor")) {
        if (v->is_string()) r.vendors.push_back(v->as_string()->get());
        else if (auto list = get_strings(t, "vendor")) r.vendors = *list;
      }
      r.families = read_ranges(t, "family");
      r.models = read_ranges(t, "model");
      r.steppings = read_ranges(t, "stepping");
      for (const char* key : {"cpuid_set", "cpuid_clear"}) {
        const toml::node* n = t.get(key);
        if (!n) continue;
        if (!n->is_array()) fail_at(*n, errc::invalid_argument, fmt::format("'{}' must be an array of strings", key));
        for (const auto& f : *n->as_array())
          (std::string_view(key) == "cpuid_set" ? r.cpuid_set : r.cpuid_clear).push_back(parse_cpuid_field(f));
      }
      r.refusal = get_string(t, "refuse").value_or("");
      r.tag = get_string(t, "tag").value_or("");
      r.name = get_string(t, "name").value_or("");
      if (r.refusal.empty()) {
        if (r.tag.empty() || r.name.empty())
          fail_at(t, errc::invalid_argument, "a [[probe]] rule needs a 'tag' and a 'name', or 'refuse'");
        bool known = std::any_of(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& c) { return c.name == r.tag; });
        if (!known) fail_at(node_of(t, "tag"), errc::not_found, fmt::format("cpu tag '{}' is not declared in [cpus]", r.tag));
      } else if (!r.tag.empty()) {
        fail_at(node_of(t, "tag"), errc::invalid_argument, "a refusing [[probe]] rule has no 'tag'");
      }
      cat.pmu_.probe.push_back(std::move(r));
    }
  }

  static void load(EventCatalog& cat, const toml::table& doc, const std::string& name, std::string_view backend) {
    check_keys(doc, {"backend", "description", "modifiers", "modifier", "format", "cpus", "umask_groups", "event",
                     "pmu", "probe"},
               "an events file");
    std::string file_backend = *get_string(doc, "backend", true);
    if (file_backend != backend) return;  // for another backend
    cat.backend_ = file_backend;
    cat.files_.push_back(name);
    if (auto d = get_string(doc, "description"); d && cat.description_.empty()) cat.description_ = *d;

    if (const toml::node* f = doc.get("format")) {
      if (!f->is_table()) fail_at(*f, errc::invalid_argument, "'format' must be a table of bit ranges");
      for (const auto& [key, value] : *f->as_table()) {
        if (!value.is_string())
          fail_at(value, errc::invalid_argument, fmt::format("field '{}' must be a bit range string such as \"0-7\"", key.str()));
        try {
          cat.format_.add(std::string(key.str()), parse_bit_range(value.as_string()->get()));
        } catch (const Error& e) {
          fail_at(value, errc::invalid_argument, e.what());
        }
      }
    }
    if (const toml::node* c = doc.get("cpus")) {
      if (!c->is_table()) fail_at(*c, errc::invalid_argument, "'cpus' must be a table of tag = description");
      for (const auto& [key, value] : *c->as_table()) {
        if (!value.is_string()) fail_at(value, errc::invalid_argument, fmt::format("cpu tag '{}' needs a description string", key.str()));
        const std::string tag(key.str());
        auto it = std::find_if(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& t) { return t.name == tag; });
        if (it == cat.cpus_.end()) cat.cpus_.push_back(CpuTag{tag, value.as_string()->get()});
        else it->description = value.as_string()->get();
      }
    }
    if (const toml::node* m = doc.get("modifier")) read_modifier_decls(cat, *m);
    if (doc.get("modifiers")) cat.default_modifiers_ = read_modifiers(doc, "modifiers", cat);
    if (const toml::node* p = doc.get("pmu")) read_pmu(cat, *p);
    if (const toml::node* p = doc.get("probe")) read_probe(cat, *p);

    std::map<std::string, UnitMaskGroup, std::less<>> groups;
    if (const toml::node* g = doc.get("umask_groups")) {
      if (!g->is_table()) fail_at(*g, errc::invalid_argument, "'umask_groups' must be a table of groups");
      for (const auto& [key, value] : *g->as_table()) {
        if (!value.is_table()) fail_at(value, errc::invalid_argument, fmt::format("unit-mask group '{}' must be a table", key.str()));
        groups.emplace(std::string(key.str()), read_group(*value.as_table(), std::string(key.str()), cat.format_));
      }
    }

    const toml::node* events = doc.get("event");
    if (!events) return;
    if (!events->is_array()) fail_at(*events, errc::invalid_argument, "'event' must be an array of tables ([[event]])");
    std::vector<EventDef> added;
    for (const auto& item : *events->as_array()) {
      if (!item.is_table()) fail_at(item, errc::invalid_argument, "each event must be a table");
      const auto& t = *item.as_table();
      check_keys(t, {"name", "code", "desc", "umasks", "umask", "counters", "fixed", "generic", "cpus", "modifiers", "reference",
                     "aliases", "defaults", "merge"},
                 "an event");
      EventDef e;
      e.name = *get_string(t, "name", true);
      for (char ch : e.name)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'))
          fail_at(node_of(t, "name"), errc::invalid_argument,
                  fmt::format("event name '{}' may hold only letters, digits, '_' and '.'", e.name));
      e.code = read_unsigned(t, "code", cat.format_.field("event"), "event code");
      e.description = *get_string(t, "desc", true);
      e.generic = get_string(t, "generic").value_or("");
      e.reference = get_string(t, "reference").value_or("");
      e.source = ref_of(t.get("name") ? *t.get("name") : item);
      if (t.get("umask")) e.fixed_umask = read_unsigned(t, "umask", cat.format_.field("umask"), "unit mask");
      if (const toml::node* u = t.get("umasks")) {
        if (u->is_string()) {
          auto it = groups.find(u->as_string()->get());
          if (it == groups.end())
            fail_at(*u, errc::not_found, fmt::format("unknown unit-mask group '{}'", u->as_string()->get()));
          e.unit_masks = it->second;
        } else if (u->is_table()) {
          e.unit_masks = read_group(*u->as_table(), e.name, cat.format_);
        } else {
          fail_at(*u, errc::invalid_argument, "'umasks' must be a group name or an inline group table");
        }
      }
      if (auto counters = get_ints(t, "counters")) {
        const auto& arr = *t.get("counters")->as_array();
        for (std::size_t i = 0; i < counters->size(); ++i) {
          if ((*counters)[i] < 0 || (*counters)[i] > 63)
            fail_at(arr[i], errc::attribute_value, fmt::format("counter index {} is out of range 0-63", (*counters)[i]));
          e.counters.push_back(static_cast<unsigned>((*counters)[i]));
        }
        if (e.counters.empty()) fail_at(*t.get("counters"), errc::invalid_argument, "'counters' must not be empty");
      }
      if (auto fixed = get_int(t, "fixed")) {
        if (*fixed < 0 || *fixed > 63)
          fail_at(node_of(t, "fixed"), errc::attribute_value, fmt::format("fixed counter {} is out of range 0-63", *fixed));
        e.fixed = static_cast<unsigned>(*fixed);
      }
      e.cpus = cpu_list(cat, t);
      e.modifiers = t.get("modifiers") ? read_modifiers(t, "modifiers", cat) : cat.default_modifiers_;
      e.merge = get_bool(t, "merge").value_or(false);
      if (const toml::node* d = t.get("defaults")) {
        if (!d->is_table()) fail_at(*d, errc::invalid_argument, "'defaults' must be a table of modifier = value");
        for (const auto& [key, value] : *d->as_table()) {
          const std::string mod(key.str());
          if (std::find(e.modifiers.begin(), e.modifiers.end(), mod) == e.modifiers.end())
            fail_at(key.source(), errc::attribute,
                    fmt::format("default for modifier '{}', which event {} does not accept", mod, e.name));
          if (!value.is_integer() || value.as_integer()->get() < 0)
            fail_at(value, errc::attribute_value, fmt::format("default of modifier '{}' must be an integer >= 0", mod));
          e.defaults[mod] = static_cast<std::uint64_t>(value.as_integer()->get());
        }
      }
      // A name may be defined again in the same file only for other CPUs.
      for (const auto& prev : added)
        if (iequal(prev.name, e.name))
          if (auto cpu = shared_cpu(prev, e))
            fail_at(node_of(t, "name"), errc::invalid_argument,
                    fmt::format("event '{}' is already defined at {}{} {}", e.name, prev.source.str(), on_cpu(*cpu),
                                kDisjointHint));
      // Aliases: other names of the event, spelled like names, unique in the file among names
      // and aliases of the definitions that could apply to the same CPU (find() prefers a name
      // to an alias across files).
      if (auto aliases = get_strings(t, "aliases")) {
        const auto& arr = *t.get("aliases")->as_array();
        for (std::size_t i = 0; i < aliases->size(); ++i) {
          const std::string& a = (*aliases)[i];
          bool ok = !a.empty();
          for (char ch : a) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.');
          if (!ok)
            fail_at(arr[i], errc::invalid_argument,
                    fmt::format("alias '{}' may hold only letters, digits, '_' and '.'", a));
          auto clash = [&](const EventDef& d) {
            return iequal(d.name, a) ||
                   std::any_of(d.aliases.begin(), d.aliases.end(), [&](const std::string& x) { return iequal(x, a); });
          };
          if (iequal(a, e.name) ||
              std::any_of(e.aliases.begin(), e.aliases.end(), [&](const std::string& x) { return iequal(x, a); }))
            fail_at(arr[i], errc::invalid_argument, fmt::format("alias '{}' repeats a name of event {}", a, e.name));
          for (const auto& prev : added)
            if (clash(prev))
              if (auto cpu = shared_cpu(prev, e))
                fail_at(arr[i], errc::invalid_argument,
                        fmt::format("alias '{}' of event {} is already a name of event {} at {}{}", a, e.name,
                                    prev.name, prev.source.str(), on_cpu(*cpu)));
          e.aliases.push_back(a);
        }
      }
      for (const auto& prev : added)
        for (const auto& a : prev.aliases)
          if (iequal(a, e.name))
            if (auto cpu = shared_cpu(prev, e))
              fail_at(node_of(t, "name"), errc::invalid_argument,
                      fmt::format("event '{}' is already an alias of event {} at {}{}", e.name, prev.name,
                                  prev.source.str(), on_cpu(*cpu)));
      added.push_back(std::move(e));
    }
    for (auto& e : added) merge(cat, std::move(e));
  }
};

}  // namespace detail

void EventCatalog::load_string(std::string_view toml_text, const std::string& name, std::string_view backend) {
  materialize();
  cache_key_ = detail::CatalogCache::kUncacheable;  // no file to key it by
  toml::table doc = detail::parse_toml_string(toml_text, name);
  try {
    detail::CatalogLoader::load(*this, doc, name, backend);
  } catch (...) {
    build_index();
    throw;
  }
  build_index();
}

void EventCatalog::load(const std::filesystem::path& path, std::string_view backend) {
  namespace fs = std::filesystem;
  // As root, events files others can write are refused (they decide what root programs).
  if (auto why = detail::unsafe_for_root(path))
    throw Error(errc::permission, fmt::format("{}: not read: {}", path.string(), *why));
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      if (auto why = detail::unsafe_for_root(f))
        throw Error(errc::permission, fmt::format("{}: events file not read: {}", f.string(), *why));
  } else {
    if (!fs::exists(path, ec)) throw Error(errc::io, fmt::format("{}: no such events file or directory", path.string()));
    files.push_back(path);
  }
  // The parse cache: these files, unchanged since a load that began as this catalog did, give
  // what that load gave (its events decoded only when asked for).
  const std::string key = detail::CatalogCache::step_key(*this, path, backend, files);
  if (!key.empty() && detail::CatalogCache::restore(*this, key)) return;
  materialize();
  try {
    for (const auto& f : files) {
      toml::table doc = detail::parse_toml_file(f);
      detail::CatalogLoader::load(*this, doc, f.string(), backend);
    }
  } catch (...) {
    cache_key_ = detail::CatalogCache::kUncacheable;  // half loaded
    build_index();
    throw;
  }
  build_index();
  cache_key_ = key.empty() ? std::string(detail::CatalogCache::kUncacheable) : key;
  if (!key.empty()) detail::CatalogCache::store(*this);
}

namespace {
bool applies(const EventDef& e, std::string_view tag) {
  return tag.empty() || e.cpus.empty() || std::find(e.cpus.begin(), e.cpus.end(), tag) != e.cpus.end();
}

// Case-insensitive (ASCII) FNV-1a: the lookup tables' hash.
std::uint64_t folded_hash(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    h = (h ^ (u >= 'A' && u <= 'Z' ? u + 32u : u)) * 1099511628211ull;
  }
  return h;
}

bool folded_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a == b) return true;  // names are mostly written as the catalog spells them
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

// A power of two at least twice n (at most half full), at least 8.
std::size_t table_size(std::size_t n) {
  std::size_t size = 8;
  while (size < 2 * n) size *= 2;
  return size;
}

// Inserts value (never 0) at the first free slot of key's probe sequence: entries of one key
// are met in the order they were inserted.
template <class T>
void insert_slot(std::vector<T>& table, std::string_view key, T value, const T& empty) {
  const std::size_t mask = table.size() - 1;
  for (std::size_t i = folded_hash(key) & mask;; i = (i + 1) & mask)
    if (table[i] == empty) {
      table[i] = value;
      return;
    }
}
}  // namespace

void EventCatalog::build_index() const {
  std::size_t aliases = 0, generics = 0;
  for (const auto& e : events_) {
    aliases += e.aliases.size();
    generics += !e.generic.empty();
    if (e.unit_masks)
      for (const auto& m : e.unit_masks->masks) generics += !m.generic.empty();
  }
  name_index_.assign(table_size(events_.size()), 0);
  alias_index_.assign(table_size(aliases), 0);
  generic_index_.assign(table_size(generics), {0, 0});
  // An entry keeps the upper half of its key's hash beside the position, so that a probe compares
  // strings only where the hashes agree.
  auto entry = [](std::string_view key, std::size_t i) {
    return (folded_hash(key) >> 32 << 32) | static_cast<std::uint64_t>(i + 1);
  };
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const EventDef& e = events_[i];
    const auto at = static_cast<std::uint32_t>(i + 1);
    insert_slot<std::uint64_t>(name_index_, e.name, entry(e.name, i), 0);
    for (const auto& a : e.aliases) insert_slot<std::uint64_t>(alias_index_, a, entry(a, i), 0);
    // Generic names in event order; an event's own before its unit masks' (find_generic's order).
    if (!e.generic.empty()) insert_slot<std::pair<std::uint32_t, std::uint32_t>>(generic_index_, e.generic, {at, 0}, {0, 0});
    if (e.unit_masks)
      for (std::size_t m = 0; m < e.unit_masks->masks.size(); ++m)
        if (!e.unit_masks->masks[m].generic.empty())
          insert_slot<std::pair<std::uint32_t, std::uint32_t>>(generic_index_, e.unit_masks->masks[m].generic,
                                                               {at, static_cast<std::uint32_t>(m + 1)}, {0, 0});
  }
  detail::EncodeTables::build(*this);
}

const std::vector<EventDef>& EventCatalog::events() const {
  materialize();
  return events_;
}

// A name has at most one definition per CPU tag (the loader keeps definitions of one name on
// disjoint CPUs), so with a tag the first match is the only one; with no tag it is the first
// definition in catalog order (the probe sequence meets a name's definitions in that order).
const EventDef* EventCatalog::find(std::string_view name, std::string_view tag) const {
  if (pending_.pending.load(std::memory_order_acquire)) {  // restored from the parse cache, not decoded
    bool answered = false;
    const EventDef* e = detail::CatalogCache::lookup(*this, detail::CatalogCache::Lookup::name, name, tag, nullptr, answered);
    if (answered) return e;
  }
  materialize();
  if (name_index_.empty()) return nullptr;
  const std::uint64_t h = folded_hash(name), high = h >> 32 << 32;
  for (std::size_t mask = name_index_.size() - 1, i = h & mask; name_index_[i]; i = (i + 1) & mask) {
    if ((name_index_[i] >> 32 << 32) != high) continue;
    const EventDef& e = events_[(name_index_[i] & 0xFFFFFFFFu) - 1];
    if (applies(e, tag) && folded_equal(e.name, name)) return &e;
  }
  // Names first, so an event of a later file named like an earlier event's alias wins.
  const EventDef* best = nullptr;
  for (std::size_t mask = alias_index_.size() - 1, i = h & mask; alias_index_[i]; i = (i + 1) & mask) {
    if ((alias_index_[i] >> 32 << 32) != high) continue;
    const EventDef& e = events_[(alias_index_[i] & 0xFFFFFFFFu) - 1];
    if (!applies(e, tag) || (best && best < &e)) continue;
    for (const auto& a : e.aliases)
      if (folded_equal(a, name)) best = &e;
  }
  return best;
}

const EventDef* EventCatalog::find_generic_mask(std::string_view given, std::string_view tag,
                                                const UnitMask** mask) const {
  if (pending_.pending.load(std::memory_order_acquire)) {  // restored from the parse cache, not decoded
    bool answered = false;
    const EventDef* e =
        detail::CatalogCache::lookup(*this, detail::CatalogCache::Lookup::generic, given, tag, mask, answered);
    if (answered) return e;
  }
  materialize();
  if (mask) *mask = nullptr;
  if (generic_index_.empty()) return nullptr;
  const std::string_view generic = detail::perf_generic_name(given);
  // The first event in catalog order with the name as its own generic or a unit mask's.
  std::pair<std::uint32_t, std::uint32_t> best{0, 0};
  for (std::size_t m = generic_index_.size() - 1, i = folded_hash(generic) & m; generic_index_[i].first;
       i = (i + 1) & m) {
    const auto [at, unit] = generic_index_[i];
    const EventDef& e = events_[at - 1];
    if (!applies(e, tag)) continue;
    const std::string& name = unit ? e.unit_masks->masks[unit - 1].generic : e.generic;
    if (!folded_equal(name, generic)) continue;
    if (best.first == 0 || at < best.first || (at == best.first && unit < best.second)) best = {at, unit};
  }
  if (best.first == 0) return nullptr;
  const EventDef& e = events_[best.first - 1];
  if (mask && best.second) *mask = &e.unit_masks->masks[best.second - 1];
  return &e;
}

const EventDef* EventCatalog::find_generic(std::string_view given, std::string_view tag,
                                           std::vector<std::string>* masks) const {
  const UnitMask* mask = nullptr;
  const EventDef* e = find_generic_mask(given, tag, &mask);
  if (e && masks) {
    masks->clear();
    if (mask) masks->push_back(mask->name);
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// The encoder's tables (encode_tables.hpp)

namespace detail {

const EncodeTables* EncodeTables::of(const EventCatalog& c) {
  // Events not decoded yet (found one by one, CatalogCache::lookup): none, the encoder goes by name.
  if (c.pending_.pending.load(std::memory_order_acquire)) return nullptr;
  return c.encode_tables_.get();
}

const ModifierDef& EncodeTables::definition(const EventCatalog& c, const Modifier& m) {
  return m.def < c.modifiers_.size() ? c.modifiers_[m.def] : builtin_modifiers()[m.def - c.modifiers_.size()];
}

std::size_t EncodeTables::position(const EventCatalog& c, const EventDef* def) {
  if (c.events_.empty() || def < c.events_.data() || def >= c.events_.data() + c.events_.size())
    return std::string_view::npos;
  return static_cast<std::size_t>(def - c.events_.data());
}

EncodeTables::Field EncodeTables::Field::of(const std::optional<BitField>& f) {
  Field out;
  if (!f || !f->present()) return out;
  out.present = true;
  out.contiguous = f->count == 1;
  out.low = f->low();
  out.mask = f->mask();
  out.max = f->max_value();
  out.bits = *f;
  return out;
}

void EncodeTables::build(const EventCatalog& c) {
  auto t = std::make_shared<EncodeTables>();
  t->event = Field::of(c.format_.field("event"));
  t->umask = Field::of(c.format_.field("umask"));
  for (const auto& f : c.pmu_.driver_fields)
    if (auto field = c.format_.field(f)) t->driver_mask |= field->mask();
  // The modifiers by name, as EventCatalog::modifier() finds them: declared, then built in.
  std::vector<std::string_view> names;
  auto add = [&](const ModifierDef& m, std::size_t def) {
    Modifier r;
    r.def = static_cast<std::uint32_t>(def);
    if (!m.field.empty()) r.field = Field::of(c.format_.field(m.field));
    t->modifiers.push_back(r);
    names.push_back(m.name);
  };
  for (std::size_t i = 0; i < c.modifiers_.size(); ++i)
    if (std::find(names.begin(), names.end(), c.modifiers_[i].name) == names.end()) add(c.modifiers_[i], i);
  const auto& builtins = builtin_modifiers();
  for (std::size_t i = 0; i < builtins.size(); ++i)
    if (std::find(names.begin(), names.end(), builtins[i].name) == names.end())
      add(builtins[i], c.modifiers_.size() + i);
  t->first.reserve(c.events_.size());
  for (const auto& e : c.events_) {
    t->first.push_back(static_cast<std::uint32_t>(t->ids.size()));
    for (const auto& m : e.modifiers) {
      const auto it = std::find(names.begin(), names.end(), m);
      t->ids.push_back(it == names.end() ? kUnknown : static_cast<std::uint16_t>(it - names.begin()));
    }
  }
  c.encode_tables_ = std::move(t);
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

std::vector<const EventDef*> EventCatalog::for_cpu(std::string_view tag) const {
  materialize();
  std::vector<const EventDef*> out;
  for (const auto& e : events_)
    if (applies(e, tag)) out.push_back(&e);
  return out;
}

std::vector<std::string> EventCatalog::validate(unsigned general_counters, std::string_view tag) const {
  materialize();
  std::vector<std::string> problems;
  if (!format_.field("event")) problems.push_back("the register format has no 'event' field");
  for (const auto& e : events_) {
    std::string at = e.source.str();
    if (e.description.empty()) problems.push_back(fmt::format("{}: event {} has no description", at, e.name));
    for (unsigned c : e.counters)
      if (c >= general_counters && applies(e, tag))
        problems.push_back(fmt::format("{}: event {} names counter {} but the PMU has {}", at, e.name, c, general_counters));
    if (e.unit_masks && e.fixed_umask)
      problems.push_back(fmt::format("{}: event {} has both named unit masks and a fixed umask", at, e.name));
    if (e.unit_masks && e.unit_masks->masks.size() == 1 && e.unit_masks->default_masks.empty())
      problems.push_back(fmt::format("{}: event {} has only one unit mask but no default", at, e.name));
    if (auto f = format_.field("event"); f && (f->place(e.code) & pmu_.reserved))
      problems.push_back(fmt::format("{}: event {} has code 0x{:X}, which sets reserved bits", at, e.name, e.code));
    for (const auto& [mod, v] : e.defaults)
      if (const ModifierDef* m = modifier(mod); m && !m->field.empty()) {
        const auto f = format_.field(m->field);
        if (f && v > f->max_value())
          problems.push_back(fmt::format("{}: event {}: default {}={} does not fit field {}", at, e.name, mod, v, m->field));
      }
    for (const auto& other : events_) {
      if (&other == &e || other.code != e.code) continue;
      // The same code on disjoint counters is two events (the Pentium MMX's per-counter codes).
      const bool disjoint_counters =
          !e.counters.empty() && !other.counters.empty() &&
          std::none_of(e.counters.begin(), e.counters.end(), [&](unsigned c) {
            return std::find(other.counters.begin(), other.counters.end(), c) != other.counters.end();
          });
      if (disjoint_counters) continue;
      bool shared_cpu = e.cpus.empty() || other.cpus.empty() ||
                        std::any_of(e.cpus.begin(), e.cpus.end(), [&](const std::string& t) {
                          return std::find(other.cpus.begin(), other.cpus.end(), t) != other.cpus.end();
                        });
      bool same_umask = e.fixed_umask == other.fixed_umask;
      if (shared_cpu && same_umask && &other < &e)
        problems.push_back(fmt::format("{}: events {} and {} share code 0x{:02X} on the same CPUs", at, other.name,
                                       e.name, e.code));
    }
  }
  return problems;
}

}  // namespace pmc
