#define BOOST_TEST_MODULE profile_emulate
#include <boost/test/unit_test.hpp>

// `pmc profile --emulate` with the sampled profile's table and pictures (docs/emulation.md,
// "Profiles"): --sort's keys, --json's rows, --folded and --flamegraph, the rows weighted by the
// first event's emulated count. The command is cli/profile_target.c (main -> pmc_test_work ->
// pmc_test_hot_loop, 2^22 iterations a round, and pmc_test_cold_loop, 2^18), run as
// `profile_target 1`: one round, or a few (it stops once it has used 1 ms of CPU time, which
// under Valgrind the first round already exceeds), so its hot loop executes about sixteen times
// the instructions of its cold one, whatever the machine's speed. Skipped where Valgrind is
// missing.

#include "support/emulate.hpp"
#include "support/flame_graph.hpp"
#include "support/json_report.hpp"
#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace pt = boost::property_tree;
using nlohmann::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kTarget = PMC_PROFILE_TARGET;
const std::string kTargetName = fs::path(kTarget).filename().string();

// pmc profile --emulate on a Skylake's instructions (the rows' weight) and branches.
std::vector<std::string> emulate(std::vector<std::string> options) {
  std::vector<std::string> args{"profile", "--emulate", "--cpuid-dump", "skylake", "-e", "instructions,branches"};
  args.insert(args.end(), options.begin(), options.end());
  for (const std::string& a : {std::string("--"), kTarget, std::string("1")}) args.push_back(a);
  return args;
}

struct Cli : pmc_test::PmcCommand {
  fs::path report = tmp.path() / "report.json";
  json report_json() { return pmc_test::read_json_report(report); }
};

// The line of profile_target.c marked "hot line".
int hot_line() {
  std::ifstream in(PMC_PROFILE_TARGET_SOURCE);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (contains(line, "/* hot line */")) return n;
  BOOST_FAIL("no hot line in " PMC_PROFILE_TARGET_SOURCE);
  return 0;
}

// The table's rows as printed: the lines after the header (which starts with Overhead) up to
// the first empty line.
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

std::uint64_t first_counter(const json& doc) { return doc.at("counters").at(0).at("value").get<std::uint64_t>(); }

