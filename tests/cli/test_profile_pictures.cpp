#define BOOST_TEST_MODULE profile_pictures
#include <boost/test/unit_test.hpp>

// `pmc profile -g` (call chains through frame pointers) and the pictures of a profile: the call
// tree in the terminal, --folded's collapsed stacks and --flamegraph's SVG, of
// cli/profile_target.c (main -> pmc_test_work -> pmc_test_hot_loop most of the time, built with
// frame pointers). The SVG is parsed as XML here and opened in a headless Chromium, where its
// script must run and the hottest frame must be in the page (skipped with the reason where
// Chromium is missing: scripts/install-chromium.sh installs it). Bad places for the files are
// refused before the command runs, and a failed run leaves what was there.

#include "support/flame_graph.hpp"
#include "support/pmc_command.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace pt = boost::property_tree;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kTarget = PMC_PROFILE_TARGET;

struct Cli : pmc_test::PmcCommand {};
using pmc_test::read_folded;
using pmc_test::SvgFrame;

std::pair<std::string, std::uint64_t> heaviest(const std::map<std::string, std::uint64_t>& stacks) {
  std::pair<std::string, std::uint64_t> best;
  for (const auto& s : stacks)
    if (s.second > best.second) best = s;
  return best;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(call_tree_in_the_terminal, Cli) {
  auto r = pmc({"profile", "-g", "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST_MESSAGE(r.err);
  const auto graph = r.err.find("Call graph, callers above callees");
  BOOST_TEST_REQUIRE(graph != std::string::npos, r.err);
  // main, then below it and further in pmc_test_work, then pmc_test_hot_loop.
  std::istringstream lines(r.err.substr(graph));
  std::vector<std::pair<std::string, std::size_t>> found;  // name, column
  for (std::string line; std::getline(lines, line);)
    for (const char* name : {"main", "pmc_test_work", "pmc_test_hot_loop"}) {
      const auto at = line.rfind(name);  // the whole label: after a space, at the end of the line
      if (at != std::string::npos && at > 0 && line[at - 1] == ' ' && ends_with(line, name))
        found.push_back({name, at});
    }
  BOOST_TEST_REQUIRE(found.size() >= 3u, r.err);
  auto where = [&](const std::string& name) {
    return std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == name; });
  };
  const auto main_at = where("main"), work = where("pmc_test_work"), hot = where("pmc_test_hot_loop");
  BOOST_TEST_REQUIRE((main_at != found.end() && work != found.end() && hot != found.end()), r.err);
  BOOST_TEST((main_at < work && work < hot), r.err);
  BOOST_TEST((main_at->second < work->second && work->second < hot->second), r.err);
}

BOOST_FIXTURE_TEST_CASE(folded_stacks_from_main_down, Cli) {
  const fs::path folded = tmp.path() / "out.folded";
  auto r = pmc({"profile", "-g", "--folded", folded.string(), "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto stacks = read_folded(folded);
  BOOST_TEST_REQUIRE(!stacks.empty());
  const auto [stack, samples] = heaviest(stacks);
  BOOST_TEST(ends_with(stack, "main;pmc_test_work;pmc_test_hot_loop"), stack);
  std::uint64_t total = 0, hot = 0;
  for (const auto& [s, n] : stacks) {
    total += n;
    if (ends_with(s, ";pmc_test_hot_loop")) hot += n;
    BOOST_TEST(n > 0u);
  }
  BOOST_TEST(2 * hot > total, hot << " of " << total);

  // Without -g a stack is the sampled function alone.
  r = pmc({"profile", "--folded", folded.string(), "--", kTarget, "200"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto leaves = read_folded(folded);
  BOOST_TEST(heaviest(leaves).first == "pmc_test_hot_loop");
  for (const auto& [s, n] : leaves) BOOST_TEST(!contains(s, ";"), s);
}

BOOST_FIXTURE_TEST_CASE(flame_graph_svg, Cli) {
  const fs::path svg = tmp.path() / "flame.svg";
  auto r = pmc({"profile", "-g", "--flamegraph", svg.string(), "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  pt::ptree doc;
  try {
    pt::read_xml(svg.string(), doc);
  } catch (const pt::xml_parser_error& e) {
    BOOST_FAIL("the SVG is not XML: " << e.what());
  }
  BOOST_TEST(doc.get("svg.<xmlattr>.xmlns", "") == "http://www.w3.org/2000/svg");
  std::vector<SvgFrame> frames;
  pmc_test::collect_frames(doc, frames);
  auto frame = [&](const std::string& name) -> const SvgFrame* {
    const SvgFrame* best = nullptr;
    for (const auto& f : frames)
      if (f.name == name && (!best || f.width > best->width)) best = &f;
    return best;
  };
  const SvgFrame *all = frame("all"), *main_frame = frame("main"), *work = frame("pmc_test_work"),
                 *hot = frame("pmc_test_hot_loop");
  BOOST_TEST_REQUIRE((all && main_frame && work && hot), pmc_test::slurp(svg).substr(0, 4000));
  BOOST_TEST(all->depth == 0);
  BOOST_TEST(all->width == 1.0, boost::test_tools::tolerance(1e-6));
  BOOST_TEST((main_frame->depth < work->depth && work->depth + 1 == hot->depth));
  BOOST_TEST(hot->width > 0.5);
  // The hover text: the function, its samples and share.
  BOOST_TEST(contains(hot->title, "pmc_test_hot_loop ("), hot->title);
  BOOST_TEST(contains(hot->title, " samples, "), hot->title);
  BOOST_TEST(ends_with(hot->title, "%)"), hot->title);
  // No frame wider than its parent column allows: every width within (0, 1].
  for (const auto& f : frames) BOOST_TEST((f.width > 0 && f.width <= 1.0 + 1e-9), f.name);
}

BOOST_FIXTURE_TEST_CASE(flame_graph_in_a_browser, Cli, *pmc_test::requires_chromium()) {
  const fs::path svg = tmp.path() / "flame.svg";
  auto r = pmc({"profile", "-g", "--flamegraph", svg.string(), "--", kTarget, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  pmc_test::check_in_chromium(svg, tmp.path(), env, "pmc_test_hot_loop");
}

BOOST_FIXTURE_TEST_CASE(bad_places_for_the_pictures, Cli) {
  const fs::path marker = tmp.path() / "ran";
  const fs::path nowhere = tmp.path() / "no-such-dir" / "out.folded";
  auto r = pmc({"profile", "--folded", nowhere.string(), "--", "touch", marker.string()});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(r.err == "pmc: --folded " + nowhere.string() + ": cannot write there: No such file or directory\n", r);
  BOOST_TEST(!fs::exists(marker));  // refused before the command runs

  r = pmc({"profile", "--flamegraph", tmp.path().string(), "--", "touch", marker.string()});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(r.err == "pmc: --flamegraph " + tmp.path().string() + ": is a directory\n", r);
  BOOST_TEST(!fs::exists(marker));

  // A run that fails leaves the file that was there, and no temporary file beside it.
  const fs::path dir = tmp.path() / "pictures";
  fs::create_directories(dir);
  const fs::path folded = dir / "old.folded";
  std::ofstream(folded) << "old 1\n";
  r = pmc({"profile", "--folded", folded.string(), "-e", "no-such-event:period=1000", "--", "touch", marker.string()});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(pmc_test::slurp(folded) == "old 1\n");
  BOOST_TEST(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  // -g where the kernel gives no call chains: a simulated workload.
  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "-g", "--flamegraph",
           (dir / "x.svg").string()});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "-g (call chains) needs a command sampled by Linux perf"), r);
  BOOST_TEST(!fs::exists(dir / "x.svg"));
}
