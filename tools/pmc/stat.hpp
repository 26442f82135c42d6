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
  std::optional<double> noise = std::nullopt;
  // --per-thread, --per-core, --per-socket: what the row sums (Label), and how many CPUs
  std::string aggr = {};
  std::string aggr_text = {};
  const char* aggr_kind = nullptr;
  unsigned aggr_count = 0;
  // -I: nothing of the event ran in the interval (perf's <not counted>, its run time 0)
  bool idle = false;
};

// What a session's counts are summed under: --per-thread "sleep-1234" (kind "thread"),
// --per-core "S0-D0-C0" ("core"), --per-socket "S0" ("socket"); text is the table's column.
struct Label {
  std::string id;
  std::string text;
  const char* kind = nullptr;
  bool count_cpus = false;  // --per-core, --per-socket: perf's aggregate-number column
};

// A metric's value for one CPU (-1: all), or why there is none.
struct MetricRow {
  const pmc::MetricDef* def = nullptr;
  int cpu = -1;
  pmc::MetricValue value;
  std::optional<bool> crossed = std::nullopt;  // its threshold (a bottleneck), when it has one and can be decided
  std::string aggr = {};                       // the rows' Label id it was computed from
  // A default metric whose inputs were counted but not compatibly (pmc::MetricValue::incompatible):
  // left out of the table and the CSV, its reason in --json.
  bool hidden = false;
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
  std::string mode;  // --all-user ":u", --all-kernel ":k": added to every event counted
  // -d's events: one this machine's catalog does not know is a <not supported> row, as in perf
  std::vector<std::string> optional_events;
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
  // labels (one per scope, or none): rows summed per distinct label instead of over all targets.
  Counters(const pmc::Hal& hal, const Plan& plan, const std::vector<pmc::Scope>& scopes, bool per_cpu,
           std::vector<Label> labels = {});
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
  std::vector<Label> labels_;  // per session, or empty
  std::vector<std::string> events_;
  std::vector<std::string> unsupported_;  // event -> reason, parallel to events_ ("" counted)
  bool per_cpu_ = false;
};

// Rows of one interval: the difference of two cumulative readings.
std::vector<Row> difference(const std::vector<Row>& now, const std::vector<Row>& before);

// The event string counted for an event of the plan: --all-user adds :u, --all-kernel :k.
std::string counted_as(const Options& o, const std::string& event);
// -d, -dd, -ddd: perf's detailed events.
std::vector<std::string> detailed_events(unsigned level);

// Whose activity (stat_target.cpp): a command's process (scopes empty: made when it is forked),
// processes, a thread, or CPUs; with --per-thread, --per-core or --per-socket a Label per scope.
struct Target {
  std::vector<pmc::Scope> scopes;
  std::vector<Label> labels;
  bool per_cpu = false;
  bool cpu_wide = false;
  std::string describe;
};
Target target_of(const Options& o);
// Whether a process or thread still runs (not a zombie).
bool task_alive(int id);
// Usage errors of stat: options that do not go together.
std::optional<std::string> stat_conflict(const Options& o);

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
// "     0.200246711": perf's interval time column (%6lu.%09lu).
std::string interval_time(double seconds);
// -j (stat_report_lines.cpp): perf stat -j's lines, one JSON object per row; with -I its
// "interval" first.
void report_json_lines(std::FILE* out, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics,
                       std::optional<double> interval = std::nullopt);
// --metric-only as perf prints it: a line of the metrics' units and one of their values (text:
// right-aligned in 20 columns; CSV: each followed by the separator), or with -j one object
// {"UNIT" : "VALUE", ...}; rates and CPU utilization are left out, as perf leaves them out.
enum class MetricOnly { text, csv, json_object };
std::string metric_only_lines(const std::vector<MetricRow>& metrics, MetricOnly style, const std::string& sep = ",");
// -v: "EVENT: VALUE ENABLED RUNNING" per counted row, on stderr, as perf stat -v.
void report_verbose(const std::vector<Row>& rows);
// -B / --no-big-num: thousands separators in the table's counts (on by default).
void set_big_num(bool on);
std::string digits(std::uint64_t v);
// The metric a CSV or -j row carries: the metric placed on it, else its rate per second of
// task-clock ("K/sec"); nullopt when neither.
std::optional<std::pair<double, std::string>> row_metric(std::size_t row, const std::vector<Row>& rows,
                                                         const std::vector<MetricRow>& metrics);
bool counted(const Row& row);
double percent_running(const pmc::Reading& r);

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
