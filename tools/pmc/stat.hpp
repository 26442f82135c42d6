// pmc: what stat, profile and export share: event groups, metrics, counting real activity on a
// set of targets, a simulated run, and the reports.
#pragma once

#include "cli.hpp"

#include <pmc/process.hpp>

#include <functional>
#include <memory>

namespace pmc_cli {

// -e "{cycles,instructions},task-clock": events, and which of them are a group (braces); the
// library's pmc::parse_event_list splits the list.
using pmc::EventGroup;

// The events one line of a report counts: a reading, or an event perf would print as
// <not supported> (reason says why).
struct Row {
  std::string event;
  std::optional<pmc::Reading> reading;
  std::string reason;
  int cpu = -1;
  // -r N: the relative standard deviation of the mean over the runs, in percent
  std::optional<double> noise;
};

// A metric's value for one CPU (-1: all), or why there is none.
struct MetricRow {
  const pmc::MetricDef* def = nullptr;
  int cpu = -1;
  pmc::MetricValue value;
  std::optional<bool> crossed;  // its threshold (a bottleneck), when it has one and can be decided
};

// What a measurement is to count: the events (defaults or -e; what the metrics need besides is
// added to the sessions after them, add_metric_events) and the metrics (-M, or the default ones
// whose events were counted).
struct Plan {
  std::vector<EventGroup> groups;
  pmc::MetricCatalog catalog;
  std::vector<const pmc::MetricDef*> metrics;
  bool metrics_asked = false;  // -M given: show them even when not computable
  bool defaults = false;       // no -e: events this machine cannot count are left out quietly
  bool metric_only = false;    // --metric-only
  pmc::MetricConstants constants;  // the machine's, for vendor formulas (smt_on, tsc_freq, ...)
  // Metric inputs that are the slots event (generic name "slots", TOPDOWN.SLOTS): added before
  // the others, so that it leads the session's group, which Linux requires of the top-down
  // metric events (PERF_METRICS) that read with it.
  std::vector<std::string> leaders;
};
// Throws for an unknown metric name (naming the nearest) and for a malformed -e list. The
// defaults (pmc::default_events) are asked for only when neither -e nor -M is given.
Plan make_plan(const pmc::Hal& hal, const Options& o, const std::function<std::vector<std::string>()>& defaults);
// Adds, through add, each event the asked metrics need that no event counted so far feeds
// (pmc::feeds_metric_input over counted(), the encodings a session made, asked again after each
// add), once each, in the metrics' order; an event of the plan is never added twice.
void add_metric_events(const Plan& plan, const std::function<const std::vector<pmc::Encoding>&()>& counted,
                       const std::function<void(const EventGroup&)>& add);
// The metrics of a plan evaluated over rows (per CPU when the rows are).
std::vector<MetricRow> evaluate(const Plan& plan, const std::vector<Row>& rows, std::optional<double> duration_ns);

// Sessions on the targets of a measurement: one for a command or a process, one per CPU for -a
// and -C. Events that cannot be counted become <not supported> rows (an unknown event is an
// error); with defaults, they are left out.
class Counters {
 public:
  Counters(const pmc::Hal& hal, const Plan& plan, const std::vector<pmc::Scope>& scopes, bool per_cpu);
  void start();
  void stop();
  void poll();
  // Rows in event order: per CPU when per_cpu, else summed over the targets.
  [[nodiscard]] std::vector<Row> read();

 private:
  // One group on every session, or a <not supported> row for it.
  void add(const pmc::Hal& hal, const Plan& plan, const EventGroup& g,
           const std::vector<pmc::HalEventDescription>& hal_events);

