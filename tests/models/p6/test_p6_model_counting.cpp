#define BOOST_TEST_MODULE p6_model_counting
#include <boost/test/unit_test.hpp>

// The P6 device model against docs/hardware/p6.md: counting (the EN bit, wraps and PMIs, the
// counter-restricted events, CMASK / INV / E and the edge detector, the USR / OS filter, MESI unit
// masks, sampling presets, closed forms over huge segments, halted cycles, the generic and bus
// signals). Every expected value below is worked out by hand from the fact sheet (section numbers
// in brackets; "item N" is section 6, "Behaviours worth a test"), never taken from a run of the
// model.

#include "p6_model_support.hpp"

#include <cstdint>

using namespace p6_model_test;

BOOST_AUTO_TEST_SUITE(counting)

// Item 1: EN = 0 in PerfEvtSel0 -> neither counter moves.
BOOST_AUTO_TEST_CASE(item1_en_clear_stops_both_counters) {
  auto d = p6();
  d->write(PerfEvtSel0, USR | OS | INST_RETIRED);
  d->write(PerfEvtSel1, USR | OS | INT | CPU_CLK_UNHALTED);
  d->run(seg(1000, {{"instructions", 2}}));
  d->run(seg(1000, {{"instructions", 2}}, Mode::kernel));
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->read(PerfCtr1) == 0u);
  // Setting EN starts both; clearing it again stops both.
  d->write(PerfEvtSel0, EN | USR | OS | INST_RETIRED);
  d->run(seg(1000, {{"instructions", 2}}));
  BOOST_TEST(d->read(PerfCtr0) == 2000u);
  BOOST_TEST(d->read(PerfCtr1) == 1000u);
  d->write(PerfEvtSel0, USR | OS | INST_RETIRED);
  d->run(seg(1000, {{"instructions", 2}}));
  BOOST_TEST(d->read(PerfCtr0) == 2000u);
  BOOST_TEST(d->read(PerfCtr1) == 1000u);
}

// Item 2: PerfEvtSel0 = EN only (FreeBSD's P6_SYNC_CTR_STATE) -> counter 0 frozen (USR = OS = 0),
// counter 1 counts.
BOOST_AUTO_TEST_CASE(item2_en_only_in_perfevtsel0_runs_counter1_alone) {
  auto d = p6();
  d->write(PerfEvtSel0, EN);
  d->write(PerfEvtSel1, USR | OS | INST_RETIRED);
  d->run(seg(1000, {{"instructions", 2}}));
  d->run(seg(500, {{"instructions", 3}}, Mode::kernel));
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->read(PerfCtr1) == 2000u + 1500u);
}

// Item 5: a counter at 2^40 - 1 plus one event wraps to 0; INT = 1 raises one PMI, INT = 0 none.
BOOST_AUTO_TEST_CASE(item5_wrap_at_2_40_and_pmi) {
  auto d = p6();
  d->write(PerfCtr0, 0xFFFFFFFF);
  BOOST_TEST(d->read(PerfCtr0) == 0xFFFFFFFFFFu);
  d->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->interrupts() == 1u);

  auto q = p6();
  q->write(PerfCtr0, 0xFFFFFFFF);
  q->write(PerfEvtSel0, EN | USR | INST_RETIRED);
  q->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(q->read(PerfCtr0) == 0u);
  BOOST_TEST(q->interrupts() == 0u);

  // Counter 1 wraps the same way (its INT bit, the EN of PerfEvtSel0).
  auto r = p6();
  r->write(PerfCtr1, 0xFFFFFFFE);  // 0xFFFFFFFFFE
  r->write(PerfEvtSel0, EN);
  r->write(PerfEvtSel1, OS | INT | INST_RETIRED);
  r->run(seg(1, {{"instructions", 3}}, Mode::kernel));
  BOOST_TEST(r->read(PerfCtr1) == 1u);  // 2^40 - 2 + 3 = 2^40 + 1
  BOOST_TEST(r->interrupts() == 1u);
}

// Item 7 (hardware side): the counter-restricted events count on their counter:
// FLOPS / FP_COMP_OPS_EXE / CYCLES_DIV_BUSY on counter 0, FP_ASSIST / MUL / DIV on counter 1 [5a].
BOOST_AUTO_TEST_CASE(item7_restricted_events_count_on_their_counter) {
  const pmc::OwnedSegment s = seg(100, {{"flops", 3},
                              {"fp_comp_ops_exe", 4},
                              {"cycles_div_busy", 1},
                              {"fp_assist", 2},
                              {"mul", 5},
                              {"div", 6}});
  struct Pair {
    u64 ev0, ev1, want0, want1;
  };
  for (const Pair& p : {Pair{FLOPS, MUL, 300, 500}, Pair{FP_COMP_OPS_EXE, DIV, 400, 600},
                        Pair{CYCLES_DIV_BUSY, FP_ASSIST, 100, 200}}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | USR | p.ev0);
    d->write(PerfEvtSel1, USR | p.ev1);
    d->run(s);
    BOOST_TEST(d->read(PerfCtr0) == p.want0);
    BOOST_TEST(d->read(PerfCtr1) == p.want1);
  }
  // [U] policy: on the other counter they count nothing (the datasheet allows them on one only).
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | MUL);
  d->write(PerfEvtSel1, USR | FLOPS);
  d->run(s);
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->read(PerfCtr1) == 0u);
}

