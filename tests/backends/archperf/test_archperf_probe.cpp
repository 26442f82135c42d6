// archperf probe verdicts and counter geometry (docs/hardware/archperf.md sections 1, 2, 6), from
// CPUID dumps of each version and from CPUID tables built here: every verdict carries a reason,
// the geometry comes from CPUID alone, the Core 2 quirk and hybrid parts are handled, and the
// P6 parts stay with p6.
#define BOOST_TEST_MODULE archperf_probe
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"

#include <pmc/sdk/backend.hpp>
#include <pmc/cpu.hpp>
#include <pmc/hal.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace {

// The archperf plugin with its data file.
const pmc_test::LoadedForTest& archperf() {
  static const pmc_test::LoadedForTest loaded("archperf");
  return loaded;
}

pmc::CpuInfo dump(const std::string& name) {
  if (name.rfind("archperf-", 0) == 0) return pmc::load_cpuid_dump(std::string(PMC_TEST_DATA) + "/cpuid/" + name);
  return pmc::load_cpuid_dump(std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name);
}

// A CPUID table: vendor, leaf 1 EAX/ECX, leaf 0AH, and any extra leaves.
struct Cpuid {
  std::string vendor = "GenuineIntel";
  std::uint32_t max_leaf = 0x0A;
  std::uint32_t signature = 0x000106A5;  // family 6 model 26
  std::uint32_t leaf1_ecx = 0;
  pmc::CpuidRegs leaf_a{};
  std::vector<std::tuple<std::uint32_t, std::uint32_t, pmc::CpuidRegs>> extra;

