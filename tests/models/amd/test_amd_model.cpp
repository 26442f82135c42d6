#define BOOST_TEST_MODULE amd_model
#include <boost/test/unit_test.hpp>

// The AMD core PMU device model on its own against docs/hardware/amd.md: the geometry CPUID gives
// it, the enables, counter writes, the legacy and extended registers, RDPMC, PerfMonV2's global
// registers, the host and guest bits, the event select's bits by family, CntMask / INV / Edge, the
// K7's interrupt, privilege, halt and the generic signals. The counters an event may use (family
// 15h, Zen merge pairs) are in test_amd_model_restrictions.cpp, the amd backend's driver through
// sessions in test_amd_model_sessions.cpp. Every expected value below is worked out by hand from
// the docs (section numbers in brackets; "item N" is section 7, "Behaviours worth a test";
// "policy N" section 8), never taken from a run of the model or the backend. The model's own
// choices where the docs leave one open are the ones sim/models/amd/amd_model.hpp lists.

#include "amd_model_support.hpp"

#include <pmc/hal.hpp>

#include <utility>

using namespace amd_model_test;

// =============================================================================================
// The model on its own.

BOOST_AUTO_TEST_CASE(geometry_follows_cpuid) {
  AmdDevice k7(k7_cpu());
  BOOST_TEST(k7.counters() == 4u);
  BOOST_TEST(!k7.ext_core());
  BOOST_TEST(!k7.perfmon_v2());
  AmdDevice zen3(zen3_cpu());
  BOOST_TEST(zen3.counters() == 6u);
  BOOST_TEST(zen3.ext_core());
  BOOST_TEST(!zen3.perfmon_v2());
  AmdDevice genoa(genoa_cpu());
  BOOST_TEST(genoa.counters() == 6u);
  BOOST_TEST(genoa.perfmon_v2());
  AmdDevice kvm(dump_cpu("amd-zen4-kvm.txt"));
  BOOST_TEST(kvm.counters() == 4u);
  BOOST_TEST(!kvm.ext_core());
  BOOST_TEST(!kvm.perfmon_v2());
  // K5/K6 and other vendors: no such PMU.
  BOOST_CHECK_THROW(AmdDevice(dump_cpu("amd-k6.txt")), pmc::Error);
  BOOST_CHECK_THROW(AmdDevice(dump_cpu("pentium-iii.txt")), pmc::Error);
  // The plugin builds the same model by name.
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen3.txt"));
  BOOST_TEST(hal.pmu().device_model == "amd");
}

BOOST_AUTO_TEST_CASE(item1_each_perfevtsel_has_its_own_enable) {
  // EN only in PerfEvtSel2: only counter 2 counts [3.4]. 100 cycles x 3 instructions = 300.
  AmdDevice d(k7_cpu());
  for (unsigned i = 0; i < 4; ++i) d.write(evtsel(i), INSTRUCTIONS | USR | OS | (i == 2 ? EN : 0));
  d.run(seg(100, {{"instructions", 3}}));
  BOOST_TEST(d.read(perfctr(0)) == 0u);
  BOOST_TEST(d.read(perfctr(1)) == 0u);
  BOOST_TEST(d.read(perfctr(2)) == 300u);
  BOOST_TEST(d.read(perfctr(3)) == 0u);
  // PerfMonV2 with GlobalCtl at its reset value (all counters, policy 3): EN alone still counts.
  AmdDevice g(genoa_cpu());
  BOOST_TEST(g.read(GlobalCtl) == 0x3Fu);  // six counters
  g.write(perf_ctl(4), INSTRUCTIONS | USR | OS | EN);
  g.run(seg(100, {{"instructions", 3}}));
  BOOST_TEST(g.read(perf_ctr(4)) == 300u);
  BOOST_TEST(g.read(perf_ctr(5)) == 0u);
}

