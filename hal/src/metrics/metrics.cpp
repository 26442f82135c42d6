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
#include <memory>
#include <unordered_map>

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

MetricCatalog builtin_metrics(const Hal& hal, bool vendor) {
  MetricCatalog c;
  const std::filesystem::path dir = default_paths().data / "metrics";
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / "generic.toml", ec)) c.load(dir / "generic.toml");
  if (const BackendInfo* b = hal.backend()) {
    const std::filesystem::path own = dir / (b->name + ".toml");
    if (std::filesystem::is_regular_file(own, ec)) c.load(own);
    // The vendor's metrics of this CPU model (share/pmchal/metrics/<backend>/<tag>.toml).
    for (const std::string& tag : vendor ? cpu_tags(hal) : std::vector<std::string>{}) {
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

namespace {

// The digit after KEY (":u=") in a canonical string ("PMU::EVENT:u=1:k=0:e=0"), if any.
std::optional<bool> canonical_flag(std::string_view canonical, std::string_view key) {
  const std::size_t at = canonical.find(key);
  if (at == std::string_view::npos || at + key.size() >= canonical.size()) return std::nullopt;
  return canonical[at + key.size()] != '0';
}

// Whether a reading may feed the input: added with exactly that string when one was (exact),
// else of that catalog or generic name (metric_reading's rule).
bool candidate(const Reading& r, std::string_view input, bool exact) {
  return exact ? r.event == input : feeds_by_name(r.name, r.generic, input);
}

bool has_exact(const std::vector<Reading>& readings, std::string_view input) {
  return std::any_of(readings.begin(), readings.end(), [&](const Reading& r) { return r.event == input; });
}

std::string describe(const MetricFilter& f) {
  std::string s = f.user && f.kernel ? "user and kernel level" : f.user ? "user level" : f.kernel ? "kernel level" : "no level";
  if (f.cpu >= 0) s += fmt::format(", CPU {}", f.cpu);
  return s;
}

enum class Pick { ok, missing, incompatible };

// The rule of metric_input_readings over the inputs `read` marks: chosen gets a reading per
// input (nullptr for the others); `missing` the first input nothing feeds. Allocates nothing
// when the canonical strings carry u= and k= (every encoder's do).
Pick pick_inputs(const MetricDef& m, const std::vector<Reading>& readings, const std::vector<bool>& read,
                 std::vector<const Reading*>& chosen, std::size_t& missing) {
  std::fill(chosen.begin(), chosen.end(), nullptr);
  std::size_t first = m.events.size();
  for (std::size_t i = 0; i < m.events.size(); ++i) {
    if (!read[i]) continue;
    const std::string& input = m.events[i].event;
    const bool exact = has_exact(readings, input);
    if (std::none_of(readings.begin(), readings.end(), [&](const Reading& r) { return candidate(r, input, exact); })) {
      missing = i;
      return Pick::missing;
    }
    if (first == m.events.size()) first = i;
  }
  if (first == m.events.size()) return Pick::ok;
  const bool first_exact = has_exact(readings, m.events[first].event);
  for (const Reading& anchor : readings) {
    if (!candidate(anchor, m.events[first].event, first_exact)) continue;
    const MetricFilter f = metric_filter(anchor);
    bool all = true;
    for (std::size_t i = 0; i < m.events.size() && all; ++i) {
      if (!read[i]) continue;
      const std::string& input = m.events[i].event;
      const bool exact = has_exact(readings, input);
      chosen[i] = nullptr;
      for (const Reading& r : readings)
        if (candidate(r, input, exact) && metric_filter(r) == f) {
          chosen[i] = &r;
          break;
        }
      all = chosen[i] != nullptr;
    }
    if (all) return Pick::ok;
  }
  std::fill(chosen.begin(), chosen.end(), nullptr);
  return Pick::incompatible;
}

// "instructions as INST_RETIRED:u (user level), cycles as CPU_CLK_UNHALTED:k (kernel level)"
std::string incompatible_error(const MetricDef& m, const std::vector<Reading>& readings, const std::vector<bool>& read) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < m.events.size(); ++i) {
    if (!read[i]) continue;
    const std::string& input = m.events[i].event;
    const bool exact = has_exact(readings, input);
    std::vector<std::string> as;
    for (const Reading& r : readings)
      if (candidate(r, input, exact)) as.push_back(fmt::format("{} ({})", r.event, describe(metric_filter(r))));
    parts.push_back(fmt::format("{} as {}", input, detail::join(as, " or ")));
  }
  return fmt::format("no compatible inputs: {}; a metric takes inputs counted at the same levels (:u, :k) and on "
                     "the same CPU",
                     detail::join(parts, ", "));
}

}  // namespace

