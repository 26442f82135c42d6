// The P5 device model (sim/models/p5, pmc::sim::P5Device) against docs/hardware/p5.md, then
// sessions end to end on the simulated Pentium with MMX (the p5 plugin's driver programming the
// p5 model). Section numbers are in brackets; "item N" is section 6, "Behaviours worth a test".
// Every expected value below is worked out by hand from the fact sheet, with the reasoning in a
// comment, never taken from a run of the code.
#define BOOST_TEST_MODULE p5_model
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"
#include "support/device.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include "p5_model.hpp"  // P5Device (pmcmodel_p5)

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using pmc::errc;
using pmc::Mode;
using pmc::sim::P5Device;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t TSC = 0x10, CESR = 0x11, CTR0 = 0x12, CTR1 = 0x13;
// A CESR half [3]: ES 5:0, CC 8:6 (bit 6 CPL 0-2, bit 7 CPL 3, bit 8 clocks), PC 9. CTR1's half
// is CTR0's shifted left by 16.
constexpr u64 OS = 0x040, USR = 0x080, CLK = 0x100, PC = 0x200;
constexpr u64 ctr1(u64 half) { return half << 16; }
// Event codes [5.1, 5.2].
constexpr u64 DATA_READ = 0x00, DATA_READ_OR_WRITE = 0x28, BRANCHES = 0x12, TAKEN_BRANCH_OR_BTB_HIT = 0x14, INSTRUCTIONS_EXECUTED = 0x16,
              INSTRUCTIONS_EXECUTED_V_PIPE = 0x17, BUS_CYCLE_DURATION = 0x18, MMX_INSTRUCTIONS_EXECUTED = 0x2B,
              CYCLES_NOT_IN_HALT = 0x30, TAKEN_BRANCHES = 0x32, PIPELINE_FLUSHES_WRONG_PREDICTION = 0x35,
              RETURNS = 0x39;

constexpr u64 TWO40 = u64{1} << 40;

pmc::CpuInfo dump(const std::string& name) {
  return pmc::load_cpuid_dump(std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name + ".txt");
}
// pentium-mmx.txt: 0x543, MMX (CPUID.1:EDX[23]); pentium.txt: 0x525, no MMX;
// pentium-mmx-e74.txt: 0x544, MMX; pentium-overdrive.txt: 0x1532, no MMX.
const pmc::CpuInfo& mmx_cpu() {
  static const pmc::CpuInfo c = dump("pentium-mmx");
  return c;
}
const pmc::CpuInfo& plain_cpu() {
  static const pmc::CpuInfo c = dump("pentium");
  return c;
}

pmc::OwnedSegment seg(u64 cycles, std::initializer_list<std::pair<const char*, u64>> signals, Mode mode = Mode::user,
                      bool halted = false) {
  pmc::OwnedSegment s(cycles, mode);
  for (const auto& [name, k] : signals) s.signal(name, k);
  s->halted = halted;
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

// =============================================================================================
// Counting [3.1, 3.2, 4, 7.3].

BOOST_AUTO_TEST_SUITE(counting)

// Item 2: CC = 000 and CC = 100 freeze a counter (neither CPL bit is set), at any CPL.
BOOST_AUTO_TEST_CASE(item2_cc_000_and_100_count_nothing) {
  P5Device d(mmx_cpu());
  d.write(CESR, ctr1(CLK | INSTRUCTIONS_EXECUTED) | INSTRUCTIONS_EXECUTED);  // CTR0 CC=000, CTR1 CC=100
  BOOST_TEST(d.read(CESR) == 0x01160016u);
  d.run(seg(1000, {{"instructions", 2}}));
  d.run(seg(1000, {{"instructions", 2}}, Mode::kernel));
  BOOST_TEST(d.read(CTR0) == 0u);
  BOOST_TEST(d.read(CTR1) == 0u);
  BOOST_TEST(d.pin_assertions(0) == 0u);
  BOOST_TEST(d.pin_assertions(1) == 0u);
}

// Item 2: a CPL 3 workload (user mode): CC = 001 (CPL 0-2) counts 0, 010 and 011 count every
// occurrence. A kernel (CPL 0) segment: 001 and 011 count, 010 does not. Changing CC takes effect
// at once [7.3].
BOOST_AUTO_TEST_CASE(item2_cpl_filter) {
  P5Device d(mmx_cpu());
  // CTR0 CC=001, CTR1 CC=010.
  d.write(CESR, ctr1(USR | INSTRUCTIONS_EXECUTED) | (OS | INSTRUCTIONS_EXECUTED));
  d.run(seg(1000, {{"instructions", 2}}));  // user: 1000 x 2
  BOOST_TEST(d.read(CTR0) == 0u);
  BOOST_TEST(d.read(CTR1) == 2000u);
  d.run(seg(300, {{"instructions", 1}}, Mode::kernel));  // kernel: 300 x 1
  BOOST_TEST(d.read(CTR0) == 300u);
  BOOST_TEST(d.read(CTR1) == 2000u);
  // Both at CC=011: 500 user clocks x 2 add 1000 to each, 100 kernel clocks x 3 add 300 to each.
  d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED) | (USR | OS | INSTRUCTIONS_EXECUTED));
  d.run(seg(500, {{"instructions", 2}}));
  d.run(seg(100, {{"instructions", 3}}, Mode::kernel));
  BOOST_TEST(d.read(CTR0) == 300u + 1000u + 300u);
  BOOST_TEST(d.read(CTR1) == 2000u + 1000u + 300u);
}

