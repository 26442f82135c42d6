#define BOOST_TEST_MODULE alpha21064_model
#include <boost/test/unit_test.hpp>

// The emulated Alpha 21064 (device model and pfm(7) driver, <pmc/sim/alpha21064.hpp>) against
// docs/hardware/alpha21064.md ("sheet", by section; "5.N" is item N of section 5, "Behaviours
// worth a test") and the OSF/1 pfm(7) page. Expected values are worked out by hand from those and
// from the [U] policies listed at the top of sim/models/alpha21064/alpha21064_model.cpp, never from a run.

#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "alpha21064.hpp"  // Alpha21064Device, PfmDriver (pmcmodel_alpha21064)
#include "support/models.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using pmc::errc;
using pmc::sim::Alpha21064Device;
using pmc::Mode;
using pmc::sim::PfmDriver;
using pmc::Segment;
using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;
namespace a = pmc::sim::alpha21064;

// The ICCSR in write format (sheet 2), written out here rather than taken from the model.
constexpr u64 PC1 = 1ULL << 0, PC0 = 1ULL << 3, DISABLE0 = 1ULL << 35, DISABLE1 = 1ULL << 36;
constexpr u64 mux0(u64 v) { return v << 8; }
constexpr u64 mux1(u64 v) { return v << 32; }
// Selects (sheet 3).
constexpr u64 ISSUES = 0x0, PIPEDRY = 0x2, LOADI = 0x4, BRANCHI = 0x8, CYCLES = 0xA, PALMODE = 0xB,
              NONISSUES = 0xC;
constexpr u64 DCACHE = 0x0, ICACHE = 0x1, DUAL = 0x2, BRANCHMISS = 0x3, FPINST = 0x4, STOREI = 0x6;
// The model's register map (docs in <pmc/sim/alpha21064.hpp>).
constexpr std::uint32_t ICCSR = 0, COUNT0 = 1, COUNT1 = 2, CYCLE_COUNT = 3, PERFMON = 4, LOG = 5,
                        ITEMS = 6, PROFILE = 7, PSTART = 8, PEND = 9, IPLHIS = 0x10, BUCKET = 0x100000;
constexpr u64 ITEM_COUNTERS = 1, ITEM_IPL = 2, ITEM_PROFILING = 4;

pmc::OwnedSegment seg(u64 cycles, const std::map<std::string, u64, std::less<>>& signals = {},
                      Mode mode = Mode::user, unsigned ipl = 0) {
  pmc::OwnedSegment s(cycles, mode);
  for (const auto& [name, k] : signals) s.signal(name, k);
  if (ipl != 0) s.signal("ipl", ipl);  // the level signal (docs/workload-format.md)
  return s;
}

pmc::OwnedSegment kernel(u64 cycles, unsigned ipl, const std::map<std::string, u64, std::less<>>& signals = {}) {
  return seg(cycles, signals, Mode::kernel, ipl);
}

// A device counting `iccsr`, enabled through the register map.
struct Chip {
  Alpha21064Device d;
  explicit Chip(u64 iccsr, u64 items = ITEM_COUNTERS) {
    d.write(ICCSR, iccsr);
    d.write(ITEMS, items);
    d.write(PERFMON, 1);
  }
};

bool faults(const std::function<void()>& f, errc code = errc::register_fault) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.kind() == code;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Section 5, item by item.

BOOST_AUTO_TEST_CASE(s5_1_counts_are_interrupt_counts) {
  // MUX0 = 0xA (CYCLES), PC0 = 0: an interrupt every 65,536 cycles; 3 x 65,536 + 5 cycles give 3.
  Chip c(mux0(CYCLES));
  c.d.run(seg(3 * 65536 + 5));
  BOOST_TEST(c.d.interrupt_count(0) == 3u);
  BOOST_TEST(c.d.read(COUNT0) == 3u);
  BOOST_TEST(c.d.partial(0) == 5u);   // the chip's count, invisible to software
  BOOST_TEST(c.d.interrupts() == 3u);
  BOOST_TEST(c.d.cycle_count() == 3u * 65536 + 5);

  // The same through pfm(7): PCNTGETCNT reports the interrupts, not the cycles.
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.set_mux(fd, mux0(CYCLES)) == 0);
  BOOST_TEST(pfm.enable(fd) == 0);
  pfm.run(seg(3 * 65536 + 5));
  std::vector<PfmDriver::Counts> counts;
  BOOST_TEST(pfm.get_counts(fd, counts) == 0);
  BOOST_REQUIRE(counts.size() == 1u);
  BOOST_TEST(counts[0].cntr0 == 3u);
  BOOST_TEST(counts[0].cntr1 == 0u);
  BOOST_TEST(counts[0].cycles == 3u * 65536 + 5);
}

BOOST_AUTO_TEST_CASE(s5_2_interrupt_intervals) {
  // Sheet 2 table: PC0 0 -> 65536, 1 -> 4096; PC1 0 -> 4096, 1 -> 256.
  BOOST_TEST(a::interval(0, false) == 65536u);
  BOOST_TEST(a::interval(0, true) == 4096u);
  BOOST_TEST(a::interval(1, false) == 4096u);
  BOOST_TEST(a::interval(1, true) == 256u);

  Chip pc0(mux0(CYCLES) | PC0);
  pc0.d.run(seg(5 * 4096 + 4095));
  BOOST_TEST(pc0.d.interrupt_count(0) == 5u);
  pc0.d.run(seg(1));
  BOOST_TEST(pc0.d.interrupt_count(0) == 6u);

  // PC1 = 0: every 4096 D-cache misses; 2 per cycle over 6144 cycles = 12,288 = 3 x 4096.
  Chip pc1_0(mux0(CYCLES) | mux1(DCACHE));
  pc1_0.d.run(seg(6144, {{"pf_dcache", 2}}));
  BOOST_TEST(pc1_0.d.interrupt_count(1) == 3u);
  BOOST_TEST(pc1_0.d.read(COUNT1) == 3u);
  BOOST_TEST(pc1_0.d.interrupt_count(0) == 0u);  // 6144 cycles < 65,536

  // PC1 = 1: every 256; 7 x 256 + 255 stores.
  Chip pc1_1(mux0(CYCLES) | mux1(STOREI) | PC1);
  pc1_1.d.run(seg(7 * 256 + 255, {{"stores", 1}}));
  BOOST_TEST(pc1_1.d.interrupt_count(1) == 7u);
  BOOST_TEST(pc1_1.d.partial(1) == 255u);
}

