#define BOOST_TEST_MODULE archperf_model
#include <boost/test/unit_test.hpp>

// The architectural PMU device model (versions 1-5) against docs/hardware/archperf.md: the geometry
// CPUID gives it (versions, counters, widths, the Core 2 quirk, the version 5 fixed-counter
// bitmap), and workloads run through a session. Every expected value below is worked out by hand
// from the fact sheet (section numbers in brackets; "item N" is section 8, "Behaviours worth a
// test"), never taken from a run of the model. Policies the sheet leaves open ([U]) are the ones
// sim/models/archperf/archperf_model.hpp lists. CPUID leaf 23H, the registers and counting are in
// test_archperf_model_cpuid_23h.cpp, test_archperf_model_registers.cpp and
// test_archperf_model_counting.cpp.

#include "archperf_model_support.hpp"
#include "session_impl.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <memory>

using namespace archperf_model_test;

// =============================================================================================
BOOST_AUTO_TEST_SUITE(geometry)

// The device a session gets is the model plugin's, found by name (Context::make_device); an
// unknown name is not_found naming it and where model plugins were looked for.
BOOST_AUTO_TEST_CASE(make_device_knows_archperf) {
  auto d = device({});
  BOOST_TEST(d->name() == "archperf");
  BOOST_TEST(pmc_test::plugin_device("archperf", intel({})).device->name() == "archperf");
  BOOST_TEST(throws([] { (void)pmc_test::plugin_device("archperf2", intel({})); }, errc::not_found,
                    {"'archperf2'", "not installed", PMC_PLUGIN_DIR}));
}

// Version 0 has no architectural PMU [1]: the model refuses the CPU, naming it.
BOOST_AUTO_TEST_CASE(version_0_is_not_supported) {
  BOOST_TEST(throws([] { (void)device({.version = 0}); }, errc::not_supported,
                    {"GenuineIntel family 6 model 85 stepping 4", "CPUID.0AH:EAX[7:0] = 0"}));
  // A bundled dump without leaf 0AH: the Pentium III.
  BOOST_TEST(throws(
      [] {
        (void)std::make_unique<pmc::sim::ArchPerfDevice>(
            pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "pentium-iii.txt"));
      },
      errc::not_supported, {"family 6 model 8", "architectural performance monitoring"}));
}

// [U] Geometries the register layouts cannot hold are refused.
BOOST_AUTO_TEST_CASE(impossible_geometries_are_not_supported) {
  BOOST_TEST(throws([] { (void)device({.gp = 33}); }, errc::not_supported, {"33"}));
  BOOST_TEST(throws([] { (void)device({.gp_width = 0}); }, errc::not_supported, {"0-bit"}));
  BOOST_TEST(throws([] { (void)device({.gp_width = 65}); }, errc::not_supported, {"65-bit"}));
  BOOST_TEST(throws([] { (void)device({.fixed_width = 72}); }, errc::not_supported, {"72-bit"}));
  BOOST_TEST(throws([] { (void)device({.version = 5, .fixed = 17}); }, errc::not_supported,
                    {"fixed counter 16"}));
  BOOST_TEST(throws([] { (void)device({.version = 5, .fixed = 0, .bitmap = bit(20)}); },
                    errc::not_supported, {"fixed counter 20"}));
  // Before version 5 ECX is reserved [1]: the same bitmap is ignored, no error.
  BOOST_TEST(readable(*device({.version = 4, .fixed = 3, .bitmap = bit(20)}), fixed_ctr(2)));
}

