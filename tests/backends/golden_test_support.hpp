// The harness of the golden tables (test_golden.cpp: p5, p6, amd; test_golden_archperf.cpp:
// archperf): a table's description (Golden: its dumps, error kinds, size and checks) and the three
// checks every table runs (the dumps probe to their tags, every row encodes as written, the
// catalogs validate). Every failure names the table's file and the row's line.
#pragma once

#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace pmc_test::golden {

namespace fs = std::filesystem;

inline const std::map<std::string, pmc::errc> kErrors = {
    {"not_found", pmc::errc::not_found},
    {"not_supported", pmc::errc::not_supported},
    {"unit_mask", pmc::errc::unit_mask},
    {"attribute", pmc::errc::attribute},
    {"attribute_value", pmc::errc::attribute_value},
    {"feature_combination", pmc::errc::feature_combination},
    {"parse", pmc::errc::parse},
    {"invalid_argument", pmc::errc::invalid_argument},
    {"no_counter", pmc::errc::no_counter},
};

// The error kinds of the P5 and P6 tables; archperf and amd add theirs.
inline const std::set<std::string> kEncoderErrors = {"not_found", "unit_mask", "attribute", "attribute_value",
                                                     "feature_combination", "parse", "invalid_argument"};

inline std::set<std::string> with(std::set<std::string> kinds, std::initializer_list<const char*> more) {
  for (const char* k : more) kinds.insert(k);
  return kinds;
}

struct Dump {
  std::string key;  // the `cpu` of the table's rows
  fs::path file;    // the CPUID dump Hal::open reads
  std::string tag;  // the cpu tag the backend's probe gives it
};

// A table's size when written: a row lost in an edit shows here.
struct Count {
  unsigned n = 0;
  bool exact = false;  // the header states the number; otherwise at least n
};

enum class Reencode {
  no,
  config,  // the canonical string encodes to the same config
  all,     // ... and to the same canonical string and fixed counter
};

struct Golden {
  std::string backend;  // every dump probes to it; its table is <backend>_golden.toml
  std::vector<Dump> dumps;
  std::string access = "auto";       // Config::access of every Hal the test opens
  std::string device_model;          // the PMU's device model, when checked
  std::set<std::string> error_kinds;  // the `error` values the table may use

  // The row schema, checked when `strict`: every key is one of row_keys, the event is not empty,
  // every row names its source, and every dump has a row.
  bool strict = false;
  std::set<std::string> row_keys;
  std::vector<std::string> not_in_error_rows;  // keys an error row must not have
  bool message_only_in_error_rows = false;
  bool check_message = true;  // an error row's `message` is a part of the error text

  // The encodings.
  std::optional<unsigned> config_bits;  // bits above these belong to no encoding
  bool fixed_counters = false;          // `fixed` and `fixed_control`; otherwise never a fixed counter
  bool no_interrupt = false;            // no encoding asks for the overflow interrupt
  bool raw_has_no_def = false;          // a `raw = true` row has no catalog entry, any other row has one
  Reencode reencode = Reencode::no;

  Count rows;
  std::optional<Count> errors, raws;

  // The catalogs validate clean for these dump keys (all when empty), with more checks of each.
  std::vector<std::string> validate_on;
  std::function<void(const pmc::Hal&)> catalog_check;

  const fs::path& dump(const std::string& key) const {
    for (const auto& d : dumps)
      if (d.key == key) return d.file;
    throw std::out_of_range("no dump " + key);
  }
};

// Hal::open with a Config built here: the user's config file is never read.
inline pmc::Hal open_dump(const Golden& g, const fs::path& dump, std::vector<fs::path> events_path = {}) {
  pmc::Config cfg;
  cfg.cpu = dump.string();
  cfg.backend = "auto";
  cfg.access = g.access;
  cfg.events_path = std::move(events_path);
  return pmc::Hal::open(cfg);
}

inline const fs::path kBundled = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";  // data/cpuid/
inline const fs::path kTestDumps = fs::path(PMC_TEST_DATA) / "cpuid";          // tests/data/cpuid/

