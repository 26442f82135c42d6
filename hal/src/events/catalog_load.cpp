// The events TOML loader (docs/event-format.md): EventCatalog::load of files and strings, and
// the document itself, its CPU tags, unit-mask groups and events, merged with the earlier files'.
// The [pmu] shape and [[probe]] table are read in catalog_pmu.cpp, modifiers in catalog_modifiers.cpp.
#include "bundled.hpp"
#include "catalog_cache.hpp"
#include "catalog_loader.hpp"
#include "catalog_state.hpp"
#include "root_safety.hpp"
#include "text.hpp"
#include "toml_util.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pmc::detail {

SourceRef ref_of(const toml::node& n) {
  const auto& s = n.source();
  return SourceRef{s.path ? std::string(*s.path) : std::string(), s.begin.line, s.begin.column};
}

std::uint64_t read_unsigned(const toml::table& t, std::string_view key, std::optional<BitField> field,
                            std::string_view what) {
  auto v = get_int(t, key, true);
  const toml::node& n = node_of(t, key);
  if (*v < 0) fail_at(n, errc::attribute_value, fmt::format("{} must not be negative", what));
  auto u = static_cast<std::uint64_t>(*v);
  if (field && u > field->max_value())
    fail_at(n, errc::attribute_value,
                    fmt::format("{} 0x{:X} does not fit the {}-bit field at bits {}", what, u, field->width(),
                                field->str()));
  return u;
}