// Item 8: CMASK = 0 ignores INV: the per-cycle event count is added either way.
BOOST_AUTO_TEST_CASE(item8_inv_ignored_when_cmask_is_zero) {
  for (u64 inv : {u64{0}, INV}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | USR | inv | INST_RETIRED);
    d->run(seg(100, {{"instructions", 3}}));
    d->run(seg(50, {}));  // 0 events: adds nothing, with or without INV
    BOOST_TEST(d->read(PerfCtr0) == 300u);
  }
}

// Item 8, with E = 1: the edge detector's condition with CMASK = 0 ignores INV too.
BOOST_AUTO_TEST_CASE(item8_inv_ignored_by_edge_detect_when_cmask_is_zero) {
  for (u64 inv : {u64{0}, INV}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | USR | E | inv | INST_RETIRED);
    for (u64 k : {3, 0, 1, 2}) d->run(seg(10, {{"instructions", k}}));
    BOOST_TEST(d->read(PerfCtr0) == 2u);  // asserted at 3 and at 1
  }
}

// Item 9: CMASK = 2 adds 1 per cycle with >= 2 events (INV = 0) or < 2 events, zero included
// (INV = 1).
BOOST_AUTO_TEST_CASE(item9_cmask_threshold_and_invert) {
  const pmc::OwnedSegment k0 = seg(10, {}), k1 = seg(20, {{"instructions", 1}}),
                k2 = seg(30, {{"instructions", 2}}), k5 = seg(40, {{"instructions", 5}});
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | cmask(2) | INST_RETIRED);
  d->write(PerfEvtSel1, USR | INV | cmask(2) | INST_RETIRED);
  for (const pmc::OwnedSegment* s : {&k0, &k1, &k2, &k5}) d->run(*s);
  BOOST_TEST(d->read(PerfCtr0) == 30u + 40u);
  BOOST_TEST(d->read(PerfCtr1) == 10u + 20u);
}

// Item 10: E = 1 counts deasserted -> asserted transitions; back-to-back asserted cycles (even in
// separate segments) are one assertion.
BOOST_AUTO_TEST_CASE(item10_edge_detect_counts_transitions) {
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | E | INST_RETIRED);            // condition: >= 1 event [I]
  d->write(PerfEvtSel1, USR | E | cmask(2) | INST_RETIRED);      // condition: >= 2 events
  // k per cycle: 1 (100 cycles), 3 (50), 0 (10), 2 (5), 2 (5), 1 (7), 4 (1)
  for (u64 k : {1, 3, 0, 2, 2, 1, 4}) d->run(seg(k == 1 ? 100 : 5, {{"instructions", k}}));
  // >= 1: asserts at k=1 (first), stays through 3, drops at 0, asserts at 2, stays to the end.
  BOOST_TEST(d->read(PerfCtr0) == 2u);
  // >= 2: false, asserts at 3, drops at 0, asserts at 2, holds at 2, drops at 1, asserts at 4.
  BOOST_TEST(d->read(PerfCtr1) == 3u);
}

BOOST_AUTO_TEST_CASE(edge_detect_with_invert_counts_quiet_periods) {
  auto d = p6();
  // Condition: fewer than 1 branch miss in a cycle. Workload: miss, quiet, quiet, miss, quiet.
  d->write(PerfEvtSel0, EN | USR | E | INV | cmask(1) | BR_MISS_PRED_RETIRED);
  for (u64 k : {1, 0, 0, 1, 0}) d->run(seg(1000, {{"branch-misses", k}}));
  BOOST_TEST(d->read(PerfCtr0) == 2u);
}

// [U] policy for the edge detector: its state is per counter, only cycles the counter counts
// update it, and writing the event select clears it.
BOOST_AUTO_TEST_CASE(edge_detector_state_policy) {
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | E | INST_RETIRED);
  d->run(seg(10, {{"instructions", 1}}));                 // edge: 1
  d->run(seg(10, {}, Mode::kernel));                      // not counted: state stays asserted
  d->run(seg(10, {{"instructions", 1}}));                 // continues: no edge
  BOOST_TEST(d->read(PerfCtr0) == 1u);
  d->write(PerfEvtSel0, EN | USR | E | INST_RETIRED);     // rewrite clears the state
  d->run(seg(10, {{"instructions", 1}}));                 // edge: 2
  BOOST_TEST(d->read(PerfCtr0) == 2u);
  d->run(seg(10, {}));                                    // counted, deasserts
  d->run(seg(10, {{"instructions", 1}}));                 // edge: 3
  BOOST_TEST(d->read(PerfCtr0) == 3u);
}

