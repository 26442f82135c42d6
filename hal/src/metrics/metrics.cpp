// Metrics as data (pmc/metrics.hpp, docs/metrics.md): the TOML loader, availability for a Hal,
// and evaluation with muParser.
#include <pmc/hal.hpp>
#include <pmc/metrics.hpp>

#include "catalog_cache.hpp"
#include "suggest.hpp"
#include "text.hpp"
#include "toml_util.hpp"

#include <fmt/format.h>

#include <muParser.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace pmc {

namespace {

using detail::iequal;

// An event string as a formula variable: every character other than a letter, a digit or '_'
// becomes '_' ("task-clock" -> task_clock, "L2_LD:M" -> L2_LD_M).
std::string variable_of(std::string_view event) {
  std::string v(event);
  for (char& c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return v;
}

constexpr const char* kDuration = "duration_time";

// Compiles the formula with a variable per input (and duration_time); throws pmc::Error at the
// formula's position for anything muParser rejects. Returns whether it uses duration_time.
// One parser serves a whole file (making one costs more than checking a formula with it).
bool check_formula(const toml::table& t, const MetricDef& m, mu::Parser& p) {
  std::vector<double> values(m.events.size() + 1, 1.0);
  try {
    p.ClearVar();
    for (std::size_t i = 0; i < m.events.size(); ++i) p.DefineVar(m.events[i].variable, &values[i]);
    p.DefineVar(kDuration, &values.back());
    p.SetExpr(m.formula);
    (void)p.Eval();
    const auto& used = p.GetUsedVar();
    return used.find(kDuration) != used.end();
  } catch (const mu::Parser::exception_type& e) {
    std::vector<std::string> names;
    for (const auto& in : m.events) names.push_back(in.variable);
    std::string what = e.GetMsg();
    const std::string token = e.GetToken();
    const bool unknown_name = !token.empty() && (std::isalpha(static_cast<unsigned char>(token[0])) || token[0] == '_');
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && unknown_name)
      what = fmt::format("'{}' is neither one of its events ({}) nor duration_time", token, detail::join(names));
    detail::fail_at(detail::node_of(t, "formula"), errc::parse,
                    fmt::format("metric {}: formula '{}', position {}: {}", m.name, m.formula, e.GetPos() + 1, what));
  }
}

MetricDef read_metric(const toml::table& t, const std::string& backend, mu::Parser& parser) {
  detail::check_keys(t, {"name", "group", "formula", "unit", "description", "events", "cpus", "default"}, "[[metric]]");
  MetricDef m;
  m.name = *detail::get_string(t, "name", true);
  m.group = detail::get_string(t, "group").value_or("");
  m.formula = *detail::get_string(t, "formula", true);
  m.unit = detail::get_string(t, "unit").value_or("");
  m.description = detail::get_string(t, "description").value_or("");
  m.cpus = detail::get_strings(t, "cpus").value_or(std::vector<std::string>{});
  m.by_default = detail::get_bool(t, "default").value_or(false);
  m.backend = backend;
  m.source.file = detail::where(t);
  const auto& pos = t.source().begin;
  if (const auto& path = t.source().path) m.source.file = *path;
  m.source.line = pos.line;
  m.source.column = pos.column;
  const std::vector<std::string> events = *detail::get_strings(t, "events", true);
  if (events.empty())
    detail::fail_at(detail::node_of(t, "events"), errc::invalid_argument,
                    fmt::format("metric {}: 'events' names no event", m.name));
  for (const std::string& e : events) {
    MetricInput in;
    // "VARIABLE=EVENT" names the variable; otherwise the event string made a name.
    const auto eq = e.find('=');
    const bool named = eq != std::string::npos && eq > 0 && e.find(':') > eq;
    in.variable = named ? e.substr(0, eq) : variable_of(e);
    in.event = named ? e.substr(eq + 1) : e;
    const bool valid = !in.variable.empty() && !std::isdigit(static_cast<unsigned char>(in.variable[0])) &&
                       std::all_of(in.variable.begin(), in.variable.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       });
    if (!valid || in.event.empty())
      detail::fail_at(detail::node_of(t, "events"), errc::invalid_argument,
                      fmt::format("metric {}: '{}' is not EVENT or VARIABLE=EVENT (a variable is a letter or '_' "
                                  "followed by letters, digits and '_')",
                                  m.name, e));
    for (const auto& other : m.events)
      if (other.variable == in.variable)
        detail::fail_at(detail::node_of(t, "events"), errc::invalid_argument,
                        fmt::format("metric {}: variable '{}' stands for two events ('{}' and '{}')", m.name,
                                    in.variable, other.event, in.event));
    if (in.variable == kDuration)
      detail::fail_at(detail::node_of(t, "events"), errc::invalid_argument,
                      fmt::format("metric {}: duration_time is built in, not an event", m.name));
    m.events.push_back(std::move(in));
  }
  m.uses_duration = check_formula(t, m, parser);
  return m;
}