BOOST_AUTO_TEST_CASE(s5_3_mux_values) {
  // MUX1: all of 0-7; MUX0: 0x0 0x2 0x4 0x6 0x8 0xA 0xB 0xC 0xE only.
  for (u64 v = 0; v < 8; ++v) {
    Alpha21064Device d;
    BOOST_CHECK_NO_THROW(d.write(ICCSR, mux1(v)));
    BOOST_TEST(d.read(ICCSR) == mux1(v));
  }
  const std::vector<u64> defined = {0x0, 0x2, 0x4, 0x6, 0x8, 0xA, 0xB, 0xC, 0xE};
  for (u64 v = 0; v < 16; ++v) {
    BOOST_TEST_CONTEXT("MUX0 " << v) {
      const bool ok = std::find(defined.begin(), defined.end(), v) != defined.end();
      BOOST_TEST(a::mux0_defined(static_cast<unsigned>(v)) == ok);
      Alpha21064Device d;
      d.write(ICCSR, mux0(CYCLES) | PC0);
      if (ok) {
        BOOST_CHECK_NO_THROW(d.write(ICCSR, mux0(v)));
        BOOST_TEST(d.read(ICCSR) == mux0(v));
      } else {
        BOOST_TEST(faults([&] { d.write(ICCSR, mux0(v)); }));
        BOOST_TEST(d.read(ICCSR) == (mux0(CYCLES) | PC0));  // unchanged
        BOOST_TEST(d.wrperfmon(2, mux0(v)) == 0u);          // PALcode refuses too
        PfmDriver pfm(1);
        int fd = -1;
        BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
        BOOST_TEST(pfm.set_mux(fd, mux0(v)) == EINVAL);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(s5_4_ignore_fields_are_ignored) {
  // Every bit outside PC1, PC0, MUX0, MUX1 and disable: 63:37, 31:12, 7:4, 2:1.
  const u64 ignore = ~(PC1 | PC0 | mux0(0xF) | mux1(0x7) | DISABLE0 | DISABLE1);
  BOOST_TEST(ignore == 0xFFFFFFE0FFFFF0F6ULL);
  Chip c(ignore | mux0(CYCLES) | PC0);
  BOOST_TEST(c.d.read(ICCSR) == (mux0(CYCLES) | PC0));
  c.d.run(seg(2 * 4096));
  BOOST_TEST(c.d.interrupt_count(0) == 2u);
  BOOST_TEST(c.d.wrperfmon(2, ignore | mux0(LOADI)) == 1u);
}

BOOST_AUTO_TEST_CASE(s5_5_disable_bits) {
  // Bit 35 stops counter 0 only: its interrupts still come and are dismissed (pfm(7) NOTES).
  Chip off0(mux0(CYCLES) | PC0 | mux1(DCACHE) | PC1 | DISABLE0);
  off0.d.run(seg(8192, {{"pf_dcache", 1}}));
  BOOST_TEST(off0.d.interrupt_count(0) == 0u);
  BOOST_TEST(off0.d.interrupts(0) == 2u);   // 8192 / 4096, delivered
  BOOST_TEST(off0.d.dismissed(0) == 2u);
  BOOST_TEST(off0.d.interrupt_count(1) == 32u);  // 8192 / 256
  BOOST_TEST(off0.d.dismissed(1) == 0u);

  // Bit 36 stops counter 1 only.
  Chip off1(mux0(CYCLES) | PC0 | mux1(DCACHE) | PC1 | DISABLE1);
  off1.d.run(seg(8192, {{"pf_dcache", 1}}));
  BOOST_TEST(off1.d.interrupt_count(0) == 2u);
  BOOST_TEST(off1.d.interrupt_count(1) == 0u);
  BOOST_TEST(off1.d.dismissed(1) == 32u);

  // Both (disable = 3) is refused: pfm(7) EINVAL, the register a fault, PALcode v0 = 0.
  Alpha21064Device d;
  BOOST_TEST(faults([&] { d.write(ICCSR, mux0(CYCLES) | DISABLE0 | DISABLE1); }));
  BOOST_TEST(d.wrperfmon(2, DISABLE0 | DISABLE1) == 0u);
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.set_mux(fd, DISABLE0 | DISABLE1) == EINVAL);
  BOOST_TEST(pfm.set_mux(fd, DISABLE1) == 0);
}

BOOST_AUTO_TEST_CASE(s5_6_enable_and_disable_wait_for_an_ipl_change) {
  Alpha21064Device d;
  BOOST_TEST(d.wrperfmon(2, mux0(CYCLES) | PC0) == 1u);
  BOOST_TEST(d.wrperfmon(1, 0) == 1u);  // enable: latched
  BOOST_TEST(!d.monitoring());
  BOOST_TEST(d.latched().value_or(false));
  d.run(seg(4096));                      // IPL 0 as before: no change, nothing counts
  BOOST_TEST(d.interrupt_count(0) == 0u);
  BOOST_TEST(d.cycle_count() == 0u);
  d.run(kernel(4096, 3));                // IPL 0 -> 3: enabled from its first cycle
  BOOST_TEST(d.monitoring());
  BOOST_TEST(d.interrupt_count(0) == 1u);

  BOOST_TEST(d.wrperfmon(0, 0) == 1u);  // disable: latched
  d.run(kernel(4096, 3));                // still IPL 3: still counting
  BOOST_TEST(d.interrupt_count(0) == 2u);
  d.set_ipl(3);                          // an IPL write (swpipl) of the same level applies it
  BOOST_TEST(!d.monitoring());
  d.run(kernel(4096, 5));
  d.run(seg(4096));
  BOOST_TEST(d.interrupt_count(0) == 2u);

  // The register path is a system call: it returns through rei, an IPL write, so it is at once.
  d.write(PERFMON, 1);
  BOOST_TEST(d.monitoring());
  BOOST_TEST(d.read(PERFMON) == 1u);
  d.run(seg(4096));
  BOOST_TEST(d.interrupt_count(0) == 3u);
  d.write(PERFMON, 0);
  BOOST_TEST(!d.monitoring());
  BOOST_TEST(faults([&] { d.write(PERFMON, 2); }));
  BOOST_TEST(faults([&] { d.set_ipl(8); }, errc::invalid_argument));
  BOOST_TEST(d.wrperfmon(4, 0) == 0u);  // EV5 and later only
}

// The IPL is the model's level signal `ipl` (docs/workload-format.md, "Alpha 21064 signals"):
// OSF/1's levels are 0..7 and user mode runs at 0; anything else is refused by name.
BOOST_AUTO_TEST_CASE(the_ipl_signal_is_a_level_0_to_7_and_0_in_user_mode) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const pmc::Error& e) {
      return e.kind() == errc::invalid_argument ? e.what() : "wrong kind";
    }
    return "no error";
  };
  Alpha21064Device d;
  BOOST_TEST(message([&] { d.run(kernel(4096, 8)); }).find("signal ipl = 8 is not an IPL") !=
             std::string::npos);
  BOOST_TEST(message([&] { d.run(seg(4096, {}, Mode::user, 3)); }).find("runs at IPL 0, not ipl = 3") !=
             std::string::npos);
  d.run(kernel(4096, 7));  // a level, not a rate: 4096 cycles at IPL 7
  BOOST_TEST(d.ipl() == 7u);
  d.run(kernel(1, 2));
  BOOST_TEST(d.ipl() == 2u);
}