// Item 11: the USR / OS filter: neither -> frozen, USR -> CPL 1..3 (user segments), OS -> CPL 0.
BOOST_AUTO_TEST_CASE(item11_mode_filtering) {
  const pmc::OwnedSegment user = seg(100, {{"instructions", 2}});
  const pmc::OwnedSegment kernel = seg(50, {{"instructions", 2}}, Mode::kernel);
  struct Case {
    u64 bits, want;
  };
  for (const Case& c : {Case{0, 0}, Case{USR, 200}, Case{OS, 100}, Case{USR | OS, 300}}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | c.bits | INST_RETIRED);
    d->write(PerfEvtSel1, c.bits | CPU_CLK_UNHALTED);
    d->run(user);
    d->run(kernel);
    BOOST_TEST(d->read(PerfCtr0) == c.want);
    BOOST_TEST(d->read(PerfCtr1) == c.want / 2);  // one cycle per two instructions
  }
}

// Item 12: MESI events count the states UMASK selects; UMASK 0 counts nothing (Linux's NOP
// event 0x0000002E).
BOOST_AUTO_TEST_CASE(item12_mesi_unit_masks) {
  const pmc::OwnedSegment s = seg(10, {{"l2_rqsts.m", 1}, {"l2_rqsts.e", 2}, {"l2_rqsts.s", 4},
                             {"l2_rqsts.i", 8}, {"l2_ld.m", 16}, {"l2_ld.e", 32}, {"l2_ld.i", 64}});
  struct Case {
    u64 code, mask, want;
  };
  for (const Case& c : {Case{L2_RQSTS, 0x00, 0}, Case{L2_RQSTS, 0x0F, 150},
                        Case{L2_RQSTS, 0x01, 80}, Case{L2_RQSTS, 0x08, 10},
                        Case{L2_RQSTS, 0x06, 60}, Case{L2_LD, 0x0C, 480}, Case{L2_LD, 0x03, 640},
                        Case{L2_LD, 0x00, 0}}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | USR | umask(c.mask) | c.code);
    d->run(s);
    BOOST_TEST(d->read(PerfCtr0) == c.want, "event " << c.code << " umask " << c.mask);
  }
  // The Linux NOP event parks a counter that is otherwise fully enabled.
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | OS | L2_RQSTS);
  d->run(s);
  BOOST_TEST(d->read(PerfCtr0) == 0u);
}

// Item 14: sampling. A preset of -N (32 bits, N <= 2^31 - 1) overflows after exactly N events.
BOOST_AUTO_TEST_CASE(item14_preset_minus_n_overflows_after_n_events) {
  for (u64 n : {u64{1000}, u64{0x7FFFFFFF}}) {
    auto d = p6();
    d->write(PerfCtr0, (0 - n) & 0xFFFFFFFF);       // -1000 -> 0xFFFFFFFC18 after sign extension
    BOOST_TEST(d->read(PerfCtr0) == TWO40 - n);
    d->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
    d->run(seg(n - 1, {{"instructions", 1}}));
    BOOST_TEST(d->read(PerfCtr0) == TWO40 - 1);
    BOOST_TEST(d->interrupts() == 0u);
    d->run(seg(1, {{"instructions", 1}}));
    BOOST_TEST(d->read(PerfCtr0) == 0u);
    BOOST_TEST(d->interrupts() == 1u);
  }
}

BOOST_AUTO_TEST_CASE(closed_form_2_41_events_in_one_segment) {
  auto d = p6();
  d->write(PerfCtr0, 5);
  d->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  d->write(PerfEvtSel1, USR | INT | CPU_CLK_UNHALTED);
  d->run(seg(TWO40, {{"instructions", 2}}));  // 2^41 instructions, 2^40 cycles
  BOOST_TEST(d->read(PerfCtr0) == 5u);        // 5 + 2^41 mod 2^40
  BOOST_TEST(d->read(PerfCtr1) == 0u);        // 2^40 mod 2^40
  BOOST_TEST(d->interrupts() == 3u);          // two wraps of counter 0, one of counter 1
  // 2^63 cycles of 2^20 + 7 events: 2^83 + 7 * 2^63 events; mod 2^40 = 0 (both terms are
  // multiples of 2^40); wraps = 2^43 + 7 * 2^23.
  auto big = p6();
  big->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  big->run(seg(1ULL << 63, {{"instructions", (1ULL << 20) + 7}}));
  BOOST_TEST(big->read(PerfCtr0) == 0u);
  BOOST_TEST(big->interrupts() == (1ULL << 43) + 7 * (1ULL << 23));
  // Per-cycle counts beyond 64 bits in sum (a name and its alias) stay exact: 2 * (2^64 - 1)
  // per cycle for 3 cycles = 6 * 2^64 - 6 = -6 mod 2^40.
  // Wraps: floor((3 * 2^65 - 6) / 2^40) = 3 * 2^25 - 1.
  auto wide = p6();
  wide->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  wide->run(seg(3, {{"instructions", ~u64{0}}, {"inst_retired", ~u64{0}}}));
  BOOST_TEST(wide->read(PerfCtr0) == TWO40 - 6);
  BOOST_TEST(wide->interrupts() == 3 * (1ULL << 25) - 1);
}

