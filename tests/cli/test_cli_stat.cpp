#define BOOST_TEST_MODULE cli_stat
#include <boost/test/unit_test.hpp>

// `pmc stat --workload` as a user runs it (the built pmc as a child process,
// cli_test_support.hpp): metrics by the events' generic names, the counts a workload file
// implies, workload files missing, malformed or invalid, signals named after catalog events,
// top-down on the command line, and the events it refuses.

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_support.hpp"

using namespace pmc_test::cli;

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_stat)

BOOST_FIXTURE_TEST_CASE(insn_per_cycle_from_the_events_generic_names, Cli) {
  // The IPC metric (data/metrics/generic.toml) finds its inputs by the catalog's `generic`,
  // whatever the events' names: archperf-demo (workload comments) retires 15,700,000
  // instructions in 5,750,000 unhalted cycles, 2.730 per cycle; p6-demo 7,550,000 user
  // instructions in 4,940,000 user cycles, 1.528 (a metric pairs inputs of the same levels, as
  // perf: user instructions over cycles of every level would be no IPC, test_stat_perf_parity).
  Result r = pmc(args({{"stat", "--cpuid-dump", "core2"}, {"--workload", "archperf-demo", "-e", "cycles,INSTRUCTION_RETIRED"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "15,700,000      INSTRUCTION_RETIRED          #    2.730 insn per cycle"), r);
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "CPU_CLK_UNHALTED:u,INST_RETIRED:u"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "7,550,000      INST_RETIRED:u               #    1.528 insn per cycle"), r);
  // The same in JSON, by name.
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "CPU_CLK_UNHALTED:u,INST_RETIRED:u", "--json"}}));
  json j = parse_json(r);
  const json* ipc = find_by(j["metrics"], "name", "IPC");
  BOOST_REQUIRE_MESSAGE(ipc, r.out);
  BOOST_TEST((*ipc)["value"].get<double>() == 7'550'000.0 / 4'940'000.0, boost::test_tools::tolerance(1e-12));
}

