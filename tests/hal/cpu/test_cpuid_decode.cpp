#define BOOST_TEST_MODULE cpuid_decode
#include <boost/test/unit_test.hpp>

// The CPUID decoder (pmc::decode_cpuid) on tables written here: the table itself, the vendor
// string, family, model and stepping with their extended fields, leaf 0AH, AMD's extended flags,
// the maximum extended leaf, the hybrid flag, the brand string, missing leaves and describe().
// The dump formats are in test_cpuid_dumps.cpp; the bundled dumps and the native CPU in
// test_cpuid.cpp.
//
// Expected values below are worked out by hand from the bit layouts in the SDM / AMD APM as
// summarised in docs/hardware/ (archperf.md, amd.md, p6.md, p5.md), never by running the
// decoder.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include "cpuid_test_support.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>

using pmc::CpuidRegs;
using pmc::CpuidTable;
using pmc::CpuInfo;
using cpuid_test::expect_error;
using cpuid_test::reg;

namespace {

// Leaf 0 for "GenuineIntel" / "AuthenticAMD": the vendor string is EBX, EDX, ECX, each read
// low byte first. "Genu" = 47 65 6E 75 -> EBX 0x756E6547, "ineI" -> EDX 0x49656E69,
// "ntel" -> ECX 0x6C65746E. "Auth" -> 0x68747541, "enti" -> EDX 0x69746E65, "cAMD" -> ECX 0x444D4163.
constexpr CpuidRegs intel0(std::uint32_t max_leaf) { return {max_leaf, 0x756E6547, 0x6C65746E, 0x49656E69}; }
constexpr CpuidRegs amd0(std::uint32_t max_leaf) { return {max_leaf, 0x68747541, 0x444D4163, 0x69746E65}; }

struct Entry {
  std::uint32_t leaf;
  std::uint32_t subleaf;
  CpuidRegs regs;
};

CpuidTable make_table(std::initializer_list<Entry> entries) {
  CpuidTable t;
  for (const auto& e : entries) t.set(e.leaf, e.subleaf, e.regs);
  return t;
}

CpuInfo decode(std::initializer_list<Entry> entries) { return pmc::decode_cpuid(make_table(entries), "test"); }

// A table with just leaf 0 and leaf 1 (EAX = signature).
CpuInfo decode_signature(std::uint32_t signature) {
  return decode({{0, 0, intel0(1)}, {1, 0, {signature, 0, 0, 0}}});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(table)

BOOST_AUTO_TEST_CASE(set_get_and_overwrite) {
  CpuidTable t;
  BOOST_TEST(t.empty());
  BOOST_TEST(!t.get(1).has_value());
  t.set(4, 2, {1, 2, 3, 4});
  t.set(4, 2, {5, 6, 7, 8});  // the later answer wins
  t.set(7, 0, {9, 10, 11, 12});
  BOOST_TEST(!t.empty());
  BOOST_TEST(t.all().size() == 2u);
  BOOST_TEST(reg(t, 4, 2, 'a') == 5u);
  BOOST_TEST(reg(t, 4, 2, 'd') == 8u);
  BOOST_TEST(!t.get(4).has_value());  // subleaf defaults to 0, which was never set
  BOOST_TEST(reg(t, 7, 0, 'c') == 11u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(decode_rules)

BOOST_AUTO_TEST_CASE(vendor_is_ebx_edx_ecx) {
  const CpuInfo intel = decode({{0, 0, intel0(0x0D)}, {1, 0, {0x000306C3, 0, 0, 0}}});
  BOOST_TEST(intel.vendor == "GenuineIntel");
  BOOST_TEST(intel.max_leaf == 0x0Du);
  BOOST_TEST(intel.is_intel());
  BOOST_TEST(!intel.is_amd());

  const CpuInfo amd = decode({{0, 0, amd0(0x10)}, {1, 0, {0x00A60F12, 0, 0, 0}}});
  BOOST_TEST(amd.vendor == "AuthenticAMD");
  BOOST_TEST(amd.is_amd());
  BOOST_TEST(!amd.is_intel());

  // "CyrixInstead": "Cyri" -> EBX 0x69727943, "xIns" -> EDX 0x736E4978, "tead" -> ECX 0x64616574.
  const CpuInfo cyrix = decode({{0, 0, {1, 0x69727943, 0x64616574, 0x736E4978}}, {1, 0, {0x520, 0, 0, 0}}});
  BOOST_TEST(cyrix.vendor == "CyrixInstead");
  BOOST_TEST(!cyrix.is_intel());
  BOOST_TEST(!cyrix.is_amd());
}

BOOST_AUTO_TEST_CASE(family_6_adds_extended_model) {
  // 0x000306C3: stepping 3, model 0xC, family 6, ext model 3 -> model 0x3C (Haswell).
  const CpuInfo c = decode_signature(0x000306C3);
  BOOST_TEST(c.signature == 0x000306C3u);
  BOOST_TEST(c.family == 6u);
  BOOST_TEST(c.model == 0x3Cu);
  BOOST_TEST(c.stepping == 3u);
  // 0x000706E5: ext model 7, model 0xE -> 0x7E (Ice Lake client).
  BOOST_TEST(decode_signature(0x000706E5).model == 0x7Eu);
}

BOOST_AUTO_TEST_CASE(family_6_ignores_extended_family) {
  // Extended family bits (27:20) are only added when the base family is 0FH.
  const CpuInfo c = decode_signature(0x00F00652);
  BOOST_TEST(c.family == 6u);
  BOOST_TEST(c.model == 5u);
  BOOST_TEST(c.stepping == 2u);
}

BOOST_AUTO_TEST_CASE(family_5_ignores_extended_model) {
  // Base family 5: the extended model nibble (here 1) must NOT be added: model 4, not 0x14.
  const CpuInfo c = decode_signature(0x00010543);
  BOOST_TEST(c.family == 5u);
  BOOST_TEST(c.model == 4u);
  BOOST_TEST(c.stepping == 3u);
  // A plain P54C: 0x525 -> family 5 model 2 stepping 5 (p5.md: family 5).
  const CpuInfo p5 = decode_signature(0x00000525);
  BOOST_TEST(p5.family == 5u);
  BOOST_TEST(p5.model == 2u);
  BOOST_TEST(p5.stepping == 5u);
}

BOOST_AUTO_TEST_CASE(family_0f_with_zero_extended_family) {
  // Pentium 4 Northwood 0x00000F29: base family F + ext 0 = 15, model 2, stepping 9.
  const CpuInfo p4 = decode_signature(0x00000F29);
  BOOST_TEST(p4.family == 15u);
  BOOST_TEST(p4.model == 2u);
  BOOST_TEST(p4.stepping == 9u);
  // AMD K8 0x00040F33: family 15; base family F also adds the ext model: 3 + (4 << 4) = 0x43.
  const CpuInfo k8 = decode_signature(0x00040F33);
  BOOST_TEST(k8.family == 15u);
  BOOST_TEST(k8.model == 0x43u);
}

BOOST_AUTO_TEST_CASE(family_0f_adds_extended_family) {
  // Zen 0x00800F11: 0xF + 0x08 = 0x17, model 1, stepping 1.
  const CpuInfo zen = decode_signature(0x00800F11);
  BOOST_TEST(zen.family == 0x17u);
  BOOST_TEST(zen.model == 1u);
  BOOST_TEST(zen.stepping == 1u);
  // Zen 4 0x00A60F12: 0xF + 0x0A = 0x19, model 1 + (6 << 4) = 0x61, stepping 2.
  const CpuInfo zen4 = decode_signature(0x00A60F12);
  BOOST_TEST(zen4.family == 0x19u);
  BOOST_TEST(zen4.model == 0x61u);
  BOOST_TEST(zen4.stepping == 2u);
}

BOOST_AUTO_TEST_CASE(family_never_from_80000001) {
  // Leaf 1 says Pentium III (0x683); 80000001H EAX says a Zen signature. Leaf 1 wins.
  const CpuInfo c = decode({{0, 0, intel0(2)},
                            {1, 0, {0x00000683, 0, 0, 0}},
                            {0x80000000, 0, {0x80000001, 0, 0, 0}},
                            {0x80000001, 0, {0x00800F11, 0, 0, 0}}});
  BOOST_TEST(c.family == 6u);
  BOOST_TEST(c.model == 8u);
  BOOST_TEST(c.stepping == 3u);
  BOOST_TEST(c.signature == 0x683u);
  BOOST_TEST(c.max_ext_leaf == 0x80000001u);
}

BOOST_AUTO_TEST_CASE(leaf_0a_version_1) {
  // Core Solo/Duo style: EAX 0x07280201 -> v1, 2 GP counters, 40 bits, EBX length 7.
  // Version 1 has no fixed counters: EDX = 0. EBX bit 2 set = reference cycles unavailable.
  const CpuInfo c = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x000006E8, 0, 0, 0}},
                            {0x0A, 0, {0x07280201, 0x00000004, 0, 0}}});
  BOOST_TEST(c.arch.version == 1u);
  BOOST_TEST(c.arch.gp_counters == 2u);
  BOOST_TEST(c.arch.gp_width == 40u);
  BOOST_TEST(c.arch.ebx_length == 7u);
  BOOST_TEST(c.arch.unavailable_events == 0x4u);
  BOOST_TEST(c.arch.fixed_counters == 0u);
  BOOST_TEST(c.arch.fixed_width == 0u);
  BOOST_TEST(!c.arch.anythread_deprecated);
}