// Version 1 (Core Solo/Duo: 2 counters [6]): GP counters and event selects only. No fixed
// counters and no global MSRs (the sheet's recommendation for the [S-conflict] of [2]).
BOOST_AUTO_TEST_CASE(version_1) {
  auto d = device({.version = 1, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0,
                   .pdcm = false});
  for (std::uint32_t msr : {ia32_pmc(0), ia32_pmc(1), evtsel(0), evtsel(1)})
    BOOST_TEST(d->read(msr) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(2)); },
                      {"rdmsr", "0xc3", "IA32_PMC2", "2 general"}));
  BOOST_TEST(gp_fault([&] { d->write(evtsel(2), 0); }, {"wrmsr", "0x188", "IA32_PERFEVTSEL2"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(0)); },
                      {"0x309", "version 1 has no fixed counters"}));
  for (std::uint32_t msr : {FIXED_CTR_CTRL, GLOBAL_STATUS, GLOBAL_CTRL, GLOBAL_OVF_CTRL}) {
    BOOST_TEST(gp_fault([&] { (void)d->read(msr); }, {"rdmsr", "version 1"}), msr);
    BOOST_TEST(gp_fault([&] { d->write(msr, 0); }, {"wrmsr", "version 1"}), msr);
  }
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_CTRL); }, {"0x38f", "IA32_PERF_GLOBAL_CTRL"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_STATUS_SET); }, {"0x391", "version 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_INUSE); }, {"0x392", "version 4"}));
  // No PDCM: no IA32_PERF_CAPABILITIES and no A_PMC.
  BOOST_TEST(gp_fault([&] { (void)d->read(PERF_CAPABILITIES); }, {"0x345", "PDCM"}));
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(0), 1); }, {"0x4c1", "CPUID.1:ECX[15] = 0"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000000); }, {"RDPMC", "fixed counter 0"}));
  // AnyThread is reserved before version 3 [3].
  BOOST_TEST(gp_fault([&] { d->write(evtsel(0), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL0", "bit 21", "version 3"}));
}

// Version 2 with its EDX data (an Atom-like part): three fixed counters, global MSRs, no 0x391/
// 0x392 (version 4), no AnyThread (version 3).
BOOST_AUTO_TEST_CASE(version_2) {
  auto d = device({.version = 2, .gp = 2, .gp_width = 40, .fixed = 3, .fixed_width = 40});
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "IA32_FIXED_CTR3", "fixed counters are 0, 1, 2"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0u);
  BOOST_TEST(d->read(GLOBAL_OVF_CTRL) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS_SET, 1); }, {"0x391", "version 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_INUSE); }, {"0x392", "version 4"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, F_ANY); },
                      {"IA32_FIXED_CTR_CTRL", "bit 2", "version 3"}));
  d->write(FIXED_CTR_CTRL, 0xBBB);  // OS | USR | PMI for counters 0..2
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0xBBBu);
  // PDCM and version 2: PERF_CAPABILITIES with FW_WRITE [U].
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0x2000u);
  BOOST_TEST(d->read(a_pmc(1)) == 0u);
}

// The Core 2 quirk [1, U]: version 2 with EDX = 0. The hardware has FIXED_CTR0..2, as wide as
// the GP counters (40 bits); the bundled Core 2 dump decodes with 0 fixed counters.
BOOST_AUTO_TEST_CASE(version_2_core2_quirk_from_the_bundled_dump) {
  const pmc::CpuInfo cpu = core2_cpu();
  BOOST_TEST(cpu.arch.version == 2u);
  BOOST_TEST(cpu.arch.fixed_counters == 0u);
  BOOST_TEST(cpu.arch.fixed_width == 0u);
  auto d = core2();
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(d->read(fixed_ctr(i)) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(2)); }, {"0xc3"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3u);
  d->write(GLOBAL_CTRL, 0x700000003ULL);  // the three fixed enables exist
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x700000003u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(3)); }, {"bit 35"}));
  // Fixed width 40: 2^40 - 1 fits, bit 40 does not [4].
  d->write(fixed_ctr(1), TWO40 - 1);
  BOOST_TEST(d->read(fixed_ctr(1)) == TWO40 - 1);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(1), TWO40); },
                      {"IA32_FIXED_CTR1", "bit 40", "40-bit"}));
  // GP writes sign-extend bit 31 into 40 bits [4].
  d->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFF80000000u);
  // PDCM is set in the dump: PERF_CAPABILITIES with FW_WRITE [U], and A_PMC0/1.
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0x2000u);
  d->write(a_pmc(1), 0x123456789AULL);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0x123456789Au);
  // The fixed counters count: cycles on FIXED_CTR1 in user mode.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR));
  d->write(fixed_ctr(1), 0);
  d->run(seg(1000, {{"instructions", 2}}));
  BOOST_TEST(d->read(fixed_ctr(1)) == 1000u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // field 0: disabled
}

