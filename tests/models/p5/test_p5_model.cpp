// The P5 device model (sim/models/p5, pmc::sim::P5Device) against docs/hardware/p5.md: its
// registers (CESR, the counters, the MSR map, the TSC) and RDPMC. Counting is in
// test_p5_model_counting.cpp, sessions on the simulated Pentium in test_p5_model_sessions.cpp.
// Section numbers are in brackets; "item N" is section 6, "Behaviours worth a test". Every expected
// value below is worked out by hand from the fact sheet, with the reasoning in a comment, never
// taken from a run of the code.
#define BOOST_TEST_MODULE p5_model
#include <boost/test/unit_test.hpp>

#include "p5_model_support.hpp"

#include <cstdint>
#include <initializer_list>
#include <vector>

using namespace p5_model_test;

// =============================================================================================
// Registers [2, 3, 4, 7.4].

BOOST_AUTO_TEST_SUITE(registers)

BOOST_AUTO_TEST_CASE(the_model_is_the_p5_of_intel_family_5) {
  P5Device mmx(mmx_cpu());
  BOOST_TEST(mmx.name() == "p5");
  BOOST_TEST(mmx.mmx());  // CPUID.1:EDX[23] = 1 (EDX 0x008003BF)
  BOOST_TEST(P5Device(dump("pentium-mmx-e74")).mmx());
  BOOST_TEST(!P5Device(plain_cpu()).mmx());                 // EDX 0x1BF: bit 23 clear
  BOOST_TEST(!P5Device(dump("pentium-overdrive")).mmx());   // EDX 0x13F: bit 23 clear
  // Not GenuineIntel family 5: no P5 PMU to simulate.
  BOOST_TEST(throws([] { P5Device d(dump("amd-k6")); }, errc::not_supported, {}));
  BOOST_TEST(throws([] { P5Device d(dump("pentium-pro")); }, errc::not_supported, {}));
  // No firmware settings.
  BOOST_TEST(throws([&] { mmx.configure("perfmon_available", 1); }, errc::not_found, {}));
}

// Item 1: after reset CESR reads 0 (both halves CC = 000) and neither counter moves; the
// counters' reset value is 0 [7.3]. The TSC counts every clock [2]: 1000 + 1000 + 500 = 2500.
BOOST_AUTO_TEST_CASE(item1_reset_state) {
  for (const pmc::CpuInfo* cpu : {&mmx_cpu(), &plain_cpu()}) {
    BOOST_TEST_CONTEXT(cpu->source) {
      P5Device d(*cpu);
      BOOST_TEST(d.read(CESR) == 0u);
      BOOST_TEST(d.read(CTR0) == 0u);
      BOOST_TEST(d.read(CTR1) == 0u);
      BOOST_TEST(d.read(TSC) == 0u);
      d.run(seg(1000, {{"instructions", 2}, {"data_read", 1}, {"branches", 1}}));
      d.run(seg(1000, {{"instructions", 1}, {"data_read", 2}}, Mode::kernel));
      d.run(seg(500, {}, Mode::kernel, true));
      BOOST_TEST(d.read(CTR0) == 0u);
      BOOST_TEST(d.read(CTR1) == 0u);
      BOOST_TEST(d.read(CESR) == 0u);
      BOOST_TEST(d.read(TSC) == 2500u);
      // A stopped counter never increments, so its pin (PC = 0: "on every increment") stays low.
      BOOST_TEST(d.pin_assertions(0) == 0u);
      BOOST_TEST(d.pin_assertions(1) == 0u);
      BOOST_TEST(d.interrupts() == 0u);
    }
  }
}

// CESR holds both halves: every non-reserved bit (9:0 and 25:16 = 0x03FF03FF) reads back.
BOOST_AUTO_TEST_CASE(cesr_reads_back_both_halves) {
  P5Device d(mmx_cpu());
  d.write(CESR, 0x03FF03FF);
  BOOST_TEST(d.read(CESR) == 0x03FF03FFu);
  d.write(CESR, ctr1(PC | OS | TAKEN_BRANCHES) | (CLK | USR | DATA_READ));  // 0x0272_0180
  BOOST_TEST(d.read(CESR) == 0x02720180u);
  d.write(CESR, 0);
  BOOST_TEST(d.read(CESR) == 0u);
}

