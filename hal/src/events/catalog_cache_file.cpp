// Cache files (catalog_cache.hpp): where they are (the directory and the name of a key's file),
// the key of a load (the files' stamps), reading and writing them where only this user can, and
// keeping and restoring a catalog or another parsed file (ParseCache) in them. A cache file:
//   "PMCCAT02", u64 generation, u32 key length + key, u64 shape length + shape,
//   u64 events length + events, u64 names length + names
// little-endian as the machine writes it (the key names the layout): the records are in
// catalog_cache_records.cpp, the events and names are read back in catalog_cache_lazy.cpp.
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"
#include "catalog_state.hpp"
#include "environment.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

constexpr char kMagic[8] = {'P', 'M', 'C', 'C', 'A', 'T', '0', '2'};

// While a catalog is loaded again because its cache file failed: no cache (no recursion).
thread_local bool t_bypass = false;

// Files

std::uint64_t fnv(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// A file or directory this user may trust: its own, written by nobody else.
bool trusted(const struct stat& st) {
  return st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

// A stat of each file into a key: path, size, modification time, inode, device; false when one
// cannot be stat'ed.
bool append_stamps(std::string& key, const std::vector<fs::path>& files) {
  auto number = [&key](std::uint64_t v, char after) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
    (void)ec;
    key.append(digits, static_cast<std::size_t>(end - digits));
    key += after;
  };
  for (const auto& f : files) {
    struct stat st{};
    if (::stat(f.c_str(), &st) != 0) return false;
    key.append("file\t").append(f.native()).append("\t");
    number(static_cast<std::uint64_t>(st.st_size), '\t');
    number(static_cast<std::uint64_t>(st.st_mtim.tv_sec), '.');
    number(static_cast<std::uint64_t>(st.st_mtim.tv_nsec), '\t');
    number(static_cast<std::uint64_t>(st.st_ino), '\t');
    number(static_cast<std::uint64_t>(st.st_dev), '\n');
  }
  return true;
}

// The cache file of a key, open, trusted (this user's, in a directory of this user's, written by
// nobody else) and holding that key, its header read; nullopt when there is none usable.
struct OpenCacheFile {
  FileCloser f{nullptr};
  Header header;
  fs::path file;
};
std::optional<OpenCacheFile> open_cache_file(const std::string& key) {
  const auto dir = CatalogCache::directory();
  if (!dir) return std::nullopt;
  OpenCacheFile out;
  out.file = CatalogCache::file_of(*dir, key);
  out.f.f = std::fopen(out.file.c_str(), "rb");
  if (!out.f.f) return std::nullopt;
  struct stat st{}, dst{};
  if (::fstat(fileno(out.f.f), &st) != 0 || !trusted(st) || ::stat(dir->c_str(), &dst) != 0 || !trusted(dst))
    return std::nullopt;
  auto h = read_header(out.f.f);
  if (!h || h->key != key) return std::nullopt;
  out.header = std::move(*h);
  return out;
}

// Writes a cache file: a temporary file of this user's only, renamed into place.
void write_cache_file(const std::string& key, const std::string& shape, const std::string& events,
                      const std::string& names = {}) {
  const auto dir = CatalogCache::directory();
  if (!dir) return;
  Writer file;
  file.out.append(kMagic, 8);
  file.u64(static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           (static_cast<std::uint64_t>(getpid()) << 40));
  file.str(key);
  file.u64(shape.size());
  file.out += shape;
  file.u64(events.size());
  file.out += events;
  file.u64(names.size());
  file.out += names;

  std::error_code ec;
  if (fs::create_directories(*dir, ec)) fs::permissions(*dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  struct stat dst{};
  if (::stat(dir->c_str(), &dst) != 0 || !trusted(dst)) return;
  const fs::path target = CatalogCache::file_of(*dir, key);
  const fs::path tmp = target.string() + fmt::format(".{}.tmp", getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  std::FILE* f = fd >= 0 ? fdopen(fd, "wb") : nullptr;
  if (!f) {
    if (fd >= 0) ::close(fd);
    return;
  }
  bool ok = std::fwrite(file.out.data(), 1, file.out.size(), f) == file.out.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), target.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace

bool& cache_bypassed() { return t_bypass; }

std::optional<Header> read_header(std::FILE* f) {
  char magic[8];
  Header h;
  std::uint32_t key_size = 0;
  std::uint64_t shape_size = 0;
  if (!read_exact(f, magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return std::nullopt;
  if (!read_exact(f, &h.generation, 8) || !read_exact(f, &key_size, 4) || key_size > (1u << 24)) return std::nullopt;
  h.key.resize(key_size);
  if (!read_exact(f, h.key.data(), key_size) || !read_exact(f, &shape_size, 8) || shape_size > (1u << 28))
    return std::nullopt;
  h.shape.resize(shape_size);
  if (!read_exact(f, h.shape.data(), shape_size) || !read_exact(f, &h.events_size, 8)) return std::nullopt;
  h.events_offset = 8 + 8 + 4 + key_size + 8 + shape_size + 8;
  return h;
}

std::optional<fs::path> CatalogCache::directory() {
  // Worked out again only when the environment changed since the last call (each load asks).
  struct Last {
    std::mutex mutex;
    std::string env;  // the three variables as they were, "\0"-separated ("\1": unset)
    std::optional<fs::path> dir;
  };
  static Last last;
  const char* names[] = {"PMC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  const char* values[3];
  std::string env;
  for (int i = 0; i < 3; ++i) {
    values[i] = environment(names[i]);
    env += values[i] ? values[i] : "\1";
    env += '\0';
  }
  std::lock_guard lock(last.mutex);
  if (env == last.env) return last.dir;
  std::optional<fs::path> dir;
  if (values[0]) {
    if (*values[0]) dir = fs::path(values[0]);
  } else if (values[1] && *values[1]) {
    dir = fs::path(values[1]) / "pmchal";
  } else if (values[2] && *values[2]) {
    dir = fs::path(values[2]) / ".cache" / "pmchal";
  }
  last.env = std::move(env);
  last.dir = dir;
  return dir;
}

fs::path CatalogCache::file_of(const fs::path& dir, const std::string& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = dir.native();
  name += "/catalog-";
  const std::uint64_t h = fnv(key);
  for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(h >> shift) & 0xF];
  name += ".bin";
  return fs::path(std::move(name));
}

std::string CatalogCache::step_key(const EventCatalog& cat, const fs::path& path, std::string_view backend,
                                   const std::vector<fs::path>& files) {
  const CatalogState* state = CatalogState::find(cat);
  if (t_bypass || (state && state->cache_key == kUncacheable) || !directory()) return {};
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
  if (!directory() || key.empty() || key == kUncacheable) return;
  Writer shape;
  put_shape(shape, cat);
  Writer events, names;
  events.u32(static_cast<std::uint32_t>(cat.events_.size()));
  std::vector<std::uint64_t> records;
  for (const auto& e : cat.events_) {
    records.push_back(events.out.size());
    put(events, e);
  }
  put_name_table(names, cat.events_, records);

  write_cache_file(key, shape.out, events.out, names.out);
}

std::string ParseCache::key(std::string_view what, const std::vector<fs::path>& files) {
  if (t_bypass || !CatalogCache::directory()) return {};
  std::string key = fmt::format("pmc-parsed 1 {}\n", what);
  if (!append_stamps(key, files)) return {};
  return key;
}

std::optional<std::string> ParseCache::load(const std::string& key) {
  auto opened = open_cache_file(key);
  if (!opened) return std::nullopt;
  return std::move(opened->header.shape);
}

void ParseCache::store(const std::string& key, const std::string& payload) {
  if (!key.empty()) write_cache_file(key, payload, {});
}

}  // namespace pmc::detail
