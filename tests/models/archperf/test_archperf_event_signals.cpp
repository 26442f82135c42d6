#define BOOST_TEST_MODULE archperf_event_signals
#include <boost/test/unit_test.hpp>

// Workload signals named after catalog events (docs/workload-format.md, "Signals named after
// events"), on the archperf model through the public API: a Hal opened on a bundled CPUID dump
// (Skylake client, Ice Lake client) with access "sim", a session counting catalog events over a
// workload whose signals are the events' names. Every expected count is worked out from the
// workload and the SDM's counting rules (CMASK: 1 per cycle with >= CMASK events; INV: 1 per
// cycle with < CMASK; E: 1 per rise of the condition), never from a run of the code.

#include "support/sim_counting.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using u64 = std::uint64_t;

namespace {

using pmc_test::count;
using pmc_test::count1;

// 1,000 cycles with 3 L3-miss loads retired per cycle, 500 with 1, 200 with none.
const char* const kL3Miss = R"(
[[segment]]
cycles = 1000
signals = { "MEM_LOAD_RETIRED.L3_MISS" = 3 }

[[segment]]
cycles = 500
signals = { "MEM_LOAD_RETIRED.L3_MISS" = 1 }

[[segment]]
cycles = 200
)";

std::string error_of(const pmc::Hal& hal, const pmc::Workload& w, const std::string& event) {
  try {
    (void)count1(hal, w, event);
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(an_event_named_signal_counts_per_cycle_with_the_filters_applied) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-skl.txt"));
  const pmc::Workload w = pmc::parse_workload(kL3Miss, "l3-miss");
  // 3 x 1,000 + 1 x 500.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS") == 3'500u);
  // CMASK 2: the cycles with 2 or more: the first segment's 1,000.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:c=2") == 1'000u);
  // CMASK 2 inverted: the cycles with fewer than 2: 500 + 200.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:c=2:i=1") == 700u);
  // Edge, CMASK 1: the condition (>= 1) rises once, at the first cycle; it holds through the
  // second segment and falls in the third.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:c=1:e=1") == 1u);
  // Edge, CMASK 2: it rises at the first cycle and falls at the second segment: 1.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:c=2:e=1") == 1u);
  // User mode only: every segment is user mode; kernel only: none is.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:u") == 3'500u);
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:k") == 0u);
  // An event the workload does not name counts nothing, also one with the same event code.
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L2_MISS") == 0u);
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L1_HIT") == 0u);
}

BOOST_AUTO_TEST_CASE(the_same_bits_count_the_same_whatever_the_spelling) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-skl.txt"));
  const pmc::Workload w = pmc::parse_workload(kL3Miss, "l3-miss");
  // MEM_LOAD_RETIRED.L3_MISS is event D1H, unit mask 20H (SKL list): the raw encoding with the
  // same bits (USR, OS, EN as the event's defaults) counts the same.
  const pmc::Encoding e = hal.encode("MEM_LOAD_RETIRED.L3_MISS");
  BOOST_TEST((e.config & 0xFFFF) == 0x20D1u);
  BOOST_TEST(count1(hal, w, "r20D1") == 3'500u);
  // The signal may be written with any spelling of the event the catalog knows, such as its
  // lower-case name: "mem_load_retired.l3_miss" = 2.
  const pmc::Workload lower = pmc::parse_workload("[[segment]]\ncycles = 10\nsignals = { \"mem_load_retired.l3_miss\" = 2 }\n", "lower");
  BOOST_TEST(count1(hal, lower, "MEM_LOAD_RETIRED.L3_MISS") == 20u);
  // The model's own signal for the select, raw.0x20D1, and the event's name add up.
  const pmc::Workload both = pmc::parse_workload(
      "[[segment]]\ncycles = 10\nsignals = { \"MEM_LOAD_RETIRED.L3_MISS\" = 2, \"raw.0x20D1\" = 5 }\n", "both");
  BOOST_TEST(count1(hal, both, "MEM_LOAD_RETIRED.L3_MISS") == 70u);
}

BOOST_AUTO_TEST_CASE(offcore_response_events_count_their_own_response_value) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-skl.txt"));
  // Two OFFCORE_RESPONSE events of the same select (B7H/BBH, unit mask 01H) whose MSR values
  // differ (SKL list: 0x3FFC408000 and 0x203C408000): each counts its own signal.
  const std::string any = "OFFCORE_RESPONSE.OTHER.L3_MISS.ANY_SNOOP";
  const std::string non_dram = "OFFCORE_RESPONSE.OTHER.L3_MISS.SNOOP_NON_DRAM";
  BOOST_TEST(hal.encode(any).extra_value == 0x3FFC408000u);
  BOOST_TEST(hal.encode(non_dram).extra_value == 0x203C408000u);
  const pmc::Workload w = pmc::parse_workload("[[segment]]\ncycles = 1000\n[segment.signals]\n\"" + any + "\" = 2\n\"" +
                                                  non_dram + "\" = 5\n",
                                              "ocr");
  // Together: one takes MSR 1A6H (select B7H), the other 1A7H (select BBH).
  const std::vector<u64> both = count(hal, w, {any, non_dram});
  BOOST_TEST(both.at(0) == 2'000u);
  BOOST_TEST(both.at(1) == 5'000u);
  // Each alone (then on 1A6H).
  BOOST_TEST(count1(hal, w, non_dram) == 5'000u);
  BOOST_TEST(count1(hal, w, any) == 2'000u);
  // A third response value the workload does not name counts nothing.
  BOOST_TEST(count1(hal, w, "OFFCORE_RESPONSE.OTHER.L3_MISS.SNOOP_HITM") == 0u);
  // The qualified spelling itself: the first select of the pair and the MSR value in hex.
  const pmc::Workload raw =
      pmc::parse_workload("[[segment]]\ncycles = 100\nsignals = { \"raw.0x01B7.rsp.0x203C408000\" = 3 }\n", "raw");
  BOOST_TEST(count1(hal, raw, non_dram) == 300u);
  BOOST_TEST(count1(hal, raw, any) == 0u);
  // A plain raw.0x01B7 is not an offcore event's signal: the select always reads its MSR.
  const pmc::Workload plain = pmc::parse_workload("[[segment]]\ncycles = 100\nsignals = { \"raw.0x01B7\" = 3 }\n", "plain");
  BOOST_TEST(count1(hal, plain, any) == 0u);
}

BOOST_AUTO_TEST_CASE(architectural_and_fixed_events_map_to_the_generic_signals) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-icl.txt"));
  const pmc::Workload w = pmc::parse_workload(R"(
[[segment]]
cycles = 400
signals = { "INST_RETIRED.ANY" = 3, "BR_INST_RETIRED.ALL_BRANCHES" = 1, "MEM_LOAD_RETIRED.L3_MISS" = 2 }
)",
                                              "icl");
  // INST_RETIRED.ANY (fixed counter 0) is the model's "instructions"; BR_INST_RETIRED.ALL_BRANCHES
  // (C4H/00H, architectural event 5) its "branches": the generic names count them.
  BOOST_TEST(count1(hal, w, "instructions") == 1'200u);
  BOOST_TEST(count1(hal, w, "INST_RETIRED.ANY") == 1'200u);
  BOOST_TEST(count1(hal, w, "branches") == 400u);
  BOOST_TEST(count1(hal, w, "BR_INST_RETIRED.ALL_BRANCHES") == 400u);
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS") == 800u);
  BOOST_TEST(count1(hal, w, "MEM_LOAD_RETIRED.L3_MISS:c=3") == 0u);  // 2 < 3 in every cycle
}

BOOST_AUTO_TEST_CASE(segments_built_in_code_and_streamed_files_are_mapped_too) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-skl.txt"));
  // Segments built by a program (as the emulation layer builds them), no file.
  pmc::Workload built;
  pmc::OwnedSegment a(250);
  a.signal("MEM_LOAD_RETIRED.L3_MISS", 4);
  built.add(a);
  pmc::OwnedSegment b(50, pmc::Mode::kernel);
  b.signal("MEM_LOAD_RETIRED.L3_MISS", 2);
  built.add(b);
  BOOST_TEST(count1(hal, built, "MEM_LOAD_RETIRED.L3_MISS") == 1'100u);
  BOOST_TEST(count1(hal, built, "MEM_LOAD_RETIRED.L3_MISS:k") == 100u);
  // A compact workload streamed through a WorkloadReader.
  const fs::path file = fs::temp_directory_path() / ("pmc-event-signals-" + std::to_string(::getpid()) + ".pmcw");
  {
    std::ofstream out(file);
    out << "pmc-workload 1\ncolumns cycles mode MEM_LOAD_RETIRED.L3_MISS raw.0x01C2\n100 u 3 1\n20 k 1 0\n";
  }
  pmc::WorkloadReader reader(file);
  pmc::Session s = hal.session();
  s.add("MEM_LOAD_RETIRED.L3_MISS");
  s.run(reader);
  BOOST_TEST(s.read().at(0).value == 320u);  // 3 x 100 + 1 x 20
  fs::remove(file);
}

BOOST_AUTO_TEST_CASE(bad_event_named_signals_are_refused_before_anything_counts) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-skl.txt"));
  // A cycles event: cycles are implicit.
  const pmc::Workload cycles =
      pmc::parse_workload("[[segment]]\ncycles = 10\nsignals = { \"CPU_CLK_UNHALTED.THREAD\" = 1 }\n", "c");
  const std::string why = error_of(hal, cycles, "MEM_LOAD_RETIRED.L3_MISS");
  BOOST_TEST(contains(why, "CPU_CLK_UNHALTED.THREAD"), why);
  BOOST_TEST(contains(why, "implicit"), why);
  // A modifier in a signal's name.
  const pmc::Workload modified =
      pmc::parse_workload("[[segment]]\ncycles = 10\nsignals = { \"MEM_LOAD_RETIRED.L3_MISS:c=2\" = 1 }\n", "m");
  const std::string why2 = error_of(hal, modified, "MEM_LOAD_RETIRED.L3_MISS");
  BOOST_TEST(contains(why2, "modifier 'c'"), why2);
  // Names that are no event stay signals of their own: counted by nothing here.
  const pmc::Workload other =
      pmc::parse_workload("[[segment]]\ncycles = 10\nsignals = { \"NO_SUCH_EVENT.X\" = 1, \"l2-requests.m\" = 1 }\n", "o");
  BOOST_TEST(count1(hal, other, "MEM_LOAD_RETIRED.L3_MISS") == 0u);
}

BOOST_AUTO_TEST_CASE(umask2_is_part_of_the_signal) {
  // Arrow Lake's Lion Cove list: ITLB_MISSES.STLB_HIT is event 11H, unit mask 20H, UMASK2 01H
  // (bits 47:40): its select reads raw.0x012011, not raw.0x2011.
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("intel-arl-lnc.txt"));
  const pmc::Encoding e = hal.encode("ITLB_MISSES.STLB_HIT");
  BOOST_TEST_REQUIRE(((e.config >> 40) & 0xFF) == 0x01u);
  const pmc::Workload named =
      pmc::parse_workload("[[segment]]\ncycles = 100\nsignals = { \"ITLB_MISSES.STLB_HIT\" = 2 }\n", "named");
  BOOST_TEST(count1(hal, named, "ITLB_MISSES.STLB_HIT") == 200u);
  const pmc::Workload raw = pmc::parse_workload(
      "[[segment]]\ncycles = 100\nsignals = { \"raw.0x012011\" = 3, \"raw.0x2011\" = 5 }\n", "raw");
  BOOST_TEST(count1(hal, raw, "ITLB_MISSES.STLB_HIT") == 300u);
}
