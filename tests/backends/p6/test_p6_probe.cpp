// P6 probe verdicts (docs/hardware/p6.md section 1): every verdict, match or not, carries a reason.
#define BOOST_TEST_MODULE p6_probe
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"

#include <pmc/sdk/backend.hpp>
#include <pmc/cpu.hpp>

#include <string>

namespace {

// The p6 plugin with its data file (the probe table is data: p6.toml [[probe]]).
const pmc_test::LoadedForTest& p6() {
  static const pmc_test::LoadedForTest loaded("p6");
  return loaded;
}

pmc::CpuInfo cpu(const char* vendor, unsigned family, unsigned model, unsigned stepping = 3, unsigned arch = 0) {
  pmc::CpuInfo c;
  c.vendor = vendor;
  c.family = family;
  c.model = model;
  c.stepping = stepping;
  c.arch.version = arch;
  return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(every_p6_model_matches_with_its_tag) {
  struct Row {
    unsigned model;
    const char* tag;
    const char* name;
  };
  // Linux p6_pmu_init's models, plus perfctr's 0 and 4.
  const Row rows[] = {{0, "ppro", "Pentium Pro"}, {1, "ppro", "Pentium Pro"}, {3, "pii", "Klamath"},
                      {4, "ppro", "OverDrive"},   {5, "pii", "Deschutes"},    {6, "pii", "Celeron"},
                      {7, "piii", "Katmai"},      {8, "piii", "Coppermine"},  {9, "pm", "Banias"},
                      {10, "piii", "Xeon"},       {11, "piii", "Tualatin"},   {13, "pm", "Dothan"}};
  for (const auto& r : rows) {
    BOOST_TEST_CONTEXT("model " << r.model) {
      pmc::Match m = p6().probe(cpu("GenuineIntel", 6, r.model, 9));
      BOOST_TEST(m.matched());
      BOOST_TEST(m.cpu_tag == r.tag);
      BOOST_TEST(has(m.reason, r.name), m.reason);
      BOOST_TEST(p6().pmu(cpu("GenuineIntel", 6, r.model, 9)).cpu_tag == r.tag);
    }
  }
}

BOOST_AUTO_TEST_CASE(non_matches_say_why) {
  pmc::Match amd = p6().probe(cpu("AuthenticAMD", 6, 8));
  BOOST_TEST(!amd.matched());
  BOOST_TEST(has(amd.reason, "not GenuineIntel"), amd.reason);
  pmc::Match p4 = p6().probe(cpu("GenuineIntel", 15, 2));
  BOOST_TEST(!p4.matched());
  BOOST_TEST(has(p4.reason, "not the P6 family"), p4.reason);
  // Core 2 (family 6 model 15) reports CPUID.0AH version 2: the architectural backend's part.
  pmc::Match core2 = p6().probe(cpu("GenuineIntel", 6, 15, 6, 2));
  BOOST_TEST(!core2.matched());
  BOOST_TEST(has(core2.reason, "architectural perfmon version 2"), core2.reason);
  // Yonah (model 14) without a leaf 0AH in the dump: not a known P6 part.
  pmc::Match yonah = p6().probe(cpu("GenuineIntel", 6, 14));
  BOOST_TEST(!yonah.matched());
  BOOST_TEST(has(yonah.reason, "unsupported P6 model"), yonah.reason);
  BOOST_TEST(has(yonah.reason, "model 14"), yonah.reason);
}

BOOST_AUTO_TEST_CASE(pentium_pro_erratum_26_is_reported_below_stepping_9) {
  BOOST_TEST(has(p6().probe(cpu("GenuineIntel", 6, 1, 7)).reason, "erratum 26"));
  BOOST_TEST(!has(p6().probe(cpu("GenuineIntel", 6, 1, 9)).reason, "erratum 26"));
  BOOST_TEST(!has(p6().probe(cpu("GenuineIntel", 6, 3, 2)).reason, "erratum 26"));
}

BOOST_AUTO_TEST_CASE(geometry_is_two_40_bit_counters) {
  auto pmu = p6().pmu(cpu("GenuineIntel", 6, 8));
  BOOST_REQUIRE(pmu.counters.size() == 2u);
  BOOST_TEST(pmu.counters[0].width == 40u);
  BOOST_TEST(pmu.counters[0].control_msr == 0x186u);
  BOOST_TEST(pmu.counters[0].counter_msr == 0xC1u);
  BOOST_TEST(pmu.counters[1].control_msr == 0x187u);
  BOOST_TEST(pmu.counters[1].counter_msr == 0xC2u);
}
