// Sessions end to end on the simulated architectural PMU: the archperf plugin's driver
// programming the archperf device model (sim/models/archperf/archperf_model.cpp, written separately from the
// same fact sheet). Fixed counter 0 for instructions next to general events, version 1 (no global
// control) against version 2 and later, 64-bit totals across the 40- and 48-bit counter widths.
// Every expected count is worked out by hand from the workload (docs/workload-format.md: signals
// are occurrences per cycle; `cycles` is one per unhalted cycle).
#define BOOST_TEST_MODULE archperf_session
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <string>
#include "support/device.hpp"

namespace {

pmc::Hal open(const std::string& path) {
  pmc::Config cfg;
  cfg.cpu = path;
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}
std::string test_dump(const char* name) { return std::string(PMC_TEST_DATA) + "/cpuid/" + name; }
std::string bundled(const char* name) { return std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name; }

// Runs a workload through the session's simulated PMU (Session::run chunks it for the PMU's
// narrowest counter width: 40 or 48 bits here).
void run(pmc::Session& s, const std::string& toml) {
  auto w = pmc::parse_workload(toml, "inline.toml");
  s.run(w);
}

// The simulated CPU runs a workload whatever the session does: a stopped session does not
// count it (Session::run would start the session for the run).
void run_while_stopped(pmc::Session& s, const std::string& toml) {
  BOOST_REQUIRE(!s.running());
  auto w = pmc::parse_workload(toml, "inline.toml");
  for (std::size_t i = 0; i < w.size(); ++i) pmc_test::device(s).run(w.segment(i));
}

// 1000 user cycles: 3 instructions, 1 branch, 2 LLC misses, 4 raw 01C2 per cycle;
// 500 kernel cycles: 1 instruction, 1 LLC miss per cycle; 200 halted cycles: nothing.
// Totals: cycles 1500 (1000 user + 500 kernel), instructions 3500, branches 1000,
// LLC misses 2500 (2000 user), raw 01C2 4000.
const char* kWork = R"([[segment]]
cycles = 1000
signals = { instructions = 3, branches = 1, llc-misses = 2, "raw.0x01C2" = 4 }
[[segment]]
cycles = 500
mode = "kernel"
signals = { instructions = 1, llc-misses = 1 }
[[segment]]
cycles = 200
mode = "kernel"
halted = true
)";

struct Where {
  pmc::CounterKind kind;
  unsigned index;
};
void check_place(const pmc::Reading& r, Where w) {
  BOOST_TEST((r.counter_kind == w.kind), r.event);
  BOOST_TEST(r.counter == w.index, r.event);
}
constexpr auto G = pmc::CounterKind::general;
constexpr auto F = pmc::CounterKind::fixed;

}  // namespace

