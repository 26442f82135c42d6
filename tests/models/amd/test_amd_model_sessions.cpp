#define BOOST_TEST_MODULE amd_model_sessions
#include <boost/test/unit_test.hpp>

// The amd backend's driver on the AMD core PMU device model, through sessions, against
// docs/hardware/amd.md. Every expected value below is worked out by hand from the docs (section
// numbers in brackets; "item N" is section 7, "Behaviours worth a test"; "policy N" section 8),
// never taken from a run of the model or the backend. The model's own choices where the docs leave
// one open are the ones sim/models/amd/amd_model.hpp lists.

#include "amd_model_support.hpp"
#include "support/device.hpp"

#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <initializer_list>

using namespace amd_model_test;

// =============================================================================================
// The backend's driver on the model, through sessions.

BOOST_AUTO_TEST_CASE(perfmon_v2_global_control_programmed_by_the_driver) {
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  pmc::Device& d = pmc_test::device(s);
  d.write(GlobalStatusSet, 0x6);  // stale overflow bits from an earlier user
  s.start();
  // program(): GlobalCtl cleared, stale status cleared through StatusClr; start(): EN, then
  // GlobalCtl = counter 0 only [2.3, 3.4]. instructions = 0x0003_00C0 [3.1].
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  BOOST_TEST(d.read(GlobalCtl) == 0x1u);
  BOOST_TEST(d.read(perf_ctl(0)) == (0x0003'00C0ULL | EN));
  BOOST_TEST(d.read(perf_ctl(1)) == 0u);
  d.run(seg(100, {{"instructions", 1}}));
  s.stop();
  BOOST_TEST(d.read(GlobalCtl) == 0u);
  BOOST_TEST(d.read(perf_ctl(0)) == 0x0003'00C0ULL);
  BOOST_TEST(s.read().at(0).value == 100u);
}

BOOST_AUTO_TEST_CASE(the_legacy_driver_on_this_machines_kind) {
  // amd-zen4-kvm.txt: four legacy counters, no global registers: per-counter EN only.
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-kvm.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  s.add("cycles");
  s.start();
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(gp([&] { (void)d.read(GlobalCtl); }));
  BOOST_TEST(d.read(evtsel(0)) == (0x0003'00C0ULL | EN));
  BOOST_TEST(d.read(evtsel(1)) == (0x0003'0076ULL | EN));
  d.run(seg(100, {{"instructions", 2}}));
  s.stop();
  BOOST_TEST(d.read(evtsel(0)) == 0x0003'00C0ULL);
  BOOST_TEST(d.read(evtsel(1)) == 0x0003'0076ULL);
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "instructions").value == 200u);
  BOOST_TEST(reading(rs, "cycles").value == 100u);
}

BOOST_AUTO_TEST_CASE(exact_counts_across_a_48_bit_wrap) {
  // 3 instructions per cycle for 1000 cycles, then 2^48 / 3 + 7 = 93,824,992,236,892 cycles:
  // 93,824,992,237,892 cycles in all, 3 x that = 281,474,976,713,676 instructions, past
  // 2^48 = 281,474,976,710,656. On PerfMonV2 (Genoa), PerfCtrExtCore without it (Zen 3), the
  // legacy layout (the KVM guest) and a K8.
  for (const char* file : {"amd-zen4-genoa.txt", "amd-zen3.txt", "amd-zen4-kvm.txt", "amd-k8-revf.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      pmc::Hal hal = pmc::Hal::open(config_for(file));
      const pmc::Workload w = pmc::parse_workload(
          "[[segment]]\ncycles = 1000\nsignals = { instructions = 3 }\n"
          "[[segment]]\ncycles = 93824992236892\nsignals = { instructions = 3 }\n",
          "wrap.toml");
      pmc::Session s = hal.session();
      s.add("instructions");
      s.add("cycles");
      const pmc::WorkloadRun run = s.run(w);
      BOOST_TEST(run.cycles == 93'824'992'237'892ULL);
      const auto rs = s.read();
      BOOST_TEST(reading(rs, "instructions").value == 281'474'976'713'676ULL);
      BOOST_TEST(reading(rs, "cycles").value == 93'824'992'237'892ULL);
      BOOST_TEST(run.interrupts == 0u);  // the driver sets no INT
    }
  }
}

BOOST_AUTO_TEST_CASE(merge_pair_counts_exactly_end_to_end) {
  // 2^43 cycles x 64 FLOPs = 2^49 = 562,949,953,421,312 events: counter 0 wraps twice, each wrap
  // carried into counter 1; the session's total is exact [5.3 item 5].
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_AVX_FLOPS");
  const pmc::Workload w =
      pmc::parse_workload("[[segment]]\ncycles = 8796093022208\nsignals = { \"amd.0x003.0x1F\" = 64 }\n", "flops.toml");
  s.run(w);
  BOOST_TEST(s.read().at(0).value == 562'949'953'421'312ULL);
  BOOST_TEST(s.read().at(0).counter == 0u);
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);  // 2^49 mod 2^48
  BOOST_TEST(d.read(perf_ctr(1)) == 2u);  // two carries
}

BOOST_AUTO_TEST_CASE(zen_demo_workload_totals) {
  // examples/workloads/zen-demo.toml, its header's totals (worked out there by hand):
  //   pmc stat --cpuid-dump amd-zen4-genoa --workload zen-demo -e instructions,cycles,branches,branch-misses
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  const pmc::Workload w = pmc::load_workload(kSource / "examples" / "workloads" / "zen-demo.toml");
  // The command's four events, then the others the header works out (six counters at most per
  // session; the FLOPs event takes a pair).
  auto count = [&](std::initializer_list<const char*> events) {
    pmc::Session s = hal.session();
    for (const char* e : events) s.add(e);
    const pmc::WorkloadRun run = s.run(w);
    BOOST_TEST(run.cycles == 10'100'000u);  // halted cycles included
    return s.read();
  };
  auto rs = count({"instructions", "cycles", "branches", "branch-misses"});
  BOOST_TEST(reading(rs, "instructions").value == 33'600'000u);
  BOOST_TEST(reading(rs, "cycles").value == 9'100'000u);
  BOOST_TEST(reading(rs, "branches").value == 8'900'000u);
  BOOST_TEST(reading(rs, "branch-misses").value == 500'000u);
  rs = count({"cache-references", "cache-misses", "RETIRED_SSE_AVX_FLOPS", "instructions:u", "instructions:k"});
  BOOST_TEST(reading(rs, "cache-references").value == 400'000u);
  BOOST_TEST(reading(rs, "cache-misses").value == 200'000u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").value == 64'000'000u);
  BOOST_TEST(reading(rs, "instructions:u").value == 33'000'000u);
  BOOST_TEST(reading(rs, "instructions:k").value == 600'000u);
}
