// Placing a set of events beyond the counter matching (hal/src/schedule/placement.cpp): an
// exclusive ("taken alone") event counts only by itself; events that need an extra register
// share an MSR only when they need the same value, so with Intel's two offcore response MSRs
// (0x1A6, 0x1A7) two offcore events with different values count together, one MSR each, and a
// third value does not fit; a paired offcore event on its second MSR takes its second code.
// Fixed-only events (no general counter) go to their fixed counter, 4-6 included.
#define BOOST_TEST_MODULE placement
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/schedule.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

// Four general counters and fixed counters 0-6, as a Panther Lake Atom core (Darkmont) lists them.
pmc::PmuInfo pmu() {
  pmc::PmuInfo p;
  p.name = "t";
  for (unsigned i = 0; i < 4; ++i) {
    pmc::CounterInfo c;
    c.kind = pmc::CounterKind::general;
    c.index = i;
    c.width = 48;
    p.counters.push_back(c);
  }
  for (unsigned i = 0; i < 7; ++i) {
    pmc::CounterInfo c;
    c.kind = pmc::CounterKind::fixed;
    c.index = i;
    c.width = 48;
    p.counters.push_back(c);
  }
  return p;
}

pmc::EventDef& def(const std::string& name) {
  static std::map<std::string, pmc::EventDef> defs;
  defs[name].name = name;
  return defs[name];
}

pmc::Encoding ev(const std::string& name, std::vector<unsigned> counters = {0, 1, 2, 3}) {
  pmc::Encoding e;
  e.event = name;
  e.def = &def(name);
  e.counters = std::move(counters);
  return e;
}

constexpr std::uint32_t kRsp0 = 0x1A6, kRsp1 = 0x1A7;

pmc::Encoding offcore(const std::string& name, std::uint64_t value, std::vector<std::uint32_t> msrs = {kRsp0, kRsp1}) {
  pmc::Encoding e = ev(name);
  e.config = 0x4301B7;  // event 0xB7, umask 0x01, USR, OS, EN
  e.extra = "offcore_rsp";
  e.extra_value = value;
  e.extra_msrs = std::move(msrs);
  return e;
}

std::string place_error(const std::vector<pmc::Encoding>& events) {
  try {
    (void)pmc::place(pmu(), events);
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::no_counter));
    return e.what();
  }
  BOOST_ERROR("placed but should not");
  return {};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(an_exclusive_event_counts_alone) {
  pmc::Encoding alone = ev("MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4");
  alone.exclusive = true;
  const pmc::Placement p = pmc::place(pmu(), {alone});
  BOOST_TEST(p.slots.size() == 1u);
  BOOST_TEST(p.extra_msrs == std::vector<std::uint32_t>{0u}, boost::test_tools::per_element());
  // Beside any other event (a fixed-counter one too) the set is refused, naming them all.
  pmc::Encoding inst = ev("INST_RETIRED.ANY", {});
  inst.fixed = 0;
  const std::string m = place_error({ev("BR_INST_RETIRED.ALL_BRANCHES"), alone, inst});
  BOOST_TEST(has(m, "cannot count MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4 together with BR_INST_RETIRED.ALL_BRANCHES and "
                    "INST_RETIRED.ANY"),
             m);
  BOOST_TEST(has(m, "must be the only event counting"), m);
  BOOST_TEST(has(m, "taken alone"), m);
  // schedule() says the same.
  BOOST_CHECK_THROW((void)pmc::schedule(pmu(), {alone, ev("X")}), pmc::Error);
}

BOOST_AUTO_TEST_CASE(two_offcore_values_take_one_msr_each) {
  const pmc::Placement p = pmc::place(pmu(), {offcore("OCR.A", 0x10001), ev("X"), offcore("OCR.B", 0x10002)});
  BOOST_TEST(p.extra_msrs[0] == kRsp0);
  BOOST_TEST(p.extra_msrs[1] == 0u);  // no extra register
  BOOST_TEST(p.extra_msrs[2] == kRsp1);
  BOOST_TEST(p.slots[0] != p.slots[2]);
}

BOOST_AUTO_TEST_CASE(the_same_value_shares_an_msr) {
  // Three events with one value: one MSR serves them, the other stays free for a second value.
  const pmc::Placement p =
      pmc::place(pmu(), {offcore("OCR.A", 0x10001), offcore("OCR.A_TOO", 0x10001), offcore("OCR.B", 0x3F80400004)});
  BOOST_TEST(p.extra_msrs[0] == kRsp0);
  BOOST_TEST(p.extra_msrs[1] == kRsp0);
  BOOST_TEST(p.extra_msrs[2] == kRsp1);
}

BOOST_AUTO_TEST_CASE(a_third_value_does_not_fit_and_the_message_says_why) {
  const std::string m =
      place_error({offcore("OCR.A", 0x10001), offcore("OCR.B", 0x10002), offcore("OCR.C", 0x10004)});
  BOOST_TEST(has(m, "cannot count OCR.A, OCR.B and OCR.C together"), m);
  BOOST_TEST(has(m, "3 different values in extra register offcore_rsp"), m);
  BOOST_TEST(has(m, "OCR.A 0x10001, OCR.B 0x10002, OCR.C 0x10004"), m);
  BOOST_TEST(has(m, "MSRs 0x1A6 and 0x1A7 hold one value each"), m);
}