MetricFilter metric_filter(const Reading& reading) {
  MetricFilter f;
  f.cpu = reading.cpu;
  const std::optional<bool> u = canonical_flag(reading.canonical, ":u="), k = canonical_flag(reading.canonical, ":k=");
  if (u || k) {
    f.user = u.value_or(true);
    f.kernel = k.value_or(true);
    return f;
  }
  // No canonical string (readings made by hand, HAL events of the TSC kind): the modifiers of
  // the string as added, as the encoders read them (one of :u and :k given: only that level).
  try {
    const EventSpec spec = parse_event(reading.event);
    const EventModifier* mu = spec.modifier("u");
    const EventModifier* mk = spec.modifier("k");
    if (mu || mk) {
      f.user = mu && mu->value.value_or(1) != 0;
      f.kernel = mk && mk->value.value_or(1) != 0;
    }
  } catch (const Error&) {  // not an event string: unfiltered
  }
  return f;
}

namespace {

// A metric's formula compiled once per thread: muParser's bytecode over value slots that each
// evaluation fills, and which names it reads under the constants it last saw. Keyed by the
// definition's address, and checked against its formula and variables (an address can be
// reused by another catalog's metric).
struct Compiled {
  std::string formula;
  std::vector<std::string> variables, constant_names;
  std::vector<double> inputs, consts;
  double duration = 0;
  mu::Parser parser;
  bool have_reads = false;
  std::vector<std::optional<double>> constants_seen;
  std::vector<bool> reads_input, reads_constant;
  bool reads_duration = false;
  std::vector<const Reading*> chosen;  // the readings pick_inputs chose, one per input
  // The threshold, compiled at its first use: the metric names it reads and their slots.
  std::string threshold;
  std::unique_ptr<mu::Parser> threshold_parser;
  std::vector<std::string> threshold_names;
  std::vector<double> threshold_values;

  [[nodiscard]] bool is(const MetricDef& m) const {
    if (formula != m.formula || threshold != m.threshold || variables.size() != m.events.size() ||
        constant_names != m.constants)
      return false;
    for (std::size_t i = 0; i < variables.size(); ++i)
      if (variables[i] != m.events[i].variable) return false;
    return true;
  }
};

Compiled& compiled(const MetricDef& m) {
  thread_local std::unordered_map<const MetricDef*, std::unique_ptr<Compiled>> cache;
  if (cache.size() > 16384) cache.clear();  // programs that load catalog after catalog
  std::unique_ptr<Compiled>& slot = cache[&m];
  if (slot && slot->is(m)) return *slot;
  auto c = std::make_unique<Compiled>();
  c->formula = m.formula;
  c->threshold = m.threshold;
  c->constant_names = m.constants;
  for (const auto& in : m.events) c->variables.push_back(in.variable);
  c->inputs.assign(m.events.size(), 0.0);
  c->chosen.assign(m.events.size(), nullptr);
  c->consts.assign(m.constants.size(), 0.0);
  detail::define_metric_functions(c->parser);
  for (std::size_t i = 0; i < m.events.size(); ++i) c->parser.DefineVar(m.events[i].variable, &c->inputs[i]);
  for (std::size_t i = 0; i < m.constants.size(); ++i) c->parser.DefineVar(m.constants[i], &c->consts[i]);
  c->parser.DefineVar(kDuration, &c->duration);
  c->parser.SetExpr(m.formula);
  slot = std::move(c);
  return *slot;
}

// Which inputs and constants the formula reads with these constants, walked again only when
// their values changed.
void update_reads(Compiled& c, const MetricDef& m, const MetricConstants* constants) {
  bool same = c.have_reads;
  for (std::size_t i = 0; same && i < m.constants.size(); ++i)
    same = c.constants_seen[i] == constant_value(constants, m.constants[i]);
  if (same) return;
  const std::vector<std::string> used = reads(m, constants);
  c.constants_seen.clear();
  for (const auto& name : m.constants) c.constants_seen.push_back(constant_value(constants, name));
  c.reads_input.assign(m.events.size(), false);
  for (std::size_t i = 0; i < m.events.size(); ++i) c.reads_input[i] = contains(used, m.events[i].variable);
  c.reads_constant.assign(m.constants.size(), false);
  for (std::size_t i = 0; i < m.constants.size(); ++i) c.reads_constant[i] = contains(used, m.constants[i]);
  c.reads_duration = contains(used, kDuration);
  c.have_reads = true;
}

}  // namespace

