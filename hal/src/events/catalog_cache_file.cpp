// Cache files (catalog_cache.hpp): where they are (the directory and the name of a key's file),
// the key of a load (the files' stamps), reading and writing them (where nobody else can
// interfere: catalog_cache_safety.cpp), and keeping and restoring a catalog or another parsed
// file (ParseCache) in them. A cache file:
//   "PMCCAT04", u64 generation, u32 key length + key, u64 shape length + shape, u64 events
//   length, u32 CRC-32C of all the bytes before it;
//   the events, u32 CRC-32C of them;
//   u64 names length + names, u32 CRC-32C of the length and the names
// little-endian as the machine writes it (the key names the layout): the records are in
// catalog_cache_records.cpp, the events and names are read back in catalog_cache_lazy.cpp. A
// section whose checksum does not match is never used: the file is removed, the TOML parsed.
#include "bundled.hpp"
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"
#include "catalog_state.hpp"
#include "environment.hpp"
#include "root_safety.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace pmc::detail {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'P', 'M', 'C', 'C', 'A', 'T', '0', '4'};

// While a catalog is loaded again because its cache file failed: no cache (no recursion). The
// thread's flag is read only while some thread has it set: the first access to a thread-local
// variable costs a fresh process a lookup through every library (root_safety.cpp).
thread_local bool t_bypass = false;
std::atomic<int> g_bypassing{0};

// Files

// The hash that names a key's file: FNV-1a's constants over eight bytes at a time, each step's
// high bits folded down (a key is some kilobytes, hashed at every Hal::open; the name needs a
// spread of the key's bits, the header holds the key itself).
std::uint64_t key_hash(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, sizeof w);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
  return h;
}

// A stat of each file into a key: path, size, modification time, change time, inode, device;
// false when one cannot be stat'ed. The change time catches a file rewritten in place to the
// same size with its modification time set back (touch -d, utimensat): nobody can set it back.
const std::string& text_of(const fs::path& p) { return p.native(); }
const std::string& text_of(const std::string& p) { return p; }

template <class Path>
bool append_stamps(std::string& key, const std::vector<Path>& files) {
  auto number = [&key](std::uint64_t v, char after) {  // in hex: a third of decimal's cost
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v, 16);
    (void)ec;
    key.append(digits, static_cast<std::size_t>(end - digits));
    key += after;
  };
  for (const auto& f : files) {
    struct stat st{};
    if (scoped_stat(text_of(f), st) != 0) return false;
    key.append("file\t").append(text_of(f)).append("\t");
    number(static_cast<std::uint64_t>(st.st_size), '\t');
    number(static_cast<std::uint64_t>(st.st_mtim.tv_sec), '.');
    number(static_cast<std::uint64_t>(st.st_mtim.tv_nsec), '\t');
    number(static_cast<std::uint64_t>(st.st_ctim.tv_sec), '.');
    number(static_cast<std::uint64_t>(st.st_ctim.tv_nsec), '\t');
    number(static_cast<std::uint64_t>(st.st_ino), '\t');
    number(static_cast<std::uint64_t>(st.st_dev), '\n');
  }
  return true;
}

// The cache file of a key, open, trusted (this user's, in a directory of this user's, written by
// nobody else; opened without blocking or following a link) and holding that key, its header
// read and checked; nullopt when there is none usable (a damaged one is removed).
struct OpenCacheFile {
  FileCloser f{nullptr};
  Header header;
  fs::path file;
};
std::optional<OpenCacheFile> open_cache_file(const std::string& key) {
  const auto dir = CatalogCache::directory();
  if (!dir || !usable_cache_directory(*dir, false)) return std::nullopt;
  OpenCacheFile out;
  out.file = CatalogCache::file_of(*dir, key);
  auto f = open_for_reading(out.file);
  if (!f) return std::nullopt;
  std::swap(out.f.f, f->f);
  std::swap(out.f.buffer, f->buffer);
  auto h = read_header(out.f.f);
  if (!h) {
    discard(out.file, out.f.f, "another format, or its header does not match its checksum");
    return std::nullopt;
  }
  if (h->key != key) return std::nullopt;  // another key of the same hash: not ours to remove
  out.header = std::move(*h);
  return out;
}