BOOST_AUTO_TEST_CASE(leaf_0a_version_2_core2_edx_zero) {
  // Core 2 reports version 2 with EDX = 0 (archperf.md: early Core parts give wrong v2 data).
  // The decoder reports what CPUID says, 0 fixed counters; the quirk is the backend's job.
  const CpuInfo c = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x000006F6, 0, 0, 0}},
                            {0x0A, 0, {0x07280202, 0, 0, 0}}});
  BOOST_TEST(c.arch.version == 2u);
  BOOST_TEST(c.arch.gp_counters == 2u);
  BOOST_TEST(c.arch.gp_width == 40u);
  BOOST_TEST(c.arch.fixed_counters == 0u);
  BOOST_TEST(c.arch.fixed_width == 0u);
  // A well-behaved v2 part: EDX 0x503 = 3 fixed counters (bits 4:0), width 0x503 >> 5 = 40.
  const CpuInfo ok = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x00010676, 0, 0, 0}},
                             {0x0A, 0, {0x07280202, 0, 0, 0x00000503}}});
  BOOST_TEST(ok.arch.fixed_counters == 3u);
  BOOST_TEST(ok.arch.fixed_width == 40u);
}

BOOST_AUTO_TEST_CASE(leaf_0a_version_4) {
  // Skylake style: EAX 0x07300404 -> v4, 4 GP, 48 bits, length 7; EDX 0x603 -> 3 fixed, 48 bits.
  const CpuInfo c = decode({{0, 0, intel0(0x16)}, {1, 0, {0x000506E3, 0, 0, 0}},
                            {0x0A, 0, {0x07300404, 0, 0, 0x00000603}}});
  BOOST_TEST(c.arch.version == 4u);
  BOOST_TEST(c.arch.gp_counters == 4u);
  BOOST_TEST(c.arch.gp_width == 48u);
  BOOST_TEST(c.arch.ebx_length == 7u);
  BOOST_TEST(c.arch.fixed_counters == 3u);
  BOOST_TEST(c.arch.fixed_width == 48u);
  BOOST_TEST(c.arch.fixed_bitmap == 0u);
  BOOST_TEST(!c.arch.anythread_deprecated);
}

