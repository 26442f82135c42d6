#define BOOST_TEST_MODULE archperf_model_counting
#include <boost/test/unit_test.hpp>

// The architectural PMU device model against docs/hardware/archperf.md: counting (the enables, the
// USR / OS filter, the architectural events and their signals, CMASK / INV / E and the edge
// detector, overflow status and PMIs, CTR_Frz, sampling presets, closed forms over huge segments,
// 64-bit counters). Every expected value below is worked out by hand from the fact sheet (section
// numbers in brackets; "item N" is section 8, "Behaviours worth a test"), never taken from a run of
// the model. Policies the sheet leaves open ([U]) are the ones
// sim/models/archperf/archperf_model.hpp lists.

#include "archperf_model_support.hpp"

using namespace archperf_model_test;

// =============================================================================================
BOOST_AUTO_TEST_SUITE(counting)

// Item 1: fixed counter 0 counts only with FIXED_CTR_CTRL[1:0] != 0 AND GLOBAL_CTRL[32].
BOOST_AUTO_TEST_CASE(item1_fixed_counter_needs_both_enables) {
  auto d = device({});
  const pmc::OwnedSegment s = seg(100, {{"instructions", 2}});
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_OS | F_USR));
  d->write(GLOBAL_CTRL, 0);
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // field 3, GLOBAL_CTRL[32] = 0: frozen
  d->write(FIXED_CTR_CTRL, 0);
  d->write(GLOBAL_CTRL, fixed_bit(0));
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // the reverse: frozen
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_OS | F_USR));
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 200u);  // both
  d->write(GLOBAL_CTRL, 0);
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 200u);
}

// Item 2: PERFEVTSELi.EN = 1 but GLOBAL_CTRL[i] = 0 -> no counting (v2+); v1: EN alone.
BOOST_AUTO_TEST_CASE(item2_gp_counter_needs_en_and_global_ctrl) {
  const pmc::OwnedSegment s = seg(100, {{"instructions", 2}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);
  d->write(evtsel(2), USR | INSTRUCTIONS);  // EN = 0
  d->write(GLOBAL_CTRL, 0b0110);
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);    // EN, GLOBAL_CTRL[0] = 0
  BOOST_TEST(d->read(ia32_pmc(1)) == 200u);  // both
  BOOST_TEST(d->read(ia32_pmc(2)) == 0u);    // GLOBAL_CTRL[2], EN = 0
  auto v1 = device({.version = 1, .gp = 2, .fixed = 0, .fixed_width = 0});
  v1->write(evtsel(0), EN | USR | INSTRUCTIONS);
  v1->write(evtsel(1), USR | INSTRUCTIONS);  // per-counter EN (unlike P6's counter-0 EN)
  v1->run(s);
  BOOST_TEST(v1->read(ia32_pmc(0)) == 200u);
  BOOST_TEST(v1->read(ia32_pmc(1)) == 0u);
}

// The USR / OS filter of GP counters and the enable field of fixed counters [3, 4].
BOOST_AUTO_TEST_CASE(mode_filtering) {
  const pmc::OwnedSegment user = seg(100, {{"instructions", 2}});
  const pmc::OwnedSegment kernel = seg(50, {{"instructions", 2}}, Mode::kernel);
  struct Case {
    u64 sel_bits, field, want;
  };
  for (const Case& c : {Case{0, 0, 0}, Case{USR, F_USR, 200}, Case{OS, F_OS, 100},
                        Case{USR | OS, F_USR | F_OS, 300}}) {
    auto d = device({});
    d->write(evtsel(0), EN | c.sel_bits | INSTRUCTIONS);
    d->write(evtsel(1), EN | c.sel_bits | CORE_CYCLES);
    d->write(FIXED_CTR_CTRL, fixed_ctrl(0, c.field) | fixed_ctrl(1, c.field));
    d->write(GLOBAL_CTRL, 0xF | fixed_bit(0) | fixed_bit(1));
    d->run(user);
    d->run(kernel);
    BOOST_TEST(d->read(ia32_pmc(0)) == c.want);
    BOOST_TEST(d->read(ia32_pmc(1)) == c.want / 2);  // one cycle per two instructions
    BOOST_TEST(d->read(fixed_ctr(0)) == c.want);
    BOOST_TEST(d->read(fixed_ctr(1)) == c.want / 2);
  }
}

