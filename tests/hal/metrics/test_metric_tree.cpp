#define BOOST_TEST_MODULE metric_tree
#include <boost/test/unit_test.hpp>

// Vendor metrics (docs/metrics.md, "Vendor metrics"): aliases, groups, a tree of levels and
// parents, thresholds over other metrics, the machine's constants (from a CPUID dump's leaves),
// and the events a formula reads once the constants decide its conditions (Skylake's top-down
// formulas read CPU_CLK_UNHALTED.THREAD_ANY only with SMT on). The tree file below is written
// by hand in the shape of Intel's Skylake level 1 and 2 (perfmon SKL metrics: SLOTS = 4 x
// core cycles, halved THREAD_ANY with SMT on).

#include <pmc/pmc.hpp>

#include "support/metric_files.hpp"

#include <algorithm>
#include <string>

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

pmc::Hal open(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump + ".txt";
  return pmc::Hal::open(cfg);
}

pmc::Reading reading(const std::string& event, std::uint64_t value) {
  pmc::Reading r;
  r.event = r.name = event;
  r.value = value;
  r.time_enabled = r.time_running = 1000;
  return r;
}

const char* kTree = R"toml(
[[metric]]
name = "Frontend_Bound"
aliases = ["tma_frontend_bound"]
groups = ["TopdownL1", "TmaL1", "tma_L1_group"]
level = 1
events = ["IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD_ANY", "CPU_CLK_UNHALTED.THREAD"]
formula = "100 * IDQ_UOPS_NOT_DELIVERED_CORE / (4 * (smt_on ? CPU_CLK_UNHALTED_THREAD_ANY / 2 : CPU_CLK_UNHALTED_THREAD))"
unit = "%"
threshold = "Frontend_Bound > 15"

[[metric]]
name = "Fetch_Latency"
aliases = ["tma_fetch_latency"]
groups = ["TopdownL2", "TmaL2", "tma_frontend_bound_group"]
level = 2
parent = "Frontend_Bound"
events = ["lat=IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", "CPU_CLK_UNHALTED.THREAD_ANY", "CPU_CLK_UNHALTED.THREAD"]
formula = "100 * 4 * lat / (4 * (smt_on ? CPU_CLK_UNHALTED_THREAD_ANY / 2 : CPU_CLK_UNHALTED_THREAD))"
unit = "%"
threshold = "Fetch_Latency > 10 && Frontend_Bound > 15"

[[metric]]
name = "Turbo_Utilization"
events = ["CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED.REF_TSC"]
formula = "CPU_CLK_UNHALTED_THREAD / CPU_CLK_UNHALTED_REF_TSC * tsc_freq / 1e9"
unit = "GHz"

[[metric]]
name = "Safe_Ratio"
events = ["a=INST_RETIRED.ANY", "b=CPU_CLK_UNHALTED.THREAD"]
formula = "d_ratio(a, b)"
)toml";

pmc::MetricCatalog tree() {
  pmc::MetricCatalog c;
  c.load_string(kTree, "tree.toml");
  return c;
}

pmc::MetricConstants smt(std::optional<double> on) {
  pmc::MetricConstants c;
  c.values.push_back({"smt_on", on, "by hand"});
  c.values.push_back({"tsc_freq", std::nullopt, "the test's CPU states no TSC rate"});
  return c;
}

std::vector<std::string> input_events(const pmc::MetricDef& m, const pmc::MetricConstants& c) {
  std::vector<std::string> out;
  for (const auto* in : pmc::metric_inputs(m, c)) out.push_back(in->event);
  return out;
}

// A threshold's verdict as a number Boost.Test prints: 1 crossed, 0 not, -1 undecided.
int verdict(std::optional<bool> v) { return v ? (*v ? 1 : 0) : -1; }

using pmc_test::metric_load_error;
std::string load_error(const std::string& toml) { return metric_load_error(toml); }

}  // namespace