BOOST_AUTO_TEST_CASE(leaf_0a_version_5) {
  // EAX 0x08300805: v5, 8 GP, 48 bits, length 8. EBX bit 4 = LLC misses unavailable.
  // ECX 0b101: fixed counters 0 and 2 exist (archperf.md test 13). EDX = 1 contiguous fixed
  // counter | (48 << 5) | AnyThread deprecated (bit 15) = 0x1 | 0x600 | 0x8000 = 0x8601.
  const CpuInfo c = decode({{0, 0, intel0(0x20)}, {1, 0, {0x000706E5, 0, 0, 0}},
                            {0x0A, 0, {0x08300805, 0x00000010, 0x00000005, 0x00008601}}});
  BOOST_TEST(c.arch.version == 5u);
  BOOST_TEST(c.arch.gp_counters == 8u);
  BOOST_TEST(c.arch.gp_width == 48u);
  BOOST_TEST(c.arch.ebx_length == 8u);
  BOOST_TEST(c.arch.unavailable_events == 0x10u);
  BOOST_TEST(c.arch.fixed_bitmap == 0x5u);
  BOOST_TEST(c.arch.fixed_counters == 1u);
  BOOST_TEST(c.arch.fixed_width == 48u);
  BOOST_TEST(c.arch.anythread_deprecated);
}