namespace {

UnitMaskGroup read_group(const toml::table& t, std::string name, const RegisterFormat& format) {
  check_keys(t, {"combinable", "default", "masks"}, fmt::format("unit-mask group '{}'", name));
  UnitMaskGroup g;
  g.name = std::move(name);
  g.combinable = get_bool(t, "combinable").value_or(false);
  const toml::node* masks = t.get("masks");
  if (!masks) fail_at(t.source(), errc::invalid_argument,
                              fmt::format("unit-mask group '{}' has no 'masks'", g.name));
  if (!masks->is_array())
    fail_at(*masks, errc::invalid_argument, "'masks' must be an array of inline tables");
  for (const auto& item : *masks->as_array()) {
    if (!item.is_table()) fail_at(item, errc::invalid_argument, "each unit mask must be an inline table");
    const auto& mt = *item.as_table();
    check_keys(mt, {"name", "value", "desc", "generic"}, "a unit mask");
    UnitMask m;
    m.name = *get_string(mt, "name", true);
    m.value = read_unsigned(mt, "value", format.field("umask"), "unit mask value");
    m.description = get_string(mt, "desc").value_or("");
    m.generic = get_string(mt, "generic").value_or("");
    for (const auto& other : g.masks) {
      if (iequal(other.name, m.name))
        fail_at(item, errc::unit_mask, fmt::format("unit mask '{}' declared twice", m.name));
      if (g.combinable && (other.value & m.value))
        fail_at(item, errc::unit_mask,
                        fmt::format("combinable unit masks '{}' and '{}' share bits 0x{:X}", other.name, m.name,
                                    other.value & m.value));
    }
    g.masks.push_back(std::move(m));
  }
  if (auto defaults = get_strings(t, "default")) {
    const auto& arr = *t.get("default")->as_array();
    for (std::size_t i = 0; i < defaults->size(); ++i) {
      bool found = std::any_of(g.masks.begin(), g.masks.end(),
                               [&](const UnitMask& m) { return iequal(m.name, (*defaults)[i]); });
      if (!found)
        fail_at(arr[i], errc::unit_mask,
                        fmt::format("default unit mask '{}' is not one of the group's masks", (*defaults)[i]));
    }
    if (!g.combinable && defaults->size() > 1)
      fail_at(*t.get("default"), errc::unit_mask, "a group that is not combinable has one default at most");
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

// A later file's definition of a name replaces the earlier definitions of that name for the
// CPUs it applies to: an earlier definition whose CPUs it covers is dropped (its aliases go
// with it), one that also applies to other CPUs keeps those (an earlier definition without
// `cpus` keeps every tag declared so far but the later definition's). The later definition
// takes the place of the first one it touches, or goes last.
void CatalogLoader::merge(EventCatalog& cat, EventDef e) {
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

std::vector<std::string> CatalogLoader::cpu_list(const EventCatalog& cat, const toml::table& t) {
  auto cpus = get_strings(t, "cpus");
  if (!cpus) return {};
  const auto& arr = *t.get("cpus")->as_array();
  for (std::size_t i = 0; i < cpus->size(); ++i) {
    bool known = std::any_of(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& c) { return c.name == (*cpus)[i]; });
    if (!known) fail_at(arr[i], errc::not_found, fmt::format("cpu tag '{}' is not declared in [cpus]", (*cpus)[i]));
  }
  return *cpus;
}

void CatalogLoader::load(EventCatalog& cat, const toml::table& doc, const std::string& name, std::string_view backend) {
  check_keys(doc, {"backend", "description", "modifiers", "modifier", "format", "cpus", "umask_groups", "event",
                   "pmu", "probe", "extra", "perf_format"},
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
  // Linux perf's format terms (sysfs .../format/NAME): "config:0-7"; config1/config2 terms are
  // not read (no raw form here writes those words).
  if (const toml::node* f = doc.get("perf_format")) {
    if (!f->is_table()) fail_at(*f, errc::invalid_argument, "'perf_format' must be a table of term = \"config:BITS\"");
    for (const auto& [key, value] : *f->as_table()) {
      const std::string_view text = value.is_string() ? std::string_view(value.as_string()->get()) : std::string_view();
      if (text.substr(0, 7) != "config:")
        fail_at(value, errc::invalid_argument,
                fmt::format("perf term '{}' must be \"config:BITS\" as Linux perf's sysfs format shows it "
                            "(\"config:0-7\", \"config:0-7,32-35\")",
                            key.str()));
      try {
        cat.format_.add_term(std::string(key.str()), parse_bit_range(text.substr(7)));
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
  if (const toml::node* x = doc.get("extra")) read_extra_decls(cat, *x);

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
                   "aliases", "defaults", "merge", "umask2", "set", "extra", "extra_msrs", "code2", "exclusive",
                   "deprecated", "period", "precise", "errata", "topic"},
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
      e.fixed_only = e.counters.empty();  // checked below: only with `fixed`
    }
    if (auto fixed = get_int(t, "fixed")) {
      if (*fixed < 0 || *fixed > 63)
        fail_at(node_of(t, "fixed"), errc::attribute_value, fmt::format("fixed counter {} is out of range 0-63", *fixed));
      e.fixed = static_cast<unsigned>(*fixed);
    }
    if (e.fixed_only && !e.fixed)
      fail_at(*t.get("counters"), errc::invalid_argument,
              "'counters' may be empty only for an event that says its fixed counter ('fixed = N')");
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
    read_event_keys(cat, t, e);
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

}  // namespace pmc::detail

namespace pmc {

void EventCatalog::load_string(std::string_view toml_text, const std::string& name, std::string_view backend) {
  materialize();
  detail::CatalogState::of(*this).cache_key = detail::CatalogCache::kUncacheable;  // no file to key it by
  toml::table doc = detail::parse_toml_string(toml_text, name);
  try {
    detail::CatalogLoader::load(*this, doc, name, backend);
  } catch (...) {
    build_index();
    throw;
  }
  build_index();
}

namespace {

// The files load(path) reads: path itself, or a directory's *.toml in name order; each one safe
// to read (as root, events files others can write are refused: they decide what root programs).
std::vector<std::filesystem::path> catalog_files(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  if (auto why = detail::unsafe_for_root(path))
    throw Error(errc::permission, fmt::format("{}: not read: {}", path.string(), *why));
  std::error_code ec;
  std::vector<fs::path> files;
  struct stat st {};
  const bool found = detail::scoped_stat(path, st) == 0;
  if (found && S_ISDIR(st.st_mode)) {
    const auto names = detail::list_directory(path.native(), ec);  // sorted
    if (!names) throw Error(errc::io, fmt::format("{}: events directory cannot be read: {}", path.string(), ec.message()));
    for (const std::string& n : *names)
      if (n.size() > 5 && n.ends_with(".toml")) files.push_back(path / n);
    for (const auto& f : files)
      if (auto why = detail::unsafe_for_root(f))
        throw Error(errc::permission, fmt::format("{}: events file not read: {}", f.string(), *why));
  } else {
    if (!found) throw Error(errc::io, fmt::format("{}: no such events file or directory", path.string()));
    files.push_back(path);
  }
  return files;
}

}  // namespace

void detail::load_chain(EventCatalog& cat, const std::vector<std::filesystem::path>& paths, std::string_view backend) {
  // The key of each step is the key before it and the step's files: the last one's is known
  // without the records of the others.
  EventCatalog hollow;
  std::string key;
  for (const auto& path : paths) {
    key = CatalogCache::step_key(hollow, path, backend, catalog_files(path));
    if (key.empty()) break;
    CatalogState::of(hollow).cache_key = key;
  }
  if (!key.empty() && CatalogCache::restore(cat, key)) return;
  for (const auto& path : paths) cat.load(path, backend);
}

void EventCatalog::load(const std::filesystem::path& path, std::string_view backend) {
  const std::vector<std::filesystem::path> files = catalog_files(path);
  // The parse cache: these files, unchanged since a load that began as this catalog did, give
  // what that load gave (its events decoded only when asked for).
  const std::string key = detail::CatalogCache::step_key(*this, path, backend, files);
  if (!key.empty() && detail::CatalogCache::restore(*this, key)) return;
  materialize();
  try {
    for (const auto& f : files) {
      toml::table doc = detail::parse_toml_file(f, InputKind::events);
      detail::CatalogLoader::load(*this, doc, f.string(), backend);
    }
  } catch (...) {
    detail::CatalogState::of(*this).cache_key = detail::CatalogCache::kUncacheable;  // half loaded
    build_index();
    throw;
  }
  build_index();
  detail::CatalogState::of(*this).cache_key = key.empty() ? std::string(detail::CatalogCache::kUncacheable) : key;
  if (!key.empty()) detail::CatalogCache::store(*this);
}

}  // namespace pmc