// Item 3: CC = 1xx counts clocks; with ES = 18H the clocks a bus cycle is in progress (the
// `bus_cycle_duration` signal is 1 in each such clock). User: 400 clocks with a bus cycle, 600
// without; kernel: 100 with, 50 without.
BOOST_AUTO_TEST_CASE(item3_clock_mode_counts_duration) {
  auto run = [](P5Device& d) {
    d.run(seg(400, {{"bus_cycle_duration", 1}, {"instructions", 1}}));
    d.run(seg(600, {{"instructions", 2}}));
    d.run(seg(100, {{"bus_cycle_duration", 1}}, Mode::kernel));
    d.run(seg(50, {{"instructions", 1}}, Mode::kernel));
  };
  P5Device d(mmx_cpu());
  // CTR0 CC=111 (clocks, any CPL): 400 + 100 = 500. CTR1 CC=101 (clocks, CPL 0-2): 100.
  d.write(CESR, ctr1(CLK | OS | BUS_CYCLE_DURATION) | (CLK | USR | OS | BUS_CYCLE_DURATION));
  run(d);
  BOOST_TEST(d.read(CTR0) == 500u);
  BOOST_TEST(d.read(CTR1) == 100u);
  // CTR1 CC=110 (clocks, CPL 3): 400 more. CTR0 CC=011 (occurrences of a duration event, [7.3]:
  // the starts the workload reports, 1 per clock here): 400 + 100 more.
  d.write(CESR, ctr1(CLK | USR | BUS_CYCLE_DURATION) | (USR | OS | BUS_CYCLE_DURATION));
  run(d);
  BOOST_TEST(d.read(CTR0) == 1000u);
  BOOST_TEST(d.read(CTR1) == 500u);
}

// Item 14 [7.3]: clock mode on an occurrence event adds 1 per clock with at least one occurrence,
// never 2; occurrence mode adds every occurrence, uncapped.
BOOST_AUTO_TEST_CASE(item14_clock_mode_on_an_occurrence_event) {
  P5Device d(mmx_cpu());
  // CTR0: INSTRUCTIONS_EXECUTED in clocks (CC=111); CTR1: the same in occurrences (CC=011).
  d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED) | (CLK | USR | OS | INSTRUCTIONS_EXECUTED));
  BOOST_TEST(d.read(CESR) == 0x00D601D6u);
  d.run(seg(1000, {{"instructions", 2}}));                   // dual issue: +1000 / +2000
  d.run(seg(500, {{"data_read", 1}}));                       // no instruction: +0 / +0
  d.run(seg(200, {{"instructions", 1}}));                    // single issue: +200 / +200
  d.run(seg(100, {{"instructions", 3}}, Mode::kernel));      // 3 a clock (uncapped, 7.3): +100 / +300
  BOOST_TEST(d.read(CTR0) == 1000u + 0u + 200u + 100u);
  BOOST_TEST(d.read(CTR1) == 2000u + 0u + 200u + 300u);
}

