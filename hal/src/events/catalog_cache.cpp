// The parse cache of event catalogs (catalog_cache.hpp). A cache file:
//   "PMCCAT01", u64 generation, u32 key length + key, u64 shape length + shape,
//   u64 events length + events
// little-endian as the machine writes it (the key names the layout). The shape is everything
// but the events: the register format, CPU tags, files, modifiers, the PMU description.
#include "catalog_cache.hpp"
#include "text.hpp"

#include <pmc/error.hpp>

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

namespace pmc {

namespace detail {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'P', 'M', 'C', 'C', 'A', 'T', '0', '2'};

// While a catalog is loaded again because its cache file failed: no cache (no recursion).
thread_local bool t_bypass = false;

// The layout the cache files were written with: a change of the structures changes the key.
std::string layout_line() {
  return fmt::format("pmc-catalog 2 {} {} {} {} {} {} {} {}\n", sizeof(EventDef), sizeof(UnitMaskGroup),
                     sizeof(UnitMask), sizeof(ModifierDef), sizeof(PmuDescription), sizeof(ProbeRule),
                     sizeof(CounterGroup), sizeof(BitField));
}

void put(Writer& w, const BitField& f) {
  w.u32(f.count);
  for (const auto& r : f.ranges) {
    w.u32(r.low);
    w.u32(r.width);
  }
}
BitField get_bitfield(Reader& r) {
  BitField f;
  f.count = r.u32();
  for (auto& range : f.ranges) {
    range.low = r.u32();
    range.width = r.u32();
  }
  return f;
}


void put(Writer& w, const ModifierDef& m) {
  w.str(m.name);
  w.str(m.field);
  w.u32(static_cast<std::uint32_t>(m.kind));
  w.b(m.inverted);
  w.opt(m.max);
  w.str(m.description);
  w.str(m.refusal);
  put(w, m.source);
}
ModifierDef get_modifier(Reader& r) {
  ModifierDef m;
  m.name = r.str();
  m.field = r.str();
  m.kind = static_cast<ModifierDef::Kind>(r.u32());
  m.inverted = r.b();
  m.max = r.opt64();
  m.description = r.str();
  m.refusal = r.str();
  m.source = get_source(r);
  return m;
}

void put(Writer& w, const std::vector<ValueRange>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& x : v) {
    w.u32(x.low);
    w.u32(x.high);
  }
}
std::vector<ValueRange> get_ranges(Reader& r) {
  std::vector<ValueRange> v(r.count());
  for (auto& x : v) {
    x.low = r.u32();
    x.high = r.u32();
  }
  return v;
}

void put(Writer& w, const std::vector<CpuidField>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& f : v) {
    w.u32(f.leaf);
    w.u32(f.subleaf);
    w.u32(f.reg);
    w.u32(f.low);
    w.u32(f.width);
    w.str(f.text);
  }
}
std::vector<CpuidField> get_fields(Reader& r) {
  std::vector<CpuidField> v(r.count());
  for (auto& f : v) {
    f.leaf = r.u32();
    f.subleaf = r.u32();
    f.reg = r.u32();
    f.low = r.u32();
    f.width = r.u32();
    f.text = r.str();
  }
  return v;
}

void put(Writer& w, const PmuDescription& p) {
  w.str(p.description);
  w.str(p.model);
  w.u32(static_cast<std::uint32_t>(p.score));
  w.u64(p.reserved);
  w.strs(p.driver_fields);
  w.opt(p.merge_event);
  w.str(p.unmatched);
  w.u32(static_cast<std::uint32_t>(p.counters.size()));
  for (const auto& g : p.counters) {
    w.u32(static_cast<std::uint32_t>(g.kind));
    for (std::uint32_t v : {g.first, g.count, g.width, g.control, g.control_stride, g.counter, g.counter_stride,
                            g.control_shift, g.control_shift_stride, g.control_bits})
      w.u32(v);
    w.opt(g.rdpmc);
    w.strs(g.cpus);
  }
  w.u32(static_cast<std::uint32_t>(p.registers.size()));
  for (const auto& d : p.registers) {
    w.u32(d.address);
    w.str(d.name);
    w.strs(d.cpus);
  }
  w.u32(static_cast<std::uint32_t>(p.probe.size()));
  for (const auto& rule : p.probe) {
    w.strs(rule.vendors);
    put(w, rule.families);
    put(w, rule.models);
    put(w, rule.steppings);
    put(w, rule.cpuid_set);
    put(w, rule.cpuid_clear);
    w.str(rule.tag);
    w.str(rule.name);
    w.str(rule.refusal);
    put(w, rule.source);
  }
}
PmuDescription get_pmu(Reader& r) {
  PmuDescription p;
  p.description = r.str();
  p.model = r.str();
  p.score = static_cast<int>(r.u32());
  p.reserved = r.u64();
  p.driver_fields = r.strs();
  p.merge_event = r.opt64();
  p.unmatched = r.str();
  p.counters.resize(r.count());
  for (auto& g : p.counters) {
    g.kind = static_cast<CounterKind>(r.u32());
    for (std::uint32_t* v : {&g.first, &g.count, &g.width, &g.control, &g.control_stride, &g.counter,
                             &g.counter_stride, &g.control_shift, &g.control_shift_stride, &g.control_bits})
      *v = r.u32();
    g.rdpmc = r.opt32();
    g.cpus = r.strs();
  }
  p.registers.resize(r.count());
  for (auto& d : p.registers) {
    d.address = r.u32();
    d.name = r.str();
    d.cpus = r.strs();
  }
  p.probe.resize(r.count());
  for (auto& rule : p.probe) {
    rule.vendors = r.strs();
    rule.families = get_ranges(r);
    rule.models = get_ranges(r);
    rule.steppings = get_ranges(r);
    rule.cpuid_set = get_fields(r);
    rule.cpuid_clear = get_fields(r);
    rule.tag = r.str();
    rule.name = r.str();
    rule.refusal = r.str();
    rule.source = get_source(r);
  }
  return p;
}