BOOST_AUTO_TEST_CASE(leaf_0a_field_boundaries) {
  // One distinct value per EAX byte: EAX[31:24] = 1, [23:16] = 2, [15:8] = 3, [7:0] = 4.
  const CpuInfo bytes = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x6F6, 0, 0, 0}}, {0x0A, 0, {0x01020304, 0, 0, 0}}});
  BOOST_TEST(bytes.arch.ebx_length == 1u);
  BOOST_TEST(bytes.arch.gp_width == 2u);
  BOOST_TEST(bytes.arch.gp_counters == 3u);
  BOOST_TEST(bytes.arch.version == 4u);
  // All ones: every field at its maximum (5-bit count, 8-bit width), EBX and ECX whole.
  const CpuInfo ones = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x6F6, 0, 0, 0}},
                               {0x0A, 0, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}}});
  BOOST_TEST(ones.arch.version == 255u);
  BOOST_TEST(ones.arch.gp_counters == 255u);
  BOOST_TEST(ones.arch.gp_width == 255u);
  BOOST_TEST(ones.arch.ebx_length == 255u);
  BOOST_TEST(ones.arch.unavailable_events == 0xFFFFFFFFu);
  BOOST_TEST(ones.arch.fixed_bitmap == 0xFFFFFFFFu);
  BOOST_TEST(ones.arch.fixed_counters == 31u);
  BOOST_TEST(ones.arch.fixed_width == 255u);
  BOOST_TEST(ones.arch.anythread_deprecated);
  // EDX bits 14:13 and 31:16 are reserved: set alone, they decode to nothing.
  const CpuInfo reserved = decode({{0, 0, intel0(0x0A)}, {1, 0, {0x6F6, 0, 0, 0}},
                                   {0x0A, 0, {0x07300405, 0, 0, 0xFFFF6000}}});
  BOOST_TEST(reserved.arch.fixed_counters == 0u);
  BOOST_TEST(reserved.arch.fixed_width == 0u);
  BOOST_TEST(!reserved.arch.anythread_deprecated);
}

BOOST_AUTO_TEST_CASE(leaf_0a_ignored_below_max_leaf) {
  // Max leaf 2 (a P6): a leaf 0AH entry in the table is not the CPU's answer and is ignored.
  const CpuInfo c = decode({{0, 0, intel0(2)}, {1, 0, {0x00000683, 0, 0, 0}},
                            {0x0A, 0, {0x07300403, 0xFF, 0x7, 0x8603}}});
  BOOST_TEST(c.arch.version == 0u);
  BOOST_TEST(c.arch.gp_counters == 0u);
  BOOST_TEST(c.arch.fixed_counters == 0u);
  BOOST_TEST(c.arch.unavailable_events == 0u);
  BOOST_TEST(c.raw.get(0x0A).has_value());  // still kept raw
  // Max leaf 0AH exactly: decoded.
  BOOST_TEST(decode({{0, 0, intel0(0x0A)}, {1, 0, {0x6F6, 0, 0, 0}}, {0x0A, 0, {0x07280202, 0, 0, 0}}})
                 .arch.version == 2u);
  // Leaf 0AH advertised but absent from the table: zeros.
  BOOST_TEST(decode({{0, 0, intel0(0x0D)}, {1, 0, {0x306C3, 0, 0, 0}}}).arch.version == 0u);
}