// Item 4: one CESR write programs both counters; a read-modify-write of CTR1's half leaves
// CTR0's ES, CC and PC as they were. The SDM's procedure to change an event [4]: stop the half
// (CC=000), preset the counter, write the new half.
BOOST_AUTO_TEST_CASE(item4_one_cesr_write_programs_both_halves) {
  P5Device d(mmx_cpu());
  // CTR0: INSTRUCTIONS_EXECUTED, CC=011, PC=1 (0x2D6); CTR1: V pipe, CC=011 (0x0D7).
  d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED_V_PIPE) | (PC | USR | OS | INSTRUCTIONS_EXECUTED));
  BOOST_TEST(d.read(CESR) == 0x00D702D6u);
  d.run(seg(100, {{"instructions", 2}, {"instructions_executed_v_pipe", 1}, {"taken_branch_or_btb_hit", 1}}));
  BOOST_TEST(d.read(CTR0) == 200u);  // 100 x 2
  BOOST_TEST(d.read(CTR1) == 100u);  // 100 x 1
  // Stop CTR1: its half to ES 14H with CC=000 (0x014), by read-modify-write.
  u64 v = d.read(CESR);
  d.write(CESR, (v & ~0x03FF0000ull) | ctr1(TAKEN_BRANCH_OR_BTB_HIT));
  BOOST_TEST(d.read(CESR) == 0x001402D6u);
  BOOST_TEST((d.read(CESR) & 0x3FF) == 0x2D6u);  // CTR0's ES 16H, CC 011, PC 1 as they were
  d.run(seg(10, {{"instructions", 2}, {"taken_branch_or_btb_hit", 1}}));  // CTR0 +20; CTR1 stopped
  BOOST_TEST(d.read(CTR0) == 220u);
  BOOST_TEST(d.read(CTR1) == 100u);
  // Preset CTR1, then start it on TAKEN_BRANCH_OR_BTB_HIT, CC=011 (0x0D4).
  d.write(CTR1, 0);
  v = d.read(CESR);
  d.write(CESR, (v & ~0x03FF0000ull) | ctr1(USR | OS | TAKEN_BRANCH_OR_BTB_HIT));
  BOOST_TEST(d.read(CESR) == 0x00D402D6u);
  d.run(seg(50, {{"instructions", 2}, {"instructions_executed_v_pipe", 1}, {"taken_branch_or_btb_hit", 1}}));
  BOOST_TEST(d.read(CTR0) == 220u + 100u);  // 50 x 2
  BOOST_TEST(d.read(CTR1) == 50u);          // 50 x 1
  // And the other way round: RMW of CTR0's half leaves CTR1's.
  v = d.read(CESR);
  d.write(CESR, (v & ~0x3FFull) | (CLK | OS | DATA_READ));  // 0x140
  BOOST_TEST(d.read(CESR) == 0x00D40140u);
}

// Item 5: CTR written with 2^40 - 5, then 6 occurrences: (2^40 - 5 + 6) mod 2^40 = 1. No fault,
// no interrupt (the P5 has none [2, 4]).
BOOST_AUTO_TEST_CASE(item5_40_bit_wrap) {
  P5Device d(mmx_cpu());
  d.write(CESR, ctr1(USR | OS | DATA_READ) | (USR | OS | INSTRUCTIONS_EXECUTED));
  d.write(CTR0, TWO40 - 5);
  BOOST_TEST(d.read(CTR0) == 0xFFFFFFFFFBu);
  d.write(CTR1, TWO40 - 1);
  d.run(seg(3, {{"instructions", 2}, {"data_read", 1}}));  // 3 x 2 = 6 instructions; 3 reads
  BOOST_TEST(d.read(CTR0) == 1u);
  BOOST_TEST(d.read(CTR1) == 2u);  // 2^40 - 1 + 3 = 2^40 + 2
  BOOST_TEST(d.interrupts() == 0u);
}