BOOST_AUTO_TEST_CASE(version_3_fixed_and_general_counters_together) {
  pmc::Hal hal = open(test_dump("archperf-v3-nehalem.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  s.add("branches");
  s.add("cache-misses:u");
  s.add("cycles:k");
  s.add("ref-cycles");
  s.add("r01C2");
  s.start();
  run(s, kWork);
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 3500u);  // 1000*3 + 500*1
  check_place(r[0], {F, 0});
  BOOST_TEST(r[1].value == 1000u);
  check_place(r[1], {G, 0});
  BOOST_TEST(r[2].value == 2000u);  // user mode only: 1000*2
  check_place(r[2], {G, 1});
  BOOST_TEST(r[3].value == 500u);   // kernel unhalted cycles
  check_place(r[3], {F, 1});
  BOOST_TEST(r[4].value == 1500u);  // reference cycles = unhalted cycles when the workload gives none
  check_place(r[4], {F, 2});
  BOOST_TEST(r[5].value == 4000u);  // raw 01C2 counts the model's "raw.0x01C2" signal
  check_place(r[5], {G, 2});
  BOOST_TEST(r[5].canonical == "archperf::r01C2:u=1:k=1:e=0:i=0:c=0:t=0");
  // Stopped: GLOBAL_CTRL is 0 and more activity changes nothing.
  BOOST_TEST(pmc_test::device(s).read(0x38F) == 0u);
  run_while_stopped(s, kWork);
  BOOST_TEST(s.read()[0].value == 3500u);
}

BOOST_AUTO_TEST_CASE(version_1_counts_with_per_counter_enables_only) {
  pmc::Hal hal = open(test_dump("archperf-v1-yonah.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");  // no fixed counters: a general counter
  s.add("cache-misses:k");
  s.start();
  BOOST_TEST((pmc_test::device(s).read(0x186) & (1ull << 22)) != 0u);  // EN set by start()
  BOOST_CHECK_THROW((void)pmc_test::device(s).read(0x38F), pmc::Error);  // version 1: no global MSRs
  run(s, kWork);
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 3500u);
  check_place(r[0], {G, 0});
  BOOST_TEST(r[1].value == 500u);  // kernel only: 500*1
  check_place(r[1], {G, 1});
  BOOST_TEST((pmc_test::device(s).read(0x186) & (1ull << 22)) == 0u);  // stop() cleared EN
  BOOST_TEST((pmc_test::device(s).read(0x187) & (1ull << 22)) == 0u);
  run_while_stopped(s, kWork);
  BOOST_TEST(s.read()[0].value == 3500u);
  // Start again: counting resumes from the totals.
  s.start();
  run(s, kWork);
  s.stop();
  BOOST_TEST(s.read()[0].value == 7000u);
}

BOOST_AUTO_TEST_CASE(version_2_core2_quirk_fixed_counters_count) {
  // core2.txt reports EDX = 0; the backend and the model both give it FIXED_CTR0-2.
  pmc::Hal hal = open(bundled("core2.txt"));
  pmc::Session s = hal.session();
  s.add("instructions:u");
  s.add("cycles");
  s.add("ref-cycles:k");
  s.add("branches");
  s.add("LLC_MISSES:c=2");  // cycles with at least 2 misses: the 1000 user cycles
  s.start();
  run(s, kWork);
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 3000u);
  check_place(r[0], {F, 0});
  BOOST_TEST(r[1].value == 1500u);
  check_place(r[1], {F, 1});
  BOOST_TEST(r[2].value == 500u);
  check_place(r[2], {F, 2});
  BOOST_TEST(r[3].value == 1000u);
  check_place(r[3], {G, 0});
  BOOST_TEST(r[4].value == 1000u);
  check_place(r[4], {G, 1});
}

BOOST_AUTO_TEST_CASE(threshold_invert_and_edge_on_general_counters) {
  pmc::Hal hal = open(test_dump("archperf-v4-skylake.txt"));
  pmc::Session s = hal.session();
  s.add("LLC_MISSES:c=2:i=1");  // cycles with fewer than 2 misses: the 500 kernel cycles
  s.add("LLC_MISSES:c=1:e=1");  // rising edges of "at least 1 miss": one, at the start
  s.add("instructions:e=1:c=1");  // not on the fixed counter: e and c need a general one
  s.start();
  run(s, R"([[segment]]
cycles = 1000
signals = { instructions = 3, llc-misses = 2 }
[[segment]]
cycles = 500
mode = "kernel"
signals = { instructions = 1, llc-misses = 1 }
)");
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 500u);
  BOOST_TEST(r[1].value == 1u);
  BOOST_TEST(r[2].value == 1u);
  BOOST_TEST((r[2].counter_kind == G));
}

BOOST_AUTO_TEST_CASE(ice_lake_topdown_slots_on_fixed_counter_3) {
  pmc::Hal hal = open(bundled("intel-icelake.txt"));
  pmc::Session s = hal.session();
  s.add("slots");
  s.add("instructions");
  s.add("LLC_REFERENCES");
  s.start();
  run(s, R"([[segment]]
cycles = 10000
signals = { slots = 4, instructions = 2, llc-references = 3 }
)");
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 40000u);
  check_place(r[0], {F, 3});
  BOOST_TEST(r[1].value == 20000u);
  check_place(r[1], {F, 0});
  BOOST_TEST(r[2].value == 30000u);
  check_place(r[2], {G, 0});
}

