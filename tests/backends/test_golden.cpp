// The backends' catalogs and encoders as golden tables, one per backend, checked by one harness:
// tests/data/<backend>_golden.toml (p5, p6, archperf, amd). Every row is an event string, the CPU
// it is encoded for (a key this test maps to a CPUID dump), and the event-select value, counters
// and canonical string worked out by hand from the manuals (each table's header says how), or
// the error kind expected. Encoded end to end: CPUID dump -> Hal::open -> the backend's plugin ->
// its data files -> encoder. Every failure names the table's file and the row's line.
//
// What differs between the backends is data (p5_golden() ... amd_golden() below): the dumps and the
// tags they probe to, the error kinds a table may use, its size, and which checks each table has
// had since it was written (the row schema of p5 and amd, the P5's 10-bit CESR half, archperf's
// fixed counters, canonical strings encoded again by archperf and amd, ...). Each backend's suite
// runs the same three cases on its table (the dumps probe to their tags, the table, the catalogs
// validate), then the cases that are not rows of a table.
#define BOOST_TEST_MODULE golden
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

const std::map<std::string, pmc::errc> kErrors = {
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
const std::set<std::string> kEncoderErrors = {"not_found", "unit_mask",        "attribute",       "attribute_value",
                                              "feature_combination", "parse", "invalid_argument"};

std::set<std::string> with(std::set<std::string> kinds, std::initializer_list<const char*> more) {
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
pmc::Hal open_dump(const Golden& g, const fs::path& dump, std::vector<fs::path> events_path = {}) {
  pmc::Config cfg;
  cfg.cpu = dump.string();
  cfg.backend = "auto";
  cfg.access = g.access;
  cfg.events_path = std::move(events_path);
  return pmc::Hal::open(cfg);
}

const fs::path kBundled = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";  // data/cpuid/
const fs::path kTestDumps = fs::path(PMC_TEST_DATA) / "cpuid";          // tests/data/cpuid/

// p5 (backends/p5/p5.toml): the CESR half computed by hand from the SDM layout (ES 5:0, CC 8:6,
// PC 9; docs/hardware/p5.md section 3). The bundled dumps and the tags they probe to: p5.md 7.1;
// test_p5_probe.cpp checks the verdicts in detail.
const Golden& p5_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "p5";
    g.dumps = {{"p5", kBundled / "pentium.txt", "p5"},
               {"p5mmx", kBundled / "pentium-mmx.txt", "p5mmx"},
               {"p5mmx_e74", kBundled / "pentium-mmx-e74.txt", "p5mmx_e74"}};
    g.access = "sim";
    g.error_kinds = kEncoderErrors;
    // The keys of the header of p5_golden.toml: a misspelt key would silently skip a check.
    g.strict = true;
    g.row_keys = {"event", "cpu", "config", "counters", "canonical", "source", "raw", "error", "message"};
    g.not_in_error_rows = {"config", "canonical"};
    g.message_only_in_error_rows = true;
    g.config_bits = 10;     // a CESR half: ES 5:0, CC 8:6, PC 9
    g.no_interrupt = true;  // the P5 has no overflow interrupt
    g.raw_has_no_def = true;
    g.rows = {195, false};  // the header's sections 1-7
    g.errors = Count{49, false};
    g.raws = Count{6, false};
    return g;
  }();
  return spec;
}

// p6 (backends/p6/p6.toml): the PerfEvtSel value computed by hand from the SDM bit layout.
const Golden& p6_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "p6";
    g.dumps = {{"ppro", kBundled / "pentium-pro.txt", "ppro"},
               {"pii", kBundled / "pentium-ii.txt", "pii"},
               {"piii", kBundled / "pentium-iii.txt", "piii"},
               {"pm", kBundled / "pentium-m.txt", "pm"}};
    g.error_kinds = kEncoderErrors;
    g.check_message = false;
    g.rows = {150, false};
    return g;
  }();
  return spec;
}

