// Metrics as data (pmc/metrics.hpp, docs/metrics.md): the TOML loader with its checks, the parse
// cache of a loaded file, and the catalog's lookups.
#include <pmc/metrics.hpp>

#include "catalog_cache.hpp"
#include "formula.hpp"
#include "metric_parser.hpp"
#include "suggest.hpp"
#include "text.hpp"
#include "toml_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

bool is_builtin(std::string_view name) {
  const auto& names = metric_builtin_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Compiles the formula with a variable per input and per built-in name (duration_time and the
// machine constants); throws pmc::Error at the formula's position for anything muParser
// rejects. Fills uses_duration and constants. One parser serves a whole file (making one costs
// more than checking a formula with it).
void check_formula(const toml::table& t, MetricDef& m, mu::Parser& p) {
  const auto& builtins = metric_builtin_names();
  std::vector<double> values(m.events.size() + builtins.size(), 1.0);
  try {
    p.ClearVar();
    for (std::size_t i = 0; i < m.events.size(); ++i) p.DefineVar(m.events[i].variable, &values[i]);
    for (std::size_t i = 0; i < builtins.size(); ++i) p.DefineVar(builtins[i], &values[m.events.size() + i]);
    p.SetExpr(m.formula);
    (void)p.Eval();
    // The names it uses, by formula.hpp's walk: muParser's GetUsedVar would parse the formula a
    // second time, and vendor formulas run to thousands of characters.
    std::vector<std::string> used;
    try {
      used = detail::formula_reads(m.formula, [](std::string_view) { return std::nullopt; });
    } catch (const std::invalid_argument&) {
      for (const auto& [name, value] : p.GetUsedVar()) used.push_back(name);
    }
    for (const std::string& b : builtins) {
      if (std::find(used.begin(), used.end(), b) == used.end()) continue;
      if (b == "duration_time")
        m.uses_duration = true;
      else
        m.constants.push_back(b);
    }
  } catch (const mu::Parser::exception_type& e) {
    std::vector<std::string> names;
    for (const auto& in : m.events) names.push_back(in.variable);
    std::string what = e.GetMsg();
    const std::string token = e.GetToken();
    const bool unknown_name = !token.empty() && (std::isalpha(static_cast<unsigned char>(token[0])) || token[0] == '_');
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && unknown_name)
      what = fmt::format("'{}' is neither one of its events ({}) nor a built-in name ({})", token,
                         detail::join(names), detail::join(builtins));
    detail::fail_at(detail::node_of(t, "formula"), errc::parse,
                    fmt::format("metric {}: formula '{}', position {}: {}", m.name, m.formula, e.GetPos() + 1, what));
  }
}

MetricDef read_metric(const toml::table& t, const std::string& backend, mu::Parser& parser) {
  detail::check_keys(t,
                     {"name", "aliases", "group", "groups", "level", "parent", "threshold", "formula", "unit",
                      "description", "events", "cpus", "default"},
                     "[[metric]]");
  MetricDef m;
  m.name = *detail::get_string(t, "name", true);
  m.aliases = detail::get_strings(t, "aliases").value_or(std::vector<std::string>{});
  if (auto g = detail::get_string(t, "group")) m.groups.push_back(*g);
  for (auto& g : detail::get_strings(t, "groups").value_or(std::vector<std::string>{}))
    if (std::none_of(m.groups.begin(), m.groups.end(), [&](const std::string& o) { return iequal(o, g); }))
      m.groups.push_back(std::move(g));
  m.group = m.groups.empty() ? std::string() : m.groups.front();
  const std::int64_t level = detail::get_int(t, "level").value_or(0);
  if (level < 0 || level > 16)
    detail::fail_at(detail::node_of(t, "level"), errc::invalid_argument,
                    fmt::format("metric {}: level {} is not 0 to 16", m.name, level));
  m.level = static_cast<int>(level);
  m.parent = detail::get_string(t, "parent").value_or("");
  m.threshold = detail::get_string(t, "threshold").value_or("");
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
  // Empty only for a formula over built-in names alone (Intel's Info_System_Time: the duration).
  const std::vector<std::string> events = *detail::get_strings(t, "events", true);
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
    if (is_builtin(in.variable))
      detail::fail_at(detail::node_of(t, "events"), errc::invalid_argument,
                      fmt::format("metric {}: {} is built in, not an event", m.name, in.variable));
    m.events.push_back(std::move(in));
  }
  check_formula(t, m, parser);
  return m;
}