BOOST_AUTO_TEST_CASE(anythread_on_version_3_and_the_v5_bitmap_guest) {
  pmc::Hal nehalem = open(test_dump("archperf-v3-nehalem.txt"));
  pmc::Session s = nehalem.session();
  s.add("instructions:t");  // the model is one logical processor: AnyThread counts as plain
  s.add("branches:t");
  s.start();
  run(s, kWork);
  s.stop();
  BOOST_TEST(s.read()[0].value == 3500u);
  BOOST_TEST(s.read()[1].value == 1000u);
  BOOST_TEST(pmc_test::device(s).read(0x38D) == 0x7u);  // FIXED_CTR0: OS | USR | AnyThread
  BOOST_TEST(pmc_test::device(s).read(0x186) == 0x6300C4u);

  // The guest: fixed counters 0 and 2 only; cycles takes a general counter.
  pmc::Hal guest = open(test_dump("archperf-v5-guest.txt"));
  pmc::Session g = guest.session();
  g.add("cycles");
  g.add("instructions");
  g.add("ref-cycles");
  g.start();
  run(g, kWork);
  g.stop();
  const auto r = g.read();
  BOOST_TEST(r[0].value == 1500u);
  check_place(r[0], {G, 0});
  BOOST_TEST(r[1].value == 3500u);
  check_place(r[1], {F, 0});
  BOOST_TEST(r[2].value == 1500u);
  check_place(r[2], {F, 2});
}

