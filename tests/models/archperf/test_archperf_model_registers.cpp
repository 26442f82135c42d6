#define BOOST_TEST_MODULE archperf_model_registers
#include <boost/test/unit_test.hpp>

// The architectural PMU device model against docs/hardware/archperf.md: its registers (reset
// values, reserved bits, AnyThread, legacy and full-width counter writes, PERF_CAPABILITIES,
// GLOBAL_CTRL, the status registers, INUSE, RDPMC). Every expected value below is worked out by
// hand from the fact sheet (section numbers in brackets; "item N" is section 8, "Behaviours worth a
// test"), never taken from a run of the model. Policies the sheet leaves open ([U]) are the ones
// sim/models/archperf/archperf_model.hpp lists.

#include "archperf_model_support.hpp"

#include <string>

using namespace archperf_model_test;

// =============================================================================================
BOOST_AUTO_TEST_SUITE(registers)

// Item 3: reset: GLOBAL_CTRL = (1 << N) - 1, fixed counters globally disabled; the rest zero.
BOOST_AUTO_TEST_CASE(item3_reset_values) {
  struct Case {
    unsigned gp;
    u64 ctrl;
  };
  for (const Case& c : {Case{1, 0x1}, Case{2, 0x3}, Case{4, 0xF}, Case{8, 0xFF},
                        Case{32, 0xFFFFFFFF}}) {
    auto d = device({.gp = c.gp});
    BOOST_TEST(d->read(GLOBAL_CTRL) == c.ctrl, "N = " << c.gp);
    BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0u);
    BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
    for (unsigned i = 0; i < c.gp; ++i) {
      BOOST_TEST(d->read(ia32_pmc(i)) == 0u);
      BOOST_TEST(d->read(evtsel(i)) == 0u);
    }
  }
  // Consequence: a GP counter counts as soon as its EN is set; a fixed counter does not count
  // until GLOBAL_CTRL[32 + i] is set.
  auto d = device({});
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR));
  d->run(seg(100, {{"instructions", 2}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 200u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
}

BOOST_AUTO_TEST_CASE(unimplemented_msrs_fault_naming_the_address) {
  auto d = device({});
  BOOST_TEST(gp_fault([&] { (void)d->read(0x10); }, {"rdmsr", "0x10", "not implemented"}));
  BOOST_TEST(gp_fault([&] { d->write(0x1A0, 0); }, {"wrmsr", "0x1a0", "not implemented"}));
  BOOST_TEST(gp_fault([&] { d->write(0x1D9, bit(0)); }, {"0x1d9", "IA32_DEBUGCTL", "bit 0"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(0xC0); }, {"0xc0"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(0x393); }, {"0x393"}));
}

BOOST_AUTO_TEST_CASE(event_selects_read_back_and_reserved_bits_fault) {
  auto d = device({});  // v4: AnyThread writable
  d->write(evtsel(0), 0xFFFFFFFF);
  BOOST_TEST(d->read(evtsel(0)) == 0xFFFFFFFFu);
  d->write(evtsel(1), PC | E | INT | OS | USR | umask(0x34) | 0x56);
  BOOST_TEST(d->read(evtsel(1)) == 0x1F3456u);
  // 63:32 reserved (no TSX / PEBS bits in the model) [3, U]; a refused write changes nothing.
  for (unsigned b : {32U, 33U, 34U, 63U}) {
    BOOST_TEST(gp_fault([&] { d->write(evtsel(0), bit(b) | EN); },
                        {"IA32_PERFEVTSEL0", "0x186", "bit " + std::to_string(b), "63:32"}));
  }
  BOOST_TEST(d->read(evtsel(0)) == 0xFFFFFFFFu);
}

// Item 14: AnyThread with EDX[15] = 1 or version < 3 is rejected, in PERFEVTSEL (bit 21) and in
// FIXED_CTR_CTRL (bit 4i+2) [1, 3].
BOOST_AUTO_TEST_CASE(item14_anythread_rules) {
  auto ice = icelake();  // EDX[15] = 1
  BOOST_TEST(gp_fault([&] { ice->write(evtsel(5), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL5", "bit 21", "deprecated"}));
  BOOST_TEST(gp_fault([&] { ice->write(FIXED_CTR_CTRL, fixed_ctrl(3, F_ANY | F_USR)); },
                      {"IA32_FIXED_CTR_CTRL", "bit 14", "deprecated"}));
  ice->write(FIXED_CTR_CTRL, 0xBBBB);
  BOOST_TEST(ice->read(FIXED_CTR_CTRL) == 0xBBBBu);
  auto v2 = device({.version = 2});
  BOOST_TEST(gp_fault([&] { v2->write(evtsel(0), ANY); }, {"bit 21", "version 3"}));
  BOOST_TEST(gp_fault([&] { v2->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_ANY)); },
                      {"bit 6", "version 3"}));
  // Version 3 without deprecation accepts it; the model, one logical processor, counts the
  // same with and without it [U].
  auto v3 = device({.version = 3});
  v3->write(evtsel(0), ANY | EN | USR | INSTRUCTIONS);
  v3->write(evtsel(1), EN | USR | INSTRUCTIONS);
  v3->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_ANY | F_USR));
  v3->write(GLOBAL_CTRL, 0x3 | fixed_bit(0));
  v3->run(seg(10, {{"instructions", 4}}));
  BOOST_TEST(v3->read(ia32_pmc(0)) == 40u);
  BOOST_TEST(v3->read(ia32_pmc(1)) == 40u);
  BOOST_TEST(v3->read(fixed_ctr(0)) == 40u);
}

// Item 4: IA32_PMC0 keeps EAX sign-extended; IA32_A_PMC0 takes the full width [4].
BOOST_AUTO_TEST_CASE(item4_legacy_and_full_width_counter_writes) {
  auto d = device({});  // 48 bits, PDCM
  d->write(ia32_pmc(0), 0x180000000ULL);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFFFF80000000u);
  BOOST_TEST(d->rdpmc(0) == 0xFFFF80000000u);
  d->write(a_pmc(0), 0x180000000ULL);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0x180000000u);
  BOOST_TEST(d->read(a_pmc(0)) == 0x180000000u);  // the alias reads the same counter
  d->write(ia32_pmc(0), 0x7FFFFFFF);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0x7FFFFFFFu);
  d->write(ia32_pmc(0), 0xFFFFFFFF00000001ULL);  // EDX ignored, bit 31 = 0
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(ia32_pmc(3), 0x123456789ABCDEF0ULL);  // EAX = 0x9ABCDEF0, bit 31 set
  BOOST_TEST(d->read(ia32_pmc(3)) == 0xFFFF9ABCDEF0u);
  // A full-width write with a bit above the width is a #GP [U, design rule].
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(0), TWO48); }, {"IA32_A_PMC0", "bit 48", "48-bit"}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(a_pmc(0), TWO48 - 1);
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - 1);
}

