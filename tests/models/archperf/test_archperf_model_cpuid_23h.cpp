#define BOOST_TEST_MODULE archperf_model_cpuid_23h
#include <boost/test/unit_test.hpp>

// The architectural PMU device model against docs/hardware/archperf.md: CPUID leaf 23H, which gives
// each core type of a hybrid part its own counters. Every expected value below is worked out by
// hand (from the test dumps' bytes where a test reads one), never taken from a run of the model.
// The fact sheet does not describe leaf 23H: the rules tested here are [U] policies of
// sim/models/archperf/archperf_model.hpp (the comment below).

#include "archperf_model_support.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

using namespace archperf_model_test;

// =============================================================================================
// CPUID leaf 23H: hybrid parts, whose core types each have their own counters. The fact sheet
// does not describe leaf 23H, so every rule tested here is a [U] policy of the model
// (sim/models/archperf/archperf_model.hpp, "CPUID leaf 23H"): 23H counts when CPUID.0:EAX >= 23H,
// CPUID.(7,1):EAX[8] = 1 and CPUID.23H.0:EAX[1] = 1; then sub-leaf 1 EAX is the general-purpose
// counter bitmap and EBX the fixed one, replacing leaf 0AH's counts; widths stay leaf 0AH's.
namespace {

struct Leaf23 {
  std::uint32_t gp = 0;          // CPUID.23H.1:EAX
  std::uint32_t fixed = 0;       // CPUID.23H.1:EBX
  std::uint32_t max_leaf = 0x23; // CPUID.0:EAX
  std::uint32_t leaf7_top = 1;   // CPUID.(7,0):EAX: the highest sub-leaf of leaf 7
  bool announced = true;         // CPUID.(7,1):EAX[8]
  std::uint32_t subleaves = 0x3; // CPUID.23H.0:EAX: sub-leaves 0 and 1
  bool has_subleaf1 = true;      // the CpuInfo holds CPUID.23H.1
};

pmc::CpuInfo hybrid(const Geo& g, const Leaf23& l) {
  pmc::CpuInfo cpu = intel(g);
  cpu.max_leaf = l.max_leaf;
  cpu.hybrid = true;
  cpu.raw.set(7, 0, pmc::CpuidRegs{l.leaf7_top, 0, 0, 1U << 15});  // EDX[15]: hybrid
  cpu.raw.set(7, 1, pmc::CpuidRegs{l.announced ? (1U << 8) : 0U, 0, 0, 0});
  cpu.raw.set(0x23, 0, pmc::CpuidRegs{l.subleaves, 0, 0, 0});
  if (l.has_subleaf1) cpu.raw.set(0x23, 1, pmc::CpuidRegs{l.gp, l.fixed, 0, 0});
  return cpu;
}

std::unique_ptr<Device> hybrid_device(const Geo& g, const Leaf23& l) {
  return std::make_unique<pmc::sim::ArchPerfDevice>(hybrid(g, l));
}

pmc::CpuInfo test_dump(const char* name) {
  return pmc::load_cpuid_dump(std::filesystem::path(PMC_TEST_DATA) / "cpuid" / name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cpuid_23h)

// tests/data/cpuid/archperf-hybrid-mtl.txt (Meteor Lake, read on an E-core), by hand from its
// bytes:
//   leaf 0     EAX = 0x00000023            -> maximum basic leaf 23H: leaf 23H can be read;
//   leaf 7.1   EAX = 0x00200910            -> 0x910 = bits 4, 8, 11: bit 8 set, leaf 23H exists;
//   leaf 23H.0 EAX = 0x00000003            -> bits 0, 1: sub-leaf 1 exists;
//   leaf 23H.1 EAX = 0x000000FF            -> general-purpose counters 0-7 (eight);
//              EBX = 0x00000007            -> fixed counters 0, 1, 2 (no FIXED_CTR3);
//   leaf 0AH   EAX = 0x07300605            -> version 5, EAX[15:8] = 6 counters (replaced by
//                                             23H's eight), EAX[23:16] = 0x30 = 48 bits,
//                                             EAX[31:24] = 7 events;
//              ECX = 0x00000007, EDX = 0x00008603 -> EDX[4:0] = 3, EDX[12:5] = 0x8603 >> 5 =
//                                             0x430, & 0xFF = 0x30 = 48 bits, EDX[15] = 1
//                                             (AnyThread deprecated); replaced by 23H's EBX;
//   leaf 1     ECX = 0x7FFEFBFF            -> bit 15 (0xFBFF: 1111 1011 1111 1111) set: PDCM,
//                                             so IA32_PERF_CAPABILITIES with FW_WRITE [U] and
//                                             IA32_A_PMC0-7 at 0x4C1-0x4C8.
// So: IA32_PMC0-7 (0xC1-0xC8), IA32_PERFEVTSEL0-7 (0x186-0x18D), 48 bits wide; GLOBAL_CTRL
// resets to 0xFF and accepts 0x7_0000_00FF; 0xC9 (IA32_PMC8) and 0x30C (FIXED_CTR3) #GP.
BOOST_AUTO_TEST_CASE(meteor_lake_e_core_counters_from_cpuid_23h) {
  const pmc::CpuInfo cpu = test_dump("archperf-hybrid-mtl.txt");
  BOOST_TEST(cpu.arch.gp_counters == 6u);  // leaf 0AH alone would give six
  auto d = std::make_unique<pmc::sim::ArchPerfDevice>(cpu);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFFu);
  for (unsigned i = 0; i < 8; ++i) {
    BOOST_TEST(d->read(ia32_pmc(i)) == 0u, "PMC" << i);
    BOOST_TEST(d->read(evtsel(i)) == 0u, "PERFEVTSEL" << i);
    BOOST_TEST(d->read(a_pmc(i)) == 0u, "A_PMC" << i);
  }
  // Past IA32_PMC7 the model names counter MSRs only up to the last present counter (the [U]
  // rule of kNamedGp: 0xCE is not IA32_PMC13), so 0xC9 is an unimplemented MSR, as on Ice Lake;
  // absent counters below it are named with CPUID.23H (non_contiguous_bitmaps).
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(8)); }, {"rdmsr", "0xc9"}));
  BOOST_TEST(gp_fault([&] { d->write(evtsel(8), 0); }, {"wrmsr", "0x18e"}));
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(8), 0); }, {"wrmsr", "0x4c9"}));
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "IA32_FIXED_CTR3", "CPUID.23H says fixed counter 3 is absent",
                       "fixed counters are 0, 1, 2"}));
  d->write(GLOBAL_CTRL, 0x7000000FFULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x7000000FFu);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(8)); },
                      {"bit 8", "CPUID.23H says general-purpose counter 8 is absent"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(3)); },
                      {"bit 35", "CPUID.23H says fixed counter 3 is absent"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(8); }, {"RDPMC", "general-purpose counter 8"}));
  // AnyThread is deprecated (EDX[15] = 1) on the counters 23H adds too.
  BOOST_TEST(gp_fault([&] { d->write(evtsel(7), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL7", "bit 21", "deprecated"}));

  // PMC6 and PMC7 (the two leaf 0AH does not report) count and overflow like the others.
  d->write(evtsel(6), EN | USR | BRANCHES);
  d->write(evtsel(7), EN | USR | OS | INT | INSTRUCTIONS);
  d->write(a_pmc(7), TWO48 - 100);  // 100 instructions to the 48-bit wrap
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(7), TWO48); }, {"IA32_A_PMC7", "bit 48"}));
  d->run(seg(50, {{"instructions", 3}, {"branches", 1}}));  // 150 instructions: wraps once
  BOOST_TEST(d->read(ia32_pmc(6)) == 50u);
  BOOST_TEST(d->read(ia32_pmc(7)) == 50u);  // 2^48 - 100 + 150 - 2^48
  BOOST_TEST(d->rdpmc(7) == 50u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(7));
  BOOST_TEST(d->interrupts() == 1u);
  d->write(GLOBAL_OVF_CTRL, bit(7));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(6) | bit(7) | bit(63)));  // INT on PMC7: PMI_InUse
}

