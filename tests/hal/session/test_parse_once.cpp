// Issue 22: `pmc stat --cpuid-dump pentium-iii --workload p6-demo -e INST_RETIRED:u` parsed the
// event 5 times and encoded it 5 times (the CLI worked out its default events although -e was
// given, and matched metric inputs by encoding the events again). These run the library calls
// pmc stat makes for that command (tools/pmc/stat.cpp stat_workload, tools/pmc/stat_plan.cpp
// make_plan and add_metric_events) and count, with the core's own counters
// (hal/src/events/event_stats.hpp), that each event string is parsed once and encoded once.
#define BOOST_TEST_MODULE parse_once
#include <boost/test/unit_test.hpp>

#include <pmc/pmc.hpp>

#include "event_stats.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

pmc::Hal pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = pmc::resolve_data("pentium-iii", pmc::DataKind::cpuid_dump).string();
  return pmc::Hal::open(cfg);
}

struct Counted {
  std::uint64_t parses = 0;
  std::uint64_t encodes = 0;
  std::vector<pmc::Reading> readings;
};

// pmc stat --workload p6-demo -e EVENTS [-M METRICS], as tools/pmc/stat.cpp runs it: the
// event list split, the defaults only without -e (pmc::default_events), the groups added to a
// session, then whatever the asked metrics need that no encoding of the session feeds, the
// workload run, the metrics evaluated over the readings.
Counted stat_workload(const pmc::Hal& hal, const std::vector<std::string>& events,
                      const std::vector<std::string>& metrics) {
  const pmc::detail::EventStats before = pmc::detail::event_stats();
  std::vector<pmc::EventGroup> groups;
  if (events.empty() && metrics.empty())
    for (auto& e : pmc::default_events(hal, pmc::DefaultEvents::workload)) groups.push_back({{std::move(e)}, false});
  else
    groups = pmc::parse_event_list(events);
  const pmc::MetricCatalog catalog = pmc::builtin_metrics(hal);
  std::vector<const pmc::MetricDef*> asked;
  for (const auto& m : metrics)
    for (const auto* def : catalog.select(m)) asked.push_back(def);
  pmc::Session session = hal.session();
  std::vector<std::string> planned;
  const auto add = [&](const pmc::EventGroup& g) {
    planned.insert(planned.end(), g.events.begin(), g.events.end());
    if (g.braces)
      session.add_group(g.events);
    else
      session.add(g.events.front());
  };
  for (const auto& g : groups) add(g);
  for (const auto* m : asked)
    for (const auto& in : m->events) {
      const auto& enc = session.encodings();
      if (std::find(planned.begin(), planned.end(), in.event) != planned.end() ||
          std::any_of(enc.begin(), enc.end(), [&](const pmc::Encoding& e) { return pmc::feeds_metric_input(e, in.event); }))
        continue;
      add({{in.event}, false});
    }
  pmc::Workload w = pmc::load_workload(pmc::resolve_data("p6-demo", pmc::DataKind::workload));
  (void)session.run(w);
  Counted out;
  out.readings = session.read();
  for (const auto* m : asked) BOOST_TEST(pmc::evaluate_metric(*m, out.readings).value.has_value(), m->name);
  for (const auto& m : catalog.metrics())
    if (m.by_default) (void)pmc::evaluate_metric(m, out.readings);
  const pmc::detail::EventStats after = pmc::detail::event_stats();
  out.parses = after.parses - before.parses;
  out.encodes = after.encodes - before.encodes;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_event_given_with_e_is_parsed_and_encoded_once) {
  const pmc::Hal hal = pentium_iii();
  BOOST_REQUIRE(hal.access() == "sim");
  const Counted c = stat_workload(hal, {"INST_RETIRED:u"}, {});
  BOOST_REQUIRE_EQUAL(c.readings.size(), 1u);
  BOOST_TEST(c.readings[0].event == "INST_RETIRED:u");
  BOOST_TEST(c.readings[0].value > 0u);
  BOOST_TEST(c.parses == 1u);
  BOOST_TEST(c.encodes == 1u);
}

