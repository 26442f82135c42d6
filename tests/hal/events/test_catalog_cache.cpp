#define BOOST_TEST_MODULE catalog_cache
#include <boost/test/unit_test.hpp>

// The parse cache of event catalogs (hal/src/events/catalog_cache.hpp, docs/performance.md): a load of
// unchanged files restores what the first load parsed, with the events decoded on first use;
// a changed file is parsed again; a cache file someone else could have written is not trusted;
// PMC_CACHE_DIR moves the cache, or turns it off when empty. And the hashed lookups find what
// the catalog order says they should.

#include "catalog_cache.hpp"
#include "catalog_loader.hpp"
#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>
#include <pmc/metrics.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::spit;
using pmc_test::TempDir;

const char* kToy = R"(backend = "toy"
modifiers = ["u", "k"]
[format]
event = "0-7"
umask = "8-15"
usr = "16"
os = "17"
[cpus]
a = "CPU A"
b = "CPU B"
[[probe]]
vendor = "GenuineIntel"
family = 6
tag = "a"
name = "a toy"
[[event]]
name = "LOADS"
code = 0x43
desc = "loads"
aliases = ["MEM_LOADS"]
[[event]]
name = "STORES"
code = 0x44
desc = "stores on A"
cpus = ["a"]
generic = "stores"
[[event]]
name = "STORES"
code = 0x45
desc = "stores on B"
cpus = ["b"]
[[event]]
name = "CACHE"
code = 0x2E
desc = "cache lines"
[event.umasks]
combinable = true
default = ["M"]
masks = [
  { name = "M", value = 0x08, desc = "modified", generic = "cache-misses" },
  { name = "I", value = 0x01, desc = "invalid" },
]
)";

// PMC_CACHE_DIR for the life of the object (the cache reads it at each load).
class CacheDir {
 public:
  explicit CacheDir(const std::optional<fs::path>& dir) {
    if (const char* old = std::getenv("PMC_CACHE_DIR")) saved_ = old;
    if (dir) setenv("PMC_CACHE_DIR", dir->c_str(), 1);
    else setenv("PMC_CACHE_DIR", "", 1);
  }
  ~CacheDir() {
    if (saved_) setenv("PMC_CACHE_DIR", saved_->c_str(), 1);
    else unsetenv("PMC_CACHE_DIR");
  }

 private:
  std::optional<std::string> saved_;
};

std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".bin") out.push_back(e.path());
  return out;
}

pmc::EventCatalog load(const fs::path& file) {
  pmc::EventCatalog c;
  c.load(file, "toy");
  return c;
}

std::string slurp(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_second_load_restores_the_first) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  const pmc::EventCatalog first = load(file);
  BOOST_TEST(cache_files(cache).size() == 1u);
  const pmc::EventCatalog second = load(file);
  // The same shape ...
  BOOST_TEST(second.backend() == "toy");
  BOOST_TEST(second.files() == first.files());
  BOOST_REQUIRE_EQUAL(second.pmu().probe.size(), 1u);
  BOOST_TEST(second.pmu().probe[0].name == "a toy");
  BOOST_TEST(second.pmu().probe[0].source.line == 11u);  // where [[probe]] is in kToy
  BOOST_TEST(second.format().field("umask")->mask() == 0xFF00u);
  BOOST_TEST(second.cpu_tags().size() == 2u);
  // ... and the same events, in the same order, with their sources.
  BOOST_REQUIRE_EQUAL(second.events().size(), first.events().size());
  for (std::size_t i = 0; i < first.events().size(); ++i) {
    const pmc::EventDef &a = first.events()[i], &b = second.events()[i];
    BOOST_TEST(a.name == b.name);
    BOOST_TEST(a.code == b.code);
    BOOST_TEST(a.cpus == b.cpus);
    BOOST_TEST(a.aliases == b.aliases);
    BOOST_TEST(a.source.str() == b.source.str());
    BOOST_TEST(a.unit_masks.has_value() == b.unit_masks.has_value());
  }
  BOOST_TEST(second.find("CACHE")->unit_masks->masks.at(0).generic == "cache-misses");
  BOOST_TEST(cache_files(cache).size() == 1u);  // nothing new to keep
}

