// The events of a catalog restored from the parse cache, decoded when first asked for: a lookup
// before then finds its event in the cache file's name table and decodes it alone
// (CatalogCache::lookup), anything else decodes them all (EventCatalog::materialize), from the
// cache file or, when it went away, by loading the files again.
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"
#include "catalog_state.hpp"
#include "text.hpp"

#include <pmc/event.hpp>

#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pmc {

namespace detail {

namespace fs = std::filesystem;

namespace {

std::mutex& decode_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

struct CatalogSource::NameTable {
  std::string bytes;  // the section, which the views point into
  struct Entry {
    std::uint64_t offset = 0;  // of the event's record in the events section
    std::string_view name, generic;
    std::uint32_t aliases = 0, aliases_end = 0;  // in views
    std::uint32_t cpus = 0, cpus_end = 0;        // in views
    std::uint32_t masks = 0, masks_end = 0;      // in mask_generics
  };
  std::vector<Entry> entries;
  std::vector<std::string_view> views;
  std::vector<std::pair<std::uint32_t, std::string_view>> mask_generics;  // (unit mask index, generic)
};

namespace {

// The cache file of a source, opened and checked to be the one it was read from, positioned at
// its events.
std::optional<FileCloser> reopen(const CatalogSource& src) {
  FileCloser f{std::fopen(src.file.c_str(), "rb")};
  if (!f.f) return std::nullopt;
  const auto h = read_header(f.f);
  if (!h || h->generation != src.generation || h->key != src.key) return std::nullopt;
  return f;
}

std::string_view view(Reader& r) {
  const std::uint32_t n = r.u32();
  r.need(n);
  const std::string_view v(r.p, n);
  r.p += n;
  return v;
}

std::shared_ptr<const CatalogSource::NameTable> read_names(const CatalogSource& src) {
  try {
    auto f = reopen(src);
    if (!f || std::fseek(f->f, static_cast<long>(src.events_offset + src.events_size), SEEK_SET) != 0) return nullptr;
    std::uint64_t size = 0;
    if (!read_exact(f->f, &size, 8) || size > (1u << 28)) return nullptr;
    auto t = std::make_shared<CatalogSource::NameTable>();
    t->bytes.resize(size);
    if (!read_exact(f->f, t->bytes.data(), size)) return nullptr;
    Reader r{t->bytes.data(), t->bytes.data() + t->bytes.size()};
    t->entries.resize(r.count());
    for (auto& e : t->entries) {
      e.offset = r.u64();
      e.name = view(r);
      e.aliases = static_cast<std::uint32_t>(t->views.size());
      for (std::size_t n = r.count(); n > 0; --n) t->views.push_back(view(r));
      e.aliases_end = static_cast<std::uint32_t>(t->views.size());
      e.generic = view(r);
      e.masks = static_cast<std::uint32_t>(t->mask_generics.size());
      for (std::size_t n = r.count(); n > 0; --n) {
        const std::uint32_t unit = r.u32();
        t->mask_generics.emplace_back(unit, view(r));
      }
      e.masks_end = static_cast<std::uint32_t>(t->mask_generics.size());
      e.cpus = static_cast<std::uint32_t>(t->views.size());
      for (std::size_t n = r.count(); n > 0; --n) t->views.push_back(view(r));
      e.cpus_end = static_cast<std::uint32_t>(t->views.size());
      if (e.offset >= src.events_size) return nullptr;
    }
    if (r.p != r.end) return nullptr;
    return t;
  } catch (const std::exception&) {  // damaged: decode the whole catalog instead
    return nullptr;
  }
}

// Event i of the table, decoded alone from its record.
std::unique_ptr<const EventDef> read_event(const CatalogSource& src, const CatalogSource::NameTable& t, std::size_t i) {
  try {
    const std::uint64_t begin = t.entries[i].offset;
    const std::uint64_t end = i + 1 < t.entries.size() ? t.entries[i + 1].offset : src.events_size;
    if (end <= begin || end > src.events_size) return nullptr;
    auto f = reopen(src);
    if (!f || std::fseek(f->f, static_cast<long>(src.events_offset + begin), SEEK_SET) != 0) return nullptr;
    std::string bytes(end - begin, '\0');
    if (!read_exact(f->f, bytes.data(), bytes.size())) return nullptr;
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    auto e = std::make_unique<EventDef>(get_event(r));
    if (r.p != r.end || !iequal(e->name, t.entries[i].name)) return nullptr;
    return e;
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

const EventDef* CatalogCache::lookup(const EventCatalog& cat, Lookup kind, std::string_view key, std::string_view tag,
                                     const UnitMask** mask, bool& answered) {
  answered = false;
  if (mask) *mask = nullptr;
  const CatalogState* state = CatalogState::find(cat);
  if (!state) return nullptr;
  const std::shared_ptr<const CatalogSource> src = state->source;
  if (!src) return nullptr;
  std::lock_guard lock(src->lookup_mutex);
  if (++src->lookups > kLookupsBeforeDecode) return nullptr;
  if (!src->names && !src->names_unreadable) {
    src->names = read_names(*src);
    src->names_unreadable = !src->names;
  }
  if (!src->names) return nullptr;
  const CatalogSource::NameTable& t = *src->names;
  using Entry = CatalogSource::NameTable::Entry;
  // EventCatalog::find's and find_generic_mask's rules, over the table in catalog order.
  auto applies = [&](const Entry& e) {
    if (tag.empty() || e.cpus == e.cpus_end) return true;
    for (std::uint32_t c = e.cpus; c < e.cpus_end; ++c)
      if (t.views[c] == tag) return true;
    return false;
  };
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t found = kNone;
  std::uint32_t unit = 0;  // 1 + the unit mask whose generic it is
  if (kind == Lookup::name) {
    for (std::size_t i = 0; i < t.entries.size() && found == kNone; ++i)
      if (iequal(t.entries[i].name, key) && applies(t.entries[i])) found = i;
    for (std::size_t i = 0; i < t.entries.size() && found == kNone; ++i) {
      const Entry& e = t.entries[i];
      if (!applies(e)) continue;
      for (std::uint32_t a = e.aliases; a < e.aliases_end && found == kNone; ++a)
        if (iequal(t.views[a], key)) found = i;
    }
  } else {
    const std::string_view generic = perf_generic_name(key);
    for (std::size_t i = 0; i < t.entries.size() && found == kNone; ++i) {
      const Entry& e = t.entries[i];
      if (!applies(e)) continue;
      if (iequal(e.generic, generic)) {
        found = i;
        break;
      }
      for (std::uint32_t m = e.masks; m < e.masks_end && found == kNone; ++m)
        if (iequal(t.mask_generics[m].second, generic)) {
          found = i;
          unit = t.mask_generics[m].first + 1;
        }
    }
  }
  if (found == kNone) {
    answered = true;
    return nullptr;
  }
  auto it = src->singles.find(found);
  if (it == src->singles.end()) {
    std::unique_ptr<const EventDef> e = read_event(*src, t, found);
    if (!e) return nullptr;
    it = src->singles.emplace(found, std::move(e)).first;
  }
  const EventDef* def = it->second.get();
  if (unit) {
    if (!def->unit_masks || unit > def->unit_masks->masks.size()) return nullptr;
    if (mask) *mask = &def->unit_masks->masks[unit - 1];
  }
  answered = true;
  return def;
}

void CatalogCache::decode(const EventCatalog& cat, std::vector<EventDef>& out) {
  const CatalogSource& src = *CatalogState::find(cat)->source;
  try {
    auto f = reopen(src);  // positioned at the events
    if (!f) throw std::runtime_error("gone or rewritten");
    std::string bytes(src.events_size, '\0');
    if (!read_exact(f->f, bytes.data(), bytes.size())) throw std::runtime_error("truncated");
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<EventDef> events(r.count());
    for (auto& e : events) e = get_event(r);
    out = std::move(events);
    return;
  } catch (const std::exception&) {  // the cache file went away or changed: load the files again
  }
  cache_bypassed() = true;
  try {
    EventCatalog again;
    std::string_view key = src.key;
    while (!key.empty()) {
      const std::size_t eol = key.find('\n');
      std::string_view line = key.substr(0, eol);
      key = eol == std::string_view::npos ? std::string_view() : key.substr(eol + 1);
      if (line.rfind("step\t", 0) != 0) continue;
      line.remove_prefix(5);
      const std::size_t tab = line.find('\t');
      again.load(fs::path(std::string(line.substr(tab + 1))), line.substr(0, tab));
    }
    out = again.events_;
  } catch (...) {
    cache_bypassed() = false;
    throw;
  }
  cache_bypassed() = false;
}

}  // namespace detail

void EventCatalog::materialize() const {
  detail::CatalogState* state = state_.get();
  if (!state || !state->pending.load(std::memory_order_acquire)) [[likely]]
    return;
  std::lock_guard lock(detail::decode_mutex());
  if (!state->pending.load(std::memory_order_relaxed)) return;
  detail::CatalogCache::decode(*this, events_);
  build_index();
  state->pending.store(false, std::memory_order_release);
}

}  // namespace pmc