// tests/data/cpuid/archperf-hybrid-adl.txt (Alder Lake, read on a P-core), by hand: leaf 0
// EAX = 0x20 (no leaf 23H to read) and leaf 7.1 EAX = 0x00400810 (bits 4, 11, 22: bit 8 clear).
// Leaf 0AH alone: EAX = 0x07300605 -> 6 general-purpose counters of 48 bits; ECX = 7,
// EDX[4:0] = 3 -> fixed counters 0-2. GLOBAL_CTRL resets to 0x3F; 0xC7 (IA32_PMC6) #GPs
// with leaf 0AH's message.
BOOST_AUTO_TEST_CASE(alder_lake_p_core_without_cpuid_23h_uses_leaf_0ah) {
  auto d = std::make_unique<pmc::sim::ArchPerfDevice>(test_dump("archperf-hybrid-adl.txt"));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3Fu);
  for (unsigned i = 0; i < 6; ++i) BOOST_TEST(readable(*d, ia32_pmc(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(6)); },
                      {"0xc7", "IA32_PMC6", "this PMU has 6 general-purpose counters"}));
  BOOST_TEST(!throws([&] { (void)d->read(ia32_pmc(6)); }, errc::register_fault, {"CPUID.23H"}));
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "fixed counters are 0, 1, 2"}));
}

