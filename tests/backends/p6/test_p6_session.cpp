// Sessions end to end on the simulated P6: the p6 plugin's driver programming the P6 device
// model (written separately from the datasheet), 64-bit counts over 40-bit counters.
#define BOOST_TEST_MODULE p6_session
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "support/device.hpp"
#include "support/no_backend.hpp"

#include <algorithm>
#include <string>

namespace {

pmc::Hal pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  return pmc::Hal::open(cfg);
}

// data/cpuid/pentium-m.txt: a Pentium M 745 (Dothan, family 6 model 13), the p6 backend's "pm".
pmc::Hal pentium_m() {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-m.txt";
  return pmc::Hal::open(cfg);
}

// Runs a workload through the session's simulated PMU (the tests start the session first).
void run(pmc::Session& s, const std::string& toml) {
  auto w = pmc::parse_workload(toml, "inline.toml");
  s.run(w);
}

// The simulated CPU runs a workload whatever the session does: a stopped session does not
// count it (Session::run would start the session for the run).
void run_while_stopped(pmc::Session& s, const std::string& toml) {
  BOOST_REQUIRE(!s.running());
  auto w = pmc::parse_workload(toml, "inline.toml");
  for (std::size_t i = 0; i < w.size(); ++i) pmc_test::device(s).run(w.segment(i));
}

std::uint64_t value(pmc::Session& s, std::size_t i) { return s.read().at(i).value; }

}  // namespace

BOOST_AUTO_TEST_CASE(counts_instructions_and_cycles) {
  auto hal = pentium_iii();
  BOOST_TEST(hal.access() == "sim");
  auto s = hal.session();
  s.add("cycles");
  s.add("instructions");
  s.start();
  run(s, R"([[segment]]
cycles = 1000
signals = { instructions = 2 }
[[segment]]
cycles = 500
mode = "kernel"
signals = { instructions = 1 }
)");
  s.stop();
  auto r = s.read();
  BOOST_TEST(r[0].value == 1500u);
  BOOST_TEST(r[1].value == 2500u);
  BOOST_TEST(r[0].canonical == "p6::CPU_CLK_UNHALTED:u=1:k=1:e=0:i=0:c=0");
}

BOOST_AUTO_TEST_CASE(privilege_filters_reach_the_hardware) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("INST_RETIRED:u");
  s.add("INST_RETIRED:k");
  s.start();
  run(s, R"([[segment]]
cycles = 100
signals = { instructions = 3 }
[[segment]]
cycles = 10
mode = "kernel"
signals = { instructions = 1 }
)");
  s.stop();
  BOOST_TEST(value(s, 0) == 300u);
  BOOST_TEST(value(s, 1) == 10u);
}

BOOST_AUTO_TEST_CASE(sixty_four_bit_counts_across_the_40_bit_wrap) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("instructions");
  s.start();
  // 3 * 2^40 + 5 instructions: the 40-bit counter wraps three times.
  run(s, R"([[segment]]
cycles = 0x300_0000_0000
signals = { instructions = 1 }
[[segment]]
cycles = 5
signals = { instructions = 1 }
)");
  s.stop();
  BOOST_TEST(value(s, 0) == 3ull * (1ull << 40) + 5);
}

BOOST_AUTO_TEST_CASE(counter_one_alone_counts_with_the_global_enable_in_evtsel0) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("MUL");  // counter 1 only
  BOOST_TEST(s.read().at(0).counter == 1u);
  s.start();
  // PerfEvtSel0 holds only EN (bit 22): counter 0 frozen, both enabled.
  BOOST_TEST(pmc_test::device(s).read(0x186) == (1ull << 22));
  run(s, "[[segment]]\ncycles = 40\nsignals = { mul = 1, instructions = 9 }\n");
  s.stop();
  BOOST_TEST(value(s, 0) == 40u);
  BOOST_TEST(pmc_test::device(s).read(0xC1) == 0u);  // counter 0 never moved
  BOOST_TEST((pmc_test::device(s).read(0x186) & (1ull << 22)) == 0u);
}

BOOST_AUTO_TEST_CASE(stop_freezes_and_reset_zeroes) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("instructions");
  s.start();
  run(s, "[[segment]]\ncycles = 10\nsignals = { instructions = 1 }\n");
  s.stop();
  run_while_stopped(s, "[[segment]]\ncycles = 10\nsignals = { instructions = 1 }\n");
  BOOST_TEST(value(s, 0) == 10u);
  s.reset();
  BOOST_TEST(value(s, 0) == 0u);
  s.start();
  run(s, "[[segment]]\ncycles = 7\nsignals = { instructions = 1 }\n");
  BOOST_TEST(value(s, 0) == 7u);  // read while running
  s.stop();
}

