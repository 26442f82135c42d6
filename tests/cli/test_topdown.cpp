#define BOOST_TEST_MODULE topdown
#include <boost/test/unit_test.hpp>

// `pmc stat --topdown` (docs/metrics.md, "The tree") with the vendors' own formulas, the files
// `pmc catalog import` generated into backends/*/metrics/, on the bundled simulated workloads
// examples/workloads/topdown-{skl,spr,zen4}.toml, whose split each file works out by hand:
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

struct Fixture : pmc_test::PmcCommand {
  // The metrics of `pmc stat --json` by name.
  std::map<std::string, json> metrics(const std::string& dump, const std::string& workload,
                                      std::vector<std::string> extra) {
    std::vector<std::string> args{"stat", "--cpuid-dump", dump, "--workload", workload, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const pmc_test::Result r = pmc(args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r);
    std::map<std::string, json> out;
    const json doc = json::parse(r.out);
    for (const json& m : doc.at("metrics")) out[m.at("name").get<std::string>()] = m;
    return out;
  }
  pmc_test::Result text(const std::string& dump, const std::string& workload, std::vector<std::string> extra) {
    std::vector<std::string> args{"stat", "--cpuid-dump", dump, "--workload", workload};
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
  const auto m = metrics("intel-skl", "topdown-skl", {"--topdown", "--td-level", "2"});
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
  const pmc_test::Result r = text("intel-skl", "topdown-skl", {"--topdown", "--td-level", "2", "--metric-only"});
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
  auto m = metrics("intel-skl", "topdown-skl", {"-M", "tma_backend_bound_group"});  // perf's name for a node's children
  BOOST_TEST(m.size() == 2u);
  BOOST_TEST(std::fabs(value(m, "Memory_Bound") - 13.125) < 1e-9);
  BOOST_TEST(std::fabs(value(m, "Core_Bound") - 4.375) < 1e-9);
  m = metrics("intel-skl", "topdown-skl", {"-M", "tma_frontend_bound"});
  BOOST_TEST(std::fabs(value(m, "Frontend_Bound") - 25) < 1e-9);
  m = metrics("intel-skl", "topdown-skl", {"-M", "TopdownL1"});
  BOOST_TEST(m.size() == 4u);
}

BOOST_FIXTURE_TEST_CASE(sapphire_rapids_from_perf_metrics_within_eight_bits, Fixture) {
  // examples/workloads/topdown-spr.toml: the readings are floor(6,000,000 x byte / 255) for the
  // bytes 85 and 42 (2,000,000 and 988,235), each share one over the sum of the level-1 ones.
  const auto m = metrics("intel-spr", "topdown-spr", {"--topdown", "--td-level", "2"});
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

BOOST_FIXTURE_TEST_CASE(the_slots_event_is_counted_first, Fixture) {
  // Linux counts the PERF_METRICS events only in a group led by slots; the metrics' events are
  // added with TOPDOWN.SLOTS first, although Intel's formulas name it last.
  const pmc_test::Result r = pmc({"stat", "--cpuid-dump", "intel-spr", "--workload", "topdown-spr", "--topdown", "--json"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const json doc = json::parse(r.out);
  BOOST_TEST(doc.at("counters").at(0).at("event") == "TOPDOWN.SLOTS");
  BOOST_TEST(doc.at("counters").at(0).at("value") == 6000000);
}

BOOST_FIXTURE_TEST_CASE(zen4_pipeline_utilization_level_one_is_exact, Fixture) {
  const auto m = metrics("amd-zen4-genoa", "topdown-zen4", {"--topdown"});
  const std::map<std::string, double> expected{{"frontend_bound", 10}, {"bad_speculation", 5}, {"backend_bound", 30},
                                               {"smt_contention", 5},  {"retiring", 50}};
  BOOST_TEST(m.size() == expected.size());
  for (const auto& [name, v] : expected) BOOST_TEST(std::fabs(value(m, name) - v) < 1e-9, name << " = " << value(m, name));
}

BOOST_FIXTURE_TEST_CASE(no_tree_or_too_deep_is_an_error, Fixture) {
  pmc_test::Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "--topdown"});
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "--topdown: no top-down metrics for this CPU (Intel P6"), r);
  r = text("amd-zen4-genoa", "topdown-zen4", {"--topdown", "--td-level", "4"});
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