// [U] The gate: 23H replaces leaf 0AH's four counters (GLOBAL_CTRL reset 0xF) only when all
// announcements hold. 23H.1 here says two general counters (EAX = 0b11, reset 0x3) and fixed
// counter 0 only (EBX = 1).
BOOST_AUTO_TEST_CASE(cpuid_23h_counts_only_when_announced) {
  const Leaf23 l{.gp = 0x3, .fixed = 0x1};
  auto used = hybrid_device({}, l);
  BOOST_TEST(used->read(GLOBAL_CTRL) == 0x3u);
  BOOST_TEST(!readable(*used, ia32_pmc(2)));
  BOOST_TEST(!readable(*used, fixed_ctr(1)));
  struct Case {
    const char* what;
    Leaf23 leaf;
  };
  Leaf23 low_max = l, not_announced = l, no_subleaf_bit = l, no_subleaf = l, no_leaf71 = l;
  low_max.max_leaf = 0x22;      // leaf 23H beyond CPUID.0:EAX (the table still holds it)
  no_leaf71.leaf7_top = 0;      // sub-leaf (7,1) beyond CPUID.(7,0):EAX (the table still holds it)
  not_announced.announced = false;
  no_subleaf_bit.subleaves = 0x1;  // 23H.0:EAX[1] = 0
  no_subleaf.has_subleaf1 = false;
  for (const Case& c : {Case{"CPUID.0:EAX = 22H", low_max},
                        Case{"CPUID.(7,1):EAX[8] = 0", not_announced},
                        Case{"CPUID.(7,0):EAX = 0", no_leaf71},
                        Case{"CPUID.23H.0:EAX[1] = 0", no_subleaf_bit},
                        Case{"no sub-leaf 1 in the CpuInfo", no_subleaf}}) {
    auto d = hybrid_device({}, c.leaf);
    BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFu, c.what);  // leaf 0AH: four counters
    BOOST_TEST(readable(*d, ia32_pmc(3)), c.what);
    BOOST_TEST(readable(*d, fixed_ctr(2)), c.what);
    BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(4)); }, {"this PMU has 4 general"}),
               c.what);
  }
}

