#define BOOST_TEST_MODULE emulate
#include <boost/test/unit_test.hpp>

// Emulated counting (docs/emulation.md, <pmc/emulate.hpp>): the cache geometry from CPUID, the
// cachegrind output parser, which events can be emulated, exact counting on the device models,
// and real programs under Valgrind. Expected values are worked out by hand from the CPUID words,
// the documents cited, and the source of tests/data/emulate/loop.c, or are Valgrind's own summary
// of a plain cachegrind run (its text, not this library's parser); never from the code under test.

#include <pmc/pmc.hpp>

#include "support/emulate.hpp"

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
constexpr u64 KiB = 1024, MiB = 1024 * 1024;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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
// Cache geometry (docs/emulation.md, "Cache geometry").

BOOST_AUTO_TEST_SUITE(cache_geometry)

BOOST_AUTO_TEST_CASE(leaf2_descriptors_of_a_pentium_iii) {
  // EDX = 0C040882H: descriptors 82H (L2 256 KiB, 8-way, 32-byte lines), 08H (L1I 16 KiB, 4-way,
  // 32), 04H (a TLB), 0CH (L1D 16 KiB, 4-way, 32); EAX's 01H, 02H, 03H are TLBs.
  const pmc::CacheHierarchy h = pmc::cache_hierarchy(pmc::load_cpuid_dump(emulate_data("pentium-iii-leaf2.txt")));
  BOOST_TEST(h.source == "CPUID leaf 2 descriptors");
  BOOST_TEST((h.l1i == pmc::CacheGeometry{16 * KiB, 4, 32}));
  BOOST_TEST((h.l1d == pmc::CacheGeometry{16 * KiB, 4, 32}));
  BOOST_TEST((h.ll == pmc::CacheGeometry{256 * KiB, 8, 32}));
  BOOST_TEST(h.ll_level == 2u);
  BOOST_TEST(h.notes.empty());
}

