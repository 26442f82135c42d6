#define BOOST_TEST_MODULE alpha_sessions
#include <boost/test/unit_test.hpp>

// The alpha21064_sim backend's sessions through the HAL: counts are interrupts x interval on the
// emulated chip, readings carry the interval as granularity, and the checks of the conformance
// kit (which never reaches this backend: no CPUID dump matches it). Its probe, encodings and the
// `pmc` command with it are in test_alpha_backend.cpp.

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "alpha_test_support.hpp"
#include "support/device.hpp"

using namespace pmc_test::alpha21064;

namespace {

// Runs a workload through the session's emulated chip (Session::run: chunks for the session's
// own counter widths, 64 bits here).
void run(pmc::Session& s, const std::string& toml) {
  auto w = pmc::parse_workload(toml, "inline.toml");
  s.run(w);
}

// The emulated CPU runs a workload whatever the session does: a stopped session does not count
// it (Session::run would start the session for the run).
void run_while_stopped(pmc::Session& s, const std::string& toml) {
  BOOST_REQUIRE(!s.running());
  const auto w = pmc::parse_workload(toml, "inline.toml");
  for (std::size_t i = 0; i < w.size(); ++i) pmc_test::device(s).run(w.segment(i));
}

// The same, in the chunks a `width`-bit counter would need (each at most 2^(width-1) - 1 events
// of a counter), polling the session after each, as Session::run does for its own widths.
void run_in_chunks(pmc::Session& s, const std::string& toml, unsigned width) {
  const auto w = pmc::parse_workload(toml, "inline.toml");
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  pmc::Device& device = pmc_test::device(s);
  for (std::size_t i = 0; i < w.size(); ++i) {
    pmc::Segment piece = w.segment(i);
    std::uint64_t rate = 0;
    for (const auto& c : piece.signals) rate += c.per_cycle;
    const std::uint64_t chunk = budget / std::max<std::uint64_t>(rate, 1);
    BOOST_REQUIRE(chunk > 0);
    for (std::uint64_t left = w.segment(i).cycles; left > 0; left -= piece.cycles) {
      piece.cycles = std::min(left, chunk);
      device.run(piece);
      s.poll();
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sessions on the emulated chip: counts are interrupts x interval.

BOOST_AUTO_TEST_CASE(session_counts_interrupts_times_interval) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES");
  s.start();
  run(s, "[[segment]]\ncycles = 196613\n");  // 3 x 65,536 + 5 (sheet 5.1)
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 3u * 65536);
  BOOST_TEST(r.at(0).counter == 0u);
  BOOST_TEST(r.at(0).canonical == "alpha21064_sim::PF_CYCLES:period=65536");
  BOOST_TEST(pmc_test::device(s).interrupts() == 3u);
  BOOST_TEST(pmc_test::device(s).name() == "alpha21064");
}

BOOST_AUTO_TEST_CASE(session_both_counters_and_periods) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  // 10,000 cycles with 3 D-cache misses each: 10,000 / 4096 = 2 interrupts -> 8192;
  // 30,000 / 256 = 117 interrupts -> 29,952.
  run(s, "[[segment]]\ncycles = 10000\nsignals = { l1d-misses = 3 }\n");
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 8192u);
  BOOST_TEST(r.at(1).value == 29952u);
  BOOST_TEST(r.at(1).counter == 1u);
  // The driver's ICCSR: MUX0 0xA + PC0, MUX1 0 + PC1, nothing disabled.
  BOOST_TEST(pmc_test::device(s).read(0) == 0xA09u);
}

BOOST_AUTO_TEST_CASE(session_disables_the_unused_counter) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_STOREI:period=256");
  s.start();
  run(s, "[[segment]]\ncycles = 70000\nsignals = { stores = 1 }\n");
  s.stop();
  BOOST_TEST(s.read().at(0).value == 273u * 256);  // 70,000 / 256 = 273
  // ICCSR: MUX1 6 at bits 34:32, PC1, and bit 35 (counter 0 unused: disabled). Counter 0 still
  // counts its MUX0 0 (ISSUES: none here), so nothing is dismissed.
  BOOST_TEST(pmc_test::device(s).read(0) == (0x600000001ULL | (1ULL << 35)));
  BOOST_TEST(pmc_test::device(s).read(1) == 0u);  // COUNT0: counter 0's interrupt count
}

