// Metrics as data (pmc/metrics.hpp, docs/metrics.md): the files of a Hal, availability, and
// evaluation with muParser. The loader is metrics_load.cpp, the constants constants.cpp.
#include <pmc/hal.hpp>
#include <pmc/error.hpp>
#include <pmc/metrics.hpp>

#include "catalog_cache.hpp"
#include "formula.hpp"
#include "metric_parser.hpp"
#include "text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pmc {

namespace {

using detail::iequal;

constexpr const char* kDuration = "duration_time";

bool is_hal_event(std::string_view event) {
  const EventSpec spec = parse_event(event);
  if (!spec.pmu.empty() && spec.pmu != "hal") return false;
  for (const auto& h : hal_events())
    if (iequal(spec.name, h.name) || (!h.alias.empty() && iequal(spec.name, h.alias))) return true;
  return false;
}

// The catalog tags of a Hal's CPU, most general first: the PMU's tag ("v5", "zen4") and each
// per-CPU events file's name ("cpu/spr.toml (Sapphire Rapids)" -> "spr").
std::vector<std::string> cpu_tags(const Hal& hal) {
  std::vector<std::string> tags;
  if (!hal.pmu().cpu_tag.empty()) tags.push_back(hal.pmu().cpu_tag);
  for (const std::string& shown : hal.backend()->cpu_catalogs) {
    const std::string file = shown.substr(0, shown.find(' '));
    const std::string stem = std::filesystem::path(file).stem().string();
    if (!stem.empty() && std::find(tags.begin(), tags.end(), stem) == tags.end()) tags.push_back(stem);
  }
  return tags;
}

std::optional<double> constant_value(const MetricConstants* constants, std::string_view name) {
  if (!constants) return std::nullopt;
  const MetricConstant* c = constants->find(name);
  return c ? c->value : std::nullopt;
}

// The names the formula reads with these constants (formula.hpp); every input and constant
// when the formula cannot be walked (muParser accepted it, so that is a gap of the walker).
std::vector<std::string> reads(const MetricDef& m, const MetricConstants* constants) {
  try {
    return detail::formula_reads(m.formula, [&](std::string_view n) { return constant_value(constants, n); });
  } catch (const std::invalid_argument&) {
    std::vector<std::string> all;
    for (const auto& in : m.events) all.push_back(in.variable);
    all.insert(all.end(), m.constants.begin(), m.constants.end());
    if (m.uses_duration) all.emplace_back(kDuration);
    return all;
  }
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

MetricCatalog builtin_metrics(const Hal& hal) {
  MetricCatalog c;
  const std::filesystem::path dir = default_paths().data / "metrics";
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / "generic.toml", ec)) c.load(dir / "generic.toml");
  if (const BackendInfo* b = hal.backend()) {
    const std::filesystem::path own = dir / (b->name + ".toml");
    if (std::filesystem::is_regular_file(own, ec)) c.load(own);
    // The vendor's metrics of this CPU model (share/pmchal/metrics/<backend>/<tag>.toml).
    for (const std::string& tag : cpu_tags(hal)) {
      const std::filesystem::path model = dir / b->name / (tag + ".toml");
      if (std::filesystem::is_regular_file(model, ec)) c.load(model);
    }
  }
  return c;
}

std::vector<const MetricInput*> metric_inputs(const MetricDef& metric, const MetricConstants& constants) {
  const std::vector<std::string> used = reads(metric, &constants);
  std::vector<const MetricInput*> out;
  for (const auto& in : metric.events)
    if (contains(used, in.variable)) out.push_back(&in);
  return out;
}

std::string metric_unavailable(const Hal& hal, const MetricDef& metric, const MetricConstants& constants) {
  const BackendInfo* backend = hal.backend();
  if (!metric.backend.empty() && (!backend || backend->name != metric.backend))
    return fmt::format("it is a metric of backend {}", metric.backend);
  if (!metric.cpus.empty() && std::find(metric.cpus.begin(), metric.cpus.end(), hal.pmu().cpu_tag) == metric.cpus.end())
    return fmt::format("it applies to the CPUs {} of backend {}, not this one ({})", detail::join(metric.cpus, ", "),
                       metric.backend, backend ? hal.pmu().cpu_tag : std::string("no backend"));
  const std::vector<std::string> used = reads(metric, &constants);
  for (const std::string& name : metric.constants) {
    const MetricConstant* c = constants.find(name);
    if (contains(used, name) && (!c || !c->value))
      return fmt::format("it needs the constant {}: {}", name, c ? c->source : "not known");
  }
  for (const auto& in : metric.events) {
    if (!contains(used, in.variable) || is_hal_event(in.event)) continue;
    if (!backend) return fmt::format("it needs the PMU event {}, and no backend was chosen", in.event);
    try {
      (void)hal.encode(in.event);
    } catch (const Error& e) {
      return fmt::format("it needs {}, which backend {} cannot count on this CPU ({})", in.event, backend->name,
                         e.what());
    }
  }
  return {};
}

std::string metric_unavailable(const Hal& hal, const MetricDef& metric) {
  return metric_unavailable(hal, metric, metric_constants(hal));
}