BOOST_AUTO_TEST_CASE(leaf4_of_a_core2_and_a_skylake) {
  // Core 2: subleaf 2 EBX = 03C0003FH (16 ways, 64-byte lines), ECX = FFFH (4096 sets): 4 MiB.
  const pmc::CacheHierarchy c = pmc::cache_hierarchy(pmc::load_cpuid_dump(emulate_data("core2-leaf4.txt")));
  BOOST_TEST(c.source == "CPUID leaf 4");
  BOOST_TEST((c.l1d == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((c.l1i == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((c.ll == pmc::CacheGeometry{4 * MiB, 16, 64}));
  BOOST_TEST(c.ll_level == 2u);
  // Skylake: the last level is subleaf 3, an L3 (EAX[7:5] = 3): EBX = 03C0003FH, ECX = 1FFFH:
  // 16 x 8192 x 64 = 8 MiB; the L2 (256 KiB) lies between.
  const pmc::CacheHierarchy s = pmc::cache_hierarchy(pmc::load_cpuid_dump(emulate_data("skylake-leaf4.txt")));
  BOOST_TEST((s.ll == pmc::CacheGeometry{8 * MiB, 16, 64}));
  BOOST_TEST(s.ll_level == 3u);
}

BOOST_AUTO_TEST_CASE(amd_leaf_8000001d_of_a_genoa) {
  // 8000001DH subleaf 3: EAX = 0003C163H (level 3, unified), EBX = 03C0003FH (16 ways, 64-byte
  // lines), ECX = 7FFFH (32,768 sets): 32 MiB. Subleaves 0 and 1: 8 ways x 64 sets x 64 = 32 KiB.
  const pmc::CacheHierarchy h = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("amd-zen4-genoa.txt")));
  BOOST_TEST(h.source == "CPUID leaf 8000001DH");
  BOOST_TEST((h.l1d == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((h.l1i == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((h.ll == pmc::CacheGeometry{32 * MiB, 16, 64}));
  BOOST_TEST(h.ll_level == 3u);
}

BOOST_AUTO_TEST_CASE(amd_leaves_80000005_and_6) {
  // K8 revision E: 80000005H ECX = EDX = 40020140H: 64 KiB, 2-way, 64-byte lines (L1D, L1I);
  // 80000006H ECX = 02008140H: L2 512 KiB, associativity field 8 = 16 ways, 64-byte lines;
  // EDX = 0: no L3.
  const pmc::CacheHierarchy k8 = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("amd-k8-reve.txt")));
  BOOST_TEST(k8.source == "CPUID leaves 80000005H/80000006H");
  BOOST_TEST((k8.l1d == pmc::CacheGeometry{64 * KiB, 2, 64}));
  BOOST_TEST((k8.l1i == pmc::CacheGeometry{64 * KiB, 2, 64}));
  BOOST_TEST((k8.ll == pmc::CacheGeometry{512 * KiB, 16, 64}));
  BOOST_TEST(k8.ll_level == 2u);
  // Family 10h revision C (no TopologyExtensions: 80000001H ECX[22] = 0): 80000006H EDX =
  // 0030B140H: L3 of 0CH x 512 KiB = 6 MiB, field BH = 48 ways, 64-byte lines (2,048 sets).
  const pmc::CacheHierarchy deneb = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("amd-fam10h-revc.txt")));
  BOOST_TEST((deneb.ll == pmc::CacheGeometry{6 * MiB, 48, 64}));
  BOOST_TEST(deneb.ll_level == 3u);
}

BOOST_AUTO_TEST_CASE(no_cache_leaves_gives_the_documented_default) {
  // The Pentium P54C's maximum leaf is 1: no leaf 2 or 4, and no extended cache leaves.
  const pmc::CacheHierarchy h = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("pentium.txt")));
  BOOST_TEST(contains(h.source, "default"));
  BOOST_TEST((h.l1i == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((h.l1d == pmc::CacheGeometry{32 * KiB, 8, 64}));
  BOOST_TEST((h.ll == pmc::CacheGeometry{1 * MiB, 16, 64}));
  BOOST_TEST(h.ll_level == 2u);
}

pmc::CpuInfo intel_with_leaf4(const std::vector<pmc::CpuidRegs>& subleaves) {
  pmc::CpuidTable t;
  t.set(0, 0, {4, 0x756e6547, 0x6c65746e, 0x49656e69});  // GenuineIntel, max leaf 4
  t.set(1, 0, {0x000506E3, 0, 0, 0});
  for (std::uint32_t i = 0; i < subleaves.size(); ++i) t.set(4, i, subleaves[i]);
  return pmc::decode_cpuid(t, "test");
}

BOOST_AUTO_TEST_CASE(sets_that_are_not_a_power_of_two_are_rounded_down_and_noted) {
  // An L3 of 11 ways x 24,576 sets x 64 bytes = 16.5 MiB (EBX ways - 1 = 10: 02800000H | 3FH;
  // ECX = 5FFFH). Valgrind needs a power-of-two number of sets: 16,384, so 11 MiB.
  const pmc::CpuInfo cpu = intel_with_leaf4({{0x121, 0x01C0003F, 0x3F, 0},
                                             {0x122, 0x01C0003F, 0x3F, 0},
                                             {0x163, 0x0280003F, 0x5FFF, 0},
                                             {0, 0, 0, 0}});
  const pmc::CacheHierarchy h = pmc::cache_hierarchy(cpu);
  BOOST_TEST((h.ll == pmc::CacheGeometry{11 * MiB, 11, 64}));
  BOOST_TEST(h.notes.size() == 1u);
  BOOST_TEST(contains(h.notes.front(), "24576 sets"));
  BOOST_TEST(contains(h.notes.front(), "power-of-two"));
}

BOOST_AUTO_TEST_CASE(lines_below_16_bytes_are_refused) {
  // EBX line - 1 = 7: 8-byte lines, which Valgrind cannot simulate.
  const pmc::CpuInfo cpu = intel_with_leaf4({{0x121, 0x01C00007, 0x3F, 0}, {0, 0, 0, 0}});
  try {
    (void)pmc::cache_hierarchy(cpu);
    BOOST_FAIL("8-byte lines accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::invalid_argument));
    BOOST_TEST(contains(e.what(), "8-byte lines"));
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// The cachegrind output format (Valgrind manual, "Cachegrind Output File Format").

BOOST_AUTO_TEST_SUITE(cachegrind_format)

constexpr const char* kFile =
    "desc: I1 cache:         16384 B, 32 B, 4-way associative\n"
    "cmd: ./prog 7\n"
    "events: Ir Dr Dw Bc Bcm\n"
    "fl=prog.c\n"
    "fn=main\n"
    "10 5 1 1\n"        // Bc and Bcm left out: 0
    "11 7 . 2 3 1\n"        // "." is 0
    "fl=inline.h\n"
    "fn=main\n"
    "3 2 0 0 1 0\n"
    "fl=prog.c\n"
    "fn=helper\n"
    "20 100 40 10 30 2\n"
    "summary: 114 41 13 34 3\n";
// The same with the summary's last count left out (0 is then meant, and the lines must agree).
constexpr const char* kShortSummary = "events: Ir Bc\nfl=a.c\nfn=f\n1 4\nsummary: 4\n";

BOOST_AUTO_TEST_CASE(functions_and_lines_add_up) {
  const pmc::ProgramActivity a = pmc::parse_cachegrind(kFile, "x.out");
  BOOST_TEST(a.command == "./prog 7");
  BOOST_TEST(a.description.size() == 1u);
  BOOST_TEST(a.present[static_cast<std::size_t>(Quantity::Ir)]);
  BOOST_TEST(!a.present[static_cast<std::size_t>(Quantity::D1mr)]);
  BOOST_TEST(a.lines.size() == 4u);
  BOOST_TEST(a.functions.size() == 2u);
  const pmc::FunctionActivity* main = a.function("main");
  BOOST_REQUIRE(main);
  // main: lines 10, 11 of prog.c and 3 of inline.h: Ir 5 + 7 + 2, Dw 1 + 2 + 0, Bc 0 + 3 + 1.
  BOOST_TEST(main->activity[Quantity::Ir] == 14u);
  BOOST_TEST(main->activity[Quantity::Dw] == 3u);
  BOOST_TEST(main->activity[Quantity::Bc] == 4u);
  BOOST_TEST(main->file == "prog.c");  // 12 of its 14 instructions
  BOOST_TEST(a.total[Quantity::Ir] == 114u);
  BOOST_TEST(a.lines[2].file == "inline.h");
  BOOST_TEST(a.lines[2].line == 3u);
  const pmc::ProgramActivity b = pmc::parse_cachegrind(kShortSummary, "y.out");
  BOOST_TEST(b.total[Quantity::Ir] == 4u);
  BOOST_TEST(b.total[Quantity::Bc] == 0u);
}

BOOST_AUTO_TEST_CASE(errors_name_the_line) {
  auto message = [](const std::string& text) {
    try {
      (void)pmc::parse_cachegrind(text, "bad.out");
    } catch (const pmc::Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  BOOST_TEST(message("events: Ir\nfn=f\n1 2\n") == "bad.out: no summary: line (the file is incomplete: did Valgrind finish?)");
  BOOST_TEST(message("events: Ir\n1 2\nsummary: 2\n") == "bad.out:2: a count line outside a function (no fn= line before it)");
  BOOST_TEST(message("events: Ir\nfn=f\n1 2x\nsummary: 2\n") == "bad.out:3: '2x' is not a count (a decimal number or '.')");
  BOOST_TEST(message("events: Ir\nfn=f\n1 2 3\nsummary: 2\n") == "bad.out:3: 2 counts for 1 events");
  BOOST_TEST(message("events: Ir\nfn=f\n1 99999999999999999999\nsummary: 2\n") ==
             "bad.out:3: count '99999999999999999999' does not fit in 64 bits");
  BOOST_TEST(message("events: Ir\nfn=f\n1 2\nsummary: 3\n") == "bad.out: the lines add up to 2 Ir, the summary says 3");
  BOOST_TEST(message("events: Ir\nfn=f\nbogus\n") ==
             "bad.out:3: unexpected line 'bogus' (expected desc:, cmd:, events:, fl=, fn=, a count line or summary:)");
  BOOST_TEST(message("fn=f\n") == "bad.out: no events: line (not a cachegrind output file?)");
}

BOOST_AUTO_TEST_SUITE_END()

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