// Item 6 [3.2]: PC = 1: the pin is asserted on each carry out of bit 39; PC = 0: in each clock the
// counter increments (once per clock even when it adds 2). No CPU interrupt, ever.
BOOST_AUTO_TEST_CASE(item6_pin_control) {
  P5Device d(mmx_cpu());
  // CTR0: INSTRUCTIONS_EXECUTED with PC=1 (0x2D6); CTR1: the same with PC=0 (0x0D6).
  d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED) | (PC | USR | OS | INSTRUCTIONS_EXECUTED));
  d.write(CTR0, TWO40 - 5);
  d.write(CTR1, TWO40 - 5);
  d.run(seg(3, {{"instructions", 2}}));
  // Both add 6 and read 1. CTR0 carried out of bit 39 once; CTR1 incremented in 3 clocks.
  BOOST_TEST(d.read(CTR0) == 1u);
  BOOST_TEST(d.read(CTR1) == 1u);
  BOOST_TEST(d.pin_assertions(0) == 1u);
  BOOST_TEST(d.pin_assertions(1) == 3u);
  // 10 clocks without an instruction: no increment, no carry: the pins stay as they were.
  d.run(seg(10, {{"data_read", 1}}));
  BOOST_TEST(d.pin_assertions(0) == 1u);
  BOOST_TEST(d.pin_assertions(1) == 3u);
  // 4 x 2^37 clocks of 2 instructions: 2^40 increments in all (2^38 per call, below half the
  // range); each counter goes round once more and reads 1 again. CTR0: one more carry (2);
  // CTR1: 2^39 more incrementing clocks.
  for (int i = 0; i < 4; ++i) d.run(seg(u64{1} << 37, {{"instructions", 2}}));
  BOOST_TEST(d.read(CTR0) == 1u);
  BOOST_TEST(d.read(CTR1) == 1u);
  BOOST_TEST(d.pin_assertions(0) == 2u);
  BOOST_TEST(d.pin_assertions(1) == 3u + (u64{1} << 39));
  // Clock mode with PC = 0: the pin follows the duration. 40 clocks with a bus cycle, 60 without.
  d.write(CESR, ctr1(CLK | USR | OS | BUS_CYCLE_DURATION));
  d.run(seg(40, {{"bus_cycle_duration", 1}}));
  d.run(seg(60, {}));
  BOOST_TEST(d.pin_assertions(1) == 3u + (u64{1} << 39) + 40u);
  BOOST_TEST(d.pin_assertions(0) == 2u);  // CTR0 stopped (CC=000)
  BOOST_TEST(d.interrupts() == 0u);
}

// Item 7: a dual-issue clock adds 2 for the events that allow 2 per clock (00H, 01H, 05H, 16H,
// 28H [4]): 1000 dual-issue clocks add 2000.
BOOST_AUTO_TEST_CASE(item7_dual_issue_adds_2_per_clock) {
  for (const pmc::CpuInfo* cpu : {&mmx_cpu(), &plain_cpu()}) {
    BOOST_TEST_CONTEXT(cpu->source) {
      P5Device d(*cpu);
      d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED) | (USR | OS | DATA_READ));
      d.run(seg(1000, {{"instructions", 2}, {"data_read", 2}}));
      BOOST_TEST(d.read(CTR0) == 2000u);
      BOOST_TEST(d.read(CTR1) == 2000u);
      d.write(CESR, ctr1(USR | OS | INSTRUCTIONS_EXECUTED_V_PIPE) | (USR | OS | DATA_READ_OR_WRITE));
      d.write(CTR0, 0);
      d.write(CTR1, 0);
      // The pairs' second instructions went down the V pipe: 1 per dual-issue clock.
      d.run(seg(1000, {{"instructions", 2}, {"instructions_executed_v_pipe", 1}, {"data_read_or_write", 2}}));
      BOOST_TEST(d.read(CTR0) == 2000u);
      BOOST_TEST(d.read(CTR1) == 1000u);
    }
  }
}

// Item 8: on a P55C, 2BH counts U-pipe MMX instructions on CTR0 and V-pipe ones on CTR1; on a
// plain Pentium the same code counts nothing [5.2, 7.3]. 400 clocks with an MMX pair, 100 with an
// MMX instruction in the U pipe only: CTR0 500, CTR1 400.
BOOST_AUTO_TEST_CASE(item8_mmx_code_2b_per_counter) {
  auto run = [](P5Device& d) {
    d.write(CESR, ctr1(USR | OS | MMX_INSTRUCTIONS_EXECUTED) | (USR | OS | MMX_INSTRUCTIONS_EXECUTED));
    BOOST_TEST(d.read(CESR) == 0x00EB00EBu);  // accepted on every part: ES is not a reserved field
    d.run(seg(400, {{"mmx_instructions_executed_u_pipe", 1}, {"mmx_instructions_executed_v_pipe", 1}}));
    d.run(seg(100, {{"mmx_instructions_executed_u_pipe", 1}}, Mode::kernel));
  };
  for (const char* name : {"pentium-mmx", "pentium-mmx-e74"}) {
    BOOST_TEST_CONTEXT(name) {
      P5Device d(dump(name));
      run(d);
      BOOST_TEST(d.read(CTR0) == 500u);
      BOOST_TEST(d.read(CTR1) == 400u);
    }
  }
  for (const char* name : {"pentium", "pentium-overdrive"}) {
    BOOST_TEST_CONTEXT(name) {
      P5Device d(dump(name));
      run(d);
      BOOST_TEST(d.read(CTR0) == 0u);
      BOOST_TEST(d.read(CTR1) == 0u);
    }
  }
}