BOOST_AUTO_TEST_CASE(an_event_restricted_to_one_msr_gets_it) {
  // Intel's OFFCORE_RESPONSE_1 uses 0x1A7 only (extra_msrs = [0x1A7]); the event that may use
  // either takes 0x1A6, even when it comes first.
  const pmc::Placement p =
      pmc::place(pmu(), {offcore("OCR.ANY", 0x8001, {kRsp0, kRsp1}), offcore("OFFCORE_RESPONSE_1", 0x4001, {kRsp1})});
  BOOST_TEST(p.extra_msrs[0] == kRsp0);
  BOOST_TEST(p.extra_msrs[1] == kRsp1);
  // The same value in two MSRs is fine when each event's list demands it.
  const pmc::Placement same =
      pmc::place(pmu(), {offcore("OFFCORE_RESPONSE_0", 0x4001, {kRsp0}), offcore("OFFCORE_RESPONSE_1", 0x4001, {kRsp1})});
  BOOST_TEST(same.extra_msrs[0] == kRsp0);
  BOOST_TEST(same.extra_msrs[1] == kRsp1);
  // Two values for the one MSR both must use: refused, naming that MSR.
  const std::string m = place_error({offcore("R1.A", 0x1, {kRsp1}), offcore("R1.B", 0x2, {kRsp1})});
  BOOST_TEST(has(m, "MSR 0x1A7 holds one value"), m);
}

BOOST_AUTO_TEST_CASE(registers_of_different_msrs_do_not_compete) {
  // Load latency (0x3F6) and frontend (0x3F7) beside two offcore values: four MSRs, four values.
  pmc::Encoding ldlat = ev("MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128");
  ldlat.extra = "ldlat";
  ldlat.extra_value = 128;
  ldlat.extra_msrs = {0x3F6};
  pmc::Encoding fe = ev("FRONTEND_RETIRED.DSB_MISS");
  fe.extra = "frontend";
  fe.extra_value = 0x11;
  fe.extra_msrs = {0x3F7};
  const pmc::Placement p = pmc::place(pmu(), {offcore("OCR.A", 1), ldlat, offcore("OCR.B", 2), fe});
  BOOST_TEST(p.extra_msrs == (std::vector<std::uint32_t>{kRsp0, 0x3F6, kRsp1, 0x3F7}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_extra_register_without_msrs_is_not_a_counter_shortage) {
  pmc::Encoding e = offcore("OCR.NOWHERE", 1, {});
  try {
    (void)pmc::place(pmu(), {e});
    BOOST_ERROR("placed");
  } catch (const pmc::Error& err) {
    // not no_counter: a session must not try another event set for it
    BOOST_TEST(static_cast<int>(err.kind()) == static_cast<int>(pmc::errc::not_supported));
    BOOST_TEST(has(err.what(), "extra register 'offcore_rsp'"), err.what());
  }
}

BOOST_AUTO_TEST_CASE(the_second_msr_takes_the_second_code) {
  pmc::RegisterFormat format;
  format.add("event", pmc::parse_bit_range("0-7"));
  format.add("umask", pmc::parse_bit_range("8-15"));
  pmc::Encoding e = offcore("OCR.DEMAND_DATA_RD.ANY_RESPONSE", 0x10001);
  def("OCR.DEMAND_DATA_RD.ANY_RESPONSE").code2 = 0xBB;
  const pmc::Encoding first = pmc::bind_extra_msr(e, kRsp0, format);
  BOOST_TEST(first.config == 0x4301B7u);
  BOOST_TEST(first.extra_msrs == std::vector<std::uint32_t>{kRsp0}, boost::test_tools::per_element());
  const pmc::Encoding second = pmc::bind_extra_msr(e, kRsp1, format);
  BOOST_TEST(second.config == 0x4301BBu);  // Intel: 0xB7 with 0x1A6, 0xBB with 0x1A7
  BOOST_TEST(second.extra_msrs == std::vector<std::uint32_t>{kRsp1}, boost::test_tools::per_element());
  BOOST_TEST(second.extra_value == 0x10001u);
  // Without a second code the event keeps its own (OFFCORE_RESPONSE_1 is 0xBB already).
  pmc::Encoding r1 = offcore("OFFCORE_RESPONSE_1", 0x4001, {kRsp1});
  r1.config = 0x4301BB;
  BOOST_TEST(pmc::bind_extra_msr(r1, kRsp1, format).config == 0x4301BBu);
  BOOST_CHECK_THROW((void)pmc::bind_extra_msr(r1, kRsp0, format), pmc::Error);
}

BOOST_AUTO_TEST_CASE(fixed_only_events_go_to_their_fixed_counter) {
  // TOPDOWN_BAD_SPECULATION.ALL, TOPDOWN_FE_BOUND.ALL, TOPDOWN_RETIRING.ALL: fixed counters 4-6
  // (event 0, unit mask 5-7), no general counter; with the fixed 0-2 ones and four general events.
  const pmc::PmuInfo p = pmu();
  std::vector<pmc::Encoding> set;
  for (unsigned i = 0; i < 7; ++i) {
    pmc::Encoding e = ev("FIXED" + std::to_string(i), {});
    e.fixed = i;
    set.push_back(e);
  }
  for (unsigned i = 0; i < 4; ++i) set.push_back(ev("G" + std::to_string(i)));
  const std::vector<std::size_t> slots = pmc::schedule(p, set);
  for (unsigned i = 0; i < 7; ++i) {
    BOOST_TEST((p.counters[slots[i]].kind == pmc::CounterKind::fixed));
    BOOST_TEST(p.counters[slots[i]].index == i);
  }
  for (unsigned i = 7; i < 11; ++i) BOOST_TEST((p.counters[slots[i]].kind == pmc::CounterKind::general));
  // A PMU without fixed counter 5 has no place for that event.
  pmc::PmuInfo small = p;
  small.counters.resize(4 + 5);  // fixed 0-4
  try {
    (void)pmc::schedule(small, {set[5]});
    BOOST_ERROR("scheduled FIXED5 without fixed counter 5");
  } catch (const pmc::Error& e) {
    BOOST_TEST(has(e.what(), "FIXED5"), e.what());
  }
}