BOOST_AUTO_TEST_CASE(amd_extended_flags) {
  // 80000001H ECX bit 23 only -> PerfCtrExtCore only.
  const CpuInfo core = decode({{0, 0, amd0(0x0D)}, {1, 0, {0x00600F12, 0, 0, 0}},
                               {0x80000000, 0, {0x8000001E, 0, 0, 0}},
                               {0x80000001, 0, {0x00600F12, 0, 0x00800000, 0}}});
  BOOST_TEST(core.family == 0x15u);
  BOOST_TEST(core.amd.perfctr_core);
  BOOST_TEST(!core.amd.perfctr_nb);
  BOOST_TEST(!core.amd.perfctr_llc);
  BOOST_TEST(!core.amd.perfmon_v2);

  // Bits 24 and 28 (0x11000000) -> NB and LLC, not core.
  const CpuInfo nb = decode({{0, 0, amd0(0x0D)}, {1, 0, {0x00700F01, 0, 0, 0}},
                             {0x80000000, 0, {0x8000001E, 0, 0, 0}},
                             {0x80000001, 0, {0x00700F01, 0, 0x11000000, 0}}});
  BOOST_TEST(!nb.amd.perfctr_core);
  BOOST_TEST(nb.amd.perfctr_nb);
  BOOST_TEST(nb.amd.perfctr_llc);

  // 80000022H: EAX bit 0 PerfMonV2; EBX 0x4106 -> NumPerfCtrCore = 6 (bits 3:0).
  const CpuInfo v2 = decode({{0, 0, amd0(0x10)}, {1, 0, {0x00A60F12, 0, 0, 0}},
                             {0x80000000, 0, {0x80000028, 0, 0, 0}},
                             {0x80000001, 0, {0x00A60F12, 0, 0x75C237FF, 0}},
                             {0x80000022, 0, {0x00000007, 0x00004106, 0, 0}}});
  BOOST_TEST(v2.amd.perfctr_core);
  BOOST_TEST(v2.amd.perfctr_nb);
  BOOST_TEST(v2.amd.perfctr_llc);
  BOOST_TEST(v2.amd.perfmon_v2);
  BOOST_TEST(v2.amd.v2_core_counters == 6u);
  BOOST_TEST(v2.max_ext_leaf == 0x80000028u);

  // NumPerfCtrCore is EBX[3:0] only: with EBX all ones (LBR stack size etc. set too) it is 15.
  const CpuInfo ones = decode({{0, 0, amd0(0x10)}, {1, 0, {0x00A60F12, 0, 0, 0}},
                               {0x80000000, 0, {0x80000022, 0, 0, 0}},
                               {0x80000022, 0, {0xFFFFFFFE, 0xFFFFFFFF, 0, 0}}});
  BOOST_TEST(ones.amd.v2_core_counters == 15u);
  BOOST_TEST(!ones.amd.perfmon_v2);  // EAX bit 0 clear

  // Same 80000022H but the CPU says its last extended leaf is 80000021H: not read.
  const CpuInfo low = decode({{0, 0, amd0(0x10)}, {1, 0, {0x00A10F11, 0, 0, 0}},
                              {0x80000000, 0, {0x80000021, 0, 0, 0}},
                              {0x80000022, 0, {0x00000001, 0x00000006, 0, 0}}});
  BOOST_TEST(!low.amd.perfmon_v2);
  BOOST_TEST(low.amd.v2_core_counters == 0u);

  // 80000001H present in the table but max ext leaf 80000000H: flags not read.
  const CpuInfo none = decode({{0, 0, amd0(1)}, {1, 0, {0x00000642, 0, 0, 0}},
                               {0x80000000, 0, {0x80000000, 0, 0, 0}},
                               {0x80000001, 0, {0x00000742, 0, 0x00800000, 0}}});
  BOOST_TEST(!none.amd.perfctr_core);
}

BOOST_AUTO_TEST_CASE(max_ext_leaf_only_when_it_is_an_extended_leaf) {
  // CPUs without extended leaves answer 80000000H with the highest basic leaf's data (SDM):
  // here a leaf-2-like 0x03020101, which is not a maximum extended leaf.
  const CpuInfo c = decode({{0, 0, intel0(2)}, {1, 0, {0x00000652, 0, 0, 0}},
                            {0x80000000, 0, {0x03020101, 0, 0, 0x0C040843}}});
  BOOST_TEST(c.max_ext_leaf == 0u);
  BOOST_TEST(decode_signature(0x652).max_ext_leaf == 0u);  // absent
}

BOOST_AUTO_TEST_CASE(hybrid_from_leaf_7_edx_15) {
  const CpuInfo h = decode({{0, 0, intel0(0x20)}, {1, 0, {0x00090672, 0, 0, 0}},
                            {7, 0, {0, 0, 0, 0x00008000}}});
  BOOST_TEST(h.hybrid);
  BOOST_TEST(h.model == 0x97u);
  // Other EDX bits alone do not make a hybrid.
  BOOST_TEST(!decode({{0, 0, intel0(0x20)}, {1, 0, {0x000906EA, 0, 0, 0}}, {7, 0, {0, 0, 0, 0xFFFF7FFF}}})
                  .hybrid);
  // Leaf 7 beyond max leaf: ignored.
  BOOST_TEST(!decode({{0, 0, intel0(6)}, {1, 0, {0x000006F6, 0, 0, 0}}, {7, 0, {0, 0, 0, 0x8000}}}).hybrid);
}

