// The default events (pmc/default_events.hpp): what pmc stat and pmc export count without -e.
#include <pmc/default_events.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/schedule.hpp>

namespace pmc {

namespace {

// The generic events a workload counts first, in the order they are given to the counters.
constexpr const char* kWorkloadGenerics[] = {"cycles", "instructions", "branches", "branch-misses"};

std::vector<std::string> workload_events(const Hal& hal) {
  (void)hal.require_backend();
  std::vector<std::string> out;
  std::vector<Encoding> chosen;
  // An event is chosen when it encodes and the PMU holds it with those chosen before it.
  auto consider = [&](const std::string& name) {
    try {
      chosen.push_back(hal.encode(name));
    } catch (const Error&) {  // the backend has no such event
      return;
    }
    try {
      (void)schedule(hal.pmu(), chosen);
      out.push_back(name);
    } catch (const Error&) {  // no counter left for it
      chosen.pop_back();
    }
  };
  for (const char* g : kWorkloadGenerics) consider(g);
  if (out.empty())
    for (const EventDef* e : hal.events().for_cpu(hal.pmu().cpu_tag)) {
      consider(e->name);
      if (out.size() == hal.pmu().counters.size()) break;
    }
  return out;
}

}  // namespace

std::vector<std::string> default_events(const Hal& hal, DefaultEvents what) {
  if (what == DefaultEvents::workload) return workload_events(hal);
  std::vector<std::string> out{what == DefaultEvents::cpus ? "cpu-clock" : "task-clock",
                               "context-switches",
                               "cpu-migrations",
                               "page-faults",
                               "cycles",
                               "instructions",
                               "branches",
                               "branch-misses"};
  // The TSC is a clock, not a per-task counter (docs/user-guide.md, HAL events): for a task it
  // times the run beside task-clock; the same clock on every CPU, it would only repeat the
  // elapsed time on each CPU's row.
  if (what == DefaultEvents::task) out.emplace_back("tsc");
  return out;
}

}  // namespace pmc
