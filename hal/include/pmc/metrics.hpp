// Metrics: figures derived from counts (instructions per cycle, miss ratios, top-down shares),
// defined as data, as LIKWID's performance groups and perf's metric files do. A metric is a
// formula over the events it names and constants, parsed by muParser; docs/metrics.md is the
// TOML schema. The library ships a generic file (metrics any backend with the events can
// compute) and one file per backend (share/pmchal/metrics/<name>.toml).
#pragma once

#include <pmc/encoding.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/session.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

class Hal;

struct MetricInput {
  std::string variable;  // the name the formula uses ("cycles", "task_clock", "backend")
  std::string event;     // the event string counted for it ("cycles", "task-clock", "r02A4")
};

struct MetricDef {
  std::string name;                  // "IPC"
  std::string group;                 // "basic", "L2", "TopdownL1", ...
  std::string formula;               // "instructions / cycles"
  std::string unit;                  // "insn per cycle", "%", "MFLOP/s"
  std::string description;
  std::vector<MetricInput> events;   // what the formula's variables stand for
  std::vector<std::string> cpus;     // CPU tags of the backend it applies to; empty: all
  std::string backend;               // the backend the file is for; "" for the generic file
  SourceRef source;                  // where it was defined
  // Shown without being asked for (pmc stat without -M) when every event it needs was counted.
  bool by_default = false;
  // Whether the formula uses duration_time (the wall-clock ns of the measurement), which a
  // simulated workload does not have.
  bool uses_duration = false;
};

class PMC_API MetricCatalog {
 public:
  // Loads a metrics file. Throws pmc::Error with file:line:column for malformed TOML, unknown
  // keys, wrong types, a formula muParser rejects or one that names a variable that is not one
  // of its events (nor duration_time), and a name defined twice. A metric of a later file
  // replaces the earlier one of the same name.
  void load(const std::filesystem::path& file);
  void load_string(std::string_view toml, const std::string& name);
  [[nodiscard]] const std::vector<MetricDef>& metrics() const { return metrics_; }
  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }
  // Case-insensitive: the metric of that name, else nullptr.
  [[nodiscard]] const MetricDef* find(std::string_view name) const;
  // A metric name or a group name (case-insensitive): the metrics it selects, in file order;
  // empty when it names neither.
  [[nodiscard]] std::vector<const MetricDef*> select(std::string_view name_or_group) const;
  // The metric and group names nearest to a misspelt one (edit distance), nearest first.
  [[nodiscard]] std::vector<std::string> nearest(std::string_view name) const;
  // The group names, in file order.
  [[nodiscard]] std::vector<std::string> groups() const;

 private:
  std::vector<MetricDef> metrics_;
  std::vector<std::string> files_;
};

// The built-in metrics for a Hal: share/pmchal/metrics/generic.toml, then, with a backend,
// share/pmchal/metrics/<backend>.toml when it exists.
PMC_API MetricCatalog builtin_metrics(const Hal& hal);

// Empty when the Hal can count every event the metric needs (HAL events always; PMU events when
// the backend knows them for this CPU); otherwise why not ("needs PF_ISSUES, which backend p6
// does not have").
PMC_API std::string metric_unavailable(const Hal& hal, const MetricDef& metric);

// Whether an event, as a session encoded it (Session::encodings()), feeds the metric input
// `input`: it was added with exactly that event string, or (for an input without modifiers) its
// catalog name or generic name is the input, so `INST_RETIRED:u` feeds "instructions" and
// "cycles" feeds "cpu-cycles". Nothing is parsed or encoded again.
PMC_API bool feeds_metric_input(const Encoding& counted, std::string_view input);

// The reading that feeds a metric input, by the rule of feeds_metric_input: the one added with
// exactly that event string first, else the first whose catalog name or generic name is the
// event. nullptr when none.
PMC_API const Reading* metric_reading(const std::vector<Reading>& readings, std::string_view event);

struct MetricValue {
  std::optional<double> value;  // nullopt: not computable, error says why
  std::string error;            // "cycles counted 0: the formula divides by zero", ...
};

// Evaluates the formula over the readings (one CPU's, or the aggregate). duration_ns is the
// measurement's wall-clock time (duration_time in formulas), when there is one.
PMC_API MetricValue evaluate_metric(const MetricDef& metric, const std::vector<Reading>& readings,
                                    std::optional<double> duration_ns = std::nullopt);

}  // namespace pmc
