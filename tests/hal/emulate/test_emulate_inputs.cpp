#define BOOST_TEST_MODULE emulate_inputs
#include <boost/test/unit_test.hpp>

// What emulated counting reads (docs/emulation.md, <pmc/emulate.hpp>): the cache geometry from
// CPUID and the cachegrind output parser. Expected values are worked out by hand from the CPUID
// words and the documents cited; never from the code under test. Which events can be emulated,
// the counting and real programs under Valgrind are in test_emulate.cpp.

#include <pmc/pmc.hpp>

#include "support/emulate.hpp"
#include "support/messages.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

using pmc::Quantity;
using pmc_test::bundled;
using pmc_test::emulate_data;
using pmc_test::contains;
using u64 = std::uint64_t;
constexpr u64 KiB = 1024, MiB = 1024 * 1024;

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
