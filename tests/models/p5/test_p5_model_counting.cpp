// The P5 device model (sim/models/p5, pmc::sim::P5Device) against docs/hardware/p5.md: counting
// (the CC field's CPL filter and clock mode, one CESR write for both halves, the 40-bit wrap, pin
// control, dual issue, the MMX and reserved event codes, the generic signals). Section numbers are
// in brackets; "item N" is section 6, "Behaviours worth a test". Every expected value below is
// worked out by hand from the fact sheet, with the reasoning in a comment, never taken from a run
// of the code.
#define BOOST_TEST_MODULE p5_model_counting
#include <boost/test/unit_test.hpp>

#include "p5_model_support.hpp"

#include <pmc/hal.hpp>
#include <pmc/session.hpp>

#include <string>

using namespace p5_model_test;

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