// Signals [7a, 7b]: each architectural event and fixed counter counts its generic signal.
BOOST_AUTO_TEST_CASE(architectural_events_and_fixed_counters_count_their_signals) {
  auto d = icelake();  // L = 8, all available
  const u64 events[] = {CORE_CYCLES, INSTRUCTIONS, REF_CYCLES,    LLC_REFERENCES,
                        LLC_MISSES,  BRANCHES,     BRANCH_MISSES, TOPDOWN_SLOTS};
  for (unsigned i = 0; i < 8; ++i) d->write(evtsel(i), EN | USR | events[i]);
  d->write(FIXED_CTR_CTRL, 0x2222);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  d->run(seg(10, {{"instructions", 2},
                  {"ref-cycles", 3},
                  {"llc-references", 4},
                  {"llc-misses", 5},
                  {"branches", 6},
                  {"branch-misses", 7},
                  {"slots", 8}}));
  const u64 want[] = {10, 20, 30, 40, 50, 60, 70, 80};
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(d->read(ia32_pmc(i)) == want[i], "counter " << i);
  BOOST_TEST(d->read(fixed_ctr(0)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 30u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 80u);
}

// [U] ref-cycles: the unhalted cycles unless the workload gives it; halted cycles count neither.
BOOST_AUTO_TEST_CASE(reference_cycles_policy) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | OS | REF_CYCLES);
  d->write(evtsel(1), EN | USR | OS | CORE_CYCLES);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR | F_OS) | fixed_ctrl(2, F_USR | F_OS));
  d->write(GLOBAL_CTRL, 0xF | fixed_bit(1) | fixed_bit(2));
  d->run(seg(100, {{"instructions", 1}}));                  // ref = cycles = 100
  d->run(seg(40, {{"ref-cycles", 3}}));                     // ref 120, cycles 40
  d->run(seg(50, {}, Mode::kernel, true));                  // halted: 0 and 0
  d->run(seg(5, {{"ref-cycles", 1}}, Mode::kernel, true));  // given while halted: 5, cycles 0
  BOOST_TEST(d->read(ia32_pmc(0)) == 225u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 225u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 140u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 140u);
}

// Other event / umask pairs count "raw.0xUUEE"; an architectural event matches on both fields.
BOOST_AUTO_TEST_CASE(other_events_count_raw_signals) {
  const pmc::OwnedSegment s = seg(10, {{"raw.0x01C2", 3}, {"raw.0x02C2", 5}, {"raw.0x01C0", 7},
                             {"raw.0x00D1", 9}, {"instructions", 11}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | umask(0x01) | 0xC2);
  d->write(evtsel(1), EN | USR | umask(0x01) | INSTRUCTIONS);  // C0/01 is not C0/00
  d->write(evtsel(2), EN | USR | 0xD1);
  d->write(evtsel(3), EN | USR | umask(0xFF) | 0xFF);          // nothing gives raw.0xFFFF
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 30u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 70u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 90u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 0u);
}