BOOST_AUTO_TEST_CASE(s5_7_logselect_counts_only_selected_processes) {
  Chip c(mux0(CYCLES) | PC0);
  c.d.processes().set_monitored(7, true);
  BOOST_TEST(c.d.read(LOG) == 1u);   // LOGALL by default
  c.d.write(LOG, 2);                 // LOGSELECT
  pmc::OwnedSegment none = seg(4096);          // pid 0: no process
  pmc::OwnedSegment other = seg(4096);
  other->pid = 5;
  pmc::OwnedSegment selected = seg(3 * 4096);
  selected->pid = 7;
  pmc::OwnedSegment child = seg(2 * 4096);     // forked by 7: inherits the bit
  child->pid = 8;
  child->parent = 7;
  pmc::OwnedSegment orphan = seg(4096);        // forked by 5: does not
  orphan->pid = 9;
  orphan->parent = 5;
  for (const pmc::OwnedSegment* s : {&none, &other, &selected, &child, &orphan}) c.d.run(*s);
  BOOST_TEST(c.d.interrupt_count(0) == 5u);  // 3 + 2
  BOOST_TEST(c.d.processes().monitored(8));
  BOOST_TEST(!c.d.processes().monitored(9));
  BOOST_TEST(c.d.cycle_count() == 8u * 4096);  // pr_cycle: every enabled cycle [U11]

  // The bit belongs to the process, kept across exec: the child runs again, still selected; a
  // later `parent` does not re-fork a known process.
  pmc::OwnedSegment again = child;
  again->parent = 5;
  c.d.run(again);
  BOOST_TEST(c.d.interrupt_count(0) == 7u);

  c.d.write(LOG, 1);  // LOGALL: everyone counts
  for (const pmc::OwnedSegment* s : {&none, &other, &orphan}) c.d.run(*s);
  BOOST_TEST(c.d.interrupt_count(0) == 10u);
  BOOST_TEST(faults([&] { c.d.write(LOG, 3); }));
  BOOST_TEST(c.d.wrperfmon(3, 0) == 0u);
  BOOST_TEST(faults([&] { c.d.processes().set_monitored(0, true); }, errc::invalid_argument));

  // PCNTLOGSELECT marks the calling process.
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {std::nullopt, 42}, fd) == 0);
  BOOST_TEST(!pfm.processes().monitored(42));
  BOOST_TEST(pfm.log_select(fd, {std::nullopt, 42}) == 0);
  BOOST_TEST(pfm.processes().monitored(42));
  BOOST_TEST(pfm.cpu(0).log_option() == 2u);
  BOOST_TEST(pfm.log_all(fd) == 0);
  BOOST_TEST(pfm.cpu(0).log_option() == 1u);
}

