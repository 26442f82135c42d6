// Top-down level 1 and 2 in hardware through sessions (docs/hardware/archperf.md section 12):
// the archperf plugin's driver programming the archperf device model on the bundled Sapphire
// Rapids, Ice Lake and Skylake dumps. TOPDOWN.SLOTS and every PERF_METRICS event count together
// on fixed counter 3, no general counter used; a PERF_METRICS event reads slots x byte / 0xFF
// (Linux's rule, the quotient truncated). Expected values are worked out by hand below; the
// bytes are floor(255 x signal / slots) (policy 10.27).
#define BOOST_TEST_MODULE archperf_topdown
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/device.hpp"

namespace {

pmc::Hal open(const char* dump) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

// Sapphire Rapids, 6 slots per cycle, 1,000,000 user cycles: 6,000,000 slots.
//   segment A, 600,000 cycles: retiring 2, bad-spec 1, fe-bound 2, be-bound 1; heavy-ops 1,
//              br-mispredict 1, fetch-lat 1, mem-bound 1 per cycle;
//   segment B, 400,000 cycles: retiring 3, be-bound 3; mem-bound 2.
const char* kSprWork = R"([[segment]]
cycles = 600000
signals = { topdown-retiring = 2, topdown-bad-spec = 1, topdown-fe-bound = 2, topdown-be-bound = 1, topdown-heavy-ops = 1, topdown-br-mispredict = 1, topdown-fetch-lat = 1, topdown-mem-bound = 1 }
[[segment]]
cycles = 400000
signals = { topdown-retiring = 3, topdown-be-bound = 3, topdown-mem-bound = 2 }
)";

void run(pmc::Session& s, const char* toml) {
  auto w = pmc::parse_workload(toml, "inline.toml");
  s.run(w);
}

