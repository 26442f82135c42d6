#define BOOST_TEST_MODULE p6_model
#include <boost/test/unit_test.hpp>

// The P6 device model against docs/hardware/p6.md. Every expected value below is worked out
// by hand from the fact sheet (section numbers in brackets; "item N" is section 6, "Behaviours
// worth a test"), never taken from a run of the model.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "p6_model.hpp"  // P6Device (pmcmodel_p6), with the Pentium M firmware setting (IA32_MISC_ENABLE)
#include "session_impl.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace {

using pmc::errc;
using pmc::Device;
using pmc::Mode;
using pmc::Segment;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t PerfCtr0 = 0xC1, PerfCtr1 = 0xC2, PerfEvtSel0 = 0x186, PerfEvtSel1 = 0x187;
// PerfEvtSel fields [3].
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, E = 1ULL << 18, PC = 1ULL << 19,
              INT = 1ULL << 20, EN = 1ULL << 22, INV = 1ULL << 23;
constexpr u64 umask(u64 m) { return m << 8; }
constexpr u64 cmask(u64 c) { return c << 24; }
// Event codes [5].
constexpr u64 INST_RETIRED = 0xC0, CPU_CLK_UNHALTED = 0x79, L2_RQSTS = 0x2E, L2_LD = 0x29,
              FLOPS = 0xC1, FP_COMP_OPS_EXE = 0x10, CYCLES_DIV_BUSY = 0x14, FP_ASSIST = 0x11,
              MUL = 0x12, DIV = 0x13, BR_INST_RETIRED = 0xC4, BR_MISS_PRED_RETIRED = 0xC5,
              UOPS_RETIRED = 0xC2, BUS_TRAN_BRD = 0x65, BUS_DATA_RCV = 0x64, MMX_INSTR_EXEC = 0xB0,
              EMON_KNI_INST_RETIRED = 0xD8, L2_LINES_IN = 0x24, L2_LINES_OUT = 0x26,
              L2_M_LINES_OUTM = 0x27, L2_IFETCH = 0x28;

constexpr u64 TWO40 = 1ULL << 40;

pmc::CpuInfo pentium_pro() {
  pmc::CpuInfo cpu;
  cpu.vendor = "GenuineIntel";
  cpu.family = 6;
  cpu.model = 1;
  cpu.stepping = 9;
  cpu.signature = 0x619;
  cpu.source = "test";
  return cpu;
}

std::unique_ptr<Device> p6() { return std::make_unique<pmc::sim::P6Device>(pentium_pro()); }

// Family 6 models 9 (Banias) and 13 (Dothan) are the Pentium M [1]; 8 is a Pentium III
// (Coppermine).
pmc::CpuInfo p6_model(unsigned model, unsigned stepping) {
  pmc::CpuInfo cpu = pentium_pro();
  cpu.model = model;
  cpu.stepping = stepping;
  cpu.signature = 0x600 | (model << 4) | stepping;
  return cpu;
}
pmc::CpuInfo pentium_m() { return p6_model(13, 8); }
pmc::CpuInfo pentium_iii() { return p6_model(8, 3); }

// IA32_MISC_ENABLE and its bit 7 "performance monitoring available" [1].
constexpr std::uint32_t MiscEnable = 0x1A0;
constexpr u64 PerfmonAvailable = 1ULL << 7;

pmc::OwnedSegment seg(u64 cycles, std::initializer_list<std::pair<const char*, u64>> signals,
                      Mode mode = Mode::user, bool halted = false) {
  pmc::OwnedSegment s(cycles, mode);
  s->halted = halted;
  for (const auto& [name, k] : signals) s.signal(name, k);
  return s;
}