// 30H [5.2, 5.4]: CTR0 counts unhalted clocks (the implicit `cycles`), CTR1 the data-TLB-miss
// stall; 35H: the generic `branch-misses` belongs to CTR0's event only. On a plain Pentium 30H
// counts nothing [7.3]. 500 unhalted clocks (300 user, 200 kernel) and 100 halted ones.
BOOST_AUTO_TEST_CASE(mmx_cycles_and_branch_misses) {
  auto run = [](P5Device& d) {
    d.write(CESR, ctr1(USR | OS | CYCLES_NOT_IN_HALT) | (USR | OS | CYCLES_NOT_IN_HALT));
    d.run(seg(300, {{"instructions", 2}}));
    d.run(seg(200, {{"instructions", 1}}, Mode::kernel));
    d.run(seg(100, {}, Mode::kernel, true));
  };
  P5Device mmx(mmx_cpu());
  run(mmx);
  BOOST_TEST(mmx.read(CTR0) == 500u);  // 300 + 200 unhalted; not the 100 halted
  BOOST_TEST(mmx.read(CTR1) == 0u);    // no data_cache_tlb_miss_stall_duration
  BOOST_TEST(mmx.read(TSC) == 600u);   // the TSC counts the halted clocks too
  P5Device plain(plain_cpu());
  run(plain);
  BOOST_TEST(plain.read(CTR0) == 0u);
  BOOST_TEST(plain.read(CTR1) == 0u);
  // 35H: 100 clocks with a mispredicted branch; 20 of them resolved in WB.
  mmx.write(CESR, ctr1(USR | OS | PIPELINE_FLUSHES_WRONG_PREDICTION) | (USR | OS | PIPELINE_FLUSHES_WRONG_PREDICTION));
  mmx.write(CTR0, 0);
  mmx.write(CTR1, 0);
  mmx.run(seg(80, {{"branch-misses", 1}}));
  mmx.run(seg(20, {{"branch-misses", 1}, {"pipeline_flushes_due_to_wrong_branch_predictions_resolved_in_wb_stage", 1}}));
  BOOST_TEST(mmx.read(CTR0) == 100u);
  BOOST_TEST(mmx.read(CTR1) == 20u);
}

// Reserved codes 10H, 11H, 20H, 21H, 3CH-3FH and 39H on CTR1 count nothing; the write is accepted
// (ES is not a reserved bit field) [5.1, 5.2, 7.3; item 9 is the encoder's side].
BOOST_AUTO_TEST_CASE(reserved_codes_count_nothing) {
  // Every signal a real or mistaken reading of these codes could name, and the implicit cycles.
  auto busy = seg(1000, {{"instructions", 2}, {"data_read", 2}, {"branches", 1}, {"returns", 1},
                         {"segment_descriptor_cache_accesses", 1}, {"rsb_overflows", 1}, {"rsb_overflow", 1}});
  for (const pmc::CpuInfo* cpu : {&mmx_cpu(), &plain_cpu()}) {
    for (u64 code : {0x10u, 0x11u, 0x20u, 0x21u, 0x3Cu, 0x3Du, 0x3Eu, 0x3Fu}) {
      BOOST_TEST_CONTEXT(cpu->source << " code 0x" << std::hex << code) {
        P5Device d(*cpu);
        // CTR0 occurrences (CC=011), CTR1 clocks (CC=111).
        d.write(CESR, ctr1(CLK | USR | OS | code) | (USR | OS | code));
        d.run(busy);
        BOOST_TEST(d.read(CTR0) == 0u);
        BOOST_TEST(d.read(CTR1) == 0u);
        BOOST_TEST(d.pin_assertions(0) == 0u);
        BOOST_TEST(d.pin_assertions(1) == 0u);
      }
    }
  }
  // 39H: RETURNS on CTR0 (1000 clocks x 1), reserved on CTR1.
  P5Device d(mmx_cpu());
  d.write(CESR, ctr1(USR | OS | RETURNS) | (USR | OS | RETURNS));
  d.run(busy);
  BOOST_TEST(d.read(CTR0) == 1000u);
  BOOST_TEST(d.read(CTR1) == 0u);
}