BOOST_AUTO_TEST_CASE(s5_8_clear_keeps_the_partial_interval) {
  Chip c(mux0(CYCLES));
  c.d.run(seg(65536 + 100));
  BOOST_TEST(c.d.read(COUNT0) == 1u);
  c.d.write(COUNT0, 0);  // the driver's count only
  BOOST_TEST(c.d.read(COUNT0) == 0u);
  BOOST_TEST(c.d.partial(0) == 100u);
  c.d.run(seg(65436));   // 100 + 65,436 = 65,536
  BOOST_TEST(c.d.read(COUNT0) == 1u);
  BOOST_TEST(faults([&] { c.d.write(COUNT0, 5); }));
  BOOST_TEST(faults([&] { c.d.write(CYCLE_COUNT, 1); }));
  c.d.write(CYCLE_COUNT, 0);
  BOOST_TEST(c.d.read(CYCLE_COUNT) == 0u);

  // PCNTCLEARCNT: counts and pr_cycle with PFM_COUNTERS, the histogram with PFM_IPL, EINVAL with
  // neither; the chip's count carries on.
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.set_mux(fd, mux0(CYCLES) | PC0) == 0);
  BOOST_TEST(pfm.set_items(fd, ITEM_COUNTERS | ITEM_IPL) == 0);
  BOOST_TEST(pfm.enable(fd) == 0);
  pfm.run(seg(4096 + 10));
  BOOST_TEST(pfm.cpu(0).ipl_histogram()[8] == 1u);
  BOOST_TEST(pfm.clear(fd) == 0);
  BOOST_TEST(pfm.cpu(0).interrupt_count(0) == 0u);
  BOOST_TEST(pfm.cpu(0).cycle_count() == 0u);
  BOOST_TEST(pfm.cpu(0).ipl_histogram()[8] == 0u);
  BOOST_TEST(pfm.cpu(0).partial(0) == 10u);
  pfm.run(seg(4086));
  BOOST_TEST(pfm.cpu(0).interrupt_count(0) == 1u);
  BOOST_TEST(pfm.set_items(fd, ITEM_IPL) == 0);  // clears the histogram only
  BOOST_TEST(pfm.clear(fd) == 0);
  BOOST_TEST(pfm.cpu(0).interrupt_count(0) == 1u);
  BOOST_TEST(pfm.set_items(fd, ITEM_PROFILING) == 0);
  BOOST_TEST(pfm.clear(fd) == EINVAL);
  BOOST_TEST(pfm.cpu(0).interrupt_count(0) == 1u);  // nothing cleared
}

BOOST_AUTO_TEST_CASE(s5_9_both_counters_in_one_window) {
  // 4096 cycles, one FP instruction each: counter 0 (CYCLES, 4096) once, counter 1 (FPINST, 256)
  // 16 times. The handler is told which counter fired: both are delivered.
  Chip c(mux0(CYCLES) | PC0 | mux1(FPINST) | PC1, ITEM_COUNTERS | ITEM_IPL);
  c.d.run(seg(4096, {{"flops", 1}}));
  BOOST_TEST(c.d.interrupts(0) == 1u);
  BOOST_TEST(c.d.interrupts(1) == 16u);
  BOOST_TEST(c.d.interrupts() == 17u);
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
  BOOST_TEST(c.d.interrupt_count(1) == 16u);
  BOOST_TEST(c.d.ipl_histogram()[8] == 17u);  // user mode, both counters' ticks
}

BOOST_AUTO_TEST_CASE(s5_10_ipl_histogram_slots) {
  // Slots: 0-5 IPL, 6 unused, 7 idle (kernel, IPL 0, halted), 8 user [U8].
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_IPL);
  c.d.run(seg(3 * 4096));            // user: 3 -> slot 8
  c.d.run(kernel(4096, 0));          // kernel IPL 0: slot 0
  pmc::OwnedSegment idle = kernel(2 * 4096, 0);
  idle->halted = true;                // the idle thread: slot 7; CYCLES counts its cycles [U4]
  c.d.run(idle);
  for (unsigned ipl = 1; ipl <= 5; ++ipl) c.d.run(kernel(ipl * 4096, ipl));  // slot ipl: ipl ticks
  pmc::OwnedSegment halted_at_3 = kernel(4096, 3);
  halted_at_3->halted = true;         // not IPL 0: not idle
  c.d.run(halted_at_3);
  const a::IplHistogram expected{1, 1, 2, 3 + 1, 4, 5, 0, 2, 3};
  BOOST_TEST(c.d.ipl_histogram() == expected, boost::test_tools::per_element());

  // Invalid segments for this model.
  BOOST_TEST(faults([&] { c.d.run(seg(1, {}, Mode::user, 3)); }, errc::invalid_argument));
  BOOST_TEST(faults([&] { c.d.run(kernel(1, 8)); }, errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(s5_10_masked_at_ipl_6_and_7) {
  // Counter interrupts are at IPL 6: at IPL 6 or 7 the first overflow pends, the rest are lost,
  // and the pending one is taken in the first cycle of the next segment below IPL 6 [U7].
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING);
  c.d.set_profile(a::ProfileMode::kernel, 0x1000, 0x2000);
  c.d.run(kernel(3 * 4096, 6));
  BOOST_TEST(c.d.pending(0));
  BOOST_TEST(c.d.interrupts() == 0u);
  BOOST_TEST(c.d.lost_interrupts(0) == 2u);
  c.d.run(kernel(4096, 7));
  BOOST_TEST(c.d.lost_interrupts(0) == 3u);
  pmc::OwnedSegment after = kernel(100, 2);
  after->pc_begin = 0x1800;
  after->pc_end = 0x1900;
  c.d.run(after);                    // delivered at its cycle 0, PC 0x1800, IPL 2
  BOOST_TEST(!c.d.pending(0));
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
  BOOST_TEST(c.d.ipl_histogram()[2] == 1u);
  BOOST_TEST(c.d.ipl_histogram()[6] == 0u);
  BOOST_TEST(c.d.ipl_histogram()[7] == 0u);
  BOOST_TEST(c.d.profile().buckets.at((0x1800 - 0x1000) / 16) == 1u);
}

BOOST_AUTO_TEST_CASE(s5_10_profile_samples_only_inside_the_range) {
  // Profile [0x2000, 0x2100): 16 buckets. Segment over [0x1F00, 0x2200) (0x300 bytes) for
  // 0x300 x 16 cycles: one byte every 16 cycles. CYCLES every 4096: interrupt m in cycle
  // 4096 m - 1, at offset floor((4096 m - 1) / 16) = 256 m - 1: PCs 0x1FFF, 0x20FF, 0x21FF.
  // Only 0x20FF is inside: bucket 15.
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_PROFILING);
  c.d.set_profile(a::ProfileMode::user, 0x2000, 0x2100);
  pmc::OwnedSegment s = seg(0x300 * 16);
  s->pc_begin = 0x1F00;
  s->pc_end = 0x2200;
  c.d.run(s);
  BOOST_TEST(c.d.interrupt_count(0) == 3u);
  std::vector<u64> expected(16, 0);
  expected[15] = 1;
  BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
  // Kernel code is not sampled by a user profile, nor code without PCs.
  pmc::OwnedSegment k = kernel(4096, 0);
  k->pc_begin = 0x2000;
  k->pc_end = 0x2100;
  c.d.run(k);
  c.d.run(seg(4096));
  BOOST_TEST(c.d.interrupt_count(0) == 5u);
  BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
  BOOST_TEST(faults([&] { c.d.set_profile(a::ProfileMode::user, 5, 5); }, errc::invalid_argument));
  c.d.set_profile(a::ProfileMode::off, 0, 0);
  BOOST_TEST(c.d.profile().buckets.empty());
}

