// Scheduling events onto counters is a matching: an assignment is found whenever one exists,
// and when none does the error names the events that compete.
#define BOOST_TEST_MODULE schedule
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/schedule.hpp>
#include <pmc/session.hpp>

#include <string>

namespace {

pmc::PmuInfo p6_like(unsigned fixed = 0) {
  pmc::PmuInfo p;
  p.name = "t";
  auto counter = [](pmc::CounterKind kind, unsigned index, unsigned width) {
    pmc::CounterInfo c;
    c.kind = kind;
    c.index = index;
    c.width = width;
    return c;
  };
  p.counters = {counter(pmc::CounterKind::general, 0, 40), counter(pmc::CounterKind::general, 1, 40)};
  for (unsigned i = 0; i < fixed; ++i) p.counters.push_back(counter(pmc::CounterKind::fixed, i, 48));
  return p;
}

pmc::EventDef& def(const std::string& name) {
  static std::map<std::string, pmc::EventDef> defs;
  defs[name].name = name;
  return defs[name];
}

pmc::Encoding ev(const std::string& name, std::vector<unsigned> counters, std::optional<unsigned> fixed = {}) {
  pmc::Encoding e;
  e.event = name;
  e.def = &def(name);
  e.counters = std::move(counters);
  e.fixed = fixed;
  return e;
}

std::string schedule_error(const pmc::PmuInfo& p, const std::vector<pmc::Encoding>& events) {
  try {
    (void)pmc::schedule(p, events);
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::no_counter));
    return e.what();
  }
  BOOST_ERROR("scheduled but should not");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(counter_constraints_are_honoured_in_any_order) {
  // docs/hardware/p6.md behaviour 7: {FLOPS, MUL} go to ctr0 / ctr1.
  auto p = p6_like();
  auto a = pmc::schedule(p, {ev("FLOPS", {0}), ev("MUL", {1})});
  BOOST_TEST(a[0] == 0u);
  BOOST_TEST(a[1] == 1u);
  auto b = pmc::schedule(p, {ev("MUL", {1}), ev("FLOPS", {0})});
  BOOST_TEST(b[0] == 1u);
  BOOST_TEST(b[1] == 0u);
}

BOOST_AUTO_TEST_CASE(finds_assignments_first_fit_misses) {
  // INST_RETIRED (either counter) added before FLOPS (counter 0 only): first-fit would put
  // INST_RETIRED on 0 and fail; the matching moves it to 1.
  auto a = pmc::schedule(p6_like(), {ev("INST_RETIRED", {0, 1}), ev("FLOPS", {0})});
  BOOST_TEST(a[0] == 1u);
  BOOST_TEST(a[1] == 0u);
  auto b = pmc::schedule(p6_like(), {ev("INST_RETIRED", {0, 1}), ev("MUL", {1})});
  BOOST_TEST(b[0] == 0u);
  BOOST_TEST(b[1] == 1u);
}

BOOST_AUTO_TEST_CASE(impossible_sets_name_the_competing_events) {
  std::string m = schedule_error(p6_like(), {ev("INST_RETIRED", {0, 1}), ev("MUL", {1}), ev("DIV", {1})});
  BOOST_TEST(m.find("MUL") != std::string::npos, m);
  BOOST_TEST(m.find("DIV") != std::string::npos, m);
  BOOST_TEST(m.find("counter 1 ") != std::string::npos, m);
  BOOST_TEST(m.find("INST_RETIRED") == std::string::npos, m);  // it is not part of the conflict
  m = schedule_error(p6_like(), {ev("A", {0, 1}), ev("B", {0, 1}), ev("C", {0, 1})});
  BOOST_TEST(m.find("A, B, C") != std::string::npos, m);
  BOOST_TEST(m.find("counters 0, 1 (2 available)") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(fixed_capable_events_use_fixed_counters) {
  auto p = p6_like(1);
  auto a = pmc::schedule(p, {ev("INST", {0, 1}, 0u), ev("X", {0, 1}), ev("Y", {0, 1})});
  BOOST_TEST((p.counters[a[0]].kind == pmc::CounterKind::fixed));
  BOOST_TEST((p.counters[a[1]].kind == pmc::CounterKind::general));
  BOOST_TEST((p.counters[a[2]].kind == pmc::CounterKind::general));
  // A second event wanting the same fixed counter falls back to a general one.
  auto b = pmc::schedule(p, {ev("INST", {0, 1}, 0u), ev("INST2", {0, 1}, 0u)});
  BOOST_TEST(b[0] != b[1]);
}

BOOST_AUTO_TEST_CASE(empty_set_and_event_without_counters) {
  BOOST_TEST(pmc::schedule(p6_like(), {}).empty());
  std::string m = schedule_error(p6_like(), {ev("NOWHERE", {7})});
  BOOST_TEST(m.find("NOWHERE") != std::string::npos, m);
}