// The generic signal and the event's own add up (docs/workload-format.md: "A generic signal and
// the P6 signal of the same event add up"): INSTRUCTIONS_EXECUTED counts `instructions` and
// `instructions_executed`: 100 x (1 + 1) = 200.
BOOST_AUTO_TEST_CASE(generic_and_own_signals_add_up) {
  P5Device d(plain_cpu());
  d.write(CESR, USR | OS | INSTRUCTIONS_EXECUTED);
  d.run(seg(100, {{"instructions", 1}, {"instructions_executed", 1}}));
  BOOST_TEST(d.read(CTR0) == 200u);
}

// BRANCHES (12H): its own signal, the name in lower case, is `branches`, which is also the
// generic signal it implements [5.4]; it is one signal, so a workload of 1 branch per clock counts
// 1 per clock: 100 clocks -> 100, in either counter.
BOOST_AUTO_TEST_CASE(branches_count_once_per_occurrence) {
  for (const pmc::CpuInfo* cpu : {&mmx_cpu(), &plain_cpu()}) {
    BOOST_TEST_CONTEXT(cpu->source) {
      P5Device d(*cpu);
      d.write(CESR, ctr1(USR | OS | BRANCHES) | (USR | OS | BRANCHES));
      d.run(seg(100, {{"instructions", 1}, {"branches", 1}}));
      BOOST_TEST(d.read(CTR0) == 100u);
      BOOST_TEST(d.read(CTR1) == 100u);
    }
  }
  // Through a session: `branches` (the generic name, 12H) over the same 100 clocks.
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium.txt";
  cfg.access = "sim";
  pmc::Hal hal = pmc::Hal::open(cfg);
  pmc::Session s = hal.session();
  s.add("branches");
  (void)s.run(pmc::parse_workload("[[segment]]\ncycles = 100\nsignals = { instructions = 1, branches = 1 }\n", "inline"));
  BOOST_TEST(s.read()[0].value == 100u);
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// End to end: sessions on the simulated Pentium with MMX (pentium-mmx.txt probes to p5mmx).

namespace {

pmc::Hal open_sim(const char* name) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name + ".txt";
  cfg.backend = "auto";
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

void run(pmc::Session& s, const char* toml) { (void)s.run(pmc::parse_workload(toml, "inline.toml")); }

// A register file that records the writes it passes on, as "wrmsr 0x11 0xab".
struct Recorder final : pmc::RegisterFile {
  explicit Recorder(pmc::RegisterFile& d) : inner(d) {}
  u64 read(std::uint32_t msr) override { return inner.read(msr); }
  void write(std::uint32_t msr, u64 value) override {
    writes.push_back(wrmsr(msr, value));
    inner.write(msr, value);
  }
  u64 rdpmc(std::uint32_t index) override { return inner.rdpmc(index); }
  static std::string wrmsr(std::uint32_t msr, u64 value) {
    std::ostringstream out;
    out << "wrmsr 0x" << std::hex << msr << " 0x" << value;
    return out.str();
  }
  pmc::RegisterFile& inner;
  std::vector<std::string> writes;
};

using Writes = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(sessions)

// The driver writes only its own half of CESR [4 "Changing an event", 7.3]. TAKEN_BRANCHES
// (32H, CTR1 only) encodes to the half 0x0F2 (CC=011 | 32H); start puts it at bit 16.
BOOST_AUTO_TEST_CASE(the_driver_writes_only_its_own_half) {
  pmc::Hal hal = open_sim("pentium-mmx");
  BOOST_REQUIRE(hal.pmu().cpu_tag == "p5mmx");
  pmc::Session s = hal.session();
  s.add("TAKEN_BRANCHES");
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(d.name() == "p5");
  BOOST_TEST(d.read(CESR) == 0u);  // reset
  s.start();
  BOOST_TEST(d.read(CESR) == 0x00F20000u);
  // Somebody else's counter on CTR0 (INSTRUCTIONS_EXECUTED, CC=011: 0x0D6), written by RMW.
  d.write(CESR, d.read(CESR) | 0x0D6);
  BOOST_TEST(d.read(CESR) == 0x00F200D6u);
  // 100 clocks: 2 instructions and 1 taken branch each.
  run(s, "[[segment]]\ncycles = 100\nsignals = { instructions = 2, taken_branches = 1 }\n");
  s.stop();
  // stop() set CTR1's CC to 000 and left CTR0's half alone.
  BOOST_TEST(d.read(CESR) == 0x000000D6u);
  BOOST_TEST(s.read()[0].value == 100u);
  BOOST_TEST(s.read()[0].counter == 1u);
  BOOST_TEST(d.read(CTR0) == 200u);  // the other counter was never written by the session
  // Run again: start() writes CTR1's half back (no reprogramming), stop() clears it again.
  run(s, "[[segment]]\ncycles = 50\nsignals = { instructions = 2, taken_branches = 1 }\n");
  BOOST_TEST(d.read(CESR) == 0x000000D6u);
  BOOST_TEST(s.read()[0].value == 150u);  // 100 + 50
  BOOST_TEST(d.read(CTR0) == 300u);       // 200 + 50 x 2
}

// Counters start and stop in numerical order (seed 000, FreeBSD perfmon(4)), whatever order the
// events were added in. MMX_INSTRUCTIONS_EXECUTED_V_PIPE (2BH, CTR1 only, CC=011: 0x0EB) is added
// first, MMX_INSTRUCTIONS_EXECUTED_U_PIPE:u (2BH, CTR0 only, CC=010: 0x0AB) second.
BOOST_AUTO_TEST_CASE(start_and_stop_in_numerical_order) {
  pmc::Hal hal = open_sim("pentium-mmx");
  pmc::Session s = hal.session();
  s.add("MMX_INSTRUCTIONS_EXECUTED_V_PIPE");
  s.add("MMX_INSTRUCTIONS_EXECUTED_U_PIPE:u");
  pmc::Device& d = pmc_test::device(s);
  s.start();
  BOOST_TEST(d.read(CESR) == 0x00EB00ABu);
  // User: 400 clocks with an MMX pair; kernel: 100 clocks with an MMX pair.
  run(s, R"([[segment]]
cycles = 400
signals = { mmx_instructions_executed_u_pipe = 1, mmx_instructions_executed_v_pipe = 1 }
[[segment]]
cycles = 100
mode = "kernel"
signals = { mmx_instructions_executed_u_pipe = 1, mmx_instructions_executed_v_pipe = 1 }
)");
  s.stop();
  BOOST_TEST(d.read(CESR) == 0u);
  const auto r = s.read();
  BOOST_TEST(r[0].value == 500u);  // V pipe at any CPL: 400 + 100
  BOOST_TEST(r[0].counter == 1u);
  BOOST_TEST(r[1].value == 400u);  // U pipe at CPL 3 only
  BOOST_TEST(r[1].counter == 0u);

  // The same driver on a recording register file: the order of the CESR writes. The assignments
  // are given CTR1 first.
  const auto p5 = pmc_test::LoadedForTest::of(hal);
  const pmc::PmuContext ctx = pmc_test::LoadedForTest::context(hal);
  const pmc::Encoding v = hal.encode("MMX_INSTRUCTIONS_EXECUTED_V_PIPE");
  const pmc::Encoding u = hal.encode("MMX_INSTRUCTIONS_EXECUTED_U_PIPE:u");
  const pmc::Assignment set[] = {{&hal.pmu().counters[1], &v}, {&hal.pmu().counters[0], &u}};
  P5Device device(hal.cpu());
  Recorder rec(device);
  p5->start(rec, ctx, set);
  BOOST_TEST(rec.writes == (Writes{"wrmsr 0x11 0xab", "wrmsr 0x11 0xeb00ab"}), boost::test_tools::per_element());
  rec.writes.clear();
  p5->stop(rec, ctx, set);
  BOOST_TEST(rec.writes == (Writes{"wrmsr 0x11 0xeb0000", "wrmsr 0x11 0x0"}), boost::test_tools::per_element());
}

// Exact 64-bit totals across a 40-bit wrap [4]: 2^40 + 12,345 = 1,099,511,640,121 unhalted
// clocks with 2 instructions each. `cycles` (30H) can only go on CTR0, so INSTRUCTIONS_EXECUTED
// gets CTR1. Totals: 1,099,511,640,121 cycles and 2,199,023,280,242 instructions; the hardware
// counters, started at 0, hold them modulo 2^40: 12,345 and 2 x 12,345 = 24,690 (2^41 is 0
// modulo 2^40).
BOOST_AUTO_TEST_CASE(exact_totals_across_a_40_bit_wrap) {
  for (const char* cpu : {"pentium-mmx", "pentium-mmx-e74"}) {
    BOOST_TEST_CONTEXT(cpu) {
      pmc::Hal hal = open_sim(cpu);
      pmc::Session s = hal.session();
      s.add("INSTRUCTIONS_EXECUTED");
      s.add("cycles");
      s.start();
      // The driver reads with RDMSR (never RDPMC, erratum 74 [7.1]): a reader at CPL 3 without
      // CR4.PCE, whose RDPMC would fault, changes nothing.
      pmc_test::device(s).set_reader_cpl(3);
      run(s, "[[segment]]\ncycles = 1_099_511_640_121\nsignals = { instructions = 2 }\n");
      s.stop();
      const auto r = s.read();
      BOOST_TEST(r[0].value == 2'199'023'280'242u);
      BOOST_TEST(r[0].counter == 1u);
      BOOST_TEST(r[1].value == 1'099'511'640'121u);
      BOOST_TEST(r[1].counter == 0u);
      BOOST_TEST(pmc_test::device(s).read(CTR1) == 24'690u);
      BOOST_TEST(pmc_test::device(s).read(CTR0) == 12'345u);
    }
  }
}

// Item 4 "Changing an event" through a session: a preset counter is cleared by the driver
// (program writes 0 to the counter before the half) [7.3].
BOOST_AUTO_TEST_CASE(the_driver_presets_its_counter_to_0) {
  pmc::Hal hal = open_sim("pentium");
  BOOST_REQUIRE(hal.pmu().cpu_tag == "p5");
  pmc::Session s = hal.session();
  s.add("INSTRUCTIONS_EXECUTED:k");  // CC=001 | 16H = 0x056, on CTR0
  pmc::Device& d = pmc_test::device(s);
  d.write(CTR0, 0xABCDEF);
  s.start();
  BOOST_TEST(d.read(CTR0) == 0u);
  BOOST_TEST(d.read(CESR) == 0x056u);
  // Kernel 300 clocks x 1, user 700 x 2: only the kernel's 300 count.
  run(s, R"([[segment]]
cycles = 300
mode = "kernel"
signals = { instructions = 1 }
[[segment]]
cycles = 700
signals = { instructions = 2 }
)");
  s.stop();
  BOOST_TEST(s.read()[0].value == 300u);
}

// examples/workloads/pentium-demo.toml, the totals its header works out:
//   instructions 1,000,000 (kernel) + 3 x 200,000,000,000 x 2 + 100,000,000,000 x 1
//                = 1,300,001,000,000 (passes 2^40 = 1,099,511,627,776 once)
//   V pipe       3 x 200,000,000,000 x 1 = 600,000,000,000
//   cycles       1,000,000 + 600,000,000,000 + 100,000,000,000 = 700,001,000,000 unhalted
//                (the 50,000,000 halted clocks do not count)
BOOST_AUTO_TEST_CASE(pentium_demo_workload) {
  const pmc::Workload w = pmc::load_workload(std::string(PMC_SOURCE_DIR) + "/examples/workloads/pentium-demo.toml");
  BOOST_TEST(w.name == "pentium-demo");
  BOOST_TEST(w.total_cycles() == 700'051'000'000u);  // 1,000,000 + 600,000,000,000 + 100,000,000,000 + 50,000,000
  pmc::Hal hal = open_sim("pentium-mmx");
  {
    pmc::Session s = hal.session();
    s.add("INSTRUCTIONS_EXECUTED");
    s.add("INSTRUCTIONS_EXECUTED_V_PIPE");
    const pmc::WorkloadRun ran = s.run(w);
    BOOST_TEST(ran.cycles == 700'051'000'000u);
    BOOST_TEST(ran.interrupts == 0u);
    const auto r = s.read();
    BOOST_TEST(r[0].value == 1'300'001'000'000u);
    BOOST_TEST(r[1].value == 600'000'000'000u);
    // The instructions' counter holds the total modulo 2^40: 1,300,001,000,000 - 2^40.
    const unsigned ctr = r[0].counter;
    BOOST_TEST(pmc_test::device(s).read(ctr == 0 ? CTR0 : CTR1) == 200'489'372'224u);
  }
  {
    pmc::Session s = hal.session();
    s.add("cycles");
    (void)s.run(w);
    const auto r = s.read();
    BOOST_TEST(r[0].value == 700'001'000'000u);
    BOOST_TEST(r[0].name == "NUMBER_OF_CYCLES_NOT_IN_HALT_STATE");
    BOOST_TEST(r[0].counter == 0u);
  }
}

BOOST_AUTO_TEST_SUITE_END()