BOOST_AUTO_TEST_CASE(profile_closed_form_matches_a_cycle_by_cycle_count) {
  // Random segments, small enough to walk cycle by cycle: the model's closed form (by interrupt
  // or by bucket, whichever is shorter) must give the same buckets as counting every cycle.
  std::mt19937_64 rng(21064);
  for (int round = 0; round < 200; ++round) {
    const bool pc = rng() % 2;
    const u64 interval = pc ? 256 : 4096;
    Chip c(mux0(LOADI) | mux1(DCACHE) | (pc ? PC1 : 0), ITEM_COUNTERS | ITEM_PROFILING);  // counter 0 idle
    const u64 start = 0x10000 + (rng() % 64) * 4, end = start + 16 * (1 + rng() % 40) + rng() % 16;
    c.d.set_profile(a::ProfileMode::user, start, end);
    std::vector<u64> expected(c.d.profile().buckets.size(), 0);
    u64 acc = 0;
    for (int k = 0; k < 4; ++k) {
      pmc::OwnedSegment s = seg(1 + rng() % 20000, {{"pf_dcache", rng() % 5}});
      s->pc_begin = 0x10000 + rng() % 0x300;
      s->pc_end = s->pc_begin + 1 + rng() % 0x400;
      const u64 rate = s->per_cycle("pf_dcache");
      for (u64 j = 0; j < s->cycles; ++j) {
        const u64 before = acc / interval;
        acc += rate;
        for (u64 m = before; m < acc / interval; ++m) {  // overflows in cycle j
          const u64 at = s->pc_begin + static_cast<u64>(static_cast<u128>(j) *
                                                         (s->pc_end - s->pc_begin) / s->cycles);
          if (at >= start && at < end) ++expected[(at - start) / 16];
        }
      }
      c.d.run(s);
    }
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
      BOOST_TEST(c.d.interrupt_count(1) == acc / interval);
    }
  }
}

BOOST_AUTO_TEST_CASE(s5_11_each_and_all) {
  // Three CPUs; CPU i runs (i + 1) x 4096 cycles. EACH: per CPU; ALL: one sum; ONE: one CPU.
  PfmDriver pfm(3);
  int each = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenEach, {}, each) == 0);
  BOOST_TEST(pfm.set_mux(each, mux0(CYCLES) | PC0) == 0);
  BOOST_TEST(pfm.set_items(each, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING) == 0);
  BOOST_TEST(pfm.set_range(each, a::ProfileMode::user, 0x1000, 0x1100) == 0);
  BOOST_TEST(pfm.enable(each) == 0);
  for (unsigned i = 0; i < 3; ++i) {
    pmc::OwnedSegment s = seg((i + 1) * 4096);
    s->cpu = i;
    s->pc_begin = 0x1000;
    s->pc_end = 0x1100;
    pfm.run(s);
  }
  std::size_t n = 0;
  BOOST_TEST(pfm.entries(each, n) == 0);
  BOOST_TEST(n == 3u);
  std::vector<PfmDriver::Counts> counts;
  BOOST_TEST(pfm.get_counts(each, counts) == 0);
  BOOST_REQUIRE(counts.size() == 3u);
  for (unsigned i = 0; i < 3; ++i) {
    BOOST_TEST(counts[i].cntr0 == i + 1);
    BOOST_TEST(counts[i].cycles == (i + 1) * 4096u);
  }
  std::vector<a::IplHistogram> hist;
  BOOST_TEST(pfm.get_ipl_histograms(each, hist) == 0);
  BOOST_REQUIRE(hist.size() == 3u);
  BOOST_TEST(hist[2][8] == 3u);
  u64 rsize = 0;
  BOOST_TEST(pfm.get_rsize(each, rsize) == 0);
  BOOST_TEST(rsize == 3u * 64);  // 16 buckets x 4 bytes, per CPU
  std::vector<std::uint32_t> profile;
  BOOST_TEST(pfm.read_profile(each, profile) == 0);
  BOOST_TEST(profile.size() == 48u);
  BOOST_TEST(pfm.close(each) == 0);

  int all = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, all) == 0);
  BOOST_TEST(pfm.entries(all, n) == 0);
  BOOST_TEST(n == 1u);
  BOOST_TEST(pfm.get_counts(all, counts) == 0);  // opening keeps the counts
  BOOST_REQUIRE(counts.size() == 1u);
  BOOST_TEST(counts[0].cntr0 == 1u + 2 + 3);
  BOOST_TEST(counts[0].cycles == 6u * 4096);
  BOOST_TEST(pfm.get_rsize(all, rsize) == 0);
  BOOST_TEST(rsize == 0u);  // closing freed the profile, opening selects counters only
  BOOST_TEST(pfm.close(all) == 0);

  int one = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenOne, {1u, 1}, one) == 0);
  BOOST_TEST(pfm.get_counts(one, counts) == 0);
  BOOST_REQUIRE(counts.size() == 1u);
  BOOST_TEST(counts[0].cntr0 == 2u);
}

