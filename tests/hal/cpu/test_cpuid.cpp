#define BOOST_TEST_MODULE cpuid
#include <boost/test/unit_test.hpp>

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include "cpu_native.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

// Expected values below are worked out by hand from the bit layouts in the SDM / AMD APM as
// summarised in docs/hardware/ (archperf.md, amd.md, p6.md, p5.md), never by running the
// decoder.

namespace fs = std::filesystem;
using pmc::CpuidRegs;
using pmc::CpuidTable;
using pmc::CpuInfo;

namespace {

const fs::path kData = fs::path(PMC_TEST_DATA) / "cpuid";
const fs::path kBundled = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";

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

// Runs f, which must throw pmc::Error of the given kind whose message contains every part.
template <class F>
void expect_error(F&& f, pmc::errc kind, std::initializer_list<std::string_view> parts) {
  try {
    f();
    BOOST_ERROR("no pmc::Error thrown");
  } catch (const pmc::Error& e) {
    const std::string msg = e.what();
    BOOST_TEST((e.kind() == kind), "error kind " << static_cast<int>(e.kind()) << " for: " << msg);
    for (auto part : parts) {
      BOOST_TEST((msg.find(part) != std::string::npos), "'" << part << "' not in: " << msg);
    }
  }
}

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

std::uint32_t reg(const CpuidTable& t, std::uint32_t leaf, std::uint32_t subleaf, char which) {
  const auto r = t.get(leaf, subleaf);
  BOOST_TEST_REQUIRE(r.has_value(), "leaf " << std::hex << leaf << " subleaf " << subleaf << " missing");
  switch (which) {
    case 'a': return r->eax;
    case 'b': return r->ebx;
    case 'c': return r->ecx;
    default: return r->edx;
  }
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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

BOOST_AUTO_TEST_CASE(max_ext_leaf_only_from_8000xxxx) {
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

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(bundled)

struct Expect {
  const char* file;
  const char* vendor;
  unsigned family, model, stepping;
  unsigned arch_version, gp_counters, gp_width, fixed_counters, fixed_width;
  const char* brand;
  bool perfctr_core, perfmon_v2;
  unsigned v2_core_counters;
  bool captured;  // a real capture (data/cpuid/README.md says so); else written by hand
};

// From the reference sheets: p6.md §1 (P6 models: 1 PPro, 5 PII, 8 PIII, 13 Pentium M; no leaf
// 0AH), archperf.md §1/§6 (Core 2 v2 with EDX = 0; v5 with 4 fixed counters), amd.md §1 (K7 =
// family 6; Zen 4 = family 0x19 with PerfCtrExtCore and PerfMonV2 with 6 core counters), p5.md §1
// (family 5: Pentium, Pentium MMX, OverDrive, Quark; the AMD K6). The captured dumps: the
// signature, PerfCtrExtCore and PerfMonV2 facts their headers and data/cpuid/README.md state, and
// the brand string their leaves 80000002H-80000004H spell (read byte by byte from the files).
const Expect kBundledCpus[] = {
    {"pentium-pro.txt", "GenuineIntel", 6, 1, 7, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-ii.txt", "GenuineIntel", 6, 5, 2, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-iii.txt", "GenuineIntel", 6, 8, 3, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-m.txt", "GenuineIntel", 6, 13, 8, 0, 0, 0, 0, 0, "Intel(R) Pentium(R) M processor 1.80GHz", false,
     false, 0, false},
    {"core2.txt", "GenuineIntel", 6, 15, 6, 2, 2, 40, 0, 0, "Intel(R) Core(TM)2 CPU          6600  @ 2.40GHz",
     false, false, 0, false},
    {"core-duo.txt", "GenuineIntel", 6, 14, 8, 1, 2, 40, 0, 0, "Genuine Intel(R) CPU           T2500  @ 2.00GHz",
     false, false, 0, false},
    {"skylake.txt", "GenuineIntel", 6, 0x5E, 3, 4, 4, 48, 3, 48, "Intel(R) Core(TM) i7-6700K CPU @ 4.00GHz", false,
     false, 0, false},
    {"intel-icelake.txt", "GenuineIntel", 6, 0x7E, 5, 5, 8, 48, 4, 48, "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
     false, false, 0, false},
    {"amd-k7.txt", "AuthenticAMD", 6, 4, 2, 0, 0, 0, 0, 0, "AMD Athlon(tm) Processor", false, false, 0, false},
    {"amd-zen.txt", "AuthenticAMD", 0x19, 0x61, 2, 0, 0, 0, 0, 0, "AMD Ryzen 9 7950X 16-Core Processor", true,
     true, 6, false},
    // Family 5 (p5.md §1): max leaf 1 or 2, no brand string (Quark's brand leaves are zero).
    {"pentium.txt", "GenuineIntel", 5, 2, 5, 0, 0, 0, 0, 0, "", false, false, 0, true},             // 0x525 P54C
    {"pentium-mmx.txt", "GenuineIntel", 5, 4, 3, 0, 0, 0, 0, 0, "", false, false, 0, true},         // 0x543 P55C
    {"pentium-mmx-e74.txt", "GenuineIntel", 5, 4, 4, 0, 0, 0, 0, 0, "", false, false, 0, false},    // 0x544
    {"pentium-overdrive.txt", "GenuineIntel", 5, 3, 2, 0, 0, 0, 0, 0, "", false, false, 0, true},   // 0x1532 P24T
    {"quark-x1000.txt", "GenuineIntel", 5, 9, 0, 0, 0, 0, 0, 0, "", false, false, 0, true},         // 0x590
    {"amd-k6.txt", "AuthenticAMD", 5, 8, 0, 0, 0, 0, 0, 0, "AMD-K6(tm) 3D processor", false, false, 0, true},  // 0x580
    // AMD (amd.md §1): family = base 0xF + extended; PerfCtrExtCore = 80000001H:ECX[23];
    // PerfMonV2 = 80000022H:EAX[0] with the core counters in EBX[3:0].
    {"amd-zen4-kvm.txt", "AuthenticAMD", 0x19, 0x11, 1, 0, 0, 0, 0, 0, "AMD EPYC", false, false, 0, true},
    {"amd-k8-reve.txt", "AuthenticAMD", 0xF, 0x2F, 0, 0, 0, 0, 0, 0, "AMD Athlon(tm) 64 Processor 3200+", false,
     false, 0, true},
    {"amd-k8-revf.txt", "AuthenticAMD", 0xF, 0x43, 3, 0, 0, 0, 0, 0, "AMD Athlon(tm) 64 X2 Dual Core Processor 6400+",
     false, false, 0, true},
    {"amd-fam10h-revb.txt", "AuthenticAMD", 0x10, 2, 2, 0, 0, 0, 0, 0, "AMD Engineering Sample", false, false, 0,
     true},
    {"amd-fam10h-revc.txt", "AuthenticAMD", 0x10, 4, 2, 0, 0, 0, 0, 0, "AMD Phenom(tm) II X4 940 Processor", false,
     false, 0, true},
    {"amd-fam10h-revd.txt", "AuthenticAMD", 0x10, 8, 0, 0, 0, 0, 0, 0, "Six-Core AMD Opteron(tm) Processor 2431",
     false, false, 0, true},
    {"amd-fam10h-reve.txt", "AuthenticAMD", 0x10, 0xA, 0, 0, 0, 0, 0, 0, "AMD Phenom(tm) II X6 1055T Processor",
     false, false, 0, true},
    {"amd-fam12h.txt", "AuthenticAMD", 0x12, 1, 0, 0, 0, 0, 0, 0, "AMD A8-3850 APU with Radeon(tm) HD Graphics",
     false, false, 0, true},
    {"amd-fam14h.txt", "AuthenticAMD", 0x14, 1, 0, 0, 0, 0, 0, 0, "AMD E-350 Processor", false, false, 0, true},
    {"amd-fam15h.txt", "AuthenticAMD", 0x15, 1, 2, 0, 0, 0, 0, 0, "AMD Opteron(TM) Processor 6274", true, false, 0,
     true},
    {"amd-fam16h.txt", "AuthenticAMD", 0x16, 0, 1, 0, 0, 0, 0, 0, "AMD A4-5000 APU with Radeon(TM) HD Graphics",
     false, false, 0, true},
    {"amd-zen1.txt", "AuthenticAMD", 0x17, 1, 1, 0, 0, 0, 0, 0, "AMD Ryzen 7 1800X Eight-Core Processor", true,
     false, 0, true},
    {"amd-zen2.txt", "AuthenticAMD", 0x17, 0x31, 0, 0, 0, 0, 0, 0, "AMD EPYC 7742 64-Core Processor", true, false,
     0, true},
    {"amd-zen3.txt", "AuthenticAMD", 0x19, 1, 1, 0, 0, 0, 0, 0, "AMD EPYC 7713 64-Core Processor", true, false, 0,
     true},  // leaf 80000022H present but zero
    {"amd-zen4-genoa.txt", "AuthenticAMD", 0x19, 0x11, 1, 0, 0, 0, 0, 0, "AMD EPYC 9654 96-Core Processor", true,
     true, 6, true},
    {"amd-zen5.txt", "AuthenticAMD", 0x1A, 2, 1, 0, 0, 0, 0, 0, "AMD EPYC 9655 96-Core Processor", true, true, 6,
     true},
    {"hygon-dhyana.txt", "HygonGenuine", 0x18, 0, 2, 0, 0, 0, 0, 0, "Hygon C86 3185  8-core Processor", true, false,
     0, true},
};

// What data/cpuid/README.md says of a dump: captured when its entry says "captured" or it is
// listed under "Captured dumps".
bool readme_says_captured(const std::string& readme, const std::string& file) {
  const auto at = readme.find("`" + file + "`");
  if (at == std::string::npos) return false;
  const auto line_end = readme.find('\n', at);
  const std::string line = readme.substr(at, line_end == std::string::npos ? std::string::npos : line_end - at);
  const auto section = readme.find("Captured dumps");
  return line.find("captured:") != std::string::npos || (section != std::string::npos && at > section);
}

BOOST_AUTO_TEST_CASE(each_bundled_dump_decodes_to_its_cpu) {
  for (const auto& e : kBundledCpus) {
    BOOST_TEST_CONTEXT(e.file) {
      const CpuInfo c = pmc::load_cpuid_dump(kBundled / e.file);
      BOOST_TEST(c.vendor == e.vendor);
      BOOST_TEST(c.family == e.family);
      BOOST_TEST(c.model == e.model);
      BOOST_TEST(c.stepping == e.stepping);
      BOOST_TEST(c.arch.version == e.arch_version);
      BOOST_TEST(c.arch.gp_counters == e.gp_counters);
      BOOST_TEST(c.arch.gp_width == e.gp_width);
      BOOST_TEST(c.arch.fixed_counters == e.fixed_counters);
      BOOST_TEST(c.arch.fixed_width == e.fixed_width);
      BOOST_TEST(c.brand == e.brand);
      BOOST_TEST(c.amd.perfctr_core == e.perfctr_core);
      BOOST_TEST(c.amd.perfmon_v2 == e.perfmon_v2);
      BOOST_TEST(c.amd.v2_core_counters == e.v2_core_counters);
      BOOST_TEST(!c.hybrid);
      // Every file says what it is; one written by hand says it was not captured, and a real
      // capture (only those README.md says are) says where it comes from.
      const std::string text = read_text(kBundled / e.file);
      BOOST_TEST(text.rfind("# ", 0) == 0u);
      BOOST_TEST(e.captured == readme_says_captured(read_text(kBundled / "README.md"), e.file));
      if (e.captured) {
        BOOST_TEST((text.find("not captured") == std::string::npos));
        BOOST_TEST((text.find("InstLatx64") != std::string::npos || text.find("Captured with") != std::string::npos));
      } else {
        BOOST_TEST((text.find("not captured") != std::string::npos));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(bundled_specifics) {
  // Ice Lake v5: fixed bitmap 0xF, AnyThread deprecated, 8 events enumerated, all available.
  const CpuInfo icl = pmc::load_cpuid_dump(kBundled / "intel-icelake.txt");
  BOOST_TEST(icl.arch.fixed_bitmap == 0xFu);
  BOOST_TEST(icl.arch.anythread_deprecated);
  BOOST_TEST(icl.arch.ebx_length == 8u);
  BOOST_TEST(icl.arch.unavailable_events == 0u);
  // Core 2: 7 architectural events enumerated; PDCM (CPUID.1:ECX[15]) set.
  const CpuInfo c2 = pmc::load_cpuid_dump(kBundled / "core2.txt");
  BOOST_TEST(c2.arch.ebx_length == 7u);
  BOOST_TEST((reg(c2.raw, 1, 0, 'c') & 0x8000u) != 0u);
  // K7: 80000001H EAX says family 7 (0x742); decoded family stays 6.
  const CpuInfo k7 = pmc::load_cpuid_dump(kBundled / "amd-k7.txt");
  BOOST_TEST(((reg(k7.raw, 0x80000001, 0, 'a') >> 8) & 0xFu) == 7u);
  BOOST_TEST(k7.family == 6u);
  BOOST_TEST(!k7.amd.perfctr_nb);
  // Zen 4: NB and LLC counters too.
  const CpuInfo zen = pmc::load_cpuid_dump(kBundled / "amd-zen.txt");
  BOOST_TEST(zen.amd.perfctr_nb);
  BOOST_TEST(zen.amd.perfctr_llc);
  // Pentium Pro: stepping 7 < 9, the erratum-26 range (p6.md §1); no MMX (CPUID.1:EDX[23]).
  const CpuInfo ppro = pmc::load_cpuid_dump(kBundled / "pentium-pro.txt");
  BOOST_TEST(ppro.stepping < 9u);
  BOOST_TEST((reg(ppro.raw, 1, 0, 'd') & (1u << 23)) == 0u);
  BOOST_TEST((reg(pmc::load_cpuid_dump(kBundled / "pentium-ii.txt").raw, 1, 0, 'd') & (1u << 23)) != 0u);
  // Pentium III: no brand string, so describe() is the bare signature.
  BOOST_TEST(pmc::describe(pmc::load_cpuid_dump(kBundled / "pentium-iii.txt")) ==
             "GenuineIntel family 6 model 8 stepping 3");
}

BOOST_AUTO_TEST_CASE(readme_lists_every_bundled_dump_and_both_formats_are_used) {
  const std::string readme = read_text(kBundled / "README.md");
  std::set<std::string> on_disk;
  bool saw_r = false, saw_aida = false;
  for (const auto& entry : fs::directory_iterator(kBundled)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string name = entry.path().filename().string();
    on_disk.insert(name);
    BOOST_TEST((readme.find("`" + name + "`") != std::string::npos), name << " not in README.md");
    const std::string text = read_text(entry.path());
    saw_r = saw_r || text.find("\n   0x00000001 0x00: ") != std::string::npos;
    saw_aida = saw_aida || text.find("\nCPUID 00000001: ") != std::string::npos;
  }
  for (const auto& e : kBundledCpus) BOOST_TEST(on_disk.count(e.file) == 1u, e.file << " missing");
  // The dumps pmc catalog import synthesizes (one per Intel catalog) are checked below instead.
  std::size_t synthesized = 0;
  for (const auto& name : on_disk)
    if (read_text(kBundled / name).rfind("# Synthesized, not captured", 0) == 0) ++synthesized;
  BOOST_TEST(on_disk.size() - synthesized == std::size(kBundledCpus));
  BOOST_TEST(saw_r);
  BOOST_TEST(saw_aida);
}

// The synthesized dumps (data/cpuid/README.md, docs/hardware/intel-catalogs.md section 5) decode
// to what their headers say they are: the header's family, model, stepping, core type and leaf
// 0AH version and general counters, read from the words, against the library's decoding of the
// leaves below it.
BOOST_AUTO_TEST_CASE(synthesized_dumps_decode_as_their_headers_say) {
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(kBundled)) {
    const std::string text = read_text(entry.path());
    if (entry.path().extension() != ".txt" || text.rfind("# Synthesized, not captured", 0) != 0) continue;
    ++seen;
    BOOST_TEST_CONTEXT(entry.path().filename().string()) {
      std::string header;  // the comment lines as one paragraph
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line) && line.rfind("# ", 0) == 0;) header += line.substr(2) + " ";
      const auto number_after = [&](const std::string& words, int base) -> long {
        const std::size_t at = header.find(words);
        return at == std::string::npos ? -1 : std::stol(header.substr(at + words.size()), nullptr, base);
      };
      const CpuInfo c = pmc::load_cpuid_dump(entry.path());
      BOOST_TEST(c.vendor == "GenuineIntel");
      BOOST_TEST(static_cast<long>(c.family) == number_after("(family ", 10));
      BOOST_TEST(static_cast<long>(c.model) == number_after(", model 0x", 16));
      BOOST_TEST(static_cast<long>(c.stepping) == number_after(", stepping ", 10));
      BOOST_TEST(static_cast<long>(c.arch.version) == number_after("leaf 0AH version ", 10));
      BOOST_TEST(static_cast<long>(c.arch.gp_counters) == number_after(" version " + std::to_string(c.arch.version) + ", ", 10));
      BOOST_TEST(c.arch.gp_width == 48u);
      BOOST_TEST(c.hybrid == (header.find("core type 0x") != std::string::npos));
    }
  }
  BOOST_TEST(seen > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(native)

#if defined(__x86_64__) || defined(__i386__)

BOOST_AUTO_TEST_CASE(native_cpu_matches_its_own_leaves) {
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST(!c.vendor.empty());
  BOOST_TEST(c.family > 0u);
  BOOST_TEST(c.source == "native");

  // Independently of the library: CPUID leaf 0 and 1 executed here.
  unsigned a = 0, b = 0, cx = 0, d = 0;
  __cpuid(0, a, b, cx, d);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &cx, 4);
  BOOST_TEST(c.vendor == std::string(vendor));
  BOOST_TEST(c.max_leaf == a);
  __cpuid(1, a, b, cx, d);
  BOOST_TEST(c.signature == a);
  BOOST_TEST(c.stepping == (a & 0xFu));

  // The leaves the library reads at every Hal::open were read (subleaf 0), where the CPU has them;
  // no others: each CPUID instruction traps to the hypervisor in a virtual machine. Intel's
  // leaves 0AH, 15H, 16H, 1AH and 23H are not read on AMD or Hygon parts, whose APM does not
  // define them (docs/hardware/amd.md section 1): there they read as zero, checked here.
  const bool intel_leaves = c.vendor != "AuthenticAMD" && c.vendor != "HygonGenuine";
  std::set<std::uint32_t> eager{0x00, 0x01, 0x07};
  for (std::uint32_t leaf : {0x0Au, 0x15u, 0x16u, 0x1Au, 0x23u}) {
    if (intel_leaves) {
      eager.insert(leaf);
    } else if (leaf <= c.max_leaf) {
      __cpuid_count(leaf, 0, a, b, cx, d);
      BOOST_TEST((a | b | cx | d) == 0u, "leaf " << std::hex << leaf << " is not zero on this " << c.vendor << " part");
    }
  }
  for (std::uint32_t leaf = 0; leaf <= c.max_leaf && leaf <= 0xFF; ++leaf)
    BOOST_TEST(c.raw.get(leaf).has_value() == (eager.count(leaf) == 1), "leaf " << std::hex << leaf);
  for (std::uint32_t leaf : {0x80000001u, 0x80000002u, 0x80000003u, 0x80000004u, 0x80000022u})
    if (leaf <= c.max_ext_leaf) BOOST_TEST(c.raw.get(leaf).has_value(), "leaf " << std::hex << leaf << " not read");
  BOOST_TEST(!c.raw.get(0x80000008).has_value());
  // Under a hypervisor, its vendor leaf (the TSC rate's timing leaf comes from its range).
  // The hypervisor's range is not read eagerly (the TSC's rate asks for it); on request, under a
  // hypervisor (CPUID.1:ECX[31]), its vendor leaf and the timing leaf as far as the vendor leaf
  // reaches, agreeing with CPUID executed here; on bare metal nothing.
  BOOST_TEST(!c.raw.get(0x40000000).has_value());
  CpuInfo h = c;
  pmc::detail::read_native_leaf(h, 0x40000010, 0);
  if ((reg(c.raw, 1, 0, 'c') >> 31) & 1u) {
    __cpuid(0x40000000, a, b, cx, d);
    BOOST_TEST(reg(h.raw, 0x40000000, 0, 'a') == a);
    BOOST_TEST(reg(h.raw, 0x40000000, 0, 'b') == b);
    BOOST_TEST(h.raw.get(0x40000010).has_value() == (a >= 0x40000010u && a <= 0x400000FFu));
  } else {
    BOOST_TEST(!h.raw.get(0x40000000).has_value());
    BOOST_TEST(!h.raw.get(0x40000010).has_value());
  }
  // Leaf 0AH decoding agrees with the raw answer (this project's KVM guests say version 0).
  unsigned expected_version = 0;
  if (intel_leaves && c.max_leaf >= 0x0A) expected_version = reg(c.raw, 0x0A, 0, 'a') & 0xFFu;
  BOOST_TEST(c.arch.version == expected_version);
  if (intel_leaves && c.max_leaf >= 0x0A) {
    BOOST_TEST(c.arch.gp_counters == ((reg(c.raw, 0x0A, 0, 'a') >> 8) & 0xFFu));
    BOOST_TEST(c.arch.fixed_counters == (reg(c.raw, 0x0A, 0, 'd') & 0x1Fu));
  }
  // The answers agree with CPUID executed here, whether the library executed the instruction or
  // took the copy glibc's loader made at start-up (leaves 1, 7 and 80000001H): every register,
  // but leaf 1's EBX[31:24], the initial APIC ID of whichever CPU the reading ran on.
  __cpuid(1, a, b, cx, d);
  BOOST_TEST(reg(c.raw, 1, 0, 'a') == a);
  BOOST_TEST((reg(c.raw, 1, 0, 'b') & 0x00FFFFFFu) == (b & 0x00FFFFFFu));
  BOOST_TEST(reg(c.raw, 1, 0, 'c') == cx);
  BOOST_TEST(reg(c.raw, 1, 0, 'd') == d);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> compared;
  if (c.max_leaf >= 7) {
    compared.emplace_back(7u, 0u);
    if (reg(c.raw, 7, 0, 'a') >= 1) compared.emplace_back(7u, 1u);
  }
  if (c.max_ext_leaf >= 0x80000001) compared.emplace_back(0x80000001u, 0u);
  for (const auto& [leaf, sub] : compared) {
    __cpuid_count(leaf, sub, a, b, cx, d);
    BOOST_TEST(reg(c.raw, leaf, sub, 'a') == a, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'b') == b, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'c') == cx, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'd') == d, "leaf " << std::hex << leaf << "." << sub);
  }
  // Leaf 7's subleaf count (EAX of subleaf 0) was honoured.
  if (c.max_leaf >= 7) {
    const std::uint32_t last = reg(c.raw, 7, 0, 'a');
    for (std::uint32_t s = 1; s <= last && s < 64; ++s) BOOST_TEST(c.raw.get(7, s).has_value());
  }
}

// A leaf the eager reading leaves out is read on request (detail::read_native_leaf: the cache
// leaves for emulation, a leaf a probe table names), its subleaf enumeration following the
// leaf's own rule (SDM / APM), and agrees with CPUID executed here.
BOOST_AUTO_TEST_CASE(native_leaves_on_request) {
  CpuInfo c = pmc::read_native_cpu();
  const auto advertised = [&](std::uint32_t leaf) {
    return leaf < 0x80000000u ? leaf <= c.max_leaf : leaf <= c.max_ext_leaf;
  };
  for (std::uint32_t leaf : {0x02u, 0x04u, 0x0Bu, 0x0Du, 0x1Fu, 0x80000005u, 0x80000006u, 0x80000008u, 0x8000001Du})
    pmc::detail::read_native_leaf(c, leaf, 0);
  for (std::uint32_t leaf : {0x02u, 0x04u, 0x0Bu, 0x0Du, 0x1Fu, 0x80000005u, 0x80000006u, 0x80000008u, 0x8000001Du})
    BOOST_TEST(c.raw.get(leaf).has_value() == advertised(leaf), "leaf " << std::hex << leaf);
  if (advertised(0x80000008)) {
    unsigned a = 0, b = 0, cx = 0, d = 0;
    __cpuid(0x80000008, a, b, cx, d);
    BOOST_TEST(reg(c.raw, 0x80000008, 0, 'a') == a);
  }
  // A leaf beyond the largest the CPU has is not asked for.
  CpuInfo beyond = pmc::read_native_cpu();
  pmc::detail::read_native_leaf(beyond, beyond.max_leaf + 1, 0);
  BOOST_TEST(!beyond.raw.get(beyond.max_leaf + 1).has_value());
  // Nor is anything read into a CPU that is not this machine's.
  CpuInfo dump = c;
  dump.source = "some-dump.txt";
  dump.from = pmc::CpuSource::cpuid_dump;
  dump.raw = pmc::CpuidTable{};
  pmc::detail::read_native_leaf(dump, 1, 0);
  BOOST_TEST(dump.raw.empty());

  const auto last_subleaf = [&](std::uint32_t leaf) {
    std::uint32_t last = 0;
    for (const auto& [key, regs] : c.raw.all()) {
      if (key.first == leaf) last = key.second;
    }
    return last;
  };
  for (const std::uint32_t leaf : {0x04u, 0x8000001Du}) {  // until cache type (EAX[4:0]) 0
    if (!advertised(leaf)) continue;
    const std::uint32_t last = last_subleaf(leaf);
    BOOST_TEST((reg(c.raw, leaf, last, 'a') & 0x1Fu) == 0u, "leaf " << std::hex << leaf << " ends early");
    for (std::uint32_t s = 0; s < last; ++s) BOOST_TEST((reg(c.raw, leaf, s, 'a') & 0x1Fu) != 0u);
  }
  for (const std::uint32_t leaf : {0x0Bu, 0x1Fu}) {  // until level type (ECX[15:8]) 0
    if (!advertised(leaf)) continue;
    const std::uint32_t last = last_subleaf(leaf);
    BOOST_TEST(((reg(c.raw, leaf, last, 'c') >> 8) & 0xFFu) == 0u, "leaf " << std::hex << leaf << " ends early");
  }
  if (advertised(0x0D)) {  // a subleaf per XCR0 | IA32_XSS component >= 2
    const std::uint64_t xcr0 = (std::uint64_t{reg(c.raw, 0x0D, 0, 'd')} << 32) | reg(c.raw, 0x0D, 0, 'a');
    const std::uint64_t xss = (std::uint64_t{reg(c.raw, 0x0D, 1, 'd')} << 32) | reg(c.raw, 0x0D, 1, 'c');
    for (std::uint32_t i = 2; i < 64; ++i) {
      const bool listed = (((xcr0 | xss) >> i) & 1u) == 1u;
      BOOST_TEST(c.raw.get(0x0D, i).has_value() == listed, "leaf 0DH subleaf " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(native_cpu_agrees_with_proc_cpuinfo) {
  // Linux computes vendor/family/model/stepping from the same leaves with the same rules.
  std::ifstream in("/proc/cpuinfo");
  if (!in) {
    BOOST_TEST_MESSAGE("no /proc/cpuinfo: skipped");
    return;
  }
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = colon + 1 < line.size() ? line.substr(colon + 1) : std::string();
    if (!value.empty() && value.front() == ' ') value.erase(0, 1);
    fields.emplace(key, value);
  }
  if (!fields.count("vendor_id") || !fields.count("cpu family") || !fields.count("model")) {
    BOOST_TEST_MESSAGE("/proc/cpuinfo has no x86 identification fields: skipped");
    return;
  }
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST(c.vendor == fields["vendor_id"]);
  BOOST_TEST(std::to_string(c.family) == fields["cpu family"]);
  BOOST_TEST(std::to_string(c.model) == fields["model"]);
  if (fields.count("stepping")) BOOST_TEST(std::to_string(c.stepping) == fields["stepping"]);
}

#else

// Off x86 there is no CPUID: the native CPU is read from what the OS shows (AArch64: MIDR_EL1
// through /proc/cpuinfo and sysfs; elsewhere the machine name), and reading it never throws
// (tests/hal/cpu/test_cpu_description.cpp feeds those readers fixtures).
BOOST_AUTO_TEST_CASE(native_cpu_off_x86_is_not_an_x86_cpu) {
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST((c.isa != pmc::Isa::x86));
  BOOST_TEST(c.source == "native");
}

#endif

BOOST_AUTO_TEST_SUITE_END()
