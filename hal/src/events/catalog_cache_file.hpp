// What the parts of the parse cache share (catalog_cache.hpp): the records of events
// (catalog_cache_records.cpp), the reading of cache files (catalog_cache_file.cpp), which
// catalog_cache_lazy.cpp uses to decode the events of a restored catalog, and the safe opening
// and writing of them (catalog_cache_safety.cpp).
#pragma once

#include <boost/crc.hpp>

#include "catalog_cache.hpp"

#include <cstdint>
#include <sys/stat.h>
#include <cstdio>
#include <filesystem>
#include <memory>
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
// Each entry holds the CRC-32C of its record too (the bytes of `events_section` from its offset to
// the next record's), so that one record read alone is checked.
void put_name_table(Writer& w, const std::vector<EventDef>& events, const std::vector<std::uint64_t>& records,
                    const std::string& events_section);
std::uint32_t name_hash(std::string_view name);  // of a name as iequal compares it

// True while a catalog is loaded again because its cache file failed: no cache (no recursion).
// Each thread's own; bypass_cache sets it for this thread.
bool cache_bypassed();
void bypass_cache(bool on);

struct FileCloser {
  std::FILE* f;
  std::unique_ptr<char[]> buffer;  // the stream's, when it was given one (closed before it is freed)
  explicit FileCloser(std::FILE* file) : f(file) {}
  FileCloser(FileCloser&& other) noexcept : f(std::exchange(other.f, nullptr)), buffer(std::move(other.buffer)) {}
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;
  FileCloser& operator=(FileCloser&&) = delete;
  ~FileCloser() {
    if (f) std::fclose(f);
  }
};

inline bool read_exact(std::FILE* f, void* to, std::size_t n) { return std::fread(to, 1, n, f) == n; }

// The CRC-32C (Castagnoli) each section of a cache file carries: the SSE4.2 CRC32 instruction
// where the CPU has it (eight bytes an instruction: the headers are checked at every Hal::open),
// Boost.CRC's table otherwise. Both give the same value (tests/hal/events/test_catalog_cache_safety.cpp).
class Checksum {
 public:
  Checksum();                                    // the instruction when this CPU has it
  explicit Checksum(bool hardware);              // the instruction (when available) or the table
  void add(const void* data, std::size_t n);
  [[nodiscard]] std::uint32_t value() const;
  [[nodiscard]] bool hardware() const { return hardware_; }

 private:
  bool hardware_;
  std::uint32_t state_ = 0xFFFFFFFFu;  // the instruction's running remainder
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> table_;
};

// The checksum of n bytes in one piece.
std::uint32_t checksum(const void* data, std::size_t n);

// The header of a cache file up to its shape: generation, key, shape; nullopt when not usable
// (another format, a checksum that does not match).
struct Header {
  std::uint64_t generation = 0;
  std::string key;
  std::string shape;
  std::uint64_t events_offset = 0, events_size = 0;  // the events' bytes (their checksum follows)
};
std::optional<Header> read_header(std::FILE* f);
std::optional<Header> read_header(std::string_view bytes);  // a whole file's bytes
// The bytes of a cache file holding these sections (the layout in catalog_cache_file.cpp).
std::string cache_file_bytes(const std::string& key, std::uint64_t generation, const std::string& shape,
                             const std::string& events, const std::string& names);

// What may go wrong with the files of a cache directory others can reach (catalog_cache_safety.cpp).
// One line on stderr when PMC_DEBUG names "cache" (or "all"): why the cache was not used.
void cache_debug(const std::string& line);
// Whether dir may hold cache files: a directory of this user's that nobody else may write; as
// root, by root_safety's rules for a directory root writes to (every component up to /, no
// symbolic link). `create` makes it first when it is missing.
bool usable_cache_directory(const std::filesystem::path& dir, bool create);
// A cache file opened for reading without blocking (a FIFO) and without following a symbolic
// link; nullopt unless it is a regular file of this user's that nobody else may write.
std::optional<FileCloser> open_for_reading(const std::filesystem::path& file);
// The same checks, and the whole file read (a parse-cache record, read at each Hal::open: no
// stdio stream and its buffer); `opened` is what fstat said of it.
std::optional<std::string> read_whole(const std::filesystem::path& file, struct stat& opened);
// A damaged cache file, read through f (or opened as `opened` says), removed (when the name
// still leads to it) so that the next load writes it again; `why` for PMC_DEBUG.
void discard(const std::filesystem::path& file, std::FILE* f, const char* why);
void discard(const std::filesystem::path& file, const struct stat& opened, const char* why);
// Puts bytes at target: written to a new file of an unpredictable name beside it, made
// exclusively (never through a link someone planted), then renamed into place.
bool write_atomically(const std::filesystem::path& target, const std::string& bytes);

}  // namespace pmc::detail
