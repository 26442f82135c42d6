// The parse cache of event catalogs. Parsing TOML is the slow part of Hal::open (every
// backend's data file for its probe table, the chosen backend's event files: about 35 ns a
// byte with TOML++, 25 ms for the AMD catalogs), so a catalog's state after each load() is kept
// in a binary file, keyed by the files it read (path, size, modification time, inode) and by
// the loads before it. A later load() of the same unchanged files restores the PMU description
// at once and decodes the events only when they are first asked for (EventCatalog::events() and
// the lookups). docs/performance.md describes it; PMC_CACHE_DIR moves or disables it.
#pragma once

#include <pmc/event.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// Where the events of a cached catalog are, to decode them when asked for.
struct CatalogSource {
  std::filesystem::path file;      // the cache file
  std::uint64_t generation = 0;    // the file's, when it was read (a rewritten file differs)
  std::uint64_t events_offset = 0;
  std::uint64_t events_size = 0;
  std::string key;                 // the loads, to parse them again when the file is gone
};

struct CatalogCache {
  static constexpr const char* kUncacheable = "!";  // cache_key_ of a catalog no file describes

  // The directory: $PMC_CACHE_DIR (set but empty: no cache), else $XDG_CACHE_HOME/pmchal, else
  // $HOME/.cache/pmchal; nullopt: no cache.
  static std::optional<std::filesystem::path> directory();
  // The key of loading `files` (for `path`) for `backend` into cat as it is now; "" when the
  // load cannot be cached (no cache, a file that cannot be stat'ed, a catalog loaded from a
  // string, a half-finished load).
  static std::string step_key(const EventCatalog& cat, const std::filesystem::path& path, std::string_view backend,
                              const std::vector<std::filesystem::path>& files);
  // Restores cat to the state cached under key, its events pending; false when there is none
  // (or it is not usable: another owner, writable by others, another format, a key collision).
  static bool restore(EventCatalog& cat, const std::string& key);
  // Keeps cat (loaded, cat.cache_key_ its key) in the cache; failures are ignored.
  static void store(const EventCatalog& cat);
  // The pending events of cat, from the cache file or, when that fails, by loading the files
  // again (without the cache).
  static void decode(const EventCatalog& cat, std::vector<EventDef>& out);
  // The cache file of a key.
  static std::filesystem::path file_of(const std::filesystem::path& dir, const std::string& key);
};

}  // namespace pmc::detail