BOOST_AUTO_TEST_CASE(a_changed_file_is_parsed_again) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  BOOST_TEST(load(file).find("LOADS")->code == 0x43u);
  std::string changed = kToy;
  changed.replace(changed.find("code = 0x43"), 11, "code = 0x4F");  // same size
  spit(file, changed);
  // Another modification time (and inode: spit writes a new file), so another key.
  struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};
  BOOST_REQUIRE(utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
  BOOST_TEST(load(file).find("LOADS")->code == 0x4Fu);
}

BOOST_AUTO_TEST_CASE(events_come_back_when_the_cache_file_is_gone) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  (void)load(file);
  const pmc::EventCatalog restored = load(file);  // restored, events not decoded yet
  for (const auto& f : cache_files(cache)) fs::remove(f);
  BOOST_TEST(restored.find("STORES", "b")->code == 0x45u);  // parsed again from toy.toml
  BOOST_TEST(restored.events().size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_cache_file_others_can_write_is_not_trusted) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  (void)load(file);
  const auto files = cache_files(cache);
  BOOST_REQUIRE_EQUAL(files.size(), 1u);
  // Ours: restored from it, it stays as it is.
  struct stat before{}, after{};
  BOOST_REQUIRE(::stat(files[0].c_str(), &before) == 0);
  BOOST_TEST(load(file).find("LOADS")->description == "loads");
  BOOST_REQUIRE(::stat(files[0].c_str(), &after) == 0);
  BOOST_TEST(after.st_ino == before.st_ino);
  // Others may write it: not read, the TOML parsed and a file of ours written in its place.
  fs::permissions(files[0], fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_write);
  BOOST_TEST(load(file).find("LOADS")->description == "loads");
  BOOST_REQUIRE(::stat(files[0].c_str(), &after) == 0);
  BOOST_TEST(after.st_ino != before.st_ino);
  BOOST_TEST((after.st_mode & 0777) == 0600u);
}

BOOST_AUTO_TEST_CASE(an_empty_cache_dir_turns_the_cache_off) {
  TempDir tmp;
  const fs::path file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(std::nullopt);
  BOOST_TEST(!pmc::detail::CatalogCache::directory());
  BOOST_TEST(load(file).events().size() == 4u);
}

// has_directory() answers what directory() does, from the same memory, as the variable changes.
BOOST_AUTO_TEST_CASE(the_cache_directory_follows_the_environment) {
  TempDir tmp;
  {
    CacheDir env(tmp.path() / "one");
    BOOST_TEST(pmc::detail::CatalogCache::has_directory());
    BOOST_TEST(pmc::detail::CatalogCache::directory().value() == tmp.path() / "one");
  }
  {
    CacheDir off(std::nullopt);
    BOOST_TEST(!pmc::detail::CatalogCache::has_directory());
    BOOST_TEST(!pmc::detail::CatalogCache::directory());
  }
  CacheDir env(tmp.path() / "two");
  BOOST_TEST(pmc::detail::CatalogCache::has_directory());
  BOOST_TEST(pmc::detail::CatalogCache::directory().value() == tmp.path() / "two");
}

BOOST_AUTO_TEST_CASE(lookups_follow_the_catalog_order) {
  pmc::EventCatalog c;
  c.load_string(kToy, "toy.toml", "toy");
  // Names in any case; an alias when no name matches; per-CPU definitions by tag.
  BOOST_TEST(c.find("loads")->code == 0x43u);
  BOOST_TEST(c.find("mem_loads")->code == 0x43u);
  BOOST_TEST(c.find("STORES", "a")->code == 0x44u);
  BOOST_TEST(c.find("STORES", "b")->code == 0x45u);
  BOOST_TEST(c.find("STORES")->code == 0x44u);  // no tag: the first definition
  BOOST_TEST(c.find("NOPE") == nullptr);
  // Generic names: an event's own, a unit mask's (with the mask), only where the tag applies.
  std::vector<std::string> masks{"stale"};
  BOOST_TEST(c.find_generic("stores", "a", &masks)->code == 0x44u);
  BOOST_TEST(masks.empty());
  BOOST_TEST(c.find_generic("stores", "b", &masks) == nullptr);
  BOOST_TEST(c.find_generic("CACHE-MISSES", "", &masks)->code == 0x2Eu);
  BOOST_TEST(masks == std::vector<std::string>{"M"});
  // A later file's event named like an earlier alias: the name wins.
  c.load_string("backend = \"toy\"\n[[event]]\nname = \"MEM_LOADS\"\ncode = 0x99\ndesc = \"later\"\n", "later.toml", "toy");
  BOOST_TEST(c.find("MEM_LOADS")->code == 0x99u);
}

