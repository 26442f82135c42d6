#define BOOST_TEST_MODULE stat_perf_parity
#include <boost/test/unit_test.hpp>

// `pmc stat` prints what `perf stat` prints: -j as perf's JSON lines (one object per count, its
// keys in perf's order, on stderr or -o), -I rows (the last, partial interval too; <not
// counted> for an interval the task slept through; perf's time column), --metric-only, and
// derived rows (IPC, every metric) only from inputs counted at the same levels. Each format is
// compared with perf's own output for the same command where perf is installed (else skipped,
// saying so), and checked against perf's documented shape without it.

#include "support/perf_stat.hpp"
#include "support/preconditions.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>

using nlohmann::ordered_json;
namespace fs = std::filesystem;
using pmc_test::Result;
using pmc_test::csv_rows;
using pmc_test::lines_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The JSON objects of perf's -j lines (lines that are not objects, such as blank ones, skipped).
std::vector<ordered_json> json_lines(const std::string& text) {
  std::vector<ordered_json> out;
  for (const auto& l : lines_of(text))
    if (!l.empty() && l.front() == '{') out.push_back(ordered_json::parse(l));
  return out;
}

std::vector<std::string> keys(const ordered_json& o) {
  std::vector<std::string> k;
  for (auto it = o.begin(); it != o.end(); ++it) k.push_back(it.key());
  return k;
}

const std::vector<std::string> kPerfKeys{"counter-value", "unit",         "event",      "event-runtime",
                                          "pcnt-running",  "metric-value", "metric-unit"};

boost::test_tools::assertion_result cpu_wide(boost::unit_test::test_unit_id) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  boost::test_tools::assertion_result r(geteuid() == 0 || paranoid <= 0);
  r.message() << "counting whole CPUs needs root (or perf_event_paranoid <= 0; it is " << paranoid << ")";
  return r;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(stat_perf_parity, pmc_test::PmcCommand)

// -j: perf's keys in perf's order, one object per event, on stderr; --json stays one document
// on stdout.
BOOST_AUTO_TEST_CASE(json_lines_have_perfs_keys_on_stderr) {
  const Result r = pmc({"stat", "-j", "-e", "task-clock,page-faults", "--", "true"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  BOOST_TEST(r.out.empty(), r.out);
  const auto objects = json_lines(r.err);
  BOOST_REQUIRE_EQUAL(objects.size(), 2u);
  BOOST_TEST(keys(objects[0]) == kPerfKeys, boost::test_tools::per_element());
  BOOST_TEST(objects[0]["event"] == "task-clock");
  BOOST_TEST(objects[0]["unit"] == "msec");
  BOOST_TEST(objects[0]["metric-unit"] == "CPUs utilized");
  BOOST_TEST(objects[1]["event"] == "page-faults");
  BOOST_TEST(objects[1]["unit"] == "");
  // counter-value is a string ("49.000000"), the run time an integer of ns, as perf writes them.
  BOOST_TEST(objects[1]["counter-value"].is_string());
  BOOST_TEST(std::stod(objects[1]["counter-value"].get<std::string>()) > 0);
  BOOST_TEST(objects[1]["event-runtime"].is_number_integer());
  // perf's spacing: "key" : value, separated by ", ".
  BOOST_TEST(contains(r.err, "{\"counter-value\" : \""), r.err);
  // -o FILE takes them instead.
  const fs::path file = tmp.path() / "lines.json";
  const Result o = pmc({"stat", "-j", "-o", file.string(), "-e", "task-clock", "--", "true"});
  BOOST_REQUIRE_MESSAGE(o.status == 0, o);
  BOOST_TEST(json_lines(o.err).empty(), o.err);
  BOOST_TEST(json_lines(pmc_test::slurp(file)).size() == 1u);
  // --json: one document on stdout, as before.
  const Result doc = pmc({"stat", "--json", "-e", "task-clock", "--", "true"});
  BOOST_REQUIRE_MESSAGE(doc.status == 0, doc);
  BOOST_TEST(nlohmann::json::parse(doc.out).contains("counters"));
  BOOST_TEST(pmc({"stat", "-j", "--json", "--", "true"}).status == 2);
}

BOOST_AUTO_TEST_CASE(json_lines_match_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"-j", "-e", "task-clock,page-faults,cycles", "--", "true"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours);
  const Result perf = pmc_test::perf_stat(*this, args);
  BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
  BOOST_REQUIRE_MESSAGE(perf.status == 0, perf);
  const auto a = json_lines(mine.err), b = json_lines(perf.err);
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(keys(a[i]) == keys(b[i]), boost::test_tools::per_element());
    BOOST_TEST(a[i]["event"] == b[i]["event"]);
    BOOST_TEST(a[i]["unit"] == b[i]["unit"]);
    BOOST_TEST(a[i]["metric-unit"] == b[i]["metric-unit"], a[i].dump() << " vs " << b[i].dump());
    // <not supported> where perf says so (cycles: this machine has no PMU), a number where it counts.
    BOOST_TEST((a[i]["counter-value"] == "<not supported>") == (b[i]["counter-value"] == "<not supported>"));
  }
}

