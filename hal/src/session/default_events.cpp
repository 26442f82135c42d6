// The default events (pmc/default_events.hpp): what pmc stat and pmc export count without -e.
#include "context.hpp"
#include "event_stats.hpp"
#include "session_impl.hpp"

#include <pmc/default_events.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/schedule.hpp>

#include <mutex>

namespace pmc {

namespace {

// The generic events a workload counts first, in the order they are given to the counters.
constexpr const char* kWorkloadGenerics[] = {"cycles", "instructions", "branches", "branch-misses"};

// Worked out once per Hal (detail::WorkloadDefaults): an event is chosen when it encodes and
// the PMU holds it with those chosen before it. Sessions of the Hal that add one by its name take
// its parse and encoding from there.
void choose_workload_events(const detail::Context& ctx) {
  std::vector<detail::DefaultEvent> out;
  std::vector<Encoding> chosen;
  const auto consider = [&](const std::string& name) {
    detail::DefaultEvent e{name, parse_event(name), {}};
    try {
      detail::count_encode();
      e.encoding = ctx.encode(e.spec);
    } catch (const Error&) {  // the backend has no such event
      return;
    }
    chosen.push_back(e.encoding);
    try {
      (void)schedule(ctx.pmu, chosen);
      out.push_back(std::move(e));
    } catch (const Error&) {  // no counter left for it
      chosen.pop_back();
    }
  };
  for (const char* g : kWorkloadGenerics) consider(g);
  if (out.empty())
    for (const EventDef* e : ctx.catalog.for_cpu(ctx.pmu.cpu_tag)) {
      consider(e->name);
      if (out.size() == ctx.pmu.counters.size()) break;
    }
  ctx.defaults->events = std::move(out);
  ctx.defaults->ready.store(true, std::memory_order_release);
}

}  // namespace

std::vector<std::string> default_events(const Hal& hal, DefaultEvents what) {
  if (what == DefaultEvents::workload) {
    (void)hal.require_backend();
    Session session = hal.session();  // its context is the Hal's (and opens nothing)
    const detail::Context& ctx = *detail::SessionAccess::impl(session).ctx;
    std::call_once(ctx.defaults->once, [&] { choose_workload_events(ctx); });
    std::vector<std::string> names;
    for (const detail::DefaultEvent& e : ctx.defaults->events) names.push_back(e.name);
    return names;
  }
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
