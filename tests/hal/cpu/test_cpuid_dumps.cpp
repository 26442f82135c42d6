#define BOOST_TEST_MODULE cpuid_dumps
#include <boost/test/unit_test.hpp>

// CPUID dumps (pmc::parse_cpuid_dump, pmc::load_cpuid_dump): the `cpuid -r` and AIDA64 formats,
// subleaves, line endings, a byte-order mark, dumps of several CPUs, and the errors, each naming
// the file and the line. The decoding rules are in test_cpuid_decode.cpp.
//
// Expected values below are worked out by hand from the bit layouts in the SDM / AMD APM as
// summarised in docs/hardware/ (archperf.md, amd.md, p6.md, p5.md), never by running the
// decoder.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include "cpuid_test_support.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace fs = std::filesystem;
using pmc::CpuidTable;
using pmc::CpuInfo;
using cpuid_test::expect_error;
using cpuid_test::reg;

namespace {

const fs::path kData = fs::path(PMC_TEST_DATA) / "cpuid";

void check_same(const CpuInfo& a, const CpuInfo& b) {
  BOOST_TEST(a.vendor == b.vendor);
  BOOST_TEST(a.brand == b.brand);
  BOOST_TEST(a.max_leaf == b.max_leaf);
  BOOST_TEST(a.max_ext_leaf == b.max_ext_leaf);
  BOOST_TEST(a.signature == b.signature);
  BOOST_TEST(a.family == b.family);
  BOOST_TEST(a.model == b.model);
  BOOST_TEST(a.stepping == b.stepping);
  BOOST_TEST(a.arch.version == b.arch.version);
  BOOST_TEST(a.arch.gp_counters == b.arch.gp_counters);
  BOOST_TEST(a.arch.gp_width == b.arch.gp_width);
  BOOST_TEST(a.arch.ebx_length == b.arch.ebx_length);
  BOOST_TEST(a.arch.unavailable_events == b.arch.unavailable_events);
  BOOST_TEST(a.arch.fixed_bitmap == b.arch.fixed_bitmap);
  BOOST_TEST(a.arch.fixed_counters == b.arch.fixed_counters);
  BOOST_TEST(a.arch.fixed_width == b.arch.fixed_width);
  BOOST_TEST(a.arch.anythread_deprecated == b.arch.anythread_deprecated);
  BOOST_TEST(a.amd.perfctr_core == b.amd.perfctr_core);
  BOOST_TEST(a.amd.perfctr_nb == b.amd.perfctr_nb);
  BOOST_TEST(a.amd.perfctr_llc == b.amd.perfctr_llc);
  BOOST_TEST(a.amd.perfmon_v2 == b.amd.perfmon_v2);
  BOOST_TEST(a.amd.v2_core_counters == b.amd.v2_core_counters);
  BOOST_TEST(a.hybrid == b.hybrid);
  BOOST_TEST(a.raw.all().size() == b.raw.all().size());
  BOOST_TEST((a.raw.all() == b.raw.all()));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(dump_formats)

BOOST_AUTO_TEST_CASE(cpuid_r_line) {
  const CpuidTable t = pmc::parse_cpuid_dump(
      "CPU:\n"
      "   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
      "   0x00000004 0x02: eax=0x0C004143 ebx=0x01c0003f ecx=0x000001ff edx=0x00000000\n",
      "r.txt");
  BOOST_TEST(t.all().size() == 2u);
  BOOST_TEST(reg(t, 0, 0, 'a') == 0x0Du);
  BOOST_TEST(reg(t, 0, 0, 'b') == 0x756E6547u);
  BOOST_TEST(reg(t, 0, 0, 'c') == 0x6C65746Eu);
  BOOST_TEST(reg(t, 0, 0, 'd') == 0x49656E69u);
  BOOST_TEST(reg(t, 4, 2, 'a') == 0x0C004143u);  // mixed-case hex
  BOOST_TEST(reg(t, 4, 2, 'c') == 0x1FFu);
  BOOST_TEST(!t.get(4, 0).has_value());
}

BOOST_AUTO_TEST_CASE(cpuid_r_without_subleaf_is_subleaf_0) {
  // Old versions of the cpuid tool printed no subleaf.
  const CpuidTable t = pmc::parse_cpuid_dump("   0x00000001: eax=0x00000683 ebx=0x0 ecx=0x0 edx=0x0383fbff\n",
                                             "old.txt");
  BOOST_TEST(reg(t, 1, 0, 'a') == 0x683u);
  BOOST_TEST(reg(t, 1, 0, 'd') == 0x0383FBFFu);
}

BOOST_AUTO_TEST_CASE(aida_line_and_trailing_text) {
  const CpuidTable t = pmc::parse_cpuid_dump(
      "CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69 [GenuineIntel]\n"
      "CPUID 0000000A: 07300403-00000000-00000000-00000603   \n"
      "CPUID 80000002: 65746E49-2952286C-726F4320-4D542865 [Intel(R) Core(TM]\n",
      "a.txt");
  BOOST_TEST(t.all().size() == 3u);
  BOOST_TEST(reg(t, 0x0A, 0, 'a') == 0x07300403u);
  BOOST_TEST(reg(t, 0x0A, 0, 'd') == 0x603u);
  BOOST_TEST(reg(t, 0x80000002, 0, 'b') == 0x2952286Cu);
}

BOOST_AUTO_TEST_CASE(aida_repeated_leaf_is_next_subleaf) {
  const CpuidTable t = pmc::parse_cpuid_dump(
      "CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69\n"
      "CPUID 00000004: 00000001-00000000-00000000-00000000\n"
      "CPUID 00000004: 00000002-00000000-00000000-00000000\n"
      "CPUID 0000000B: 0000000B-00000000-00000000-00000000\n"
      "CPUID 00000004: 00000003-00000000-00000000-00000000\n",
      "sub.txt");
  BOOST_TEST(reg(t, 4, 0, 'a') == 1u);
  BOOST_TEST(reg(t, 4, 1, 'a') == 2u);
  BOOST_TEST(reg(t, 4, 2, 'a') == 3u);  // counting continues across other leaves
  BOOST_TEST(reg(t, 0x0B, 0, 'a') == 0x0Bu);
  BOOST_TEST(!t.get(4, 3).has_value());
}

BOOST_AUTO_TEST_CASE(aida_explicit_subleaf_is_hex) {
  const CpuidTable t = pmc::parse_cpuid_dump(
      "CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69\n"
      "CPUID 0000000D: 00000007-00000340-00000340-00000000 [SL 00]\n"
      "CPUID 0000000D: 00000100-00000240-00000000-00000000 [SL 02]\n"
      "CPUID 0000000D: 00000040-000003C0-00000000-00000000 [SL 0B]\n"
      "CPUID 0000000D: 00000008-00000000-00000001-00000000\n",  // implicit: after 0B comes 0C
      "sl.txt");
  BOOST_TEST(reg(t, 0x0D, 0, 'a') == 7u);
  BOOST_TEST(!t.get(0x0D, 1).has_value());
  BOOST_TEST(reg(t, 0x0D, 2, 'a') == 0x100u);
  BOOST_TEST(reg(t, 0x0D, 11, 'a') == 0x40u);  // [SL 0B] = 11, not 0 and not decimal
  BOOST_TEST(reg(t, 0x0D, 12, 'a') == 8u);
  BOOST_TEST(t.all().size() == 5u);
}

BOOST_AUTO_TEST_CASE(aida64_report_layout) {
  // AIDA64 reports indent the lines, put blanks instead of the colon and mix in prose that also
  // starts with "CPUID".
  const CpuidTable t = pmc::parse_cpuid_dump(
      "    CPUID Registers (CPU #0):\n"
      "      CPUID 00000000                                    0000000D-756E6547-6C65746E-49656E69 [GenuineIntel]\n"
      "      CPUID 00000001                                    000306C3-00100800-FFFAF38B-BFCBFBFF\n"
      "CPUID dump follows\n"
      "CPUID 80000002... brand string lines\n",
      "report.txt");
  BOOST_TEST(t.all().size() == 2u);
  BOOST_TEST(reg(t, 1, 0, 'a') == 0x000306C3u);
  BOOST_TEST(reg(t, 1, 0, 'c') == 0xFFFAF38Bu);
}

BOOST_AUTO_TEST_CASE(crlf_and_missing_final_newline) {
  const CpuidTable lf = pmc::parse_cpuid_dump(
      "CPUID 00000000: 00000001-756E6547-6C65746E-49656E69\nCPUID 00000001: 00000683-00000002-00000000-0383FBFF",
      "lf.txt");
  const CpuidTable crlf = pmc::parse_cpuid_dump(
      "CPUID 00000000: 00000001-756E6547-6C65746E-49656E69\r\nCPUID 00000001: 00000683-00000002-00000000-0383FBFF\r\n",
      "crlf.txt");
  BOOST_TEST(lf.all().size() == 2u);
  BOOST_TEST((lf.all() == crlf.all()));
  BOOST_TEST(reg(crlf, 1, 0, 'd') == 0x0383FBFFu);
}

BOOST_AUTO_TEST_CASE(both_formats_give_the_same_cpu) {
  const CpuInfo r = pmc::load_cpuid_dump(kData / "haswell.cpuid-r.txt");
  const CpuInfo a = pmc::load_cpuid_dump(kData / "haswell.aida.txt");
  check_same(r, a);
  BOOST_TEST(r.source == (kData / "haswell.cpuid-r.txt").string());
  BOOST_TEST(a.source == (kData / "haswell.aida.txt").string());
  // And the facts themselves: 0x306C3 -> family 6 model 0x3C stepping 3; leaf 0AH 0x07300403 /
  // EDX 0x603 -> v3, 4 GP counters of 48 bits, 3 fixed counters of 48 bits.
  BOOST_TEST(r.vendor == "GenuineIntel");
  BOOST_TEST(r.family == 6u);
  BOOST_TEST(r.model == 0x3Cu);
  BOOST_TEST(r.stepping == 3u);
  BOOST_TEST(r.arch.version == 3u);
  BOOST_TEST(r.arch.gp_counters == 4u);
  BOOST_TEST(r.arch.gp_width == 48u);
  BOOST_TEST(r.arch.fixed_counters == 3u);
  BOOST_TEST(r.arch.fixed_width == 48u);
  BOOST_TEST(r.brand == "Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz");
  BOOST_TEST(r.max_ext_leaf == 0x80000008u);
  // Subleaves: leaf 4 has five (four caches + the null terminator), 0BH three, 0DH three.
  BOOST_TEST(reg(r.raw, 4, 3, 'a') == 0x0C03C163u);
  BOOST_TEST(reg(a.raw, 4, 3, 'a') == 0x0C03C163u);
  BOOST_TEST(reg(a.raw, 0x0B, 1, 'c') == 0x201u);
  BOOST_TEST(reg(a.raw, 0x0D, 2, 'b') == 0x240u);
  BOOST_TEST(r.raw.all().size() == 20u);
}

BOOST_AUTO_TEST_CASE(cpuid_r_second_cpu_header_ends_the_dump) {
  // Even when the second CPU's part does not start with leaf 0, its header ends the first CPU.
  const CpuidTable t = pmc::parse_cpuid_dump(
      "CPU 0:\n"
      "   0x00000000 0x00: eax=0x00000004 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
      "   0x00000001 0x00: eax=0x000006f6 ebx=0x00000800 ecx=0x0 edx=0x0\n"
      "CPU 1:\n"
      "   0x00000004 0x00: eax=0x04000121 ebx=0x01c0003f ecx=0x0000003f edx=0x00000001\n",
      "two.txt");
  BOOST_TEST(t.all().size() == 2u);
  BOOST_TEST(!t.get(4).has_value());
}

BOOST_AUTO_TEST_CASE(utf8_bom_is_skipped) {
  const CpuidTable r = pmc::parse_cpuid_dump(
      "\xEF\xBB\xBF   0x00000000 0x00: eax=0x1 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n", "bom-r.txt");
  BOOST_TEST(reg(r, 0, 0, 'a') == 1u);
  const CpuidTable a = pmc::parse_cpuid_dump(
      "\xEF\xBB\xBF" "CPUID 00000000: 00000001-756E6547-6C65746E-49656E69\n", "bom-aida.txt");
  BOOST_TEST(reg(a, 0, 0, 'b') == 0x756E6547u);
}

BOOST_AUTO_TEST_CASE(cpuid_r_multi_cpu_reads_first_cpu_only) {
  const CpuInfo c = pmc::load_cpuid_dump(kData / "two-cpus.cpuid-r.txt");
  BOOST_TEST(reg(c.raw, 1, 0, 'b') == 0x00100800u);  // CPU 0's APIC ID 0, not CPU 1's 0x02
  BOOST_TEST(!c.raw.get(6).has_value());             // only CPU 1 has leaf 6
  BOOST_TEST(c.raw.all().size() == 3u);
  BOOST_TEST(c.arch.version == 3u);
}

BOOST_AUTO_TEST_CASE(aida_multi_cpu_reads_first_cpu_only) {
  const CpuInfo c = pmc::load_cpuid_dump(kData / "two-cpus.aida.txt");
  BOOST_TEST(reg(c.raw, 1, 0, 'b') == 0x00100800u);
  BOOST_TEST(!c.raw.get(1, 1).has_value());  // CPU 1's leaf 1 is not "subleaf 1"
  BOOST_TEST(!c.raw.get(6).has_value());
  BOOST_TEST(c.raw.all().size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(dump_errors)

BOOST_AUTO_TEST_CASE(malformed_lines_name_file_and_line) {
  const std::string head = "# comment\nCPUID 00000000: 00000001-756E6547-6C65746E-49656E69\n";  // lines 1-2
  struct Case {
    std::string line;  // becomes line 3
    std::string_view what;
  };
  const Case cases[] = {
      {"   0x0000000g 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0", "bad leaf number '0x0000000g'"},
      {"   0x00000004 eax=0x0 ebx=0x0 ecx=0x0 edx=0x0", "expected a subleaf"},
      {"   0x00000004 0x0z: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0", "bad subleaf number"},
      {"   0x00000004 0x00: eax=0x0 ebx=0x0 ecx=0x0", "expected 4 registers"},
      {"   0x00000004 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0 esi=0x0", "found 5 fields"},
      {"   0x00000004 0x00: eax=0x0 ebx=0x0 ecx=0xfffffffff edx=0x0", "expected ecx=0x"},
      {"   0x00000004 0x00: eax=0x0 ecx=0x0 ebx=0x0 edx=0x0", "expected ebx=0x"},
      {"   0x00000004 0x00: eax=0x12G4 ebx=0x0 ecx=0x0 edx=0x0", "'eax=0x12G4'"},
      {"CPUID 0000000A: 07300403-00000000-00000603", "expected 4 registers EAX-EBX-ECX-EDX, found 3"},
      {"CPUID 0000000A: 07300403-00000000-00000000-00000603-0", "found 5"},
      {"CPUID 0000000A: 0730040G-00000000-00000000-00000603", "bad EAX value '0730040G'"},
      {"CPUID 0000000A: 07300403--00000000-00000603", "bad EBX value ''"},
      {"CPUID 0000000Z: 07300403-00000000-00000000-00000603", "bad leaf number '0000000Z'"},
      {"CPUID 0000000A:", "missing registers"},
      {"CPUID 00000004: 00000001-00000000-00000000-00000000 [SL zz]", "bad subleaf"},
      {"CPUID 00000004: 00000001-00000000-00000000-00000000 [SL 01", "bad subleaf"},
      {"CPUID 0000000A", "missing registers"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("line: " << c.line) {
      expect_error([&] { (void)pmc::parse_cpuid_dump(head + c.line + "\n", "dump.txt"); }, pmc::errc::parse,
                   {"dump.txt:3: ", c.what});
    }
  }
}

BOOST_AUTO_TEST_CASE(line_numbers_count_every_line) {
  std::string text = "CPUID 00000000: 00000001-756E6547-6C65746E-49656E69\r\n";  // line 1
  for (int i = 2; i <= 149; ++i) text += (i % 2 == 0) ? "# filler\r\n" : "\r\n";
  text += "CPUID 00000001: 00000683-00000002-00000000\r\n";  // line 150
  expect_error([&] { (void)pmc::parse_cpuid_dump(text, "long.txt"); }, pmc::errc::parse, {"long.txt:150: "});
}

BOOST_AUTO_TEST_CASE(duplicate_leaf_names_both_lines) {
  expect_error(
      [] {
        (void)pmc::parse_cpuid_dump(
            "   0x00000000 0x00: eax=0x1 ebx=0x0 ecx=0x0 edx=0x0\n"
            "   0x00000001 0x00: eax=0x683 ebx=0x0 ecx=0x0 edx=0x0\n"
            "\n"
            "   0x00000001 0x00: eax=0x686 ebx=0x0 ecx=0x0 edx=0x0\n",
            "dup.txt");
      },
      pmc::errc::parse, {"dup.txt:4: ", "leaf 0x00000001 subleaf 0x0 already given on line 2"});
}

BOOST_AUTO_TEST_CASE(malformed_file_names_path_and_line) {
  const fs::path p = kData / "bad-line.txt";
  expect_error([&] { (void)pmc::load_cpuid_dump(p); }, pmc::errc::parse,
               {p.string() + ":5: ", "expected 4 registers"});
}

BOOST_AUTO_TEST_CASE(no_cpuid_lines) {
  const fs::path empty = kData / "empty.txt";
  BOOST_TEST_REQUIRE(fs::file_size(empty) == 0u);
  expect_error([&] { (void)pmc::load_cpuid_dump(empty); }, pmc::errc::parse,
               {empty.string() + ": no CPUID leaves found"});
  expect_error([] { (void)pmc::parse_cpuid_dump("# only prose\nCPU 0:\nCPUID Registers:\n", "prose.txt"); },
               pmc::errc::parse, {"prose.txt: no CPUID leaves found"});
}

BOOST_AUTO_TEST_CASE(missing_leaf_1_in_file) {
  const fs::path p = kData / "no-leaf1.txt";
  expect_error([&] { (void)pmc::load_cpuid_dump(p); }, pmc::errc::parse, {p.string() + ": CPUID leaf 1 missing"});
}

BOOST_AUTO_TEST_CASE(unreadable_file) {
  const fs::path missing = kData / "does-not-exist.txt";
  expect_error([&] { (void)pmc::load_cpuid_dump(missing); }, pmc::errc::io,
               {missing.string() + ": ", "No such file"});
  expect_error([] { (void)pmc::load_cpuid_dump(kData); }, pmc::errc::io, {kData.string() + ": ", "directory"});
}

BOOST_AUTO_TEST_SUITE_END()
