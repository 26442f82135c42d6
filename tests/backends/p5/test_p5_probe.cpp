// P5 probe verdicts and PMU geometry (docs/hardware/p5.md sections 1, 2, 4 and policies 7.1, 7.2,
// 7.5). First the bundled CPUID dumps through Hal::open, as a user gets them; then synthetic CPUs
// (a CpuidTable decoded by decode_cpuid) against each rule of backends/p5/p5.toml's [[probe]]
// table, through the p5 plugin's probe. Every verdict, match or refusal, carries a reason; the
// expected fragments are the reasons p5.toml gives for each rule.
#define BOOST_TEST_MODULE p5_probe
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/backend.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string dump(const char* name) { return std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name + ".txt"; }

pmc::Hal open_dump(const char* name) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = dump(name);
  cfg.backend = "auto";
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

const pmc::Candidate& p5_candidate(const pmc::Hal& hal) {
  for (const auto& c : hal.candidates())
    if (c.backend == "p5") return c;
  throw pmc::Error(pmc::errc::not_found, "no p5 candidate: is libp5.so built?");
}

// The p5 plugin with its data file, for synthetic CPUs (the probe table is data: p5.toml).
const pmc_test::LoadedForTest& p5() {
  static const pmc_test::LoadedForTest loaded("p5");
  return loaded;
}

// CPUID.1:EDX of the bundled dumps: 0x1BF (pentium.txt: FPU VME DE PSE TSC MSR MCE CX8, no MMX)
// and 0x008003BF (pentium-mmx.txt: the same plus APIC and MMX, bit 23).
constexpr std::uint32_t kEdxPentium = 0x000001BF;
constexpr std::uint32_t kEdxMmx = 0x008003BF;
constexpr std::uint32_t kMsr = 1u << 5;   // CPUID.1:EDX[5]
constexpr std::uint32_t kMmx = 1u << 23;  // CPUID.1:EDX[23]

// A CPU of max basic leaf 1 (every P5 part, section 1): leaf 0 with the vendor string in
// EBX, EDX, ECX; leaf 1 EAX = type 13:12 | family 11:8 | model 7:4 | stepping 3:0.
pmc::CpuInfo synthetic(const char* vendor, unsigned family, unsigned model, unsigned stepping, std::uint32_t edx,
                       unsigned type = 0) {
  BOOST_REQUIRE(std::strlen(vendor) == 12u);
  auto word = [&](int at) {
    std::uint32_t w = 0;
    std::memcpy(&w, vendor + at, 4);  // little-endian, as CPUID returns it
    return w;
  };
  pmc::CpuidTable t;
  t.set(0, 0, {1, word(0), word(8), word(4)});
  t.set(1, 0, {(type << 12) | (family << 8) | (model << 4) | stepping, 0, 0, edx});
  return pmc::decode_cpuid(t, "synthetic");
}

struct Verdict {
  bool matched;
  const char* tag;       // when matched
  const char* fragment;  // must appear in the reason
};

void check(const pmc::CpuInfo& cpu, const Verdict& v) {
  const pmc::Match m = p5().probe(cpu);
  BOOST_TEST_CONTEXT(describe(cpu) << ": " << m.reason) {
    BOOST_TEST(m.matched() == v.matched);
    BOOST_TEST(m.score == (v.matched ? 10 : 0));  // p5.toml [pmu] score = 10
    BOOST_TEST(m.cpu_tag == (v.matched ? v.tag : ""));
    BOOST_TEST(has(m.reason, v.fragment));
    // The reason starts with who was probed (vendor, family, model).
    BOOST_TEST(has(m.reason, cpu.vendor + " family " + std::to_string(cpu.family) + " model " +
                                 std::to_string(cpu.model) + ": "));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The bundled dumps, through Hal::open.

BOOST_AUTO_TEST_SUITE(bundled_dumps)

// pentium.txt: GenuineIntel 0x525 (family 5, model 2, stepping 5), EDX 0x1BF (MSR, no MMX):
// rule "5/1-8 with EDX[23] = 0" -> tag p5 (7.1).
BOOST_AUTO_TEST_CASE(pentium_is_p5) {
  pmc::Hal hal = open_dump("pentium");
  BOOST_TEST(hal.cpu().family == 5u);
  BOOST_TEST(hal.cpu().model == 2u);
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 10);
  BOOST_TEST(c.match.cpu_tag == "p5");
  BOOST_TEST(c.match.reason == "GenuineIntel family 5 model 2: Pentium");
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.backend()->name == "p5");
  BOOST_TEST(hal.pmu().cpu_tag == "p5");
}

