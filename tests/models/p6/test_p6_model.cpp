#define BOOST_TEST_MODULE p6_model
#include <boost/test/unit_test.hpp>

// The P6 device model against docs/hardware/p6.md: its registers, and the Pentium M's
// IA32_MISC_ENABLE and hardware-prefetch filter. Every expected value below is worked out by hand
// from the fact sheet (section numbers in brackets; "item N" is section 6, "Behaviours worth a
// test"), never taken from a run of the model. Counting is in test_p6_model_counting.cpp, the
// chunking of a session's workload in test_p6_model_chunking.cpp.

#include "p6_model_support.hpp"
#include "support/models.hpp"

#include <memory>
#include <string>

using namespace p6_model_test;

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