// Item 12 (the hardware side): EBX bit i = 1 -> architectural event i counts nothing [U];
// i >= EAX[31:24] -> not an architectural event on this CPU: its raw signal [U].
BOOST_AUTO_TEST_CASE(item12_unavailable_and_unenumerated_events) {
  const pmc::OwnedSegment s = seg(10, {{"llc-references", 1}, {"llc-misses", 2}, {"slots", 3},
                             {"raw.0x01A4", 4}, {"raw.0x02C2", 5}, {"branches", 6}});
  // EBX bit 4 (LLC Misses) set.
  auto d = device({.unavailable = bit(4)});
  d->write(evtsel(0), EN | USR | LLC_MISSES);
  d->write(evtsel(1), EN | USR | LLC_REFERENCES);
  d->write(evtsel(2), EN | USR | TOPDOWN_SLOTS);  // index 7 >= L = 7: raw
  d->write(evtsel(3), EN | USR | BRANCHES);
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 40u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 60u);
  // The fixed counters count whatever EBX says of their GP twins [U].
  auto f = device({.unavailable = bit(1)});
  f->write(evtsel(0), EN | USR | INSTRUCTIONS);
  f->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR));
  f->write(GLOBAL_CTRL, 0x1 | fixed_bit(0));
  f->run(seg(10, {{"instructions", 2}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(f->read(fixed_ctr(0)) == 20u);
  // The Core 2 dump (L = 7): TOPDOWN.SLOTS is not architectural there; Ice Lake (L = 8): it is.
  auto c2 = core2();
  c2->write(evtsel(0), EN | USR | TOPDOWN_SLOTS);
  c2->run(s);
  BOOST_TEST(c2->read(ia32_pmc(0)) == 40u);
  auto ice = icelake();
  ice->write(evtsel(0), EN | USR | TOPDOWN_SLOTS);
  ice->run(s);
  BOOST_TEST(ice->read(ia32_pmc(0)) == 30u);
  // Event 11 (Topdown Retiring, C2/02) has no generic signal: raw whether enumerated or not;
  // enumerated and marked unavailable, nothing. An EBX bit beyond L means nothing.
  auto l13 = device({.ebx_length = 13, .unavailable = bit(11)});
  auto l8 = device({.ebx_length = 8, .unavailable = bit(11)});
  auto l13ok = device({.ebx_length = 13});
  for (auto* x : {l13.get(), l8.get(), l13ok.get()}) {
    x->write(evtsel(0), EN | USR | TOPDOWN_RETIRING);
    x->run(s);
  }
  BOOST_TEST(l13->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(l8->read(ia32_pmc(0)) == 50u);
  BOOST_TEST(l13ok->read(ia32_pmc(0)) == 50u);
}

// Item 10: INV with CMASK = 0 is ignored; CMASK / INV / E as in p6.md [3].
BOOST_AUTO_TEST_CASE(item10_inv_ignored_when_cmask_is_zero) {
  for (u64 inv : {u64{0}, INV}) {
    auto d = device({});
    d->write(evtsel(0), EN | USR | inv | INSTRUCTIONS);
    d->run(seg(100, {{"instructions", 3}}));
    d->run(seg(50, {}));
    BOOST_TEST(d->read(ia32_pmc(0)) == 300u);
  }
}

BOOST_AUTO_TEST_CASE(item10_cmask_threshold_and_invert) {
  const pmc::OwnedSegment k0 = seg(10, {}), k1 = seg(20, {{"branches", 1}}),
                k2 = seg(30, {{"branches", 2}}), k5 = seg(40, {{"branches", 5}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | cmask(2) | BRANCHES);
  d->write(evtsel(1), EN | USR | INV | cmask(2) | BRANCHES);
  d->write(evtsel(2), EN | USR | cmask(5) | BRANCHES);
  for (const pmc::OwnedSegment* s : {&k0, &k1, &k2, &k5}) d->run(*s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 30u + 40u);  // cycles with >= 2
  BOOST_TEST(d->read(ia32_pmc(1)) == 10u + 20u);  // cycles with < 2, zero included
  BOOST_TEST(d->read(ia32_pmc(2)) == 40u);
}

BOOST_AUTO_TEST_CASE(item10_edge_detect) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);             // condition: >= 1 event [I]
  d->write(evtsel(1), EN | USR | E | cmask(2) | INSTRUCTIONS);  // condition: >= 2 events
  d->write(evtsel(2), EN | USR | E | INV | INSTRUCTIONS);       // INV ignored with CMASK = 0
  // k per cycle: 1 (100 cycles), 3, 0, 2, 2, 1, 4 (5 cycles each)
  for (u64 k : {1, 3, 0, 2, 2, 1, 4}) d->run(seg(k == 1 ? 100 : 5, {{"instructions", k}}));
  // >= 1: asserts at 1, holds through 3, drops at 0, asserts at 2, holds to the end.
  BOOST_TEST(d->read(ia32_pmc(0)) == 2u);
  // >= 2: asserts at 3, drops at 0, asserts at 2, holds, drops at 1, asserts at 4.
  BOOST_TEST(d->read(ia32_pmc(1)) == 3u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 2u);
}

// [U] edge-detector memory: per counter, updated only in cycles the counter counts (GLOBAL_CTRL
// clear, wrong mode or CTR_Frz leave it alone), cleared by writing the event select.
BOOST_AUTO_TEST_CASE(edge_detector_state_policy) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);
  d->run(seg(10, {{"instructions", 1}}));  // edge: 1
  d->write(GLOBAL_CTRL, 0);
  d->run(seg(10, {}));                     // not counted: state stays asserted
  d->write(GLOBAL_CTRL, 0xF);
  d->run(seg(10, {}, Mode::kernel));       // not counted (USR only)
  d->write(GLOBAL_STATUS_SET, CTR_FRZ);
  d->run(seg(10, {}));                     // frozen
  d->write(GLOBAL_OVF_CTRL, CTR_FRZ);
  d->run(seg(10, {{"instructions", 1}}));  // continues: no edge
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);  // rewrite clears the state
  d->run(seg(10, {{"instructions", 1}}));  // edge: 2
  BOOST_TEST(d->read(ia32_pmc(0)) == 2u);
  d->run(seg(10, {}));                     // counted, deasserts
  d->run(seg(10, {{"instructions", 1}}));  // edge: 3
  BOOST_TEST(d->read(ia32_pmc(0)) == 3u);
}