BOOST_AUTO_TEST_CASE(json_lines_of_intervals_and_cpus, *pmc_test::requires_perf() * boost::unit_test::precondition(cpu_wide)) {
  // -I: "interval" first; -A: "cpu" first, as perf.
  const Result mine = pmc({"stat", "-j", "-I", "200", "-e", "task-clock", "--", "sleep", "0.3"});
  const Result perf = pmc_test::perf_stat(*this, {"-j", "-I", "200", "-e", "task-clock", "--", "sleep", "0.3"});
  BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
  const auto a = json_lines(mine.err), b = json_lines(perf.err);
  BOOST_REQUIRE(!a.empty());
  BOOST_REQUIRE(!b.empty());
  BOOST_TEST(keys(a.front()) == keys(b.front()), boost::test_tools::per_element());
  BOOST_TEST(keys(a.front()).front() == "interval");
  const Result cpus = pmc({"stat", "-j", "-a", "-A", "-e", "task-clock", "--", "sleep", "0.1"});
  const Result perf_cpus = pmc_test::perf_stat(*this, {"-j", "-a", "-A", "-e", "task-clock", "--", "sleep", "0.1"});
  BOOST_REQUIRE_MESSAGE(cpus.status == 0, cpus);
  const auto c = json_lines(cpus.err), d = json_lines(perf_cpus.err);
  BOOST_REQUIRE_EQUAL(c.size(), d.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    BOOST_TEST(keys(c[i]) == keys(d[i]), boost::test_tools::per_element());
    BOOST_TEST(c[i]["cpu"] == d[i]["cpu"]);
  }
}

