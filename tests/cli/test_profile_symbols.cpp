#define BOOST_TEST_MODULE profile_symbols
#include <boost/test/unit_test.hpp>

// Names for every sample of `pmc profile -- COMMAND` (tools/pmc/profile_symbols.cpp): samples in
// the vDSO are named after its functions (cli/vdso_target.c reads the monotonic clock in a
// loop, which the C library answers through the vDSO's __vdso_clock_gettime, as perf report
// names it), and ELF symbol versions are left out of names (libc's "__libc_start_main@@GLIBC_2.34"
// is "__libc_start_main"). Linux perf samples cpu-clock (no PMU needed).

#include "support/json_report.hpp"
#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <sys/auxv.h>

#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Cli : pmc_test::PmcCommand {
  fs::path report = tmp.path() / "report.json";
  json report_json() { return pmc_test::read_json_report(report); }
};

boost::test_tools::assertion_result has_vdso(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(getauxval(AT_SYSINFO_EHDR) != 0);
  r.message() << "this kernel maps no vDSO into processes";
  return r;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(vdso_samples_are_named, Cli, *boost::unit_test::precondition(&has_vdso)) {
  auto r = pmc({"profile", "--json", "-o", report.string(), "--", PMC_VDSO_TARGET, "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json doc = report_json();
  std::uint64_t total = 0, in_vdso = 0;
  const json* top = nullptr;  // the [vdso] row with the most samples (rows come most first)
  for (const json& row : doc.at("rows")) {
    const auto n = row.at("samples").get<std::uint64_t>();
    total += n;
    if (row.at("dso") != "[vdso]") continue;
    in_vdso += n;
    if (!top) top = &row;
  }
  BOOST_TEST_REQUIRE(top != nullptr, doc.at("rows").dump());
  BOOST_TEST(2 * in_vdso > total, in_vdso << " of " << total << " samples in [vdso]: " << doc.at("rows").dump());
  const std::string sym = top->at("sym").get<std::string>();
  BOOST_TEST((sym == "__vdso_clock_gettime" || sym == "clock_gettime"), doc.at("rows").dump());

  // The table shows the same: the first row is the vDSO's, named.
  r = pmc({"profile", "--", PMC_VDSO_TARGET, "200"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto header = r.err.find("Overhead");
  BOOST_TEST_REQUIRE(header != std::string::npos, r.err);
  const auto begin = r.err.find('\n', header) + 1;
  const std::string first = r.err.substr(begin, r.err.find('\n', begin) - begin);
  BOOST_TEST(first.find("[vdso]") != std::string::npos, r.err);
  BOOST_TEST(first.find("clock_gettime") != std::string::npos, r.err);
}

// Unwound through libc (--call-graph dwarf on the program without frame pointers), every stack
// passes through __libc_start_main, whose symbol in Debian 12's libc (glibc 2.36) is the
// versioned "__libc_start_main@@GLIBC_2.34": shown bare, as no name anywhere keeps a version.
BOOST_FIXTURE_TEST_CASE(versioned_names_are_shown_bare, Cli) {
  auto r = pmc({"profile", "--call-graph", "dwarf", "--json", "-o", report.string(), "--", PMC_PROFILE_TARGET_NOFP,
                "200"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json doc = report_json();
  bool start_main = false;
  for (const json& stack : doc.at("stacks"))
    for (const json& frame : stack.at("frames")) {
      const std::string sym = frame.at("sym").get<std::string>();
      BOOST_TEST(sym.find('@') == std::string::npos, sym);
      start_main = start_main || (sym == "__libc_start_main" && frame.at("dso") == "libc.so.6");
    }
  BOOST_TEST(start_main, doc.at("stacks").dump().substr(0, 2000));
}
