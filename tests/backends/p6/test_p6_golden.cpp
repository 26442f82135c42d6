// The whole P6 catalog as a golden table (tests/data/p6_golden.toml): every row is an event
// string, the CPU it is encoded for, and the PerfEvtSel value computed by hand from the SDM bit
// layout (or the error kind expected). Encoded end to end: CPUID dump -> Hal -> p6 plugin ->
// events.toml -> encoder.
#define BOOST_TEST_MODULE p6_golden
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <toml++/toml.h>

#include <map>
#include <string>

namespace {

const std::map<std::string, std::string> kDumpForTag = {
    {"ppro", "pentium-pro.txt"}, {"pii", "pentium-ii.txt"}, {"piii", "pentium-iii.txt"}, {"pm", "pentium-m.txt"}};

const std::map<std::string, pmc::errc> kErrors = {
    {"not_found", pmc::errc::not_found},
    {"unit_mask", pmc::errc::unit_mask},
    {"attribute", pmc::errc::attribute},
    {"attribute_value", pmc::errc::attribute_value},
    {"feature_combination", pmc::errc::feature_combination},
    {"parse", pmc::errc::parse},
    {"invalid_argument", pmc::errc::invalid_argument},
};

pmc::Hal open_for(const std::string& tag) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + kDumpForTag.at(tag);
  cfg.backend = "auto";
  return pmc::Hal::open(cfg);
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_dump_probes_to_its_cpu_tag) {
  for (const auto& [tag, file] : kDumpForTag) {
    BOOST_TEST_CONTEXT(file) {
      pmc::Hal hal = open_for(tag);
      BOOST_REQUIRE(hal.backend());
      BOOST_TEST(std::string(hal.backend()->name) == "p6");
      BOOST_TEST(hal.pmu().cpu_tag == tag);
    }
  }
}

BOOST_AUTO_TEST_CASE(golden_table) {
  toml::table doc = toml::parse_file(std::string(PMC_TEST_DATA) + "/p6_golden.toml");
  std::map<std::string, pmc::Hal> hals;
  for (const auto& [tag, file] : kDumpForTag) hals.emplace(tag, open_for(tag));
  unsigned rows = 0;
  for (const auto& node : *doc["row"].as_array()) {
    const auto& row = *node.as_table();
    std::string event = row["event"].value<std::string>().value();
    std::string tag = row["cpu"].value<std::string>().value();
    ++rows;
    BOOST_TEST_CONTEXT("p6_golden.toml:" << node.source().begin.line << " " << event << " on " << tag) {
      const pmc::Hal& hal = hals.at(tag);
      if (auto expected_error = row["error"].value<std::string>()) {
        try {
          (void)hal.encode(event);
          BOOST_ERROR("expected error " << *expected_error << " but it encoded");
        } catch (const pmc::Error& e) {
          BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(kErrors.at(*expected_error)), e.what());
          BOOST_TEST(std::string(e.what()).find(event) != std::string::npos, "the message quotes the event: " << e.what());
        }
        continue;
      }
      pmc::Encoding enc = hal.encode(event);
      BOOST_TEST(enc.config == static_cast<std::uint64_t>(row["config"].value<std::int64_t>().value()));
      std::vector<unsigned> counters;
      for (const auto& c : *row["counters"].as_array()) counters.push_back(static_cast<unsigned>(c.value<std::int64_t>().value()));
      BOOST_TEST(enc.counters == counters, boost::test_tools::per_element());
      BOOST_TEST(enc.canonical == row["canonical"].value<std::string>().value());
      BOOST_TEST(!enc.fixed.has_value());
    }
  }
  BOOST_TEST(rows >= 150u);
}

BOOST_AUTO_TEST_CASE(catalog_validates_clean) {
  for (const auto& [tag, file] : kDumpForTag) {
    pmc::Hal hal = open_for(tag);
    auto problems = hal.events().validate(hal.pmu().general_count());
    BOOST_TEST_CONTEXT(tag) {
      for (const auto& p : problems) BOOST_ERROR(p);
    }
  }
}

BOOST_AUTO_TEST_CASE(model_specific_events_follow_the_cpu) {
  // MMX_INSTR_EXEC (B0H) is a Pentium II event only; the SSE events (D8H) a Pentium III one.
  BOOST_TEST(open_for("pii").events().find("MMX_INSTR_EXEC", "pii") != nullptr);
  BOOST_TEST(open_for("piii").events().find("MMX_INSTR_EXEC", "piii") == nullptr);
  BOOST_CHECK_THROW((void)open_for("ppro").encode("EMON_KNI_INST_RETIRED"), pmc::Error);
  BOOST_TEST(open_for("piii").encode("EMON_KNI_INST_RETIRED").config == 0x300D8u);
}