BOOST_AUTO_TEST_CASE(names_aliases_groups_and_the_tree_load) {
  const pmc::MetricCatalog c = tree();
  const pmc::MetricDef* fe = c.find("tma_frontend_bound");  // perf's spelling finds Intel's name
  BOOST_REQUIRE(fe);
  BOOST_TEST(fe->name == "Frontend_Bound");
  BOOST_TEST(fe->level == 1);
  BOOST_TEST(fe->parent.empty());
  BOOST_TEST(fe->group == "TopdownL1");  // the first group
  BOOST_TEST(fe->constants == std::vector<std::string>{"smt_on"});
  const pmc::MetricDef* fl = c.find("FETCH_LATENCY");
  BOOST_REQUIRE(fl);
  BOOST_TEST(fl->parent == "Frontend_Bound");
  BOOST_TEST(c.select("TopdownL1").size() == 1u);
  BOOST_TEST(c.select("tma_frontend_bound_group").size() == 1u);  // a node's children
  BOOST_TEST(c.select("tma_frontend_bound_group").front()->name == "Fetch_Latency");
  const auto groups = c.groups();
  BOOST_TEST(std::count(groups.begin(), groups.end(), "TmaL2") == 1);
  BOOST_TEST(c.find("Turbo_Utilization")->constants == std::vector<std::string>{"tsc_freq"});
}

BOOST_AUTO_TEST_CASE(the_constants_decide_which_events_a_formula_reads) {
  const pmc::MetricCatalog c = tree();
  const pmc::MetricDef& m = *c.find("Frontend_Bound");
  BOOST_TEST(input_events(m, smt(0.0)) ==
             (std::vector<std::string>{"IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD"}));
  BOOST_TEST(input_events(m, smt(1.0)) ==
             (std::vector<std::string>{"IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD_ANY"}));
  BOOST_TEST(input_events(m, smt(std::nullopt)).size() == 3u);  // undecided: both sides
}

BOOST_AUTO_TEST_CASE(level_one_without_smt_from_the_events_it_reads) {
  const pmc::MetricCatalog c = tree();
  // 1,000 core cycles are 4,000 slots; 600 of them the front end left empty: 15%. No
  // THREAD_ANY reading: without SMT the formula does not read it.
  const std::vector<pmc::Reading> rs{reading("IDQ_UOPS_NOT_DELIVERED.CORE", 600),
                                     reading("CPU_CLK_UNHALTED.THREAD", 1000),
                                     reading("IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", 120)};
  const pmc::MetricConstants off = smt(0.0);
  const pmc::MetricValue fe = pmc::evaluate_metric(*c.find("Frontend_Bound"), rs, std::nullopt, &off);
  BOOST_REQUIRE(fe.value);
  BOOST_TEST(*fe.value == 15.0);
  // 120 cycles x 4 slots of 4,000: 12%.
  const pmc::MetricValue fl = pmc::evaluate_metric(*c.find("Fetch_Latency"), rs, std::nullopt, &off);
  BOOST_REQUIRE(fl.value);
  BOOST_TEST(*fl.value == 12.0);
  // With SMT on it needs THREAD_ANY, which was not counted; without constants, too.
  const pmc::MetricConstants on = smt(1.0);
  BOOST_TEST(contains(pmc::evaluate_metric(*c.find("Frontend_Bound"), rs, std::nullopt, &on).error,
                      "CPU_CLK_UNHALTED.THREAD_ANY was not counted"));
  BOOST_TEST(contains(pmc::evaluate_metric(*c.find("Frontend_Bound"), rs).error, "THREAD_ANY was not counted"));
}

BOOST_AUTO_TEST_CASE(thresholds_mark_bottlenecks_over_other_metrics) {
  const pmc::MetricCatalog c = tree();
  const pmc::MetricDef& fl = *c.find("Fetch_Latency");
  auto values = [](std::optional<double> fe, std::optional<double> lat) {
    return [=](std::string_view name) -> std::optional<double> { return name == "Frontend_Bound" ? fe : lat; };
  };
  BOOST_TEST(verdict(pmc::metric_threshold(fl, values(20.0, 12.0))) == 1);
  BOOST_TEST(verdict(pmc::metric_threshold(fl, values(15.0, 12.0))) == 0);  // > 15, not >=
  BOOST_TEST(verdict(pmc::metric_threshold(fl, values(20.0, 10.0))) == 0);
  BOOST_TEST(verdict(pmc::metric_threshold(fl, values(std::nullopt, 12.0))) == -1);  // undecided
  BOOST_TEST(verdict(pmc::metric_threshold(*c.find("Safe_Ratio"), values(1.0, 1.0))) == -1);  // none
}