BOOST_AUTO_TEST_CASE(hal_open_through_the_cache_is_hal_open) {
  // Every backend's data file and the chosen one's event files, cold and then from the cache:
  // the same verdicts, the same encodings.
  TempDir tmp;
  pmc::Config cfg;
  cfg.cpu = (fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "amd-zen4-genoa.txt").string();
  std::vector<std::string> verdicts[2];
  std::string canonical[2];
  std::uint64_t config[2] = {};
  {
    CacheDir env(std::nullopt);
    const pmc::Hal hal = pmc::Hal::open(cfg);
    for (const auto& c : hal.candidates()) verdicts[0].push_back(c.backend + ": " + c.match.reason);
    const pmc::Encoding e = hal.encode("LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:u");
    canonical[0] = e.canonical;
    config[0] = e.config;
  }
  CacheDir env(tmp.path() / "cache");
  for (int round = 0; round < 2; ++round) {  // the first fills the cache, the second reads it
    const pmc::Hal hal = pmc::Hal::open(cfg);
    verdicts[1].clear();
    for (const auto& c : hal.candidates()) verdicts[1].push_back(c.backend + ": " + c.match.reason);
    const pmc::Encoding e = hal.encode("LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:u");
    canonical[1] = e.canonical;
    config[1] = e.config;
    BOOST_TEST(verdicts[1] == verdicts[0], "round " << round);
    BOOST_TEST(canonical[1] == canonical[0]);
    BOOST_TEST(config[1] == config[0]);
  }
  BOOST_TEST(!cache_files(tmp.path() / "cache").empty());
  // LS_DISPATCH (0x29) with LD_DISPATCH | STORE_DISPATCH (0x01 | 0x02), USR (bit 16).
  BOOST_TEST(config[0] == 0x10329u);
}

// The metric files go through the same cache: a second load of an unchanged file gives the same
// metrics (formula, inputs, source position, flags) from the cache file; a changed file is read
// again; a damaged cache file is ignored; an error in a file is reported at every load (nothing
// is kept of a file that failed).
BOOST_AUTO_TEST_CASE(metric_files_are_cached_too) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "m.toml";
  const std::string text = R"(description = "two metrics"
[[metric]]
name = "IPC"
default = true
group = "basic"
events = ["instructions", "cycles"]
formula = "instructions / cycles"
unit = "insn per cycle"
description = "per cycle"

[[metric]]
name = "UTIL"
events = ["t=task-clock"]
formula = "t / duration_time"
unit = "CPUs utilized"
cpus = ["a", "b"]
)";
  spit(file, text);
  CacheDir env(cache);
  pmc::MetricCatalog first;
  first.load(file);
  BOOST_TEST(cache_files(cache).size() == 1u);
  pmc::MetricCatalog second;
  second.load(file);
  BOOST_TEST(cache_files(cache).size() == 1u);
  BOOST_REQUIRE_EQUAL(second.metrics().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const pmc::MetricDef &a = first.metrics()[i], &b = second.metrics()[i];
    BOOST_TEST(a.name == b.name);
    BOOST_TEST(a.group == b.group);
    BOOST_TEST(a.formula == b.formula);
    BOOST_TEST(a.unit == b.unit);
    BOOST_TEST(a.description == b.description);
    BOOST_TEST(a.cpus == b.cpus);
    BOOST_TEST(a.source.str() == b.source.str());
    BOOST_TEST(a.by_default == b.by_default);
    BOOST_TEST(a.uses_duration == b.uses_duration);
    BOOST_REQUIRE_EQUAL(a.events.size(), b.events.size());
    for (std::size_t k = 0; k < a.events.size(); ++k) {
      BOOST_TEST(a.events[k].variable == b.events[k].variable);
      BOOST_TEST(a.events[k].event == b.events[k].event);
    }
  }
  BOOST_TEST(second.metrics()[1].uses_duration);
  BOOST_TEST(second.metrics()[1].events[0].variable == "t");
  BOOST_TEST(second.metrics()[1].source.line == 11u);  // where the second [[metric]] is
  BOOST_TEST(second.find("ipc")->by_default);

  // A damaged cache file: the TOML is read instead.
  for (const auto& f : cache_files(cache)) {
    std::string bytes = slurp(f);
    bytes.resize(bytes.size() - 3);
    spit(f, bytes);
  }
  pmc::MetricCatalog third;
  third.load(file);
  BOOST_TEST(third.metrics().size() == 2u);
  BOOST_TEST(third.metrics()[0].formula == "instructions / cycles");

  // A changed file is read again, and a formula error in it reported with its place.
  std::string changed = text;
  changed.replace(changed.find("instructions / cycles"), 21, "instructions / cycle)");
  spit(file, changed);
  struct timespec times[2] = {{0, UTIME_OMIT}, {2, 0}};
  BOOST_REQUIRE(utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
  for (int round = 0; round < 2; ++round) {
    try {
      pmc::MetricCatalog bad;
      bad.load(file);
      BOOST_ERROR("a formula muParser rejects was accepted, round " << round);
    } catch (const pmc::Error& e) {
      BOOST_TEST(std::string(e.what()).find(file.string() + ":7:") != std::string::npos, e.what());
    }
  }
}