BOOST_AUTO_TEST_CASE(item2_negative_preset_wraps_with_an_interrupt) {
  // PerfCtr0 <- 0xFFFF_FFFF_FFFF_FFF0 (-16) reads back 0x0000_FFFF_FFFF_FFF0 [4, policy 1, 2].
  for (const char* file : {"amd-k7.txt", "amd-zen3.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(PerfCtr0, 0xFFFF'FFFF'FFFF'FFF0ULL);
      BOOST_TEST(d.read(PerfCtr0) == 0x0000'FFFF'FFFF'FFF0ULL);
      BOOST_TEST((d.read(PerfCtr0) & TWO47) != 0u);  // bit 47 set
      d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS | INT | EN);
      d.run(seg(15, {{"instructions", 1}}));  // 15 events: 0xFFFF_FFFF_FFFF, no wrap yet
      BOOST_TEST(d.read(PerfCtr0) == 0x0000'FFFF'FFFF'FFFFULL);
      BOOST_TEST(d.interrupts() == 0u);
      d.run(seg(1, {{"instructions", 1}}));  // the 16th: 0, one interrupt
      BOOST_TEST(d.read(PerfCtr0) == 0u);
      BOOST_TEST((d.read(PerfCtr0) & TWO47) == 0u);  // bit 47 went 1 -> 0
      BOOST_TEST(d.interrupts() == 1u);
      // No PerfMonV2: there is no status register to change [2.3].
      BOOST_TEST(gp([&] { (void)d.read(GlobalStatus); }));
    }
  }
}

BOOST_AUTO_TEST_CASE(item3_counter_writes_keep_48_bits_and_policy_on_the_high_bits) {
  AmdDevice d(zen3_cpu());
  // 0x0000_8000_0000_0000 (zero-extended, bit 47 set) reads back 0x8000_0000_0000 [4].
  d.write(PERF_CTR0, 0x0000'8000'0000'0000ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0000ULL);
  // Sign-extended: 0xFFFF_8000_0000_0000 keeps 47:0 and reads with 63:48 = 0 [policy 1, 2].
  d.write(PERF_CTR0, 0xFFFF'8000'0000'0001ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0001ULL);
  // Bits 63:48 that are neither 0 nor the sign extension of bit 47: #GP, nothing written [policy 1].
  for (u64 bad : {0x0001'0000'0000'0000ULL, 0xFFFF'0000'0000'0005ULL, 0x8000'0000'0000'0000ULL,
                  0x0000'8000'0000'0000ULL | (1ULL << 63)}) {
    BOOST_TEST(gp([&] { d.write(PERF_CTR0, bad); }), std::hex << bad);
    BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0001ULL);
  }
  // The full 48 bits are writable (no sign extension from bit 31 as on the P6) [4].
  d.write(PERF_CTR0, 0x0000'1234'8765'4321ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x1234'8765'4321ULL);
}

BOOST_AUTO_TEST_CASE(item4_legacy_registers_mirror_the_first_four_with_perfctrextcore) {
  AmdDevice d(zen3_cpu());
  // 0xC0010000 <-> 0xC0010200 and 0xC0010004 <-> 0xC0010201 [2.2], both ways.
  d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS);
  BOOST_TEST(d.read(PERF_CTL0) == (INSTRUCTIONS | USR | OS));
  d.write(perf_ctl(3), CYCLES | OS);
  BOOST_TEST(d.read(evtsel(3)) == (CYCLES | OS));  // 0xC0010003 <-> 0xC0010206
  d.write(PERF_CTR0, 1234);
  BOOST_TEST(d.read(PerfCtr0) == 1234u);
  d.write(perfctr(3), 77);
  BOOST_TEST(d.read(perf_ctr(3)) == 77u);  // 0xC0010007 <-> 0xC0010207
  // Counters 4 and 5 exist only at 0xC0010208-0xC001020B: writing them changes no legacy register.
  d.write(perf_ctl(4), CYCLES | USR);
  d.write(perf_ctr(5), 99);
  BOOST_TEST(d.read(0xC0010208) == (CYCLES | USR));
  BOOST_TEST(d.read(0xC001020B) == 99u);
  BOOST_TEST(d.read(evtsel(0)) == (INSTRUCTIONS | USR | OS));
  BOOST_TEST(d.read(perfctr(0)) == 1234u);
  BOOST_TEST(gp([&] { (void)d.read(0xC0010008); }));  // there is no legacy counter 4
  // An event selected through the legacy alias counts in the extended counter, and the reverse.
  d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS | EN);
  d.write(PERF_CTR0, 0);
  d.run(seg(10, {{"instructions", 2}}));
  BOOST_TEST(d.read(PERF_CTR0) == 20u);
  BOOST_TEST(d.read(PerfCtr0) == 20u);
  BOOST_TEST(d.rdpmc(0) == 20u);
}

BOOST_AUTO_TEST_CASE(item5_no_perfctrextcore_no_extended_registers) {
  for (const char* file : {"amd-k7.txt", "amd-zen4-kvm.txt", "amd-fam16h.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      BOOST_TEST(gp([&] { (void)d.read(PERF_CTL0); }));   // 0xC0010200 -> #GP [2.2]
      BOOST_TEST(gp([&] { d.write(PERF_CTL0, 0); }));
      BOOST_TEST(gp([&] { (void)d.read(0xC001020B); }));
      BOOST_TEST(gp([&] { (void)d.rdpmc(4); }));           // RDPMC ECX=4 -> #GP
      BOOST_TEST(gp([&] { (void)d.rdpmc(0xC0010004); }));  // an MSR number is no counter index [4]
      d.write(perfctr(3), 5);
      BOOST_TEST(d.rdpmc(3) == 5u);                        // 0-3 are fine
      BOOST_TEST(gp([&] { (void)d.read(GlobalCtl); }));    // and no PerfMonV2 either
    }
  }
}

BOOST_AUTO_TEST_CASE(item6_rdpmc_by_counter_index) {
  AmdDevice d(zen3_cpu());
  // RDPMC ECX=5 reads PERF_CTR5 (0xC001020B) [2.2]: indices are contiguous, the MSRs interleave.
  d.write(0xC001020B, 0x1234'5678'9ABCULL);
  BOOST_TEST(d.rdpmc(5) == 0x1234'5678'9ABCULL);
  BOOST_TEST(gp([&] { (void)d.rdpmc(6); }));
  // CPL > 0 needs CR4.PCE [2.1].
  d.set_reader_cpl(3);
  BOOST_TEST(gp([&] { (void)d.rdpmc(5); }));
  d.set_cr4_pce(true);
  BOOST_TEST(d.rdpmc(5) == 0x1234'5678'9ABCULL);
}

BOOST_AUTO_TEST_CASE(item7_perfmon_v2_global_control_and_status) {
  AmdDevice d(genoa_cpu());
  BOOST_TEST(d.read(GlobalCtl) == 0x3Fu);     // policy 3: every implemented counter
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  // EN = 1 with GlobalCtl[0] = 0 does not count [3.4].
  d.write(GlobalCtl, 0);
  d.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN);
  d.run(seg(100, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);
  d.write(GlobalCtl, 0x1);
  d.run(seg(100, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 100u);
  // Overflow sets GlobalStatus[i] (INT or not: no interrupt here) [4].
  d.write(perf_ctr(0), TWO48 - 10);
  d.run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);
  BOOST_TEST(d.read(GlobalStatus) == 0x1u);
  BOOST_TEST(d.interrupts() == 0u);
  // GlobalStatus is read-only; StatusSet sets, StatusClr clears [2.3].
  BOOST_TEST(gp([&] { d.write(GlobalStatus, 0); }));
  d.write(GlobalStatusSet, 0x24);  // counters 2 and 5
  BOOST_TEST(d.read(GlobalStatus) == 0x25u);
  d.write(GlobalStatusClr, 0x1);
  BOOST_TEST(d.read(GlobalStatus) == 0x24u);
  d.write(GlobalStatusClr, 0x24);
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  // Bit 58 (LBRs frozen) exists: Genoa's 0x80000022:EAX = 7 has LbrExtV2 (bit 1) [2.3].
  d.write(GlobalStatusSet, 1ULL << 58);
  BOOST_TEST(d.read(GlobalStatus) == (1ULL << 58));
  // Bits beyond the six counters are reserved (model policy, amd_model.hpp).
  BOOST_TEST(gp([&] { d.write(GlobalCtl, 1ULL << 6); }));
  BOOST_TEST(d.read(GlobalCtl) == 0x1u);
  // With INT, the overflow also interrupts.
  d.write(perf_ctl(1), INSTRUCTIONS | USR | OS | INT | EN);
  d.write(GlobalCtl, 0x3);
  d.write(perf_ctr(1), TWO48 - 1);
  d.run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d.interrupts() == 1u);
  BOOST_TEST((d.read(GlobalStatus) & 0x2u) == 0x2u);
}

BOOST_AUTO_TEST_CASE(item8_host_and_guest_bits) {
  // The model is a host with no guest (amd_model.hpp, from [3.3]): HostOnly alone and both bits
  // count, GuestOnly alone counts nothing, neither counts.
  AmdDevice d(dump_cpu("amd-fam10h-revc.txt"));
  const u64 base = INSTRUCTIONS | USR | OS | EN;
  d.write(evtsel(0), base | HOST | GUEST);
  d.write(evtsel(1), base | HOST);
  d.write(evtsel(2), base | GUEST);
  d.write(evtsel(3), base);
  d.run(seg(50, {{"instructions", 2}}));
  BOOST_TEST(d.read(perfctr(0)) == 100u);
  BOOST_TEST(d.read(perfctr(1)) == 100u);
  BOOST_TEST(d.read(perfctr(2)) == 0u);
  BOOST_TEST(d.read(perfctr(3)) == 100u);
}

BOOST_AUTO_TEST_CASE(item9_event_select_high_bits_and_reserved_bits_by_family) {
  // K7 and K8: EventSelect[11:8] (35:32) and 40-41 are reserved: #GP, nothing written [3.2].
  for (const char* file : {"amd-k7.txt", "amd-k8-revf.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(evtsel(0), INSTRUCTIONS | USR);
      BOOST_TEST(gp([&] { d.write(evtsel(0), event(0x1C0) | USR | OS | EN); }));
      BOOST_TEST(gp([&] { d.write(evtsel(0), INSTRUCTIONS | USR | HOST); }));
      BOOST_TEST(gp([&] { d.write(evtsel(0), INSTRUCTIONS | USR | GUEST); }));
      BOOST_TEST(d.read(evtsel(0)) == (INSTRUCTIONS | USR));
    }
  }
  // Family 10h: a 12-bit code. RETIRED_X87_OPS:ALL = 0x1_0003_07C0 (golden, fam10h_revc) with EN
  // counts its own signal, amd.0x1C0.0x07, not the 8-bit 0xC0's.
  AmdDevice d(dump_cpu("amd-fam10h-revc.txt"));
  d.write(evtsel(0), 0x1'0003'07C0ULL | EN);
  BOOST_TEST(d.read(evtsel(0)) == (0x1'0003'07C0ULL | EN));
  d.write(evtsel(1), 0x0003'07C0ULL | EN);  // event 0x0C0 with unit mask 0x07
  d.run(seg(10, {{"amd.0x1C0.0x07", 3}, {"amd.0x0C0.0x07", 5}, {"instructions", 7}}));
  BOOST_TEST(d.read(perfctr(0)) == 30u);
  BOOST_TEST(d.read(perfctr(1)) == 50u);
  // Bit 21 and 36-39 are reserved from family 10h on, 42-63 too.
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 21)); }));
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 36)); }));
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 42)); }));
  // Family 11h (CPUID.1:EAX = 0x200F31: base 0xF + extended 2): 12-bit codes, no host/guest.
  pmc::CpuInfo griffin = dump_cpu("amd-fam10h-revc.txt");
  griffin.family = 0x11;
  griffin.model = 3;
  AmdDevice g(griffin);
  g.write(evtsel(0), event(0x1E9) | USR);
  BOOST_TEST(g.read(evtsel(0)) == (event(0x1E9) | USR));
  BOOST_TEST(gp([&] { g.write(evtsel(0), INSTRUCTIONS | HOST); }));
  BOOST_TEST(gp([&] { g.write(evtsel(0), INSTRUCTIONS | GUEST); }));
}