BOOST_AUTO_TEST_CASE(session_same_counter_twice_is_refused) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES");
  try {
    s.add_group({"PF_CYCLES", "PF_LOADI"});  // at once; two adds would take turns on counter 0
    BOOST_ERROR("two MUX0 events were scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter));
  }
  BOOST_CHECK_NO_THROW(s.add("PF_INTOPS"));  // counter 1 is free
  BOOST_TEST(s.encodings().size() == 2u);
}

BOOST_AUTO_TEST_CASE(session_stop_start_and_reset) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.start();
  run(s, "[[segment]]\ncycles = 10000\n");      // 2 interrupts, 1808 cycles pending
  s.stop();
  run_while_stopped(s, "[[segment]]\ncycles = 100000\n");  // stopped: nothing
  BOOST_TEST(s.read().at(0).value == 8192u);
  s.reset();                                    // clears the count; the interval carries on
  BOOST_TEST(s.read().at(0).value == 0u);
  s.start();
  run(s, "[[segment]]\ncycles = 2288\n");       // 1808 + 2288 = 4096: one interrupt
  s.stop();
  BOOST_TEST(s.read().at(0).value == 4096u);
}

BOOST_AUTO_TEST_CASE(session_through_narrow_chunks) {
  // pmc stat chunks a workload by the narrowest counter width (64 here); a 12-bit chunking, as
  // a session folding at the hardware widths would need, gives the same counts.
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DUAL:period=256");
  s.start();
  run_in_chunks(s, "[[segment]]\ncycles = 1000000\nsignals = { issues = 2 }\n", 12);
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 244u * 4096);   // 1,000,000 / 4096 = 244
  BOOST_TEST(r.at(1).value == 3906u * 256);   // 1,000,000 / 256 = 3906
}

BOOST_AUTO_TEST_CASE(conformance_checks_for_this_backend) {
  // The conformance kit (tools/conformance) runs these for backends a CPUID dump matches; this one is never
  // matched, so the same checks run here with the backend named.
  pmc::Hal hal = alpha();
  const pmc::PmuInfo& pmu = hal.pmu();
  for (const auto& c : pmu.counters) {
    BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.counter_msr) != pmu.registers.end()));
    BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.control_msr) != pmu.registers.end()));
  }
  for (const auto& problem : hal.events().validate(pmu.general_count())) BOOST_ERROR(problem);
  for (const pmc::EventDef* e : hal.events().for_cpu(pmu.cpu_tag)) {
    BOOST_TEST_CONTEXT(e->name) {
      pmc::Encoding a = hal.encode(e->name);
      pmc::Encoding b = hal.encode(e->name);
      BOOST_TEST(a.config == b.config);
      pmc::Encoding c = hal.encode(a.canonical);
      BOOST_TEST(c.config == a.config);
      BOOST_TEST(c.canonical == a.canonical);
      pmc::Session s = hal.session();
      s.add(e->name);
      BOOST_CHECK_NO_THROW(s.start());
      BOOST_CHECK_NO_THROW(run(s, "[[segment]]\ncycles = 300000\nsignals = { issues = 1, loads = 1 }\n"));
      BOOST_CHECK_NO_THROW(s.stop());
      std::vector<pmc::Reading> r;
      BOOST_CHECK_NO_THROW(r = s.read());
      const u64 period = a.counters.at(0) == 0 ? 65536 : 4096;
      BOOST_TEST(r.at(0).value % period == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(bundled_counters_workload) {
  // examples/workloads/alpha-counters.toml, worked out in its comments.
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  auto w = pmc::load_workload(fs::path(PMC_SOURCE_DIR) / "examples" / "workloads" / "alpha-counters.toml");
  s.run(w);
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 278528u);
  BOOST_TEST(r.at(1).value == 12288u);
  pmc::Session t = hal.session();
  t.add("PF_ISSUES");
  t.add("PF_DUAL:period=256");
  t.start();
  t.run(w);
  t.stop();
  r = t.read();
  BOOST_TEST(r.at(0).value == 4u * 65536);   // 270,341 ISSUES
  BOOST_TEST(r.at(1).value == 1024u * 256);  // 262,149 dual-issue cycles
}

BOOST_AUTO_TEST_CASE(readings_carry_the_interrupt_interval_as_granularity) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  run(s, "[[segment]]\ncycles = 10000\nsignals = { l1d-misses = 1 }\n");
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).granularity == 4096u);
  BOOST_TEST(r.at(1).granularity == 256u);
  BOOST_TEST(r.at(0).value == 2u * 4096u);  // 10000 cycles: two interrupts of 4096
  BOOST_TEST(r.at(1).value == 39u * 256u);  // 10000 misses: 39 interrupts of 256
}