// Item 11: a CESR write with a bit of 15:10, 31:26 or 63:32 set is refused like a #GP and CESR
// keeps its value [3, 7.4].
BOOST_AUTO_TEST_CASE(item11_reserved_cesr_bits_fault_and_change_nothing) {
  P5Device d(mmx_cpu());
  const u64 before = ctr1(USR | OS | INSTRUCTIONS_EXECUTED_V_PIPE) | (USR | OS | INSTRUCTIONS_EXECUTED);  // 0x00D700D6
  BOOST_TEST(before == 0x00D700D6u);
  d.write(CESR, before);
  std::vector<unsigned> bits;
  for (unsigned b = 10; b <= 15; ++b) bits.push_back(b);
  for (unsigned b = 26; b <= 31; ++b) bits.push_back(b);
  for (unsigned b : {32u, 33u, 40u, 48u, 63u}) bits.push_back(b);
  for (unsigned b : bits) {
    BOOST_TEST_CONTEXT("bit " << b) {
      BOOST_TEST(throws([&] { d.write(CESR, before | (u64{1} << b)); }, errc::register_fault, {"#GP"}));
      BOOST_TEST(d.read(CESR) == 0x00D700D6u);
    }
  }
  // The Cyrix MII's 7th ES bit (bit 10 / 26) is reserved on Intel [3].
  BOOST_TEST(throws([&] { d.write(CESR, 0x04000400); }, errc::register_fault, {"#GP"}));
  BOOST_TEST(d.read(CESR) == 0x00D700D6u);
  // Still counting as programmed: 10 clocks of 2 instructions, 1 of them in the V pipe.
  d.run(seg(10, {{"instructions", 2}, {"instructions_executed_v_pipe", 1}}));
  BOOST_TEST(d.read(CTR0) == 20u);
  BOOST_TEST(d.read(CTR1) == 10u);
}

// Item 12: RDMSR/WRMSR of 0x03, 0x0F and anything above 0x13 is refused like a #GP; 0x00-0x02 and
// 0x04-0x0E (machine-check and test registers) read 0 and refuse writes as not modelled [2, 7.4].
BOOST_AUTO_TEST_CASE(item12_msr_map) {
  P5Device d(mmx_cpu());
  for (std::uint32_t msr : {0x03u, 0x0Fu, 0x14u, 0x1Bu, 0x79u, 0xC1u, 0x186u, 0x1A0u, 0xC0000080u}) {
    BOOST_TEST_CONTEXT("MSR 0x" << std::hex << msr) {
      BOOST_TEST(throws([&] { (void)d.read(msr); }, errc::register_fault, {"#GP", "rdmsr"}));
      BOOST_TEST(throws([&] { d.write(msr, 0); }, errc::register_fault, {"#GP", "wrmsr"}));
    }
  }
  for (std::uint32_t msr : {0x00u, 0x01u, 0x02u, 0x04u, 0x08u, 0x0Eu}) {
    BOOST_TEST_CONTEXT("MSR 0x" << std::hex << msr) {
      BOOST_TEST(d.read(msr) == 0u);
      BOOST_TEST(throws([&] { d.write(msr, 1); }, errc::register_fault, {"not modelled"}));
    }
  }
  // The PMU's registers are untouched.
  BOOST_TEST(d.read(CESR) == 0u);
  BOOST_TEST(d.read(CTR0) == 0u);
  BOOST_TEST(d.read(CTR1) == 0u);
}

// Item 13 and [4]: all 40 bits of a counter are writable, with no sign extension from bit 31 (the
// P6 would read 0x80000000 back as 0xFF80000000); a write with a bit of 63:40 set is refused like
// a #GP and changes nothing [7.4].
BOOST_AUTO_TEST_CASE(item13_counter_writes) {
  P5Device d(mmx_cpu());
  for (std::uint32_t ctr : {CTR0, CTR1}) {
    BOOST_TEST_CONTEXT("MSR 0x" << std::hex << ctr) {
      d.write(ctr, 0xFFFFFFFFFF);  // 2^40 - 1
      BOOST_TEST(d.read(ctr) == 0xFFFFFFFFFFu);
      d.write(ctr, 0x80000000);
      BOOST_TEST(d.read(ctr) == 0x80000000u);
      for (u64 bad : std::initializer_list<u64>{TWO40, u64{1} << 63, 0xFFFFFF0000000001ull, 0x1FFFFFFFFFFull}) {
        BOOST_TEST(throws([&] { d.write(ctr, bad); }, errc::register_fault, {"#GP", "40 bits"}));
        BOOST_TEST(d.read(ctr) == 0x80000000u);
      }
    }
  }
}

