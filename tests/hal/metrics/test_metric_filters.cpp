#define BOOST_TEST_MODULE metric_filters
#include <boost/test/unit_test.hpp>

// A metric takes only inputs counted compatibly, as perf stat pairs them: the same privilege
// levels (:u, :k, as the encoder settled them in the canonical string) and the same CPU.
// instructions:u over cycles:k is no IPC; among several cycles the one of the instructions'
// levels is taken (pmc::metric_input_readings, the one rule evaluate_metric and pmc stat use).

#include <pmc/pmc.hpp>

#include <string>

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr const char* kIpc = R"([[metric]]
name = "IPC"
events = ["instructions", "cycles"]
formula = "instructions / cycles"
unit = "insn per cycle"
)";

// A reading as a P6 session makes it: the canonical string carries the levels.
pmc::Reading reading(const std::string& event, const std::string& name, const std::string& generic, bool u, bool k,
                     std::uint64_t value) {
  pmc::Reading r;
  r.event = event;
  r.name = name;
  r.generic = generic;
  r.canonical = "p6::" + name + ":u=" + (u ? "1" : "0") + ":k=" + (k ? "1" : "0") + ":e=0:i=0:c=0";
  r.value = value;
  r.time_enabled = r.time_running = 1000;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_levels_come_from_the_canonical_string_else_the_modifiers) {
  const pmc::MetricFilter user = pmc::metric_filter(reading("INST_RETIRED:u", "INST_RETIRED", "instructions", true, false, 1));
  BOOST_TEST((user.user && !user.kernel));
  const pmc::MetricFilter both = pmc::metric_filter(reading("cycles", "CPU_CLK_UNHALTED", "cycles", true, true, 1));
  BOOST_TEST((both.user && both.kernel));
  pmc::Reading bare;  // made by hand: no canonical string
  bare.event = "cycles:k";
  const pmc::MetricFilter k = pmc::metric_filter(bare);
  BOOST_TEST((!k.user && k.kernel));
  bare.event = "cycles";
  BOOST_TEST((pmc::metric_filter(bare) == pmc::MetricFilter{}));
}

BOOST_AUTO_TEST_CASE(user_instructions_over_kernel_cycles_is_no_ipc) {
  pmc::MetricCatalog c;
  c.load_string(kIpc, "inline.toml");
  const pmc::MetricDef& ipc = *c.find("IPC");
  const std::vector<pmc::Reading> rs{reading("INST_RETIRED:u", "INST_RETIRED", "instructions", true, false, 7'550'000),
                                     reading("CPU_CLK_UNHALTED:k", "CPU_CLK_UNHALTED", "cycles", false, true, 350'000)};
  const pmc::MetricValue v = pmc::evaluate_metric(ipc, rs);
  BOOST_TEST(!v.value);
  BOOST_TEST(v.incompatible);
  BOOST_TEST(contains(v.error, "no compatible inputs"), v.error);
  BOOST_TEST(contains(v.error, "INST_RETIRED:u (user level)"), v.error);
  BOOST_TEST(contains(v.error, "CPU_CLK_UNHALTED:k (kernel level)"), v.error);
  const pmc::MetricInputReadings in = pmc::metric_input_readings(ipc, rs);
  BOOST_TEST(in.readings.empty());
  BOOST_TEST(in.incompatible);
}

BOOST_AUTO_TEST_CASE(the_input_of_the_same_levels_is_chosen) {
  pmc::MetricCatalog c;
  c.load_string(kIpc, "inline.toml");
  const pmc::MetricDef& ipc = *c.find("IPC");
  // cycles:k first: the pairing skips it for cycles:u, which has instructions:u's levels.
  const std::vector<pmc::Reading> rs{reading("INST_RETIRED:u", "INST_RETIRED", "instructions", true, false, 600),
                                     reading("CPU_CLK_UNHALTED:k", "CPU_CLK_UNHALTED", "cycles", false, true, 100),
                                     reading("CPU_CLK_UNHALTED:u", "CPU_CLK_UNHALTED", "cycles", true, false, 300)};
  const pmc::MetricValue v = pmc::evaluate_metric(ipc, rs);
  BOOST_REQUIRE(v.value);
  BOOST_TEST(*v.value == 2.0);
  const pmc::MetricInputReadings in = pmc::metric_input_readings(ipc, rs);
  BOOST_REQUIRE(in.readings.size() == 2u);
  BOOST_TEST(in.readings[0] == &rs[0]);
  BOOST_TEST(in.readings[1] == &rs[2]);
}

BOOST_AUTO_TEST_CASE(inputs_of_different_cpus_do_not_pair) {
  pmc::MetricCatalog c;
  c.load_string(kIpc, "inline.toml");
  const pmc::MetricDef& ipc = *c.find("IPC");
  std::vector<pmc::Reading> rs{reading("instructions", "INST_RETIRED", "instructions", true, true, 600),
                               reading("cycles", "CPU_CLK_UNHALTED", "cycles", true, true, 300)};
  rs[0].cpu = 0;
  rs[1].cpu = 1;
  BOOST_TEST(pmc::evaluate_metric(ipc, rs).incompatible);
  rs[1].cpu = 0;
  BOOST_TEST(*pmc::evaluate_metric(ipc, rs).value == 2.0);
  // An input nothing counted is said as before, not as incompatible.
  const pmc::MetricValue v = pmc::evaluate_metric(ipc, {rs[0]});
  BOOST_TEST(!v.incompatible);
  BOOST_TEST(v.error == "cycles was not counted", v.error);
}