std::string error_of(pmc::Hal& hal, const std::string& event) {
  try {
    pmc::Session s = hal.session();
    s.add(event);
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(sapphire_rapids_counts_slots_and_all_eight_metrics_on_fixed_counter_3) {
  pmc::Hal hal = open("intel-spr.txt");
  pmc::Session s = hal.session();
  const std::vector<std::string> events = {
      "TOPDOWN.SLOTS",
      "PERF_METRICS.RETIRING",
      "PERF_METRICS.BAD_SPECULATION",
      "PERF_METRICS.FRONTEND_BOUND",
      "PERF_METRICS.BACKEND_BOUND",
      "PERF_METRICS.HEAVY_OPERATIONS",
      "PERF_METRICS.BRANCH_MISPREDICTS",
      "PERF_METRICS.FETCH_LATENCY",
      "topdown-mem-bound",  // perf's name of PERF_METRICS.MEMORY_BOUND
  };
  for (const auto& e : events) s.add(e);
  run(s, kSprWork);
  const auto r = s.read();
  BOOST_TEST_REQUIRE(r.size() == events.size());
  // Bytes (255 x share, truncated) and readings (6,000,000 x byte / 255, truncated):
  //   retiring   2,400,000 / 6,000,000 -> 102 -> 6,000,000 x 102 / 255 = 2,400,000
  //   bad-spec     600,000             ->  25 -> 150,000,000 / 255 = 588,235.29 -> 588,235
  //   fe-bound   1,200,000             ->  51 -> 1,200,000
  //   be-bound   1,800,000             ->  76 -> 456,000,000 / 255 = 1,788,235.29 -> 1,788,235
  //   heavy-ops, br-mispredict, fetch-lat 600,000 -> 25 -> 588,235
  //   mem-bound  1,400,000             ->  59 -> 354,000,000 / 255 = 1,388,235.29 -> 1,388,235
  const std::uint64_t expected[] = {6'000'000, 2'400'000, 588'235, 1'200'000, 1'788'235,
                                    588'235,   588'235,   588'235, 1'388'235};
  for (std::size_t i = 0; i < r.size(); ++i) {
    BOOST_TEST_CONTEXT(r[i].event) {
      BOOST_TEST(r[i].value == expected[i]);
      BOOST_TEST((r[i].counter_kind == pmc::CounterKind::fixed));  // no general counter used
      BOOST_TEST(r[i].counter == (i == 0 ? 3u : 16u + static_cast<unsigned>(i - 1)));
      BOOST_TEST(!r[i].extrapolated);  // one event set: no multiplexing
    }
  }
  BOOST_TEST(r[8].name == "PERF_METRICS.MEMORY_BOUND");
}

BOOST_AUTO_TEST_CASE(the_driver_enables_fixed_counter_3_and_bit_48_and_resets_both) {
  pmc::Hal hal = open("intel-spr.txt");
  pmc::Session s = hal.session();
  s.add("PERF_METRICS.RETIRING:u");  // alone: the driver still needs fixed counter 3
  s.start();
  pmc::Device& d = pmc_test::device(s);
  // GLOBAL_CTRL: bit 35 (fixed counter 3) and bit 48 (EN_PERF_METRICS); FIXED_CTR_CTRL block 3
  // = USR (2): 0x2000.
  BOOST_TEST(d.read(0x38F) == ((1ULL << 35) | (1ULL << 48)));
  BOOST_TEST(d.read(0x38D) == 0x2000u);
  auto w = pmc::parse_workload(kSprWork, "inline.toml");
  for (std::size_t i = 0; i < w.size(); ++i) d.run(w.segment(i));
  s.stop();
  BOOST_TEST(s.read()[0].value == 2'400'000u);
  // reset(): FIXED_CTR3 and PERF_METRICS both 0.
  s.reset();
  BOOST_TEST(d.read(0x30C) == 0u);
  BOOST_TEST(d.read(0x329) == 0u);
  BOOST_TEST(s.read()[0].value == 0u);
}

BOOST_AUTO_TEST_CASE(ice_lake_has_level_1_only) {
  pmc::Hal hal = open("intel-icl.txt");
  pmc::Session s = hal.session();
  for (const char* e : {"slots", "topdown-retiring", "topdown-bad-spec", "topdown-fe-bound", "topdown-be-bound"}) s.add(e);
  // 5 slots per cycle over 1,000,000 cycles = 5,000,000 slots. retiring 2 per cycle throughout
  // (2,000,000: byte 102, reads 2,000,000); bad-spec 1 for 600,000 cycles (600,000: byte 30,
  // 150,000,000 / 255 = 588,235); fe-bound 1 (1,000,000: byte 51, 1,000,000); be-bound 1 then
  // 2 (1,400,000: byte 71, 355,000,000 / 255 = 1,392,156).
  run(s, R"([[segment]]
cycles = 600000
signals = { topdown-retiring = 2, topdown-bad-spec = 1, topdown-fe-bound = 1, topdown-be-bound = 1 }
[[segment]]
cycles = 400000
signals = { topdown-retiring = 2, topdown-fe-bound = 1, topdown-be-bound = 2 }
)");
  const auto r = s.read();
  const std::uint64_t expected[] = {5'000'000, 2'000'000, 588'235, 1'000'000, 1'392'156};
  for (std::size_t i = 0; i < r.size(); ++i) BOOST_TEST(r[i].value == expected[i], r[i].event);
  // No level-2 byte on Ice Lake.
  const std::string why = error_of(hal, "PERF_METRICS.HEAVY_OPERATIONS");
  BOOST_TEST(contains(why, "level 1"), why);
  BOOST_TEST(contains(why, "family 6 model 125"), why);  // the CPU, as describe() names it (0x7D)
}

BOOST_AUTO_TEST_CASE(skylake_has_no_perf_metrics_and_says_so) {
  pmc::Hal hal = open("intel-skl.txt");
  for (const char* e : {"PERF_METRICS.RETIRING", "topdown-fe-bound"}) {
    const std::string why = error_of(hal, e);
    BOOST_TEST(contains(why, "PERF_METRICS"), why);
    BOOST_TEST(contains(why, "family 6 model 78"), why);  // the CPU, as describe() names it (0x4E)
  }
}
