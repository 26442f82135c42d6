// perf's raw forms on the emulated Alpha 21064 (docs/event-format.md, "Raw events and perf's
// PMU syntax"): refused with the reason. A raw value there would be an ICCSR image, whose MUX0
// and MUX1 fields select both counters' events at once (docs/hardware/alpha21064.md sheet 2:
// MUX0 = 0 is PF_ISSUES, MUX1 = 0 PF_DCACHE), so it cannot name one event; Linux perf has no
// 21064 PMU format either.
#define BOOST_TEST_MODULE alpha_raw
#include <boost/test/unit_test.hpp>

#include <pmc/pmc.hpp>

#include <string>

namespace {

std::string error_of(const pmc::Hal& hal, const std::string& event) {
  try {
    (void)hal.encode(event);
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    return e.what();
  }
  BOOST_ERROR("'" << event << "' encoded but should not");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(raw_and_pmu_forms_refused_with_the_reason) {
  pmc::Config cfg;
  cfg.cpu = pmc::resolve_data("pentium-iii", pmc::DataKind::cpuid_dump).string();
  cfg.backend = "alpha21064_sim";
  cfg.access = "sim";
  const pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_TEST_REQUIRE(hal.require_backend().name == "alpha21064_sim");
  for (const char* event : {"r800", "cpu/event=0x8/"}) {
    const std::string what = error_of(hal, event);
    BOOST_TEST(what.find("the Alpha 21064 takes no raw events: an ICCSR image selects the events of both counters") !=
                   std::string::npos,
               what);
  }
  BOOST_TEST(hal.encode("PF_ISSUES").config == hal.encode("pf_issues").config);  // names still encode
}