namespace {

// The second half of the rule of feeds_metric_input: an input without modifiers is fed by an
// event of that catalog name or generic name (perf's other spellings, cpu-cycles, ..., too).
// A Reading and an Encoding carry the same identity (SessionImpl::read in hal/src/session/session.cpp
// copies it into each reading).
bool feeds_by_name(const std::string& name, const std::string& generic, std::string_view input) {
  if (input.find(':') != std::string_view::npos) return false;
  return (!name.empty() && iequal(name, input)) ||
         (!generic.empty() && iequal(generic, detail::perf_generic_name(input)));
}

// One parser per thread, its expression set again for each evaluation: making a mu::Parser
// costs more than compiling a formula with one.
mu::Parser& evaluation_parser() {
  thread_local mu::Parser p = [] {
    mu::Parser q;
    detail::define_metric_functions(q);
    return q;
  }();
  return p;
}

}  // namespace

bool feeds_metric_input(const Encoding& counted, std::string_view input) {
  return counted.event == input || feeds_by_name(counted.name, counted.generic, input);
}

const Reading* metric_reading(const std::vector<Reading>& readings, std::string_view event) {
  for (const auto& r : readings)
    if (r.event == event) return &r;
  for (const auto& r : readings)
    if (feeds_by_name(r.name, r.generic, event)) return &r;
  return nullptr;
}

MetricValue evaluate_metric(const MetricDef& metric, const std::vector<Reading>& readings,
                            std::optional<double> duration_ns, const MetricConstants* constants) {
  MetricValue out;
  const std::vector<std::string> used = reads(metric, constants);
  // An input the formula does not read with these constants is NaN: were it read after all,
  // the value would say so.
  std::vector<double> values(metric.events.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < metric.events.size(); ++i) {
    if (!contains(used, metric.events[i].variable)) continue;
    const Reading* r = metric_reading(readings, metric.events[i].event);
    if (!r) {
      out.error = fmt::format("{} was not counted", metric.events[i].event);
      return out;
    }
    if (r->time_running == 0 && r->time_enabled > 0) {
      out.error = fmt::format("{} was never on a counter (<not counted>)", metric.events[i].event);
      return out;
    }
    values[i] = static_cast<double>(r->value);
    if (r->extrapolated || r->time_running < r->time_enabled) out.scaled = true;
  }
  double duration = duration_ns.value_or(0.0);
  if (metric.uses_duration && !duration_ns && contains(used, kDuration)) {
    out.error = "it needs duration_time, the wall-clock time of a measurement, which a simulated workload has not";
    return out;
  }
  std::vector<double> consts(metric.constants.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < metric.constants.size(); ++i) {
    if (!contains(used, metric.constants[i])) continue;
    const std::optional<double> v = constant_value(constants, metric.constants[i]);
    if (!v) {
      const MetricConstant* c = constants ? constants->find(metric.constants[i]) : nullptr;
      out.error = fmt::format("it needs the constant {}: {}", metric.constants[i],
                              c ? c->source : "no constants were given (pmc::metric_constants)");
      return out;
    }
    consts[i] = *v;
  }
  try {
    mu::Parser& p = evaluation_parser();
    p.ClearVar();
    for (std::size_t i = 0; i < metric.events.size(); ++i) p.DefineVar(metric.events[i].variable, &values[i]);
    for (std::size_t i = 0; i < metric.constants.size(); ++i) p.DefineVar(metric.constants[i], &consts[i]);
    p.DefineVar(kDuration, &duration);
    p.SetExpr(metric.formula);
    const double v = p.Eval();
    if (std::isfinite(v)) {
      out.value = v;
      return out;
    }
    std::vector<std::string> zeros;
    for (std::size_t i = 0; i < metric.events.size(); ++i)
      if (values[i] == 0.0) zeros.push_back(metric.events[i].event);
    if (metric.uses_duration && duration == 0.0) zeros.emplace_back(kDuration);
    // A vendor formula runs to thousands of characters: it is named, not quoted, beyond a line.
    const std::string formula =
        metric.formula.size() <= 80 ? fmt::format("the formula '{}'", metric.formula) : std::string("the formula");
    out.error = zeros.empty() ? fmt::format("{} gives {}", formula, v)
                              : fmt::format("{} divides by zero: {} counted 0", formula, detail::join(zeros, " and "));
  } catch (const mu::Parser::exception_type& e) {
    out.error = fmt::format("the formula of {} failed: {}", metric.name, e.GetMsg());
  }
  return out;
}

std::optional<bool> metric_threshold(const MetricDef& metric,
                                     const std::function<std::optional<double>(std::string_view)>& value_of) {
  if (metric.threshold.empty()) return std::nullopt;
  std::vector<std::string> names;
  try {
    names = detail::formula_reads(metric.threshold, [](std::string_view) { return std::nullopt; });
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  std::vector<double> values(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::optional<double> v = value_of(names[i]);
    if (!v) return std::nullopt;
    values[i] = *v;
  }
  try {
    mu::Parser& p = evaluation_parser();
    p.ClearVar();
    for (std::size_t i = 0; i < names.size(); ++i) p.DefineVar(names[i], &values[i]);
    p.SetExpr(metric.threshold);
    return p.Eval() != 0;
  } catch (const mu::Parser::exception_type&) {
    return std::nullopt;
  }
}

}  // namespace pmc