// pentium-mmx.txt: 0x543 (model 4, stepping 3, type 0), EDX 0x008003BF (MMX): not erratum 74
// (stepping 3 needs type 1), so rule "5/1-8 with EDX[23] = 1" -> p5mmx.
BOOST_AUTO_TEST_CASE(pentium_mmx_is_p5mmx) {
  pmc::Hal hal = open_dump("pentium-mmx");
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 10);
  BOOST_TEST(c.match.cpu_tag == "p5mmx");
  BOOST_TEST(c.match.reason == "GenuineIntel family 5 model 4: Pentium with MMX");
  BOOST_TEST(!has(c.match.reason, "erratum"));
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.pmu().cpu_tag == "p5mmx");
}

// pentium-mmx-e74.txt: 0x544 (model 4, stepping 4), MMX: Pentium erratum 74 -> p5mmx_e74.
BOOST_AUTO_TEST_CASE(pentium_mmx_stepping_4_is_p5mmx_e74) {
  pmc::Hal hal = open_dump("pentium-mmx-e74");
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 10);
  BOOST_TEST(c.match.cpu_tag == "p5mmx_e74");
  BOOST_TEST(has(c.match.reason, "erratum 74"), c.match.reason);
  BOOST_TEST(has(c.match.reason, "RDMSR"), c.match.reason);
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.pmu().cpu_tag == "p5mmx_e74");
}

// pentium-overdrive.txt: 0x1532 (type 1, model 3, stepping 2), EDX 0x13F (MSR, no MMX): the
// P24T gets the plain Pentium's PMU [7.1] -> p5.
BOOST_AUTO_TEST_CASE(pentium_overdrive_is_p5) {
  pmc::Hal hal = open_dump("pentium-overdrive");
  BOOST_TEST(hal.cpu().model == 3u);
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 10);
  BOOST_TEST(c.match.cpu_tag == "p5");
  BOOST_TEST(c.match.reason == "GenuineIntel family 5 model 3: Pentium");
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.pmu().cpu_tag == "p5");
}

// quark-x1000.txt: GenuineIntel 0x590 (model 9): the first rule refuses it [7.1].
BOOST_AUTO_TEST_CASE(quark_is_refused) {
  pmc::Hal hal = open_dump("quark-x1000");
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 0);
  BOOST_TEST(c.match.cpu_tag.empty());
  BOOST_TEST(c.match.reason ==
             "GenuineIntel family 5 model 9: Quark X1000 SoC, not a Pentium: its core manual documents no P5 "
             "counters (CESR, CTR0, CTR1) and CPUID has no leaf 0AH");
  BOOST_TEST(!hal.backend());  // no other backend takes a family-5 part either
}

// amd-k6.txt: AuthenticAMD 0x580 (family 5 model 8) [7.2].
BOOST_AUTO_TEST_CASE(amd_k6_is_refused) {
  pmc::Hal hal = open_dump("amd-k6");
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 0);
  BOOST_TEST(c.match.cpu_tag.empty());
  BOOST_TEST(c.match.reason ==
             "AuthenticAMD family 5 model 8: AMD K5, K6 and Geode LX have no Pentium CESR counters (perfctr's AMD "
             "driver starts at the K7, family 6)");
  BOOST_TEST(!hal.backend());
}

