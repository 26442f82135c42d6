// Hal::open loads only the backend libraries whose probe table can match the CPU (or the one the
// config names), docs/writing-a-backend.md "Probing": a tool that opens the HAL pays for one
// backend, not five. What was loaded is read from PMC_DEBUG=plugins, which names each library
// before it is loaded (docs/writing-a-backend.md); the verdicts of the backends left unloaded
// come from their tables, and `pmc probe` (Hal::plugins) still lists and loads every one.
#define BOOST_TEST_MODULE preselect
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace {

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
