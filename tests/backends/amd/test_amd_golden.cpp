// The amd catalogs as a golden table (tests/data/amd_golden.toml): every row is an event string,
// the CPU tag it is encoded for, and the PERF_CTL value, counters and canonical string worked out
// by hand from the manuals (the file's header says how), or the error kind expected. Encoded end
// to end: bundled CPUID dump -> Hal::open -> amd plugin -> amd.toml + events/amd/*.toml ->
// encoder. Every failure names the row's line in the TOML.
#define BOOST_TEST_MODULE amd_golden
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

// The bundled dumps and the tags they probe to (docs/hardware/amd.md 1.3; the section headers of
// amd_golden.toml name the same files; tests/backends/amd/test_amd_probe.cpp checks the verdicts in detail).
const std::map<std::string, std::string> kDumpForTag = {
    {"k7", "amd-k7.txt"},
    {"k8_reve", "amd-k8-reve.txt"},
    {"k8_revf", "amd-k8-revf.txt"},
    {"fam10h_revb", "amd-fam10h-revb.txt"},
    {"fam10h_revc", "amd-fam10h-revc.txt"},
    {"fam10h_revd", "amd-fam10h-revd.txt"},
    {"fam12h", "amd-fam12h.txt"},
    {"fam14h", "amd-fam14h.txt"},
    {"fam15h", "amd-fam15h.txt"},
    {"fam16h", "amd-fam16h.txt"},
    {"zen1", "amd-zen1.txt"},
    {"zen2", "amd-zen2.txt"},
    {"zen3", "amd-zen3.txt"},
    {"zen4", "amd-zen4-genoa.txt"},
    {"zen5", "amd-zen5.txt"},
};

const std::map<std::string, pmc::errc> kErrors = {
    {"not_found", pmc::errc::not_found},
    {"unit_mask", pmc::errc::unit_mask},
    {"attribute", pmc::errc::attribute},
    {"attribute_value", pmc::errc::attribute_value},
    {"feature_combination", pmc::errc::feature_combination},
    {"parse", pmc::errc::parse},
    {"invalid_argument", pmc::errc::invalid_argument},
    {"no_counter", pmc::errc::no_counter},
};

// The keys a row may have (the header of amd_golden.toml, plus `message`: a substring the error
// must contain). A misspelt key would silently skip a check, so it is an error.
const std::set<std::string> kRowKeys = {"event", "cpu", "config", "counters", "canonical", "source", "error", "message"};

pmc::Hal open_for(const std::string& tag) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + kDumpForTag.at(tag);
  cfg.backend = "auto";
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_dump_probes_to_its_cpu_tag) {
  for (const auto& [tag, file] : kDumpForTag) {
    BOOST_TEST_CONTEXT(file) {
      pmc::Hal hal = open_for(tag);
      BOOST_REQUIRE(hal.backend());
      BOOST_TEST(hal.backend()->name == "amd");
      BOOST_TEST(hal.pmu().cpu_tag == tag);
    }
  }
}

BOOST_AUTO_TEST_CASE(golden_table) {
  const std::string file = std::string(PMC_TEST_DATA) + "/amd_golden.toml";
  toml::table doc = toml::parse_file(file);
  std::map<std::string, pmc::Hal> hals;
  for (const auto& [tag, dump] : kDumpForTag) hals.emplace(tag, open_for(tag));
  BOOST_REQUIRE(doc["row"].as_array());
  unsigned rows = 0, errors = 0;
  std::map<std::string, unsigned> per_tag;
  for (const auto& node : *doc["row"].as_array()) {
    BOOST_REQUIRE(node.as_table());
    const auto& row = *node.as_table();
    const std::string event = row["event"].value<std::string>().value_or("");
    const std::string tag = row["cpu"].value<std::string>().value_or("");
    ++rows;
    BOOST_TEST_CONTEXT("amd_golden.toml:" << node.source().begin.line << " " << event << " on " << tag) {
      for (const auto& [key, value] : row)
        BOOST_TEST(kRowKeys.count(std::string(key.str())) == 1u, "unknown key " << key);
      BOOST_TEST(!event.empty(), "the row has no event");
      BOOST_TEST(row["source"].is_string(), "every row names its source");
      const auto hal = hals.find(tag);
      BOOST_TEST_REQUIRE((hal != hals.end()), "no bundled dump for cpu tag '" << tag << "'");
      ++per_tag[tag];
      if (auto expected = row["error"].value<std::string>()) {
        ++errors;
        BOOST_TEST_REQUIRE(kErrors.count(*expected) == 1u, "unknown error kind " << *expected);
        BOOST_TEST(!row.contains("config"), "an error row has no config");
        try {
          const pmc::Encoding e = hal->second.encode(event);
          BOOST_ERROR("expected error " << *expected << " but it encoded to 0x" << std::hex << e.config);
        } catch (const pmc::Error& e) {
          const std::string what = e.what();
          BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(kErrors.at(*expected)), what);
          BOOST_TEST(what.find(event) != std::string::npos, "the message quotes the event: " << what);
          if (auto part = row["message"].value<std::string>())
            BOOST_TEST(what.find(*part) != std::string::npos, "the message says '" << *part << "': " << what);
        }
        continue;
      }
      BOOST_TEST_REQUIRE(row["config"].is_integer(), "a row without error has a config");
      BOOST_TEST_REQUIRE(row["counters"].is_array(), "a row without error has counters");
      BOOST_TEST_REQUIRE(row["canonical"].is_string(), "a row without error has a canonical string");
      pmc::Encoding enc;
      try {
        enc = hal->second.encode(event);
      } catch (const pmc::Error& e) {
        BOOST_ERROR("encoding failed: " << e.what());
        continue;
      }
      const auto config = static_cast<std::uint64_t>(row["config"].value<std::int64_t>().value());
      BOOST_TEST(enc.config == config, std::hex << "0x" << enc.config << " != 0x" << config);
      std::vector<unsigned> counters;
      for (const auto& c : *row["counters"].as_array())
        counters.push_back(static_cast<unsigned>(c.value<std::int64_t>().value()));
      BOOST_TEST(enc.counters == counters, boost::test_tools::per_element());
      BOOST_TEST(enc.canonical == row["canonical"].value<std::string>().value());
      BOOST_TEST(!enc.fixed.has_value());
      // Canonical strings are what pmc prints: they encode to the same bits.
      BOOST_TEST(hal->second.encode(enc.canonical).config == enc.config);
    }
  }
  // The file's header: 909 rows, 169 of them errors, every bundled dump's tag covered.
  BOOST_TEST(rows == 909u);
  BOOST_TEST(errors == 169u);
  for (const auto& [tag, dump] : kDumpForTag) BOOST_TEST(per_tag[tag] > 0u, tag << " has no row");
}

BOOST_AUTO_TEST_CASE(catalogs_validate_clean_for_the_largest_pmu) {
  // Family 15h's events name counters 3-5: checked against the six-counter PMU of its dump.
  for (const char* tag : {"fam15h", "zen4"}) {
    pmc::Hal hal = open_for(tag);
    BOOST_TEST_CONTEXT(tag) {
      BOOST_TEST(hal.pmu().general_count() == 6u);
      for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
    }
  }
}