// -I: the command's end cuts the last interval short, and it is printed (perf does; pmc printed
// one row fewer). sleep 0.5 with -I 200: 0.2, 0.4 and the last at about 0.5; the middle one
// <not counted> (the task slept through it).
BOOST_AUTO_TEST_CASE(interval_rows_include_the_last_partial_one) {
  const Result r = pmc({"stat", "-I", "200", "-x,", "-e", "task-clock", "--", "sleep", "0.5"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const auto rows = csv_rows(r.err);
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  const std::regex time(R"( *\d+\.\d{9})");
  for (const auto& row : rows) {
    BOOST_TEST(row.size() == 8u);  // time, value, unit, event, run time, percent, metric, unit
    BOOST_TEST(std::regex_match(row[0], time), row[0]);
    BOOST_TEST(row[0].size() >= 16u);  // perf's %6lu.%09lu
    BOOST_TEST(row[3] == "task-clock");
  }
  BOOST_TEST(std::stod(rows[2][0]) > std::stod(rows[1][0]));
  BOOST_TEST(rows[1][1] == "<not counted>");
  BOOST_TEST(rows[1][4] == "0");
  BOOST_TEST(rows[1][5] == "100.00");
  // The plain table: the same rows under perf's header.
  const Result t = pmc({"stat", "-I", "200", "-e", "task-clock", "--", "sleep", "0.5"});
  BOOST_REQUIRE_MESSAGE(t.status == 0, t);
  const auto lines = lines_of(t.err);
  BOOST_REQUIRE(!lines.empty());
  BOOST_TEST(pmc_test::words(lines.front()) == (std::vector<std::string>{"#", "time", "counts", "unit", "events"}),
             boost::test_tools::per_element());
  std::size_t rows_seen = 0;
  for (const auto& l : lines)
    if (contains(l, "task-clock")) ++rows_seen;
  BOOST_TEST(rows_seen == 3u);
}

BOOST_AUTO_TEST_CASE(interval_rows_match_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"-I", "200", "-x,", "-e", "task-clock,page-faults", "--", "sleep", "0.5"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours);
  const Result perf = pmc_test::perf_stat(*this, args);
  BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
  const auto a = csv_rows(mine.err), b = csv_rows(perf.err);
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i].size() == b[i].size());
    BOOST_TEST(a[i][0].size() == b[i][0].size(), "time column '" << a[i][0] << "' vs perf's '" << b[i][0] << "'");
    BOOST_TEST(a[i][3] == b[i][3]);  // the event
    BOOST_TEST(a[i][2] == b[i][2]);  // the unit
    BOOST_TEST((a[i][1] == "<not counted>") == (b[i][1] == "<not counted>"), a[i][1] << " vs perf's " << b[i][1]);
  }
  // The plain table's rows: the same words but the numbers.
  const Result text = pmc({"stat", "-I", "200", "-e", "task-clock", "--", "sleep", "0.5"});
  const Result perf_text = pmc_test::perf_stat(*this, {"-I", "200", "-e", "task-clock", "--", "sleep", "0.5"});
  const auto x = lines_of(text.err), y = lines_of(perf_text.err);
  BOOST_REQUIRE(!x.empty());
  BOOST_REQUIRE(!y.empty());
  BOOST_TEST(pmc_test::words(x.front()) == pmc_test::words(y.front()), boost::test_tools::per_element());
}