// True when f() throws pmc::Error of `code` whose message contains every fragment.
template <class F>
bool throws(F&& f, errc code, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST_MESSAGE("error: " << e.what());
    if (e.kind() != code) return false;
    const std::string what = e.what();
    for (const auto& fragment : fragments)
      if (what.find(fragment) == std::string::npos) return false;
    return true;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(registers)

// The device a session gets is the model plugin's, found by name (Context::make_device).
BOOST_AUTO_TEST_CASE(make_device_knows_p6_only) {
  auto d = p6();
  BOOST_TEST(d->name() == "p6");
  BOOST_TEST(pmc_test::plugin_device("p6", pentium_pro()).device->name() == "p6");
  BOOST_TEST(throws([] { (void)pmc_test::plugin_device("p7", pentium_pro()); }, errc::not_found,
                    {"'p7'"}));
}

BOOST_AUTO_TEST_CASE(registers_start_at_zero) {
  auto d = p6();
  for (std::uint32_t msr : {PerfCtr0, PerfCtr1, PerfEvtSel0, PerfEvtSel1})
    BOOST_TEST(d->read(msr) == 0u);
}

BOOST_AUTO_TEST_CASE(other_msrs_fault_naming_the_address) {
  auto d = p6();
  // 0xC3 would be a third counter, 0x188 a third event select, 0x10 the TSC: none is a P6 PMU MSR.
  BOOST_TEST(throws([&] { (void)d->read(0xC3); }, errc::register_fault, {"rdmsr", "0xc3"}));
  BOOST_TEST(throws([&] { d->write(0x188, 0); }, errc::register_fault, {"wrmsr", "0x188"}));
  BOOST_TEST(throws([&] { (void)d->read(0x10); }, errc::register_fault, {"0x10"}));
}

BOOST_AUTO_TEST_CASE(event_selects_read_back_what_was_written) {
  auto d = p6();
  const u64 sel0 = EN | INV | cmask(0xFF) | INT | PC | E | OS | USR | umask(0xFF) | 0xFF;
  BOOST_TEST(sel0 == 0xFFDFFFFFu);  // every bit of 31:0 but reserved bit 21
  d->write(PerfEvtSel0, sel0);
  BOOST_TEST(d->read(PerfEvtSel0) == 0xFFDFFFFFu);
  const u64 sel1 = INV | cmask(0x12) | INT | OS | USR | umask(0x34) | 0x56;  // 0x12933456
  d->write(PerfEvtSel1, sel1);
  BOOST_TEST(d->read(PerfEvtSel1) == 0x12933456u);
}

// Item 3: bit 22 is EN in PerfEvtSel0 only; in PerfEvtSel1 it is reserved, and writing it is an
// error (design rule: a reserved bit faults like a #GP). A refused write changes nothing.
BOOST_AUTO_TEST_CASE(item3_bit22_in_perfevtsel1_is_reserved) {
  auto d = p6();
  d->write(PerfEvtSel1, INST_RETIRED | USR);
  BOOST_TEST(throws([&] { d->write(PerfEvtSel1, EN | INST_RETIRED | USR); }, errc::register_fault,
                    {"PerfEvtSel1", "bit 22"}));
  BOOST_TEST(d->read(PerfEvtSel1) == (INST_RETIRED | USR));
  // With PerfEvtSel0.EN = 0 nothing counts: the refused bit enabled nothing.
  d->run(seg(100, {{"instructions", 1}}));
  BOOST_TEST(d->read(PerfCtr0) == 0u);
  BOOST_TEST(d->read(PerfCtr1) == 0u);
  // The same bit in PerfEvtSel0 is EN and is accepted.
  d->write(PerfEvtSel0, EN);
  BOOST_TEST(d->read(PerfEvtSel0) == EN);
}

// Item 13: bit 21 is reserved in both event selects, and so are bits 63:32. Bit 19 (PC) is a
// real hardware bit (pin control, invisible to software): the hardware takes it; refusing it is
// the driver's business (perfctr's P6_EVNTSEL_RESERVED), tested with the backend.
BOOST_AUTO_TEST_CASE(item13_reserved_bits_fault) {
  auto d = p6();
  const u64 bit21 = 1ULL << 21;
  BOOST_TEST(throws([&] { d->write(PerfEvtSel0, bit21 | INST_RETIRED); }, errc::register_fault,
                    {"PerfEvtSel0", "bit 21"}));
  BOOST_TEST(throws([&] { d->write(PerfEvtSel1, bit21 | INST_RETIRED); }, errc::register_fault,
                    {"PerfEvtSel1", "bit 21"}));
  BOOST_TEST(throws([&] { d->write(PerfEvtSel0, 1ULL << 32); }, errc::register_fault, {"bit 32"}));
  BOOST_TEST(throws([&] { d->write(PerfEvtSel1, 1ULL << 63); }, errc::register_fault, {"bit 63"}));
  BOOST_TEST(d->read(PerfEvtSel0) == 0u);
  BOOST_TEST(d->read(PerfEvtSel1) == 0u);
  d->write(PerfEvtSel0, PC | EN | USR | INST_RETIRED);
  BOOST_TEST(d->read(PerfEvtSel0) == (PC | EN | USR | INST_RETIRED));
  d->write(PerfEvtSel1, PC | USR | INST_RETIRED);
  BOOST_TEST(d->read(PerfEvtSel1) == (PC | USR | INST_RETIRED));
}

// Item 4: WRMSR keeps EAX only and copies bit 31 into bits 39:32 [4].
BOOST_AUTO_TEST_CASE(item4_counter_writes_sign_extend_bit31) {
  auto d = p6();
  for (std::uint32_t ctr : {PerfCtr0, PerfCtr1}) {
    d->write(ctr, 0x80000000);
    BOOST_TEST(d->read(ctr) == 0xFF80000000u);
    d->write(ctr, 0x7FFFFFFF);
    BOOST_TEST(d->read(ctr) == 0x7FFFFFFFu);
    d->write(ctr, 0x123456789ABCDEF0);
    BOOST_TEST(d->read(ctr) == 0xFF9ABCDEF0u);
    d->write(ctr, 0xFFFFFFFF00000001);  // EDX ignored, bit 31 = 0
    BOOST_TEST(d->read(ctr) == 1u);
  }
}

// Item 6: RDPMC [4].
BOOST_AUTO_TEST_CASE(item6_rdpmc) {
  auto d = p6();
  d->write(PerfCtr0, 0x80000000);
  d->write(PerfCtr1, 0x12345678);
  BOOST_TEST(d->rdpmc(0) == 0xFF80000000u);
  BOOST_TEST((d->rdpmc(0) >> 40) == 0u);  // EDX[31:8] = 0
  BOOST_TEST(d->rdpmc(1) == 0x12345678u);
  BOOST_TEST(throws([&] { (void)d->rdpmc(2); }, errc::register_fault, {"RDPMC"}));
  BOOST_TEST(throws([&] { (void)d->rdpmc(0x40000000); }, errc::register_fault, {"RDPMC"}));
  d->set_reader_cpl(3);
  BOOST_TEST(throws([&] { (void)d->rdpmc(0); }, errc::register_fault, {"CPL 3", "CR4.PCE"}));
  d->set_cr4_pce(true);
  BOOST_TEST(d->rdpmc(0) == 0xFF80000000u);
  d->set_cr4_pce(false);
  d->set_reader_cpl(0);
  BOOST_TEST(d->rdpmc(1) == 0x12345678u);  // CPL 0 needs no PCE
  BOOST_TEST(throws([&] { d->set_reader_cpl(4); }, errc::invalid_argument, {"CPL 4"}));
}

BOOST_AUTO_TEST_SUITE_END()

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

// Pentium M's IA32_MISC_ENABLE (MSR 0x1A0) [1]: "bit 7 'perfmon available' (read-only) must be 1".
// The value of the other bits and what a write does are the model's [U] policies
// (sim/models/p6/p6_model.cpp, at the constructor): they read 0, and a write changes nothing.
BOOST_AUTO_TEST_SUITE(pentium_m_misc_enable)

BOOST_AUTO_TEST_CASE(pentium_m_reads_bit7_set) {
  for (unsigned model : {9u, 13u}) {
    BOOST_TEST_CONTEXT("model " << model) {
      auto d = std::make_unique<pmc::sim::P6Device>(p6_model(model, 5));
      // Bit 7 set, every other bit 0 [U]: 1 << 7 = 0x80.
      BOOST_TEST(d->read(MiscEnable) == 0x80u);
      BOOST_TEST((d->read(MiscEnable) & PerfmonAvailable) != 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(bit7_is_read_only_and_writes_change_nothing) {
  auto d = std::make_unique<pmc::sim::P6Device>(pentium_m());
  d->write(MiscEnable, 0);  // tries to clear bit 7: it stays set [1]
  BOOST_TEST(d->read(MiscEnable) == 0x80u);
  d->write(MiscEnable, ~u64{0});  // the other bits are not writable [U]
  BOOST_TEST(d->read(MiscEnable) == 0x80u);
  d->write(MiscEnable, d->read(MiscEnable) | 0x1);  // a driver's read-modify-write of bit 0
  BOOST_TEST(d->read(MiscEnable) == 0x80u);
  // Nothing else moved, and the PMU counts as on every P6: 10 cycles x 2 instructions = 20.
  BOOST_TEST(d->read(PerfEvtSel0) == 0u);
  d->write(PerfEvtSel0, EN | USR | INST_RETIRED);
  d->run(seg(10, {{"instructions", 2}}));
  BOOST_TEST(d->read(PerfCtr0) == 20u);
}

BOOST_AUTO_TEST_CASE(other_p6_cpus_fault_naming_the_msr_and_the_cpu) {
  // The Pentium III (model 8) and the Pentium Pro (model 1) have no IA32_MISC_ENABLE in the P6
  // PMU model: a #GP on read and write, as for any unknown MSR, naming the MSR and the CPU.
  for (const pmc::CpuInfo& cpu : {pentium_iii(), pentium_pro()}) {
    const std::string who = "family 6 model " + std::to_string(cpu.model);
    BOOST_TEST_CONTEXT(who) {
      auto d = std::make_unique<pmc::sim::P6Device>(cpu);
      BOOST_TEST(throws([&] { (void)d->read(MiscEnable); }, errc::register_fault,
                        {"#GP", "rdmsr", "0x1a0", "IA32_MISC_ENABLE", who, "only the Pentium M"}));
      BOOST_TEST(throws([&] { d->write(MiscEnable, PerfmonAvailable); }, errc::register_fault,
                        {"#GP", "wrmsr", "0x1a0", "IA32_MISC_ENABLE", who}));
    }
  }
}

// A BIOS that reports performance monitoring unavailable: bit 7 reads 0, software cannot set it,
// and (the model's [U] reading of "unavailable") no counter counts, while the PMU registers
// still read back what was written.
BOOST_AUTO_TEST_CASE(firmware_can_clear_bit7_and_then_nothing_counts) {
  pmc::sim::P6Device d(pentium_m(), /*perfmon_available=*/false);
  BOOST_TEST(d.pentium_m());
  BOOST_TEST(d.read(MiscEnable) == 0u);
  d.write(MiscEnable, PerfmonAvailable);  // read-only: still 0
  BOOST_TEST(d.read(MiscEnable) == 0u);
  d.write(PerfEvtSel0, EN | USR | INST_RETIRED);
  d.write(PerfEvtSel1, USR | CPU_CLK_UNHALTED);
  BOOST_TEST(d.read(PerfEvtSel0) == (EN | USR | INST_RETIRED));
  d.run(seg(100, {{"instructions", 2}}));
  BOOST_TEST(d.read(PerfCtr0) == 0u);
  BOOST_TEST(d.read(PerfCtr1) == 0u);
  // The setter models the same firmware choice on a device built elsewhere (a session's):
  // available again, the same 100 cycles give 200 instructions and 100 cycles.
  d.set_firmware_perfmon_available(true);
  BOOST_TEST(d.read(MiscEnable) == 0x80u);
  d.run(seg(100, {{"instructions", 2}}));
  BOOST_TEST(d.read(PerfCtr0) == 200u);
  BOOST_TEST(d.read(PerfCtr1) == 100u);
}

BOOST_AUTO_TEST_CASE(only_a_pentium_m_has_the_firmware_setting) {
  BOOST_TEST(throws([] { pmc::sim::P6Device d(pentium_iii(), false); }, errc::invalid_argument,
                    {"family 6 model 8", "not a Pentium M", "0x1A0"}));
  pmc::sim::P6Device d(pentium_iii());
  BOOST_TEST(!d.pentium_m());
  BOOST_TEST(throws([&] { d.set_firmware_perfmon_available(false); }, errc::invalid_argument,
                    {"not a Pentium M"}));
  d.set_firmware_perfmon_available(true);  // what it has anyway: accepted
}

BOOST_AUTO_TEST_SUITE_END()

// Pentium M hardware-prefetch filter, UMASK bits 5:4 of 24H, 26H, 27H, 29H [5a; SDM table
// 00 demand lines only, 01 hardware-prefetched only, 10 and 11 all. The model's signals
// (docs/workload-format.md): the P6 signal is demand lines, "<name>.prefetch" (MESI events:
// "<name>.prefetch.<state>") the hardware-prefetched ones.
BOOST_AUTO_TEST_SUITE(pentium_m_prefetch_filter)

// 10 cycles; per cycle: L2_LD demand M 1, E 2, S 4, I 8 (sum 15), prefetched M 16, E 32, S 64,
// I 128 (sum 240); L2_LINES_IN demand 3, prefetched 5; L2_LINES_OUT 6 / 7; L2_M_LINES_OUTM
// 9 / 11; L2_IFETCH demand M 1, and a "prefetched" M 100 no P6 event reads.
pmc::OwnedSegment l2_traffic() {
  return seg(10, {{"l2_ld.m", 1}, {"l2_ld.e", 2}, {"l2_ld.s", 4}, {"l2_ld.i", 8},
                  {"l2_ld.prefetch.m", 16}, {"l2_ld.prefetch.e", 32}, {"l2_ld.prefetch.s", 64},
                  {"l2_ld.prefetch.i", 128}, {"l2_lines_in", 3}, {"l2_lines_in.prefetch", 5},
                  {"l2_lines_out", 6}, {"l2_lines_out.prefetch", 7}, {"l2_m_lines_outm", 9},
                  {"l2_m_lines_outm.prefetch", 11}, {"l2_ifetch.m", 1},
                  {"l2_ifetch.prefetch.m", 100}});
}

struct FilterCase {
  u64 code, mask, want;
};

BOOST_AUTO_TEST_CASE(pentium_m_counts_demand_prefetched_or_both) {
  // Expected = 10 cycles x the per-cycle sum the mask selects.
  for (const FilterCase& c : {
           FilterCase{L2_LD, 0x0F, 150},   // 00: demand M+E+S+I = 15
           FilterCase{L2_LD, 0x1F, 2400},  // 01: prefetched 16+32+64+128 = 240
           FilterCase{L2_LD, 0x2F, 2550},  // 10: both, 15 + 240 = 255
           FilterCase{L2_LD, 0x3F, 2550},  // 11: both
           FilterCase{L2_LD, 0x28, 170},   // M, both: 1 + 16 = 17
           FilterCase{L2_LD, 0x11, 1280},  // I, prefetched only: 128
           FilterCase{L2_LD, 0x06, 60},    // E+S demand: 2 + 4 = 6
           FilterCase{L2_LD, 0x20, 0},     // no MESI state: nothing, filter or not [5 MESI]
           FilterCase{L2_LINES_IN, 0x00, 30},      // demand 3
           FilterCase{L2_LINES_IN, 0x10, 50},      // prefetched 5
           FilterCase{L2_LINES_IN, 0x20, 80},      // 3 + 5
           FilterCase{L2_LINES_IN, 0x30, 80},
           FilterCase{L2_LINES_OUT, 0x10, 70},     // prefetched 7
           FilterCase{L2_LINES_OUT, 0x00, 60},     // demand 6
           FilterCase{L2_M_LINES_OUTM, 0x20, 200}, // 9 + 11
           FilterCase{L2_M_LINES_OUTM, 0x10, 110},
           FilterCase{L2_IFETCH, 0x28, 10},        // no filter on 28H: demand M 1 only
       }) {
    auto d = std::make_unique<pmc::sim::P6Device>(pentium_m());
    d->write(PerfEvtSel0, EN | USR | umask(c.mask) | c.code);
    d->run(l2_traffic());
    BOOST_TEST(d->read(PerfCtr0) == c.want, "event " << c.code << " umask " << c.mask);
  }
}

// [U]: bits 5:4 are no filter on the other P6 CPUs (SDM A-18 gives these events MESI or 00H):
// they are ignored and the ".prefetch" signals are never read.
BOOST_AUTO_TEST_CASE(other_p6_cpus_ignore_bits_5_4) {
  for (const FilterCase& c : {
           FilterCase{L2_LD, 0x0F, 150},
           FilterCase{L2_LD, 0x1F, 150},
           FilterCase{L2_LD, 0x2F, 150},
           FilterCase{L2_LINES_IN, 0x00, 30},
           FilterCase{L2_LINES_IN, 0x10, 30},
           FilterCase{L2_LINES_OUT, 0x20, 60},
           FilterCase{L2_M_LINES_OUTM, 0x30, 90},
       }) {
    auto d = std::make_unique<pmc::sim::P6Device>(pentium_iii());
    d->write(PerfEvtSel0, EN | USR | umask(c.mask) | c.code);
    d->run(l2_traffic());
    BOOST_TEST(d->read(PerfCtr0) == c.want, "event " << c.code << " umask " << c.mask);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(chunking)

// Session::run() splits each segment into chunks that no counter of the PMU's narrowest width
// can pass half its range in, and polls after each (folding the counters into 64-bit totals).
// A session over the p6 plugin whose device is the P6 model wrapped in a ChunkSpy sees every
// chunk; the PMU's counter width is set here to the width a test needs.

pmc::Workload workload(std::initializer_list<pmc::OwnedSegment> segments) {
  pmc::Workload w;
  w.name = "test";
  for (const auto& s : segments) w.add(s);
  return w;
}

// A session counting on the simulated P6 (a Pentium Pro), its counters `width` bits wide.
pmc::Session session(unsigned width) {
  static const pmc_test::LoadedForTest backend("p6");
  auto ctx = pmc_test::spy_context<pmc::sim::P6Device>(backend, pentium_pro());
  for (auto& c : ctx->pmu.counters) c.width = width;
  return pmc::Session(std::make_unique<pmc::detail::SessionImpl>(ctx));
}

// What a session does between chunks: fold the difference of two `width`-bit readings into 64
// bits, here from the device's counter after each chunk (the largest step shows the chunking).
struct Folder {
  Device& d;
  std::uint32_t msr;
  unsigned width;
  u64 last = 0, total = 0, calls = 0, largest_step = 0;
  void operator()() {
    const u64 now = d.read(msr);
    const u64 step = (now - last) & ((u64{1} << width) - 1);
    largest_step = std::max(largest_step, step);
    total += step;
    last = now;
    ++calls;
  }
};

// Runs before each test of the suite and after it: no callback left from another test.
struct NoCallback {
  NoCallback() { pmc_test::between_chunks = nullptr; }
  ~NoCallback() { pmc_test::between_chunks = nullptr; }
};

// The counter register of reading i (PerfCtr0 + its counter).
std::uint32_t counter_msr(pmc::Session& s, std::size_t i) { return PerfCtr0 + s.read().at(i).counter; }

// 3 * 2^39 cycles of 2 instructions = 3 * 2^40 instructions. Budget per chunk: 2^39 - 1 events,
// so (2^39 - 1) / 2 = 2^38 - 1 cycles; 6 * 2^38 cycles = 6 chunks of 2^38 - 1 and 6 cycles left:
// 7 chunks.
BOOST_FIXTURE_TEST_CASE(wrap_40bit_workload_in_seven_chunks, NoCallback) {
  auto s = session(40);
  s.add("INST_RETIRED:u");  // EN | USR | INST_RETIRED
  Folder fold{pmc_test::device(s), counter_msr(s, 0), 40};
  pmc_test::between_chunks = [&] { fold(); };
  const pmc::WorkloadRun run = s.run(workload({seg(3 * (1ULL << 39), {{"instructions", 2}})}));
  BOOST_TEST(!s.running());  // started for the run, stopped after it
  BOOST_TEST(fold.calls == 7u);
  BOOST_TEST(fold.total == 3 * TWO40);
  BOOST_TEST(fold.largest_step == 2 * ((1ULL << 38) - 1));
  BOOST_TEST(fold.largest_step < (1ULL << 39));
  BOOST_TEST(s.read().at(0).value == 3 * TWO40);  // the session's own 64-bit total
  BOOST_TEST(run.cycles == 3 * (1ULL << 39));
  BOOST_TEST(run.cycles_not_counted == 0u);
}

// Width 8: budget 127 events. 1000 cycles x 3 -> 42 cycles a chunk, 24 chunks (23 x 42 = 966);
// 200 kernel cycles without signals -> at most 1 event a cycle (unhalted cycles) -> 127 cycles a
// chunk, 2 chunks. Chunks never span segments.
BOOST_FIXTURE_TEST_CASE(chunks_per_segment_and_exact_totals, NoCallback) {
  auto s = session(8);
  s.add("INST_RETIRED");      // USR | OS | INST_RETIRED
  s.add("CPU_CLK_UNHALTED");  // USR | OS | CPU_CLK_UNHALTED
  Device& d = pmc_test::device(s);
  Folder f0{d, counter_msr(s, 0), 8}, f1{d, counter_msr(s, 1), 8};
  pmc_test::between_chunks = [&] { f0(); f1(); };
  s.run(workload({seg(1000, {{"instructions", 3}}), seg(200, {}, Mode::kernel)}));
  BOOST_TEST(f0.calls == 26u);
  BOOST_TEST(f0.total == 3000u);
  BOOST_TEST(f1.total == 1200u);
  BOOST_TEST(f0.largest_step == 126u);  // 42 cycles x 3
  BOOST_TEST(f1.largest_step == 127u);  // 127 kernel cycles
  // The session folded its 8-bit readings into the same exact totals.
  BOOST_TEST(s.read().at(0).value == 3000u);
  BOOST_TEST(s.read().at(1).value == 1200u);
}

// An edge detector sees one assertion across the chunks of one segment.
BOOST_FIXTURE_TEST_CASE(chunking_does_not_create_edges, NoCallback) {
  auto s = session(8);
  s.add("INST_RETIRED:u:e=1");  // EN | USR | E | INST_RETIRED
  int calls = 0;
  pmc_test::between_chunks = [&] { ++calls; };
  s.run(workload({seg(1000, {{"instructions", 3}})}));
  BOOST_TEST(calls == 24);
  BOOST_TEST(pmc_test::device(s).read(counter_msr(s, 0)) == 1u);
  BOOST_TEST(s.read().at(0).value == 1u);
}

BOOST_FIXTURE_TEST_CASE(run_workload_refuses_impossible_widths, NoCallback) {
  const auto w = workload({seg(10, {{"instructions", 1}})});
  {
    auto s = session(1);
    s.add("INST_RETIRED:u");
    BOOST_TEST(throws([&] { s.run(w); }, errc::invalid_argument, {"width 1"}));
  }
  // A counter wider than 64 bits cannot be declared at all: the data loader refuses it.
  BOOST_TEST(throws(
      [] {
        pmc::EventCatalog c;
        c.load_string("backend = \"wide\"\n[pmu]\n[[pmu.counters]]\ncount = 1\nwidth = 65\ncontrol = 0x186\n"
                      "counter = 0xC1\n",
                      "wide.toml", "wide");
      },
      errc::attribute_value, {"wide.toml", "width"}));
  // 200 events in one cycle cannot stay below 2^7 = 128 between two calls.
  {
    auto s = session(8);
    s.add("INST_RETIRED:u");
    const auto w200 = workload({seg(10, {{"instructions", 200}})});
    BOOST_TEST(throws([&] { s.run(w200); }, errc::invalid_argument, {"segment 1"}));
  }
  // No callback is allowed too; 64-bit counters take a workload in one chunk.
  auto s = session(64);
  s.add("INST_RETIRED:u");
  const std::uint64_t before = pmc_test::chunks_run;
  s.run(w);
  BOOST_TEST(pmc_test::chunks_run - before == 1u);
  BOOST_TEST(pmc_test::device(s).read(counter_msr(s, 0)) == 10u);
  BOOST_TEST(s.read().at(0).value == 10u);
}

BOOST_AUTO_TEST_SUITE_END()