// Item 7: an overflow of PMC1 sets GLOBAL_STATUS bit 1 (INT = 0 too [U]); 1 << 1 to 0x390 clears
// it; 0 changes nothing; GLOBAL_STATUS is read-only.
BOOST_AUTO_TEST_CASE(item7_overflow_status_and_ovf_ctrl) {
  auto d = device({});
  d->write(ia32_pmc(1), 0xFFFFFFFF);  // sign-extended: 2^48 - 1
  BOOST_TEST(d->read(ia32_pmc(1)) == TWO48 - 1);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);  // INT = 0
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  BOOST_TEST(d->interrupts() == 0u);
  d->write(GLOBAL_OVF_CTRL, 0);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  d->write(GLOBAL_OVF_CTRL, bit(0) | bit(2));  // other bits: no effect on bit 1
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  d->write(GLOBAL_OVF_CTRL, bit(1));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS, 0); },
                      {"IA32_PERF_GLOBAL_STATUS", "0x38e", "read-only"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS, bit(1)); }, {"read-only"}));
  // With INT: the status bit and one PMI per wrap.
  d->write(a_pmc(1), TWO48 - 2);
  d->write(evtsel(1), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 3}}));
  BOOST_TEST(d->read(ia32_pmc(1)) == 1u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  BOOST_TEST(d->interrupts() == 1u);
  // A fixed counter's overflow sets bit 32 + i, and its PMI bit raises the interrupt.
  d->write(fixed_ctr(1), TWO48 - 10);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR | F_OS | F_PMI));
  d->write(GLOBAL_CTRL, fixed_bit(1));
  d->run(seg(25, {}));
  BOOST_TEST(d->read(fixed_ctr(1)) == 15u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(1) | fixed_bit(1)));
  BOOST_TEST(d->interrupts() == 2u);
  // The version-2 name of 0x390 in messages.
  auto v2 = device({.version = 2});
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(40)); },
                      {"IA32_PERF_GLOBAL_OVF_CTRL", "bit 40"}));
}

// Version 1: an overflow raises the PMI (INT) but there is no status register to set.
BOOST_AUTO_TEST_CASE(version_1_overflow_raises_the_pmi) {
  auto d = device({.version = 1, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0});
  d->write(ia32_pmc(0), 0xFFFFFFFF);  // 2^40 - 1
  d->write(ia32_pmc(1), 0xFFFFFFFF);
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
}