void put(Writer& w, const UnitMaskGroup& g) {
  w.str(g.name);
  w.b(g.combinable);
  w.u32(static_cast<std::uint32_t>(g.masks.size()));
  for (const auto& m : g.masks) {
    w.str(m.name);
    w.u64(m.value);
    w.str(m.description);
    w.str(m.generic);
  }
  w.strs(g.default_masks);
}
UnitMaskGroup get_group(Reader& r) {
  UnitMaskGroup g;
  g.name = r.str();
  g.combinable = r.b();
  g.masks.resize(r.count());
  for (auto& m : g.masks) {
    m.name = r.str();
    m.value = r.u64();
    m.description = r.str();
    m.generic = r.str();
  }
  g.default_masks = r.strs();
  return g;
}

void put(Writer& w, const EventDef& e) {
  w.str(e.name);
  w.u64(e.code);
  w.str(e.description);
  w.str(e.generic);
  w.u32(static_cast<std::uint32_t>(e.counters.size()));
  for (unsigned c : e.counters) w.u32(c);
  w.opt(e.fixed);
  w.strs(e.modifiers);
  w.u32(static_cast<std::uint32_t>(e.defaults.size()));
  for (const auto& [k, v] : e.defaults) {
    w.str(k);
    w.u64(v);
  }
  w.strs(e.cpus);
  w.b(e.unit_masks.has_value());
  if (e.unit_masks) put(w, *e.unit_masks);
  w.opt(e.fixed_umask);
  w.b(e.merge);
  w.str(e.reference);
  put(w, e.source);
  w.strs(e.aliases);
}
EventDef get_event(Reader& r) {
  EventDef e;
  e.name = r.str();
  e.code = r.u64();
  e.description = r.str();
  e.generic = r.str();
  e.counters.resize(r.count());
  for (auto& c : e.counters) c = r.u32();
  e.fixed = r.opt32();
  e.modifiers = r.strs();
  for (std::size_t n = r.count(); n > 0; --n) {
    std::string k = r.str();
    e.defaults[std::move(k)] = r.u64();
  }
  e.cpus = r.strs();
  if (r.b()) e.unit_masks = get_group(r);
  e.fixed_umask = r.opt64();
  e.merge = r.b();
  e.reference = r.str();
  e.source = get_source(r);
  e.aliases = r.strs();
  return e;
}

// ---------------------------------------------------------------------------------------------
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

bool read_exact(std::FILE* f, void* to, std::size_t n) { return std::fread(to, 1, n, f) == n; }

// The header of a cache file up to its shape: generation, key, shape; nullopt when not usable.
struct Header {
  std::uint64_t generation = 0;
  std::string key;
  std::string shape;
  std::uint64_t events_offset = 0, events_size = 0;
};
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

// The name table of a cache file (after the events): per event, in catalog order, the offset
// of its record in the events section and what a lookup compares, so that one event can be found
// and decoded without the others.
void put_names(Writer& w, const EventDef& e, std::size_t record_offset) {
  w.u64(record_offset);
  w.str(e.name);
  w.strs(e.aliases);
  w.str(e.generic);
  std::uint32_t masks = 0;
  if (e.unit_masks)
    for (const auto& m : e.unit_masks->masks) masks += !m.generic.empty();
  w.u32(masks);
  if (e.unit_masks)
    for (std::size_t m = 0; m < e.unit_masks->masks.size(); ++m)
      if (!e.unit_masks->masks[m].generic.empty()) {
        w.u32(static_cast<std::uint32_t>(m));
        w.str(e.unit_masks->masks[m].generic);
      }
  w.strs(e.cpus);
}

