#define BOOST_TEST_MODULE metrics
#include <boost/test/unit_test.hpp>

// Metrics as data (pmc/metrics.hpp, docs/metrics.md): the TOML schema and its errors with
// file:line:column, formulas parsed by muParser (an unknown name, a division by a zero count
// and an event that was never on a counter each say so), which reading feeds which input, the
// built-in files (every formula valid, the backends' metrics available where their events are),
// and metrics over a simulated run computed by hand from the workload.

#include <pmc/pmc.hpp>

#include "support/metric_files.hpp"

#include <cmath>
#include <string>

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

pmc::Hal open(const std::string& dump, const std::string& backend = "auto") {
  pmc::Config cfg;
  if (!dump.empty()) cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump + ".txt";
  cfg.backend = backend;
  return pmc::Hal::open(cfg);
}

pmc::Reading reading(const std::string& event, std::uint64_t value, const std::string& name = {},
                     const std::string& generic = {}) {
  pmc::Reading r;
  r.event = event;
  r.name = name.empty() ? event : name;
  r.generic = generic;
  r.value = value;
  r.time_enabled = r.time_running = 1000;
  return r;
}

using pmc_test::metric_load_error;
std::string load_error(const std::string& toml) { return metric_load_error(toml); }

const char* kIpc = R"([[metric]]
name = "IPC"
group = "basic"
events = ["instructions", "cycles"]
formula = "instructions / cycles"
unit = "insn per cycle"
)";

}  // namespace

BOOST_AUTO_TEST_CASE(a_metric_file_loads) {
  pmc::MetricCatalog c;
  c.load_string(std::string(kIpc) + R"(
[[metric]]
name = "CPU_UTILIZATION"
group = "basic"
events = ["task-clock"]
formula = "task_clock / duration_time"

[[metric]]
name = "TOP"
group = "TopdownL1"
events = ["slots", "backend=r02A4"]
formula = "100 * backend / slots"
cpus = ["v5"]
default = true
)",
                "inline.toml");
  BOOST_REQUIRE_EQUAL(c.metrics().size(), 3u);
  const pmc::MetricDef* ipc = c.find("ipc");  // names ignore case
  BOOST_REQUIRE(ipc);
  BOOST_TEST(ipc->unit == "insn per cycle");
  BOOST_TEST(ipc->events.at(0).variable == "instructions");
  BOOST_TEST(!ipc->uses_duration);
  BOOST_TEST(ipc->source.str() == "inline.toml:1:1");
  const pmc::MetricDef* util = c.find("CPU_UTILIZATION");
  BOOST_TEST(util->events.at(0).variable == "task_clock");  // '-' is not a name character
  BOOST_TEST(util->events.at(0).event == "task-clock");
  BOOST_TEST(util->uses_duration);
  const pmc::MetricDef* top = c.find("TOP");
  BOOST_TEST(top->events.at(1).variable == "backend");  // VARIABLE=EVENT
  BOOST_TEST(top->events.at(1).event == "r02A4");
  BOOST_TEST(top->by_default);
  BOOST_TEST(c.select("BASIC").size() == 2u);  // a group, ignoring case
  BOOST_TEST(c.select("top").size() == 1u);    // a metric
  BOOST_TEST(c.select("nothing").empty());
  BOOST_TEST((c.nearest("CPU_UTILISATION") == std::vector<std::string>{"CPU_UTILIZATION"}));
}