// Item 5: A_PMC access when PERF_CAPABILITIES[13] = 0 is a #GP. Version 1 with PDCM has
// PERF_CAPABILITIES = 0 [U]; without PDCM there is no PERF_CAPABILITIES at all.
BOOST_AUTO_TEST_CASE(item5_a_pmc_needs_fw_write) {
  auto v1 = device({.version = 1, .fixed = 0, .fixed_width = 0, .pdcm = true});
  BOOST_TEST(v1->read(PERF_CAPABILITIES) == 0u);
  BOOST_TEST(gp_fault([&] { v1->write(a_pmc(0), 5); },
                      {"0x4c1", "IA32_PERF_CAPABILITIES[13] = 0"}));
  BOOST_TEST(gp_fault([&] { (void)v1->read(a_pmc(1)); }, {"0x4c2"}));
  auto nopdcm = device({.pdcm = false});
  BOOST_TEST(gp_fault([&] { (void)nopdcm->read(PERF_CAPABILITIES); }, {"0x345"}));
  BOOST_TEST(gp_fault([&] { nopdcm->write(a_pmc(0), 5); }, {"0x4c1", "CPUID.1:ECX[15] = 0"}));
  // PERF_CAPABILITIES is read-only [2].
  auto d = device({});
  BOOST_TEST(gp_fault([&] { d->write(PERF_CAPABILITIES, 0x2000); }, {"0x345", "read-only"}));
}

// Item 6: a fixed counter write with bits above EDX[12:5] is a #GP and changes nothing.
BOOST_AUTO_TEST_CASE(item6_fixed_counter_writes_above_the_width_fault) {
  auto d = device({.fixed_width = 44});
  d->write(fixed_ctr(2), 0xABCDEF01234ULL);
  BOOST_TEST(d->read(fixed_ctr(2)) == 0xABCDEF01234u);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(2), bit(44) | 1); },
                      {"IA32_FIXED_CTR2", "0x30b", "bit 44", "44-bit"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(0), bit(63)); }, {"bit 63"}));
  BOOST_TEST(d->read(fixed_ctr(2)) == 0xABCDEF01234u);
  d->write(fixed_ctr(0), bit(44) - 1);  // full width, no sign extension
  BOOST_TEST(d->read(fixed_ctr(0)) == bit(44) - 1);
}

