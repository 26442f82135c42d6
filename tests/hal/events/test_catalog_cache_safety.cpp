// Issue 26, items 3 to 6: the parse cache (hal/src/events/catalog_cache_safety.cpp,
// docs/performance.md) meets files it did not write. A FIFO at a cache file's name does not hang
// pmc; a cache file with any bit flipped never changes what pmc prints and is written again; a
// catalog edited in place to the same size, its modification time set back, is parsed again;
// as root, a cache directory reached through another user's symbolic link, or under a
// directory others may write, is not written to. In every case the command prints what it
// prints without a cache, and says nothing of it unless PMC_DEBUG=cache asks. Every wait on pmc
// has a time limit; a hung pmc is killed.
#define BOOST_TEST_MODULE catalog_cache_safety
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"

#include "catalog_cache_file.hpp"

#include <pmc/event.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::Result;
using pmc_test::slurp;
using pmc_test::spit;
using pmc_test::TempDir;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;

// pmc in a clean environment (no config of the user running the tests, no cache unless given).
struct Cli {
  TempDir tmp{"pmc-test-cache-safety"};
  fs::path home = tmp.path() / "home";
  pmc_test::Env env;
  Cli() {
    fs::create_directories(home);
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = home.string();
    env["XDG_CONFIG_HOME"] = home.string();
    env["XDG_CACHE_HOME"] = std::nullopt;
    env["LC_ALL"] = "C";
    env["PMC_CACHE_DIR"] = "";  // no cache unless a test gives one
  }
  // pmc with args, the cache in `cache` (empty: none; nullopt: PMC_CACHE_DIR unset, the default
  // under HOME); killed after 60 s (status -1000 then).
  Result pmc(const std::vector<std::string>& args, const std::optional<fs::path>& cache = fs::path()) {
    pmc_test::Env e = env;
    e["PMC_CACHE_DIR"] = cache ? std::optional<std::string>(cache->string()) : std::nullopt;
    Result r;
    r.command = "pmc";
    for (const auto& a : args) r.command += " " + a;
    const fs::path out = tmp.path() / "stdout", err = tmp.path() / "stderr";
    const pid_t pid = pmc_test::spawn(fs::path(PMC_BIN_DIR) / "pmc", args, e, out, err);
    BOOST_REQUIRE_MESSAGE(pid > 0, "posix_spawn: " << std::strerror(-pid));
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    int status = 0;
    for (;;) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        r.status = -1000;
        r.err = "(killed: still running after 60 s)\n";
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    r.out = slurp(out);
    r.err += slurp(err);
    return r;
  }
};

const std::vector<std::string> kEncode = {"encode", "--cpuid-dump", "skylake", "INST_RETIRED.ANY",
                                          "UOPS_ISSUED.ANY:c=1", "cycles", "instructions"};
const std::vector<std::string> kList = {"list", "--cpuid-dump", "skylake"};

std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".bin") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool empty_dir(const fs::path& dir) { return fs::is_empty(dir); }

pmc::EventCatalog load(const fs::path& file) {
  pmc::EventCatalog c;
  c.load(file, "toy");
  return c;
}

const char* kToy = R"(backend = "toy"
[format]
event = "0-7"
umask = "8-15"
[cpus]
a = "CPU A"
b = "CPU B"
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
masks = [
  { name = "M", value = 0x08, desc = "modified", generic = "cache-misses" },
  { name = "I", value = 0x01, desc = "invalid" },
]
)";

// What a user of the toy catalog sees: lookups (answered from the cache file's name table before
// the events are decoded), then every event.
std::string seen(const pmc::EventCatalog& c) {
  std::string s;
  auto event = [&s](const pmc::EventDef* e) {
    if (!e) {
      s += "none\n";
      return;
    }
    s += e->name + " " + std::to_string(e->code) + " " + e->description + " " + e->source.str();
    for (const auto& cpu : e->cpus) s += " cpu=" + cpu;
    for (const auto& a : e->aliases) s += " alias=" + a;
    if (e->unit_masks)
      for (const auto& m : e->unit_masks->masks)
        s += " " + m.name + "=" + std::to_string(m.value) + "/" + m.description + "/" + m.generic;
    s += "\n";
  };
  event(c.find("STORES", "b"));
  event(c.find("mem_loads"));
  const pmc::UnitMask* mask = nullptr;
  event(c.find_generic_mask("cache-misses", "", &mask));
  s += mask ? mask->name + "\n" : "no mask\n";
  for (const auto& e : c.events()) event(&e);
  return s;
}

// PMC_CACHE_DIR for the life of the object (the cache reads it at each load).
struct CacheDir {
  explicit CacheDir(const fs::path& dir) { setenv("PMC_CACHE_DIR", dir.c_str(), 1); }
  ~CacheDir() { unsetenv("PMC_CACHE_DIR"); }
  CacheDir(const CacheDir&) = delete;
  CacheDir& operator=(const CacheDir&) = delete;
};

