// The vendors' lists the importer reads (../shared/perfmon, Intel's; ../shared/perf-amd, Linux
// perf's AMD files; or $PMC_PERFMON_DIR / $PMC_PERF_AMD_DIR): a precondition that skips a test,
// naming the directories, on a machine without them (a fresh clone has neither).
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>

namespace pmc_test {

inline std::filesystem::path shared_dir(const char* env, const char* name) {
  if (const char* v = std::getenv(env); v && *v) return v;
  return std::filesystem::path(PMC_SOURCE_DIR) / ".." / "shared" / name;
}

inline boost::test_tools::assertion_result vendor_trees(boost::unit_test::test_unit_id) {
  const std::filesystem::path perfmon = shared_dir("PMC_PERFMON_DIR", "perfmon");
  const std::filesystem::path amd = shared_dir("PMC_PERF_AMD_DIR", "perf-amd");
  std::error_code ec;
  boost::test_tools::assertion_result r(std::filesystem::exists(perfmon / "mapfile.csv", ec) &&
                                        std::filesystem::exists(amd / "mapfile.csv", ec));
  r.message() << "Intel's perfmon tree (" << perfmon.string() << ", $PMC_PERFMON_DIR) or perf's AMD lists ("
              << amd.string() << ", $PMC_PERF_AMD_DIR) are not on this machine";
  return r;
}

}  // namespace pmc_test