// The metrics of one file, checked.
std::vector<MetricDef> read_table(const toml::table& doc) {
  detail::check_keys(doc, {"backend", "description", "metric"}, "a metrics file");
  const std::string backend = detail::get_string(doc, "backend").value_or("");
  const toml::node* list = doc.get("metric");
  if (!list) return {};
  const toml::array* arr = list->as_array();
  if (!arr || !arr->is_array_of_tables())
    detail::fail_at(*list, errc::invalid_argument, "'metric' must be an array of tables ([[metric]])");
  std::vector<MetricDef> file;
  mu::Parser parser;
  for (const auto& node : *arr) {
    MetricDef m = read_metric(*node.as_table(), backend, parser);
    for (const auto& other : file)
      if (iequal(other.name, m.name))
        detail::fail_at(*node.as_table(), errc::invalid_argument,
                        fmt::format("metric {} is defined twice in this file (first at {})", m.name, other.source.str()));
    file.push_back(std::move(m));
  }
  return file;
}

// A later file's metric replaces the earlier one of the same name.
void merge(std::vector<MetricDef> file, std::vector<MetricDef>& out) {
  for (auto& m : file) {
    auto same = std::find_if(out.begin(), out.end(), [&](const MetricDef& o) { return iequal(o.name, m.name); });
    if (same != out.end())
      *same = std::move(m);
    else
      out.push_back(std::move(m));
  }
}

// The parse cache of a metrics file (catalog_cache.hpp): the checked metrics, so that a later
// load of the unchanged file parses no TOML and compiles no formula.
std::string metrics_layout() {
  return fmt::format("metrics {} {} {}", sizeof(MetricDef), sizeof(MetricInput), sizeof(SourceRef));
}

std::string encode_metrics(const std::vector<MetricDef>& defs) {
  detail::Writer w;
  w.u32(static_cast<std::uint32_t>(defs.size()));
  for (const MetricDef& m : defs) {
    for (const std::string* text : {&m.name, &m.group, &m.formula, &m.unit, &m.description, &m.backend}) w.str(*text);
    w.u32(static_cast<std::uint32_t>(m.events.size()));
    for (const MetricInput& in : m.events) {
      w.str(in.variable);
      w.str(in.event);
    }
    w.strs(m.cpus);
    detail::put(w, m.source);
    w.b(m.by_default);
    w.b(m.uses_duration);
  }
  return w.out;
}

std::optional<std::vector<MetricDef>> decode_metrics(const std::string& bytes) {
  try {
    detail::Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<MetricDef> defs(r.count());
    for (MetricDef& m : defs) {
      for (std::string* text : {&m.name, &m.group, &m.formula, &m.unit, &m.description, &m.backend}) *text = r.str();
      m.events.resize(r.count());
      for (MetricInput& in : m.events) {
        in.variable = r.str();
        in.event = r.str();
      }
      m.cpus = r.strs();
      m.source = detail::get_source(r);
      m.by_default = r.b();
      m.uses_duration = r.b();
    }
    if (r.p != r.end) return std::nullopt;
    return defs;
  } catch (const std::exception&) {  // a damaged file: parse the TOML instead
    return std::nullopt;
  }
}

bool is_hal_event(std::string_view event) {
  const EventSpec spec = parse_event(event);
  if (!spec.pmu.empty() && spec.pmu != "hal") return false;
  for (const auto& h : hal_events())
    if (iequal(spec.name, h.name) || (!h.alias.empty() && iequal(spec.name, h.alias))) return true;
  return false;
}

}  // namespace