  std::vector<pmc::Session> sessions_;
  std::vector<int> cpus_;  // per session: its CPU, or -1
  std::vector<std::string> events_;
  std::vector<std::string> unsupported_;  // event -> reason, parallel to events_ ("" counted)
  bool per_cpu_ = false;
};

// Rows of one interval: the difference of two cumulative readings.
std::vector<Row> difference(const std::vector<Row>& now, const std::vector<Row>& before);

// What a report needs to know about the measurement.
struct Measured {
  std::vector<std::string> command;   // empty: attached or system-wide
  std::string target;                 // "CPU 0-1", "process 1234", ...
  pmc::ChildResult child;
  std::uint64_t elapsed_ns = 0;
  unsigned runs = 1;
  double elapsed_noise = 0;           // -r: relative stddev of the elapsed time, percent
};

// The reports: perf stat's table, its CSV (-x), and JSON.
void report_text(std::FILE* out, const Measured& m, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics,
                 const char* title = "Performance counter stats", bool metric_only = false);
void report_csv(std::FILE* out, const std::string& sep, const std::vector<Row>& rows,
                const std::vector<MetricRow>& metrics, const std::string& prefix = {});
json rows_json(const std::vector<Row>& rows);           // the counted rows (counters_json's shape)
json not_supported_json(const std::vector<Row>& rows);  // [{"event", "reason"}]
json metrics_json(const std::vector<MetricRow>& metrics);
// -I: one interval's lines (text: timestamped rows; CSV: rows with the time first).
void report_interval_text(std::FILE* out, double seconds, const std::vector<Row>& rows,
                          const std::vector<MetricRow>& metrics, bool header);

// A session over a simulated workload: the events added (and with a plan, the events its
// metrics need besides), `prepare` (profiling) applied, the workload run through the backend's
// device model (Session::run), the counts read. With asked metrics whose events had to be
// multiplexed, the workload runs again in passes of events that fit, and the counts are exact.
struct SimulatedRun {
  pmc::Workload workload;
  pmc::WorkloadRun stats;
  std::vector<pmc::Reading> readings;
  std::vector<pmc::LevelHistogram> levels;
  std::vector<pmc::PcProfile> profiles;
  // How many times the workload ran: 1, or with metrics whose events the PMU could only
  // multiplex, once per set of events that fits (count_in_passes in stat.cpp).
  unsigned passes = 1;
};
SimulatedRun run_simulated(const pmc::Hal& hal, const Options& o, const std::vector<EventGroup>& events,
                           const std::function<void(pmc::Session&, const pmc::Workload&)>& prepare = {},
                           const Plan* plan = nullptr);
json run_json(const pmc::Hal& hal, const SimulatedRun& run);
void print_counts(const pmc::Hal& hal, const SimulatedRun& run, const char* what,
                  const std::vector<MetricRow>& metrics = {}, bool metric_only = false);

// The counters on a command run by pmc::run_child: its process, inherited by everything it
// starts, switched on by its exec.
pmc::Scope command_scope(int pid);
// The table of a command's readings (pmc profile's report).
void report_table(std::FILE* out, const std::vector<std::string>& command, const std::vector<pmc::Reading>& readings,
                  const pmc::ChildResult& run, const char* title = "Performance counter stats");

// A metric's value as a report note ("1.43 insn per cycle", "5.79% of all branches").
std::string metric_note(const MetricRow& m);

// Metrics of a tree (level > 0: top-down, pipeline utilization) are drawn as a tree after the
// counts, not beside them (stat_tree.cpp).
inline bool in_tree(const MetricRow& m) { return m.def->level > 0; }
// Decides each row's threshold with the values of the rows of the same CPU.
void mark_thresholds(std::vector<MetricRow>& metrics);
// The tree of the rows in_tree: each node under its parent, its value and unit, the ones whose
// threshold is crossed marked; nothing when there are none.
void print_tree(std::FILE* out, const std::vector<MetricRow>& metrics);

// --regions (stat_regions.cpp): set up before the command runs ($PMC_REGION_OUTPUT to a
// temporary file, $PMC_REGION_EVENTS to the events), read back after it; nothing without
// --regions. The temporary file is removed on destruction.
class RegionsRun {
 public:
  RegionsRun(const Options& o, const std::vector<std::string>& events);
  ~RegionsRun();
  RegionsRun(const RegionsRun&) = delete;
  RegionsRun& operator=(const RegionsRun&) = delete;
  // The command's report; nullopt without --regions, or (said on stderr) when the command wrote
  // none or an unreadable one.
  [[nodiscard]] std::optional<pmc::RegionReport> report() const;

 private:
  std::string path_;
};
// -x: "region,NAME,CALLS,SUM,MIN,MAX,EVENT" a line per region and event.
void report_regions_csv(std::FILE* out, const std::string& sep, const pmc::RegionReport& r);

}  // namespace pmc_cli