  pmc::CpuInfo info() const {
    pmc::CpuidTable t;
    std::uint32_t v[3] = {};
    std::string padded = vendor;
    padded.resize(12, ' ');
    std::memcpy(v, padded.data(), 12);
    t.set(0, 0, {max_leaf, v[0], v[2], v[1]});
    t.set(1, 0, {signature, 0, leaf1_ecx, 0});
    t.set(0x0A, 0, leaf_a);
    for (const auto& [leaf, sub, r] : extra) t.set(leaf, sub, r);
    return pmc::decode_cpuid(t, "test");
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The registers the PMU of a CPU declares: its own, and the extra registers archperf.toml
// declares for model catalogs' events ([extra.*]: offcore response 0x1A6 / 0x1A7, load latency
// 0x3F6, frontend 0x3F7), which only such events' sessions touch.
std::vector<std::uint32_t> msrs(std::initializer_list<std::uint32_t> l) {
  std::vector<std::uint32_t> v(l);
  for (std::uint32_t extra : {0x1A6u, 0x1A7u, 0x3F6u, 0x3F7u}) v.push_back(extra);
  std::sort(v.begin(), v.end());
  return v;
}

struct Counter {
  pmc::CounterKind kind;
  unsigned index, width;
  std::uint32_t control, counter;
};

void check_counters(const pmc::PmuInfo& p, const std::vector<Counter>& want) {
  BOOST_REQUIRE(p.counters.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST_CONTEXT("counter " << i) {
      BOOST_TEST((p.counters[i].kind == want[i].kind));
      BOOST_TEST(p.counters[i].index == want[i].index);
      BOOST_TEST(p.counters[i].width == want[i].width);
      BOOST_TEST(p.counters[i].control_msr == want[i].control);
      BOOST_TEST(p.counters[i].counter_msr == want[i].counter);
    }
  }
}

constexpr auto G = pmc::CounterKind::general;
constexpr auto F = pmc::CounterKind::fixed;

}  // namespace

BOOST_AUTO_TEST_CASE(every_version_matches_with_its_tag_and_geometry_in_the_reason) {
  struct Row {
    const char* file;
    unsigned version;
    const char* tag;
    const char* summary;
  };
  const Row rows[] = {
      {"archperf-v1-yonah.txt", 1, "v1", "2 general counters x 40 bits"},
      {"core2.txt", 2, "v2", "2 general counters x 40 bits, 3 fixed (0,1,2) x 40 bits"},
      {"archperf-v2-penryn.txt", 2, "v2", "2 general counters x 40 bits, 3 fixed (0,1,2) x 40 bits"},
      {"archperf-v3-nehalem.txt", 3, "v3", "4 general counters x 48 bits, 3 fixed (0,1,2) x 48 bits"},
      {"archperf-v4-skylake.txt", 4, "v4", "4 general counters x 48 bits, 3 fixed (0,1,2) x 48 bits"},
      {"intel-icelake.txt", 5, "v5", "8 general counters x 48 bits, 4 fixed (0,1,2,3) x 48 bits"},
      {"archperf-v5-guest.txt", 5, "v5e", "2 general counters x 48 bits, 2 fixed (0,2) x 48 bits"},
  };
  for (const auto& r : rows) {
    BOOST_TEST_CONTEXT(r.file) {
      const pmc::CpuInfo cpu = dump(r.file);
      const pmc::Match m = archperf().probe(cpu);
      BOOST_TEST(m.matched());
      BOOST_TEST(m.score == 20);
      BOOST_TEST(m.cpu_tag == r.tag);
      BOOST_TEST(has(m.reason, "architectural perfmon version " + std::to_string(r.version)), m.reason);
      BOOST_TEST(has(m.reason, r.summary), m.reason);
      const pmc::PmuInfo p = archperf().pmu(cpu);
      BOOST_TEST(p.name == "archperf");
      BOOST_TEST(p.device_model == "archperf");
      BOOST_TEST(p.cpu_tag == r.tag);
      BOOST_TEST(has(p.description, r.summary), p.description);
    }
  }
}

BOOST_AUTO_TEST_CASE(version_1_has_general_counters_only_and_no_global_registers) {
  const pmc::PmuInfo p = archperf().pmu(dump("archperf-v1-yonah.txt"));
  check_counters(p, {{G, 0, 40, 0x186, 0xC1}, {G, 1, 40, 0x187, 0xC2}});
  BOOST_TEST(p.registers == msrs({0xC1, 0xC2, 0x186, 0x187}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(version_2_to_5_registers) {
  // Core 2: PDCM set (0x345 and the full-width aliases 0x4C1+i), global control, fixed 0-2.
  pmc::PmuInfo p = archperf().pmu(dump("core2.txt"));
  check_counters(p, {{G, 0, 40, 0x186, 0xC1}, {G, 1, 40, 0x187, 0xC2}, {F, 0, 40, 0x38D, 0x309},
                     {F, 1, 40, 0x38D, 0x30A}, {F, 2, 40, 0x38D, 0x30B}});
  BOOST_TEST(p.registers == msrs({0xC1, 0xC2, 0x186, 0x187, 0x309, 0x30A, 0x30B, 0x345, 0x38D, 0x38E, 0x38F, 0x390,
                                  0x4C1, 0x4C2}),
             boost::test_tools::per_element());
  // Version 4 adds GLOBAL_STATUS_SET (0x391).
  p = archperf().pmu(dump("archperf-v4-skylake.txt"));
  BOOST_TEST(p.registers == msrs({0xC1, 0xC2, 0xC3, 0xC4, 0x186, 0x187, 0x188, 0x189, 0x309, 0x30A, 0x30B, 0x345,
                                  0x38D, 0x38E, 0x38F, 0x390, 0x391, 0x4C1, 0x4C2, 0x4C3, 0x4C4}),
             boost::test_tools::per_element());
  // Ice Lake: 8 general counters, FIXED_CTR3 (TOPDOWN.SLOTS) at 0x30C.
  p = archperf().pmu(dump("intel-icelake.txt"));
  BOOST_TEST(p.general_count() == 8u);
  BOOST_REQUIRE(p.fixed(3));
  BOOST_TEST(p.fixed(3)->counter_msr == 0x30Cu);
  BOOST_TEST(p.fixed(3)->control_msr == 0x38Du);
  BOOST_TEST(p.general(7)->control_msr == 0x18Du);
  BOOST_TEST(p.general(7)->counter_msr == 0xC8u);
  BOOST_TEST((std::find(p.registers.begin(), p.registers.end(), 0x4C8u) != p.registers.end()));
}

BOOST_AUTO_TEST_CASE(version_5_fixed_counter_bitmap) {
  // Fact sheet section 8, item 13: EDX[4:0] = 1 with ECX = 101b -> fixed counters 0 and 2.
  const pmc::PmuInfo p = archperf().pmu(dump("archperf-v5-guest.txt"));
  check_counters(p, {{G, 0, 48, 0x186, 0xC1}, {G, 1, 48, 0x187, 0xC2}, {F, 0, 48, 0x38D, 0x309},
                     {F, 2, 48, 0x38D, 0x30B}});
  BOOST_TEST(!p.fixed(1));
  // No PDCM: no IA32_PERF_CAPABILITIES, no full-width aliases.
  BOOST_TEST(p.registers == msrs({0xC1, 0xC2, 0x186, 0x187, 0x309, 0x30B, 0x38D, 0x38E, 0x38F, 0x390, 0x391}),
             boost::test_tools::per_element());
  // Before version 5 ECX is reserved: the same ECX on a version 4 CPU adds nothing.
  Cpuid c;
  c.leaf_a = {0x07300404, 0, 0x00000005 | 0x8, 0x00000601};
  c.leaf1_ecx = 1u << 31;  // a guest, so the Core 2 rule does not apply either
  const pmc::PmuInfo v4 = archperf().pmu(c.info());
  BOOST_TEST(v4.counters.size() == 5u);  // 4 general + fixed 0
  // Fixed counters 0-6 are Intel's (4-6 on the newest Atom cores, 0x30D..0x30F); beyond
  // FIXED_CTR6 they are ignored, and the reason says so.
  c.leaf_a = {0x07300405, 0, 0x000000FF, 0x00008604};  // ECX: fixed counters 0-7
  const pmc::CpuInfo v5 = c.info();
  const pmc::PmuInfo p7 = archperf().pmu(v5);
  BOOST_TEST(p7.counters.size() == 11u);  // 4 general + fixed 0-6
  BOOST_REQUIRE(p7.fixed(6));
  BOOST_TEST(p7.fixed(6)->counter_msr == 0x30Fu);
  BOOST_TEST(p7.fixed(6)->rdpmc.value_or(0) == ((1u << 30) | 6u));
  BOOST_TEST((std::find(p7.registers.begin(), p7.registers.end(), 0x30Fu) != p7.registers.end()));
  BOOST_TEST(!p7.fixed(7));
  BOOST_TEST(has(archperf().probe(v5).reason, "fixed counter 7 ignored"), archperf().probe(v5).reason);
  BOOST_TEST(!has(archperf().probe(v5).reason, "fixed counter 6 ignored"), archperf().probe(v5).reason);
}

BOOST_AUTO_TEST_CASE(core2_quirk) {
  // core2.txt: version 2 with EDX = 0. Linux (intel_pmu_init) assumes three fixed counters.
  const pmc::CpuInfo core2 = dump("core2.txt");
  BOOST_TEST(core2.arch.fixed_counters == 0u);  // the decoder keeps CPUID as it is
  const pmc::Match m = archperf().probe(core2);
  BOOST_TEST(has(m.reason, "Core 2 quirk"), m.reason);
  BOOST_TEST(has(m.reason, "using the general width 40"), m.reason);
  BOOST_TEST(archperf().pmu(core2).fixed(2) != nullptr);
  // Penryn reports its fixed counters properly: no quirk.
  BOOST_TEST(!has(archperf().probe(dump("archperf-v2-penryn.txt")).reason, "quirk"));
  // The same CPUID under a hypervisor (CPUID.1:ECX[31]) is taken as reported: no fixed counter.
  Cpuid guest;
  guest.signature = 0x6F6;
  guest.leaf1_ecx = (1u << 31);
  guest.leaf_a = {0x07280202, 0, 0, 0};
  const pmc::CpuInfo g = guest.info();
  BOOST_TEST(archperf().pmu(g).counters.size() == 2u);
  BOOST_TEST(has(archperf().probe(g).reason, "under a hypervisor"), archperf().probe(g).reason);
  // Version 3 reporting no fixed counters is not the Core 2 case either.
  Cpuid v3;
  v3.leaf_a = {0x07300403, 0, 0, 0};
  BOOST_TEST(archperf().pmu(v3.info()).counters.size() == 4u);
}

BOOST_AUTO_TEST_CASE(hybrid_parts) {
  // Alder Lake P-core without leaf 23H: leaf 0AH's set, and the reason says it is hybrid.
  const pmc::CpuInfo adl = dump("archperf-hybrid-adl.txt");
  BOOST_TEST(adl.hybrid);
  pmc::Match m = archperf().probe(adl);
  BOOST_TEST(m.matched());
  BOOST_TEST(has(m.reason, "hybrid part"), m.reason);
  BOOST_TEST(has(m.reason, "a Core (P-core)"), m.reason);
  BOOST_TEST(has(m.reason, "without CPUID.23H only leaf 0AH's common set is known"), m.reason);
  pmc::PmuInfo p = archperf().pmu(adl);
  BOOST_TEST(p.general_count() == 6u);
  BOOST_TEST(has(p.description, "hybrid part, P-core"), p.description);
  // Meteor Lake E-core with leaf 23H: this core type's counters (8 general, fixed 0-2).
  const pmc::CpuInfo mtl = dump("archperf-hybrid-mtl.txt");
  m = archperf().probe(mtl);
  BOOST_TEST(has(m.reason, "an Atom (E-core)"), m.reason);
  BOOST_TEST(has(m.reason, "counters from CPUID.23H.1 (general bitmap 0xFF, fixed bitmap 0x7)"), m.reason);
  p = archperf().pmu(mtl);
  BOOST_TEST(p.general_count() == 8u);
  BOOST_TEST(p.general(7)->control_msr == 0x18Du);
  BOOST_TEST(p.fixed(2) != nullptr);
  BOOST_TEST(p.fixed(3) == nullptr);
  BOOST_TEST(has(p.description, "hybrid part, E-core: this core type's counters (CPUID.23H)"), p.description);

  // Leaf 23H counts only when CPUID.(7,1):EAX[8] and 23H.0:EAX[1] announce it.
  Cpuid c;
  c.max_leaf = 0x23;
  c.leaf_a = {0x07300605, 0, 0x7, 0x8603};
  c.extra = {{7, 0, {1, 0, 0, 1u << 15}}, {7, 1, {0, 0, 0, 0}}, {0x23, 0, {3, 0, 0, 0}}, {0x23, 1, {0x3, 0x1, 0, 0}}};
  BOOST_TEST(archperf().pmu(c.info()).general_count() == 6u);  // 7.1 EAX[8] clear: ignored
  std::get<2>(c.extra[1]).eax = 1u << 8;
  std::get<2>(c.extra[2]).eax = 1;  // subleaf 1 not announced
  BOOST_TEST(archperf().pmu(c.info()).general_count() == 6u);
  std::get<2>(c.extra[2]).eax = 3;
  std::get<2>(c.extra[0]).eax = 0;  // CPUID.(7,0):EAX = 0: sub-leaf (7,1) does not exist
  BOOST_TEST(archperf().pmu(c.info()).general_count() == 6u);
  std::get<2>(c.extra[0]).eax = 1;
  const pmc::PmuInfo ext = archperf().pmu(c.info());
  BOOST_TEST(ext.general_count() == 2u);
  BOOST_TEST(ext.counters.size() == 3u);  // general 0, 1 and fixed 0
  // Hybrid with no leaf 1AH: still says it is hybrid.
  const std::string reason = archperf().probe(c.info()).reason;
  BOOST_TEST(has(reason, "hybrid part (CPUID.07H:EDX[15])"), reason);
  BOOST_TEST(has(reason, "CPUID.1AH (core type) is absent"), reason);
}

BOOST_AUTO_TEST_CASE(non_matches_say_why) {
  for (const char* p6 : {"pentium-pro.txt", "pentium-ii.txt", "pentium-iii.txt", "pentium-m.txt"}) {
    BOOST_TEST_CONTEXT(p6) {
      const pmc::Match m = archperf().probe(dump(p6));
      BOOST_TEST(!m.matched());
      BOOST_TEST(has(m.reason, "no CPUID leaf 0AH"), m.reason);
      BOOST_TEST(has(m.reason, "P6-family parts are p6's"), m.reason);
    }
  }
  for (const char* amd : {"amd-k7.txt", "amd-zen.txt"}) {
    const pmc::Match m = archperf().probe(dump(amd));
    BOOST_TEST(!m.matched());
    BOOST_TEST(has(m.reason, "vendor AuthenticAMD is not GenuineIntel"), m.reason);
  }
  // VIA / Zhaoxin report leaf 0AH but encode the events differently.
  pmc::Match z = archperf().probe(dump("archperf-zhaoxin.txt"));
  BOOST_TEST(!z.matched());
  BOOST_TEST(has(z.reason, "VIA / Zhaoxin"), z.reason);
  BOOST_TEST(has(z.reason, "0x0082"), z.reason);
  Cpuid via;
  via.vendor = "CentaurHauls";
  via.leaf_a = {0x07280202, 0, 0, 0x503};
  BOOST_TEST(!archperf().probe(via.info()).matched());
  BOOST_TEST(has(archperf().probe(via.info()).reason, "vendor CentaurHauls"));
  // Leaf 0AH present with version 0 (a hypervisor hiding the PMU).
  Cpuid v0;
  v0.leaf_a = {0x07300400, 0, 0, 0x603};
  BOOST_TEST(has(archperf().probe(v0.info()).reason, "CPUID.0AH:EAX[7:0] (version) is 0"));
  BOOST_TEST(!has(archperf().probe(v0.info()).reason, "guest"));
  // The same in a hypervisor's guest (CPUID.1:ECX[31]), as on the project's Intel KVM guests:
  // the reason says whose choice it is.
  Cpuid guest = v0;
  guest.leaf1_ecx = 1u << 31;
  const pmc::Match g = archperf().probe(guest.info());
  BOOST_TEST(!g.matched());
  BOOST_TEST(has(g.reason, "version) is 0: no architectural perfmon in this guest"), g.reason);
  BOOST_TEST(has(g.reason, "CPUID.1:ECX[31]"), g.reason);
  // A version with no counters at all.
  Cpuid none;
  none.leaf1_ecx = 1u << 31;
  none.leaf_a = {0x07300002, 0, 0, 0};
  BOOST_TEST(!archperf().probe(none.info()).matched());
  BOOST_TEST(has(archperf().probe(none.info()).reason, "with no counters"), archperf().probe(none.info()).reason);
}

BOOST_AUTO_TEST_CASE(newer_versions_are_driven_as_version_5) {
  Cpuid c;
  c.leaf_a = {0x08300806, 0, 0xFF, 0x00008604};
  const pmc::Match m = archperf().probe(c.info());
  BOOST_TEST(m.matched());
  BOOST_TEST(m.cpu_tag == "v5");
  BOOST_TEST(has(m.reason, "version 6 is newer than 5"), m.reason);
}

BOOST_AUTO_TEST_CASE(hal_chooses_archperf_for_version_1_and_up_and_p6_for_p6_parts) {
  for (const char* f : {"core2.txt", "intel-icelake.txt"}) {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + f;
    pmc::Hal hal = pmc::Hal::open(cfg);
    BOOST_REQUIRE(hal.backend());
    BOOST_TEST(std::string(hal.backend()->name) == "archperf");
  }
  for (const char* f : {"pentium-pro.txt", "pentium-ii.txt", "pentium-iii.txt", "pentium-m.txt"}) {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + f;
    pmc::Hal hal = pmc::Hal::open(cfg);
    BOOST_REQUIRE(hal.backend());
    BOOST_TEST(std::string(hal.backend()->name) == "p6");
  }
}

BOOST_AUTO_TEST_CASE(forced_onto_a_cpu_without_leaf_0ah_it_is_still_usable) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  cfg.backend = "archperf";
  pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_TEST(has(hal.why(), "no match"), hal.why());
  BOOST_TEST(hal.pmu().general_count() == 2u);
  BOOST_TEST(hal.pmu().cpu_tag == "v1");
  BOOST_TEST(hal.encode("instructions").config == 0x4300C0u);
  BOOST_TEST(!hal.encode("instructions").fixed.has_value());
}