// archperf (backends/archperf/archperf.toml + archperf.cpp): the IA32_PERFEVTSELx value computed by
// hand from the SDM bit layout. The table's `cpu` is a dump, not a tag: several dumps share a
// version tag.
const Golden& archperf_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "archperf";
    g.dumps = {{"v1", kTestDumps / "archperf-v1-yonah.txt", "v1"},
               {"core2", kBundled / "core2.txt", "v2"},
               {"v2", kTestDumps / "archperf-v2-penryn.txt", "v2"},
               {"v3", kTestDumps / "archperf-v3-nehalem.txt", "v3"},
               {"v4", kTestDumps / "archperf-v4-skylake.txt", "v4"},
               {"icl", kBundled / "intel-icelake.txt", "v5"},
               {"guest", kTestDumps / "archperf-v5-guest.txt", "v5e"}};
    g.device_model = "archperf";
    g.error_kinds = with(kEncoderErrors, {"not_supported", "no_counter"});
    g.fixed_counters = true;
    g.no_interrupt = true;
    g.raw_has_no_def = true;
    g.reencode = Reencode::all;
    g.rows = {130, false};
    g.errors = Count{25, false};
    g.catalog_check = [](const pmc::Hal& hal) {
      // TOPDOWN_SLOTS is listed for version 5 parts only.
      const bool v5 = hal.pmu().cpu_tag == "v5";
      BOOST_TEST((hal.events().find("TOPDOWN_SLOTS", hal.pmu().cpu_tag) != nullptr) == v5);
      // archperf.toml's own events; a model's catalog (cpu/*.toml) adds its CPU's.
      std::size_t architectural = 0;
      for (const pmc::EventDef* e : hal.events().for_cpu(hal.pmu().cpu_tag))
        architectural += fs::path(e->source.file).filename() == "archperf.toml";
      BOOST_TEST(architectural == (v5 ? 8u : 7u));
    };
    return g;
  }();
  return spec;
}

// amd (backends/amd/amd.toml + events/amd/*.toml): the PERF_CTL value, counters and canonical
// string worked out by hand from the manuals. The bundled dumps and the tags they probe to:
// docs/hardware/amd.md 1.3; the section headers of amd_golden.toml name the same files;
// test_amd_probe.cpp checks the verdicts in detail.
const Golden& amd_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "amd";
    for (const auto& [tag, file] : std::vector<std::pair<std::string, std::string>>{
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
         })
      g.dumps.push_back({tag, kBundled / file, tag});
    g.access = "sim";
    g.error_kinds = with(kEncoderErrors, {"no_counter"});
    // The keys of the header of amd_golden.toml, plus `message`: a misspelt key would silently
    // skip a check.
    g.strict = true;
    g.row_keys = {"event", "cpu", "config", "counters", "canonical", "source", "error", "message"};
    g.not_in_error_rows = {"config"};
    g.reencode = Reencode::config;  // canonical strings are what pmc prints
    g.rows = {909, true};           // the file's header: 909 rows, 169 of them errors
    g.errors = Count{169, true};
    // Family 15h's events name counters 3-5: checked against the six-counter PMU of its dump.
    g.validate_on = {"fam15h", "zen4"};
    g.catalog_check = [](const pmc::Hal& hal) { BOOST_TEST(hal.pmu().general_count() == 6u); };
    return g;
  }();
  return spec;
}

void check_count(const char* what, unsigned actual, const Count& expected) {
  if (expected.exact)
    BOOST_TEST(actual == expected.n, actual << " " << what);
  else
    BOOST_TEST(actual >= expected.n, actual << " " << what);
}

std::optional<std::vector<unsigned>> ints(const toml::node_view<const toml::node>& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<unsigned> out;
  for (const auto& c : *v.as_array()) {
    const auto i = c.value<std::int64_t>();
    if (!i) return std::nullopt;
    out.push_back(static_cast<unsigned>(*i));
  }
  return out;
}