BOOST_AUTO_TEST_CASE(s5_12_unknown_registers_and_rdpmc) {
  Alpha21064Device d;
  BOOST_TEST(faults([&] { (void)d.read(0xA); }));
  BOOST_TEST(faults([&] { (void)d.read(IPLHIS + 9); }));     // slots 0..8 only
  BOOST_TEST(faults([&] { (void)d.read(BUCKET); }));         // no profile, no buckets
  BOOST_TEST(faults([&] { d.write(0x186, 0); }));
  BOOST_TEST(faults([&] { (void)d.rdpmc(0); }));   // the counters are not readable (sheet 4b)
  BOOST_TEST(faults([&] { d.write(ITEMS, 0); }));
  BOOST_TEST(faults([&] { d.write(ITEMS, 8); }));
  BOOST_TEST(d.name() == "alpha21064");
  // What a session of the alpha21064_sim backend gets: the model plugin's device.
  auto made = pmc_test::plugin_device("alpha21064", pmc::CpuInfo{});
  BOOST_TEST(made.device->name() == "alpha21064");
}

BOOST_AUTO_TEST_CASE(register_map_reaches_the_ipl_histogram_and_the_profile) {
  // What a driver sees of the handler's data through the RegisterFile: PCNTSETITEMS,
  // PCNTSETUADDR / KADDR as PSTART, PEND, PROFILE; PCNTGETIPLHIS as slots 0x10-0x18; read(2) of
  // the profile as buckets 0x100000 + b.
  Chip c(mux0(CYCLES) | PC0 | DISABLE1, ITEM_COUNTERS | ITEM_IPL);
  c.d.write(PSTART, 0x1000);
  c.d.write(PEND, 0x1100);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));  // ITEMS has no PFM_PROFILING: refused
  BOOST_TEST(c.d.read(PROFILE) == 0u);
  c.d.write(ITEMS, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING);
  c.d.write(PROFILE, 1);  // user PCs in [0x1000, 0x1100): 16 buckets
  BOOST_TEST(c.d.read(PROFILE) == 1u);
  BOOST_TEST(c.d.read(PSTART) == 0x1000u);
  BOOST_TEST(c.d.read(PEND) == 0x1100u);
  BOOST_TEST(c.d.profile().buckets.size() == 16u);
  BOOST_TEST(faults([&] { (void)c.d.read(BUCKET + 16); }));  // one past the last bucket

  // 8192 user cycles over [0x1000, 0x1100): interrupts in cycles 4095 and 8191 at PCs
  // 0x1000 + floor(4095 * 256 / 8192) = 0x107F (bucket 7) and 0x10FF (bucket 15); then 4096
  // cycles at IPL 3: one more, slot 3.
  pmc::OwnedSegment user = seg(8192);
  user->pc_begin = 0x1000;
  user->pc_end = 0x1100;
  c.d.run(user);
  c.d.run(kernel(4096, 3));
  BOOST_TEST(c.d.read(IPLHIS + 8) == 2u);
  BOOST_TEST(c.d.read(IPLHIS + 3) == 1u);
  BOOST_TEST(c.d.read(IPLHIS + 0) == 0u);
  for (std::uint32_t b = 0; b < 16; ++b)
    BOOST_TEST(c.d.read(BUCKET + b) == (b == 7 || b == 15 ? 1u : 0u), "bucket " << b);

  // The histogram is cleared one slot at a time, with 0 only; buckets are read only.
  BOOST_TEST(faults([&] { c.d.write(IPLHIS + 8, 5); }));
  c.d.write(IPLHIS + 8, 0);
  BOOST_TEST(c.d.read(IPLHIS + 8) == 0u);
  BOOST_TEST(c.d.read(IPLHIS + 3) == 1u);
  BOOST_TEST(faults([&] { c.d.write(BUCKET + 7, 0); }));
  // Writing PROFILE again starts an empty profile; 0 stops and frees it.
  c.d.write(PROFILE, 2);
  BOOST_TEST(c.d.read(PROFILE) == 2u);
  BOOST_TEST(c.d.read(BUCKET + 7) == 0u);
  c.d.write(PROFILE, 0);
  BOOST_TEST(c.d.profile().buckets.empty());
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 3); }));

  // Ranges: empty, and 2^24 bytes (pfm(7) ENOMEM) are refused; one byte less is 2^20 buckets.
  c.d.write(PSTART, 0x2000);
  c.d.write(PEND, 0x2000);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));
  c.d.write(PSTART, 0);
  c.d.write(PEND, u64{1} << 24);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));
  BOOST_TEST(c.d.read(PROFILE) == 0u);  // a refused write changes nothing
  c.d.write(PEND, (u64{1} << 24) - 1);
  c.d.write(PROFILE, 1);
  BOOST_TEST(c.d.profile().buckets.size() == (std::size_t{1} << 20));
  BOOST_TEST(c.d.read(BUCKET + (1u << 20) - 1) == 0u);
}

// ---------------------------------------------------------------------------------------------
// The selects and their signals.

BOOST_AUTO_TEST_CASE(issues_and_nonissues_count_halves) {
  // ISSUES (/2): 8191 single-issue cycles = 4095.5 -> no interrupt at 4096; one more -> 1.
  Chip c(mux0(ISSUES) | PC0 | mux1(DUAL) | PC1);
  c.d.run(seg(8191, {{"issues", 1}}));
  BOOST_TEST(c.d.interrupt_count(0) == 0u);
  BOOST_TEST(c.d.partial(0) == 4095u);  // and a half
  c.d.run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
  BOOST_TEST(c.d.partial(0) == 0u);
  // Dual issue: 4096 cycles -> 4096 ISSUES -> 1; DUAL counts those cycles: 4096 / 256 = 16.
  c.d.run(seg(4096, {{"issues", 2}}));
  BOOST_TEST(c.d.interrupt_count(0) == 2u);
  BOOST_TEST(c.d.interrupt_count(1) == 16u);

  // NONISSUES: +1 per cycle with nothing issued, +1/2 per single-issue cycle, 0 when dual.
  Chip n(mux0(NONISSUES) | PC0);
  n.d.run(seg(2048));                   // 2048
  n.d.run(seg(4096, {{"issues", 1}}));  // 2048
  n.d.run(seg(9999, {{"issues", 2}}));  // 0
  BOOST_TEST(n.d.interrupt_count(0) == 1u);
  BOOST_TEST(n.d.partial(0) == 0u);
  // pfm(7): single issues S = (I - D) * 2. 4096 single-issue and 1000 dual-issue cycles:
  // I = (4096 + 2 x 1000) / 2 = 3048, D = 1000, S = 2048 x 2 = 4096.
  Chip i(mux0(ISSUES) | mux1(DUAL));
  i.d.run(seg(4096, {{"issues", 1}}));
  i.d.run(seg(1000, {{"issues", 2}}));
  BOOST_TEST((i.d.partial(0) - i.d.partial(1)) * 2 == 4096u);
}