MetricValue evaluate_metric(const MetricDef& metric, const std::vector<Reading>& readings,
                            std::optional<double> duration_ns, const MetricConstants* constants) {
  MetricValue out;
  try {
    Compiled& c = compiled(metric);
    update_reads(c, metric, constants);
    std::size_t missing = 0;
    switch (pick_inputs(metric, readings, c.reads_input, c.chosen, missing)) {
      case Pick::missing: out.error = fmt::format("{} was not counted", metric.events[missing].event); return out;
      case Pick::incompatible:
        out.error = incompatible_error(metric, readings, c.reads_input);
        out.incompatible = true;
        return out;
      case Pick::ok: break;
    }
    // An input the formula does not read with these constants is NaN: were it read after all,
    // the value would say so.
    for (std::size_t i = 0; i < metric.events.size(); ++i) {
      c.inputs[i] = std::numeric_limits<double>::quiet_NaN();
      if (!c.reads_input[i]) continue;
      const Reading* r = c.chosen[i];
      if (r->time_running == 0 && r->time_enabled > 0) {
        out.error = fmt::format("{} was never on a counter (<not counted>)", metric.events[i].event);
        return out;
      }
      c.inputs[i] = static_cast<double>(r->value);
      if (r->extrapolated || r->time_running < r->time_enabled) out.scaled = true;
    }
    c.duration = duration_ns.value_or(0.0);
    if (metric.uses_duration && !duration_ns && c.reads_duration) {
      out.error = "it needs duration_time, the wall-clock time of a measurement, which a simulated workload has not";
      return out;
    }
    for (std::size_t i = 0; i < metric.constants.size(); ++i) {
      c.consts[i] = std::numeric_limits<double>::quiet_NaN();
      if (!c.reads_constant[i]) continue;
      const std::optional<double> v = constant_value(constants, metric.constants[i]);
      if (!v) {
        const MetricConstant* k = constants ? constants->find(metric.constants[i]) : nullptr;
        out.error = fmt::format("it needs the constant {}: {}", metric.constants[i],
                                k ? k->source : "no constants were given (pmc::metric_constants)");
        return out;
      }
      c.consts[i] = *v;
    }
    const double v = c.parser.Eval();
    if (std::isfinite(v)) {
      out.value = v;
      return out;
    }
    std::vector<std::string> zeros;
    for (std::size_t i = 0; i < metric.events.size(); ++i)
      if (c.inputs[i] == 0.0) zeros.push_back(metric.events[i].event);
    if (metric.uses_duration && c.duration == 0.0) zeros.emplace_back(kDuration);
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

MetricInputReadings metric_input_readings(const MetricDef& metric, const std::vector<Reading>& readings,
                                          const MetricConstants* constants) {
  MetricInputReadings out;
  try {
    Compiled& c = compiled(metric);
    update_reads(c, metric, constants);
    out.readings.assign(metric.events.size(), nullptr);
    std::size_t missing = 0;
    switch (pick_inputs(metric, readings, c.reads_input, out.readings, missing)) {
      case Pick::missing: out.error = fmt::format("{} was not counted", metric.events[missing].event); break;
      case Pick::incompatible:
        out.error = incompatible_error(metric, readings, c.reads_input);
        out.incompatible = true;
        break;
      case Pick::ok: return out;
    }
  } catch (const mu::Parser::exception_type& e) {
    out.error = fmt::format("the formula of {} failed: {}", metric.name, e.GetMsg());
  }
  out.readings.clear();
  return out;
}

std::optional<bool> metric_threshold(const MetricDef& metric,
                                     const std::function<std::optional<double>(std::string_view)>& value_of) {
  if (metric.threshold.empty()) return std::nullopt;
  try {
    Compiled& c = compiled(metric);
    if (!c.threshold_parser) {
      c.threshold_names = detail::formula_reads(metric.threshold, [](std::string_view) { return std::nullopt; });
      c.threshold_values.assign(c.threshold_names.size(), 0.0);
      auto p = std::make_unique<mu::Parser>();
      for (std::size_t i = 0; i < c.threshold_names.size(); ++i) p->DefineVar(c.threshold_names[i], &c.threshold_values[i]);
      p->SetExpr(metric.threshold);
      c.threshold_parser = std::move(p);
    }
    for (std::size_t i = 0; i < c.threshold_names.size(); ++i) {
      const std::optional<double> v = value_of(c.threshold_names[i]);
      if (!v) return std::nullopt;
      c.threshold_values[i] = *v;
    }
    return c.threshold_parser->Eval() != 0;
  } catch (const std::invalid_argument&) {  // the loader checked it: not reached
    return std::nullopt;
  } catch (const mu::Parser::exception_type&) {
    return std::nullopt;
  }
}

}  // namespace pmc