BOOST_AUTO_TEST_CASE(counter_mask_through_the_session) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("INST_RETIRED:c=2");
  s.add("INST_RETIRED:c=2:i=1");
  s.start();
  run(s, R"([[segment]]
cycles = 30
signals = { instructions = 3 }
[[segment]]
cycles = 20
signals = { instructions = 1 }
)");
  s.stop();
  BOOST_TEST(value(s, 0) == 30u);  // cycles with >= 2 retired
  BOOST_TEST(value(s, 1) == 20u);  // cycles with < 2
}

BOOST_AUTO_TEST_CASE(a_failed_add_leaves_the_session_as_it_was) {
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("MUL");
  try {
    // As a group (counted at once): refused. As two adds they would be multiplexed.
    s.add_group({"MUL", "DIV"});
    BOOST_ERROR("MUL and DIV were both scheduled on a P6");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::no_counter));
    BOOST_TEST(std::string(e.what()).find("MUL, DIV") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(s.add("NO_SUCH_EVENT"), pmc::Error);
  BOOST_TEST(s.encodings().size() == 1u);
  s.add("FLOPS");
  s.start();
  BOOST_CHECK_THROW(s.add("INST_RETIRED"), pmc::Error);  // not while counting
  s.stop();
  BOOST_TEST(s.encodings().size() == 2u);
}