void check_probes(const Golden& g) {
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

void check_error_row(const Golden& g, const toml::table& row, const std::string& event, const pmc::Hal& hal,
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

void check_encoded_row(const Golden& g, const toml::table& row, const std::string& event, const pmc::Hal& hal,
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

void check_table(const Golden& g) {
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

void check_catalogs(const Golden& g) {
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

}  // namespace

// The three cases of every table.
#define PMC_GOLDEN_CASES(spec)                                                    \
  BOOST_AUTO_TEST_CASE(each_dump_probes_to_its_cpu_tag) { check_probes(spec()); } \
  BOOST_AUTO_TEST_CASE(golden_table) { check_table(spec()); }                     \
  BOOST_AUTO_TEST_CASE(catalog_validates_clean) { check_catalogs(spec()); }

BOOST_AUTO_TEST_SUITE(p5)
PMC_GOLDEN_CASES(p5_golden)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(p6)
PMC_GOLDEN_CASES(p6_golden)

BOOST_AUTO_TEST_CASE(model_specific_events_follow_the_cpu) {
  const auto open_for = [](const std::string& key) { return open_dump(p6_golden(), p6_golden().dump(key)); };
  // MMX_INSTR_EXEC (B0H) is a Pentium II event only; the SSE events (D8H) a Pentium III one.
  BOOST_TEST(open_for("pii").events().find("MMX_INSTR_EXEC", "pii") != nullptr);
  BOOST_TEST(open_for("piii").events().find("MMX_INSTR_EXEC", "piii") == nullptr);
  BOOST_CHECK_THROW((void)open_for("ppro").encode("EMON_KNI_INST_RETIRED"), pmc::Error);
  BOOST_TEST(open_for("piii").encode("EMON_KNI_INST_RETIRED").config == 0x300D8u);
}

BOOST_AUTO_TEST_SUITE_END()

// archperf: also the encoder's refusals worded for the CPU, and model-specific catalogs added on
// events_path.
BOOST_AUTO_TEST_SUITE(archperf)
PMC_GOLDEN_CASES(archperf_golden)

namespace {
pmc::Hal open_archperf(const std::string& key, std::vector<fs::path> events_path = {}) {
  return open_dump(archperf_golden(), archperf_golden().dump(key), std::move(events_path));
}
}  // namespace

BOOST_AUTO_TEST_CASE(encode_is_pure) {
  // The same string gives the same bits, whichever Hal and however often: no state.
  pmc::Hal a = open_archperf("v3");
  pmc::Hal b = open_archperf("v3");
  for (const char* ev : {"instructions:t", "r01C2:c=3", "LLC_MISSES:i=1:c=1", "ref-cycles:k"}) {
    const pmc::Encoding x = a.encode(ev), y = b.encode(ev), z = a.encode(ev);
    BOOST_TEST(x.config == y.config);
    BOOST_TEST(x.config == z.config);
    BOOST_TEST(x.canonical == z.canonical);
    BOOST_TEST(x.fixed_control == y.fixed_control);
  }
}

BOOST_AUTO_TEST_CASE(refusals_name_the_event_the_ebx_bit_and_the_cpu) {
  pmc::Hal guest = open_archperf("guest");
  try {
    (void)guest.encode("LLC_MISSES:u");
    BOOST_ERROR("LLC_MISSES encoded on a CPU whose EBX marks it unavailable");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("event 'LLC_MISSES:u'") != std::string::npos, m);
    BOOST_TEST(m.find("architectural event 4 (LLC Misses)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EBX bit 4 is set (EBX = 0x00000050)") != std::string::npos, m);
    BOOST_TEST(m.find("Intel Xeon Processor (Icelake)") != std::string::npos, m);
  }
  pmc::Hal core2 = open_archperf("core2");
  try {
    (void)core2.encode("TOPDOWN_SLOTS");
    BOOST_ERROR("TOPDOWN_SLOTS encoded on a CPU whose EBX vector is 7 bits long");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("architectural event 7 (Topdown Slots)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EAX[31:24] = 7, so the EBX vector has no bit 7") != std::string::npos, m);
    BOOST_TEST(m.find("Core(TM)2") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(anythread_messages_say_why) {
  // The Hal outlives the exception: its plugin's code destroys the exception object.
  const pmc::Hal v2 = open_archperf("v2");
  const pmc::Hal icl = open_archperf("icl");
  try {
    (void)v2.encode("instructions:t=1");
    BOOST_ERROR("AnyThread accepted on version 2");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::attribute);
    BOOST_TEST(std::string(e.what()).find("column 14") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("needs architectural perfmon version 3 or later") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("has version 2") != std::string::npos, e.what());
  }
  try {
    (void)icl.encode("cycles:t");
    BOOST_ERROR("AnyThread accepted where CPUID deprecates it");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("CPUID.0AH:EDX[15] = 1") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(model_specific_catalog_on_events_path) {
  // A user's Nehalem file: two model-specific events, one overriding built-in description, one
  // with a unit-mask group and a counter constraint, and an SDM-named alias.
  const fs::path dir = fs::temp_directory_path() / ("pmc-archperf-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "nehalem.toml";
  std::ofstream(file) << R"toml(backend = "archperf"
description = "a few Nehalem events (SDM vol 3B table 19-19)"
[cpus]
v3 = "version 3"

[[event]]
name = "UOPS_RETIRED"
code = 0xC2
desc = "Micro-ops retired"
cpus = ["v3"]
umasks = { default = ["ANY"], masks = [
  { name = "ANY", value = 0x01, desc = "all micro-ops" },
  { name = "RETIRE_SLOTS", value = 0x02, desc = "retirement slots used" },
] }

[[event]]
name = "L1D_PEND_MISS"
code = 0x48
umask = 0x00
counters = [2]
desc = "Outstanding L1D misses, each cycle (counter 2 only)"
aliases = ["L1D_PEND_MISS.PENDING"]
)toml";
  pmc::Hal hal = open_archperf("v3", {file});
  const pmc::Encoding uops = hal.encode("UOPS_RETIRED");
  BOOST_TEST(uops.config == 0x4301C2u);  // same bits as r01C2
  BOOST_TEST(uops.canonical == "archperf::UOPS_RETIRED:ANY:u=1:k=1:e=0:i=0:c=0:t=0");
  BOOST_TEST(uops.def->source.file == file.string());
  BOOST_TEST(hal.encode("UOPS_RETIRED:RETIRE_SLOTS:u").config == 0x4102C2u);
  const pmc::Encoding pend = hal.encode("L1D_PEND_MISS.PENDING:c=1");
  BOOST_TEST(pend.config == 0x01430048u);
  BOOST_TEST(pend.counters == std::vector<unsigned>{2}, boost::test_tools::per_element());
  BOOST_TEST(hal.encode("instructions").config == 0x4300C0u);  // built-ins still there
  for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
  // On another version the v3 event does not exist, and says where it does.
  pmc::Hal v4 = open_archperf("v4", {file});
  try {
    (void)v4.encode("UOPS_RETIRED");
    BOOST_ERROR("a v3-only event encoded on v4");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::not_found);
    BOOST_TEST(std::string(e.what()).find("exists on: v3") != std::string::npos, e.what());
  }
  // A session schedules the constrained event onto counter 2.
  pmc::Session s = hal.session();
  s.add("L1D_PEND_MISS");
  s.add("instructions");
  const auto r = s.read();
  BOOST_TEST(r.at(0).counter == 2u);
  BOOST_TEST((r.at(1).counter_kind == pmc::CounterKind::fixed));
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(amd)
PMC_GOLDEN_CASES(amd_golden)
BOOST_AUTO_TEST_SUITE_END()