std::mutex& decode_mutex() {
  static std::mutex m;
  return m;
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

void put(Writer& w, const SourceRef& s) {
  w.str(s.file);
  w.u32(s.line);
  w.u32(s.column);
}
SourceRef get_source(Reader& r) {
  SourceRef s;
  s.file = r.str();
  s.line = r.u32();
  s.column = r.u32();
  return s;
}

// ---------------------------------------------------------------------------------------------

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
    values[i] = std::getenv(names[i]);
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
  if (t_bypass || cat.cache_key_ == kUncacheable || !directory()) return {};
  std::string key = cat.cache_key_;
  if (key.empty()) {
    // Only a catalog nothing was loaded into starts a key.
    if (!cat.files_.empty() || !cat.events_.empty() || cat.pending_.pending.load()) return {};
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
    for (std::size_t n = r.count(); n > 0; --n) {
      std::string name = r.str();
      c.format_.add(std::move(name), get_bitfield(r));
    }
    c.cpus_.resize(r.count());
    for (auto& t : c.cpus_) {
      t.name = r.str();
      t.description = r.str();
    }
    c.files_ = r.strs();
    c.default_modifiers_ = r.strs();
    c.modifiers_.resize(r.count());
    for (auto& m : c.modifiers_) m = get_modifier(r);
    c.pmu_ = get_pmu(r);
    c.description_ = r.str();
    c.backend_ = r.str();
    if (r.p != r.end) return false;
    auto source = std::make_shared<CatalogSource>();
    source->file = file;
    source->generation = h->generation;
    source->events_offset = h->events_offset;
    source->events_size = h->events_size;
    source->key = key;
    c.cache_key_ = key;
    c.pending_.source = std::move(source);
    c.pending_.pending.store(true, std::memory_order_release);
    cat = std::move(c);
  } catch (const std::exception&) {  // a damaged file: parse the TOML instead
    return false;
  }
  return true;
}

void CatalogCache::store(const EventCatalog& cat) {
  if (!directory() || cat.cache_key_.empty() || cat.cache_key_ == kUncacheable) return;
  Writer shape;
  shape.u32(static_cast<std::uint32_t>(cat.format_.fields().size()));
  for (const auto& [name, field] : cat.format_.fields()) {
    shape.str(name);
    put(shape, field);
  }
  shape.u32(static_cast<std::uint32_t>(cat.cpus_.size()));
  for (const auto& t : cat.cpus_) {
    shape.str(t.name);
    shape.str(t.description);
  }
  shape.strs(cat.files_);
  shape.strs(cat.default_modifiers_);
  shape.u32(static_cast<std::uint32_t>(cat.modifiers_.size()));
  for (const auto& m : cat.modifiers_) put(shape, m);
  put(shape, cat.pmu_);
  shape.str(cat.description_);
  shape.str(cat.backend_);
  Writer events, names;
  events.u32(static_cast<std::uint32_t>(cat.events_.size()));
  names.u32(static_cast<std::uint32_t>(cat.events_.size()));
  for (const auto& e : cat.events_) {
    put_names(names, e, events.out.size());
    put(events, e);
  }

  write_cache_file(cat.cache_key_, shape.out, events.out, names.out);
}

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
  const std::shared_ptr<const CatalogSource> src = cat.pending_.source;
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
  const CatalogSource& src = *cat.pending_.source;
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
  t_bypass = true;
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
    t_bypass = false;
    throw;
  }
  t_bypass = false;
}

PendingEvents::PendingEvents(const PendingEvents& other)
    : source(other.source), pending(other.pending.load(std::memory_order_acquire)) {}

PendingEvents& PendingEvents::operator=(const PendingEvents& other) {
  if (this != &other) {
    source = other.source;
    pending.store(other.pending.load(std::memory_order_acquire), std::memory_order_release);
  }
  return *this;
}

PendingEvents::PendingEvents(PendingEvents&& other) noexcept
    : source(std::move(other.source)), pending(other.pending.load(std::memory_order_acquire)) {
  other.pending.store(false, std::memory_order_relaxed);
}

PendingEvents& PendingEvents::operator=(PendingEvents&& other) noexcept {
  if (this != &other) {
    source = std::move(other.source);
    pending.store(other.pending.load(std::memory_order_acquire), std::memory_order_release);
    other.pending.store(false, std::memory_order_relaxed);
  }
  return *this;
}

PendingEvents::~PendingEvents() = default;

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

}  // namespace detail

void EventCatalog::materialize() const {
  if (!pending_.pending.load(std::memory_order_acquire)) [[likely]]
    return;
  std::lock_guard lock(detail::decode_mutex());
  if (!pending_.pending.load(std::memory_order_relaxed)) return;
  detail::CatalogCache::decode(*this, events_);
  build_index();
  pending_.pending.store(false, std::memory_order_release);
}

}  // namespace pmc
