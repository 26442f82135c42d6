// pmc: what stat and profile share: a simulated run, its report, a command's report.
#pragma once

#include "cli.hpp"

#include <pmc/process.hpp>

#include <functional>

namespace pmc_cli {

// A session over a simulated workload: the events added, `prepare` (profiling) applied, the
// workload run through the backend's device model (Session::run), the counts read.
struct SimulatedRun {
  pmc::Workload workload;
  pmc::WorkloadRun stats;
  std::vector<pmc::Reading> readings;
  std::vector<pmc::LevelHistogram> levels;
  std::vector<pmc::PcProfile> profiles;
};
SimulatedRun run_simulated(const pmc::Hal& hal, const Options& o, const std::vector<std::string>& events,
                           const std::function<void(pmc::Session&, const pmc::Workload&)>& prepare = {});
json run_json(const pmc::Hal& hal, const SimulatedRun& run);
void print_counts(const pmc::Hal& hal, const SimulatedRun& run, const char* what);

// The counters on a command run by pmc::run_child: its process, inherited by everything it
// starts, switched on by its exec.
pmc::Scope command_scope(int pid);
// The perf-stat-like table of a command's readings.
void report_table(std::FILE* out, const std::vector<std::string>& command, const std::vector<pmc::Reading>& readings,
                  const pmc::ChildResult& run, const char* title = "Performance counter stats");

}  // namespace pmc_cli
