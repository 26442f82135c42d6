// pmc stat --regions: the command's own regions (docs/regions.md). The command finds which
// events to count and where to write its report in its environment ($PMC_REGION_EVENTS,
// $PMC_REGION_OUTPUT, $PMC_CONFIG); pmc sets them before it runs the command and reads the
// report back after it.
#include "stat.hpp"

#include <cstdlib>
#include <unistd.h>

namespace pmc_cli {

RegionsRun::RegionsRun(const Options& o, const std::vector<std::string>& events) {
  if (!o.regions) return;
  std::string pattern = (std::filesystem::temp_directory_path() / "pmc-regions-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw pmc::Error(pmc::errc::io, fmt::format("cannot create a temporary file for --regions ({})", pattern));
  ::close(fd);
  path_ = pattern;
  std::string joined;
  for (const std::string& e : events) joined += (joined.empty() ? "" : ",") + e;
  ::setenv("PMC_REGION_OUTPUT", path_.c_str(), 1);
  ::setenv("PMC_REGION_EVENTS", joined.c_str(), 1);
  // The command opens its HAL as pmc did: the same config file, wherever the command runs.
  if (o.config) ::setenv("PMC_CONFIG", std::filesystem::absolute(*o.config).c_str(), 1);
}

RegionsRun::~RegionsRun() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

std::optional<pmc::RegionReport> RegionsRun::report() const {
  if (path_.empty()) return std::nullopt;
  std::error_code ec;
  if (std::filesystem::file_size(path_, ec) == 0 || ec) {
    error_line("--regions: the command wrote no region report (is it instrumented with the region API, and "
               "linked with libpmchal?)");
    return std::nullopt;
  }
  try {
    return pmc::load_region_report(path_);
  } catch (const std::exception& e) {
    error_line(fmt::format("--regions: {}", e.what()));
    return std::nullopt;
  }
}

void report_regions_csv(std::FILE* out, const std::string& sep, const pmc::RegionReport& r) {
  for (const auto& region : r.regions)
    for (const auto& e : region.events)
      print_to(out, "region{0}{1}{0}{2}{0}{3}{0}{4}{0}{5}{0}{6}\n", sep, region.name, region.calls, e.sum, e.min,
               e.max, e.event);
}

}  // namespace pmc_cli
