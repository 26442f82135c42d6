#define BOOST_TEST_MODULE catalog_import_metrics
#include <boost/test/unit_test.hpp>

// `pmc catalog import --metrics-out` (docs/hardware/intel-catalogs.md "Metrics") run as a user
// runs it:
// (a) the hand-written metric lists of tests/data/catalog-import (intel/TST/metrics,
//     intel/HYB/metrics, perf/amdzen5/*.json) give the metric tables worked out by hand below
//     from the JSON's meaning: Intel's `X if C else Y` as `(C ? X : Y)`, nested to the right,
//     `&`/`|` as `&&`/`||`, constants as the loader's built-in names, event modifiers in the
//     project's spelling, perf's metric references inlined and `cpu@...@` events;
// (b) with Intel's and perf's trees present (PMC_PERFMON_DIR, PMC_PERF_AMD_DIR, default
//     ../shared/perfmon and ../shared/perf-amd beside the source tree), the checked-in metric
//     files are byte for byte what the importer writes; skipped otherwise. Without them too,
//     the checked-in files parse, keep names unique, fit muParser, and hold what
//     `-M TopdownL1` needs;
// (c) a malformed formula is one clear line naming the file and the metric, and exit status 1.

#include "support/pmc_command.hpp"
#include "support/vendor_trees.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::Result;
using pmc_test::slurp;
using pmc_test::spit;

const fs::path kData = fs::path(PMC_TEST_DATA) / "catalog-import";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The [[metric]] of that name (null when absent).
const toml::table* metric(const toml::table& doc, const std::string& name) {
  if (const toml::array* all = doc["metric"].as_array())
    for (const auto& m : *all)
      if (const auto* t = m.as_table(); t && (*t)["name"].value_or(std::string()) == name) return t;
  return nullptr;
}

// A file's text with its comment lines joined (the header wraps before column 100).
std::string unwrapped(const fs::path& file) {
  std::string text = slurp(file);
  for (std::size_t at; (at = text.find("\n# ")) != std::string::npos;) text.replace(at, 3, " ");
  return text;
}

std::string str(const toml::table& t, const char* key) { return t[key].value_or(std::string()); }

std::vector<std::string> strings(const toml::table& t, const char* key) {
  std::vector<std::string> out;
  if (const auto* a = t[key].as_array())
    for (const auto& x : *a) out.push_back(x.value_or(std::string()));
  return out;
}

using Words = std::vector<std::string>;

