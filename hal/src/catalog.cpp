// The events TOML loader (docs/event-format.md) and catalog queries.
#include "toml_util.hpp"

#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

const std::set<std::string, std::less<>> kKnownModifiers = {"u", "k", "e", "i", "c", "t", "period"};

std::vector<std::string> read_modifiers(const toml::table& t, std::string_view key) {
  auto mods = detail::get_strings(t, key);
  if (!mods) return {};
  const auto& arr = *t.get(key)->as_array();
  for (std::size_t i = 0; i < mods->size(); ++i)
    if (!kKnownModifiers.count((*mods)[i]))
      detail::fail_at(arr[i], errc::attribute,
                      fmt::format("unknown modifier '{}' (known: u, k, e, i, c, t, period)", (*mods)[i]));
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
                    fmt::format("{} 0x{:X} does not fit the {}-bit field at bits {}-{}", what, u, field->width,
                                field->low, field->low + field->width - 1));
  return u;
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

  static void load(EventCatalog& cat, const toml::table& doc, const std::string& name, std::string_view backend) {
    check_keys(doc, {"backend", "description", "modifiers", "format", "cpus", "umask_groups", "event"},
               "an events file");
    std::string file_backend = *get_string(doc, "backend", true);
    if (file_backend != backend) return;  // for another backend
    cat.files_.push_back(name);

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
    if (doc.get("modifiers")) cat.default_modifiers_ = read_modifiers(doc, "modifiers");

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
                     "aliases"},
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
      if (auto cpus = get_strings(t, "cpus")) {
        const auto& arr = *t.get("cpus")->as_array();
        for (std::size_t i = 0; i < cpus->size(); ++i) {
          bool known = std::any_of(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& c) { return c.name == (*cpus)[i]; });
          if (!known) fail_at(arr[i], errc::not_found, fmt::format("cpu tag '{}' is not declared in [cpus]", (*cpus)[i]));
        }
        e.cpus = *cpus;
      }
      e.modifiers = t.get("modifiers") ? read_modifiers(t, "modifiers") : cat.default_modifiers_;
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
  toml::table doc = detail::parse_toml_string(toml_text, name);
  detail::CatalogLoader::load(*this, doc, name, backend);
}

void EventCatalog::load(const std::filesystem::path& path, std::string_view backend) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) load(f, backend);
    return;
  }
  if (!fs::exists(path, ec)) throw Error(errc::io, fmt::format("{}: no such events file or directory", path.string()));
  toml::table doc = detail::parse_toml_file(path);
  detail::CatalogLoader::load(*this, doc, path.string(), backend);
}

namespace {
bool applies(const EventDef& e, std::string_view tag) {
  return tag.empty() || e.cpus.empty() || std::find(e.cpus.begin(), e.cpus.end(), tag) != e.cpus.end();
}
}  // namespace

// A name has at most one definition per CPU tag (the loader keeps definitions of one name on
// disjoint CPUs), so with a tag the first match is the only one; with no tag it is the first
// definition in catalog order.
const EventDef* EventCatalog::find(std::string_view name, std::string_view tag) const {
  for (const auto& e : events_)
    if (iequal(e.name, name) && applies(e, tag)) return &e;
  // Names first, so an event of a later file named like an earlier event's alias wins.
  for (const auto& e : events_)
    if (applies(e, tag))
      for (const auto& a : e.aliases)
        if (iequal(a, name)) return &e;
  return nullptr;
}

namespace {
// Linux perf's other spellings of its generic hardware events (perf list: "cpu-cycles OR
// cycles", "branch-instructions OR branches", "idle-cycles-frontend OR stalled-cycles-frontend",
// ...). Events files name the first column's right-hand side; either spelling finds it.
std::string_view perf_generic_name(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
      {"cpu-cycles", "cycles"},
      {"branch-instructions", "branches"},
      {"idle-cycles-frontend", "stalled-cycles-frontend"},
      {"idle-cycles-backend", "stalled-cycles-backend"},
  };
  for (const auto& [other, canonical] : kSynonyms)
    if (iequal(name, other)) return canonical;
  return name;
}
}  // namespace

const EventDef* EventCatalog::find_generic(std::string_view given, std::string_view tag,
                                           std::vector<std::string>* masks) const {
  const std::string_view generic = perf_generic_name(given);
  for (const auto& e : events_) {
    if (!applies(e, tag)) continue;
    if (iequal(e.generic, generic)) {
      if (masks) masks->clear();
      return &e;
    }
    if (e.unit_masks)
      for (const auto& m : e.unit_masks->masks)
        if (iequal(m.generic, generic)) {
          if (masks) *masks = {m.name};
          return &e;
        }
  }
  return nullptr;
}

std::vector<const EventDef*> EventCatalog::for_cpu(std::string_view tag) const {
  std::vector<const EventDef*> out;
  for (const auto& e : events_)
    if (applies(e, tag)) out.push_back(&e);
  return out;
}

std::vector<std::string> EventCatalog::validate(unsigned general_counters) const {
  std::vector<std::string> problems;
  if (!format_.field("event")) problems.push_back("the register format has no 'event' field");
  for (const auto& e : events_) {
    std::string at = e.source.str();
    if (e.description.empty()) problems.push_back(fmt::format("{}: event {} has no description", at, e.name));
    for (unsigned c : e.counters)
      if (c >= general_counters)
        problems.push_back(fmt::format("{}: event {} names counter {} but the PMU has {}", at, e.name, c, general_counters));
    if (e.unit_masks && e.fixed_umask)
      problems.push_back(fmt::format("{}: event {} has both named unit masks and a fixed umask", at, e.name));
    if (e.unit_masks && e.unit_masks->masks.size() == 1 && e.unit_masks->default_masks.empty())
      problems.push_back(fmt::format("{}: event {} has only one unit mask but no default", at, e.name));
    for (const auto& other : events_) {
      if (&other == &e || other.code != e.code) continue;
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