// The P6 dumps are not the P5's (family 6): no rule matches, so the default refusal.
BOOST_AUTO_TEST_CASE(a_p6_is_not_in_the_table) {
  pmc::Hal hal = open_dump("pentium-pro");
  const auto& c = p5_candidate(hal);
  BOOST_TEST(c.match.score == 0);
  BOOST_TEST(c.match.reason == "GenuineIntel family 6 model 1: not in the p5 probe table");
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Every rule of the table on synthetic CPUs (first matching rule wins).

BOOST_AUTO_TEST_SUITE(probe_rules)

BOOST_AUTO_TEST_CASE(the_synthetic_cpus_decode_as_meant) {
  const pmc::CpuInfo c = synthetic("GenuineIntel", 5, 4, 3, kEdxMmx, 1);
  BOOST_TEST(c.vendor == "GenuineIntel");
  BOOST_TEST(c.signature == 0x1543u);
  BOOST_TEST(c.family == 5u);
  BOOST_TEST(c.model == 4u);
  BOOST_TEST(c.stepping == 3u);
  BOOST_TEST(c.max_leaf == 1u);
  BOOST_TEST(c.arch.version == 0u);  // no leaf 0AH
  BOOST_TEST(synthetic("CyrixInstead", 5, 2, 0, kEdxPentium).vendor == "CyrixInstead");
}

// GenuineIntel 5/1-8: MMX flag decides p5 / p5mmx (perfctr's test, [1] S-conflict resolved by
// the flag: a model-4 part without the flag is a p5, a model-2 part with it a p5mmx).
BOOST_AUTO_TEST_CASE(intel_models_1_to_8_by_the_mmx_flag) {
  for (unsigned model = 1; model <= 8; ++model) {
    BOOST_TEST_CONTEXT("model " << model) {
      check(synthetic("GenuineIntel", 5, model, 5, kEdxPentium), {true, "p5", "Pentium"});
      check(synthetic("GenuineIntel", 5, model, 5, kEdxMmx), {true, "p5mmx", "Pentium with MMX"});
    }
  }
  // Tillamook (model 8) with MMX; P54CQS (model 7) without.
  check(synthetic("GenuineIntel", 5, 8, 1, kEdxMmx), {true, "p5mmx", "Pentium with MMX"});
  check(synthetic("GenuineIntel", 5, 7, 0, kEdxPentium), {true, "p5", "Pentium"});
}

// Erratum 74 [1, 7.1]: model 4 stepping 4 with MMX, whatever the type; model 4 stepping 3 with
// MMX only with type 1 (EAX[13:12] = 01: bit 12 set, bit 13 clear).
BOOST_AUTO_TEST_CASE(erratum_74_parts) {
  for (unsigned type = 0; type < 4; ++type) {
    BOOST_TEST_CONTEXT("stepping 4 type " << type) {
      check(synthetic("GenuineIntel", 5, 4, 4, kEdxMmx, type), {true, "p5mmx_e74", "erratum 74"});
    }
  }
  check(synthetic("GenuineIntel", 5, 4, 3, kEdxMmx, 1), {true, "p5mmx_e74", "OverDrive with MMX, stepping 3"});
  // Stepping 3 with type 0 (the pentium-mmx dump), 2 (dual processor) or 3 (reserved): not affected.
  check(synthetic("GenuineIntel", 5, 4, 3, kEdxMmx, 0), {true, "p5mmx", "Pentium with MMX"});
  check(synthetic("GenuineIntel", 5, 4, 3, kEdxMmx, 2), {true, "p5mmx", "Pentium with MMX"});
  check(synthetic("GenuineIntel", 5, 4, 3, kEdxMmx, 3), {true, "p5mmx", "Pentium with MMX"});
  // Other steppings of model 4 are not named by perfctr.
  check(synthetic("GenuineIntel", 5, 4, 1, kEdxMmx), {true, "p5mmx", "Pentium with MMX"});
  check(synthetic("GenuineIntel", 5, 4, 5, kEdxMmx), {true, "p5mmx", "Pentium with MMX"});
  // The erratum is about RDPMC, which comes with MMX: model 4 stepping 4 without the flag is a p5.
  check(synthetic("GenuineIntel", 5, 4, 4, kEdxPentium), {true, "p5", "Pentium"});
  // Erratum 74 is a model-4 erratum: stepping 4 of model 8 is a plain p5mmx.
  check(synthetic("GenuineIntel", 5, 8, 4, kEdxMmx), {true, "p5mmx", "Pentium with MMX"});
}

// The Intel refusals, in table order: Quark (5/9), the A-step (5/0), no MSR.
BOOST_AUTO_TEST_CASE(intel_refusals) {
  check(synthetic("GenuineIntel", 5, 9, 0, 0x237B), {false, "", "Quark X1000 SoC, not a Pentium"});
  check(synthetic("GenuineIntel", 5, 0, 1, kEdxPentium), {false, "", "P5 A-step engineering sample"});
  check(synthetic("GenuineIntel", 5, 0, 1, kEdxPentium), {false, "", "OpenBSD pctr excludes model 0"});
  for (unsigned model : {1u, 2u, 3u, 4u, 7u, 8u}) {
    BOOST_TEST_CONTEXT("model " << model) {
      check(synthetic("GenuineIntel", 5, model, 4, kEdxPentium & ~kMsr),
            {false, "", "CPUID.1:EDX[5] (MSR) is clear: without RDMSR/WRMSR the counters cannot be reached"});
      // The MSR rule comes before the MMX and erratum rules: an MMX part without MSR is refused.
      check(synthetic("GenuineIntel", 5, model, 4, kEdxMmx & ~kMsr), {false, "", "(MSR) is clear"});
    }
  }
  // First rule wins: a Quark or an A-step without the MSR flag gets its own reason.
  check(synthetic("GenuineIntel", 5, 9, 0, 0), {false, "", "Quark X1000"});
  check(synthetic("GenuineIntel", 5, 0, 0, kMmx), {false, "", "A-step"});
  // Family-5 models the table does not list (10-15): the default refusal.
  for (unsigned model : {10u, 11u, 15u})
    check(synthetic("GenuineIntel", 5, model, 0, kEdxMmx), {false, "", "not in the p5 probe table"});
  // Intel outside family 5 (486, P6, NetBurst): not in the table.
  check(synthetic("GenuineIntel", 4, 8, 0, 0x3), {false, "", "not in the p5 probe table"});
  check(synthetic("GenuineIntel", 6, 1, 9, 0xFBFF), {false, "", "not in the p5 probe table"});
}

// The other vendors' family 5 [7.2], each with the reason of section 1, whatever the features.
BOOST_AUTO_TEST_CASE(other_vendors_family_5_are_refused) {
  struct Row {
    const char* vendor;
    unsigned model;
    const char* fragment;
  };
  const Row rows[] = {
      {"AuthenticAMD", 0, "AMD K5, K6 and Geode LX have no Pentium CESR counters"},      // K5
      {"AuthenticAMD", 8, "perfctr's AMD driver starts at the K7, family 6"},            // K6-2
      {"AuthenticAMD", 10, "AMD K5, K6 and Geode LX"},                                   // Geode LX
      {"CyrixInstead", 2, "Cyrix 6x86 and MediaGX have no Pentium counters"},            // 6x86
      {"CyrixInstead", 4, "the 6x86MX/MII's, which report family 6"},                    // MediaGX
      {"Geode by NSC", 4, "the only model-specific register is the TSC (MSR 0x10)"},     // GX1
      {"CentaurHauls", 4, "IDT/Centaur WinChip"},                                        // C6
      {"CentaurHauls", 8, "no CPL filter and cannot be stopped"},                        // WinChip 2
      {"CentaurHauls", 9, "reprogramming CESR corrupts RDTSC"},                          // WinChip 3
      {"RiseRiseRise", 0, "Rise mP6: no performance counters are known"},
      {"NexGenDriven", 0, "NexGen Nx586: no performance counters are known"},
      {"GenuineTMx86", 4, "Transmeta Crusoe: no Pentium performance counters are known"},
      {"Vortex86 SoC", 2, "DM&P Vortex86: no Pentium performance counters are known"},
  };
  for (const auto& r : rows) {
    BOOST_TEST_CONTEXT(r.vendor << " model " << r.model) {
      // With the features of an Intel Pentium with MMX (MSR, MMX): the vendor alone decides.
      check(synthetic(r.vendor, 5, r.model, 2, kEdxMmx), {false, "", r.fragment});
      check(synthetic(r.vendor, 5, r.model, 2, kEdxPentium), {false, "", r.fragment});
    }
  }
  // The Cyrix 6x86MX/MII (family 6) and the AMD K7 (family 6) are not family 5: not in the table.
  check(synthetic("CyrixInstead", 6, 0, 0, kEdxMmx), {false, "", "not in the p5 probe table"});
  check(synthetic("AuthenticAMD", 6, 1, 0, kEdxMmx), {false, "", "not in the p5 probe table"});
  // An unknown vendor of family 5 (UMC, SiS): the default refusal.
  check(synthetic("UMC UMC UMC ", 5, 1, 0, kEdxPentium), {false, "", "not in the p5 probe table"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// The PMU the chosen backend describes [2, 3, 4, 7.5].

BOOST_AUTO_TEST_SUITE(geometry)

// Two 40-bit counters CTR0/CTR1 (0x12/0x13) sharing CESR (0x11): CTR0's 10-bit half at bit 0,
// CTR1's at bit 16; RDPMC ECX = 0/1 only on the Pentium with MMX not affected by erratum 74.
BOOST_AUTO_TEST_CASE(two_40_bit_counters_sharing_cesr) {
  struct Row {
    const char* dump;
    const char* tag;
    bool rdpmc;
  };
  const Row rows[] = {{"pentium", "p5", false},
                      {"pentium-overdrive", "p5", false},
                      {"pentium-mmx", "p5mmx", true},
                      {"pentium-mmx-e74", "p5mmx_e74", false}};
  for (const auto& r : rows) {
    BOOST_TEST_CONTEXT(r.dump) {
      pmc::Hal hal = open_dump(r.dump);
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST(pmu.name == "p5");
      BOOST_TEST(pmu.cpu_tag == r.tag);
      BOOST_TEST(pmu.device_model == "p5");
      BOOST_REQUIRE(pmu.counters.size() == 2u);
      BOOST_TEST(pmu.general_count() == 2u);
      for (unsigned i = 0; i < 2; ++i) {
        BOOST_TEST_CONTEXT("counter " << i) {
          const pmc::CounterInfo& c = pmu.counters[i];
          BOOST_TEST((c.kind == pmc::CounterKind::general));
          BOOST_TEST(c.index == i);
          BOOST_TEST(c.width == 40u);
          BOOST_TEST(c.width_mask() == 0xFFFFFFFFFFull);
          BOOST_TEST(c.control_msr == 0x11u);      // one CESR for both
          BOOST_TEST(c.counter_msr == 0x12u + i);  // CTR0 0x12, CTR1 0x13
          BOOST_TEST(c.control_shift == 16u * i);  // CTR1's half is CTR0's shifted by 16
          BOOST_TEST(c.control_bits == 10u);       // ES 5:0, CC 8:6, PC 9
          BOOST_TEST(c.rdpmc.has_value() == r.rdpmc);
          if (r.rdpmc && c.rdpmc) BOOST_TEST(*c.rdpmc == i);
        }
      }
      // The halves: bits 9:0 (0x3FF) and 25:16 (0x3FF0000); the reserved 15:10 and 31:26 belong
      // to neither.
      BOOST_TEST(pmu.counters[0].control_mask() == 0x000003FFull);
      BOOST_TEST(pmu.counters[1].control_mask() == 0x03FF0000ull);
      // The MSRs the driver may touch: TSC, CESR, CTR0, CTR1 [2].
      BOOST_TEST(pmu.registers == (std::vector<std::uint32_t>{0x10, 0x11, 0x12, 0x13}),
                 boost::test_tools::per_element());
      // No encoding has a bit above the 10-bit half.
      BOOST_TEST(pmu.reserved == ~0x3FFull);
    }
  }
}

// MMX events exist for p5mmx and p5mmx_e74 only [5.2, 7.3]: on the p5 tag each is refused with
// a message that names the tags that have it.
BOOST_AUTO_TEST_CASE(mmx_events_are_refused_on_p5_naming_p5mmx) {
  pmc::Hal mmx = open_dump("pentium-mmx");
  pmc::Hal plain = open_dump("pentium");
  unsigned mmx_events = 0;
  for (const pmc::EventDef* e : mmx.events().for_cpu("p5mmx")) {
    if (e->code < 0x2A) continue;  // 00H-29H: every Pentium
    ++mmx_events;
    BOOST_TEST_CONTEXT(e->name) {
      BOOST_TEST(plain.events().find(e->name, "p5") == nullptr);
      try {
        (void)plain.encode(e->name);
        BOOST_ERROR("encoded on a Pentium without MMX");
      } catch (const pmc::Error& err) {
        BOOST_TEST((err.kind() == pmc::errc::not_found), err.what());
        BOOST_TEST(has(err.what(), "p5mmx"), err.what());
        BOOST_TEST(has(err.what(), e->name), err.what());
      }
      // ...and the MMX part itself encodes it, on the counter section 5.2 gives it.
      BOOST_TEST(mmx.encode(e->name).counters.size() == 1u);
    }
  }
  // 2AH-3BH is 18 codes with an event on each counter, less 39H on CTR1 (reserved): 35 events.
  BOOST_TEST(mmx_events == 35u);
  // The raw codes 2AH-3BH too, with a message about MMX [7.5].
  for (unsigned code = 0x2A; code <= 0x3B; ++code) {
    char name[8];
    std::snprintf(name, sizeof name, "r%02X", code);
    BOOST_TEST_CONTEXT(name) {
      try {
        (void)plain.encode(name);
        BOOST_ERROR("encoded on a Pentium without MMX");
      } catch (const pmc::Error& err) {
        BOOST_TEST((err.kind() == pmc::errc::invalid_argument), err.what());
        BOOST_TEST(has(err.what(), "Pentium with MMX only"), err.what());
      }
      BOOST_TEST(mmx.encode(name).config == (0xC0u | code));  // CC = 011 | ES
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
