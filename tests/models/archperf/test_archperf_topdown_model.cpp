#define BOOST_TEST_MODULE archperf_topdown_model
#include <boost/test/unit_test.hpp>

// The archperf model's top-down registers (docs/hardware/archperf.md section 12): fixed counter 3
// (TOPDOWN.SLOTS) and PERF_METRICS (MSR 329H), at the register level, on the bundled dumps of
// Sapphire Rapids (level 2, 6 slots per cycle), Ice Lake client (level 1, 5 slots per cycle) and
// Skylake (no PERF_METRICS). Every expected value is worked out by hand in the comments, never
// taken from a run of the model. Bytes are floor(255 x signal / slots) (policy 10.27).

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include "archperf_model.hpp"  // ArchPerfDevice (pmcmodel_archperf)

#include <cstdint>
#include <string>

namespace {

using u64 = std::uint64_t;
using pmc::errc;

constexpr std::uint32_t FIXED_CTR3 = 0x30C, PERF_METRICS = 0x329, PERF_CAPABILITIES = 0x345,
                        FIXED_CTR_CTRL = 0x38D, GLOBAL_STATUS = 0x38E, GLOBAL_CTRL = 0x38F,
                        GLOBAL_STATUS_RESET = 0x390, GLOBAL_STATUS_SET = 0x391;
constexpr u64 bit(unsigned n) { return 1ULL << n; }
constexpr u64 EN_FIXED3 = bit(35), EN_PERF_METRICS = bit(48);
constexpr u64 FIXED3_ALL_RINGS = 0x3ULL << 12;  // FIXED_CTR_CTRL block 3 = 0011b

pmc::CpuInfo bundled(const char* name) {
  return pmc::load_cpuid_dump(std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name);
}

// The workload of the Sapphire Rapids tests: 600,000 + 400,000 unhalted user cycles.
//   segment A, 600,000 cycles: retiring 2, bad-spec 1, fe-bound 2, be-bound 1 per cycle;
//              heavy-ops 1, br-mispredict 1, fetch-lat 1, mem-bound 1;
//   segment B, 400,000 cycles: retiring 3, be-bound 3; mem-bound 2.
// Slots: 6 x 1,000,000 = 6,000,000. Totals: retiring 1,200,000 + 1,200,000 = 2,400,000 (40 %),
// bad-spec 600,000 (10 %), fe-bound 1,200,000 (20 %), be-bound 600,000 + 1,200,000 = 1,800,000
// (30 %); heavy-ops 600,000, br-mispredict 600,000, fetch-lat 600,000 (10 % each), mem-bound
// 600,000 + 800,000 = 1,400,000.
void run_spr_work(pmc::sim::ArchPerfDevice& d) {
  pmc::OwnedSegment a(600'000);
  a.signal("topdown-retiring", 2).signal("topdown-bad-spec", 1).signal("topdown-fe-bound", 2);
  a.signal("topdown-be-bound", 1).signal("topdown-heavy-ops", 1).signal("topdown-br-mispredict", 1);
  a.signal("topdown-fetch-lat", 1).signal("topdown-mem-bound", 1);
  pmc::OwnedSegment b(400'000);
  b.signal("topdown-retiring", 3).signal("topdown-be-bound", 3).signal("topdown-mem-bound", 2);
  d.run(a);
  d.run(b);
}

// The bytes of that workload, byte 0 lowest:
//   retiring   255 x 2,400,000 / 6,000,000 = 102        -> 0x66
//   bad-spec   255 x   600,000 / 6,000,000 =  25.5 -> 25 -> 0x19
//   fe-bound   255 x 1,200,000 / 6,000,000 =  51        -> 0x33
//   be-bound   255 x 1,800,000 / 6,000,000 =  76.5 -> 76 -> 0x4C
//   heavy-ops, br-mispredict, fetch-lat: 25 -> 0x19 each
//   mem-bound  255 x 1,400,000 / 6,000,000 =  59.5 -> 59 -> 0x3B
constexpr u64 kSprBytes = 0x3B191919'4C331966ULL;

void enable_topdown(pmc::sim::ArchPerfDevice& d, u64 global) {
  d.write(FIXED_CTR_CTRL, FIXED3_ALL_RINGS);
  d.write(GLOBAL_CTRL, global);
}

}  // namespace

BOOST_AUTO_TEST_CASE(sapphire_rapids_enumerates_perf_metrics_and_counts_six_slots_per_cycle) {
  pmc::sim::ArchPerfDevice d(bundled("intel-spr.txt"));
  // IA32_PERF_CAPABILITIES: FW_WRITE (13) and PERF_METRICS (15) = 0xA000.
  BOOST_TEST(d.read(PERF_CAPABILITIES) == 0xA000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0u);
  enable_topdown(d, EN_FIXED3 | EN_PERF_METRICS);
  run_spr_work(d);
  BOOST_TEST(d.read(FIXED_CTR3) == 6'000'000u);
  BOOST_TEST(d.read(PERF_METRICS) == kSprBytes);
  // RDPMC with ECX = 1 << 29 reads the same bytes (section 5; CPL 0 here).
  BOOST_TEST(d.rdpmc(1U << 29) == kSprBytes);
}

BOOST_AUTO_TEST_CASE(global_ctrl_bit_48_gates_perf_metrics_not_fixed_counter_3) {
  pmc::sim::ArchPerfDevice d(bundled("intel-spr.txt"));
  // Fixed counter 3 alone: it counts 6,000,000 slots, PERF_METRICS stays 0.
  enable_topdown(d, EN_FIXED3);
  run_spr_work(d);
  BOOST_TEST(d.read(FIXED_CTR3) == 6'000'000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0u);
  // Bit 48 without fixed counter 3 (bit 35 clear): neither moves.
  d.write(FIXED_CTR3, 0);
  enable_topdown(d, EN_PERF_METRICS);
  run_spr_work(d);
  BOOST_TEST(d.read(FIXED_CTR3) == 0u);
  BOOST_TEST(d.read(PERF_METRICS) == 0u);
}

BOOST_AUTO_TEST_CASE(software_resets_fixed_counter_3_and_perf_metrics_together) {
  pmc::sim::ArchPerfDevice d(bundled("intel-spr.txt"));
  enable_topdown(d, EN_FIXED3 | EN_PERF_METRICS);
  run_spr_work(d);
  BOOST_TEST(d.read(PERF_METRICS) == kSprBytes);
  // The joint reset: 0 to FIXED_CTR3, then 0 to PERF_METRICS.
  d.write(GLOBAL_CTRL, 0);
  d.write(FIXED_CTR3, 0);
  d.write(PERF_METRICS, 0);
  BOOST_TEST(d.read(FIXED_CTR3) == 0u);
  BOOST_TEST(d.read(PERF_METRICS) == 0u);
  // Then 1,000 cycles, all retiring (6 of 6 slots): byte 0 = 255 x 6,000 / 6,000 = 0xFF, the
  // others 0: the earlier run no longer weighs.
  d.write(GLOBAL_CTRL, EN_FIXED3 | EN_PERF_METRICS);
  pmc::OwnedSegment all(1000);
  all.signal("topdown-retiring", 6);
  d.run(all);
  BOOST_TEST(d.read(FIXED_CTR3) == 6000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0xFFu);
  // A write of FIXED_CTR3 alone clears PERF_METRICS too (its bytes are fractions of it).
  d.write(FIXED_CTR3, 0);
  BOOST_TEST(d.read(PERF_METRICS) == 0u);
}

BOOST_AUTO_TEST_CASE(a_restored_value_weighs_as_many_slots_as_fixed_counter_3_holds) {
  pmc::sim::ArchPerfDevice d(bundled("intel-spr.txt"));
  // Linux's save / restore: FIXED_CTR3 = 6,000, then PERF_METRICS = 0xFF (all retiring). Then
  // 1,000 cycles with no retiring slot: 6,000 more slots, retiring byte = 255 x 6,000 x 255 /
  // 255 / 12,000 = 127.5 -> 127 = 0x7F.
  d.write(FIXED_CTR3, 6000);
  d.write(PERF_METRICS, 0xFF);
  BOOST_TEST(d.read(PERF_METRICS) == 0xFFu);
  enable_topdown(d, EN_FIXED3 | EN_PERF_METRICS);
  d.run(pmc::OwnedSegment(1000));
  BOOST_TEST(d.read(FIXED_CTR3) == 12'000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0x7Fu);
}

BOOST_AUTO_TEST_CASE(a_given_slots_signal_replaces_the_width) {
  pmc::sim::ArchPerfDevice d(bundled("intel-spr.txt"));
  enable_topdown(d, EN_FIXED3 | EN_PERF_METRICS);
  // slots = 4 per cycle over 1,000 cycles: 4,000 slots; fe-bound 1 per cycle: 255 x 1,000 /
  // 4,000 = 63.75 -> 63 = 0x3F in byte 2.
  pmc::OwnedSegment s(1000);
  s.signal("slots", 4).signal("topdown-fe-bound", 1);
  d.run(s);
  BOOST_TEST(d.read(FIXED_CTR3) == 4000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0x3F0000u);
}

BOOST_AUTO_TEST_CASE(ice_lake_fills_level_1_only_five_slots_per_cycle) {
  pmc::sim::ArchPerfDevice d(bundled("intel-icl.txt"));
  BOOST_TEST(d.read(PERF_CAPABILITIES) == 0xA000u);
  enable_topdown(d, EN_FIXED3 | EN_PERF_METRICS);
  // 600,000 cycles: retiring 2, bad-spec 1, fe-bound 1, be-bound 1, heavy-ops 1 (ignored);
  // 400,000 cycles: retiring 2, fe-bound 1, be-bound 2. Slots 5 x 1,000,000 = 5,000,000;
  // retiring 2,000,000 -> 255 x 0.4 = 102 = 0x66; bad-spec 600,000 -> 30.6 -> 30 = 0x1E;
  // fe-bound 1,000,000 -> 51 = 0x33; be-bound 1,400,000 -> 71.4 -> 71 = 0x47. Bytes 4-7: none.
  pmc::OwnedSegment a(600'000);
  a.signal("topdown-retiring", 2).signal("topdown-bad-spec", 1).signal("topdown-fe-bound", 1);
  a.signal("topdown-be-bound", 1).signal("topdown-heavy-ops", 1);
  pmc::OwnedSegment b(400'000);
  b.signal("topdown-retiring", 2).signal("topdown-fe-bound", 1).signal("topdown-be-bound", 2);
  d.run(a);
  d.run(b);
  BOOST_TEST(d.read(FIXED_CTR3) == 5'000'000u);
  BOOST_TEST(d.read(PERF_METRICS) == 0x47331E66u);
  // Bytes 4-7 are reserved on a level-1 part: writing them faults.
  BOOST_CHECK_THROW(d.write(PERF_METRICS, 1ULL << 32), pmc::Error);
}

BOOST_AUTO_TEST_CASE(status_bit_48_exists_only_with_perf_metrics) {
  pmc::sim::ArchPerfDevice spr(bundled("intel-spr.txt"));
  spr.write(GLOBAL_STATUS_SET, EN_PERF_METRICS);
  BOOST_TEST(spr.read(GLOBAL_STATUS) == EN_PERF_METRICS);
  spr.write(GLOBAL_STATUS_RESET, EN_PERF_METRICS);
  BOOST_TEST(spr.read(GLOBAL_STATUS) == 0u);
  // Skylake (version 4, fixed counters 0-2): no PERF_METRICS, no fixed counter 3, bits 48 reserved.
  pmc::sim::ArchPerfDevice skl(bundled("intel-skl.txt"));
  BOOST_TEST(skl.read(PERF_CAPABILITIES) == 0x2000u);
  BOOST_CHECK_THROW((void)skl.read(PERF_METRICS), pmc::Error);
  BOOST_CHECK_THROW(skl.write(GLOBAL_CTRL, EN_PERF_METRICS), pmc::Error);
  BOOST_CHECK_THROW(skl.write(GLOBAL_STATUS_SET, EN_PERF_METRICS), pmc::Error);
}

BOOST_AUTO_TEST_CASE(on_a_hybrid_part_only_the_p_core_has_perf_metrics) {
  // Alder Lake (model 0x97): the P-core's dump (CPUID.1AH core type 40H) is a level-2 part of
  // topdown.toml, the E-core's (20H) is not: FW_WRITE alone, no MSR 329H.
  pmc::sim::ArchPerfDevice p(bundled("intel-adl-glc.txt"));
  BOOST_TEST(p.read(PERF_CAPABILITIES) == 0xA000u);
  BOOST_TEST(p.read(PERF_METRICS) == 0u);
  pmc::sim::ArchPerfDevice e(bundled("intel-adl-grt.txt"));
  BOOST_TEST(e.read(PERF_CAPABILITIES) == 0x2000u);
  BOOST_CHECK_THROW((void)e.read(PERF_METRICS), pmc::Error);
}
