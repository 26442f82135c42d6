// libFuzzer: the reader of the parse cache (hal/src/events/catalog_cache.hpp and its .cpp files,
// docs/performance.md), fed a cache file of arbitrary bytes for a small catalog of this process's
// own, in a cache directory of its own. The catalog is then loaded (restored from that file, or
// parsed when the file is refused), looked up by name, alias, CPU tag and generic name, and
// decoded whole. The first byte of the input chooses what it is:
//   even: the whole cache file, as is (almost always refused: magic, checksums, key);
//   odd:  u32 shape length, u32 events length, then the shape, the events and the rest as the
//         name table, put into a well-formed file for the catalog's key with checksums that
//         match, so that the decoders behind the checksums see arbitrary bytes too.
// Anything escaping but pmc::Error, and any sanitizer report, is a finding. The seeds
// (fuzz/corpus/catalog_cache/) are of the odd kind, made from the cache files of bundled catalogs.
#include "catalog_cache.hpp"
#include "catalog_cache_file.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

namespace fs = std::filesystem;

const char* kToy = R"(backend = "toy"
modifiers = ["u"]
[format]
event = "0-7"
umask = "8-15"
usr = "16"
[cpus]
a = "CPU A"
[[event]]
name = "LOADS"
code = 0x43
desc = "loads"
aliases = ["MEM_LOADS"]
[[event]]
name = "CACHE"
code = 0x2E
desc = "cache lines"
cpus = ["a"]
[event.umasks]
masks = [{ name = "M", value = 0x08, desc = "modified", generic = "cache-misses" }]
)";

// The catalog, its cache file and key, made once: a private directory under the current one.
struct Setup {
  fs::path dir, toml, file;
  std::string key;
  Setup() {
    std::string name = (fs::current_path() / "fuzz-catalog-cache.XXXXXX").string();
    if (!::mkdtemp(name.data())) std::abort();
    dir = name;
    toml = dir / "toy.toml";
    std::ofstream(toml) << kToy;
    const fs::path cache = dir / "cache";
    ::setenv("PMC_CACHE_DIR", cache.c_str(), 1);
    pmc::EventCatalog c;
    c.load(toml, "toy");  // parsed, and kept in the cache
    for (const auto& e : fs::directory_iterator(cache))
      if (e.path().extension() == ".bin") file = e.path();
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (!f) std::abort();
    const auto header = pmc::detail::read_header(f);
    std::fclose(f);
    if (!header) std::abort();
    key = header->key;
  }
  ~Setup() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;
};

const Setup& setup() {
  static const Setup s;
  return s;
}

std::uint32_t u32_at(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void use(const pmc::EventCatalog& c) {
  for (const char* name : {"LOADS", "mem_loads", "CACHE", "NONE"}) (void)c.find(name, "a");
  const pmc::UnitMask* mask = nullptr;
  (void)c.find_generic_mask("cache-misses", "", &mask);
  std::size_t masks = 0;
  for (const auto& e : c.events())
    if (e.unit_masks) masks += e.unit_masks->masks.size();
  (void)masks;
  (void)c.find("LOADS");
  (void)c.pmu();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Setup& s = setup();
  std::string bytes;
  if (size > 0 && (data[0] & 1) && size >= 9) {
    const std::uint8_t* p = data + 9;
    std::size_t left = size - 9;
    const std::size_t shape_size = std::min<std::size_t>(u32_at(data + 1), left);
    const std::string shape(reinterpret_cast<const char*>(p), shape_size);
    p += shape_size;
    left -= shape_size;
    const std::size_t events_size = std::min<std::size_t>(u32_at(data + 5), left);
    const std::string events(reinterpret_cast<const char*>(p), events_size);
    p += events_size;
    left -= events_size;
    const std::string names(reinterpret_cast<const char*>(p), left);
    bytes = pmc::detail::cache_file_bytes(s.key, 1, shape, events, names);
  } else if (size > 0) {
    bytes.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  }
  {
    std::ofstream out(s.file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    pmc::EventCatalog c;
    c.load(s.toml, "toy");
    use(c);
    pmc::EventCatalog copy = c;  // a copy shares the pending events
    use(copy);
  } catch (const pmc::Error&) {
  }
  return 0;
}