// Writes a cache file: a temporary file of this user's only, renamed into place, in a directory
// this user may trust (made when missing).
void write_cache_file(const std::string& key, const std::string& shape, const std::string& events,
                      const std::string& names = {}) {
  const auto dir = CatalogCache::directory();
  if (!dir || !usable_cache_directory(*dir, true)) return;
  const std::uint64_t generation =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<std::uint64_t>(getpid()) << 40);
  write_atomically(CatalogCache::file_of(*dir, key), cache_file_bytes(key, generation, shape, events, names));
}

}  // namespace

bool cache_bypassed() { return g_bypassing.load(std::memory_order_acquire) != 0 && t_bypass; }

void bypass_cache(bool on) {
  if (t_bypass == on) return;
  t_bypass = on;
  g_bypassing.fetch_add(on ? 1 : -1, std::memory_order_acq_rel);
}

namespace {

// The header's fields in file order, each read by take(to, n) (false: the input ended before
// n bytes), checked against the checksum that follows them: a file's and bytes in memory alike.
template <class Take>
std::optional<Header> parse_header(Take take) {
  char magic[8];
  Header h;
  std::uint32_t key_size = 0, crc = 0;
  std::uint64_t shape_size = 0;
  Checksum sum;
  auto read = [&](void* to, std::size_t n) {
    if (!take(to, n)) return false;
    sum.add(to, n);
    return true;
  };
  if (!read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return std::nullopt;
  if (!read(&h.generation, 8) || !read(&key_size, 4) || key_size > (1u << 24)) return std::nullopt;
  h.key.resize(key_size);
  if (!read(h.key.data(), key_size) || !read(&shape_size, 8) || shape_size > (1u << 28)) return std::nullopt;
  h.shape.resize(shape_size);
  if (!read(h.shape.data(), shape_size) || !read(&h.events_size, 8) || h.events_size > (1u << 30)) return std::nullopt;
  if (!take(&crc, 4) || crc != sum.value()) return std::nullopt;
  h.events_offset = 8 + 8 + 4 + key_size + 8 + shape_size + 8 + 4;
  return h;
}

}  // namespace

std::optional<Header> read_header(std::FILE* f) {
  return parse_header([f](void* to, std::size_t n) { return read_exact(f, to, n); });
}

std::optional<Header> read_header(std::string_view bytes) {
  std::size_t at = 0;
  return parse_header([&](void* to, std::size_t n) {
    if (bytes.size() - at < n) return false;
    std::memcpy(to, bytes.data() + at, n);
    at += n;
    return true;
  });
}

std::string cache_file_bytes(const std::string& key, std::uint64_t generation, const std::string& shape,
                             const std::string& events, const std::string& names) {
  Writer file;
  file.out.append(kMagic, 8);
  file.u64(generation);
  file.str(key);
  file.u64(shape.size());
  file.out += shape;
  file.u64(events.size());
  file.u32(checksum(file.out.data(), file.out.size()));
  file.out += events;
  file.u32(checksum(events.data(), events.size()));
  const std::size_t names_at = file.out.size();
  file.u64(names.size());
  file.out += names;
  file.u32(checksum(file.out.data() + names_at, file.out.size() - names_at));
  return std::move(file.out);
}

namespace {

// The directory as the environment gives it now, in `last` (locked by `lock` on return): worked
// out again only when the environment changed since the last call (each load asks).
struct LastCacheDirectory {
  std::mutex mutex;
  std::optional<std::string> values[3];  // the three variables as they were (nullopt: unset)
  bool known = false;
  std::optional<fs::path> dir;
};
const std::optional<fs::path>& current_cache_directory(std::unique_lock<std::mutex>& lock) {
  // Never destroyed: no exit handler to register (a write to the C library's data, a page
  // fault in a freshly forked process), and usable from other statics' destructors.
  static LastCacheDirectory& last = *new LastCacheDirectory;
  const char* names[] = {"PMC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  const char* values[3];
  for (int i = 0; i < 3; ++i) values[i] = environment(names[i]);
  lock = std::unique_lock(last.mutex);
  bool same = last.known;
  for (int i = 0; i < 3 && same; ++i) same = values[i] ? last.values[i] == values[i] : !last.values[i];
  if (same) return last.dir;
  std::optional<fs::path> dir;
  if (values[0]) {
    if (*values[0]) dir = fs::path(values[0]);
  } else if (values[1] && *values[1]) {  // (joined as text: one path made, not three)
    dir = fs::path(joined_path(values[1], "pmchal"));
  } else if (values[2] && *values[2]) {
    dir = fs::path(joined_path(values[2], ".cache/pmchal"));
  }
  for (int i = 0; i < 3; ++i) last.values[i] = values[i] ? std::optional<std::string>(values[i]) : std::nullopt;
  last.known = true;
  last.dir = std::move(dir);
  return last.dir;
}

}  // namespace

std::optional<fs::path> CatalogCache::directory() {
  std::unique_lock<std::mutex> lock;
  return current_cache_directory(lock);
}

bool CatalogCache::has_directory() {
  std::unique_lock<std::mutex> lock;
  return current_cache_directory(lock).has_value();
}

fs::path CatalogCache::file_of(const fs::path& dir, const std::string& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = dir.native();
  name += "/catalog-";
  const std::uint64_t h = key_hash(key);
  for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(h >> shift) & 0xF];
  name += ".bin";
  return fs::path(std::move(name));
}

std::string CatalogCache::step_key(const EventCatalog& cat, const fs::path& path, std::string_view backend,
                                   const std::vector<fs::path>& files) {
  const CatalogState* state = CatalogState::find(cat);
  if (cache_bypassed() || (state && state->cache_key == kUncacheable) || !has_directory()) return {};
  std::string key = state ? state->cache_key : std::string();
  if (key.empty()) {
    // Only a catalog nothing was loaded into starts a key.
    if (!cat.files_.empty() || !cat.events_.empty() || (state && state->pending.load())) return {};
    key = layout_line();
  }
  key.append("step\t").append(backend).append("\t").append(path.native()).append("\n");
  if (!append_stamps(key, files)) return {};
  return key;
}

bool CatalogCache::restore(EventCatalog& cat, const std::string& key) {
  const auto opened = open_cache_file(key);
  if (!opened) return false;
  const Header* h = &opened->header;
  const fs::path& file = opened->file;
  try {
    Reader r{h->shape.data(), h->shape.data() + h->shape.size()};
    EventCatalog c;
    if (!get_shape(r, c)) return false;
    auto source = std::make_shared<CatalogSource>();
    source->file = file;
    source->generation = h->generation;
    source->events_offset = h->events_offset;
    source->events_size = h->events_size;
    source->key = key;
    CatalogState& state = CatalogState::of(c);
    state.cache_key = key;
    state.source = std::move(source);
    state.pending.store(true, std::memory_order_release);
    cat = std::move(c);
  } catch (const std::exception&) {  // a damaged file: parse the TOML instead
    return false;
  }
  return true;
}

void CatalogCache::store(const EventCatalog& cat) {
  const std::string& key = CatalogState::key(cat);
  if (!has_directory() || key.empty() || key == kUncacheable) return;
  Writer shape;
  put_shape(shape, cat);
  Writer events, names;
  events.u32(static_cast<std::uint32_t>(cat.events_.size()));
  std::vector<std::uint64_t> records;
  for (const auto& e : cat.events_) {
    records.push_back(events.out.size());
    put(events, e);
  }
  put_name_table(names, cat.events_, records, events.out);

  write_cache_file(key, shape.out, events.out, names.out);
}

namespace {

template <class Path>
std::string parse_key(std::string_view what, const std::vector<Path>& files) {
  if (cache_bypassed() || !CatalogCache::has_directory()) return {};
  std::string key;
  key.reserve(what.size() + 160 * files.size() + 32);  // a file's line: its path and seven numbers
  key.append("pmc-parsed 2 ").append(what) += '\n';
  if (!append_stamps(key, files)) return {};
  return key;
}

}  // namespace

std::string ParseCache::key(std::string_view what, const std::vector<fs::path>& files) { return parse_key(what, files); }
std::string ParseCache::key_of_texts(std::string_view what, const std::vector<std::string>& files) {
  return parse_key(what, files);
}

std::optional<std::string> ParseCache::load(const std::string& key) {
  // The record read whole, without a stdio stream (what Hal::open reads of it is all of it).
  const auto dir = CatalogCache::directory();
  if (!dir || !usable_cache_directory(*dir, false)) return std::nullopt;
  const fs::path file = CatalogCache::file_of(*dir, key);
  struct stat opened {};
  const std::optional<std::string> bytes = read_whole(file, opened);
  if (!bytes) return std::nullopt;
  std::optional<Header> h = read_header(*bytes);
  if (!h) {
    discard(file, opened, "another format, or its header does not match its checksum");
    return std::nullopt;
  }
  if (h->key != key) return std::nullopt;  // another key of the same hash: not ours to remove
  return std::move(h->shape);
}

void ParseCache::store(const std::string& key, const std::string& payload) {
  if (!key.empty()) write_cache_file(key, payload, {});
}

}  // namespace pmc::detail