// A segment of zero cycles has no cycle in which anything could happen: it adds nothing and
// does not move the edge detector.
BOOST_AUTO_TEST_CASE(zero_cycle_segments_change_nothing) {
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | E | INST_RETIRED);
  d->write(PerfEvtSel1, USR | CPU_CLK_UNHALTED);
  d->run(seg(10, {{"instructions", 1}}));
  d->run(seg(0, {}));
  d->run(seg(0, {{"instructions", 1}}));
  d->run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d->read(PerfCtr0) == 1u);
  BOOST_TEST(d->read(PerfCtr1) == 20u);
}

BOOST_AUTO_TEST_CASE(halted_cycles_do_not_count_unhalted_clocks) {
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | OS | CPU_CLK_UNHALTED);
  d->write(PerfEvtSel1, USR | OS | E | CPU_CLK_UNHALTED);
  d->run(seg(100, {}));
  d->run(seg(50, {}, Mode::kernel, true));  // halted
  d->run(seg(30, {}, Mode::kernel));
  BOOST_TEST(d->read(PerfCtr0) == 130u);
  BOOST_TEST(d->read(PerfCtr1) == 2u);  // unhalted periods: two, separated by the halt
}

BOOST_AUTO_TEST_CASE(generic_aliases_feed_the_p6_events) {
  const pmc::OwnedSegment s = seg(10, {{"instructions", 1}, {"inst_retired", 2}, {"branches", 3},
                             {"branch-misses", 4}, {"uops", 5}, {"flops", 6}, {"l2-requests.s", 7},
                             {"l2_rqsts.s", 8}});
  struct Case {
    u64 sel, want;
  };
  for (const Case& c : {Case{INST_RETIRED, 30}, Case{BR_INST_RETIRED, 30},
                        Case{BR_MISS_PRED_RETIRED, 40}, Case{UOPS_RETIRED, 50}, Case{FLOPS, 60},
                        Case{umask(0x02) | L2_RQSTS, 150}}) {
    auto d = p6();
    d->write(PerfEvtSel0, EN | USR | c.sel);
    d->run(s);
    BOOST_TEST(d->read(PerfCtr0) == c.want, "event select " << c.sel);
  }
}

// Bus events: UMASK 0x00 counts this processor's transactions, 0x20 any agent's [5].
BOOST_AUTO_TEST_CASE(bus_self_and_any) {
  const pmc::OwnedSegment s = seg(10, {{"bus_tran_brd.self", 2}, {"bus_tran_brd.other", 5},
                             {"bus_data_rcv", 1}});
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | BUS_TRAN_BRD);
  d->write(PerfEvtSel1, USR | umask(0x20) | BUS_TRAN_BRD);
  d->run(s);
  BOOST_TEST(d->read(PerfCtr0) == 20u);
  BOOST_TEST(d->read(PerfCtr1) == 70u);
  auto q = p6();
  q->write(PerfEvtSel0, EN | USR | BUS_DATA_RCV);
  q->run(s);
  BOOST_TEST(q->read(PerfCtr0) == 10u);
}

BOOST_AUTO_TEST_CASE(unknown_event_codes_count_nothing_and_known_ones_their_signal) {
  const pmc::OwnedSegment s =
      seg(10, {{"mmx_instr_exec", 3}, {"emon_kni_inst_retired", 4}, {"instructions", 9}});
  auto d = p6();
  d->write(PerfEvtSel0, EN | USR | 0x01);  // no P6 event 0x01
  d->write(PerfEvtSel1, USR | 0xFF);       // nor 0xFF
  d->run(s);
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->read(PerfCtr1) == 0u);
  d->write(PerfEvtSel0, EN | USR | MMX_INSTR_EXEC);
  d->write(PerfEvtSel1, USR | EMON_KNI_INST_RETIRED);
  d->run(s);
  BOOST_TEST(d->read(PerfCtr0) == 30u);
  BOOST_TEST(d->read(PerfCtr1) == 40u);
}

BOOST_AUTO_TEST_SUITE_END()
