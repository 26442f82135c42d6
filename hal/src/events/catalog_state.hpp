// What an EventCatalog keeps beside the data its public header shows: the lookup tables of
// find() (hal/src/events/catalog_lookup.cpp), the encoder's tables (encode_tables.hpp) and the
// parse cache's state (catalog_cache.hpp). The public header names this type only behind a
// pointer, so that neither the tables nor the cache are part of the library's API or ABI.
#pragma once

#include <pmc/catalog.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc::detail {

struct CatalogSource;  // catalog_cache.hpp
struct EncodeTables;   // encode_tables.hpp

struct CatalogState {
  // Lookups: open-addressed tables of event positions + 1 by a case-folded hash of the name, the
  // aliases and the generic names (event, unit mask + 1 or 0).
  std::vector<std::uint64_t> name_index, alias_index;  // hash << 32 | position + 1
  std::vector<std::pair<std::uint32_t, std::uint32_t>> generic_index;
  std::shared_ptr<const EncodeTables> encode_tables;  // shared by copies: it holds no pointers
  // The parse cache: what the loads so far were (the key of the next; "" before any load, "!"
  // when they cannot be cached), and the events a cached load left to decode: the source is
  // shared by copies of the catalog, the flag is each copy's own.
  std::string cache_key;
  std::shared_ptr<const CatalogSource> source;
  std::atomic<bool> pending{false};
  // Held while the pending events are decoded (EventCatalog::materialize): the catalog's own, so
  // that every copy of the library's code in a process takes the same one (a static mutex is
  // one per copy, and a program linking the core statically beside a plugin that loads
  // libpmchal has two: two threads decoded one catalog at once, one freeing what the other read).
  std::mutex decode_mutex;

  CatalogState() = default;
  CatalogState(const CatalogState& other);
  CatalogState& operator=(const CatalogState&) = delete;
  ~CatalogState();

  // The state of cat, made when first needed (a catalog nothing was loaded into has none).
  static CatalogState& of(const EventCatalog& cat);
  // The state of cat, or nullptr when it has none yet.
  static const CatalogState* find(const EventCatalog& cat) { return cat.state_.get(); }
  // The parse cache's key of cat ("" when nothing was loaded).
  static const std::string& key(const EventCatalog& cat);
};

// Whether event e applies to a CPU with the tag (every event applies to the empty tag): the
// filter of the catalog's queries.
inline bool applies(const EventDef& e, std::string_view tag) {
  return tag.empty() || e.cpus.empty() || std::find(e.cpus.begin(), e.cpus.end(), tag) != e.cpus.end();
}

}  // namespace pmc::detail
