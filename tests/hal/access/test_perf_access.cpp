#define BOOST_TEST_MODULE perf_access
#include <boost/test/unit_test.hpp>

// access = "auto": the rules (pure, every combination), the PMU lookup against a fake sysfs
// tree, what Hal::open decides on this machine, and the access line of `pmc probe`.

#include "access.hpp"
#include "support/child_process.hpp"

#include <pmc/hal.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>

namespace {

using pmc::detail::choose_access;
using pmc::detail::PerfPmuFacts;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

PerfPmuFacts exposed() { return {true, "/sys/bus/event_source/devices/cpu", "4"}; }
PerfPmuFacts missing() { return {false, "/sys/bus/event_source/devices/cpu", ""}; }

}  // namespace

BOOST_AUTO_TEST_CASE(auto_rules) {
  // A CPUID dump: only the simulated PMU can be counted.
  auto c = choose_access("auto", "default", false, true, "p6", exposed());
  BOOST_TEST(pmc::detail::access_name(c.access) == "sim");
  BOOST_TEST(contains(c.reason, "CPUID dump"), c.reason);
  // Native, no PMU exposed.
  c = choose_access("auto", "default", true, true, "archperf", missing());
  BOOST_TEST(pmc::detail::access_name(c.access) == "sim");
  BOOST_TEST(contains(c.reason, "exposes no hardware PMU"), c.reason);
  BOOST_TEST(contains(c.reason, "/sys/bus/event_source/devices/cpu missing"), c.reason);
  // Native, PMU exposed, but the backend was forced onto a CPU it does not match.
  c = choose_access("auto", "default", true, false, "p6", exposed());
  BOOST_TEST(pmc::detail::access_name(c.access) == "sim");
  BOOST_TEST(contains(c.reason, "does not match"), c.reason);
  // Native, PMU exposed, backend matches: perf.
  c = choose_access("auto", "file.toml:2:10", true, true, "archperf", exposed());
  BOOST_TEST(pmc::detail::access_name(c.access) == "perf");
  BOOST_TEST(contains(c.reason, "access = \"auto\" (file.toml:2:10): perf"), c.reason);
  BOOST_TEST(contains(c.reason, "type 4"), c.reason);
}

BOOST_AUTO_TEST_CASE(explicit_values_are_kept) {
  for (const char* a : {"sim", "perf", "msr"}) {
    auto c = choose_access(a, "command line", true, false, "p6", missing());
    BOOST_TEST(pmc::detail::access_name(c.access) == a);
    BOOST_TEST(contains(c.reason, std::string("access = \"") + a + "\" (command line)"), c.reason);
  }
  // perf or msr for a dump: kept (probe, list and encode work), but the reason warns.
  auto c = choose_access("perf", "default", false, true, "p6", exposed());
  BOOST_TEST(pmc::detail::access_name(c.access) == "perf");
  BOOST_TEST(contains(c.reason, "CPUID dump"), c.reason);
}

BOOST_AUTO_TEST_CASE(pmu_lookup_in_a_sysfs_tree) {
  pmc_test::TempDir tmp;
  auto none = pmc::detail::find_perf_pmu(tmp.path());
  BOOST_TEST(!none.exposed);
  BOOST_TEST(none.directory == (tmp.path() / "bus/event_source/devices/cpu").string());
  pmc_test::spit(tmp.path() / "bus/event_source/devices/software/type", "1\n");
  BOOST_TEST(!pmc::detail::find_perf_pmu(tmp.path()).exposed);  // software only is no PMU
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu_core/type", "8\n");  // hybrid
  auto hybrid = pmc::detail::find_perf_pmu(tmp.path());
  BOOST_TEST(hybrid.exposed);
  BOOST_TEST(hybrid.type == "8");
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu/type", "4\n");
  auto cpu = pmc::detail::find_perf_pmu(tmp.path());
  BOOST_TEST(cpu.type == "4");
  BOOST_TEST(cpu.directory == (tmp.path() / "bus/event_source/devices/cpu").string());
}

// A hybrid part's events are opened with the type of their core type's PMU.
BOOST_AUTO_TEST_CASE(a_pmus_perf_type_from_sysfs) {
  pmc_test::TempDir tmp;
  BOOST_TEST(!pmc::detail::perf_pmu_type(tmp.path(), "cpu_atom"));
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu_core/type", "8\n");
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu_atom/type", "10\n");
  pmc_test::spit(tmp.path() / "bus/event_source/devices/broken/type", "ten\n");
  BOOST_TEST(pmc::detail::perf_pmu_type(tmp.path(), "cpu_core").value_or(0) == 8u);
  BOOST_TEST(pmc::detail::perf_pmu_type(tmp.path(), "cpu_atom").value_or(0) == 10u);
  BOOST_TEST(!pmc::detail::perf_pmu_type(tmp.path(), "broken"));
}

BOOST_AUTO_TEST_CASE(this_machine) {
  const bool pmu = pmc::detail::find_perf_pmu().exposed;
  {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
    pmc::Hal hal = pmc::Hal::open(cfg);
    BOOST_TEST(hal.access() == "sim");
    BOOST_TEST(contains(hal.access_reason(), "CPUID dump"), hal.access_reason());
  }
  {
    pmc::Config cfg;
    cfg.backend = "p6";  // forced onto this CPU
    pmc::Hal hal = pmc::Hal::open(cfg);
    const bool p6_matches = hal.candidates().at(0).match.matched();
    BOOST_TEST(hal.access() == (pmu && p6_matches ? "perf" : "sim"), hal.access_reason());
    if (!pmu) BOOST_TEST(contains(hal.access_reason(), "exposes no hardware PMU"), hal.access_reason());
  }
  {
    pmc::Config cfg;
    pmc::Hal hal = pmc::Hal::open(cfg);  // native, whatever backend matches
    if (!hal.backend()) {
      BOOST_TEST(hal.access() == "");
      BOOST_TEST(contains(hal.access_reason(), "HAL events"), hal.access_reason());
    } else {
      BOOST_TEST(hal.access() == (pmu ? "perf" : "sim"), hal.access_reason());
    }
  }
}

BOOST_AUTO_TEST_CASE(probe_prints_the_access_and_why) {
  pmc_test::TempDir tmp;
  pmc_test::Env env;
  env["PATH"] = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  env["HOME"] = tmp.path().string();
  env["XDG_CONFIG_HOME"] = tmp.path().string();
  const auto pmc_bin = std::filesystem::path(PMC_BIN_DIR) / "pmc";
  auto r = pmc_test::run(pmc_bin, {"probe", "--cpuid-dump", "pentium-iii", "--json"}, env, tmp.path());
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j["access"] == "sim");
  BOOST_TEST(contains(j["access_reason"].get<std::string>(), "CPUID dump"), r.out);
  r = pmc_test::run(pmc_bin, {"probe", "--cpuid-dump", "pentium-iii"}, env, tmp.path());
  BOOST_TEST(contains(r.out, "Access:     sim\n            access = \"auto\" (default): sim, because the CPU is a CPUID dump"),
             r);
  // Native: an access line whatever the machine; "none" when no backend matches.
  r = pmc_test::run(pmc_bin, {"probe", "--json"}, env, tmp.path());
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.contains("access"));
  BOOST_TEST(!j["access_reason"].get<std::string>().empty(), r.out);
  if (j["backend"].is_null()) BOOST_TEST(j["access"].is_null(), r.out);
}