BOOST_AUTO_TEST_CASE(item13_cmask_inv_edge) {
  AmdDevice d(zen3_cpu());
  // CntMask 2: 1 per cycle with >= 2 events; with INV: 1 per cycle with < 2 [3.1, counting.hpp].
  d.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN | cmask(2));
  d.write(perf_ctl(1), INSTRUCTIONS | USR | OS | EN | cmask(2) | INV);
  // Edge with CntMask 0: one per rising edge of "at least one event".
  d.write(perf_ctl(2), INSTRUCTIONS | USR | OS | EN | E);
  d.run(seg(100, {{"instructions", 3}}));  // 0: +100, 1: +0, 2: +1 (rising)
  d.run(seg(50, {{"instructions", 1}}));   // 0: +0, 1: +50, 2: +0 (still asserted)
  d.run(seg(10, {{"instructions", 0}}));   // 0: +0, 1: +10, 2: +0 (falls)
  d.run(seg(10, {{"instructions", 2}}));   // 0: +10, 1: +0, 2: +1 (rises again)
  BOOST_TEST(d.read(perf_ctr(0)) == 110u);
  BOOST_TEST(d.read(perf_ctr(1)) == 60u);
  BOOST_TEST(d.read(perf_ctr(2)) == 2u);
}

BOOST_AUTO_TEST_CASE(item14_k7_model_1_has_no_interrupt) {
  // K7 model 1 has no local APIC: INT has no effect [4]; model 4 (the dump) interrupts.
  pmc::CpuInfo model1 = k7_cpu();
  model1.model = 1;
  for (const auto& [cpu, expected] : {std::pair{model1, 0u}, std::pair{k7_cpu(), 1u}}) {
    AmdDevice d(cpu);
    d.write(PerfCtr0, TWO48 - 1);
    d.write(PerfEvtSel0, CYCLES | USR | OS | INT | EN);
    d.run(seg(1, {}));
    BOOST_TEST(d.read(PerfCtr0) == 0u);
    BOOST_TEST(d.interrupts() == expected);
  }
}