struct Import : pmc_test::PmcCommand {
  fs::path out = tmp.path() / "out";
  Result intel(const fs::path& from = kData / "intel") {
    return pmc({"catalog", "import", "--layout", "intel", "--from", from.string(), "--out", (out / "cpu").string(),
                "--tables", (kData / "tables").string(), "--metrics-out", (out / "metrics").string()});
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// (a) Intel

BOOST_FIXTURE_TEST_CASE(intel_metrics_translate_formulas_events_and_constants, Import) {
  const Result r = intel();
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const toml::table doc = toml::parse_file((out / "metrics" / "tst.toml").string());
  BOOST_TEST(str(doc, "backend") == "archperf");
  BOOST_TEST(contains(unwrapped(out / "metrics" / "tst.toml"), "test_metrics.json (version 7.7, published 03/04/2026, TMA 9.1)"));
  // 7 listed: uncore_frequency (a[0]) and Odd_Constant (MOON_PHASE) left out.
  BOOST_TEST(doc["metric"].as_array()->size() == 5u);
  BOOST_TEST(!metric(doc, "uncore_frequency"));
  BOOST_TEST(!metric(doc, "Odd_Constant"));
  BOOST_TEST(contains(r.out, "uncore_frequency: an indexed event value"), r);
  BOOST_TEST(contains(r.out, "Odd_Constant: Intel's constant MOON_PHASE"), r);

  // b if smt_on else c -> (smt_on ? b : c); the constant (4) loses its parentheses.
  const toml::table& fb = *metric(doc, "Frontend_Bound");
  BOOST_TEST(str(fb, "formula") ==
             "100 * (IDQ_UOPS_NOT_DELIVERED_CORE / (4 * (smt_on ? CPU_CLK_UNHALTED_THREAD_ANY / 2 : CPU_CLK_UNHALTED_THREAD)))");
  BOOST_TEST((strings(fb, "events") == Words{"IDQ_UOPS_NOT_DELIVERED.CORE", "CPU_CLK_UNHALTED.THREAD_ANY",
                                             "CPU_CLK_UNHALTED.THREAD"}));
  BOOST_TEST((strings(fb, "aliases") == Words{"tma_frontend_bound"}));
  BOOST_TEST((strings(fb, "groups") == Words{"TmaL1", "PGO", "TopdownL1", "tma_L1_group"}));
  BOOST_TEST(fb["level"].value_or(0) == 1);
  BOOST_TEST(!fb.contains("parent"));
  BOOST_TEST(str(fb, "unit") == "%");
  BOOST_TEST(str(fb, "threshold") == "Frontend_Bound > 15");
  BOOST_TEST(str(fb, "description") == "Frontend bound: top-down level 1, in % of issue slots (Intel TMA 9.1)");

  // Modifiers: :c1:e1 -> :c=1:e=1, :USER -> :u, :SUP -> :k, :i1 -> :i=1, :perf_metrics dropped,
  // :retire_latency kept. Constants: threads, 20, milliseconds, TSC. & and | are logical.
  const toml::table& fl = *metric(doc, "Fetch_Latency");
  BOOST_TEST(str(fl, "formula") ==
             "100 * (ICACHE_16B_IFDATA_STALL_c_1_e_1 + 2 * ICACHE_16B_IFDATA_STALL - (CPU_CLK_UNHALTED_THREAD - "
             "BR_INST_RETIRED_FAR_BRANCH_u)) / threads_per_core + 20 * BR_INST_RETIRED_FAR_BRANCH_k / "
             "((duration_time / 1e6) / 1000) - UOPS_ISSUED_ANY_i_1_c_1 / tsc_freq + TOPDOWN_SLOTS - "
             "MEM_LOAD_L3_MISS_retire_latency");
  BOOST_TEST((strings(fl, "events") ==
              Words{"ICACHE_16B.IFDATA_STALL:c=1:e=1", "ICACHE_16B.IFDATA_STALL", "CPU_CLK_UNHALTED.THREAD",
                    "BR_INST_RETIRED.FAR_BRANCH:u", "BR_INST_RETIRED.FAR_BRANCH:k", "UOPS_ISSUED.ANY:i=1:c=1",
                    "TOPDOWN.SLOTS", "MEM_LOAD.L3_MISS:retire_latency"}));
  BOOST_TEST(str(fl, "threshold") == "Fetch_Latency > 10 && Frontend_Bound > 15 || Fetch_Latency > 50");
  BOOST_TEST((strings(fl, "groups") == Words{"Frontend", "TmaL2", "TopdownL2", "tma_L2_group", "tma_frontend_bound_group"}));
  BOOST_TEST(str(fl, "parent") == "Frontend_Bound");
  BOOST_TEST(fl["level"].value_or(0) == 2);

  // a if C1 else (b if C2 else -c): right-associative; `> =` is >=. Its threshold names a metric
  // the file does not have: dropped and counted.
  const toml::table& nc = *metric(doc, "Nested_Choice");
  BOOST_TEST(str(nc, "formula") == "(X_B >= 0 ? X_A : (X_C < 2 ? X_B : (-X_C)))");
  BOOST_TEST((strings(nc, "events") == Words{"X.A", "X.B", "X.C"}));
  BOOST_TEST(!nc.contains("threshold"));
  BOOST_TEST(!nc.contains("unit"));
  BOOST_TEST(str(nc, "parent") == "Fetch_Latency");
  BOOST_TEST(contains(unwrapped(out / "metrics" / "tst.toml"), "Thresholds left out"));

  // An info metric: TMA alias, no top-down group or level; num_cpus, num_sockets; a variable
  // that would start with a digit is declared VAR=EVENT.
  const toml::table& info = *metric(doc, "Info_System_Cpus");
  BOOST_TEST(str(info, "formula") == "min(UNC_M_CAS_COUNT_RD, max(e_1X_Y, num_cpus)) / num_sockets");
  BOOST_TEST((strings(info, "events") == Words{"UNC_M_CAS_COUNT.RD", "e_1X_Y=1X.Y"}));
  BOOST_TEST((strings(info, "groups") == Words{"Mem", "MemoryBW"}));
  BOOST_TEST((strings(info, "aliases") == Words{"tma_info_system_cpus"}));
  BOOST_TEST(!info.contains("level"));
  BOOST_TEST(str(info, "unit") == "MB/s");

  // Not TMA: the lowercase alias; an event named like a built-in value gets its own variable.
  const toml::table& load = *metric(doc, "CPU_Load");
  BOOST_TEST(str(load, "formula") == "INST_RETIRED_ANY / cores_per_socket - SMT_ON_2");
  BOOST_TEST((strings(load, "events") == Words{"INST_RETIRED.ANY", "SMT_ON_2=SMT_ON"}));
  BOOST_TEST((strings(load, "aliases") == Words{"cpu_load"}));
  BOOST_TEST(str(load, "unit") == "per insn");
  BOOST_TEST(!contains(slurp(out / "metrics" / "tst.toml"), "Made-up words"));
}

BOOST_FIXTURE_TEST_CASE(intel_hybrid_metrics_take_the_core_kind_of_the_catalog, Import) {
  const Result r = intel();
  BOOST_TEST_REQUIRE(r.status == 0, r);
  // hybrid_metrics_bigcore_core.json -> hyb-big (its events file hybrid_bigcore_core.json is
  // cpu/hyb-big.toml); the small core has no list of its name, so no file.
  BOOST_TEST(!fs::exists(out / "metrics" / "hyb-smallcore.toml"));
  const toml::table doc = toml::parse_file((out / "metrics" / "hyb-big.toml").string());
  const toml::table& ret = *metric(doc, "Retiring");
  BOOST_TEST(str(ret, "formula") == "100 * PERF_METRICS_RETIRING / TOPDOWN_SLOTS");
  BOOST_TEST((strings(ret, "events") == Words{"PERF_METRICS.RETIRING", "TOPDOWN.SLOTS"}));
  BOOST_TEST(contains(unwrapped(out / "metrics" / "hyb-big.toml"),
                      "(hybrid_metrics_smallcore_other.json) are not this catalog's"));
  // Without --metrics-out, no metric files.
  const fs::path other = tmp.path() / "plain";
  const Result p = pmc({"catalog", "import", "--layout", "intel", "--from", (kData / "intel").string(), "--out",
                        other.string(), "--tables", (kData / "tables").string()});
  BOOST_TEST_REQUIRE(p.status == 0, p);
  BOOST_TEST(!contains(p.out, "thresholds"), p);
}

// ---------------------------------------------------------------------------------------------
// (a) perf (AMD)

BOOST_FIXTURE_TEST_CASE(perf_metrics_inline_the_metrics_they_name, Import) {
  const Result r = pmc({"catalog", "import", "--layout", "perf", "--from", (kData / "perf").string(), "--out",
                        (out / "amd").string(), "--metrics-out", (out / "metrics").string()});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(!fs::exists(out / "metrics" / "zen6.toml"));  // the amd backend has no zen6 tag
  const toml::table doc = toml::parse_file((out / "metrics" / "zen5.toml").string());
  BOOST_TEST(str(doc, "backend") == "amd");
  BOOST_TEST(doc["metric"].as_array()->size() == 5u);  // odd_literal (#core_wide) left out
  BOOST_TEST(contains(r.out, "odd_literal: perf's literal #core_wide"), r);

  const toml::table& slots = *metric(doc, "total_dispatch_slots");
  BOOST_TEST(str(slots, "formula") == "8 * ls_not_halted_cyc");
  BOOST_TEST(!slots.contains("groups"));

  // total_dispatch_slots inlined (parenthesised); ScaleUnit 100% -> 100 * and unit %.
  const toml::table& fb = *metric(doc, "frontend_bound");
  BOOST_TEST(str(fb, "formula") ==
             "100 * d_ratio(de_no_dispatch_per_slot_no_ops_from_frontend, (8 * ls_not_halted_cyc))");
  BOOST_TEST((strings(fb, "events") == Words{"de_no_dispatch_per_slot.no_ops_from_frontend", "ls_not_halted_cyc"}));
  BOOST_TEST((strings(fb, "groups") == Words{"PipelineL1", "TopdownL1"}));
  BOOST_TEST(fb["level"].value_or(0) == 1);
  BOOST_TEST(str(fb, "unit") == "%");

  // cpu@ev\,cmask\=0x8@ -> ev:c=8; #smt_on -> smt_on; X_group -> parent X.
  const toml::table& lat = *metric(doc, "frontend_bound_latency");
  BOOST_TEST(str(lat, "formula") == "100 * (d_ratio(8 * de_no_dispatch_per_slot_no_ops_from_frontend_c_8, "
                                    "(8 * ls_not_halted_cyc)) * (smt_on ? 2 : 1))");
  BOOST_TEST((strings(lat, "events") == Words{"de_no_dispatch_per_slot.no_ops_from_frontend:c=8", "ls_not_halted_cyc"}));
  BOOST_TEST(str(lat, "parent") == "frontend_bound");
  BOOST_TEST(lat["level"].value_or(0) == 2);
  BOOST_TEST((strings(lat, "groups") == Words{"PipelineL2", "frontend_bound_group", "TopdownL2"}));

  // Both references inlined unscaled (perf's meaning); 1ns: no factor, unit ns.
  const toml::table& rest = *metric(doc, "frontend_bound_rest");
  BOOST_TEST(str(rest, "formula") ==
             "d_ratio(de_no_dispatch_per_slot_no_ops_from_frontend, (8 * ls_not_halted_cyc)) - "
             "(d_ratio(8 * de_no_dispatch_per_slot_no_ops_from_frontend_c_8, (8 * ls_not_halted_cyc)) * "
             "(smt_on ? 2 : 1)) / num_cpus");
  BOOST_TEST((strings(rest, "events") == Words{"de_no_dispatch_per_slot.no_ops_from_frontend", "ls_not_halted_cyc",
                                               "de_no_dispatch_per_slot.no_ops_from_frontend:c=8"}));
  BOOST_TEST(str(rest, "unit") == "ns");

  const toml::table& made = *metric(doc, "made_up_ratio");
  BOOST_TEST(str(made, "formula") == "ls_made_up_thing / ls_made_up_plain");
  BOOST_TEST(!contains(slurp(out / "metrics" / "zen5.toml"), "Own words"));
}

// ---------------------------------------------------------------------------------------------
// (c) bad input

BOOST_FIXTURE_TEST_CASE(a_malformed_formula_names_the_file_and_the_metric, Import) {
  const fs::path tree = tmp.path() / "bad";
  spit(tree / "mapfile.csv", "Family-model,Version,Filename,EventType\nGenuineIntel-6-4E,V1,/X/events/x_core.json,core\n");
  fs::create_directories(tree / "X" / "events");
  fs::copy_file(kData / "intel" / "TST" / "events" / "test_core.json", tree / "X" / "events" / "x_core.json");
  for (const char* formula : {"a + * a", "a if a", "a > 1 > 2", "a % 2", "foo(a)", "a = 1"}) {
    spit(tree / "X" / "metrics" / "x_metrics.json",
         std::string(R"({"Header": {}, "Metrics": [{"MetricName": "Broken_One", "Level": 1, "UnitOfMeasure": "",
             "Events": [{"Name": "INST_RETIRED.ANY", "Alias": "a"}], "Constants": [], "Category": "",
             "Formula": ")") + formula + "\"}]}\n");
    const Result r = intel(tree);
    BOOST_TEST(r.status == 1, formula << ": " << r);
    BOOST_TEST(r.err.find('\n') == r.err.size() - 1, r);
    BOOST_TEST(contains(r.err, (tree / "X" / "metrics" / "x_metrics.json").string()), r);
    BOOST_TEST(contains(r.err, "metric 'Broken_One'"), r);
  }
}

// ---------------------------------------------------------------------------------------------
// (b) the checked-in metric files are the importer's output

namespace {

using pmc_test::shared_dir;
using pmc_test::vendor_trees;

void same_files(const fs::path& fresh, const fs::path& tree) {
  std::set<std::string> written, checked_in;
  for (const auto& f : fs::directory_iterator(fresh)) written.insert(f.path().filename().string());
  for (const auto& f : fs::directory_iterator(tree)) checked_in.insert(f.path().filename().string());
  BOOST_TEST((written == checked_in), "the importer's metric files and " << tree.string() << " differ");
  for (const auto& n : written)
    BOOST_TEST(slurp(fresh / n) == slurp(tree / n), (tree / n).string() << " differs from the importer's output: "
                                                                         "rerun scripts/regen-catalogs.sh");
}

Words in_group(const toml::table& doc, const std::string& group) {
  Words out;
  if (const toml::array* all = doc["metric"].as_array())
    for (const auto& m : *all) {
      const Words g = strings(*m.as_table(), "groups");
      if (std::find(g.begin(), g.end(), group) != g.end()) out.push_back(str(*m.as_table(), "name"));
    }
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(checked_in_metric_files_are_the_importers_output, Import,
                        *boost::unit_test::precondition(vendor_trees)) {
  const fs::path src = PMC_SOURCE_DIR;
  const Result i = pmc({"catalog", "import", "--layout", "intel", "--from", shared_dir("PMC_PERFMON_DIR", "perfmon").string(),
                        "--out", (out / "cpu").string(), "--tables", (src / "data" / "catalog-import").string(),
                        "--metrics-out", (out / "intel").string()});
  BOOST_TEST_REQUIRE(i.status == 0, i);
  same_files(out / "intel", src / "backends" / "archperf" / "metrics");
  const Result a = pmc({"catalog", "import", "--layout", "perf", "--from", shared_dir("PMC_PERF_AMD_DIR", "perf-amd").string(),
                        "--out", (out / "amd").string(), "--metrics-out", (out / "amdm").string()});
  BOOST_TEST_REQUIRE(a.status == 0, a);
  same_files(out / "amdm", src / "backends" / "amd" / "metrics");

}

// Without the vendor trees too: every checked-in metric file parses, its names are unique
// regardless of case, no alias is another metric's name, every formula fits muParser (20000
// characters), and the top-down level 1 is what `-M TopdownL1` should give.
BOOST_AUTO_TEST_CASE(checked_in_metric_files_hold_the_top_down_levels) {
  const fs::path src = PMC_SOURCE_DIR;
  std::size_t files = 0;
  for (const char* backend : {"archperf", "amd"})
    for (const auto& f : fs::directory_iterator(src / "backends" / backend / "metrics")) {
      ++files;
      const toml::table doc = toml::parse_file(f.path().string());
      BOOST_TEST(str(doc, "backend") == backend, f.path());
      std::set<std::string> names;
      for (const auto& node : *doc["metric"].as_array()) {
        const toml::table& m = *node.as_table();
        std::string lower = str(m, "name");
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        BOOST_TEST(names.insert(lower).second, f.path() << ": " << str(m, "name") << " twice");
        BOOST_TEST(!str(m, "formula").empty(), f.path() << ": " << str(m, "name"));
        BOOST_TEST(str(m, "formula").size() <= 20000u, f.path() << ": " << str(m, "name"));
        BOOST_TEST(!str(m, "description").empty(), f.path() << ": " << str(m, "name"));
      }
      for (const auto& node : *doc["metric"].as_array())
        for (const auto& a : strings(*node.as_table(), "aliases")) {
          std::string own = str(*node.as_table(), "name");
          for (char& c : own) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          BOOST_TEST((a == own || !names.count(a)), f.path() << ": alias " << a);
        }
    }
  BOOST_TEST(files == 26u);
  const Words l1{"Frontend_Bound", "Bad_Speculation", "Backend_Bound", "Retiring"};
  for (const char* tag : {"skl", "spr"}) {
    const toml::table doc = toml::parse_file((src / "backends" / "archperf" / "metrics" / (std::string(tag) + ".toml")).string());
    BOOST_TEST(doc["metric"].as_array()->size() >= (std::string(tag) == "skl" ? 150u : 200u), tag);
    Words got = in_group(doc, "TopdownL1");
    BOOST_TEST((std::set<std::string>(got.begin(), got.end()) == std::set<std::string>(l1.begin(), l1.end())), tag);
    BOOST_TEST(got.size() == 4u, tag);
  }
  const toml::table zen4 = toml::parse_file((src / "backends" / "amd" / "metrics" / "zen4.toml").string());
  const Words z = in_group(zen4, "TopdownL1");
  for (const char* n : {"frontend_bound", "bad_speculation", "backend_bound", "retiring", "smt_contention"})
    BOOST_TEST((std::find(z.begin(), z.end(), n) != z.end()), n);
}