bool root() { return ::geteuid() == 0; }

}  // namespace

// Item 3: pmc opened a cache file with fopen: a FIFO at its name blocked it forever, root too,
// and in a directory everyone may write, whose files it was about to refuse.
BOOST_FIXTURE_TEST_CASE(a_fifo_at_a_cache_file_name_does_not_hang_pmc, Cli) {
  const Result want = pmc(kEncode);
  BOOST_TEST_REQUIRE(want.status == 0, want);
  const fs::path filled = tmp.path() / "filled";
  BOOST_TEST_REQUIRE(pmc(kEncode, filled).out == want.out);
  const auto names = cache_files(filled);
  BOOST_TEST_REQUIRE(!names.empty());
  for (const auto mode : {0700, 0777}) {
    const fs::path dir = tmp.path() / ("fifos-" + std::to_string(mode));
    fs::create_directories(dir);
    ::chmod(dir.c_str(), static_cast<mode_t>(mode));
    for (const auto& n : names) BOOST_TEST_REQUIRE(::mkfifo((dir / n.filename()).c_str(), 0600) == 0);
    const Result r = pmc(kEncode, dir);
    BOOST_TEST(r.status == 0, r);
    BOOST_TEST(r.out == want.out, r);
    BOOST_TEST(r.err == want.err, r);
    if (mode == 0700)  // a FIFO is no cache file: the cache is written in its place
      for (const auto& n : names) BOOST_TEST(fs::is_regular_file(dir / n.filename()), n);
  }
}

// Item 4: a cache file had no checksum; 51 of 150 single-bit flips changed pmc's output. Now none
// does, whichever file and bit, for encode (lookups in the cache file's name table) and list
// (every event decoded), and a run after the damaged one prints the same again.
BOOST_FIXTURE_TEST_CASE(no_bit_flipped_in_a_cache_file_changes_the_output, Cli) {
  const Result want_encode = pmc(kEncode), want_list = pmc(kList);
  BOOST_TEST_REQUIRE(want_encode.status == 0, want_encode);
  BOOST_TEST_REQUIRE(want_list.status == 0, want_list);
  const fs::path cache = tmp.path() / "cache";
  BOOST_TEST_REQUIRE(pmc(kEncode, cache).out == want_encode.out);
  BOOST_TEST_REQUIRE(pmc(kList, cache).out == want_list.out);
  std::vector<std::pair<fs::path, std::string>> pristine;
  std::size_t total = 0;
  for (const auto& f : cache_files(cache)) {
    pristine.emplace_back(f, slurp(f));
    total += pristine.back().second.size();
  }
  BOOST_TEST_REQUIRE(total > 0u);
  std::mt19937_64 random(26);
  int changed = 0;
  for (int flip = 0; flip < 150; ++flip) {
    std::size_t at = std::uniform_int_distribution<std::size_t>(0, total - 1)(random);
    const int bit = std::uniform_int_distribution<int>(0, 7)(random);
    for (const auto& f : cache_files(cache)) fs::remove(f);
    std::string where;
    for (const auto& [file, bytes] : pristine) {
      std::string copy = bytes;
      if (at < copy.size()) {
        copy[at] = static_cast<char>(copy[at] ^ (1 << bit));
        where = file.filename().string() + " byte " + std::to_string(at) + " bit " + std::to_string(bit);
        at = static_cast<std::size_t>(-1);
      } else if (at != static_cast<std::size_t>(-1)) {
        at -= copy.size();
      }
      spit(file, copy);
      ::chmod(file.c_str(), 0600);
    }
    for (int round = 0; round < 2; ++round) {  // the damaged file, then what replaced it
      const Result e = pmc(kEncode, cache), l = pmc(kList, cache);
      if (e.status != 0 || e.out != want_encode.out || l.status != 0 || l.out != want_list.out) {
        if (++changed <= 3) BOOST_ERROR("with " << where << ", round " << round << ":\n" << e << l.err);
      }
    }
  }
  BOOST_TEST(changed == 0, changed << " runs of 300 changed the output");
}