void MetricCatalog::load(const std::filesystem::path& file) {
  const std::string key = detail::ParseCache::key(metrics_layout(), {file});
  std::optional<std::vector<MetricDef>> defs;
  if (!key.empty())
    if (auto payload = detail::ParseCache::load(key)) defs = decode_metrics(*payload);
  if (!defs) {
    defs = read_table(detail::parse_toml_file(file));
    detail::ParseCache::store(key, encode_metrics(*defs));
  }
  merge(std::move(*defs), metrics_);
  files_.push_back(file.string());
}

void MetricCatalog::load_string(std::string_view toml, const std::string& name) {
  merge(read_table(detail::parse_toml_string(toml, name)), metrics_);
  files_.push_back(name);
}

const MetricDef* MetricCatalog::find(std::string_view name) const {
  for (const auto& m : metrics_)
    if (iequal(m.name, name)) return &m;
  return nullptr;
}

std::vector<const MetricDef*> MetricCatalog::select(std::string_view name_or_group) const {
  std::vector<const MetricDef*> out;
  if (const MetricDef* m = find(name_or_group)) {
    out.push_back(m);
    return out;
  }
  for (const auto& m : metrics_)
    if (!m.group.empty() && iequal(m.group, name_or_group)) out.push_back(&m);
  return out;
}

std::vector<std::string> MetricCatalog::nearest(std::string_view name) const {
  std::vector<std::pair<std::size_t, std::string>> scored;
  auto consider = [&](const std::string& candidate) {
    const std::size_t d = detail::edit_distance(name, candidate);
    if (d > std::max<std::size_t>(2, name.size() / 3)) return;
    for (const auto& s : scored)
      if (iequal(s.second, candidate)) return;
    scored.emplace_back(d, candidate);
  };
  for (const auto& m : metrics_) consider(m.name);
  for (const auto& g : groups()) consider(g);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, n] : scored)
    if (out.size() < 3) out.push_back(std::move(n));
  return out;
}

std::vector<std::string> MetricCatalog::groups() const {
  std::vector<std::string> out;
  for (const auto& m : metrics_)
    if (!m.group.empty() && std::none_of(out.begin(), out.end(), [&](const std::string& g) { return iequal(g, m.group); }))
      out.push_back(m.group);
  return out;
}

MetricCatalog builtin_metrics(const Hal& hal) {
  MetricCatalog c;
  const std::filesystem::path dir = default_paths().data / "metrics";
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / "generic.toml", ec)) c.load(dir / "generic.toml");
  if (const BackendInfo* b = hal.backend()) {
    const std::filesystem::path own = dir / (b->name + ".toml");
    if (std::filesystem::is_regular_file(own, ec)) c.load(own);
  }
  return c;
}

std::string metric_unavailable(const Hal& hal, const MetricDef& metric) {
  const BackendInfo* backend = hal.backend();
  if (!metric.backend.empty() && (!backend || backend->name != metric.backend))
    return fmt::format("it is a metric of backend {}", metric.backend);
  if (!metric.cpus.empty() && std::find(metric.cpus.begin(), metric.cpus.end(), hal.pmu().cpu_tag) == metric.cpus.end())
    return fmt::format("it applies to the CPUs {} of backend {}, not this one ({})", detail::join(metric.cpus, ", "),
                       metric.backend, backend ? hal.pmu().cpu_tag : std::string("no backend"));
  for (const auto& in : metric.events) {
    if (is_hal_event(in.event)) continue;
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

MetricValue evaluate_metric(const MetricDef& metric, const std::vector<Reading>& readings,
                            std::optional<double> duration_ns) {
  MetricValue out;
  std::vector<double> values(metric.events.size(), 0.0);
  for (std::size_t i = 0; i < metric.events.size(); ++i) {
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
  }
  double duration = duration_ns.value_or(0.0);
  if (metric.uses_duration && !duration_ns) {
    out.error = "it needs duration_time, the wall-clock time of a measurement, which a simulated workload has not";
    return out;
  }
  try {
    mu::Parser p;
    for (std::size_t i = 0; i < metric.events.size(); ++i) p.DefineVar(metric.events[i].variable, &values[i]);
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
    out.error = zeros.empty() ? fmt::format("the formula '{}' gives {}", metric.formula, v)
                              : fmt::format("the formula '{}' divides by zero: {} counted 0", metric.formula,
                                            detail::join(zeros, " and "));
  } catch (const mu::Parser::exception_type& e) {
    out.error = fmt::format("the formula '{}' failed: {}", metric.formula, e.GetMsg());
  }
  return out;
}

}  // namespace pmc
