#define BOOST_TEST_MODULE topdown
#include <boost/test/unit_test.hpp>

// `pmc stat --topdown` (docs/metrics.md, "The tree") with the vendors' own formulas, the files
// `pmc catalog import` generated into backends/*/metrics/, on simulated workloads whose split
// is worked out by hand in each case's comment:
// - Skylake without SMT (data/cpuid/intel-skl.txt), levels 1 and 2 from the events (slots =
//   4 x CPU_CLK_UNHALTED.THREAD), exact: the events that do not fit the 4 counters at once are
//   counted in further runs of the workload, not multiplexed;
// - Sapphire Rapids, levels 1 and 2 from TOPDOWN.SLOTS and PERF_METRICS: within the 8-bit
//   resolution of its fractions;
// - Zen 4, AMD's pipeline utilization level 1 (6 dispatch slots a cycle), exact.

#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>

namespace {

using nlohmann::json;
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Skylake: 1,000,000 cycles are 4,000,000 slots.
//   retired slots 400,000 x 4 + 100,000 x 2 = 1,800,000         Retiring 45%
//   issued 400,000 x 4 + 100,000 x 2 + 100,000 x 1 = 1,900,000
//   recovery cycles 100,000: Bad_Speculation (1.9M - 1.8M + 4 x 100,000) / 4M = 12.5%
//   not delivered 200,000 x 4 + 100,000 x 2 = 1,000,000:    Frontend_Bound 25%
//   Backend_Bound 100 - 45 - 12.5 - 25 = 17.5%
// Level 2: cycles with none delivered (cmask 4) 200,000: Fetch_Latency 4 x 200,000 / 4M = 20%,
// Fetch_Bandwidth 5%; 3 mispredicts and 1 machine clear: Branch_Mispredicts 3/4 x 12.5 = 9.375%,
// Machine_Clears 3.125%; 150,000 of 200,000 stall cycles on memory, no port utilization
// counted: Memory_Bound 0.75 x 17.5 = 13.125%, Core_Bound 4.375%; instructions 1,400,000 of
// 1,800,000 retired slots, nothing macro-fused: Heavy_Operations (1.8M - 1.4M) / 4M = 10%,
// Light_Operations 35%.
const char* kSkylake = R"(name = "skl-topdown"
[[segment]]
cycles = 400000
signals = { "UOPS_RETIRED.RETIRE_SLOTS" = 4, "UOPS_ISSUED.ANY" = 4, instructions = 3 }
[[segment]]
cycles = 200000
signals = { "IDQ_UOPS_NOT_DELIVERED.CORE" = 4 }
[[segment]]
cycles = 100000
signals = { "IDQ_UOPS_NOT_DELIVERED.CORE" = 2, "UOPS_ISSUED.ANY" = 2, "UOPS_RETIRED.RETIRE_SLOTS" = 2, instructions = 2 }
[[segment]]
cycles = 3
signals = { "INT_MISC.RECOVERY_CYCLES" = 1, "UOPS_ISSUED.ANY" = 1, "BR_MISP_RETIRED.ALL_BRANCHES" = 1 }
[[segment]]
cycles = 1
signals = { "INT_MISC.RECOVERY_CYCLES" = 1, "UOPS_ISSUED.ANY" = 1, "MACHINE_CLEARS.COUNT" = 1 }
[[segment]]
cycles = 99996
signals = { "INT_MISC.RECOVERY_CYCLES" = 1, "UOPS_ISSUED.ANY" = 1 }
[[segment]]
cycles = 150000
signals = { "CYCLE_ACTIVITY.STALLS_TOTAL" = 4, "CYCLE_ACTIVITY.STALLS_MEM_ANY" = 20 }
[[segment]]
cycles = 50000
signals = { "CYCLE_ACTIVITY.STALLS_TOTAL" = 4 }
)";

// Sapphire Rapids: 1,000,000 cycles x 6 = 6,000,000 slots, a third retiring, a sixth each bad
// speculation and frontend bound, a third backend bound; at level 2 a sixth each. PERF_METRICS
// holds floor(255 x share): 85, 42, 42, 85 and 42 for each level-2 byte; a session reads each as
// floor(slots x byte / 255), as Linux does: 2,000,000 and 988,235. The vendor formulas divide
// each by the sum of the level-1 readings (5,976,470): 16.535% and 33.465%, within 8-bit
// resolution of the true 16.667% and 33.333%.
const char* kSapphire = R"(name = "spr-topdown"
[[segment]]
cycles = 1000000
signals = { "topdown-retiring" = 2, "topdown-bad-spec" = 1, "topdown-fe-bound" = 1, "topdown-be-bound" = 2, "topdown-heavy-ops" = 1, "topdown-br-mispredict" = 1, "topdown-fetch-lat" = 1, "topdown-mem-bound" = 1 }
)";

