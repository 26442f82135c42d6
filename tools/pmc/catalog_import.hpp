// pmc catalog import: the vendors' published event lists (Intel's perfmon layout, Linux perf's
// pmu-events layout) turned into the project's catalog TOML (docs/hardware/intel-catalogs.md).
// catalog_import.cpp reads the common inputs (mapfile.csv, JSON, CPU patterns) and writes TOML
// text; catalog_import_intel.cpp converts Intel's events, catalog_import_cpuid.cpp writes the
// per-CPU index and the synthesized CPUID dumps, catalog_import_perf.cpp completes the AMD catalogs
// from perf's lists. The output is a pure function of the inputs (no dates, no paths): the tests
// compare the checked-in catalogs with a fresh run byte for byte.
#pragma once

#include "cli.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pmc_cli::catalog_import {

namespace fs = std::filesystem;
using ImportOptions = pmc_cli::ImportOptions;

// One row of mapfile.csv.
struct MapRow {
  std::size_t line = 0;
  std::string pattern;             // "GenuineIntel-6-55-[01234]"
  std::string version;
  std::string file;                // "/SKX/events/skylakex_core.json" or "amdzen5"
  std::string type;                // "core", "hybridcore", "uncore", ...
  std::optional<std::uint32_t> core_type;
  std::optional<std::uint32_t> native_model;
  std::string role;                // "Core", "Atom", "LowPower_Atom"
};

// A mapfile pattern taken apart: vendor, display family, models, steppings (empty: any).
struct CpuPattern {
  std::string vendor;
  std::set<unsigned> families;
  std::set<unsigned> models;
  std::set<unsigned> steppings;
};

// mapfile.csv of a tree; a missing or malformed file is an error naming it.
std::vector<MapRow> read_mapfile(const fs::path& dir);
// A JSON file; malformed JSON is an error naming the file, line and column.
nlohmann::json read_json(const fs::path& file);
// "GenuineIntel-6-(97|9A)" -> its values; alternatives (a|b), classes [0-9A-F] and literal hex
// digits are understood (the family in decimal, model and stepping in hex, as Intel writes them).
CpuPattern parse_cpu_pattern(std::string_view text, const std::string& where);
// "0x1A6" / "0X1a6" / "100003" -> the number; an error naming `where` otherwise.
std::uint64_t parse_number(std::string_view text, const std::string& where);
// "0x1a6, 0x1a7" -> its numbers (empty entries and zeros dropped when drop_zero).
std::vector<std::uint64_t> parse_numbers(std::string_view text, const std::string& where, bool drop_zero);
// A JSON member as text ("" when absent or null).
std::string member(const nlohmann::json& e, const char* key);

// TOML spellings.
std::string toml_string(std::string_view text);          // "..." with escapes
std::string toml_list(const std::vector<std::string>& words);  // ["a", "b"]
std::string toml_hex(std::uint64_t v, int digits = 2);  // 0x1A6
std::string toml_int_set(const std::set<unsigned>& values, bool hex);  // 6, 0x55, "5-15", [0x97, 0x9A]
// A paragraph as TOML/dump comment lines ("# ..."), wrapped before column 100.
std::string comment(std::string_view text);
// ASCII lower case ("Frontend_Bound" -> "frontend_bound").
std::string lower_case(std::string_view s);
// "ARITH.DIVIDER_ACTIVE" -> "Arith divider active".
std::string name_words(std::string_view name);

// Writes text to a file, creating its directory; an error names the file.
void write_text(const fs::path& file, const std::string& text);

// What one converted Intel file holds, for the index, the dumps and the figures.
struct IntelCatalog {
  std::string tag;                 // "skl", "adl-glc"
  std::string json_file;           // "skylake_core.json"
  std::string folder;              // "SKL"
  std::string name;                // "Skylake client (...)"
  unsigned version = 5;            // CPUID.0AH version for the synthesized dump
  unsigned max_general = 0;        // highest general counter listed + 1
  std::set<unsigned> fixed;        // fixed counters listed (numbered from 0)
  std::size_t vendor_events = 0;   // entries in Intel's list
  std::size_t written = 0;         // [[event]] tables written
  std::size_t aliases = 0;         // entries written as an alias of one that selects the same
  std::size_t deprecated = 0;      // deprecated names (events or aliases)
  std::vector<std::string> notes;  // corrections made (renamed events, renumbered fixed counters)
};

// The importer's tables (data/catalog-import/*.toml).
struct IntelTables {
  struct Platform {
    std::string name;
    unsigned version = 5;
  };
  struct Core {
    std::string suffix;
    std::string name;
  };
  std::map<std::string, Platform, std::less<>> platforms;   // by folder
  std::map<std::string, Core, std::less<>> cores;            // by core word
  std::vector<std::pair<std::string, std::string>> topics;   // prefix -> topic, longest first
  std::string default_topic = "other";
};
IntelTables read_tables(const fs::path& dir);

// Converts one Intel events file into the TOML text of cpu/<tag>.toml.
std::string convert_intel(const fs::path& json_file, const IntelTables& tables, const ImportOptions& o,
                          IntelCatalog& cat);
// cpu/index.toml for the rows, and the CPUID dump of each catalog (catalog_import_cpuid.cpp).
std::string index_toml(const std::vector<MapRow>& rows, const std::map<std::string, IntelCatalog>& by_file);
std::string cpuid_dump(const MapRow& row, const IntelCatalog& cat);

// Metric formulas (catalog_import_formula.cpp): the vendors' syntax to muParser's.
enum class Dialect { intel, perf };
// A formula the metric files cannot carry (an indexed value, an unknown constant): the metric is
// left out and counted. A malformed one (BadFormula) stops the import.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct BadFormula : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A name of the formula to its muParser text (an operand: a variable, a number, or something in
// parentheses); throws Unsupported or BadFormula.
using FormulaNames = std::function<std::string(const std::string& name)>;
struct Formula {
  std::string text;
  bool operand = false;  // an operand as it stands (no parentheses needed around it)
};
// The formula in muParser's syntax; a scale other than "" or "1" multiplies it. compact: no
// spaces (for a formula near muParser's length limit).
Formula translate_formula(std::string_view text, Dialect dialect, const FormulaNames& names,
                          std::string_view scale = {}, bool compact = false);

// The metric files (catalog_import_metrics.cpp): what one written file holds.
struct MetricFile {
  std::string tag;                 // "skl", "zen4"
  std::string source;              // "skylake_metrics.json", "amdzen4"
  std::size_t listed = 0;          // metrics in the vendor's list
  std::size_t written = 0;         // [[metric]] tables written
  std::size_t tma = 0;             // of those, Intel's TMA metrics (tree, info, bottleneck)
  std::size_t thresholds_dropped = 0;
  std::vector<std::string> skipped;  // "NAME: reason"
};
// Intel: the metrics list of a catalog's folder matching its events file, written to
// <metrics_out>/<tag>.toml (nullopt: the folder has none).
std::optional<MetricFile> import_intel_metrics(const fs::path& folder, const IntelCatalog& cat, const ImportOptions& o);
// perf: every metric of a perf folder (amdzenN/*.json) written to <metrics_out>/<tag>.toml.
MetricFile import_perf_metrics(const fs::path& folder, const std::string& tag, const ImportOptions& o);
// The table the importers print of the files written.
void print_metric_files(const std::vector<MetricFile>& files);

int import_intel(const ImportOptions& o);
int import_perf(const ImportOptions& o);

}  // namespace pmc_cli::catalog_import