// [U] Bitmaps with holes. 23H.1 EAX = 0x2D = 0b10'1101: general-purpose counters 0, 2, 3, 5;
// EBX = 0x9 = 0b1001: fixed counters 0 and 3. Leaf 0AH (version 5, eight 48-bit general
// counters, fixed 0-2 through EDX[4:0] = 3 and ECX = 0x7) says otherwise and is ignored:
// PMC1, PMC4, PMC6, PMC7 and FIXED_CTR1/2 do not exist, FIXED_CTR3 does.
BOOST_AUTO_TEST_CASE(non_contiguous_bitmaps) {
  auto d = hybrid_device({.version = 5, .gp = 8, .fixed = 3, .bitmap = 0x7,
                          .anythread_deprecated = true},
                         {.gp = 0x2D, .fixed = 0x9});
  // Reset: EN_PMCi for every present i [U]: 0x2D.
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x2Du);
  for (unsigned i : {0U, 2U, 3U, 5U}) {
    BOOST_TEST(readable(*d, ia32_pmc(i)), i);
    BOOST_TEST(readable(*d, evtsel(i)), i);
    BOOST_TEST(readable(*d, a_pmc(i)), i);
  }
  for (unsigned i : {1U, 4U, 6U, 7U}) {
    const std::string absent = "CPUID.23H says general-purpose counter " + std::to_string(i) +
                               " is absent";
    BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(i)); },
                        {"rdmsr", "IA32_PMC" + std::to_string(i), absent, "0, 2, 3, 5"}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(ia32_pmc(i), 0); }, {"wrmsr", absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(evtsel(i), EN); },
                        {"IA32_PERFEVTSEL" + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(a_pmc(i), 0); },
                        {"IA32_A_PMC" + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { (void)d->rdpmc(i); }, {"RDPMC", absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(i)); },
                        {"bit " + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_OVF_CTRL, bit(i)); }, {absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS_SET, bit(i)); }, {absent}), i);
  }
  BOOST_TEST(readable(*d, fixed_ctr(0)));
  BOOST_TEST(readable(*d, fixed_ctr(3)));
  for (unsigned i : {1U, 2U}) {
    const std::string absent = "CPUID.23H says fixed counter " + std::to_string(i) + " is absent";
    BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(i)); },
                        {"IA32_FIXED_CTR" + std::to_string(i), absent, "fixed counters are 0, 3",
                         "CPUID.23H.1:EBX = 0x9"}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, fixed_ctrl(i, F_USR)); },
                        {"bit " + std::to_string(4 * i + 1), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(i)); }, {absent}), i);
    BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000000 | i); }, {"RDPMC", absent}), i);
  }
  BOOST_TEST(d->rdpmc(0x40000003) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(40); }, {"counter 40 is beyond CPUID.23H's bitmap"}));

  // Everything present counts: GP 0, 2, 3, 5 and fixed 0, 3, in 10 user cycles of 2
  // instructions, 1 branch and 4 slots.
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(evtsel(2), EN | USR | BRANCHES);
  d->write(evtsel(3), EN | USR | CORE_CYCLES);
  d->write(evtsel(5), EN | USR | INT | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR) | fixed_ctrl(3, F_USR | F_PMI));
  d->write(GLOBAL_CTRL, 0x2D | fixed_bit(0) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x90000002Du);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(2) | bit(3) | bit(5) | fixed_bit(0) |
                                       fixed_bit(3) | bit(63)));
  d->run(seg(10, {{"instructions", 2}, {"branches", 1}, {"slots", 4}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 20u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(5)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 40u);
  // Status bits of the present counters: set through 0x391 (v4+), cleared through 0x390.
  d->write(GLOBAL_STATUS_SET, bit(5) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(5) | fixed_bit(3)));
  d->write(GLOBAL_OVF_CTRL, bit(5) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
}

// [U] 23H replaces leaf 0AH's counts outright; widths and everything else stay leaf 0AH's.
BOOST_AUTO_TEST_CASE(cpuid_23h_replaces_leaf_0ah_counts) {
  // Version 2 with EDX[4:0] = 0 would get the Core 2 quirk's three fixed counters; with 23H
  // saying none (EBX = 0), there are none.
  auto v2 = hybrid_device({.version = 2, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0},
                          {.gp = 0x3, .fixed = 0});
  BOOST_TEST(gp_fault([&] { (void)v2->read(fixed_ctr(0)); },
                      {"0x309", "CPUID.23H says fixed counter 0 is absent", "no fixed counters"}));
  BOOST_TEST(v2->read(GLOBAL_CTRL) == 0x3u);
  // EAX[15:8] is not consulted: 40 counters there (beyond GLOBAL_CTRL) are no error when 23H
  // gives the bitmap; the width (EAX[23:16] = 40) still comes from leaf 0AH.
  auto many = hybrid_device({.gp = 40, .gp_width = 40}, {.gp = 0x1, .fixed = 0x1});
  many->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(many->read(ia32_pmc(0)) == 0xFF80000000u);  // sign-extended to 40 bits
  BOOST_TEST(!readable(*many, ia32_pmc(1)));
  // No general-purpose counter in leaf 0AH, one in 23H: it takes EAX[23:16] = 48 bits.
  auto none_in_0a = hybrid_device({.gp = 0}, {.gp = 0x1, .fixed = 0x1});
  none_in_0a->write(a_pmc(0), TWO48 - 1);
  BOOST_TEST(none_in_0a->read(ia32_pmc(0)) == TWO48 - 1);
  // A fixed width of 0 in EDX[12:5] with a 23H fixed counter: the GP width, as for the ECX
  // bitmap [U].
  auto no_fixed_width = hybrid_device({.version = 5, .gp_width = 40, .fixed = 0, .fixed_width = 0},
                                      {.gp = 0x1, .fixed = 0x4});
  no_fixed_width->write(fixed_ctr(2), TWO40 - 1);
  BOOST_TEST(gp_fault([&] { no_fixed_width->write(fixed_ctr(2), TWO40); }, {"bit 40"}));
  // A fixed counter beyond FIXED_CTR_CTRL's 16 blocks is refused, naming 23H.
  BOOST_TEST(throws([] { (void)hybrid_device({}, {.gp = 0x1, .fixed = bit(16) | 1}); },
                    errc::not_supported, {"CPUID.23H.1:EBX", "fixed counter 16"}));
  // Version 1 has no fixed counters whatever EBX says.
  auto v1 = hybrid_device({.version = 1, .gp = 2, .fixed = 0, .fixed_width = 0},
                          {.gp = 0x1, .fixed = 0x7});
  BOOST_TEST(gp_fault([&] { (void)v1->read(fixed_ctr(0)); }, {"version 1 has no fixed counters"}));
  BOOST_TEST(!readable(*v1, ia32_pmc(1)));
  // No counters at all in 23H.1: every counter MSR faults; GLOBAL_CTRL resets to 0.
  auto empty = hybrid_device({}, {.gp = 0, .fixed = 0});
  BOOST_TEST(empty->read(GLOBAL_CTRL) == 0u);
  BOOST_TEST(gp_fault([&] { (void)empty->read(ia32_pmc(0)); },
                      {"CPUID.23H says general-purpose counter 0 is absent", "are none"}));
}

BOOST_AUTO_TEST_SUITE_END()