inline void check_count(const char* what, unsigned actual, const Count& expected) {
  if (expected.exact)
    BOOST_TEST(actual == expected.n, actual << " " << what);
  else
    BOOST_TEST(actual >= expected.n, actual << " " << what);
}

inline std::optional<std::vector<unsigned>> ints(const toml::node_view<const toml::node>& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<unsigned> out;
  for (const auto& c : *v.as_array()) {
    const auto i = c.value<std::int64_t>();
    if (!i) return std::nullopt;
    out.push_back(static_cast<unsigned>(*i));
  }
  return out;
}

inline void check_probes(const Golden& g) {
  for (const auto& d : g.dumps) {
    BOOST_TEST_CONTEXT(d.file.string()) {
      pmc::Hal hal = open_dump(g, d.file);
      BOOST_REQUIRE(hal.backend());
      BOOST_TEST(hal.backend()->name == g.backend);
      BOOST_TEST(hal.pmu().cpu_tag == d.tag);
      if (!g.device_model.empty()) BOOST_TEST(hal.pmu().device_model == g.device_model);
    }
  }
}

struct Tally {
  unsigned rows = 0, errors = 0, raws = 0;
  std::map<std::string, unsigned> per_key;
};

inline void check_error_row(const Golden& g, const toml::table& row, const std::string& event, const pmc::Hal& hal,
                            const std::string& expected) {
  for (const auto& key : g.not_in_error_rows) BOOST_TEST(!row.contains(key), "an error row has no " << key);
  const auto kind = kErrors.find(expected);
  const bool known = g.error_kinds.count(expected) == 1 && kind != kErrors.end();
  BOOST_TEST(known, "unknown error kind '" << expected << "'");
  if (!known) return;
  try {
    const pmc::Encoding enc = hal.encode(event);
    BOOST_ERROR("expected error " << expected << " but it encoded to 0x" << std::hex << enc.config << " ("
                                  << enc.canonical << ")");
  } catch (const pmc::Error& e) {
    const std::string what = e.what();
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(kind->second), what);
    BOOST_TEST(what.find(event) != std::string::npos, "the message quotes the event: " << what);
    if (g.check_message)
      if (auto part = row["message"].value<std::string>())
        BOOST_TEST(what.find(*part) != std::string::npos, "'" << *part << "' not in: " << what);
  }
}

inline void check_encoded_row(const Golden& g, const toml::table& row, const std::string& event, const pmc::Hal& hal,
                              Tally& tally) {
  if (g.message_only_in_error_rows) BOOST_TEST(!row.contains("message"), "`message` belongs to error rows");
  const auto config = row["config"].value<std::int64_t>();
  const auto counters = ints(row["counters"]);
  const auto canonical = row["canonical"].value<std::string>();
  BOOST_TEST(config.has_value(), "a row without `error` has a config");
  BOOST_TEST(counters.has_value(), "a row without `error` has counters (integers)");
  BOOST_TEST(canonical.has_value(), "a row without `error` has a canonical string");
  if (!config || !counters || !canonical) return;
  std::optional<std::int64_t> fixed, fixed_control;
  if (g.fixed_counters && row.contains("fixed")) {
    fixed = row["fixed"].value<std::int64_t>();
    fixed_control = row["fixed_control"].value<std::int64_t>();
    if (!fixed || !fixed_control) {
      BOOST_ERROR("`fixed` and `fixed_control` are integers, and go together");
      return;
    }
  }
  const bool raw = row["raw"].value<bool>().value_or(false);
  tally.raws += raw;
  try {
    const pmc::Encoding enc = hal.encode(event);
    BOOST_TEST(enc.config == static_cast<std::uint64_t>(*config),
               "config 0x" << std::hex << enc.config << ", expected 0x" << *config);
    BOOST_TEST(enc.counters == *counters, boost::test_tools::per_element());
    BOOST_TEST(enc.canonical == *canonical);
    if (fixed) {
      BOOST_TEST(enc.fixed.has_value());
      if (enc.fixed) BOOST_TEST(*enc.fixed == static_cast<unsigned>(*fixed));
      BOOST_TEST(enc.fixed_control == static_cast<std::uint64_t>(*fixed_control));
    } else {
      BOOST_TEST(!enc.fixed.has_value());
    }
    if (g.config_bits) BOOST_TEST((enc.config >> *g.config_bits) == 0u, "bits above " << *g.config_bits);
    if (g.no_interrupt) BOOST_TEST(!enc.interrupt);
    if (g.raw_has_no_def) {
      if (raw)
        BOOST_TEST(enc.def == nullptr, "a raw code has no catalog entry");
      else
        BOOST_TEST(enc.def != nullptr, "a named event comes from the catalog");
    }
    if (g.reencode != Reencode::no) {
      // The canonical string is an event string that encodes to the same bits.
      const pmc::Encoding again = hal.encode(enc.canonical);
      BOOST_TEST(again.config == enc.config);
      if (g.reencode == Reencode::all) {
        BOOST_TEST(again.canonical == enc.canonical);
        BOOST_TEST((again.fixed == enc.fixed));
      }
    }
  } catch (const pmc::Error& e) {
    BOOST_ERROR("encode threw: " << e.what());
  }
}