// The quirk is version 2's only: a version-3 CPUID with EDX = 0 (a hypervisor) has none [U].
BOOST_AUTO_TEST_CASE(quirk_applies_to_version_2_only) {
  auto d = device({.version = 3, .fixed = 0, .fixed_width = 0});
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(0)); }, {"0x309", "no fixed counters"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(0)); }, {"bit 32"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, F_OS); }, {"bit 0"}));
}

// Version 4 (Skylake-like): 0x391 and 0x392 exist, AnyThread allowed (not deprecated).
BOOST_AUTO_TEST_CASE(version_4) {
  auto d = device({});
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFu);
  BOOST_TEST(d->read(GLOBAL_STATUS_SET) == 0u);
  BOOST_TEST(d->read(GLOBAL_INUSE) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(4)); }, {"0xc5", "4 general"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(a_pmc(4)); }, {"0x4c5", "IA32_A_PMC4"}));
  d->write(evtsel(3), ANY | EN | USR | INSTRUCTIONS);
  BOOST_TEST(d->read(evtsel(3)) == (ANY | EN | USR | INSTRUCTIONS));
  d->write(FIXED_CTR_CTRL, 0xFFF);
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0xFFFu);
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, 0xF000); },
                      {"bit 12", "fixed counter 3 does not exist"}));
}

// Item 13: v5, EDX[4:0] = 1 and ECX = 0b101: fixed counters 0 and 2 exist, 1 does not.
BOOST_AUTO_TEST_CASE(item13_v5_fixed_bitmap_with_a_hole) {
  auto d = device({.version = 5, .fixed = 1, .bitmap = 0b101, .anythread_deprecated = true});
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(1)); },
                      {"0x30a", "IA32_FIXED_CTR1", "fixed counters are 0, 2"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(1), 0); }, {"wrmsr", "0x30a"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(3), 0); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR)); },
                      {"bit 5", "fixed counter 1 does not exist"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(1)); },
                      {"bit 33", "fixed counter 1"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000001); }, {"fixed counter 1"}));
  // 0 and 2 count: instructions and reference cycles.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR | F_OS) | fixed_ctrl(2, F_USR));
  d->write(GLOBAL_CTRL, fixed_bit(0) | fixed_bit(2));
  d->run(seg(100, {{"instructions", 3}}));
  d->run(seg(10, {{"instructions", 1}}, Mode::kernel));
  BOOST_TEST(d->read(fixed_ctr(0)) == 310u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 100u);  // user only; ref-cycles = cycles [U]
  BOOST_TEST(d->rdpmc(0x40000002) == 100u);
  // A bitmap beyond EDX with no EDX width: the fixed counters take the GP width [U].
  auto b = device({.version = 5, .gp_width = 40, .fixed = 0, .fixed_width = 0, .bitmap = 0b1000});
  BOOST_TEST(gp_fault([&] { (void)b->read(fixed_ctr(0)); }, {"fixed counters are 3"}));
  b->write(fixed_ctr(3), TWO40 - 1);
  BOOST_TEST(gp_fault([&] { b->write(fixed_ctr(3), TWO40); }, {"bit 40"}));
}

BOOST_AUTO_TEST_CASE(version_5_icelake_from_the_bundled_dump) {
  auto d = icelake();
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFFu);  // 8 GP counters
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(readable(*d, ia32_pmc(i)));
  BOOST_TEST(!readable(*d, ia32_pmc(8)));
  for (unsigned i = 0; i < 4; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(!readable(*d, fixed_ctr(4)));
  // FW_WRITE (13) and, Ice Lake being a top-down part (section 12), PERF_METRICS (15).
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0xA000u);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xF000000FFu);
  d->write(GLOBAL_CTRL, 0xF000000FFULL | bit(48));  // EN_PERF_METRICS exists
  BOOST_TEST(d->read(GLOBAL_CTRL) == (0xF000000FFULL | bit(48)));
  BOOST_TEST(d->read(0x329) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(49)); }, {"bit 49"}));
  // 48-bit counters.
  d->write(fixed_ctr(3), TWO48 - 1);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(3), TWO48); }, {"bit 48"}));
}