// Zen 4: 1,000,000 cycles x 6 = 6,000,000 dispatch slots; 600,000 x 5 = 3,000,000 ops retired
// (retiring 50%), 3,300,000 dispatched (bad speculation 300,000: 5%), 600,000 slots empty for
// the front end (10%), 300,000 x 6 = 1,800,000 for the back end (30%), 100,000 x 3 = 300,000
// lost to the other thread (smt_contention 5%).
const char* kZen4 = R"(name = "zen4-pipeline"
[[segment]]
cycles = 600000
signals = { "ex_ret_ops" = 5, "de_src_op_disp.all" = 5, "de_no_dispatch_per_slot.no_ops_from_frontend" = 1 }
[[segment]]
cycles = 300000
signals = { "de_no_dispatch_per_slot.backend_stalls" = 6 }
[[segment]]
cycles = 100000
signals = { "de_no_dispatch_per_slot.smt_contention" = 3, "de_src_op_disp.all" = 3 }
)";

struct Fixture : pmc_test::PmcCommand {
  // The metrics of `pmc stat --json` by name.
  std::map<std::string, json> metrics(const std::string& dump, const char* workload, std::vector<std::string> extra) {
    const auto file = tmp.path() / "workload.toml";
    pmc_test::spit(file, workload);
    std::vector<std::string> args{"stat", "--cpuid-dump", dump, "--workload", file.string(), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const pmc_test::Result r = pmc(args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r);
    std::map<std::string, json> out;
    const json doc = json::parse(r.out);
    for (const json& m : doc.at("metrics")) out[m.at("name").get<std::string>()] = m;
    return out;
  }
  pmc_test::Result text(const std::string& dump, const char* workload, std::vector<std::string> extra) {
    const auto file = tmp.path() / "workload.toml";
    pmc_test::spit(file, workload);
    std::vector<std::string> args{"stat", "--cpuid-dump", dump, "--workload", file.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return pmc(args);
  }
};

double value(const std::map<std::string, json>& m, const std::string& name) {
  BOOST_REQUIRE_MESSAGE(m.count(name) && m.at(name).at("value").is_number(), name << " has no value");
  return m.at(name).at("value").get<double>();
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(skylake_without_smt_levels_one_and_two_are_exact, Fixture) {
  const auto m = metrics("intel-skl", kSkylake, {"--topdown", "--td-level", "2"});
  const std::map<std::string, double> expected{
      {"Retiring", 45},          {"Bad_Speculation", 12.5},  {"Frontend_Bound", 25},     {"Backend_Bound", 17.5},
      {"Fetch_Latency", 20},     {"Fetch_Bandwidth", 5},     {"Branch_Mispredicts", 9.375},
      {"Machine_Clears", 3.125}, {"Memory_Bound", 13.125},   {"Core_Bound", 4.375},
      {"Heavy_Operations", 10},  {"Light_Operations", 35}};
  BOOST_TEST(m.size() == expected.size());
  for (const auto& [name, v] : expected) BOOST_TEST(std::fabs(value(m, name) - v) < 1e-9, name << " = " << value(m, name));
  // The tree and the vendor's thresholds: Frontend_Bound > 15, and Fetch_Latency > 10 under it.
  BOOST_TEST(m.at("Fetch_Latency").at("level") == 2);
  BOOST_TEST(m.at("Fetch_Latency").at("parent") == "Frontend_Bound");
  BOOST_TEST(m.at("Frontend_Bound").at("bottleneck") == true);
  BOOST_TEST(m.at("Fetch_Latency").at("bottleneck") == true);
  BOOST_TEST(m.at("Fetch_Bandwidth").at("bottleneck") == false);
  BOOST_TEST(m.at("Backend_Bound").at("bottleneck") == false);  // 17.5, threshold 20
  BOOST_TEST(!m.at("Retiring").contains("scaled"));
}

BOOST_FIXTURE_TEST_CASE(the_tree_in_the_terminal, Fixture) {
  const pmc_test::Result r = text("intel-skl", kSkylake, {"--topdown", "--td-level", "2", "--metric-only"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "  Frontend_Bound                              25.00 %    [#####               ]  <== bottleneck\n"), r);
  BOOST_TEST(contains(r.out, "    Fetch_Latency                             20.00 %    [####                ]  <== bottleneck\n"), r);
  BOOST_TEST(contains(r.out, "    Fetch_Bandwidth                            5.00 %    [#                   ]\n"), r);
  // Each child right under its parent.
  BOOST_TEST(r.out.find("Frontend_Bound") < r.out.find("Fetch_Latency"));
  BOOST_TEST(r.out.find("Fetch_Bandwidth") < r.out.find("Bad_Speculation"));
  BOOST_TEST(!contains(r.out, "UOPS_ISSUED.ANY  "), r);  // --metric-only: no count rows
  BOOST_TEST(contains(r.out, "runs of the workload"), r);  // more events than counters: passes
}

BOOST_FIXTURE_TEST_CASE(metric_names_aliases_and_node_groups, Fixture) {
  auto m = metrics("intel-skl", kSkylake, {"-M", "tma_backend_bound_group"});  // perf's name for a node's children
  BOOST_TEST(m.size() == 2u);
  BOOST_TEST(std::fabs(value(m, "Memory_Bound") - 13.125) < 1e-9);
  BOOST_TEST(std::fabs(value(m, "Core_Bound") - 4.375) < 1e-9);
  m = metrics("intel-skl", kSkylake, {"-M", "tma_frontend_bound"});
  BOOST_TEST(std::fabs(value(m, "Frontend_Bound") - 25) < 1e-9);
  m = metrics("intel-skl", kSkylake, {"-M", "TopdownL1"});
  BOOST_TEST(m.size() == 4u);
}

BOOST_FIXTURE_TEST_CASE(sapphire_rapids_from_perf_metrics_within_eight_bits, Fixture) {
  const auto m = metrics("intel-spr", kSapphire, {"--topdown", "--td-level", "2"});
  const double sixth = 100.0 / 6, third = 100.0 / 3, step = 100.0 * 2 / 255;  // two byte steps
  const double sum = 2 * 988235.0 + 2 * 2000000.0;
  for (const char* n : {"Frontend_Bound", "Bad_Speculation", "Fetch_Latency", "Branch_Mispredicts", "Memory_Bound",
                        "Heavy_Operations"}) {
    BOOST_TEST(std::fabs(value(m, n) - 100.0 * 988235 / sum) < 1e-9, n);  // the bytes' arithmetic
    BOOST_TEST(std::fabs(value(m, n) - sixth) < step, n);              // the true share
  }
  for (const char* n : {"Retiring", "Backend_Bound"}) {
    BOOST_TEST(std::fabs(value(m, n) - 100.0 * 2000000 / sum) < 1e-9, n);
    BOOST_TEST(std::fabs(value(m, n) - third) < step, n);
  }
  BOOST_TEST(std::fabs(value(m, "Fetch_Bandwidth")) < 1e-9);
  BOOST_TEST(std::fabs(value(m, "Machine_Clears")) < 1e-9);
}

BOOST_FIXTURE_TEST_CASE(zen4_pipeline_utilization_level_one_is_exact, Fixture) {
  const auto m = metrics("amd-zen4-genoa", kZen4, {"--topdown"});
  const std::map<std::string, double> expected{{"frontend_bound", 10}, {"bad_speculation", 5}, {"backend_bound", 30},
                                               {"smt_contention", 5},  {"retiring", 50}};
  BOOST_TEST(m.size() == expected.size());
  for (const auto& [name, v] : expected) BOOST_TEST(std::fabs(value(m, name) - v) < 1e-9, name << " = " << value(m, name));
}

BOOST_FIXTURE_TEST_CASE(no_tree_or_too_deep_is_an_error, Fixture) {
  pmc_test::Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "--topdown"});
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "--topdown: no top-down metrics for this CPU (Intel P6"), r);
  r = text("amd-zen4-genoa", kZen4, {"--topdown", "--td-level", "4"});
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "--td-level 4: this CPU's top-down tree ends at level"), r);
  r = pmc({"stat", "--cpuid-dump", "intel-skl", "--workload", "p6-demo", "--topdown", "--td-level", "7"});
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "--td-level"), r);
}

BOOST_FIXTURE_TEST_CASE(list_metrics_shows_the_vendors_lists, Fixture) {
  // Intel's Skylake list has 207 metrics, Sapphire Rapids' 308; TopdownL1 is the four nodes.
  for (const auto& [dump, least] : std::map<std::string, std::size_t>{{"intel-skl", 150}, {"intel-spr", 200}}) {
    const pmc_test::Result r = pmc({"list", "--metrics", "--cpuid-dump", dump, "--json"});
    BOOST_REQUIRE_MESSAGE(r.status == 0, r);
    std::size_t vendor = 0, l1 = 0;
    const json doc = json::parse(r.out);
    for (const json& m : doc) {
      vendor += contains(m.at("source").get<std::string>(), "archperf/");
      for (const json& g : m.at("groups")) l1 += g == "TopdownL1";
    }
    BOOST_TEST(vendor >= least, dump << ": " << vendor);
    BOOST_TEST(l1 == 4u, dump);
  }
  const pmc_test::Result r = pmc({"list", "--metrics", "--cpuid-dump", "intel-skl"});
  BOOST_TEST(contains(r.out, "TopdownL1 (4)"), r.out.substr(0, 400));
}
