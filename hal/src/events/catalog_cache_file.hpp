// What the parts of the parse cache share (catalog_cache.hpp): the records of events
// (catalog_cache_records.cpp) and the reading of cache files (catalog_cache_file.cpp), which
// catalog_cache_lazy.cpp uses to decode the events of a restored catalog.
#pragma once

#include "catalog_cache.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc::detail {

// The layout the cache files were written with: a change of the structures changes the key.
std::string layout_line();
// An event's record, and its entry in the name table (after the events): per event, in catalog
// order, the offset of its record in the events section and what a lookup compares, so that one
// event can be found and decoded without the others.
void put(Writer& w, const EventDef& e);
EventDef get_event(Reader& r);
void put_name_table(Writer& w, const std::vector<EventDef>& events, const std::vector<std::uint64_t>& records);
std::uint32_t name_hash(std::string_view name);  // of a name as iequal compares it

// True while a catalog is loaded again because its cache file failed: no cache (no recursion).
// Each thread's own.
bool& cache_bypassed();

struct FileCloser {
  std::FILE* f;
  explicit FileCloser(std::FILE* file) : f(file) {}
  FileCloser(FileCloser&& other) noexcept : f(std::exchange(other.f, nullptr)) {}
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;
  FileCloser& operator=(FileCloser&&) = delete;
  ~FileCloser() {
    if (f) std::fclose(f);
  }
};

inline bool read_exact(std::FILE* f, void* to, std::size_t n) { return std::fread(to, 1, n, f) == n; }

// The header of a cache file up to its shape: generation, key, shape; nullopt when not usable.
struct Header {
  std::uint64_t generation = 0;
  std::string key;
  std::string shape;
  std::uint64_t events_offset = 0, events_size = 0;
};
std::optional<Header> read_header(std::FILE* f);

}  // namespace pmc::detail