BOOST_AUTO_TEST_CASE(a_missing_constant_and_d_ratio) {
  const pmc::MetricCatalog c = tree();
  const pmc::MetricConstants k = smt(0.0);
  const std::vector<pmc::Reading> rs{reading("CPU_CLK_UNHALTED.THREAD", 0), reading("CPU_CLK_UNHALTED.REF_TSC", 5),
                                     reading("INST_RETIRED.ANY", 7)};
  const pmc::MetricValue t = pmc::evaluate_metric(*c.find("Turbo_Utilization"), rs, std::nullopt, &k);
  BOOST_TEST(!t.value);
  BOOST_TEST(t.error == "it needs the constant tsc_freq: the test's CPU states no TSC rate");
  // d_ratio is perf's division that gives 0 for a zero denominator.
  const pmc::MetricValue d = pmc::evaluate_metric(*c.find("Safe_Ratio"), rs, std::nullopt, &k);
  BOOST_REQUIRE(d.value);
  BOOST_TEST(*d.value == 0.0);
}

BOOST_AUTO_TEST_CASE(tree_errors_name_the_place) {
  std::string e = load_error("[[metric]]\nname = \"A\"\nevents = [\"cycles\"]\nformula = \"cycles\"\n"
                             "threshold = \"B > 1\"\n");
  BOOST_TEST(contains(e, "inline.toml:5:13: metric A: threshold 'B > 1': 'B' is not a metric of this file"), e);
  e = load_error("[[metric]]\nname = \"A\"\nevents = [\"cycles\"]\nformula = \"cycles\"\nparent = \"Root\"\n");
  BOOST_TEST(contains(e, "inline.toml:5:10: metric A: parent 'Root' is not a metric of this file"), e);
  e = load_error("[[metric]]\nname = \"A\"\nevents = [\"cycles\"]\nformula = \"cycles\"\nlevel = -1\n");
  BOOST_TEST(contains(e, "inline.toml:5:9: metric A: level -1 is not 0 to 16"), e);
  // An alias is a name: it may not be another metric's.
  e = load_error("[[metric]]\nname = \"A\"\nevents = [\"cycles\"]\nformula = \"cycles\"\n"
                 "[[metric]]\nname = \"B\"\naliases = [\"a\"]\nevents = [\"cycles\"]\nformula = \"cycles\"\n");
  BOOST_TEST(contains(e, "metric B is defined twice in this file"), e);
  e = load_error("[[metric]]\nname = \"A\"\nevents = [\"smt_on=cycles\"]\nformula = \"smt_on\"\n");
  BOOST_TEST(contains(e, "metric A: smt_on is built in, not an event"), e);
}

BOOST_AUTO_TEST_CASE(constants_of_a_cpuid_dump) {
  auto value = [](const pmc::MetricConstants& c, const char* name) { return c.find(name)->value; };
  // data/cpuid/intel-skl.txt: leaf 1 EBX[23:16] = 1 logical processor, no leaf 0BH: no SMT.
  const pmc::MetricConstants skl = pmc::metric_constants(open("intel-skl"));
  BOOST_TEST(*value(skl, "smt_on") == 0.0);
  BOOST_TEST(*value(skl, "threads_per_core") == 1.0);
  BOOST_TEST(!value(skl, "tsc_freq").has_value());  // no leaf 15H or 16H
  BOOST_TEST(contains(skl.find("tsc_freq")->source, "does not state the TSC's rate"));
  // data/cpuid/skylake.txt (i7-6700K): leaf 1 EBX[23:16] = 10H logical, leaf 4 EAX[31:26] = 7:
  // 8 cores, 2 threads each.
  const pmc::MetricConstants k = pmc::metric_constants(open("skylake"));
  BOOST_TEST(*value(k, "smt_on") == 1.0);
  BOOST_TEST(*value(k, "threads_per_core") == 2.0);
  BOOST_TEST(*value(k, "cores_per_socket") == 8.0);
  BOOST_TEST(*value(k, "num_cpus") == 16.0);
  // data/cpuid/amd-zen4-genoa.txt: leaf 0BH level 1 (SMT) EBX = 2, level 2 (core) EBX = C0H.
  const pmc::MetricConstants g = pmc::metric_constants(open("amd-zen4-genoa"));
  BOOST_TEST(*value(g, "smt_on") == 1.0);
  BOOST_TEST(*value(g, "threads_per_core") == 2.0);
  BOOST_TEST(*value(g, "num_cpus") == 192.0);
  BOOST_TEST(*value(g, "cores_per_socket") == 96.0);
  BOOST_TEST(*value(g, "num_sockets") == 1.0);
  BOOST_TEST(contains(g.find("smt_on")->source, "CPUID 0BH"));
  BOOST_TEST(!value(g, "chas_per_socket").has_value());
}
