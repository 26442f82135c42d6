// The parse cache of event catalogs. Parsing TOML is the slow part of Hal::open (every
// backend's data file for its probe table, the chosen backend's event files: about 35 ns a
// byte with TOML++, 25 ms for the AMD catalogs), so a catalog's state after each load() is kept
// in a binary file, keyed by the files it read (path, size, modification and change times,
// inode) and by the loads before it; each section of the file carries a checksum. A later load() of the same unchanged files restores the PMU description
// at once and decodes the events only when they are first asked for (EventCatalog::events() and
// the lookups). docs/performance.md describes it; PMC_CACHE_DIR moves or disables it.
#pragma once

#include <pmc/event.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// The bytes of a cache file's sections, as this machine lays them out (a key names the layout).
// Reader throws std::runtime_error past the end (a damaged file).
struct Writer {
  std::string out;
  void u64(std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void u32(std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void b(bool v) { out.push_back(v ? 1 : 0); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out.append(s);
  }
  void strs(const std::vector<std::string>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  void opt(const std::optional<std::uint64_t>& v) {
    b(v.has_value());
    if (v) u64(*v);
  }
  void opt(const std::optional<unsigned>& v) {
    b(v.has_value());
    if (v) u32(*v);
  }
};

struct Reader {
  const char* p;
  const char* end;
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end - p) < n) throw std::runtime_error("truncated cache file");
  }
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  std::uint32_t u32() { return pod<std::uint32_t>(); }
  bool b() {
    need(1);
    return *p++ != 0;
  }
  std::string str() {
    const std::uint32_t n = u32();
    need(n);
    std::string s(p, n);
    p += n;
    return s;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count());
    for (auto& s : v) s = str();
    return v;
  }
  std::optional<std::uint64_t> opt64() {
    if (!b()) return std::nullopt;
    return u64();
  }
  std::optional<unsigned> opt32() {
    if (!b()) return std::nullopt;
    return u32();
  }
  std::size_t count() {  // a vector's length, bounded by what is left (a byte per element at least)
    const std::uint32_t n = u32();
    need(n);
    return n;
  }
};

void put(Writer& w, const SourceRef& s);
SourceRef get_source(Reader& r);

// Where the events of a cached catalog are, to decode them when asked for.
struct CatalogSource {
  std::filesystem::path file;      // the cache file
  std::uint64_t generation = 0;    // the file's, when it was read (a rewritten file differs)
  std::uint64_t events_offset = 0;
  std::uint64_t events_size = 0;
  std::string key;                 // the loads, to parse them again when the file is gone

  // Lookups before the events are decoded (CatalogCache::lookup): the file's name table, read
  // at the first one, and the events found, decoded one by one (their addresses stay valid as
  // long as the source: the catalog and its copies).
  struct NameTable;
  mutable std::mutex lookup_mutex;
  mutable std::shared_ptr<const NameTable> names;  // null: not read yet
  mutable bool names_unreadable = false;
  mutable std::size_t lookups = 0;  // past kLookupsBeforeDecode, the catalog is decoded instead
  mutable std::map<std::size_t, std::unique_ptr<const EventDef>> singles;
};

struct CatalogCache {
  static constexpr const char* kUncacheable = "!";  // the key of a catalog no file describes (catalog_state.hpp)

  // The directory: $PMC_CACHE_DIR (set but empty: no cache), else $XDG_CACHE_HOME/pmchal, else
  // $HOME/.cache/pmchal; nullopt: no cache.
  static std::optional<std::filesystem::path> directory();
  // Whether there is one: directory() without a copy of the path (each copy of a
  // std::filesystem::path copies its components; a key is asked for several times per open).
  static bool has_directory();
  // The key of loading `files` (for `path`) for `backend` into cat as it is now; "" when the
  // load cannot be cached (no cache, a file that cannot be stat'ed, a catalog loaded from a
  // string, a half-finished load).
  static std::string step_key(const EventCatalog& cat, const std::filesystem::path& path, std::string_view backend,
                              const std::vector<std::filesystem::path>& files);
  // Restores cat to the state cached under key, its events pending; false when there is none
  // (or it is not usable: another owner, writable by others, not a regular file, a directory
  // root may not trust, another format, a checksum that does not match, a key collision).
  static bool restore(EventCatalog& cat, const std::string& key);
  // Keeps cat (loaded, its CatalogState::cache_key the key) in the cache; failures are ignored.
  static void store(const EventCatalog& cat);
  // The pending events of cat, from the cache file or, when that fails, by loading the files
  // again (without the cache).
  static void decode(const EventCatalog& cat, std::vector<EventDef>& out);
  // While cat's events are pending: what EventCatalog::find (kind name) or find_generic_mask
  // (kind generic; *mask set) would return, found in the cache file's name table and decoded
  // alone, without decoding the catalog (a thousand AMD definitions take 1.5 ms to decode, a
  // lookup needs one). `answered` false: the file cannot say (gone, rewritten), decode instead.
  enum class Lookup { name, generic };
  // A lookup reads the file's name table and parses the entries its hashed index points at
  // (reading the table costs a copy of it: 100 KB for Cascade Lake's 1,600 events), so a catalog
  // looked up more often than this is decoded.
  static constexpr std::size_t kLookupsBeforeDecode = 64;
  static const EventDef* lookup(const EventCatalog& cat, Lookup kind, std::string_view key, std::string_view tag,
                                const UnitMask** mask, bool& answered);
  // The cache file of a key.
  static std::filesystem::path file_of(const std::filesystem::path& dir, const std::string& key);
  // The shape section of a cache file: the catalog but its events (catalog_cache_records.cpp).
  // get_shape reads it into an empty catalog; false when the section does not end where it should.
  static void put_shape(Writer& w, const EventCatalog& cat);
  static bool get_shape(Reader& r, EventCatalog& cat);
};

// A [pmu] section in a cache record's bytes, and back (catalog_cache_records.cpp; read_pmu throws
// std::runtime_error on a damaged record, as Reader does).
void put_pmu(Writer& w, const PmuDescription& p);
PmuDescription read_pmu(Reader& r);

// The same cache for other parsed files (the metric files): a payload of bytes the caller
// writes and reads back, under a key that names the files and what was made of them.
struct ParseCache {
  // `what` (the kind and layout of the payload) and each file's path, size, modification and
  // change times, inode and device; "" when there is no cache or a file cannot be stat'ed.
  static std::string key(std::string_view what, const std::vector<std::filesystem::path>& files);
  // The same for paths held as text (no std::filesystem::path made of each).
  static std::string key_of_texts(std::string_view what, const std::vector<std::string>& files);
  // The payload stored under key, when a usable cache file has it (as CatalogCache::restore).
  static std::optional<std::string> load(const std::string& key);
  // Keeps the payload under key ("": nothing); failures are ignored.
  static void store(const std::string& key, const std::string& payload);
};

}  // namespace pmc::detail