namespace {

// The bundled workload: the source copy, else the build tree's (installed layout) copy.
fs::path demo_workload() {
  for (const fs::path& p : {fs::path(PMC_SOURCE_DIR) / "examples" / "workloads" / "p6-demo.toml",
                            fs::path(PMC_DATA_DIR) / "workloads" / "p6-demo.toml"})
    if (fs::exists(p)) return p;
  return {};
}

struct Expected {
  std::uint64_t unhalted_cycles = 0;
  std::uint64_t all_cycles = 0;
  std::uint64_t instructions = 0;
};

// Totals implied by the workload file (docs/workload-format.md): each segment lasts
// cycles * repeat; CPU_CLK_UNHALTED advances only in segments that are not halted; a signal
// occurs `value` times per cycle.
Expected expected_from(const fs::path& file) {
  Expected e;
  toml::table doc = toml::parse_file(file.string());
  const toml::array* segments = doc["segment"].as_array();
  BOOST_REQUIRE_MESSAGE(segments, file << " has no [[segment]]");
  for (const auto& node : *segments) {
    const toml::table& seg = *node.as_table();
    const auto cycles = static_cast<std::uint64_t>(seg["cycles"].value_or<std::int64_t>(0));
    const auto repeat = static_cast<std::uint64_t>(seg["repeat"].value_or<std::int64_t>(1));
    const bool halted = seg["halted"].value_or(false);
    const auto insn = static_cast<std::uint64_t>(seg["signals"]["instructions"].value_or<std::int64_t>(0));
    e.all_cycles += cycles * repeat;
    if (!halted) e.unhalted_cycles += cycles * repeat;
    e.instructions += insn * cycles * repeat;
  }
  return e;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(demo_workload_counts, Cli) {
  const fs::path file = demo_workload();
  BOOST_REQUIRE_MESSAGE(!file.empty(), "examples/workloads/p6-demo.toml is missing");
  const Expected want = expected_from(file);
  BOOST_TEST_MESSAGE("expected cycles " << want.unhalted_cycles << ", instructions " << want.instructions);
  BOOST_REQUIRE(want.instructions > 0);

  Result r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["backend"] == "p6", r.out);
  BOOST_TEST(j["cycles"] == want.all_cycles, r.out);
  const json* cycles = find_by(j["counters"], "event", "cycles");
  const json* insn = find_by(j["counters"], "event", "instructions");
  BOOST_REQUIRE_MESSAGE(cycles, "no 'cycles' counter: " << r.out);
  BOOST_REQUIRE_MESSAGE(insn, "no 'instructions' counter: " << r.out);
  BOOST_TEST((*cycles)["value"] == want.unhalted_cycles, cycles->dump());
  BOOST_TEST((*insn)["value"] == want.instructions, insn->dump());
  BOOST_TEST(j["counters"].size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(missing_workload_file, Cli) {
  const std::string file = (tmp.path() / "no-such-workload.toml").string();
  fails(args({{"stat"}, kP3, {"--workload", file}}), {file});
}

BOOST_FIXTURE_TEST_CASE(malformed_workload, Cli) {
  const fs::path file = tmp.path() / "broken.toml";
  spit(file, "name = \"broken\"\n[[segment]\ncycles = 10\n");
  fails(args({{"stat"}, kP3, {"--workload", file.string()}}), {file.string() + ":2:"});
}

BOOST_FIXTURE_TEST_CASE(invalid_workload_value, Cli) {
  const fs::path file = tmp.path() / "invalid.toml";
  spit(file, "name = \"invalid\"\n[[segment]]\ncycles = 10\nmode = \"sideways\"\n");
  fails(args({{"stat"}, kP3, {"--workload", file.string()}}), {file.string() + ":4:8:", "sideways"});
}

BOOST_FIXTURE_TEST_CASE(workload_signals_named_after_catalog_events, Cli) {
  // docs/workload-format.md, "Signals named after events": on the simulated Skylake client,
  // 1,000 cycles with 3 MEM_LOAD_RETIRED.L3_MISS per cycle, then 500 with none.
  const fs::path file = tmp.path() / "l3-miss.toml";
  spit(file,
       "[[segment]]\ncycles = 1000\nsignals = { \"MEM_LOAD_RETIRED.L3_MISS\" = 3 }\n"
       "[[segment]]\ncycles = 500\n");
  Result r = pmc(args({{"stat", "--cpuid-dump", "intel-skl"},
                       {"--workload", file.string(), "-e", "MEM_LOAD_RETIRED.L3_MISS,MEM_LOAD_RETIRED.L3_MISS:c=2:i=1", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  const json* all = find_by(j["counters"], "event", "MEM_LOAD_RETIRED.L3_MISS");
  const json* fewer = find_by(j["counters"], "event", "MEM_LOAD_RETIRED.L3_MISS:c=2:i=1");
  BOOST_REQUIRE_MESSAGE(all && fewer, r.out);
  BOOST_TEST((*all)["value"] == 3'000u, all->dump());   // 3 x 1,000
  BOOST_TEST((*fewer)["value"] == 500u, fewer->dump()); // the cycles with fewer than 2
  // A cycles event as a signal is refused, naming the signal.
  spit(file, "[[segment]]\ncycles = 10\nsignals = { \"CPU_CLK_UNHALTED.THREAD\" = 1 }\n");
  fails(args({{"stat", "--cpuid-dump", "intel-skl"}, {"--workload", file.string(), "-e", "MEM_LOAD_RETIRED.L3_MISS"}}),
        {"CPU_CLK_UNHALTED.THREAD", "implicit"});
}

BOOST_FIXTURE_TEST_CASE(topdown_slots_and_perf_metrics_from_the_command_line, Cli) {
  // docs/hardware/archperf.md section 12 on the simulated Sapphire Rapids (6 slots per cycle):
  // 1,000,000 cycles = 6,000,000 slots, of which retiring 2,400,000 (byte 255 x 0.4 = 102,
  // reads 6,000,000 x 102 / 255 = 2,400,000), bad-spec 600,000 (byte 25.5 -> 25, reads
  // 150,000,000 / 255 = 588,235), fe-bound 1,200,000 (51: 1,200,000), be-bound 1,800,000 (76.5 ->
  // 76: 456,000,000 / 255 = 1,788,235), mem-bound 600,000 (25: 588,235). The per-cycle signals:
  // 600,000 cycles of retiring 2, bad-spec 1, fe-bound 2, be-bound 1, mem-bound 1, then 400,000
  // of retiring 3, be-bound 3, mem-bound 0.
  const fs::path file = tmp.path() / "topdown.toml";
  spit(file,
       "[[segment]]\ncycles = 600000\nsignals = { topdown-retiring = 2, topdown-bad-spec = 1, topdown-fe-bound = 2, "
       "topdown-be-bound = 1, topdown-mem-bound = 1 }\n"
       "[[segment]]\ncycles = 400000\nsignals = { topdown-retiring = 3, topdown-be-bound = 3 }\n");
  const std::vector<std::pair<std::string, std::uint64_t>> expected = {
      {"TOPDOWN.SLOTS", 6'000'000},           {"PERF_METRICS.RETIRING", 2'400'000},
      {"PERF_METRICS.BAD_SPECULATION", 588'235}, {"PERF_METRICS.FRONTEND_BOUND", 1'200'000},
      {"PERF_METRICS.BACKEND_BOUND", 1'788'235}, {"topdown-mem-bound", 588'235}};
  std::string events;
  for (const auto& [e, v] : expected) events += (events.empty() ? "" : ",") + e;
  Result r = pmc(args({{"stat", "--cpuid-dump", "intel-spr"}, {"--workload", file.string(), "-e", events, "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  for (const auto& [e, v] : expected) {
    const json* c = find_by(j["counters"], "event", e);
    BOOST_REQUIRE_MESSAGE(c, e << ": " << r.out);
    BOOST_TEST((*c)["value"] == v, c->dump());
  }
  // The table prints them too.
  r = pmc(args({{"stat", "--cpuid-dump", "intel-spr"}, {"--workload", file.string(), "-e", events}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "2,400,000      PERF_METRICS.RETIRING"), r);
  // Skylake has no PERF_METRICS: refused, naming the CPU.
  fails(args({{"stat", "--cpuid-dump", "intel-skl"}, {"--workload", file.string(), "-e", "PERF_METRICS.RETIRING"}}),
        {"PERF_METRICS", "family 6 model 78"});
}

BOOST_FIXTURE_TEST_CASE(unknown_event, Cli) {
  Result r = fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "instructions,NO_SUCH_EVENT"}}),
                   {"NO_SUCH_EVENT"});
  BOOST_TEST(r.out.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(impossible_assignment, Cli) {
  // MUL and DIV both count on counter 1 only: as a group ({...}) they cannot be counted at once;
  // as two events they take turns on counter 1 (multiplexed).
  Result r = fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "{MUL,DIV}"}}), {"MUL", "DIV"});
  BOOST_TEST(r.out.empty(), r);
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "MUL,DIV", "--json"}}));
  BOOST_TEST(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["counters"][0]["extrapolated"] == true, r.out);
}

BOOST_FIXTURE_TEST_CASE(empty_event_list_entry, Cli) {
  fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "instructions,,cycles"}}), {"instructions,,cycles"});
}

BOOST_AUTO_TEST_SUITE_END()