boost::test_tools::assertion_result has_valgrind(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(pmc_test::on_path("valgrind"));
  r.message() << "valgrind is not installed (Debian package valgrind)";
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(with_valgrind, *boost::unit_test::precondition(&has_valgrind))

BOOST_FIXTURE_TEST_CASE(sort_names_the_hottest_function_first, Cli) {
  auto r = pmc(emulate({"--sort", "sym"}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST_MESSAGE(r.err);
  const auto rows = table_rows(r.err);
  BOOST_TEST_REQUIRE(rows.size() >= 2u, r.err);
  BOOST_TEST(contains(rows[0], "[.] pmc_test_hot_loop"), r.err);
  BOOST_TEST(contains(rows[1], "[.] pmc_test_cold_loop"), r.err);  // a sixteenth of the instructions
  BOOST_TEST(contains(r.err, "instructions by sym ("), r.err);     // the first event weighs the rows
  BOOST_TEST(contains(r.err, "Emulated counts"), r.err);           // what the counts are, as ever
  BOOST_TEST(!contains(r.err, "Functions by"), r.err);              // the table takes their place

  // All three keys, in the order asked: the hot function, its object, its hot line.
  r = pmc(emulate({"--sort", "dso,sym,srcline"}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto all = table_rows(r.err);
  BOOST_TEST_REQUIRE(!all.empty(), r.err);
  const std::string line = "profile_target.c:" + std::to_string(hot_line());
  const auto object = all[0].find(kTargetName), sym = all[0].find("pmc_test_hot_loop"), src = all[0].find(line);
  BOOST_TEST((object != std::string::npos && sym != std::string::npos && src != std::string::npos && object < sym &&
              sym < src),
             r.err);
  BOOST_TEST(contains(r.err, "instructions by dso,sym,srcline"), r.err);
}

BOOST_FIXTURE_TEST_CASE(json_rows_add_up_to_the_count, Cli) {
  auto r = pmc(emulate({"--json", "-o", report.string()}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json doc = report_json();
  BOOST_TEST(doc.at("sort") == json({"dso", "sym"}));
  BOOST_TEST(doc.at("row_event") == "instructions");
  const json& rows = doc.at("rows");
  BOOST_TEST_REQUIRE(rows.size() >= 3u, rows.dump());
  BOOST_TEST(rows[0].at("sym") == "pmc_test_hot_loop", rows.dump());
  BOOST_TEST(rows[0].at("dso") == kTargetName, rows.dump());
  std::uint64_t sum = 0;
  double overhead = 0;
  bool in_libc = false, in_loader = false;
  for (const json& row : rows) {
    sum += row.at("count").get<std::uint64_t>();
    overhead += row.at("overhead").get<double>();
    in_libc = in_libc || row.at("dso") == "libc.so.6";
    in_loader = in_loader || row.at("dso") == "ld-linux-x86-64.so.2";
  }
  BOOST_TEST(sum == first_counter(doc));  // every instruction in a row
  BOOST_TEST(overhead == 100.0, boost::test_tools::tolerance(0.01));
  BOOST_TEST(in_libc, rows.dump());    // the C library's functions found in it
  BOOST_TEST(in_loader, rows.dump());  // and the dynamic loader's in it

  // Names without their ELF symbol version: cachegrind names libc's function by its versioned
  // symbol ("__libc_start_main@@GLIBC_2.34" in glibc 2.34 on); the rows by the bare name.
  for (const json& f : doc.at("functions")) {
    const std::string name = f.at("function").get<std::string>();
    const auto at = name.find('@');
    if (at == std::string::npos || at == 0) continue;
    const std::string bare = name.substr(0, at);
    const bool found = std::any_of(rows.begin(), rows.end(), [&](const json& row) { return row.at("sym") == bare; });
    BOOST_TEST(found, name << " is not shown as " << bare);
  }
  for (const json& row : rows) BOOST_TEST(!contains(row.at("sym").get<std::string>(), "@@"), row.dump());
}

BOOST_FIXTURE_TEST_CASE(folded_stacks_add_up_to_the_count, Cli) {
  const fs::path folded = tmp.path() / "emulated.folded";
  auto r = pmc(emulate({"--folded", folded.string(), "--json", "-o", report.string()}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto stacks = pmc_test::read_folded(folded);
  BOOST_TEST_REQUIRE(!stacks.empty());
  std::uint64_t total = 0;
  std::pair<std::string, std::uint64_t> heaviest;
  for (const auto& [stack, n] : stacks) {
    total += n;
    BOOST_TEST(n > 0u, stack);
    BOOST_TEST(std::count(stack.begin(), stack.end(), ';') == 1, stack);  // object;function
    if (n > heaviest.second) heaviest = {stack, n};
  }
  BOOST_TEST(heaviest.first == kTargetName + ";pmc_test_hot_loop");
  BOOST_TEST(total == first_counter(report_json()));
}

BOOST_FIXTURE_TEST_CASE(flame_graph_svg, Cli) {
  const fs::path svg = tmp.path() / "emulated.svg";
  auto r = pmc(emulate({"--flamegraph", svg.string()}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  pt::ptree doc;
  try {
    pt::read_xml(svg.string(), doc);
  } catch (const pt::xml_parser_error& e) {
    BOOST_FAIL("the SVG is not XML: " << e.what());
  }
  std::vector<pmc_test::SvgFrame> frames;
  pmc_test::collect_frames(doc, frames);
  auto frame = [&](const std::string& name) -> const pmc_test::SvgFrame* {
    for (const auto& f : frames)
      if (f.name == name) return &f;
    return nullptr;
  };
  const auto *all = frame("all"), *object = frame(kTargetName), *hot = frame("pmc_test_hot_loop");
  BOOST_TEST_REQUIRE((all && object && hot), pmc_test::slurp(svg).substr(0, 4000));
  BOOST_TEST(all->depth == 0);
  BOOST_TEST(object->depth == 1);
  BOOST_TEST(hot->depth == 2);
  BOOST_TEST(hot->width > 0.5);
  BOOST_TEST(contains(hot->title, "pmc_test_hot_loop ("), hot->title);
}

BOOST_FIXTURE_TEST_CASE(flame_graph_in_a_browser, Cli, *pmc_test::requires_chromium()) {
  const fs::path svg = tmp.path() / "emulated.svg";
  auto r = pmc(emulate({"--flamegraph", svg.string()}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  pmc_test::check_in_chromium(svg, tmp.path(), env, "pmc_test_hot_loop");
}

BOOST_AUTO_TEST_SUITE_END()

// Refused before the command runs (no Valgrind needed): -g, a bad key, a bad place for a picture.
BOOST_FIXTURE_TEST_CASE(refusals, Cli) {
  const fs::path marker = tmp.path() / "ran";
  auto r = pmc({"profile", "--emulate", "--cpuid-dump", "skylake", "-g", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(r.err ==
                 "pmc: -g does not go with --emulate: cachegrind records no call stacks, so an emulated profile's "
                 "stacks are the object and the function alone (docs/emulation.md)\n",
             r);
  r = pmc({"profile", "--emulate", "--cpuid-dump", "skylake", "--call-graph", "dwarf", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "pmc: --call-graph does not go with --emulate"), r);
  r = pmc({"profile", "--emulate", "--cpuid-dump", "skylake", "--sort", "sym,comm", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "unknown --sort key 'comm'"), r);
  const fs::path nowhere = tmp.path() / "no-such-dir" / "out.svg";
  r = pmc({"profile", "--emulate", "--cpuid-dump", "skylake", "--flamegraph", nowhere.string(), "--", "touch",
           marker.string()});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(r.err == "pmc: --flamegraph " + nowhere.string() + ": cannot write there: No such file or directory\n", r);
  BOOST_TEST(!fs::exists(marker));
}
