// What the tests of pmc profile's pictures share (cli/test_profile_pictures.cpp,
// cli/test_profile_emulate.cpp): reading --folded's collapsed stacks, the frames of
// --flamegraph's SVG, and opening the SVG in a headless Chromium (a precondition skips the test
// with the reason where Chromium is missing: scripts/install-chromium.sh installs it).
#pragma once

#include "child_process.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pmc_test {

// Collapsed stacks ("frame;frame count" lines): stack -> count, checking each line's form.
inline std::map<std::string, std::uint64_t> read_folded(const fs::path& file) {
  std::map<std::string, std::uint64_t> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto space = line.rfind(' ');
    BOOST_TEST_REQUIRE(space != std::string::npos, line);
    BOOST_TEST_REQUIRE(space > 0u, line);
    const std::string count = line.substr(space + 1);
    BOOST_TEST_REQUIRE((!count.empty() && count.find_first_not_of("0123456789") == std::string::npos), line);
    out[line.substr(0, space)] += std::stoull(count);
  }
  return out;
}

// The flame graph's frames: each <g class="f"> with its name, depth, width (a fraction) and title.
struct SvgFrame {
  std::string name, title;
  int depth = 0;
  double width = 0;
};

inline void collect_frames(const boost::property_tree::ptree& node, std::vector<SvgFrame>& out) {
  for (const auto& [tag, child] : node) {
    if (tag == "g" && child.get("<xmlattr>.class", "") == "f") {
      SvgFrame f;
      f.name = child.get("<xmlattr>.data-n", "");
      f.depth = child.get("<xmlattr>.data-d", -1);
      f.width = child.get("<xmlattr>.data-w", 0.0);
      f.title = child.get("title", "");
      out.push_back(f);
    }
    collect_frames(child, out);
  }
}

inline std::optional<fs::path> chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (access(p, X_OK) == 0) return fs::path(p);
  return std::nullopt;
}

namespace detail {
inline boost::test_tools::assertion_result has_chromium(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(chromium().has_value());
  r.message() << "needs Debian's chromium to open the SVG in a browser (scripts/install-chromium.sh installs it)";
  return r;
}
}  // namespace detail

inline boost::unit_test::precondition requires_chromium() {
  return boost::unit_test::precondition(&detail::has_chromium);
}

// Opens the SVG in a headless Chromium (its home and profile under scratch): the page's script
// must run (it marks the frames it laid out: data-frames, the number of <g class="f"> frames),
// `hottest` must be in the rendered document, and a screenshot must be a PNG.
inline void check_in_chromium(const fs::path& svg, const fs::path& scratch, Env env, const std::string& hottest) {
  const std::string text = slurp(svg);
  std::size_t groups = 0;
  for (std::size_t at = text.find("<g class=\"f\""); at != std::string::npos; at = text.find("<g class=\"f\"", at + 1))
    ++groups;
  BOOST_TEST_REQUIRE(groups > 2u);
  env["HOME"] = (scratch / "chromium-home").string();
  fs::create_directories(scratch / "chromium-home");
  const std::vector<std::string> common = {"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                                           "--user-data-dir=" + (scratch / "chromium-profile").string()};
  std::vector<std::string> args = common;
  args.push_back("--dump-dom");
  args.push_back("file://" + svg.string());
  const auto dom = run(*chromium(), args, env, scratch);
  BOOST_TEST_REQUIRE(dom.status == 0, dom);
  BOOST_TEST(dom.out.find("data-frames=\"" + std::to_string(groups) + "\"") != std::string::npos,
             dom.out.substr(0, 400));
  BOOST_TEST(dom.out.find(hottest) != std::string::npos, hottest);
  const fs::path png = scratch / (svg.stem().string() + ".png");
  args = common;
  args.push_back("--window-size=1200,400");
  args.push_back("--screenshot=" + png.string());
  args.push_back("file://" + svg.string());
  const auto shot = run(*chromium(), args, env, scratch);
  BOOST_TEST_REQUIRE(shot.status == 0, shot);
  const std::string image = slurp(png);
  BOOST_TEST(image.size() > 1000u);
  BOOST_TEST(image.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace pmc_test