BOOST_AUTO_TEST_CASE(global_ctrl_reserved_bits) {
  auto d = device({});  // 4 GP, 3 fixed
  d->write(GLOBAL_CTRL, 0x70000000FULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x70000000Fu);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(4)); },
                      {"IA32_PERF_GLOBAL_CTRL", "0x38f", "bit 4", "4 general-purpose"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(35)); }, {"bit 35", "fixed counter 3"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(48)); }, {"bit 48"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(63)); }, {"bit 63"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x70000000Fu);
}

// Which status bits 0x390 / 0x391 accept, by version [3, 6].
BOOST_AUTO_TEST_CASE(status_reset_and_set_bits_by_version) {
  auto v2 = device({.version = 2});
  v2->write(GLOBAL_OVF_CTRL, bit(62) | bit(63) | 0xF | 0x700000000ULL);
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(61)); },
                      {"IA32_PERF_GLOBAL_OVF_CTRL", "0x390", "bit 61", "version 3"}));
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(4)); }, {"bit 4"}));
  auto v3 = device({.version = 3});
  v3->write(GLOBAL_OVF_CTRL, bit(61));
  BOOST_TEST(gp_fault([&] { v3->write(GLOBAL_OVF_CTRL, CTR_FRZ); }, {"bit 59", "version 4"}));
  auto v4 = device({});
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_OVF_CTRL, bit(60)); },
                      {"IA32_PERF_GLOBAL_STATUS_RESET", "bit 60", "ASCI"}));
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_STATUS_SET, bit(48)); },
                      {"IA32_PERF_GLOBAL_STATUS_SET", "bit 48"}));
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_STATUS_SET, fixed_bit(3)); },
                      {"fixed counter 3"}));
  // Every defined bit: 0..3, 32..34, 55, 58, 59, 61, 62, 63.
  const u64 all = 0xF | 0x700000000ULL | bit(55) | bit(58) | bit(59) | bit(61) | bit(62) | bit(63);
  v4->write(GLOBAL_STATUS_SET, all);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == all);
  BOOST_TEST(v4->read(GLOBAL_STATUS_SET) == 0u);  // [U] reads return 0
  BOOST_TEST(v4->read(GLOBAL_OVF_CTRL) == 0u);
  v4->write(GLOBAL_OVF_CTRL, bit(55) | bit(63) | 0x5);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == (all & ~(bit(55) | bit(63) | 0x5)));
  v4->write(GLOBAL_OVF_CTRL, all);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == 0u);
}

// Item 9: v4 INUSE [3].
BOOST_AUTO_TEST_CASE(item9_v4_inuse) {
  auto d = device({});
  d->write(evtsel(2), USR | INSTRUCTIONS);  // non-zero event (EN not needed)
  BOOST_TEST(d->read(GLOBAL_INUSE) == bit(2));
  d->write(evtsel(2), EN | USR);  // event 0 with EN = 1
  BOOST_TEST(d->read(GLOBAL_INUSE) == 0u);
  d->write(evtsel(0), umask(0x01) | 0x3C);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(2, F_USR) | fixed_ctrl(1, F_OS));
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | fixed_bit(1) | fixed_bit(2)));
  // PMI_InUse (bit 63 [U]): any INT, or any fixed PMI bit, even with the field disabled.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_PMI));
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(63)));
  d->write(FIXED_CTR_CTRL, 0);
  d->write(evtsel(3), INT);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(63)));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_INUSE, 0); }, {"0x392", "read-only"}));
}

// Item 11: RDPMC conventions [5].
BOOST_AUTO_TEST_CASE(item11_rdpmc) {
  auto d = icelake();
  d->write(fixed_ctr(1), 0x123456789ABULL);
  d->write(a_pmc(7), 0xFEDCBA987654ULL);
  BOOST_TEST(d->rdpmc(0x40000001) == 0x123456789ABu);
  BOOST_TEST(d->rdpmc(7) == 0xFEDCBA987654u);
  BOOST_TEST(d->rdpmc(0x40000003) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000004); },
                      {"RDPMC", "0x40000004", "fixed counter 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(8); }, {"RDPMC", "8 general-purpose"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x80000000); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x80000001); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0xC0000001); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x60000000); }, {"bit 29"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x00010000); }, {"0x10000"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40010001); }, {"0x4001"}));
  // CPL 3 needs CR4.PCE.
  d->set_reader_cpl(3);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000001); }, {"CPL 3", "CR4.PCE"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(7); }, {"CPL 3", "CR4.PCE"}));
  d->set_cr4_pce(true);
  BOOST_TEST(d->rdpmc(0x40000001) == 0x123456789ABu);
  d->set_cr4_pce(false);
  d->set_reader_cpl(0);
  BOOST_TEST(d->rdpmc(7) == 0xFEDCBA987654u);
  BOOST_TEST(throws([&] { d->set_reader_cpl(4); }, errc::invalid_argument, {"CPL 4"}));
}

BOOST_AUTO_TEST_SUITE_END()