BOOST_AUTO_TEST_CASE(sixty_four_bit_totals_across_the_40_bit_wrap) {
  // Core 2: 40-bit counters. 3 * 2^40 + 5 cycles with one instruction and two branches each:
  // FIXED_CTR0 wraps three times, the general counter six.
  pmc::Hal hal = open(bundled("core2.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  s.add("branches");
  s.start();
  run(s, R"([[segment]]
cycles = 0x300_0000_0005
signals = { instructions = 1, branches = 2 }
)");
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 3 * (1ull << 40) + 5);
  check_place(r[0], {F, 0});
  BOOST_TEST(r[1].value == 6 * (1ull << 40) + 10);
  check_place(r[1], {G, 0});
  // The hardware counter holds the total modulo 2^40; v2+ records the wraps in GLOBAL_STATUS.
  BOOST_TEST(pmc_test::device(s).read(0x309) == 5u);
  BOOST_TEST((pmc_test::device(s).read(0x38E) & (1ull << 32)) != 0u);  // Ovf_FixedCtr0
  BOOST_TEST((pmc_test::device(s).read(0x38E) & 1u) != 0u);            // Ovf_PMC0
}

BOOST_AUTO_TEST_CASE(sixty_four_bit_totals_across_the_48_bit_wrap) {
  pmc::Hal hal = open(test_dump("archperf-v4-skylake.txt"));
  pmc::Session s = hal.session();
  s.add("instructions:u");
  s.add("LLC_REFERENCES");
  s.start();
  run(s, R"([[segment]]
cycles = 0x2_0000_0000_0007
signals = { instructions = 1, llc-references = 1 }
)");
  s.stop();
  const auto r = s.read();
  BOOST_TEST(r[0].value == 2 * (1ull << 48) + 7);
  BOOST_TEST(r[1].value == 2 * (1ull << 48) + 7);
  BOOST_TEST(pmc_test::device(s).read(0xC1) == 7u);
}

BOOST_AUTO_TEST_CASE(reset_zeroes_fixed_and_general_counters) {
  pmc::Hal hal = open(test_dump("archperf-v2-penryn.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  s.add("branches");
  s.start();
  run(s, kWork);
  s.reset();
  run(s, R"([[segment]]
cycles = 10
signals = { instructions = 2, branches = 1 }
)");
  s.stop();
  BOOST_TEST(s.read()[0].value == 20u);
  BOOST_TEST(s.read()[1].value == 10u);
}

BOOST_AUTO_TEST_CASE(unavailable_events_are_refused_before_they_reach_the_hardware) {
  pmc::Hal guest = open(test_dump("archperf-v5-guest.txt"));
  pmc::Session s = guest.session();
  BOOST_CHECK_THROW(s.add("cache-misses"), pmc::Error);    // EBX bit 4
  BOOST_CHECK_THROW(s.add("branch-misses"), pmc::Error);   // EBX bit 6
  BOOST_CHECK_THROW(s.add("TOPDOWN_SLOTS"), pmc::Error);   // beyond the 7-bit vector
  BOOST_TEST(s.encodings().size() == 0u);
  s.add("instructions:t");  // version 5 without EDX[15]: AnyThread allowed
  s.start();
  run(s, kWork);
  s.stop();
  BOOST_TEST(s.read()[0].value == 3500u);
}

// Meteor Lake E-core (tests/data/cpuid/archperf-hybrid-mtl.txt): leaf 0AH reports 6 general
// counters (EAX = 0x07300605, EAX[15:8] = 6), CPUID.23H.1 reports this core type's eight
// (EAX = 0xFF) and fixed counters 0-2 (EBX = 7). The backend drives all eight; the device model
// must accept all eight too (its CPUID 23H policy, sim/models/archperf/archperf_model.hpp). Eight events
// that only general counters can take fill PMC0-7, three more fill FIXED_CTR0-2.
// Workload: 1000 user cycles with 3 instructions, 1 branch, 2 branch misses, 3 LLC references,
// 4 LLC misses and 5, 6, 7, 8 of the raw signals 0103, 0104, 0105, 0106 per cycle; 500 kernel
// cycles with 1 instruction and 2 branches. Totals: instructions 3500, cycles 1500, ref-cycles
// 1500, branches 1000 + 1000 = 2000, branch misses 2000, LLC references 3000, LLC misses 4000,
// raw 0103..0106: 5000, 6000, 7000, 8000.
BOOST_AUTO_TEST_CASE(hybrid_e_core_uses_every_general_counter_cpuid_23h_reports) {
  pmc::Hal hal = open(test_dump("archperf-hybrid-mtl.txt"));
  BOOST_TEST(hal.pmu().general_count() == 8u);
  pmc::Session s = hal.session();
  const char* general[] = {"branches", "branch-misses", "LLC_REFERENCES", "LLC_MISSES",
                           "r0103",    "r0104",         "r0105",          "r0106"};
  for (const char* e : general) s.add(e);
  s.add("instructions");
  s.add("cycles");
  s.add("ref-cycles");
  // A ninth general-only event has no counter left at the same time (a group of all of them;
  // added alone it would be multiplexed).
  BOOST_CHECK_THROW(s.add_group({"branches", "branch-misses", "LLC_REFERENCES", "LLC_MISSES", "r0103", "r0104",
                                 "r0105", "r0106", "r0107"}),
                    pmc::Error);
  s.start();
  BOOST_TEST(pmc_test::device(s).read(0x38F) == 0x7000000FFu);  // every counter enabled
  run(s, R"([[segment]]
cycles = 1000
[segment.signals]
instructions = 3
branches = 1
branch-misses = 2
llc-references = 3
llc-misses = 4
"raw.0x0103" = 5
"raw.0x0104" = 6
"raw.0x0105" = 7
"raw.0x0106" = 8
[[segment]]
cycles = 500
mode = "kernel"
signals = { instructions = 1, branches = 2 }
)");
  s.stop();
  const auto r = s.read();
  BOOST_TEST_REQUIRE(r.size() == 11u);
  const std::uint64_t want[] = {2000, 2000, 3000, 4000, 5000, 6000, 7000, 8000};
  unsigned used = 0;  // bit i: PMCi counted one of the eight
  for (unsigned i = 0; i < 8; ++i) {
    BOOST_TEST(r[i].value == want[i], r[i].event);
    BOOST_TEST((r[i].counter_kind == G), r[i].event);
    used |= 1u << r[i].counter;
  }
  BOOST_TEST(used == 0xFFu);  // PMC0-7, each once
  BOOST_TEST(r[8].value == 3500u);
  check_place(r[8], {F, 0});
  BOOST_TEST(r[9].value == 1500u);
  check_place(r[9], {F, 1});
  BOOST_TEST(r[10].value == 1500u);
  check_place(r[10], {F, 2});
}