BOOST_AUTO_TEST_CASE(brand_string_trimmed) {
  // "  AB" + "CD  " + NUL padding, spread over 80000002H..80000004H:
  // 80000002H EAX = "  AB" = 20 20 41 42 -> 0x42412020, EBX = "CD  " -> 0x20204443, rest 0.
  const CpuInfo c = decode({{0, 0, intel0(1)}, {1, 0, {0x00000F29, 0, 0, 0}},
                            {0x80000000, 0, {0x80000004, 0, 0, 0}},
                            {0x80000002, 0, {0x42412020, 0x20204443, 0, 0}},
                            {0x80000003, 0, {0, 0, 0, 0}},
                            {0x80000004, 0, {0, 0, 0, 0}}});
  BOOST_TEST(c.brand == "ABCD");
  // Max ext leaf 80000003H: 80000004H is not the CPU's answer even if the table has it, the
  // brand string is incomplete and left empty.
  const CpuInfo partial = decode({{0, 0, intel0(1)}, {1, 0, {0x00000F29, 0, 0, 0}},
                                  {0x80000000, 0, {0x80000003, 0, 0, 0}},
                                  {0x80000002, 0, {0x42412020, 0x20204443, 0, 0}},
                                  {0x80000003, 0, {0, 0, 0, 0}},
                                  {0x80000004, 0, {0, 0, 0, 0}}});
  BOOST_TEST(partial.brand.empty());
  // Max ext leaf 80000004H but the dump lacks 80000004H: no brand either.
  const CpuInfo gap = decode({{0, 0, intel0(1)}, {1, 0, {0x00000F29, 0, 0, 0}},
                              {0x80000000, 0, {0x80000004, 0, 0, 0}},
                              {0x80000002, 0, {0x42412020, 0x20204443, 0, 0}},
                              {0x80000003, 0, {0, 0, 0, 0}}});
  BOOST_TEST(gap.brand.empty());
}

BOOST_AUTO_TEST_CASE(missing_leaf_0_or_1) {
  expect_error([] { (void)pmc::decode_cpuid(make_table({{1, 0, {0x306C3, 0, 0, 0}}}), "src.txt"); },
               pmc::errc::parse, {"src.txt: ", "CPUID leaf 0 missing"});
  expect_error([] { (void)pmc::decode_cpuid(make_table({{0, 0, intel0(1)}}), "src.txt"); },
               pmc::errc::parse, {"src.txt: ", "CPUID leaf 1 missing"});
  expect_error([] { (void)pmc::decode_cpuid(CpuidTable{}, "nothing"); }, pmc::errc::parse,
               {"nothing: ", "leaf 0 missing"});
}

BOOST_AUTO_TEST_CASE(describe_one_line) {
  BOOST_TEST(pmc::describe(decode({{0, 0, intel0(2)}, {1, 0, {0x00000683, 0, 0, 0}}})) ==
             "GenuineIntel family 6 model 8 stepping 3");
  const CpuInfo withBrand = decode({{0, 0, intel0(1)}, {1, 0, {0x00000F29, 0, 0, 0}},
                                    {0x80000000, 0, {0x80000004, 0, 0, 0}},
                                    {0x80000002, 0, {0x42412020, 0x20204443, 0, 0}},
                                    {0x80000003, 0, {0, 0, 0, 0}},
                                    {0x80000004, 0, {0, 0, 0, 0}}});
  BOOST_TEST(pmc::describe(withBrand) == "GenuineIntel family 15 model 2 stepping 9 (ABCD)");
  // Family and model print in decimal: Zen 4 0x19 / 0x61 -> 25 / 97.
  BOOST_TEST(pmc::describe(decode({{0, 0, amd0(0x10)}, {1, 0, {0x00A60F12, 0, 0, 0}}})) ==
             "AuthenticAMD family 25 model 97 stepping 2");
}

BOOST_AUTO_TEST_SUITE_END()
