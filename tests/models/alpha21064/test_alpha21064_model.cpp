#define BOOST_TEST_MODULE alpha21064_model
#include <boost/test/unit_test.hpp>

// The emulated Alpha 21064 (device model and pfm(7) driver, <pmc/sim/alpha21064.hpp>) against
// docs/hardware/alpha21064.md ("sheet", by section; "5.N" is item N of section 5, "Behaviours worth
// a test") and the OSF/1 pfm(7) page: items 5.1-5.8 (interrupt counts and intervals, the MUX
// values, ignored and disable bits, the enable latch and the IPL signal, LOGSELECT, clearing), and
// the selects and their signals. Items 5.9, 5.10 and 5.12 are in
// test_alpha21064_model_interrupts.cpp, item 5.11 and the driver's open modes and errors in
// test_alpha21064_model_pfm.cpp. Expected values are worked out by hand from those and from the [U]
// policies listed at the top of sim/models/alpha21064/alpha21064_model.cpp, never from a run.

#include "alpha21064_model_support.hpp"

#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>
#include <vector>

using namespace alpha21064_model_test;

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