// A group is checked whole before it is added, from the same encodings: {a,b} encodes each once.
BOOST_AUTO_TEST_CASE(a_group_is_parsed_and_encoded_once) {
  const pmc::Hal hal = pentium_iii();
  const Counted c = stat_workload(hal, {"{INST_RETIRED:u,cycles}"}, {});
  BOOST_REQUIRE_EQUAL(c.readings.size(), 2u);
  BOOST_TEST(c.readings[0].value > 0u);
  BOOST_TEST(c.parses == 2u);
  BOOST_TEST(c.encodes == 2u);
}

// Without -e the defaults are worked out once per Hal: each of the four generic events is parsed
// and encoded once while they are tried against the P6's two counters (cycles and instructions
// fill them), and the session that adds the chosen two parses and encodes neither again.
BOOST_AUTO_TEST_CASE(the_default_events_are_parsed_and_encoded_once) {
  const pmc::Hal hal = pentium_iii();
  const Counted c = stat_workload(hal, {}, {});
  BOOST_REQUIRE_EQUAL(c.readings.size(), 2u);
  BOOST_TEST(c.readings[0].event == "cycles");
  BOOST_TEST(c.readings[1].event == "instructions");
  BOOST_TEST(c.readings[1].name == "INST_RETIRED");
  BOOST_REQUIRE(c.readings[1].def != nullptr);  // the reading keeps the catalog entry
  BOOST_TEST(c.readings[1].def->name == "INST_RETIRED");
  BOOST_TEST(c.readings[1].def->generic == "instructions");
  BOOST_TEST(c.parses == 4u);
  BOOST_TEST(c.encodes == 4u);
  // A second count on the same Hal tries nothing again.
  const Counted again = stat_workload(hal, {}, {});
  BOOST_TEST(again.parses == 0u);
  BOOST_TEST(again.encodes == 0u);
  BOOST_TEST(again.readings[1].value == c.readings[1].value);
}

// -M IPC needs instructions and cycles: INST_RETIRED feeds instructions (its generic name, from
// the encoding the session made), so only cycles is added; each string once. (INST_RETIRED:u
// would not pair with the cycles of every level: test_metric_filters.)
BOOST_AUTO_TEST_CASE(metric_inputs_match_the_sessions_encodings) {
  const pmc::Hal hal = pentium_iii();
  const Counted c = stat_workload(hal, {"INST_RETIRED"}, {"IPC"});
  BOOST_REQUIRE_EQUAL(c.readings.size(), 2u);
  BOOST_TEST(c.readings[1].event == "cycles");
  BOOST_TEST(c.parses == 2u);
  BOOST_TEST(c.encodes == 2u);
}

BOOST_AUTO_TEST_CASE(the_list_syntax_is_the_librarys) {
  const auto g = pmc::parse_event_list(std::vector<std::string>{"{FLOPS,MUL},DIV", "cycles"});
  BOOST_REQUIRE_EQUAL(g.size(), 3u);
  BOOST_TEST(g[0].braces);
  BOOST_TEST(g[0].events == (std::vector<std::string>{"FLOPS", "MUL"}), boost::test_tools::per_element());
  BOOST_TEST(!g[1].braces);
  BOOST_TEST(g[2].events.front() == "cycles");
  for (const char* bad : {"{a", "{a,{b}}", "{a}x", "a,,b", "a,", "", "a}b", "{}"})
    BOOST_CHECK_THROW(pmc::parse_event_list(bad), pmc::Error);
  BOOST_TEST(pmc::parse_cpu_list("6,0-3,2") == (std::vector<int>{0, 1, 2, 3, 6}), boost::test_tools::per_element());
  for (const char* bad : {"", "0-x", "3-1", "0,", "1234567"}) BOOST_CHECK_THROW(pmc::parse_cpu_list(bad), pmc::Error);
}
