// Sessions end to end on the simulated Pentium with MMX (the p5 plugin's driver programming the p5
// model, sim/models/p5), against docs/hardware/p5.md. Section numbers are in brackets; "item N" is
// section 6, "Behaviours worth a test". Every expected value below is worked out by hand from the
// fact sheet, with the reasoning in a comment, never taken from a run of the code.
#define BOOST_TEST_MODULE p5_model_sessions
#include <boost/test/unit_test.hpp>

#include "p5_model_support.hpp"
#include "support/backend.hpp"
#include "support/device.hpp"

#include <pmc/hal.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/session.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using namespace p5_model_test;

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
