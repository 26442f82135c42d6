#define BOOST_TEST_MODULE emulate
#include <boost/test/unit_test.hpp>

// Emulated counting (docs/emulation.md, <pmc/emulate.hpp>): which events can be emulated, exact
// counting on the device models, and real programs under Valgrind (the cache geometry from CPUID
// and the cachegrind output parser are in test_emulate_inputs.cpp). Expected values are worked
// out by hand from the documents cited and the source of tests/data/emulate/loop.c, or are
// Valgrind's own summary of a plain cachegrind run (its text, not this library's parser); never
// from the code under test.

#include <pmc/pmc.hpp>

#include "support/emulate.hpp"
#include "support/messages.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using pmc::Quantity;
using pmc_test::bundled;
using pmc_test::emulate_data;
using pmc_test::open_hal;
using u64 = std::uint64_t;
using pmc_test::contains;

// The message of the not_supported error f throws.
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    return e.what();
  }
  BOOST_FAIL("expected a not_supported error");
  return {};
}

std::vector<std::string> signal_names(const pmc::SignalMap& map) {
  std::vector<std::string> out;
  for (const auto& s : map.signals) out.push_back(s.signal);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Which events can be emulated (the black-box probes on the device model).

BOOST_AUTO_TEST_SUITE(producible)

BOOST_AUTO_TEST_CASE(p6_counts_activity_events_and_refuses_cycles) {
  const pmc::Hal hal = open_hal(bundled("pentium-iii.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::cache_hierarchy(hal.cpu()));
  BOOST_TEST(map.model == "p6");
  const auto inst = pmc::check_emulated_event(hal, map, "INST_RETIRED");
  BOOST_TEST(inst.producible);
  BOOST_REQUIRE(inst.reads.size() == 1u);
  BOOST_TEST(inst.reads[0].first == "instructions");
  BOOST_TEST(inst.reads[0].second == 1u);
  BOOST_TEST(pmc::check_emulated_event(hal, map, "DATA_MEM_REFS").reads.at(0).first == "data_mem_refs");
  BOOST_TEST(pmc::check_emulated_event(hal, map, "BR_MISS_PRED_RETIRED").reads.at(0).first == "branch-misses");
  // CPU_CLK_UNHALTED counts on a segment with no activity at all: cycles.
  const auto clk = pmc::check_emulated_event(hal, map, "CPU_CLK_UNHALTED");
  BOOST_TEST(!clk.producible);
  BOOST_TEST(contains(clk.reason, "cycles"));
  // :c, :e, :i look at each cycle.
  BOOST_TEST(contains(pmc::check_emulated_event(hal, map, "INST_RETIRED:c=1").reason, "with :c"));
  BOOST_TEST(contains(pmc::check_emulated_event(hal, map, "INST_RETIRED:c=1:e=1").reason, "spread over cycles"));
  // Kernel mode only: the emulation sees user mode.
  BOOST_TEST(contains(pmc::check_emulated_event(hal, map, "INST_RETIRED:k").reason, "kernel mode only"));
  // The MESI-state L2 events and the bus events read nothing the emulation produces.
  BOOST_TEST(contains(pmc::check_emulated_event(hal, map, "L2_RQSTS").reason, "none of the activity"));
  BOOST_TEST(contains(pmc::check_emulated_event(hal, map, "task-clock").reason, "HAL event"));
}

BOOST_AUTO_TEST_CASE(p5_duration_counting_is_refused) {
  // CESR CC bit 2 (:d) counts clocks with at least one occurrence (docs/hardware/p5.md 3.1): one
  // cycle with 2 instructions counts 1, not 2.
  const pmc::Hal hal = open_hal(bundled("pentium.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::cache_hierarchy(hal.cpu()));
  BOOST_TEST(pmc::check_emulated_event(hal, map, "DATA_READ").producible);
  const auto d = pmc::check_emulated_event(hal, map, "INSTRUCTIONS_EXECUTED:d");
  BOOST_TEST(!d.producible);
  BOOST_TEST(contains(d.reason, "not in proportion"));
  BOOST_TEST(contains(d.reason, ":d"));
}

BOOST_AUTO_TEST_CASE(archperf_reference_cycles_and_mid_level_caches) {
  // Core 2 (two levels: the L2 is the last): LLC references are the L1 misses.
  const pmc::Hal core2 = open_hal(emulate_data("core2-leaf4.txt"));
  const pmc::SignalMap m2 = pmc::emulated_signals(core2, pmc::cache_hierarchy(core2.cpu()));
  BOOST_TEST(pmc::check_emulated_event(core2, m2, "LLC_REFERENCES").producible);
  BOOST_TEST(pmc::check_emulated_event(core2, m2, "LLC_MISSES").producible);
  // UnHalted Reference Cycles default to one per unhalted cycle (docs/workload-format.md).
  BOOST_TEST(contains(pmc::check_emulated_event(core2, m2, "UNHALTED_REFERENCE_CYCLES").reason, "cycles"));
  // Skylake has an L2 between L1 and its L3: what reaches the L3 is not known.
  const pmc::Hal sky = open_hal(emulate_data("skylake-leaf4.txt"));
  const pmc::SignalMap m3 = pmc::emulated_signals(sky, pmc::cache_hierarchy(sky.cpu()));
  BOOST_TEST(pmc::check_emulated_event(sky, m3, "LLC_MISSES").producible);
  const auto refs = pmc::check_emulated_event(sky, m3, "LLC_REFERENCES");
  BOOST_TEST(!refs.producible);
  BOOST_TEST(contains(refs.reason, "L3"));
}

BOOST_AUTO_TEST_CASE(amd_generics_and_zen_conditional_branches) {
  const pmc::Hal zen = open_hal(bundled("amd-zen4-genoa.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(zen, pmc::cache_hierarchy(zen.cpu()));
  BOOST_TEST(has(signal_names(map), "amd.0x0D1.0x00"));
  BOOST_TEST(pmc::check_emulated_event(zen, map, "RETIRED_CONDITIONAL_BRANCH_INSTRUCTIONS").producible);
  BOOST_TEST(pmc::check_emulated_event(zen, map, "cache-references").producible);
  // Zen's cache-misses are L2 misses; Genoa's last level is its L3.
  BOOST_TEST(contains(pmc::check_emulated_event(zen, map, "cache-misses").reason, "L3"));
  BOOST_TEST(contains(pmc::check_emulated_event(zen, map, "CYCLES_NOT_IN_HALT").reason, "cycles"));
  // On a K8, event D1H is DISPATCH_STALLS (docs/hardware/amd.md): not conditional branches.
  const pmc::Hal k8 = open_hal(bundled("amd-k8-reve.txt"));
  const pmc::SignalMap mk8 = pmc::emulated_signals(k8, pmc::cache_hierarchy(k8.cpu()));
  BOOST_TEST(!has(signal_names(mk8), "amd.0x0D1.0x00"));
  BOOST_TEST(!pmc::check_emulated_event(k8, mk8, "DISPATCH_STALLS").producible);
  // A K8 has two levels: its cache-misses (L2 misses) are the simulated last level's.
  BOOST_TEST(pmc::check_emulated_event(k8, mk8, "cache-misses").producible);
}

BOOST_AUTO_TEST_CASE(only_the_simulated_pmu_counts_emulated_activity) {
  pmc::Config cfg;
  cfg.cpu = bundled("pentium-iii.txt");
  cfg.access = "perf";
  const pmc::Hal hal = pmc::Hal::open(cfg);
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::default_cache_hierarchy());
  const std::string m = refusal([&] { (void)pmc::check_emulated_event(hal, map, "INST_RETIRED"); });
  BOOST_TEST(contains(m, "access \"sim\""));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Counting on the model, from activity written here (no Valgrind).

BOOST_AUTO_TEST_SUITE(counting)

pmc::ProgramActivity activity_of(const std::vector<std::pair<std::string, pmc::Activity>>& lines) {
  pmc::ProgramActivity a;
  a.source = "test";
  a.present.fill(true);
  for (const auto& [fn, act] : lines) {
    const pmc::FunctionActivity* f = a.function(fn);
    std::size_t index = f ? static_cast<std::size_t>(f - a.functions.data()) : a.functions.size();
    if (!f) a.functions.push_back({fn, "t.c", {}});
    a.functions[index].activity += act;
    a.lines.push_back({index, "t.c", a.lines.size() + 1, act});
    a.total += act;
  }
  return a;
}

pmc::Activity act(u64 ir, u64 dr, u64 dw, u64 bc, u64 bi) {
  pmc::Activity a;
  a[Quantity::Ir] = ir;
  a[Quantity::Dr] = dr;
  a[Quantity::Dw] = dw;
  a[Quantity::Bc] = bc;
  a[Quantity::Bi] = bi;
  return a;
}

BOOST_AUTO_TEST_CASE(totals_per_line_and_function_are_exact) {
  const pmc::Hal hal = open_hal(bundled("pentium-iii.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::cache_hierarchy(hal.cpu()));
  // f: two lines (20 instructions, 7 reads, 3 writes, 4 + 1 branches; 5, 0, 9, 0, 0), g: one.
  const auto a = activity_of({{"f", act(20, 7, 3, 4, 1)}, {"g", act(6, 2, 2, 1, 0)}, {"f", act(5, 0, 9, 0, 0)}});
  const pmc::EmulatedCounts c =
      pmc::count_emulated(hal, map, {"INST_RETIRED", "DATA_MEM_REFS", "BR_INST_RETIRED"}, a);
  BOOST_REQUIRE(c.events.size() == 3u);
  BOOST_TEST(c.events[0].reading.value == 31u);  // 20 + 6 + 5
  BOOST_TEST(c.events[1].reading.value == 23u);  // (7 + 3) + (2 + 2) + (0 + 9)
  BOOST_TEST(c.events[2].reading.value == 6u);   // (4 + 1) + 1
  BOOST_TEST(c.events[0].reading.name == "INST_RETIRED");
  BOOST_TEST(c.events[1].reading.time_enabled == 0u);  // no time is emulated
  BOOST_TEST((c.per_line[1] == std::vector<u64>{10, 4, 9}));
  BOOST_TEST((c.per_function[1] == std::vector<u64>{19, 4}));
  BOOST_TEST((c.per_function[0] == std::vector<u64>{25, 6}));
}

BOOST_AUTO_TEST_CASE(counts_past_the_40_bit_counter_are_exact) {
  // 3 x 2^40 + 5 instructions: the P6 counters are 40 bits wide (docs/hardware/p6.md 4); the
  // session folds them as the model runs, so the 64-bit total is exact.
  const pmc::Hal hal = open_hal(bundled("pentium-iii.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::default_cache_hierarchy());
  const u64 n = 3 * (u64{1} << 40) + 5;
  const pmc::EmulatedCounts c = pmc::count_emulated(hal, map, {"INST_RETIRED", "BR_INST_RETIRED"},
                                                    activity_of({{"main", act(n, 0, 0, 7, 0)}}));
  BOOST_TEST(c.events[0].reading.value == n);
  BOOST_TEST(c.events[1].reading.value == 7u);
}

BOOST_AUTO_TEST_CASE(a_refused_event_names_what_the_emulation_provides) {
  const pmc::Hal hal = open_hal(bundled("pentium-iii.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::default_cache_hierarchy());
  const auto a = activity_of({{"f", act(1, 0, 0, 0, 0)}});
  const std::string m = refusal([&] { (void)pmc::count_emulated(hal, map, {"INST_RETIRED", "CPU_CLK_UNHALTED"}, a); });
  BOOST_TEST(contains(m, "cannot emulate CPU_CLK_UNHALTED: it counts in cycles"));
  BOOST_TEST(!contains(m, "cannot emulate INST_RETIRED"));
  BOOST_TEST(contains(m, "The emulation provides the program's user-mode instructions"));
  BOOST_TEST(contains(m, "data_mem_refs (Dr + Dw)"));
  BOOST_TEST(contains(m, "events that count them on this CPU: "));
  BOOST_TEST(contains(m, "BR_MISS_PRED_RETIRED"));
  BOOST_TEST(m.find('\n') == std::string::npos);  // one line
}

BOOST_AUTO_TEST_CASE(a_file_without_branch_simulation_cannot_give_branches) {
  const pmc::Hal hal = open_hal(bundled("pentium-iii.txt"));
  const pmc::SignalMap map = pmc::emulated_signals(hal, pmc::default_cache_hierarchy());
  const pmc::ProgramActivity a = pmc::parse_cachegrind("events: Ir Dr Dw\nfn=f\n1 5 1 1\nsummary: 5 1 1\n", "nb.out");
  BOOST_TEST(pmc::count_emulated(hal, map, {"INST_RETIRED"}, a).events[0].reading.value == 5u);
  const std::string m = refusal([&] { (void)pmc::count_emulated(hal, map, {"BR_INST_RETIRED"}, a); });
  BOOST_TEST(contains(m, "nb.out has no Bc"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Real programs under Valgrind: tests/data/emulate/loop.c.
//
// What its functions do with N (loop.c and its disassembly at -O1 agree; reasoning per item):
//  count_down (assembly): 2N + 2 instructions (mov; N x (sub, jnz); ret); N conditional branches
//    (jnz); 1 data read (ret's return address); its code fits one line of 32 or 64 bytes that no
//    code before it ran from: 1 L1I miss, 1 last-level miss.
//  stream (assembly), over 64 KiB of fresh pages (8192 longs): 5 x 8192 + 2 = 40,962
//    instructions; 8192 + 1 reads (ret), 8192 writes, 8192 conditional branches. Every line of
//    the 64 KiB misses the L1D once on its read (the write then hits), and also misses the last
//    level (never touched); the 64 KiB give every set of a 16 KiB 4-way or 32 KiB 8-way L1D more
//    lines than it has ways, so the return address's line is gone when ret reads it: one more L1D
//    read miss, which hits the last level (256 KiB 8-way or more: 2 or fewer streamed lines per
//    set). 32-byte lines: 2048 + 1 L1D misses; 64-byte lines: 1024 + 1.
//  classify (C): per iteration one conditional branch for the `if` and one for the loop test,
//    plus one to enter the loop: 2N + 1; its `if` on pseudo-random bits is mispredicted about
//    half the time.
//  indirect_calls (C): N calls through a pointer (N indirect branches: Valgrind counts indirect
//    calls, not returns) and N + 1 conditional branches (the loop test, the entry).
//  Valgrind's branch counts leave out direct jumps, direct calls and returns (docs/emulation.md).

BOOST_AUTO_TEST_SUITE(programs, *pmc_test::requires_valgrind())

constexpr u64 N = 4000;

struct Emulated {
  pmc::EmulatedRun run;
  pmc::EmulatedCounts counts;
  u64 fn(std::size_t event, const std::string& name) const {
    const pmc::FunctionActivity* f = run.activity.function(name);
    BOOST_REQUIRE_MESSAGE(f, "no function " << name << " in the cachegrind output");
    return counts.per_function.at(event).at(static_cast<std::size_t>(f - run.activity.functions.data()));
  }
  u64 total(std::size_t event) const { return counts.events.at(event).reading.value; }
};

Emulated emulate(const pmc::Hal& hal, const std::vector<std::string>& events, const std::vector<std::string>& argv) {
  const pmc::CacheHierarchy caches = pmc::cache_hierarchy(hal.cpu());
  const pmc::SignalMap map = pmc::emulated_signals(hal, caches);
  Emulated e{pmc::run_under_valgrind(argv, caches), {}};
  e.counts = pmc::count_emulated(hal, map, events, e.run.activity);
  return e;
}

BOOST_AUTO_TEST_CASE(pentium_iii_counts_are_deterministic_and_match_the_source) {
  const pmc_test::LoopProgram prog;
  const pmc::Hal hal = open_hal(emulate_data("pentium-iii-leaf2.txt"));
  const std::vector<std::string> events{"INST_RETIRED", "BR_INST_RETIRED", "BR_MISS_PRED_RETIRED", "DATA_MEM_REFS",
                                        "DCU_LINES_IN", "L2_LINES_IN", "IFU_IFETCH_MISS"};
  const std::vector<std::string> argv{prog.exe.string(), std::to_string(N)};
  const Emulated a = emulate(hal, events, argv);
  const Emulated b = emulate(hal, events, argv);
  BOOST_TEST(a.run.child.exit_status == 0);
  for (std::size_t e = 0; e < events.size(); ++e) {
    BOOST_TEST(a.total(e) == b.total(e), events[e]);
    BOOST_TEST(a.counts.per_line[e] == b.counts.per_line[e], events[e]);
  }
  // INST_RETIRED, BR_INST_RETIRED, DATA_MEM_REFS (0, 1, 3) per function.
  BOOST_TEST(a.fn(0, "count_down") == 2 * N + 2);
  BOOST_TEST(a.fn(0, "stream") == 40962u);
  BOOST_TEST(a.fn(1, "count_down") == N);
  BOOST_TEST(a.fn(1, "stream") == 8192u);
  BOOST_TEST(a.fn(1, "classify") == 2 * N + 1);
  BOOST_TEST(a.fn(1, "indirect_calls") == (N + 1) + N);
  BOOST_TEST(a.fn(1, "twice") == 0u);
  BOOST_TEST(a.fn(3, "count_down") == 1u);
  BOOST_TEST(a.fn(3, "stream") == 8193u + 8192u);
  BOOST_TEST(a.fn(3, "twice") == N);  // ret reads its return address, N calls
  // 32-byte lines (leaf 2: 0CH, 82H): DCU_LINES_IN 2048 + 1, L2_LINES_IN 2048 data + 1 code line.
  BOOST_TEST(a.fn(4, "stream") == 2049u);
  BOOST_TEST(a.fn(5, "stream") == 2049u);
  BOOST_TEST(a.fn(5, "count_down") == 1u);
  BOOST_TEST(a.fn(6, "stream") == 1u);
  // Mispredictions: Valgrind's predictor, bounded by what it is: a loop branch misses only
  // while the predictor warms up and at the exit; a branch on random bits about half the time.
  BOOST_TEST(a.fn(2, "count_down") <= 32u);
  BOOST_TEST(a.fn(2, "classify") >= N * 35 / 100);
  BOOST_TEST(a.fn(2, "classify") <= N * 65 / 100);
  // The whole program against Valgrind's own summary of a plain cachegrind run.
  const pmc_test::TempDir scratch("pmc-test-emulate-plain");
  const pmc_test::Summary plain = pmc_test::plain_cachegrind(argv, a.run.caches, scratch);
  BOOST_TEST(a.total(0) == plain.at("I refs"));
  BOOST_TEST(a.total(1) == plain.at("Branches"));
  BOOST_TEST(a.total(2) == plain.at("Mispredicts"));
  BOOST_TEST(a.total(3) == plain.at("D refs"));
  BOOST_TEST(a.total(0) == a.run.activity.total[Quantity::Ir]);
}

BOOST_AUTO_TEST_CASE(archperf_core2_and_skylake) {
  const pmc_test::LoopProgram prog;
  const std::vector<std::string> argv{prog.exe.string(), std::to_string(N)};
  const std::vector<std::string> events{"instructions", "branches", "branch-misses", "LLC_MISSES"};
  for (const char* dump : {"core2-leaf4.txt", "skylake-leaf4.txt"}) {
    const pmc::Hal hal = open_hal(emulate_data(dump));
    BOOST_TEST(hal.require_backend().name == "archperf");
    const Emulated a = emulate(hal, events, argv);
    BOOST_TEST(a.fn(0, "count_down") == 2 * N + 2, dump);
    BOOST_TEST(a.fn(1, "classify") == 2 * N + 1, dump);
    BOOST_TEST(a.fn(1, "indirect_calls") == 2 * N + 1, dump);
    // 64-byte lines: 1024 data lines and stream's one code line miss the last level.
    BOOST_TEST(a.fn(3, "stream") == 1025u, dump);
    const pmc_test::TempDir scratch("pmc-test-emulate-plain");
    const pmc_test::Summary plain = pmc_test::plain_cachegrind(argv, a.run.caches, scratch);
    BOOST_TEST(a.total(0) == plain.at("I refs"), dump);
    BOOST_TEST(a.total(1) == plain.at("Branches"), dump);
    BOOST_TEST(a.total(2) == plain.at("Mispredicts"), dump);
    BOOST_TEST(a.total(3) == plain.at("LL misses"), dump);
  }
}

BOOST_AUTO_TEST_CASE(amd_zen4) {
  const pmc_test::LoopProgram prog;
  const std::vector<std::string> argv{prog.exe.string(), std::to_string(N)};
  const pmc::Hal hal = open_hal(bundled("amd-zen4-genoa.txt"));
  const std::vector<std::string> events{"RETIRED_INSTRUCTIONS", "RETIRED_BRANCH_INSTRUCTIONS",
                                        "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED",
                                        "RETIRED_CONDITIONAL_BRANCH_INSTRUCTIONS", "cache-references"};
  const Emulated a = emulate(hal, events, argv);
  BOOST_TEST(a.fn(0, "stream") == 40962u);
  BOOST_TEST(a.fn(1, "indirect_calls") == 2 * N + 1);
  BOOST_TEST(a.fn(3, "indirect_calls") == N + 1);  // conditional only
  BOOST_TEST(a.fn(3, "classify") == 2 * N + 1);
  // L2 requests are the L1 misses: stream's code line + 1024 data lines + the return address.
  BOOST_TEST(a.fn(4, "stream") == 1026u);
  const pmc_test::TempDir scratch("pmc-test-emulate-plain");
  const pmc_test::Summary plain = pmc_test::plain_cachegrind(argv, a.run.caches, scratch);
  BOOST_TEST(a.total(0) == plain.at("I refs"));
  BOOST_TEST(a.total(1) == plain.at("Branches"));
  BOOST_TEST(a.total(2) == plain.at("Mispredicts"));
}

BOOST_AUTO_TEST_CASE(the_exit_status_and_the_output_file) {
  const pmc_test::LoopProgram prog;
  const pmc_test::TempDir scratch("pmc-test-emulate-keep");
  pmc::ValgrindOptions options;
  options.keep = scratch.path() / "kept.out";
  // loop N STATUS exits with STATUS; Valgrind exits as the program did.
  const pmc::EmulatedRun run =
      pmc::run_under_valgrind({prog.exe.string(), "100", "3"}, pmc::default_cache_hierarchy(), options);
  BOOST_TEST(run.child.exit_status == 3);
  BOOST_TEST(run.valgrind.rfind("valgrind-", 0) == 0u);
  BOOST_TEST((pmc::load_cachegrind(options.keep).total == run.activity.total));
}

BOOST_AUTO_TEST_CASE(a_missing_program_or_valgrind_is_named) {
  try {
    (void)pmc::run_under_valgrind({"/nonexistent/prog"}, pmc::default_cache_hierarchy());
    BOOST_FAIL("a missing program ran");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_found));
    BOOST_TEST(contains(e.what(), "/nonexistent/prog"));
  }
  const pmc_test::LoopProgram prog;
  pmc::ValgrindOptions options;
  options.valgrind = "no-such-valgrind-here";
  try {
    (void)pmc::run_under_valgrind({prog.exe.string(), "10"}, pmc::default_cache_hierarchy(), options);
    BOOST_FAIL("ran without Valgrind");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_found));
    BOOST_TEST(contains(e.what(), "no-such-valgrind-here"));
    BOOST_TEST(contains(e.what(), "Valgrind's cachegrind"));
  }
}

BOOST_AUTO_TEST_SUITE_END()
