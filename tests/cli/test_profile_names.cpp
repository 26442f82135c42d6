#define BOOST_TEST_MODULE profile_names
#include <boost/test/unit_test.hpp>

// `pmc profile -- COMMAND` names where the samples fell: the object, the function and the
// source line, as perf report does. The command is cli/profile_target.c, built with frame
// pointers and debug info, which spends almost all of its CPU time in pmc_test_hot_loop (its
// "hot line") and about a sixteenth as much in pmc_test_cold_loop. It runs until it has used the
// CPU time asked, so the checks depend on no machine's speed: the hot function first, on its hot
// line, in the right object. Also: --sort's keys and refusals, --json's rows, and what profiling
// a workload or an emulated command refuses. Linux perf samples cpu-clock (no PMU needed).

#include "support/json_report.hpp"
#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kTarget = PMC_PROFILE_TARGET;
const std::string kTargetName = fs::path(kTarget).filename().string();

// The line of profile_target.c marked "hot line" (from the source, not from pmc).
int hot_line() {
  std::ifstream in(PMC_PROFILE_TARGET_SOURCE);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (contains(line, "/* hot line */")) return n;
  BOOST_FAIL("no hot line in " PMC_PROFILE_TARGET_SOURCE);
  return 0;
}

// "profile_target.c:N", as perf report's srcline names a line.
std::string fmt_line(int n) { return fs::path(PMC_PROFILE_TARGET_SOURCE).filename().string() + ":" + std::to_string(n); }

struct Cli : pmc_test::PmcCommand {
  fs::path report = tmp.path() / "report.json";
  json report_json() { return pmc_test::read_json_report(report); }
};

// The table's rows as printed: the lines after the header line (which starts with Overhead) up
// to the first empty line.
std::vector<std::string> table_rows(const std::string& text) {
  std::vector<std::string> rows;
  const auto header = text.find("Overhead");
  if (header == std::string::npos) return rows;
  std::size_t at = text.find('\n', header);
  while (at != std::string::npos && at + 1 < text.size()) {
    const std::size_t end = text.find('\n', at + 1);
    std::string line = text.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    if (line.empty()) break;
    rows.push_back(line);
    at = end;
  }
  return rows;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(the_hottest_function_comes_first, Cli) {
  auto r = pmc({"profile", "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto rows = table_rows(r.err);
  BOOST_TEST_REQUIRE(rows.size() >= 2u, r.err);
  BOOST_TEST(contains(rows[0], "[.] pmc_test_hot_loop"), r.err);
  BOOST_TEST(contains(rows[0], kTargetName), r.err);
  BOOST_TEST(contains(r.err, "Symbol"), r.err);
  BOOST_TEST(contains(r.err, "[.] pmc_test_cold_loop"), r.err);  // a sixteenth of the time: in the top 10
  BOOST_TEST(!contains(r.err, "PC profile"), r.err);             // the address buckets only with --pc
  BOOST_TEST_MESSAGE(r.err);
}

BOOST_FIXTURE_TEST_CASE(json_rows_and_sort_keys, Cli) {
  auto r = pmc({"profile", "--json", "-o", report.string(), "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json doc = report_json();
  BOOST_TEST(doc.at("sort") == json({"dso", "sym"}));
  const json& rows = doc.at("rows");
  BOOST_TEST_REQUIRE(rows.size() >= 2u, doc.dump());
  BOOST_TEST(rows[0].at("sym") == "pmc_test_hot_loop", rows.dump());
  BOOST_TEST(rows[0].at("dso") == kTargetName, rows.dump());
  BOOST_TEST(rows[0].at("kernel") == false);
  BOOST_TEST(rows[0].at("overhead").get<double>() > 50.0, rows.dump());
  BOOST_TEST(!rows[0].contains("srcline"));
  double sum = 0;
  std::uint64_t samples = 0;
  for (const json& row : rows) {
    sum += row.at("overhead").get<double>();
    samples += row.at("samples").get<std::uint64_t>();
  }
  BOOST_TEST(sum == 100.0, boost::test_tools::tolerance(0.01));
  // Every user and kernel sample is in a row (the levels count them too).
  std::uint64_t user_kernel = 0;
  for (const json& b : doc.at("levels").at("bins"))
    if (b.at("label") == "user" || b.at("label") == "kernel") user_kernel += b.at("samples").get<std::uint64_t>();
  BOOST_TEST(samples == user_kernel);

  // srcline: the hot function's samples on its hot line.
  r = pmc({"profile", "--json", "-o", report.string(), "--sort", "srcline", "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  doc = report_json();
  BOOST_TEST(doc.at("sort") == json({"srcline"}));
  BOOST_TEST(doc.at("rows").at(0).at("srcline") == fmt_line(hot_line()), doc.at("rows").dump());
  BOOST_TEST(!doc.at("rows").at(0).contains("sym"));

  // dso alone: the program's own code has most samples.
  r = pmc({"profile", "--json", "-o", report.string(), "--sort", "dso", "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  doc = report_json();
  BOOST_TEST(doc.at("rows").at(0).at("dso") == kTargetName, doc.at("rows").dump());
  for (const json& row : doc.at("rows")) BOOST_TEST(row.size() == 4u, row.dump());  // overhead, samples, kernel, dso

  // All three, as a table: the columns in the order asked.
  r = pmc({"profile", "--sort", "sym,srcline,dso", "--", kTarget, "200"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto rows_text = table_rows(r.err);
  BOOST_TEST_REQUIRE(!rows_text.empty(), r.err);
  const std::string& first = rows_text[0];
  const auto sym = first.find("pmc_test_hot_loop"), line = first.find(fmt_line(hot_line())),
             object = first.rfind(kTargetName);
  BOOST_TEST((sym != std::string::npos && line != std::string::npos && sym < line && line < object), r.err);
  BOOST_TEST(contains(r.err, "Samples by sym,srcline,dso"), r.err);
}

BOOST_FIXTURE_TEST_CASE(bad_sort_keys_and_options, Cli) {
  const fs::path marker = tmp.path() / "ran";
  auto r = pmc({"profile", "--sort", "dso,comm", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(r.err == "pmc: unknown --sort key 'comm' (pmc profile sorts by dso, sym and srcline, comma-separated, as "
                      "perf report does)\n",
             r);
  BOOST_TEST(!fs::exists(marker));  // refused before the command runs
  r = pmc({"profile", "--sort", "", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "unknown --sort key ''"), r);
  BOOST_TEST(!fs::exists(marker));

  // (--call-graph dwarf itself: tests/cli/test_profile_dwarf.cpp.)
  r = pmc({"profile", "--call-graph", "lbr", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "unknown --call-graph mode 'lbr'"), r);

  // A simulated workload has no call stacks: -g and the pictures are refused, naming the option.
  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "-g"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "pmc: -g (call chains) needs a command sampled by Linux perf"), r);
  BOOST_TEST(contains(r.err, "a simulated workload has no call stacks"), r);
  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "--folded", "x.folded"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "pmc: --folded needs a command"), r);
  BOOST_TEST(!fs::exists(tmp.path() / "x.folded"));
}