// Without a backend a session counts only the HAL events; a PMU event is a clear error saying why
// no backend was chosen, and Hal::require_backend() also says how to choose one (the config).
BOOST_AUTO_TEST_CASE(no_backend_is_a_clear_error) {
  pmc_test::TempDir tmp;
  auto hal = pmc_test::no_backend_hal(tmp);  // a Transmeta Crusoe: no backend drives it
  BOOST_TEST_REQUIRE(hal.backend() == nullptr);
  auto s = hal.session();
  try {
    s.add("instructions");
    BOOST_ERROR("a PMU event in a session without a backend");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    std::string m = e.what();
    BOOST_TEST(m.find("event 'instructions' needs a PMU backend, and none was chosen") != std::string::npos, m);
    BOOST_TEST(m.find("no loaded backend matches GenuineTMx86") != std::string::npos, m);
    BOOST_TEST(m.find("events available here: tsc") != std::string::npos, m);
  }
  BOOST_TEST(s.encodings().empty());
  BOOST_CHECK_NO_THROW(s.add("tsc"));  // a HAL event needs no backend
  try {
    (void)hal.require_backend();
    BOOST_ERROR("require_backend without a backend");
  } catch (const pmc::Error& e) {
    std::string m = e.what();
    BOOST_TEST(m.find("no loaded backend matches GenuineTMx86") != std::string::npos, m);
    BOOST_TEST(m.find("the config key 'backend'") != std::string::npos, m);
    BOOST_TEST(m.find("the config key 'cpu'") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(perf_spellings_of_generic_events_count_the_same_event) {
  // perf's "cpu-cycles" and "branch-instructions" are CPU_CLK_UNHALTED (0x79) and
  // BR_INST_RETIRED (0xC4) on the P6, as "cycles" and "branches" are.
  auto hal = pentium_iii();
  auto s = hal.session();
  s.add("cpu-cycles");
  s.add("branch-instructions");
  BOOST_TEST(s.encodings()[0].canonical == "p6::CPU_CLK_UNHALTED:u=1:k=1:e=0:i=0:c=0");
  BOOST_TEST(s.encodings()[1].canonical == "p6::BR_INST_RETIRED:u=1:k=1:e=0:i=0:c=0");
  s.start();
  run(s, "[[segment]]\ncycles = 1000\nsignals = { branches = 1 }\n");
  s.stop();
  BOOST_TEST(value(s, 0) == 1000u);
  BOOST_TEST(value(s, 1) == 1000u);
}

// Pentium M: the driver reads IA32_MISC_ENABLE (0x1A0) before it programs the counters, and
// counts when bit 7 "performance monitoring available" is set (docs/hardware/p6.md section 1).
BOOST_AUTO_TEST_CASE(pentium_m_counts_when_firmware_reports_perfmon_available) {
  auto hal = pentium_m();
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.pmu().cpu_tag == "pm");
  for (const auto& c : hal.candidates())
    if (c.backend == "p6")
      BOOST_TEST(c.match.reason.find("IA32_MISC_ENABLE (0x1A0) bit 7") != std::string::npos, c.match.reason);
  // 0x1A0 is a register the driver may touch on the Pentium M (the msr access allowlist).
  const auto& regs = hal.pmu().registers;
  BOOST_TEST((std::find(regs.begin(), regs.end(), 0x1A0u) != regs.end()));
  auto s = hal.session();
  s.add("instructions");
  s.add("cycles");
  s.start();
  BOOST_TEST((pmc_test::device(s).read(0x1A0) & 0x80) != 0u);
  // 400 cycles x 3 instructions = 1200 instructions; 400 cycles.
  run(s, "[[segment]]\ncycles = 400\nsignals = { instructions = 3 }\n");
  s.stop();
  BOOST_TEST(value(s, 0) == 1200u);
  BOOST_TEST(value(s, 1) == 400u);
}

BOOST_AUTO_TEST_CASE(pentium_m_with_perfmon_disabled_by_firmware_is_refused) {
  auto hal = pentium_m();
  auto s = hal.session();
  s.add("INST_RETIRED");
  pmc_test::device(s).configure("perfmon_available", 0);  // a BIOS that cleared IA32_MISC_ENABLE[7]
  try {
    s.start();
    BOOST_ERROR("a session started on a Pentium M whose firmware disabled performance monitoring");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    BOOST_TEST(std::string(e.what()) ==
               "IA32_MISC_ENABLE (0x1A0) bit 7 is 0: performance monitoring is unavailable on this Pentium M "
               "(disabled by firmware)");
  }
  BOOST_TEST(!s.running());
  // Refused before anything was written: the event selects are still at their reset value.
  BOOST_TEST(pmc_test::device(s).read(0x186) == 0u);
  BOOST_TEST(pmc_test::device(s).read(0x187) == 0u);
}

BOOST_AUTO_TEST_CASE(other_p6_cpus_do_not_touch_misc_enable) {
  // A Pentium III has no IA32_MISC_ENABLE (the model #GPs on it): the driver must not read it,
  // and it is not among the registers the driver may touch.
  auto hal = pentium_iii();
  const auto& regs = hal.pmu().registers;
  BOOST_TEST((std::find(regs.begin(), regs.end(), 0x1A0u) == regs.end()));
  auto s = hal.session();
  s.add("instructions");
  BOOST_CHECK_NO_THROW(s.start());
  BOOST_CHECK_THROW((void)pmc_test::device(s).read(0x1A0), pmc::Error);
  s.stop();
}

// Pentium M hardware-prefetch filter end to end (events.toml pm definitions, SDM table A-17):
// the catalog's masks reach UMASK bits 5:4 and the model counts demand lines ("l2_ld.m",
// "l2_lines_in"), hardware-prefetched ones (".prefetch") or both.
BOOST_AUTO_TEST_CASE(pentium_m_l2_prefetch_filter_through_the_session) {
  auto hal = pentium_m();
  const std::string work = R"([[segment]]
cycles = 100
[segment.signals]
"l2_ld.m" = 1
"l2_ld.prefetch.m" = 2
"l2_ld.prefetch.i" = 4
"l2_lines_in" = 1
"l2_lines_in.prefetch" = 3
)";
  {
    // L2_LD defaults to M:E:S:I:NON_HW_PREFETCH (2FH): (1 + 2 + 4) x 100 = 700.
    // L2_LINES_IN:ONLY_HW_PREFETCH (10H): 3 x 100 = 300.
    auto s = hal.session();
    s.add("L2_LD");
    s.add("L2_LINES_IN:ONLY_HW_PREFETCH");
    s.start();
    run(s, work);
    s.stop();
    BOOST_TEST(value(s, 0) == 700u);
    BOOST_TEST(value(s, 1) == 300u);
  }
  {
    // L2_LD:M (08H, bits 5:4 = 00): demand M only, 1 x 100 = 100.
    // L2_LINES_IN (default NON_HW_PREFETCH, 20H): (1 + 3) x 100 = 400.
    auto s = hal.session();
    s.add("L2_LD:M");
    s.add("L2_LINES_IN");
    s.start();
    run(s, work);
    s.stop();
    BOOST_TEST(value(s, 0) == 100u);
    BOOST_TEST(value(s, 1) == 400u);
  }
}
