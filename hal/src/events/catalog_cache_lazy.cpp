// The events of a catalog restored from the parse cache, decoded when first asked for: a lookup
// before then finds its event in the cache file's name table and decodes it alone
// (CatalogCache::lookup), anything else decodes them all (EventCatalog::materialize), from the
// cache file or, when it went away, by loading the files again.
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"
#include "catalog_state.hpp"
#include "text.hpp"

#include <pmc/event.hpp>


#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pmc {

namespace detail {

namespace fs = std::filesystem;

// The name table of a cache file (put_name_table), read whole; its entries are parsed only when
// a hash of the index points at them.
struct CatalogSource::NameTable {
  std::unique_ptr<char[]> bytes;  // the section, which the views point into (not zeroed first:
  std::size_t size = 0;            // resize() of a string writes each byte, 170,000 instructions)
  std::uint32_t entries = 0;
  const char* starts = nullptr;   // entries x u32
  std::uint32_t keys = 0;
  const char* index = nullptr;    // keys x (u32 hash, u32 key), sorted
  const char* first = nullptr;    // the entries
  struct Entry {
    std::uint64_t offset = 0;  // of the event's record in the events section
    std::uint32_t crc = 0;     // of the record
    std::string_view name, generic;
    std::vector<std::string_view> aliases, cpus;
    std::vector<std::pair<std::uint32_t, std::string_view>> mask_generics;  // (unit mask index, generic)
  };
};

namespace {

using NameTable = CatalogSource::NameTable;

// The cache file of a source, opened (as safely as at first: catalog_cache_safety.cpp) and
// checked to be the one it was read from, positioned at its events.
std::optional<FileCloser> reopen(const CatalogSource& src) {
  auto f = open_for_reading(src.file);
  if (!f) return std::nullopt;
  const auto h = read_header(f->f);
  if (!h || h->generation != src.generation || h->key != src.key || h->events_size != src.events_size)
    return std::nullopt;
  return f;
}

std::string_view view(Reader& r) {
  const std::uint32_t n = r.u32();
  r.need(n);
  const std::string_view v(r.p, n);
  r.p += n;
  return v;
}

std::uint32_t u32_at(const char* p, std::size_t i) {
  std::uint32_t v;
  std::memcpy(&v, p + 4 * i, 4);
  return v;
}

std::shared_ptr<const NameTable> read_names(const CatalogSource& src) {
  auto f = reopen(src);
  if (!f) return nullptr;  // gone or rewritten: decode the whole catalog instead
  try {
    // Past the events and their checksum.
    if (std::fseek(f->f, static_cast<long>(src.events_offset + src.events_size + 4), SEEK_SET) != 0)
      throw std::runtime_error("no name table");
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
    if (!read_exact(f->f, &size, 8) || size > (1u << 28)) throw std::runtime_error("no name table");
    auto t = std::make_shared<NameTable>();
    t->bytes.reset(new char[size]);
    t->size = size;
    if (!read_exact(f->f, t->bytes.get(), size) || !read_exact(f->f, &crc, 4))
      throw std::runtime_error("truncated name table");
    Checksum sum;
    sum.add(&size, 8);
    sum.add(t->bytes.get(), size);
    if (crc != sum.value()) throw std::runtime_error("its name table does not match its checksum");
    Reader r{t->bytes.get(), t->bytes.get() + size};
    t->entries = r.u32();
    r.need(std::size_t{4} * t->entries);
    t->starts = r.p;
    r.p += std::size_t{4} * t->entries;
    t->keys = r.u32();
    r.need(std::size_t{8} * t->keys);
    t->index = r.p;
    r.p += std::size_t{8} * t->keys;
    t->first = r.p;
    return t;
  } catch (const std::exception& e) {  // damaged: decode the whole catalog instead (the TOML)
    discard(src.file, f->f, e.what());
    return nullptr;
  }
}

// Entry i, parsed (throws when the table is damaged).
NameTable::Entry entry(const CatalogSource& src, const NameTable& t, std::uint32_t i) {
  if (i >= t.entries) throw std::runtime_error("name table index out of range");
  const char* end = t.bytes.get() + t.size;
  const std::uint32_t start = u32_at(t.starts, i);
  if (start > static_cast<std::size_t>(end - t.first)) throw std::runtime_error("name table entry out of range");
  Reader r{t.first + start, end};
  NameTable::Entry e;
  e.offset = r.u64();
  if (e.offset >= src.events_size) throw std::runtime_error("record out of range");
  e.crc = r.u32();
  e.name = view(r);
  for (std::size_t n = r.count(); n > 0; --n) e.aliases.push_back(view(r));
  e.generic = view(r);
  for (std::size_t n = r.count(); n > 0; --n) {
    const std::uint32_t unit = r.u32();
    e.mask_generics.emplace_back(unit, view(r));
  }
  for (std::size_t n = r.count(); n > 0; --n) e.cpus.push_back(view(r));
  return e;
}

// Event i of the table, decoded alone from its record.
std::unique_ptr<const EventDef> read_event(const CatalogSource& src, const NameTable& t, std::uint32_t i) {
  try {
    const NameTable::Entry e = entry(src, t, i);
    const std::uint64_t begin = e.offset;
    const std::uint64_t end = i + 1 < t.entries ? entry(src, t, i + 1).offset : src.events_size;
    if (end <= begin || end > src.events_size) return nullptr;
    auto f = reopen(src);
    if (!f) return nullptr;
    std::string bytes(end - begin, '\0');
    if (std::fseek(f->f, static_cast<long>(src.events_offset + begin), SEEK_SET) != 0 ||
        !read_exact(f->f, bytes.data(), bytes.size()) || checksum(bytes.data(), bytes.size()) != e.crc) {
      discard(src.file, f->f, "an event's record is cut short or does not match its checksum");
      return nullptr;
    }
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    auto def = std::make_unique<EventDef>(get_event(r));
    if (r.p != r.end || !iequal(def->name, e.name)) return nullptr;
    return def;
  } catch (const std::exception&) {
    return nullptr;
  }
}

// Where in the table an event is, by EventCatalog::find's rules (kind name: a name, in catalog
// order, before an alias) or find_generic_mask's (an event's generic before its unit masks'),
// over the entries whose hash matches the key. `unit` is 1 + the unit mask whose generic it is.
std::optional<std::uint32_t> find_entry(const CatalogSource& src, const NameTable& t, CatalogCache::Lookup kind,
                                        std::string_view key, std::string_view tag, std::uint32_t& unit) {
  auto applies = [&](const NameTable::Entry& e) {
    return tag.empty() || e.cpus.empty() || std::find(e.cpus.begin(), e.cpus.end(), tag) != e.cpus.end();
  };
  const std::uint32_t hash = name_hash(key);
  std::uint32_t lo = 0, hi = t.keys;  // the first key of this hash
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (u32_at(t.index, 2 * std::size_t{mid}) < hash) lo = mid + 1;
    else hi = mid;
  }
  for (std::uint32_t k = lo; k < t.keys && u32_at(t.index, 2 * std::size_t{k}) == hash; ++k) {
    const std::uint32_t packed = u32_at(t.index, 2 * std::size_t{k} + 1);
    const std::uint32_t what = packed >> 30, i = packed & ((1u << 30) - 1);
    if ((kind == CatalogCache::Lookup::name) != (what < 2)) continue;
    const NameTable::Entry e = entry(src, t, i);
    if (!applies(e)) continue;
    if (what == 0 && iequal(e.name, key)) return i;
    if (what == 1)
      for (std::string_view a : e.aliases)
        if (iequal(a, key)) return i;
    if (what == 2) {
      if (iequal(e.generic, key)) return i;
      for (const auto& [m, generic] : e.mask_generics)
        if (iequal(generic, key)) {
          unit = m + 1;
          return i;
        }
    }
  }
  return std::nullopt;
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
  const NameTable& t = *src->names;
  std::uint32_t unit = 0;
  std::optional<std::uint32_t> found;
  try {
    found = find_entry(*src, t, kind, kind == Lookup::name ? key : perf_generic_name(key), tag, unit);
  } catch (const std::exception&) {  // a damaged table: decode the catalog instead
    return nullptr;
  }
  if (!found) {
    answered = true;
    return nullptr;
  }
  auto it = src->singles.find(*found);
  if (it == src->singles.end()) {
    std::unique_ptr<const EventDef> e = read_event(*src, t, *found);
    if (!e) return nullptr;
    it = src->singles.emplace(*found, std::move(e)).first;
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
  if (auto f = reopen(src)) {  // positioned at the events; else gone or rewritten
    try {
      const std::unique_ptr<char[]> bytes(new char[src.events_size]);  // not zeroed: all read
      std::uint32_t crc = 0;
      if (!read_exact(f->f, bytes.get(), src.events_size) || !read_exact(f->f, &crc, 4))
        throw std::runtime_error("its events are cut short");
      if (checksum(bytes.get(), src.events_size) != crc)
        throw std::runtime_error("its events do not match their checksum");
      Reader r{bytes.get(), bytes.get() + src.events_size};
      std::vector<EventDef> events(r.count());
      for (auto& e : events) e = get_event(r);
      out = std::move(events);
      return;
    } catch (const std::exception& e) {
      discard(src.file, f->f, e.what());
    }
  }
  // The cache file went away, changed or is damaged: load the files again.
  bypass_cache(true);
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
    bypass_cache(false);
    throw;
  }
  bypass_cache(false);
}

}  // namespace detail

void EventCatalog::materialize() const {
  detail::CatalogState* state = state_.get();
  if (!state || !state->pending.load(std::memory_order_acquire)) [[likely]]
    return;
  std::lock_guard lock(state->decode_mutex);
  if (!state->pending.load(std::memory_order_relaxed)) return;
  detail::CatalogCache::decode(*this, events_);
  build_index();
  state->pending.store(false, std::memory_order_release);
}

}  // namespace pmc