// Item 8: v4 STATUS_SET sets status bits; CTR_Frz = 1 stops every counter until cleared.
BOOST_AUTO_TEST_CASE(item8_v4_status_set_and_ctr_frz) {
  auto d = device({});
  d->write(GLOBAL_STATUS_SET, fixed_bit(1));
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->write(GLOBAL_STATUS_SET, 0);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR));
  d->write(GLOBAL_CTRL, 0xF | fixed_bit(1));
  d->run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  d->write(GLOBAL_STATUS_SET, CTR_FRZ);
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(33) | CTR_FRZ));
  d->run(seg(1000, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  d->write(GLOBAL_OVF_CTRL, CTR_FRZ);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->run(seg(5, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 15u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 15u);
}

// Item 15: sampling presets. Without full-width writes the largest period is 2^31 - 1 (a
// sign-extended 32-bit write); with them 2^(w-1) - 1 through A_PMC.
BOOST_AUTO_TEST_CASE(item15_sampling_presets) {
  // No PDCM: legacy writes only. -(2^31 - 1) = 0x...80000001 -> 2^48 - 2^31 + 1.
  auto d = device({.pdcm = false});
  d->write(ia32_pmc(0), (0 - (TWO31 - 1)));
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - (TWO31 - 1));
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(TWO31 - 2, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - 1);
  BOOST_TEST(d->interrupts() == 0u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(0));
  // A larger preset cannot be written the legacy way: 2^48 - 2^40 keeps EAX = 0.
  d->write(ia32_pmc(1), TWO48 - TWO40);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  // Full-width: -(2^47 - 1) = 2^47 + 1 through A_PMC0, overflow after exactly 2^47 - 1 events.
  auto f = device({});
  f->write(a_pmc(0), TWO47 + 1);
  BOOST_TEST(f->read(ia32_pmc(0)) == TWO48 - (TWO47 - 1));
  f->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  f->run(seg(TWO47 - 2, {{"instructions", 1}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == TWO48 - 1);
  BOOST_TEST(f->interrupts() == 0u);
  f->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(f->interrupts() == 1u);
}

// Closed form: huge segments cost one step, wraps and PMIs are exact.
BOOST_AUTO_TEST_CASE(closed_form_huge_segments) {
  auto d = device({});
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR | F_PMI) | fixed_ctrl(1, F_USR | F_PMI));
  d->write(GLOBAL_CTRL, fixed_bit(0) | fixed_bit(1) | 0x1);
  d->write(ia32_pmc(0), 5);
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  // 2^63 cycles of 2^20 + 7 instructions: 2^83 + 7 * 2^63 events, a multiple of 2^48, so the
  // 48-bit counters end where they started; wraps = 2^35 + 7 * 2^15 each. Cycles: 2^63 = 2^15
  // wraps of 2^48.
  d->run(seg(1ULL << 63, {{"instructions", (1ULL << 20) + 7}}));
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(0)) == 5u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 0u);
  const u64 inst_wraps = (1ULL << 35) + 7 * (1ULL << 15);
  BOOST_TEST(d->interrupts() == 2 * inst_wraps + (1ULL << 15));
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(0) | fixed_bit(0) | fixed_bit(1)));
  // 40-bit GP counters (Core 2): 2^41 instructions in one segment wrap twice.
  auto c = core2();
  c->write(ia32_pmc(0), 5);
  c->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  c->run(seg(TWO40, {{"instructions", 2}}));
  BOOST_TEST(c->read(ia32_pmc(0)) == 5u);
  BOOST_TEST(c->interrupts() == 2u);
}

// A 64-bit counter wraps at 2^64 (no shift past the width anywhere).
BOOST_AUTO_TEST_CASE(width_64_counters) {
  auto d = device({.gp_width = 64, .fixed_width = 64});
  d->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFFFFFFFF80000000u);
  d->write(a_pmc(0), ~u64{0});
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
  // 3 cycles of 2^64 - 1: 3 * 2^64 - 3 -> 2^64 - 3, two more wraps.
  d->run(seg(3, {{"instructions", ~u64{0}}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == ~u64{0} - 2);
  BOOST_TEST(d->interrupts() == 3u);
  d->write(fixed_ctr(0), ~u64{0});
  BOOST_TEST(d->read(fixed_ctr(0)) == ~u64{0});
}

BOOST_AUTO_TEST_CASE(zero_cycle_segments_change_nothing) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | CORE_CYCLES);
  d->run(seg(10, {{"instructions", 1}}));
  d->run(seg(0, {}));
  d->run(seg(0, {{"instructions", 1}}));
  d->run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 20u);
}

BOOST_AUTO_TEST_SUITE_END()
