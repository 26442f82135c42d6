#define BOOST_TEST_MODULE amd_event_signals
#include <boost/test/unit_test.hpp>

// Workload signals named after catalog events (docs/workload-format.md, "Signals named after
// events"), on the AMD model through the public API: a Hal opened on a bundled Zen 4 (Genoa) or
// Zen 5 CPUID dump with access "sim", a session counting Zen events (perf's lower-case names and
// the libpfm4 spelling) over a workload whose signals are those names. Expected counts come from
// the workload and the counting rules of docs/hardware/amd.md 3.4 (CntMask: 1 per cycle with >=
// CntMask events; Inv: 1 per cycle with fewer; Edge: 1 per rise), never from a run of the code.

#include "support/sim_counting.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <string>
#include <vector>

using u64 = std::uint64_t;

namespace {

using pmc_test::count;
using pmc_test::count1;

}  // namespace

BOOST_AUTO_TEST_CASE(a_zen4_name_counts_per_cycle_with_the_filters_applied) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("amd-zen4-genoa.txt"));
  BOOST_TEST_REQUIRE(hal.backend()->name == "amd");
  // ls_dmnd_fills_from_sys.local_l2 is event 0x043, unit mask 0x01 (perf's amdzen4 list).
  BOOST_TEST((hal.encode("ls_dmnd_fills_from_sys.local_l2").config & 0xFFFF) == 0x0143u);
  const pmc::Workload w = pmc::parse_workload(R"(
[[segment]]
cycles = 1000
signals = { "ls_dmnd_fills_from_sys.local_l2" = 3 }

[[segment]]
cycles = 500
signals = { "ls_dmnd_fills_from_sys.local_l2" = 1 }

[[segment]]
cycles = 200
)",
                                              "zen4");
  const std::string e = "ls_dmnd_fills_from_sys.local_l2";
  BOOST_TEST(count1(hal, w, e) == 3'500u);              // 3 x 1,000 + 1 x 500
  BOOST_TEST(count1(hal, w, e + ":c=2") == 1'000u);     // cycles with >= 2
  BOOST_TEST(count1(hal, w, e + ":c=2:i=1") == 700u);   // cycles with < 2: 500 + 200
  BOOST_TEST(count1(hal, w, e + ":c=1:e=1") == 1u);     // >= 1 rises once, at the start
  BOOST_TEST(count1(hal, w, e + ":k") == 0u);           // no kernel segment
  // Events the workload does not name count nothing.
  BOOST_TEST(count1(hal, w, "ls_dmnd_fills_from_sys.near_cache") == 0u);
  BOOST_TEST(count1(hal, w, "LS_DISPATCH:LD_DISPATCH") == 0u);
}

BOOST_AUTO_TEST_CASE(the_libpfm4_spelling_and_aliases_name_signals_too) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("amd-zen4-genoa.txt"));
  const pmc::Workload w = pmc::parse_workload(R"(
[[segment]]
cycles = 300
signals = { "LS_DISPATCH:LD_DISPATCH" = 2, "ex_ret_instr" = 4 }
)",
                                              "zen4");
  // LS_DISPATCH:LD_DISPATCH (0x029, unit mask 0x01), counted by either spelling of the event.
  BOOST_TEST(count1(hal, w, "LS_DISPATCH:LD_DISPATCH") == 600u);
  BOOST_TEST(count1(hal, w, "LS_DISPATCH:STORE_DISPATCH") == 0u);
  // ex_ret_instr is perf's name of RETIRED_INSTRUCTIONS (0x0C0): what "instructions" counts.
  BOOST_TEST(count1(hal, w, "RETIRED_INSTRUCTIONS") == 1'200u);
  BOOST_TEST(count1(hal, w, "instructions") == 1'200u);
  // perf's spelling of the same unit mask, ls_dispatch.ld_dispatch, names the same signal.
  const pmc::Workload perf = pmc::parse_workload(
      "[[segment]]\ncycles = 100\nsignals = { \"ls_dispatch.ld_dispatch\" = 3 }\n", "perf");
  BOOST_TEST(count1(hal, perf, "LS_DISPATCH:LD_DISPATCH") == 300u);
  BOOST_TEST(count1(hal, perf, "ls_dispatch.ld_dispatch") == 300u);
  BOOST_TEST(count1(hal, perf, "LS_DISPATCH:STORE_DISPATCH") == 0u);
}

BOOST_AUTO_TEST_CASE(a_zen5_name_counts_in_kernel_and_user_segments) {
  const pmc::Hal hal = pmc::Hal::open(pmc_test::sim_config_for("amd-zen5.txt"));
  BOOST_TEST_REQUIRE(hal.backend()->name == "amd");
  pmc::Workload w;  // built in code, as the emulation layer builds its segments
  pmc::OwnedSegment user(1000);
  user.signal("ls_dispatch.all", 2);
  w.add(user);
  pmc::OwnedSegment kernel(100, pmc::Mode::kernel);
  kernel.signal("ls_dispatch.all", 5);
  w.add(kernel);
  BOOST_TEST(count1(hal, w, "ls_dispatch.all") == 2'500u);
  BOOST_TEST(count1(hal, w, "ls_dispatch.all:u") == 2'000u);
  BOOST_TEST(count1(hal, w, "ls_dispatch.all:k") == 500u);
  BOOST_TEST(count1(hal, w, "ls_dispatch.all:c=3") == 100u);  // the kernel cycles, 5 >= 3
}