BOOST_AUTO_TEST_CASE(schema_errors_name_the_place) {
  // The formula names a variable that is not one of its events: muParser's "unexpected token"
  // at position 16 (1-based) of the formula, reported at the formula's value (line 4, column 11).
  std::string e = load_error("[[metric]]\nname = \"IPC\"\nevents = [\"instructions\", \"cycles\"]\nformula = "
                             "\"instructions / cycels\"\n");
  BOOST_TEST(contains(e, "inline.toml:4:11:"), e);
  BOOST_TEST(contains(e, "'cycels' is neither one of its events (instructions, cycles) nor a built-in name (duration_time, smt_on,"), e);
  BOOST_TEST(contains(e, "position 16"), e);
  // Malformed formula: muParser's own message.
  e = load_error("[[metric]]\nname = \"X\"\nevents = [\"cycles\"]\nformula = \"cycles / (\"\n");
  BOOST_TEST(contains(e, "inline.toml:4:11: metric X: formula 'cycles / ('"), e);
  // Unknown key, missing events, a duplicate name, a bad VARIABLE=EVENT.
  e = load_error("[[metric]]\nname = \"X\"\nevents = [\"cycles\"]\nformula = \"cycles\"\ncolour = 1\n");
  BOOST_TEST(contains(e, "inline.toml:5:1:"), e);
  BOOST_TEST(contains(e, "colour"), e);
  e = load_error("[[metric]]\nname = \"X\"\nformula = \"1\"\n");
  BOOST_TEST(contains(e, "events"), e);
  e = load_error(std::string(kIpc) + kIpc);
  BOOST_TEST(contains(e, "defined twice"), e);
  BOOST_TEST(contains(e, "inline.toml:1:1"), e);
  e = load_error("[[metric]]\nname = \"X\"\nevents = [\"1x=cycles\"]\nformula = \"1\"\n");
  BOOST_TEST(contains(e, "'1x=cycles' is not EVENT or VARIABLE=EVENT"), e);
  e = load_error("[[metric]]\nname = \"X\"\nevents = [\"duration_time\"]\nformula = \"1\"\n");
  BOOST_TEST(contains(e, "duration_time is built in"), e);
}

BOOST_AUTO_TEST_CASE(evaluation_by_hand) {
  pmc::MetricCatalog c;
  c.load_string(kIpc, "inline.toml");
  const pmc::MetricDef& ipc = *c.find("IPC");
  // 7,550,000 instructions in 5,290,000 cycles: 1.4272... (both at every level: a metric takes
  // inputs of the same filter, test_metric_filters.cpp)
  std::vector<pmc::Reading> rs{reading("CPU_CLK_UNHALTED", 5'290'000, "CPU_CLK_UNHALTED", "cycles"),
                               reading("INST_RETIRED", 7'550'000, "INST_RETIRED", "instructions")};
  pmc::MetricValue v = pmc::evaluate_metric(ipc, rs);
  BOOST_REQUIRE(v.value);
  BOOST_TEST(*v.value == 7'550'000.0 / 5'290'000.0, boost::test_tools::tolerance(1e-12));
  // A zero divisor: said, not printed as inf.
  rs[0].value = 0;
  v = pmc::evaluate_metric(ipc, rs);
  BOOST_TEST(!v.value);
  BOOST_TEST(v.error == "the formula 'instructions / cycles' divides by zero: cycles counted 0", v.error);
  // An event that never ran (multiplexed out): <not counted>, no value.
  rs[0].value = 10;
  rs[0].time_running = 0;
  v = pmc::evaluate_metric(ipc, rs);
  BOOST_TEST(contains(v.error, "cycles was never on a counter"), v.error);
  // An event missing from the readings.
  v = pmc::evaluate_metric(ipc, {rs[1]});
  BOOST_TEST(v.error == "cycles was not counted", v.error);
}

BOOST_AUTO_TEST_CASE(which_reading_feeds_an_input) {
  std::vector<pmc::Reading> rs{reading("INST_RETIRED:u", 1, "INST_RETIRED", "instructions"),
                               reading("instructions:k", 2, "INST_RETIRED", "instructions"),
                               reading("CPU_CLK_UNHALTED", 3, "CPU_CLK_UNHALTED", "cycles")};
  BOOST_TEST(pmc::metric_reading(rs, "instructions:k")->value == 2u);   // the exact string first
  BOOST_TEST(pmc::metric_reading(rs, "instructions")->value == 1u);     // then the generic name
  BOOST_TEST(pmc::metric_reading(rs, "cpu-cycles")->value == 3u);       // perf's other spelling
  BOOST_TEST(pmc::metric_reading(rs, "inst_retired")->value == 1u);     // the catalog name
  BOOST_TEST(!pmc::metric_reading(rs, "INST_RETIRED:k"));                // modifiers: exactly
  BOOST_TEST(!pmc::metric_reading(rs, "branches"));
}