BOOST_AUTO_TEST_CASE(every_select_counts_its_signal) {
  // 256 cycles at 1 per cycle of the signal: one interrupt with PC1 = 1; MUX0 at 4096 cycles.
  struct Case { u64 iccsr; const char* signal; unsigned counter; };
  const Case cases[] = {
      {mux0(PIPEDRY), "pf_pipedry", 0},       {mux0(LOADI), "pf_loadi", 0},
      {mux0(LOADI), "loads", 0},              {mux0(0x6), "pf_pipefrozen", 0},
      {mux0(BRANCHI), "pf_branchi", 0},       {mux0(BRANCHI), "branches", 0},
      {mux0(PALMODE), "pf_palmode", 0},       {mux0(0xE), "pf_extpin0", 0},
      {mux1(DCACHE), "pf_dcache", 1},         {mux1(DCACHE), "l1d-misses", 1},
      {mux1(ICACHE), "pf_icache", 1},         {mux1(ICACHE), "l1i-misses", 1},
      {mux1(BRANCHMISS), "pf_branchmiss", 1}, {mux1(BRANCHMISS), "branch-misses", 1},
      {mux1(FPINST), "pf_fpinst", 1},         {mux1(FPINST), "flops", 1},
      {mux1(0x5), "pf_intops", 1},            {mux1(STOREI), "pf_storei", 1},
      {mux1(STOREI), "stores", 1},            {mux1(0x7), "pf_extpin1", 1},
  };
  for (const auto& k : cases) {
    BOOST_TEST_CONTEXT(k.signal << " on counter " << k.counter) {
      // The other counter selects something the segment lacks (counter 0: LOADI or PIPEDRY).
      const u64 other = k.counter == 0 ? mux1(0x7) : mux0(PIPEDRY);
      Chip c(k.iccsr | other | PC0 | PC1);
      c.d.run(seg(k.counter == 0 ? 4096 : 256, {{k.signal, 1}}));
      BOOST_TEST(c.d.interrupt_count(k.counter) == 1u);
      BOOST_TEST(c.d.interrupt_count(1 - k.counter) == 0u);
    }
  }
  // CYCLES counts halted cycles too (no halt state on the 21064) [U4].
  Chip c(mux0(CYCLES) | PC0);
  pmc::OwnedSegment halted = kernel(4096, 0);
  halted->halted = true;
  c.d.run(halted);
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
}

BOOST_AUTO_TEST_CASE(changing_a_select_restarts_its_counter) {
  // [U2]: a new MUX or PC for counter i restarts it; the other counter carries on.
  Chip c(mux0(CYCLES) | mux1(DCACHE) | PC1);
  c.d.run(seg(100, {{"pf_dcache", 1}}));
  BOOST_TEST(c.d.partial(0) == 100u);
  BOOST_TEST(c.d.partial(1) == 100u);
  c.d.write(ICCSR, mux0(CYCLES) | mux1(DCACHE) | PC1);  // the same: both carry on
  BOOST_TEST(c.d.partial(0) == 100u);
  c.d.write(ICCSR, mux0(CYCLES) | PC0 | mux1(DCACHE) | PC1);  // counter 0's interval changed
  BOOST_TEST(c.d.partial(0) == 0u);
  BOOST_TEST(c.d.partial(1) == 100u);
  c.d.write(ICCSR, mux0(CYCLES) | PC0 | mux1(ICACHE) | PC1);  // counter 1's select changed
  BOOST_TEST(c.d.partial(1) == 0u);
}

BOOST_AUTO_TEST_CASE(huge_segments_in_closed_form) {
  // 2^62 cycles of dual issue: ISSUES (counter 0, 65,536) 2^62 / 2^16 = 2^46 interrupts;
  // DUAL at 256: 2^54. One segment, no loop over interrupts (no profile).
  Chip c(mux0(ISSUES) | mux1(DUAL) | PC1, ITEM_COUNTERS | ITEM_IPL);
  c.d.run(seg(1ULL << 62, {{"issues", 2}}));
  BOOST_TEST(c.d.interrupt_count(0) == 1ULL << 46);
  BOOST_TEST(c.d.interrupt_count(1) == 1ULL << 54);
  BOOST_TEST(c.d.ipl_histogram()[8] == (1ULL << 46) + (1ULL << 54));
  // With a profile of a few buckets the count goes bucket by bucket: 2^20 D-cache misses over 64
  // bytes (4 buckets, 2^18 cycles each) at 256 per interrupt: 2^12 interrupts, 2^10 per bucket.
  Chip p(mux0(LOADI) | mux1(DCACHE) | PC1, ITEM_COUNTERS | ITEM_PROFILING);
  p.d.set_profile(a::ProfileMode::user, 0x4000, 0x4040);
  pmc::OwnedSegment s = seg(1ULL << 20, {{"pf_dcache", 1}});
  s->pc_begin = 0x4000;
  s->pc_end = 0x4040;
  p.d.run(s);
  const std::vector<u64> expected(4, 1024);
  BOOST_TEST(p.d.profile().buckets == expected, boost::test_tools::per_element());
}

// ---------------------------------------------------------------------------------------------
// The pfm(7) driver's open modes and errors.