// A catalog restored from the cache answers its first lookups from the cache file's name table,
// decoding only the event found: the same answers as the decoded catalog, by name (any case),
// alias, CPU tag and generic name (an event's own or a unit mask's), and none where it has none.
// When the cache file changes under it, the lookups fall back to decoding (the TOML again).
BOOST_AUTO_TEST_CASE(lookups_before_decoding_agree_with_the_decoded_catalog) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  const pmc::EventCatalog decoded = load(file);  // parsed (and cached)
  auto same = [](const pmc::EventDef* a, const pmc::EventDef* b) {
    if (!a || !b) return a == b;
    return a->name == b->name && a->code == b->code && a->cpus == b->cpus && a->description == b->description &&
           a->source.str() == b->source.str();
  };
  const std::vector<std::pair<std::string, std::string>> lookups = {
      {"LOADS", ""}, {"loads", "b"}, {"MEM_LOADS", ""}, {"mem_loads", "a"}, {"STORES", ""}, {"STORES", "a"},
      {"STORES", "b"}, {"CACHE", "a"}, {"NOPE", ""}, {"STORES", "c"}};
  for (const auto& [name, tag] : lookups) {
    const pmc::EventCatalog restored = load(file);  // each lookup the first of a fresh restore
    BOOST_TEST(same(restored.find(name, tag), decoded.find(name, tag)), name << " on '" << tag << "'");
  }
  for (const auto& [generic, tag] : std::vector<std::pair<std::string, std::string>>{
           {"stores", ""}, {"stores", "a"}, {"stores", "b"}, {"cache-misses", "b"}, {"cycles", ""}}) {
    const pmc::EventCatalog restored = load(file);
    const pmc::UnitMask *got = nullptr, *want = nullptr;
    BOOST_TEST(same(restored.find_generic_mask(generic, tag, &got), decoded.find_generic_mask(generic, tag, &want)),
               generic << " on '" << tag << "'");
    BOOST_TEST((got ? got->name : "") == (want ? want->name : ""), generic);
  }
  // A second file whose event is named like the first file's alias and whose generic name meets
  // a unit mask's of the first: restored, the name wins over the alias although it comes later,
  // and the first event in catalog order answers a generic name, as decoded.
  const fs::path first = tmp.path() / "first.toml", second = tmp.path() / "second.toml";
  spit(first, R"(backend = "toy"
[format]
event = "0-7"
umask = "8-15"
[[event]]
name = "FIRST"
code = 0x10
desc = "first"
aliases = ["SECOND", "first_alias"]
[event.umasks]
masks = [{ name = "X", value = 0x01, desc = "x", generic = "shared-generic" }]
)");
  spit(second, "backend = \"toy\"\n[[event]]\nname = \"SECOND\"\ncode = 0x20\ndesc = \"second\"\n"
               "generic = \"shared-generic\"\n");
  auto both = [&] {
    pmc::EventCatalog c;
    c.load(first, "toy");
    c.load(second, "toy");
    return c;
  };
  const pmc::EventCatalog both_decoded = both();
  (void)both_decoded.events();
  BOOST_TEST(both().find("second")->code == 0x20u);
  BOOST_TEST(both().find("FIRST_ALIAS")->code == 0x10u);
  const pmc::EventCatalog both_restored = both();
  const pmc::UnitMask* x = nullptr;
  BOOST_TEST(both_restored.find_generic_mask("shared-generic", "", &x)->code == 0x10u);
  BOOST_TEST((x && x->name == "X"));
  BOOST_TEST(same(both().find("second"), both_decoded.find("second")));

  // Several lookups on one restored catalog, then its events: all of them, as decoded.
  const pmc::EventCatalog restored = load(file);
  BOOST_TEST(restored.find("CACHE")->unit_masks->masks.size() == 2u);
  BOOST_TEST(restored.find("STORES", "b")->code == 0x45u);
  BOOST_TEST(restored.events().size() == decoded.events().size());
  BOOST_TEST(restored.find("LOADS")->code == 0x43u);  // decoded now: the hashed index answers

  // The cache file rewritten (another generation) after a restore: the lookup decodes instead,
  // from the TOML, and still finds the event.
  const pmc::EventCatalog stale = load(file);
  for (const auto& f : cache_files(cache)) {
    std::string bytes = slurp(f);
    bytes[8] = static_cast<char>(bytes[8] ^ 0x5A);  // the generation
    spit(f, bytes);
  }
  BOOST_REQUIRE(stale.find("MEM_LOADS"));
  BOOST_TEST(stale.find("MEM_LOADS")->code == 0x43u);
}