// --metric-only: perf prints a line of the metrics' units and one of their values, leaving out
// rates and CPU utilization; for software events alone both lines are empty.
BOOST_AUTO_TEST_CASE(metric_only_as_perf) {
  const Result r = pmc({"stat", "--metric-only", "-x,", "-e", "task-clock,page-faults", "--", "true"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  BOOST_TEST(!contains(r.err, "task-clock"), r.err);
  BOOST_TEST(r.err == "\n\n", r.err);
  const Result j = pmc({"stat", "--metric-only", "-j", "-e", "task-clock", "--", "true"});
  BOOST_TEST(j.err == "{}\n", j.err);
  // A metric perf keeps: its unit over its value, on the simulated PMU.
  const Result w = pmc({"stat", "--metric-only", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                        "INST_RETIRED,CPU_CLK_UNHALTED"});
  BOOST_REQUIRE_MESSAGE(w.status == 0, w);
  BOOST_TEST(!contains(w.out, "INST_RETIRED   "), w.out);
  const auto lines = lines_of(w.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return contains(l, "insn per cycle"); });
  BOOST_REQUIRE(header != lines.end());
  BOOST_REQUIRE(header + 1 != lines.end());
  BOOST_TEST(*header == "      insn per cycle ");  // right-aligned in perf's 20 columns
  // Its value, to two decimals, in the same columns under it.
  BOOST_TEST(std::regex_match(header[1], std::regex(R"( {16}\d\.\d\d )")), header[1]);
}

BOOST_AUTO_TEST_CASE(metric_only_matches_perfs, *pmc_test::requires_perf()) {
  for (const std::vector<std::string>& style : {std::vector<std::string>{"-x,"}, std::vector<std::string>{"-j"}}) {
    std::vector<std::string> args = style;
    for (const char* a : {"--metric-only", "-e", "task-clock,page-faults", "--", "true"}) args.emplace_back(a);
    std::vector<std::string> ours{"stat"};
    ours.insert(ours.end(), args.begin(), args.end());
    const Result mine = pmc(ours);
    const Result perf = pmc_test::perf_stat(*this, args);
    BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
    // perf adds a blank line after the -j object.
    std::string theirs = perf.err;
    while (theirs.size() > 1 && theirs.substr(theirs.size() - 2) == "\n\n" && style.front() == "-j") theirs.pop_back();
    BOOST_TEST(mine.err == theirs, "pmc:\n" << mine.err << "perf:\n" << perf.err);
  }
}

// Derived rows only from compatible inputs: instructions counted at user level over cycles at
// kernel level is no IPC (it printed 21.571 insn per cycle: 7,550,000 user instructions over
// 350,000 kernel cycles). The simulated P6's counts are exact.
BOOST_AUTO_TEST_CASE(no_ipc_from_user_instructions_over_kernel_cycles) {
  const Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                        "INST_RETIRED:u,CPU_CLK_UNHALTED:k"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "7,550,000"), r.out);
  BOOST_TEST(contains(r.out, "350,000"), r.out);
  BOOST_TEST(!contains(r.out, "insn per cycle"), r.out);
  // --json says why.
  const Result j = pmc({"stat", "--json", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                        "INST_RETIRED:u,CPU_CLK_UNHALTED:k"});
  BOOST_REQUIRE_MESSAGE(j.status == 0, j);
  const auto doc = nlohmann::json::parse(j.out);
  bool said = false;
  for (const auto& m : doc.at("metrics"))
    if (m.at("name") == "IPC") {
      said = true;
      BOOST_TEST(m.at("value").is_null());
      BOOST_TEST(contains(m.at("reason").get<std::string>(), "no compatible inputs"), m.dump());
      BOOST_TEST(contains(m.at("reason").get<std::string>(), "INST_RETIRED:u (user level)"), m.dump());
    }
  BOOST_TEST(said, j.out);
}

BOOST_AUTO_TEST_CASE(ipc_pairs_the_inputs_of_the_same_levels) {
  // cycles:k and cycles:u both counted: IPC takes the user cycles, beside the user instructions.
  // (Three events on the P6's two counters are multiplexed: the counts are scaled, and IPC is
  // the ratio of the scaled counts the report shows.)
  const Result r = pmc({"stat", "--json", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                        "INST_RETIRED:u,CPU_CLK_UNHALTED:k,CPU_CLK_UNHALTED:u"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const auto doc = nlohmann::json::parse(r.out);
  double user_insns = 0, user_cycles = 0, kernel_cycles = 0, ipc = -1;
  for (const auto& c : doc.at("counters")) {
    if (c.at("event") == "INST_RETIRED:u") user_insns = c.at("value").get<double>();
    if (c.at("event") == "CPU_CLK_UNHALTED:u") user_cycles = c.at("value").get<double>();
    if (c.at("event") == "CPU_CLK_UNHALTED:k") kernel_cycles = c.at("value").get<double>();
  }
  for (const auto& m : doc.at("metrics"))
    if (m.at("name") == "IPC" && !m.at("value").is_null()) ipc = m.at("value").get<double>();
  BOOST_REQUIRE(user_cycles > 0);
  BOOST_REQUIRE(kernel_cycles > 0);
  BOOST_TEST(ipc == user_insns / user_cycles, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(ipc != user_insns / kernel_cycles);
  // And in the table, beside the instructions.
  const Result t = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                        "INST_RETIRED:u,CPU_CLK_UNHALTED:k,CPU_CLK_UNHALTED:u"});
  char note[64];
  std::snprintf(note, sizeof note, "%.3f insn per cycle", user_insns / user_cycles);
  BOOST_TEST(contains(t.out, note), t.out);
}

BOOST_AUTO_TEST_SUITE_END()