// Item 4, every byte of one cache file: whatever bit is flipped, the catalog restored shows what
// the TOML says, and the damaged file is written again (by this load or the next).
BOOST_AUTO_TEST_CASE(every_byte_of_a_damaged_cache_file_is_caught_and_the_file_rebuilt) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml";
  spit(file, kToy);
  CacheDir env(cache);
  pmc::EventCatalog parsed;
  parsed.load_string(kToy, file.string(), "toy");
  const std::string want = seen(parsed);
  BOOST_TEST_REQUIRE(seen(load(file)) == want);
  const auto files = cache_files(cache);
  BOOST_TEST_REQUIRE(files.size() == 1u);
  const std::string pristine = slurp(files[0]);
  int wrong = 0, kept = 0;
  std::string kept_at;
  for (std::size_t at = 0; at < pristine.size(); ++at) {
    std::string damaged = pristine;
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << (at % 8)));
    spit(files[0], damaged);
    ::chmod(files[0].c_str(), 0600);
    const std::string got = seen(load(file)), again = seen(load(file));
    if ((got != want || again != want) && ++wrong <= 3)
      BOOST_ERROR("byte " << at << " flipped:\n" << got << "then\n" << again);
    if ((!fs::exists(files[0]) || slurp(files[0]) == damaged) && ++kept <= 10) kept_at += " " + std::to_string(at);
  }
  BOOST_TEST(wrong == 0, wrong << " of " << pristine.size() << " flips changed the catalog");
  BOOST_TEST(kept == 0, kept << " of " << pristine.size() << " damaged files were not written again (bytes" << kept_at
                                << " of " << pristine.size() << ")");
}

// Item 5: the key was path, size, modification time and inode: a catalog rewritten in place to
// the same size with its modification time set back was served from the cache, stale.
BOOST_FIXTURE_TEST_CASE(a_catalog_edited_in_place_with_its_mtime_set_back_is_read_again, Cli) {
  const fs::path events = tmp.path() / "model.toml", config = tmp.path() / "pmc.toml", cache = tmp.path() / "cache";
  spit(events, "backend = \"archperf\"\n[[event]]\nname = \"TEST.EDITED\"\ncode = 0x14\numask = 0x01\n"
               "desc = \"test: edited in place\"\n");
  spit(config, "events_path = [\"" + events.string() + "\"]\n");
  const std::vector<std::string> args = {"--config", config.string(), "encode", "--cpuid-dump", "skylake", "TEST.EDITED"};
  Result r = pmc(args, cache);
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST_REQUIRE(r.out.find("config=0x430114 ") != std::string::npos, r);
  BOOST_TEST_REQUIRE(pmc(args, cache).out == r.out);  // from the cache
  struct stat before{};
  BOOST_TEST_REQUIRE(::stat(events.c_str(), &before) == 0);
  // Same inode, same size, the modification time as it was; only the change time moves (the
  // kernel's clock for it ticks every few milliseconds: wait until it did).
  struct stat after{};
  for (int tries = 0; tries < 100; ++tries) {
    std::this_thread::sleep_for(10ms);
    {
      std::fstream f(events, std::ios::in | std::ios::out | std::ios::binary);
      const std::string text = slurp(events);
      f.seekp(static_cast<std::streamoff>(text.find("0x14")));
      f << "0x15";
    }
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    BOOST_TEST_REQUIRE(::utimensat(AT_FDCWD, events.c_str(), times, 0) == 0);
    BOOST_TEST_REQUIRE(::stat(events.c_str(), &after) == 0);
    if (after.st_ctim.tv_sec != before.st_ctim.tv_sec || after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) break;
  }
  BOOST_TEST_REQUIRE(after.st_ino == before.st_ino);
  BOOST_TEST_REQUIRE(after.st_size == before.st_size);
  BOOST_TEST_REQUIRE((after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec));
  r = pmc(args, cache);
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.out.find("config=0x430115 ") != std::string::npos, r);
}

// Item 6: as root with another user's HOME, the cache followed the ~/.cache symbolic link that
// user planted and wrote root's files where it pointed. As root, a cache directory is used only
// when every component of its path, from /, is a real directory of root's that nobody else may
// write (as for plugin directories); otherwise pmc runs without the cache, silently unless
// PMC_DEBUG=cache.
BOOST_FIXTURE_TEST_CASE(as_root_a_cache_dir_through_another_users_link_is_not_written, Cli) {
  if (!root()) {
    BOOST_TEST_MESSAGE("skipped: needs root (to give a directory and a link to user " << kNobody << ")");
    return;
  }
  const Result want = pmc(kEncode);
  BOOST_TEST_REQUIRE(want.status == 0, want);
  const fs::path target = tmp.path() / "target";  // root's, private: where the links lead
  fs::create_directories(target);
  ::chmod(target.c_str(), 0700);
  // Another user's HOME whose .cache leads to root's directory.
  const fs::path other = tmp.path() / "other";
  fs::create_directories(other);
  BOOST_TEST_REQUIRE(::chown(other.c_str(), kNobody, kNobody) == 0);
  fs::create_directory_symlink(target, other / ".cache");
  BOOST_TEST_REQUIRE(::lchown((other / ".cache").c_str(), kNobody, kNobody) == 0);
  pmc_test::Env saved = env;
  env["HOME"] = other.string();
  Result r = pmc(kEncode, std::nullopt);
  env = saved;
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.out == want.out, r);
  BOOST_TEST(r.err == want.err, r);
  BOOST_TEST(empty_dir(target), "root wrote through " << (other / ".cache"));
  // PMC_CACHE_DIR naming such a link, in a directory of root's.
  const fs::path link = tmp.path() / "link";
  fs::create_directory_symlink(target, link);
  BOOST_TEST_REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);
  r = pmc(kEncode, link);
  BOOST_TEST(r.out == want.out, r);
  BOOST_TEST(r.err == want.err, r);
  BOOST_TEST(empty_dir(target), "root wrote through " << link);
  // PMC_DEBUG=cache says why.
  env["PMC_DEBUG"] = "cache";
  r = pmc(kEncode, link);
  BOOST_TEST(r.out == want.out, r);
  BOOST_TEST(r.err.find("pmchal: cache: ") != std::string::npos, r);
  BOOST_TEST(r.err.find("symbolic link") != std::string::npos, r);
  BOOST_TEST(empty_dir(target));
}