// [U] Versions above 5 follow the version-5 rules (the bitmap is honoured).
BOOST_AUTO_TEST_CASE(version_6_is_modelled_as_5) {
  auto d = device({.version = 6, .fixed = 0, .fixed_width = 48, .bitmap = 0b10});
  BOOST_TEST(readable(*d, fixed_ctr(1)));
  BOOST_TEST(!readable(*d, fixed_ctr(0)));
  BOOST_TEST(readable(*d, GLOBAL_INUSE));
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
BOOST_AUTO_TEST_SUITE(workloads)

// The shipped example through an Ice Lake, read every chunk of a 48-bit budget. Totals from the
// file's segments (worked out in its header comment). Session::run() chunks the workload; the
// session's device is the archperf model in a ChunkSpy, which sees each chunk. The session
// counts one event, and the counters are then programmed here, as the fact sheet gives them.
BOOST_AUTO_TEST_CASE(archperf_demo_example) {
  const auto w = pmc::load_workload(kSource / "examples" / "workloads" / "archperf-demo.toml");
  BOOST_TEST(w.total_cycles() == 6'000'000u);
  static const pmc_test::LoadedForTest backend("archperf");
  pmc::Session s(std::make_unique<pmc::detail::SessionImpl>(
      pmc_test::spy_context<pmc::sim::ArchPerfDevice>(backend, icelake_cpu())));
  s.add("instructions");
  s.start();  // a running session stays running through run()
  Device* d = &pmc_test::device(s);
  const u64 events[] = {INSTRUCTIONS | USR, INSTRUCTIONS | OS, BRANCHES | USR | OS,
                        BRANCH_MISSES | USR | OS, LLC_REFERENCES | USR | OS,
                        LLC_MISSES | USR | OS, REF_CYCLES | USR | OS,
                        umask(0x01) | 0xC2 | USR | OS};
  d->write(GLOBAL_CTRL, 0);
  for (unsigned i = 0; i < 8; ++i) d->write(evtsel(i), EN | events[i]);
  for (unsigned i = 0; i < 8; ++i) d->write(ia32_pmc(i), 0);
  for (unsigned i = 0; i < 4; ++i) d->write(fixed_ctr(i), 0);
  d->write(FIXED_CTR_CTRL, 0x3333);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  int chunks = 0;
  pmc_test::between_chunks = [&] { ++chunks; };
  const pmc::WorkloadRun run = s.run(w);
  pmc_test::between_chunks = nullptr;
  BOOST_TEST(s.running());
  BOOST_TEST(chunks == 6);  // one chunk per segment: no segment nears 2^47 events
  BOOST_TEST(run.cycles == 6'000'000u);
  const u64 want[] = {15'200'000, 500'000, 5'650'000, 200'000,
                      700'000,    500'000, 5'850'000, 20'000'000};
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(d->read(ia32_pmc(i)) == want[i], "counter " << i);
  BOOST_TEST(d->read(fixed_ctr(0)) == 15'700'000u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 5'750'000u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 5'850'000u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 23'000'000u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->interrupts() == 0u);
  BOOST_TEST(run.interrupts == 0u);
}

// Raw signals in TOML, quoted or as a dotted key (docs/workload-format.md).
BOOST_AUTO_TEST_CASE(raw_signals_from_toml) {
  const auto w = pmc::parse_workload(R"(
[[segment]]
cycles = 10
signals = { "raw.0x01C2" = 3 }

[[segment]]
cycles = 20
[segment.signals]
raw.0x01C2 = 5
)",
                                          "raw");
  auto d = device({});
  d->write(evtsel(0), EN | USR | umask(0x01) | 0xC2);
  for (std::size_t i = 0; i < w.size(); ++i) d->run(w.segment(i));
  BOOST_TEST(d->read(ia32_pmc(0)) == 130u);  // 10 x 3 + 20 x 5
}

BOOST_AUTO_TEST_SUITE_END()
