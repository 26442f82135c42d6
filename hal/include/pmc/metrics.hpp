// Metrics: figures derived from counts (instructions per cycle, miss ratios, top-down shares),
// defined as data, as LIKWID's performance groups and perf's metric files do. A metric is a
// formula over the events it names and constants, parsed by muParser; docs/metrics.md is the
// TOML schema. The library ships a generic file (metrics any backend with the events can
// compute) and one file per backend (share/pmchal/metrics/<name>.toml).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/metrics.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/encoding.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/session.hpp>

#include <filesystem>
#include <functional>
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
  std::string name;                  // "IPC", "Frontend_Bound"
  std::vector<std::string> aliases;  // other names -M accepts ("tma_frontend_bound")
  std::string group;                 // the first of groups ("basic", "L2", "TopdownL1", ...)
  std::vector<std::string> groups;   // every group it belongs to; -M GROUP selects it
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
  // A tree of metrics (Intel's top-down analysis, AMD's pipeline utilization): the level (1 is
  // the root's children; 0: not in a tree) and the parent metric's name ("" at level 1).
  int level = 0;
  std::string parent;
  // When the value marks a bottleneck: a formula over metric names of the same file
  // ("Fetch_Latency > 10 && Frontend_Bound > 15"); "" when the vendor gives none.
  std::string threshold;
  // The machine constants (metric_constants) the formula names: smt_on, threads_per_core, ...
  std::vector<std::string> constants;
};

// A constant of the machine that vendor formulas use (docs/metrics.md, "Constants"): smt_on,
// threads_per_core, tsc_freq (Hz), num_cpus, num_sockets, cores_per_socket, chas_per_socket.
struct MetricConstant {
  std::string name;
  std::optional<double> value;  // nullopt: unknown here, `source` says why
  std::string source;           // where the value came from ("CPUID 0BH", "sysfs ..."), or why none
};

struct PMC_API MetricConstants {
  std::vector<MetricConstant> values;
  // The constant of that name, or nullptr when it is not one.
  [[nodiscard]] const MetricConstant* find(std::string_view name) const;
};

// The constants of the Hal's CPU: natively from the OS (sysfs topology, SMT state) and CPUID
// (TSC frequency from leaves 15H/16H); for a CPUID dump from its leaves alone (threads per core
// from leaf 0BH or 1FH, else leaf 1 and 4; one socket).
PMC_API MetricConstants metric_constants(const Hal& hal);

// The names every metric formula may use besides its events: duration_time and the constants.
PMC_API const std::vector<std::string>& metric_builtin_names();

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
  // A metric name or alias, or a group name (case-insensitive): the metrics it selects, in file
  // order; empty when it names neither.
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
// share/pmchal/metrics/<backend>.toml when it exists, then (with vendor) the vendor's metrics of
// the CPU model, share/pmchal/metrics/<backend>/<tag>.toml: hundreds of formulas, which a
// program that wants only the generic ones (IPC, miss ratios) need not load.
PMC_API MetricCatalog builtin_metrics(const Hal& hal, bool vendor = true);

// Empty when the Hal can count every event the metric needs (HAL events always; PMU events when
// the backend knows them for this CPU); otherwise why not ("needs PF_ISSUES, which backend p6
// does not have").
PMC_API std::string metric_unavailable(const Hal& hal, const MetricDef& metric);
PMC_API std::string metric_unavailable(const Hal& hal, const MetricDef& metric, const MetricConstants& constants);

// The inputs the formula reads with these constants: all of them, except that a `c ? a : b`
// whose condition depends only on constants reads only the side it takes (Skylake's top-down
// formulas read CPU_CLK_UNHALTED.THREAD_ANY only with SMT on), as perf drops them.
PMC_API std::vector<const MetricInput*> metric_inputs(const MetricDef& metric, const MetricConstants& constants);

// Whether an event, as a session encoded it (Session::encodings()), feeds the metric input
// `input`: it was added with exactly that event string, or (for an input without modifiers) its
// catalog name or generic name is the input, so `INST_RETIRED:u` feeds "instructions" and
// "cycles" feeds "cpu-cycles". Nothing is parsed or encoded again.
PMC_API bool feeds_metric_input(const Encoding& counted, std::string_view input);

// The reading that feeds a metric input, by the rule of feeds_metric_input: the one added with
// exactly that event string first, else the first whose catalog name or generic name is the
// event. nullptr when none.
PMC_API const Reading* metric_reading(const std::vector<Reading>& readings, std::string_view event);

// Which privilege levels an event counts (its :u and :k, as the encoder settled them: the
// canonical string's u= and k=) and for which CPU: a metric takes only inputs that agree on all
// three, as perf pairs instructions:u with cycles:u and never with cycles:k.
struct MetricFilter {
  bool user = true;
  bool kernel = true;
  int cpu = -1;
  bool operator==(const MetricFilter&) const = default;
};
PMC_API MetricFilter metric_filter(const Reading& reading);

// The readings that feed a metric's inputs, one per entry of metric.events (nullptr for an input
// the formula does not read with these constants): by the rule of metric_reading, and all with
// the same MetricFilter; among several candidates, those of the first input's first filter that
// every input can match. Empty readings and an error when an input was not counted, or
// (incompatible set) when the inputs were counted but never with one filter.
struct MetricInputReadings {
  std::vector<const Reading*> readings;
  std::string error;
  bool incompatible = false;
};
PMC_API MetricInputReadings metric_input_readings(const MetricDef& metric, const std::vector<Reading>& readings,
                                                  const MetricConstants* constants = nullptr);

struct MetricValue {
  std::optional<double> value;  // nullopt: not computable, error says why
  std::string error;            // "cycles counted 0: the formula divides by zero", ...
  // Every input was counted, but no set of them shares a privilege filter and a CPU
  // (metric_input_readings): the metric is not computed, as perf leaves it out.
  bool incompatible = false;
  // An input was multiplexed (counted part of the time and scaled up): the value is an
  // estimate, and the inputs were not counted over the same cycles.
  bool scaled = false;
};

// Evaluates the formula over the readings (one CPU's, or the aggregate). duration_ns is the
// measurement's wall-clock time (duration_time in formulas), when there is one.
PMC_API MetricValue evaluate_metric(const MetricDef& metric, const std::vector<Reading>& readings,
                                    std::optional<double> duration_ns = std::nullopt,
                                    const MetricConstants* constants = nullptr);

// Whether the metric's threshold is crossed, with value_of giving the values of the metrics it
// names, by name or alias (nullopt: no value): nullopt when it has no threshold or a metric it names has no value.
PMC_API std::optional<bool> metric_threshold(
    const MetricDef& metric, const std::function<std::optional<double>(std::string_view name)>& value_of);

}  // namespace pmc

#endif  // C++20
