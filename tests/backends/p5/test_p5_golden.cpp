// The whole P5 catalog as a golden table (tests/data/p5_golden.toml): every row is an event
// string, the CPU tag it is encoded for, and the CESR half computed by hand from the SDM layout
// (ES 5:0, CC 8:6, PC 9; docs/hardware/p5.md section 3), or the error kind expected. Encoded end
// to end: bundled CPUID dump -> Hal::open -> p5 plugin -> p5.toml -> encoder. Every failure names
// the row's line in the TOML.
#define BOOST_TEST_MODULE p5_golden
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

// The bundled dumps and the tags they probe to (docs/hardware/p5.md 7.1; tests/backends/p5/test_p5_probe.cpp
// checks the verdicts in detail).
const std::map<std::string, std::string> kDumpForTag = {
    {"p5", "pentium.txt"}, {"p5mmx", "pentium-mmx.txt"}, {"p5mmx_e74", "pentium-mmx-e74.txt"}};

const std::map<std::string, pmc::errc> kErrors = {
    {"not_found", pmc::errc::not_found},
    {"unit_mask", pmc::errc::unit_mask},
    {"attribute", pmc::errc::attribute},
    {"attribute_value", pmc::errc::attribute_value},
    {"feature_combination", pmc::errc::feature_combination},
    {"parse", pmc::errc::parse},
    {"invalid_argument", pmc::errc::invalid_argument},
};

// The keys a row may have (the header of p5_golden.toml): a misspelt key would silently skip a
// check, so it is an error.
const std::set<std::string> kRowKeys = {"event", "cpu",    "config", "counters", "canonical",
                                        "source", "raw", "error",  "message"};

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
      BOOST_TEST(hal.backend()->name == "p5");
      BOOST_TEST(hal.pmu().cpu_tag == tag);
    }
  }
}

BOOST_AUTO_TEST_CASE(golden_table) {
  const std::string file = std::string(PMC_TEST_DATA) + "/p5_golden.toml";
  toml::table doc = toml::parse_file(file);
  std::map<std::string, pmc::Hal> hals;
  for (const auto& [tag, dump] : kDumpForTag) hals.emplace(tag, open_for(tag));
  BOOST_REQUIRE(doc["row"].as_array());
  unsigned rows = 0, errors = 0, raws = 0;
  std::map<std::string, unsigned> per_tag;
  for (const auto& node : *doc["row"].as_array()) {
    BOOST_REQUIRE(node.as_table());
    const auto& row = *node.as_table();
    const std::string event = row["event"].value<std::string>().value_or("");
    const std::string tag = row["cpu"].value<std::string>().value_or("");
    ++rows;
    BOOST_TEST_CONTEXT("p5_golden.toml:" << node.source().begin.line << " " << event << " on " << tag) {
      for (const auto& [key, value] : row) BOOST_TEST(kRowKeys.count(std::string(key.str())) == 1u, "unknown key " << key);
      BOOST_TEST(!event.empty(), "the row has no event");
      BOOST_TEST(row["source"].is_string(), "every row names its source");
      auto hal = hals.find(tag);
      if (hal == hals.end()) {
        BOOST_ERROR("cpu '" << tag << "' is not p5, p5mmx or p5mmx_e74");
        continue;
      }
      ++per_tag[tag];
      if (auto expected_error = row["error"].value<std::string>()) {
        ++errors;
        BOOST_TEST(!row.contains("config"));
        BOOST_TEST(!row.contains("canonical"));
        auto kind = kErrors.find(*expected_error);
        if (kind == kErrors.end()) {
          BOOST_ERROR("unknown error kind '" << *expected_error << "'");
          continue;
        }
        try {
          const pmc::Encoding enc = hal->second.encode(event);
          BOOST_ERROR("expected error " << *expected_error << " but it encoded to 0x" << std::hex << enc.config
                                        << " (" << enc.canonical << ")");
        } catch (const pmc::Error& e) {
          const std::string what = e.what();
          BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(kind->second), what);
          BOOST_TEST(what.find(event) != std::string::npos, "the message quotes the event: " << what);
          if (auto message = row["message"].value<std::string>())
            BOOST_TEST(what.find(*message) != std::string::npos, "'" << *message << "' not in: " << what);
        }
        continue;
      }
      BOOST_TEST(!row.contains("message"), "`message` belongs to error rows");
      const auto config = row["config"].value<std::int64_t>();
      const auto canonical = row["canonical"].value<std::string>();
      const toml::array* counters_node = row["counters"].as_array();
      if (!config || !canonical || !counters_node) {
        BOOST_ERROR("a row without `error` needs config, counters and canonical");
        continue;
      }
      std::vector<unsigned> counters;
      for (const auto& c : *counters_node) counters.push_back(static_cast<unsigned>(c.value<std::int64_t>().value_or(-1)));
      const bool raw = row["raw"].value<bool>().value_or(false);
      raws += raw;
      try {
        const pmc::Encoding enc = hal->second.encode(event);
        BOOST_TEST(enc.config == static_cast<std::uint64_t>(*config), "config 0x" << std::hex << enc.config
                                                                                  << ", expected 0x" << *config);
        BOOST_TEST(enc.counters == counters, boost::test_tools::per_element());
        BOOST_TEST(enc.canonical == *canonical);
        BOOST_TEST(!enc.fixed.has_value());
        // A CESR half has 10 bits (ES 5:0, CC 8:6, PC 9); nothing above bit 9 belongs to an encoding.
        BOOST_TEST((enc.config >> 10) == 0u);
        BOOST_TEST(!enc.interrupt);  // the P5 has no overflow interrupt
        if (raw)
          BOOST_TEST(enc.def == nullptr, "a raw code has no catalog entry");
        else
          BOOST_TEST(enc.def != nullptr, "a named event comes from the catalog");
      } catch (const pmc::Error& e) {
        BOOST_ERROR("encode threw: " << e.what());
      }
    }
  }
  // The table's size when written (the header's sections 1-7): a row lost in an edit shows here.
  BOOST_TEST(rows >= 195u, rows << " rows");
  BOOST_TEST(errors >= 49u, errors << " error rows");
  BOOST_TEST(raws >= 6u, raws << " raw rows");
  for (const auto& [tag, dump] : kDumpForTag) BOOST_TEST(per_tag[tag] > 0u, tag);
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