BOOST_AUTO_TEST_CASE(open_modes_and_busy) {
  PfmDriver pfm(2);
  int fd = -1;
  BOOST_TEST(pfm.open(0, {}, fd) == EINVAL);                          // no mode
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {}, fd) == EINVAL);        // not bound
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {2u, 1}, fd) == ENODEV);   // no CPU 2
  int one = -1;
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne | 0 /* O_RDONLY */, {0u, 1}, one) == 0);
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {0u, 1}, fd) == EBUSY);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == EBUSY);
  BOOST_TEST(pfm.open(PfmDriver::kOpenEach, {}, fd) == EBUSY);
  int other = -1;
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {1u, 1}, other) == 0);
  BOOST_TEST(other != one);
  BOOST_TEST(pfm.close(one) == 0);
  BOOST_TEST(pfm.close(one) == EBADF);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == EBUSY);  // CPU 1 still open
  BOOST_TEST(pfm.close(other) == 0);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.enable(fd + 1) == EBADF);
  BOOST_TEST_MESSAGE("open disables, logs all and collects counters only");
  BOOST_TEST(pfm.set_items(fd, ITEM_IPL) == 0);
  BOOST_TEST(pfm.log_select(fd, {}) == 0);
  BOOST_TEST(pfm.enable(fd) == 0);
  BOOST_TEST(pfm.cpu(1).monitoring());
  BOOST_TEST(pfm.close(fd) == 0);
  BOOST_TEST(!pfm.cpu(1).monitoring());
  BOOST_TEST(pfm.open(PfmDriver::kOpenEach, {}, fd) == 0);
  BOOST_TEST(pfm.cpu(0).items() == ITEM_COUNTERS);
  BOOST_TEST(pfm.cpu(0).log_option() == 1u);
  BOOST_TEST(!pfm.cpu(0).monitoring());
  BOOST_TEST(faults([&] { PfmDriver none(0); }, errc::invalid_argument));
  BOOST_TEST(faults([&] { (void)pfm.cpu(2); }, errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(items_ranges_and_their_errors) {
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.set_items(fd, 0) == EINVAL);   // pfm(7): no items
  BOOST_TEST(pfm.set_items(fd, 8) == EINVAL);
  BOOST_TEST(pfm.set_items(fd, -1) == EINVAL);
  std::vector<a::IplHistogram> hist;
  BOOST_TEST(pfm.get_ipl_histograms(fd, hist) == EINVAL);  // PFM_IPL not selected
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 0, 16) == EINVAL);  // not open for profiling
  u64 rsize = 99;
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);
  BOOST_TEST(pfm.set_items(fd, ITEM_PROFILING) == 0);
  std::vector<PfmDriver::Counts> counts;
  BOOST_TEST(pfm.get_counts(fd, counts) == EINVAL);  // PFM_COUNTERS not selected
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);                           // no range yet
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 32, 32) == EINVAL);
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::kernel, 0, 1ULL << 24) == ENOMEM);  // 2^20 buckets
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::kernel, 0, (1ULL << 24) - 1) == 0);
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 0x100, 0x121) == 0);  // 33 bytes: 3 buckets
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 12u);
  BOOST_TEST((pfm.cpu(0).profile().mode == a::ProfileMode::user));
  std::vector<std::uint32_t> buckets;
  BOOST_TEST(pfm.read_profile(fd, buckets) == 0);
  BOOST_TEST(buckets.size() == 3u);
  BOOST_TEST(pfm.set_items(fd, ITEM_COUNTERS) == 0);
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);                           // profiling not selected
}

BOOST_AUTO_TEST_CASE(segments_reach_their_cpu) {
  PfmDriver pfm(2);
  auto w = pmc::parse_workload("[[segment]]\ncycles = 5\ncpu = 1\n[[segment]]\ncycles = 5\ncpu = 2\n",
                                    "w.toml");
  BOOST_TEST(faults([&] { pfm.run(w); }, errc::invalid_argument));
  BOOST_TEST(pfm.cpu(1).cycle_count() == 0u);  // checked before anything ran
  // A lone device is CPU 0 and ignores the other CPUs' segments.
  Chip c(mux0(CYCLES) | PC0);
  pmc::OwnedSegment s = seg(4096);
  s->cpu = 1;
  c.d.run(s);
  BOOST_TEST(c.d.cycle_count() == 0u);
}

// (Moved from tests/backends/alpha21064_sim/test_alpha_backend.cpp, which reaches the chip only through a session now.)
BOOST_AUTO_TEST_CASE(the_device_executes_its_own_cpus_segments) {
  pmc::sim::Alpha21064Device cpu1(1);
  pmc::Segment s;
  s.cycles = 1;
  s.cpu = 1;
  BOOST_TEST(cpu1.executes(s));
  s.cpu = 0;
  BOOST_TEST(!cpu1.executes(s));
}

BOOST_AUTO_TEST_CASE(workload_keys_cpu_pid_parent) {
  auto w = pmc::parse_workload(
      "[[segment]]\ncycles = 5\ncpu = 3\npid = 100\n[[segment]]\ncycles = 5\npid = 200\nparent = 100\n", "w.toml");
  BOOST_TEST_REQUIRE(w.size() == 2u);
  BOOST_TEST(w.segment(0).cpu == 3u);
  BOOST_TEST(w.segment(0).pid == 100u);
  BOOST_TEST(w.segment(0).parent == 0u);
  BOOST_TEST(w.segment(1).parent == 100u);
  const char* bad[] = {
      "[[segment]]\ncycles = 5\ncpu = 64\n",
      "[[segment]]\ncycles = 5\npid = -1\n",
      "[[segment]]\ncycles = 5\nparent = 7\n",
      "[[segment]]\ncycles = 5\npid = 7\nparent = 7\n",
      "[[segment]]\ncycles = 5\npid = 7\nparent = 0\n",
  };
  for (const char* text : bad) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(faults([&] { (void)pmc::parse_workload(text, "bad.toml"); }, errc::invalid_argument));
    }
  }
}