BOOST_AUTO_TEST_CASE(the_builtin_files_load_and_say_where_they_apply) {
  // Every formula of every shipped file compiles (the loader checks it) for each backend.
  pmc::Hal p3 = open("pentium-iii");
  const pmc::MetricCatalog c = pmc::builtin_metrics(p3);
  BOOST_TEST(c.files().size() == 2u);  // generic.toml and p6.toml
  for (const char* name : {"IPC", "CPI", "CPU_UTILIZATION", "BRANCH_MISS_RATIO", "CACHE_MISS_RATIO",
                           "FRONTEND_STALL_RATIO", "BACKEND_STALL_RATIO", "L2_MISS_RATE", "FLOPS_RATE"})
    BOOST_TEST(c.find(name), name);
  // P6 has the generic events of IPC and its own L2 events; no stalled-cycles events.
  BOOST_TEST(pmc::metric_unavailable(p3, *c.find("IPC")).empty());
  BOOST_TEST(pmc::metric_unavailable(p3, *c.find("L2_MISS_RATE")).empty());
  BOOST_TEST(contains(pmc::metric_unavailable(p3, *c.find("FRONTEND_STALL_RATIO")), "stalled-cycles-frontend"));
  // The Alpha's issue rate is its own; archperf's top-down needs a version 5 CPU (slots).
  pmc::Hal alpha = open("", "alpha21064_sim");
  const pmc::MetricCatalog a = pmc::builtin_metrics(alpha);
  BOOST_TEST(pmc::metric_unavailable(alpha, *a.find("ISSUE_RATE")).empty());
  BOOST_TEST(!a.find("L2_MISS_RATE"));  // another backend's metrics are not loaded
  pmc::Hal core2 = open("core2");
  const pmc::MetricCatalog t = pmc::builtin_metrics(core2);
  BOOST_REQUIRE(t.find("BACKEND_BOUND"));
  BOOST_TEST(contains(pmc::metric_unavailable(core2, *t.find("BACKEND_BOUND")), "v5"));
  BOOST_TEST(t.select("TopdownL1").size() == 4u);
}

BOOST_AUTO_TEST_CASE(metrics_over_a_simulated_run) {
  // p6-demo (examples/workloads/p6-demo.toml, by hand): FLOPS 750,000 x 4 = 3,000,000 in the FP
  // kernel; unhalted cycles 6,290,000 - 1,000,000 halted = 5,290,000; L2_LINES_IN 20,000 (the
  // L2-missing pass); instructions 200,000 + 6,000,000 + 1,000,000 + 20,000 + 400,000 + 10,000 +
  // 100,000 + 20,000 + 150,000 = 7,900,000. Two counters: two sessions.
  pmc::Hal p3 = open("pentium-iii");
  const pmc::MetricCatalog c = pmc::builtin_metrics(p3);
  const pmc::Workload w =
      pmc::load_workload(std::string(PMC_SOURCE_DIR) + "/examples/workloads/p6-demo.toml");
  std::vector<pmc::Reading> rs;
  for (const auto& pair : {std::vector<std::string>{"FLOPS", "CPU_CLK_UNHALTED"},
                           std::vector<std::string>{"L2_LINES_IN", "INST_RETIRED"}}) {
    pmc::Session s = p3.session();
    for (const auto& e : pair) s.add(e);
    s.run(w);
    for (auto& r : s.read()) rs.push_back(r);
  }
  pmc::MetricValue flops = pmc::evaluate_metric(*c.find("FLOPS_PER_CYCLE"), rs);
  BOOST_REQUIRE(flops.value);
  BOOST_TEST(*flops.value == 3'000'000.0 / 5'290'000.0, boost::test_tools::tolerance(1e-12));
  pmc::MetricValue l2 = pmc::evaluate_metric(*c.find("L2_MISS_RATE"), rs);
  BOOST_REQUIRE(l2.value);
  BOOST_TEST(*l2.value == 20'000.0 / 7'900'000.0, boost::test_tools::tolerance(1e-12));
  // FLOPS_RATE needs the wall-clock time a simulated workload does not have.
  pmc::MetricValue rate = pmc::evaluate_metric(*c.find("FLOPS_RATE"), rs);
  BOOST_TEST(!rate.value);
  BOOST_TEST(contains(rate.error, "duration_time"), rate.error);
  // With a duration (a real command's), MFLOP/s: 3,000,000 FLOP in 2 ms = 1,500 MFLOP/s.
  rate = pmc::evaluate_metric(*c.find("FLOPS_RATE"), rs, 2e6);
  BOOST_REQUIRE(rate.value);
  BOOST_TEST(*rate.value == 1500.0, boost::test_tools::tolerance(1e-12));
}