BOOST_FIXTURE_TEST_CASE(as_root_a_cache_dir_under_a_directory_others_may_write_is_not_used, Cli) {
  if (!root()) {
    BOOST_TEST_MESSAGE("skipped: needs root (the rules for the cache directory are root's)");
    return;
  }
  const Result want = pmc(kEncode);
  BOOST_TEST_REQUIRE(want.status == 0, want);
  for (const auto mode : {0777, 0775, 0770}) {  // world-writable, group-writable: not sticky
    const fs::path shared = tmp.path() / ("shared-" + std::to_string(mode)), cache = shared / "cache";
    fs::create_directories(cache);
    ::chmod(cache.c_str(), 0700);
    ::chmod(shared.c_str(), static_cast<mode_t>(mode));
    const Result r = pmc(kEncode, cache);
    BOOST_TEST(r.out == want.out, r);
    BOOST_TEST(r.err == want.err, r);
    BOOST_TEST(empty_dir(cache), "written under a directory of mode " << std::oct << mode);
  }
  // A cache directory owned by another user.
  const fs::path theirs = tmp.path() / "theirs";
  fs::create_directories(theirs);
  ::chmod(theirs.c_str(), 0700);
  BOOST_TEST_REQUIRE(::chown(theirs.c_str(), kNobody, kNobody) == 0);
  const Result r = pmc(kEncode, theirs);
  BOOST_TEST(r.out == want.out, r);
  BOOST_TEST(empty_dir(theirs));
}

// The temporary file a cache file is written to had a name anyone could predict
// (<name>.<pid>.tmp): a link planted there stopped the cache. The name is random now, and
// nothing is ever written through a planted link.
BOOST_AUTO_TEST_CASE(a_planted_temporary_file_link_neither_stops_the_cache_nor_is_followed) {
  TempDir tmp;
  const fs::path cache = tmp.path() / "cache", file = tmp.path() / "toy.toml", victim = tmp.path() / "victim";
  spit(file, kToy);
  CacheDir env(cache);
  (void)load(file);
  const auto files = cache_files(cache);
  BOOST_TEST_REQUIRE(files.size() == 1u);
  fs::remove(files[0]);
  fs::create_symlink(victim, files[0].string() + "." + std::to_string(::getpid()) + ".tmp");
  BOOST_TEST(load(file).find("LOADS")->code == 0x43u);
  BOOST_TEST(fs::is_regular_file(files[0]), "the cache was not written again");
  BOOST_TEST(!fs::exists(victim), "written through the planted link");
}

// The cache's checksum is CRC-32C whichever way it is computed: the SSE4.2 instruction (when
// this CPU has it) and Boost.CRC's table give the standard check value of "123456789"
// (0xE3069283, the Castagnoli polynomial's catalogue entry), in one piece and in pieces.
BOOST_AUTO_TEST_CASE(checksum_is_crc32c_by_instruction_and_by_table) {
  const std::string text = "123456789";
  for (bool hardware : {true, false}) {
    pmc::detail::Checksum whole(hardware);
    whole.add(text.data(), text.size());
    BOOST_TEST(whole.value() == 0xE3069283u, "hardware " << hardware);
    pmc::detail::Checksum pieces(hardware);
    pieces.add(text.data(), 4);
    pieces.add(text.data() + 4, 5);
    BOOST_TEST(pieces.value() == 0xE3069283u);
  }
  // A longer buffer (the instruction's 8-byte steps and the tail) agrees between the two.
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes.push_back(static_cast<char>(i * 37 + 11));
  pmc::detail::Checksum a(true), b(false);
  a.add(bytes.data(), bytes.size());
  b.add(bytes.data(), bytes.size());
  BOOST_TEST(a.value() == b.value());
  BOOST_TEST(pmc::detail::checksum(bytes.data(), bytes.size()) == b.value());
}
