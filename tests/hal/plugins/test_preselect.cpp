// Hal::open loads only the backend libraries whose probe table can match the CPU (or the one the
// config names), docs/writing-a-backend.md "Probing": a tool that opens the HAL pays for one
// backend, not five. What was loaded is read from PMC_DEBUG=plugins, which names each library
// before it is loaded (docs/writing-a-backend.md); the verdicts of the backends left unloaded
// come from their tables, and `pmc probe` (Hal::plugins) lists every one, loading them the first
// time and, while none changes, not again.
#define BOOST_TEST_MODULE preselect
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using pmc_test::Result;

const std::set<std::string> kBackends = {"alpha21064_sim", "amd", "archperf", "p5", "p6"};

struct Cli : pmc_test::PmcCommand {
  Cli() {
    env["PMC_CACHE_DIR"] = (tmp.path() / "cache").string();
    env["PMC_DEBUG"] = "plugins";
  }
  // The backend libraries a command loaded: the trace's "loading .../lib<name>.so" lines.
  static std::set<std::string> loaded_backends(const Result& r) {
    std::set<std::string> out;
    for (const std::string& name : kBackends)
      if (r.err.find("/lib" + name + ".so (its constructors run now)") != std::string::npos) out.insert(name);
    return out;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_pentium_iii_loads_p6_alone, Cli) {
  Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e", "INST_RETIRED"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(loaded_backends(r) == std::set<std::string>{"p6"}, r);
  // The count is the simulated P6's, as before (examples/workloads/p6-demo.toml: 7,900,000).
  BOOST_TEST(r.out.find("7,900,000      INST_RETIRED") != std::string::npos, r);
}

BOOST_FIXTURE_TEST_CASE(each_family_loads_its_own_backend, Cli) {
  const std::pair<const char*, const char*> cases[] = {
      {"pentium-mmx", "p5"}, {"intel-skl", "archperf"}, {"core2", "archperf"}, {"amd-zen4-kvm", "amd"}, {"amd-k7", "amd"}};
  for (const auto& [dump, backend] : cases) {
    Result r = pmc({"stat", "--cpuid-dump", dump, "--workload", "p6-demo", "-e", "cycles"});
    BOOST_TEST_REQUIRE(r.status == 0, r);
    BOOST_TEST(r.err.find(fmt::format("backend '{}' ready", backend)) != std::string::npos, r);
    BOOST_TEST(loaded_backends(r) == std::set<std::string>{backend}, dump << ": " << r.err);
  }
}

BOOST_FIXTURE_TEST_CASE(a_named_backend_is_the_only_one_loaded, Cli) {
  Result r = pmc({"stat", "--backend", "alpha21064_sim", "--workload", "alpha-counters"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(loaded_backends(r) == std::set<std::string>{"alpha21064_sim"}, r);
}

BOOST_FIXTURE_TEST_CASE(an_unknown_backend_name_still_lists_every_backend, Cli) {
  Result r = pmc({"stat", "--backend", "P6", "--workload", "p6-demo"});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(r.err.find("unknown backend 'P6'; did you mean 'p6'?") != std::string::npos, r);
  BOOST_TEST(r.err.find("(loaded backends: alpha21064_sim, amd, archperf, p5, p6)") != std::string::npos, r);
}

BOOST_FIXTURE_TEST_CASE(probe_lists_every_backend_with_its_verdict, Cli) {
  Result r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(loaded_backends(r) == kBackends, r);  // the list of plugins loads them all
  const json doc = json::parse(r.out);
  std::set<std::string> seen;
  for (const auto& c : doc["candidates"]) {
    const std::string name = c["backend"];
    seen.insert(name);
    const std::string reason = c["reason"];
    if (name == "p6") {
      BOOST_TEST(c["score"].get<int>() > 0, c.dump());
      continue;
    }
    BOOST_TEST(c["score"] == 0, c.dump());
    // The tables' words (backends/*/*.toml): the verdict of a backend that was never asked.
    if (name == "archperf") BOOST_TEST(reason.find("P6-family parts are p6's") != std::string::npos, reason);
    if (name == "alpha21064_sim") BOOST_TEST(reason.find("choose it by name") != std::string::npos, reason);
    if (name == "amd") BOOST_TEST(reason.find("GenuineIntel family 6 model 8") != std::string::npos, reason);
  }
  BOOST_TEST(seen == kBackends);
}

// Listing the plugins (pmc probe: Hal::plugins) loads every library once; a second listing, no
// library changed, reports the same statuses from the parse cache and loads only the backend the
// CPU needs. Seen through glibc's own trace (LD_DEBUG=files names each library the dynamic loader
// maps), not the library's: PMC_DEBUG=plugins lists them afresh, loading each.
BOOST_FIXTURE_TEST_CASE(a_second_listing_loads_no_library_it_does_not_need, pmc_test::PmcCommand) {
  env["PMC_CACHE_DIR"] = (tmp.path() / "cache").string();
  env["LD_DEBUG"] = "files";
  auto mapped = [](const Result& r, const std::string& lib) {
    return r.err.find("plugins/" + lib + " [0];  dynamically loaded by") != std::string::npos;
  };
  const std::vector<std::string> args = {"probe", "--cpuid-dump", "pentium-iii", "--json"};
  const Result first = pmc(args);
  BOOST_TEST_REQUIRE(first.status == 0, first);
  for (const char* lib : {"libp6.so", "libp6-model.so", "libamd.so", "libarchperf-model.so"})
    BOOST_TEST(mapped(first, lib), lib << " was not loaded by the first listing");
  const Result second = pmc(args);
  BOOST_TEST_REQUIRE(second.status == 0, second);
  BOOST_TEST(mapped(second, "libp6.so"), "the chosen backend is loaded");
  for (const char* lib : {"libp6-model.so", "libamd.so", "libarchperf-model.so", "libp5.so", "libalpha21064-model.so"})
    BOOST_TEST(!mapped(second, lib), lib << " was loaded by the second listing");
  const json a = json::parse(first.out), b = json::parse(second.out);
  BOOST_TEST(a["plugins"].size() == 10u, a["plugins"].dump());
  BOOST_TEST(a["plugins"] == b["plugins"], a["plugins"].dump() << "\nthen\n" << b["plugins"].dump());

  // With the plugin trace asked for, every library is loaded again (and named in the trace).
  env["PMC_DEBUG"] = "plugins";
  const Result traced = pmc(args);
  BOOST_TEST_REQUIRE(traced.status == 0, traced);
  BOOST_TEST(mapped(traced, "libp6-model.so"), traced.err.substr(0, 2000));
}

// The tables' verdicts on a CPU, and the loaded backend's own probe, are kept (one parse-cache
// record per CPU, set of data files and libraries): CPUs taken in turn with one cache get the
// verdicts, the backend, its reason and its PMU that a cache of their own gives them, so a
// record is never taken for another CPU's. (A record is checked twice: it is keyed by the CPU,
// and the CPUID leaves the tables name are compared with the record's.)
BOOST_FIXTURE_TEST_CASE(verdicts_kept_for_one_cpu_are_not_another_cpus, Cli) {
  auto probe = [this](const std::string& dump) {
    Result r = pmc({"probe", "--cpuid-dump", dump, "--json"});
    BOOST_TEST_REQUIRE(r.status == 0, r);
    const json doc = json::parse(r.out);
    return json{doc["backend"], doc["reason"], doc["pmu"], doc["candidates"]}.dump();
  };
  const std::vector<std::string> dumps = {"pentium-iii", "amd-zen4-kvm", "intel-skl", "pentium-mmx", "intel-adl-glc"};
  std::vector<std::string> own;
  for (const std::string& dump : dumps) {
    env["PMC_CACHE_DIR"] = (tmp.path() / ("own-" + dump)).string();
    own.push_back(probe(dump));
    BOOST_TEST(probe(dump) == own.back(), dump << ": its own cache's second open");
  }
  BOOST_TEST(own[0] != own[1]);  // the verdicts differ from CPU to CPU
  BOOST_TEST(own[4].find("cpu/adl-glc.toml") != std::string::npos, own[4]);  // a hybrid part's files named
  env["PMC_CACHE_DIR"] = (tmp.path() / "shared").string();
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < dumps.size(); ++i)
      BOOST_TEST(probe(dumps[i]) == own[i], dumps[i] << " round " << round);
}

// The CPUs of one machine differ in the initial APIC ID leaf 1 gives (EBX[31:24], the CPU the
// reading ran on): a record one of them wrote is kept by the others, not evaluated and written
// again at each open that runs on another CPU (one record, untouched, in a cache they share).
BOOST_FIXTURE_TEST_CASE(a_record_is_kept_on_every_cpu_of_a_machine, Cli) {
  const std::string dump = pmc_test::slurp(fs::path(PMC_SOURCE_DIR) / "data/cpuid/amd-zen4-kvm.txt");
  const std::string leaf1 = "   0x00000001 0x00: eax=0x00a10f11 ebx=0x01020800";
  BOOST_TEST_REQUIRE(dump.find(leaf1) != std::string::npos);
  std::string other = dump;
  other.replace(other.find(leaf1), leaf1.size(), "   0x00000001 0x00: eax=0x00a10f11 ebx=0x00020800");
  const fs::path cpu1 = tmp.path() / "cpu1.txt", cpu0 = tmp.path() / "cpu0.txt";
  pmc_test::spit(cpu1, dump);
  pmc_test::spit(cpu0, other);
  // The cache's files, each with its inode and modification time (a rewrite renames a new file
  // into place).
  const fs::path cache = tmp.path() / "cache";
  auto files = [&cache] {
    std::map<std::string, std::pair<std::uintmax_t, long long>> out;
    for (const auto& e : fs::directory_iterator(cache)) {
      struct stat st {};
      BOOST_TEST_REQUIRE(::stat(e.path().c_str(), &st) == 0);
      out[e.path().filename().string()] = {st.st_ino, static_cast<long long>(st.st_mtim.tv_nsec) + st.st_mtim.tv_sec * 1000000000LL};
    }
    return out;
  };
  Result first = pmc({"probe", "--cpuid-dump", cpu1.string()});
  BOOST_TEST_REQUIRE(first.status == 0, first);
  BOOST_TEST_REQUIRE(pmc({"probe", "--cpuid-dump", cpu1.string()}).status == 0);
  const auto before = files();
  for (int round = 0; round < 2; ++round)
    for (const fs::path& cpu : {cpu0, cpu1}) {
      Result r = pmc({"probe", "--cpuid-dump", cpu.string()});
      BOOST_TEST_REQUIRE(r.status == 0, r);
      // The same report, but for the file the CPU came from.
      std::string out = r.out;
      for (std::size_t at = out.find(cpu.string()); at != std::string::npos; at = out.find(cpu.string(), at + 1))
        out.replace(at, cpu.string().size(), cpu1.string());
      BOOST_TEST(out == first.out, cpu << "\n" << r.out);
    }
  BOOST_TEST((files() == before), "the cache's files changed");
}