// The TSC (MSR 0x10) is writable and counts every clock, halted or not, at any CPL [2]:
// 1000 + 300 + 200 = 1500.
BOOST_AUTO_TEST_CASE(tsc_counts_every_cycle) {
  P5Device d(plain_cpu());
  d.write(TSC, 1000);
  BOOST_TEST(d.read(TSC) == 1000u);
  d.run(seg(300, {{"instructions", 1}}));
  d.run(seg(200, {}, Mode::kernel, true));
  BOOST_TEST(d.read(TSC) == 1500u);
  // A segment of 0 cycles is nothing.
  d.run(seg(0, {{"instructions", 1}}));
  BOOST_TEST(d.read(TSC) == 1500u);
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// Item 10: RDPMC [4, 7.4].

BOOST_AUTO_TEST_SUITE(rdpmc)

BOOST_AUTO_TEST_CASE(counters_0_and_1_on_a_pentium_with_mmx) {
  P5Device d(mmx_cpu());
  d.write(CTR0, 0x123456789A);
  d.write(CTR1, 0xFFFFFFFFFF);
  BOOST_TEST(d.rdpmc(0) == 0x123456789Au);  // ECX = 0: CTR0, all 40 bits
  BOOST_TEST(d.rdpmc(1) == 0xFFFFFFFFFFu);  // ECX = 1: CTR1
  // ECX >= 2: a counter the processor does not implement, #GP.
  for (std::uint32_t ecx : {2u, 3u, 0x40000000u, 0xFFFFFFFFu})
    BOOST_TEST(throws([&] { (void)d.rdpmc(ecx); }, errc::register_fault, {"#GP"}), "ECX " << ecx);
}

BOOST_AUTO_TEST_CASE(above_cpl_0_only_with_cr4_pce) {
  P5Device d(mmx_cpu());
  d.write(CTR1, 42);
  for (unsigned cpl : {1u, 2u, 3u}) {
    d.set_reader_cpl(cpl);
    BOOST_TEST(throws([&] { (void)d.rdpmc(1); }, errc::register_fault, {"#GP", "CR4.PCE"}), "CPL " << cpl);
  }
  d.set_cr4_pce(true);
  BOOST_TEST(d.rdpmc(1) == 42u);  // CPL 3 with PCE
  BOOST_TEST(throws([&] { (void)d.rdpmc(2); }, errc::register_fault, {"#GP"}));  // PCE does not add counters
  d.set_cr4_pce(false);
  d.set_reader_cpl(0);
  BOOST_TEST(d.rdpmc(1) == 42u);  // CPL 0 needs no PCE
  BOOST_TEST(throws([&] { d.set_reader_cpl(4); }, errc::invalid_argument, {}));
}

// Without MMX the instruction does not exist: #UD, whatever ECX, CPL or PCE.
BOOST_AUTO_TEST_CASE(invalid_opcode_without_mmx) {
  for (const char* name : {"pentium", "pentium-overdrive"}) {
    BOOST_TEST_CONTEXT(name) {
      P5Device d(dump(name));
      BOOST_TEST(throws([&] { (void)d.rdpmc(0); }, errc::register_fault, {"#UD"}));
      BOOST_TEST(throws([&] { (void)d.rdpmc(2); }, errc::register_fault, {"#UD"}));
      d.set_cr4_pce(true);
      d.set_reader_cpl(3);
      BOOST_TEST(throws([&] { (void)d.rdpmc(1); }, errc::register_fault, {"#UD"}));
    }
  }
}

// Erratum 74 is not simulated: the model answers RDPMC normally on such a part [7.4].
BOOST_AUTO_TEST_CASE(erratum_74_part_answers_normally) {
  P5Device d(dump("pentium-mmx-e74"));
  d.write(CTR0, 7);
  BOOST_TEST(d.rdpmc(0) == 7u);
}

BOOST_AUTO_TEST_SUITE_END()