BOOST_AUTO_TEST_CASE(privilege_halt_and_generic_signals) {
  AmdDevice d(genoa_cpu());
  d.write(perf_ctl(0), CYCLES | USR | EN);                       // user cycles
  d.write(perf_ctl(1), INSTRUCTIONS | OS | EN);                  // kernel instructions
  d.write(perf_ctl(2), 0x60 | umask(0xFF) | USR | OS | EN);      // Zen 4 cache-references [6.1]
  d.write(perf_ctl(3), 0x64 | umask(0x09) | USR | OS | EN);      // cache-misses
  d.write(perf_ctl(4), event(0x120) | umask(0x01) | USR | OS | EN);  // Zen 4 ref-cycles
  d.write(perf_ctl(5), 0x60 | umask(0xF7) | USR | OS | EN);      // Zen 5's cache-references: raw on Zen 4
  d.run(seg(100, {{"instructions", 2}, {"cache-references", 3}, {"cache-misses", 1}, {"ref-cycles", 2}}));
  d.run(seg(10, {{"instructions", 5}}, Mode::kernel));
  pmc::OwnedSegment halted = seg(1000, {{"cache-references", 1}}, Mode::user);
  halted->halted = true;
  d.run(halted);  // no cycles; other signals still count
  BOOST_TEST(d.read(perf_ctr(0)) == 100u);   // user, unhalted cycles only
  BOOST_TEST(d.read(perf_ctr(1)) == 50u);    // 10 kernel cycles x 5
  BOOST_TEST(d.read(perf_ctr(2)) == 1300u);  // 300 + 1000
  BOOST_TEST(d.read(perf_ctr(3)) == 100u);
  BOOST_TEST(d.read(perf_ctr(4)) == 200u);
  BOOST_TEST(d.read(perf_ctr(5)) == 0u);
}