// A threshold names metrics of its own file (by name or alias: `4K_Aliasing` is no muParser
// name, `tma_4k_aliasing` is): each must be one, and muParser must accept it.
void check_threshold(const toml::table& t, const MetricDef& m, const std::vector<MetricDef>& file, mu::Parser& p) {
  auto fail = [&](const std::string& what) {
    detail::fail_at(detail::node_of(t, "threshold"), errc::parse,
                    fmt::format("metric {}: threshold '{}': {}", m.name, m.threshold, what));
  };
  std::vector<std::string> names;
  try {
    names = detail::formula_reads(m.threshold, [](std::string_view) { return std::nullopt; });
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  std::vector<double> values(names.size(), 1.0);
  p.ClearVar();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::none_of(file.begin(), file.end(), [&](const MetricDef& o) {
          return o.name == names[i] || std::find(o.aliases.begin(), o.aliases.end(), names[i]) != o.aliases.end();
        }))
      fail(fmt::format("'{}' is not a metric of this file", names[i]));
    p.DefineVar(names[i], &values[i]);
  }
  try {
    p.SetExpr(m.threshold);
    (void)p.Eval();
  } catch (const mu::Parser::exception_type& e) {
    fail(fmt::format("position {}: {}", e.GetPos() + 1, e.GetMsg()));
  }
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
  detail::define_metric_functions(parser);
  for (const auto& node : *arr) {
    MetricDef m = read_metric(*node.as_table(), backend, parser);
    for (const auto& other : file) {
      const bool same = iequal(other.name, m.name) ||
                        std::any_of(m.aliases.begin(), m.aliases.end(), [&](const std::string& a) {
                          return iequal(a, other.name) ||
                                 std::any_of(other.aliases.begin(), other.aliases.end(),
                                             [&](const std::string& b) { return iequal(a, b); });
                        }) ||
                        std::any_of(other.aliases.begin(), other.aliases.end(),
                                    [&](const std::string& b) { return iequal(b, m.name); });
      if (same)
        detail::fail_at(*node.as_table(), errc::invalid_argument,
                        fmt::format("metric {} is defined twice in this file (first at {})", m.name, other.source.str()));
    }
    file.push_back(std::move(m));
  }
  for (std::size_t i = 0; i < file.size(); ++i) {
    const toml::table& t = *(*arr)[i].as_table();
    if (!file[i].threshold.empty()) check_threshold(t, file[i], file, parser);
    if (!file[i].parent.empty() &&
        std::none_of(file.begin(), file.end(), [&](const MetricDef& o) { return o.name == file[i].parent; }))
      detail::fail_at(detail::node_of(t, "parent"), errc::invalid_argument,
                      fmt::format("metric {}: parent '{}' is not a metric of this file", file[i].name, file[i].parent));
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
  return fmt::format("metrics 2 {} {} {}", sizeof(MetricDef), sizeof(MetricInput), sizeof(SourceRef));
}

std::string encode_metrics(const std::vector<MetricDef>& defs) {
  detail::Writer w;
  w.u32(static_cast<std::uint32_t>(defs.size()));
  for (const MetricDef& m : defs) {
    for (const std::string* text : {&m.name, &m.formula, &m.unit, &m.description, &m.backend, &m.parent, &m.threshold})
      w.str(*text);
    w.strs(m.aliases);
    w.strs(m.groups);
    w.strs(m.constants);
    w.u32(static_cast<std::uint32_t>(m.level));
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
      for (std::string* text : {&m.name, &m.formula, &m.unit, &m.description, &m.backend, &m.parent, &m.threshold})
        *text = r.str();
      m.aliases = r.strs();
      m.groups = r.strs();
      m.group = m.groups.empty() ? std::string() : m.groups.front();
      m.constants = r.strs();
      m.level = static_cast<int>(r.u32());
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

bool in_group(const MetricDef& m, std::string_view group) {
  return std::any_of(m.groups.begin(), m.groups.end(), [&](const std::string& g) { return iequal(g, group); });
}

}  // namespace

void MetricCatalog::load(const std::filesystem::path& file) {
  const std::string key = detail::ParseCache::key(metrics_layout(), {file});
  std::optional<std::vector<MetricDef>> defs;
  if (!key.empty())
    if (auto payload = detail::ParseCache::load(key)) defs = decode_metrics(*payload);
  if (!defs) {
    defs = read_table(detail::parse_toml_file(file, InputKind::metrics));
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
  for (const auto& m : metrics_)
    for (const auto& a : m.aliases)
      if (iequal(a, name)) return &m;
  return nullptr;
}

std::vector<const MetricDef*> MetricCatalog::select(std::string_view name_or_group) const {
  std::vector<const MetricDef*> out;
  if (const MetricDef* m = find(name_or_group)) {
    out.push_back(m);
    return out;
  }
  for (const auto& m : metrics_)
    if (in_group(m, name_or_group)) out.push_back(&m);
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
  for (const auto& m : metrics_) {
    consider(m.name);
    for (const auto& a : m.aliases) consider(a);
  }
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
    for (const auto& g : m.groups)
      if (std::none_of(out.begin(), out.end(), [&](const std::string& o) { return iequal(o, g); })) out.push_back(g);
  return out;
}

}  // namespace pmc