// Hal's catalog at its first use (load_chain): the data file, then an events directory, restored
// from the record of the whole chain without reading the data file's own record; the same
// catalog as the loads one by one, with the cache or without it, and a changed file of the
// directory read again.
BOOST_AUTO_TEST_CASE(a_chain_of_loads_is_restored_from_its_last_record) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml", more = tmp.path() / "toy";
  spit(file, kToy);
  fs::create_directories(more);
  spit(more / "extra.toml", "backend = \"toy\"\n[[event]]\nname = \"MISSES\"\ncode = 0x51\ndesc = \"misses\"\n");
  auto one_by_one = [&] {
    pmc::EventCatalog c;
    c.load(file, "toy");
    c.load(more, "toy");
    return c;
  };
  auto chained = [&] {
    pmc::EventCatalog c;
    pmc::detail::load_chain(c, {file, more}, "toy");
    return c;
  };
  CacheDir env(cache);
  const pmc::EventCatalog first = one_by_one();  // both steps' records written
  const std::size_t records = cache_files(cache).size();
  BOOST_TEST(records == 2u);
  // The data file's record gone: the chain does not need it.
  for (const fs::path& f : cache_files(cache))
    if (slurp(f).find("MISSES") == std::string::npos) fs::remove(f);
  BOOST_REQUIRE_EQUAL(cache_files(cache).size(), 1u);
  const pmc::EventCatalog second = chained();
  BOOST_TEST(cache_files(cache).size() == 1u);  // restored: nothing parsed, nothing written
  BOOST_TEST(second.files() == first.files());
  BOOST_TEST(second.pmu().probe.size() == 1u);
  BOOST_REQUIRE_EQUAL(second.events().size(), first.events().size());
  for (std::size_t i = 0; i < first.events().size(); ++i) BOOST_TEST(second.events()[i].name == first.events()[i].name);
  BOOST_TEST(second.find("MISSES")->code == 0x51u);
  // A file of the directory changed: parsed again, step by step.
  spit(more / "extra.toml", "backend = \"toy\"\n[[event]]\nname = \"MISSES\"\ncode = 0x52\ndesc = \"misses\"\n");
  struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};
  BOOST_REQUIRE(utimensat(AT_FDCWD, (more / "extra.toml").c_str(), times, 0) == 0);
  BOOST_TEST(chained().find("MISSES")->code == 0x52u);
  // Without a cache, the same.
  CacheDir off(std::nullopt);
  BOOST_TEST(chained().find("MISSES")->code == 0x52u);
  BOOST_TEST(chained().find("LOADS")->code == 0x43u);
}
