// Issue 26: a region whose name is not UTF-8 once lost the whole report (the JSON writer threw,
// the exit handler swallowed it, and `pmc stat --regions` said the program marked no region),
// and an unwritable $PMC_REGION_OUTPUT failed silently. Here the names are kept and written with
// U+FFFD for the bad bytes (docs/regions.md), and a report that cannot be written says so on
// stderr at exit and in pmc_regions_write's status.
//
// The instrumented program is this test binary in a helper mode: `test_region_output --
// region-helper NAME [PATH]` marks region NAME through the C API, writes the report to PATH with
// pmc_regions_write when one is given (printing the status and message), and exits normally,
// so the exit handler writes $PMC_REGION_OUTPUT.
#define BOOST_TEST_MODULE region_output
#define BOOST_TEST_NO_MAIN  // main() below: the helper mode first, then Boost.Test
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"

#include <pmc/pmc.h>
#include <pmc/region.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The helper mode: marks region `name`, writes the report to `path` when one is given.
int region_helper(const char* name, const char* path) {
  if (pmc_region_begin(name) != PMC_OK || pmc_region_end(name) != PMC_OK) {
    std::fprintf(stderr, "region: %s\n", pmc_last_error());
    return 3;
  }
  if (path) {
    const pmc_status s = pmc_regions_write(path);
    std::printf("write status %d: %s\n", static_cast<int>(s), s == PMC_OK ? "" : pmc_last_error());
  }
  std::fflush(stdout);
  return 0;  // returning from main: the exit handler writes $PMC_REGION_OUTPUT
}

const std::string kBadName = "loop\xff\xfe-x";  // not UTF-8

struct Fixture {
  pmc_test::TempDir tmp{"pmc-test-region-output"};
  pmc_test::Env env;
  Fixture() {
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = tmp.path().string();
    env["XDG_CONFIG_HOME"] = tmp.path().string();
    env["PMC_CACHE_DIR"] = (tmp.path() / "cache").string();
    env["LC_ALL"] = "C";
    env["PMC_REGION_EVENTS"] = "task-clock";
  }
  pmc_test::Result helper(const std::vector<std::string>& args) {
    std::vector<std::string> all{"--", "region-helper"};
    all.insert(all.end(), args.begin(), args.end());
    return pmc_test::run(fs::read_symlink("/proc/self/exe"), all, env, tmp.path());
  }
};

}  // namespace

// The JSON of a report with such a name: written, with U+FFFD where the bad bytes were, and read
// back.
BOOST_AUTO_TEST_CASE(a_name_that_is_not_utf8_is_written_with_replacement_characters) {
  pmc::RegionReport r;
  r.events = {"task-clock"};
  pmc::RegionStats s;
  s.name = kBadName;
  s.calls = 1;
  s.threads = 1;
  s.events.push_back({"task-clock", 5, 5, 5});
  r.regions.push_back(s);
  const std::string json = pmc::region_report_json(r);
  const pmc::RegionReport back = pmc::parse_region_report(json, "mem.json");
  BOOST_TEST_REQUIRE(back.regions.size() == 1u);
  BOOST_TEST(back.regions[0].name == "loop\xEF\xBF\xBD\xEF\xBF\xBD-x");
  BOOST_TEST(back.regions[0].events[0].sum == 5u);
}

// The exit handler writes it, and pmc stat --regions shows the region.
BOOST_FIXTURE_TEST_CASE(the_exit_report_keeps_a_region_that_is_not_utf8, Fixture) {
  const fs::path out = tmp.path() / "regions.json";
  env["PMC_REGION_OUTPUT"] = out.string();
  const pmc_test::Result r = helper({kBadName});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST_REQUIRE(fs::exists(out), r);
  const pmc::RegionReport report = pmc::load_region_report(out);
  BOOST_TEST_REQUIRE(report.regions.size() == 1u);
  BOOST_TEST(report.regions[0].name == "loop\xEF\xBF\xBD\xEF\xBF\xBD-x");

  env.erase("PMC_REGION_OUTPUT");
  const pmc_test::Result stat =
      pmc_test::run(fs::path(PMC_BIN_DIR) / "pmc",
                    {"stat", "--regions", "-e", "task-clock", "--", fs::read_symlink("/proc/self/exe").string(), "--",
                     "region-helper", kBadName},
                    env, tmp.path());
  BOOST_TEST(stat.status == 0, stat);
  BOOST_TEST(stat.err.find("Region 'loop") != std::string::npos, stat);
  BOOST_TEST(stat.err.find("wrote no region report") == std::string::npos, stat);
}

// An output in a directory that does not exist: one line on stderr at exit naming the file, and
// pmc_regions_write's status is PMC_ERR_IO with the same message.
BOOST_FIXTURE_TEST_CASE(a_report_that_cannot_be_written_says_so, Fixture) {
  const fs::path out = tmp.path() / "no-such-dir" / "regions.json";
  env["PMC_REGION_OUTPUT"] = out.string();
  const pmc_test::Result r = helper({"work", out.string()});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.out.find("write status " + std::to_string(PMC_ERR_IO) + ": " + out.string() +
                        ": cannot write the region report: No such file or directory") != std::string::npos,
             r);
  BOOST_TEST(r.err.find("pmchal: " + out.string() + ": cannot write the region report: No such file or directory") !=
                 std::string::npos,
             r);
}

int main(int argc, char* argv[]) {
  if (argc >= 4 && std::string(argv[1]) == "--" && std::string(argv[2]) == "region-helper")
    return region_helper(argv[3], argc >= 5 ? argv[4] : nullptr);
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