inline void check_table(const Golden& g) {
  const std::string name = g.backend + "_golden.toml";
  const toml::table doc = toml::parse_file(std::string(PMC_TEST_DATA) + "/" + name);
  std::map<std::string, pmc::Hal> hals;
  for (const auto& d : g.dumps) hals.emplace(d.key, open_dump(g, d.file));
  BOOST_REQUIRE(doc["row"].as_array());
  Tally tally;
  for (const auto& node : *doc["row"].as_array()) {
    BOOST_REQUIRE(node.as_table());
    const auto& row = *node.as_table();
    const std::string event = row["event"].value<std::string>().value_or("");
    const std::string cpu = row["cpu"].value<std::string>().value_or("");
    ++tally.rows;
    BOOST_TEST_CONTEXT(name << ":" << node.source().begin.line << " " << event << " on " << cpu) {
      if (g.strict) {
        for (const auto& [key, value] : row)
          BOOST_TEST(g.row_keys.count(std::string(key.str())) == 1u, "unknown key " << key);
        BOOST_TEST(!event.empty(), "the row has no event");
        BOOST_TEST(row["source"].is_string(), "every row names its source");
      } else if (!row["event"].is_string() || !row["cpu"].is_string()) {
        BOOST_ERROR("a row needs an event and a cpu");
        continue;
      }
      const auto hal = hals.find(cpu);
      BOOST_TEST((hal != hals.end()), "no dump for cpu '" << cpu << "'");
      if (hal == hals.end()) continue;
      ++tally.per_key[cpu];
      if (auto expected = row["error"].value<std::string>()) {
        ++tally.errors;
        check_error_row(g, row, event, hal->second, *expected);
      } else {
        check_encoded_row(g, row, event, hal->second, tally);
      }
    }
  }
  check_count("rows", tally.rows, g.rows);
  if (g.errors) check_count("error rows", tally.errors, *g.errors);
  if (g.raws) check_count("raw rows", tally.raws, *g.raws);
  if (g.strict)
    for (const auto& d : g.dumps) BOOST_TEST(tally.per_key[d.key] > 0u, d.key << " has no row");
}

inline void check_catalogs(const Golden& g) {
  for (const auto& d : g.dumps) {
    if (!g.validate_on.empty() && std::find(g.validate_on.begin(), g.validate_on.end(), d.key) == g.validate_on.end())
      continue;
    pmc::Hal hal = open_dump(g, d.file);
    BOOST_TEST_CONTEXT(d.key) {
      for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
      if (g.catalog_check) g.catalog_check(hal);
    }
  }
}

}  // namespace pmc_test::golden

// The three cases of every table.
#define PMC_GOLDEN_CASES(spec)                                                    \
  BOOST_AUTO_TEST_CASE(each_dump_probes_to_its_cpu_tag) { check_probes(spec()); } \
  BOOST_AUTO_TEST_CASE(golden_table) { check_table(spec()); }                     \
  BOOST_AUTO_TEST_CASE(catalog_validates_clean) { check_catalogs(spec()); }
