// pmc catalog import --metrics-out: the vendors' metric lists (Intel's <FOLDER>/metrics/*.json,
// perf's MetricName entries of amdzenN/*.json) to the metric files backends/<backend>/metrics/
// <tag>.toml (docs/hardware/intel-catalogs.md "Metrics"). Facts only: names, groups, levels,
// events, formulas (catalog_import_formula.cpp puts them in muParser's syntax), units and
// thresholds; the descriptions are generated from them.
#include "catalog_import_metrics.hpp"

#include <pmc/error.hpp>

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace pmc_cli::catalog_import {

std::vector<std::string> split_groups(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string g(text.substr(pos, end - pos));
    g.erase(0, g.find_first_not_of(' '));
    g.erase(g.find_last_not_of(' ') + 1);
    if (!g.empty() && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
    pos = end + 1;
  }
  return out;
}

namespace {

// The names a formula's variables must not take: the loader's built-in values and functions,
// and muParser's own.
bool reserved(const std::string& v) {
  static const std::set<std::string, std::less<>> names{
      "smt_on", "threads_per_core", "tsc_freq", "duration_time", "num_sockets", "cores_per_socket",
      "chas_per_socket", "num_cpus", "min", "max", "abs", "d_ratio", "sin", "cos", "tan", "asin", "acos", "atan",
      "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "log2", "log10", "log", "ln", "exp", "sqrt", "sign",
      "rint", "sum", "avg", "_pi", "_e"};
  return names.count(v) != 0;
}

}  // namespace

std::string Variables::of(const std::string& event) {
    if (auto it = var_.find(event); it != var_.end()) return it->second;
    std::string base;
    for (char c : event) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    std::string v = base;
    if (v.empty() || std::isdigit(static_cast<unsigned char>(v[0]))) v = "e_" + v, base = v;
    for (int n = 2; reserved(lower_case(v)) || taken_.count(lower_case(v)); ++n) v = fmt::format("{}_{}", base, n);
    taken_.insert(lower_case(v));
    var_.emplace(event, v);
    return v;
}

std::string Variables::entry(const std::string& event) const {
    const std::string& v = var_.at(event);
    std::string plain;
    for (char c : event) plain += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    return v == plain ? event : v + "=" + event;
}

void use(std::vector<std::string>& events, const std::string& e) {
  if (std::find(events.begin(), events.end(), e) == events.end()) events.push_back(e);
}

namespace {

std::string metric_toml(const Metric& m, const Variables& vars) {
  std::string out = fmt::format("\n[[metric]]\nname = {}\n", toml_string(m.name));
  if (!m.aliases.empty()) out += fmt::format("aliases = {}\n", toml_list(m.aliases));
  if (!m.groups.empty()) out += fmt::format("groups = {}\n", toml_list(m.groups));
  if (m.level > 0) out += fmt::format("level = {}\n", m.level);
  if (!m.parent.empty()) out += fmt::format("parent = {}\n", toml_string(m.parent));
  std::vector<std::string> entries;
  for (const auto& e : m.events) entries.push_back(m.short_vars.empty() ? vars.entry(e) : m.short_vars.at(e) + "=" + e);
  out += fmt::format("events = {}\nformula = {}\n", toml_list(entries), toml_string(m.formula));
  if (!m.unit.empty()) out += fmt::format("unit = {}\n", toml_string(m.unit));
  if (!m.threshold.empty()) out += fmt::format("threshold = {}\n", toml_string(m.threshold));
  return out + fmt::format("description = {}\n", toml_string(m.description));
}

}  // namespace

void settle_names(std::vector<Metric>& metrics, MetricFile& file) {
  std::set<std::string> names;
  std::vector<Metric> kept;
  for (auto& m : metrics) {
    if (!names.insert(lower_case(m.name)).second) {
      file.skipped.push_back(fmt::format("{}: a second metric of that name", m.name));
      continue;
    }
    kept.push_back(std::move(m));
  }
  std::set<std::string> aliases;
  for (auto& m : kept) {
    std::vector<std::string> ok;
    for (const auto& a : m.aliases)
      if ((lower_case(a) == lower_case(m.name) || !names.count(lower_case(a))) && aliases.insert(lower_case(a)).second)
        ok.push_back(a);
    m.aliases = std::move(ok);
  }
  metrics = std::move(kept);
}

std::string file_text(const std::string& head, const std::string& backend, const std::string& description,
                      const std::vector<Metric>& metrics, const Variables& vars, const MetricFile& f) {
  std::string out = comment(head);
  if (!f.skipped.empty()) {
    std::map<std::string, std::size_t> why;
    for (const auto& s : f.skipped) ++why[s.substr(s.find(": ") + 2)];
    std::string list;
    for (const auto& [reason, n] : why) list += fmt::format("{}{} ({})", list.empty() ? "" : "; ", reason, n);
    out += comment(fmt::format("Metrics left out: {}: {}.", f.skipped.size(), list));
  }
  if (f.thresholds_dropped)
    out += comment(fmt::format("Thresholds left out (they name a metric not written here, or use Intel's older "
                               "metric_TMA_ notation in fractions): {}.", f.thresholds_dropped));
  out += fmt::format("\nbackend = {}\ndescription = {}\n", toml_string(backend), toml_string(description));
  for (const auto& m : metrics) out += metric_toml(m, vars);
  return out;
}

// ------------------------------------------------------------------------------------------
// Intel

namespace {

constexpr std::size_t kMaxFormula = 20000;  // muParser's MaxLenExpression

// Intel's event spelling to the project's (the modifiers libpfm4 and our parser read); those
// with no counterpart stay as written, so the library says such a metric cannot be counted.
std::string intel_event(const std::string& name) {
  std::string out;
  std::size_t pos = 0;
  bool first = true;
  while (pos <= name.size()) {
    std::size_t end = name.find(':', pos);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(pos, end - pos);
    pos = end + 1;
    if (first) {
      out = part;
      first = false;
      continue;
    }
    const bool numbered = part.size() > 1 && std::all_of(part.begin() + 1, part.end(), [](char c) {
                            return std::isdigit(static_cast<unsigned char>(c));
                          });
    if (numbered && (part[0] == 'c' || part[0] == 'e' || part[0] == 'i'))
      out += fmt::format(":{}={}", part[0], part.substr(1));
    else if (part == "SUP" || part == "sup")
      out += ":k";
    else if (part == "USER" || part == "user")
      out += ":u";
    else if (part == "perf_metrics" || part == "percore")
      continue;
    else
      out += ":" + part;
  }
  return out;
}

// Intel's constants (by Name) as the loader's built-in values.
std::string intel_constant(const std::string& name) {
  static const std::map<std::string, std::string, std::less<>> table{
      {"HYPERTHREADING_ON", "smt_on"},
      {"THREADS_PER_CORE", "threads_per_core"},
      {"SYSTEM_TSC_FREQ", "tsc_freq"},
      {"DURATIONTIMEINMILLISECONDS", "(duration_time / 1e6)"},
      {"DURATIONTIMEINSECONDS", "(duration_time / 1e9)"},
      {"SOCKET_COUNT", "num_sockets"},
      {"CORES_PER_SOCKET", "cores_per_socket"},
      {"CHAS_PER_SOCKET", "chas_per_socket"},
      {"system.sockets[0].cpus.count * system.socket_count", "num_cpus"}};
  if (auto it = table.find(name); it != table.end()) return it->second;
  if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
      }))
    return name;
  throw Unsupported(fmt::format("Intel's constant {}", name));
}

std::string intel_unit(const std::string& u, const std::string& where) {
  if (u == "percent") return "%";
  if (u == "per instruction") return "per insn";
  if (u == "MB/sec") return "MB/s";
  if (u == "per second") return "/s";
  if (u == "ns" || u == "GHz" || u.empty()) return u;
  throw pmc::Error(pmc::errc::parse, fmt::format("{}: unknown UnitOfMeasure '{}'", where, u));
}

}  // namespace

std::optional<MetricFile> import_intel_metrics(const fs::path& folder, const IntelCatalog& cat, const ImportOptions& o) {
  // skylake_core.json -> skylake_metrics.json; alderlake_goldencove_core.json ->
  // alderlake_metrics_goldencove_core.json (the hybrid parts' lists are per core kind).
  const std::string stem = fs::path(cat.json_file).stem().string();
  const std::size_t us = stem.find('_');
  const std::string platform = stem.substr(0, us), rest = us == std::string::npos ? "" : stem.substr(us + 1);
  const std::string list = rest == "core" || rest.empty() ? platform + "_metrics.json"
                                                          : platform + "_metrics_" + rest + ".json";
  const fs::path file = folder / "metrics" / list;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  const nlohmann::json doc = read_json(file);
  if (!doc.is_object() || !doc.contains("Metrics") || !doc["Metrics"].is_array())
    throw pmc::Error(pmc::errc::parse, fmt::format("{}: no \"Metrics\" array", file.string()));
  const nlohmann::json header = doc.contains("Header") ? doc["Header"] : nlohmann::json::object();
  const std::string tma = member(header, "TmaVersion");

  MetricFile f;
  f.tag = cat.tag;
  f.source = list;
  f.listed = doc["Metrics"].size();
  Variables vars;
  std::vector<Metric> metrics;
  std::vector<const nlohmann::json*> source;  // the JSON of each metric written
  for (const auto& j : doc["Metrics"]) {
    Metric m;
    m.name = member(j, "MetricName");
    const std::string where = fmt::format("{}: metric '{}'", file.string(), m.name);
    if (m.name.empty()) throw pmc::Error(pmc::errc::parse, fmt::format("{}: a metric without MetricName", file.string()));
    try {
      std::map<std::string, std::string> alias_event, alias_const;
      for (const auto& e : j.value("Events", nlohmann::json::array()))
        alias_event[member(e, "Alias")] = intel_event(member(e, "Name"));
      for (const auto& c : j.value("Constants", nlohmann::json::array()))
        alias_const[member(c, "Alias")] = member(c, "Name");
      bool compact = false;
      const FormulaNames names = [&](const std::string& n) -> std::string {
        if (auto e = alias_event.find(n); e != alias_event.end()) {
          use(m.events, e->second);
          if (!compact) return vars.of(e->second);
          return m.short_vars.emplace(e->second, fmt::format("v{}", m.short_vars.size() + 1)).first->second;
        }
        if (auto c = alias_const.find(n); c != alias_const.end()) return intel_constant(c->second);
        if (n == "#NA") throw Unsupported("Intel gives no value (#NA)");
        if (n == "DURATIONTIMEINSECONDS") return intel_constant(n);
        throw BadFormula(fmt::format("'{}' is neither an event nor a constant of the metric", n));
      };
      m.formula = translate_formula(member(j, "Formula"), Dialect::intel, names).text;
      // muParser takes at most 20000 characters: the longest of Intel's formulas (some
      // Bottleneck_* ones) get short variables (VAR=EVENT) and no spaces.
      if (m.formula.size() > kMaxFormula) {
        compact = true;
        m.formula = translate_formula(member(j, "Formula"), Dialect::intel, names, {}, true).text;
        if (m.formula.size() > kMaxFormula)
          throw Unsupported(fmt::format("a formula longer than muParser takes ({} characters)", m.formula.size()));
      }
    } catch (const Unsupported& u) {
      f.skipped.push_back(fmt::format("{}: {}", m.name, u.what()));
      continue;
    } catch (const BadFormula& b) {
      throw pmc::Error(pmc::errc::parse, fmt::format("{}: formula: {}", where, b.what()));
    }
    const bool is_tma = member(j, "Category") == "TMA";
    const std::string parent = member(j, "ParentCategory");
    const bool tree = is_tma && (!parent.empty() || (m.name.rfind("Info_", 0) != 0 && m.name.rfind("Bottleneck_", 0) != 0));
    const int level = j.value("Level", 0);
    m.groups = split_groups(member(j, "MetricGroup"));
    const std::vector<std::string> intel_groups = m.groups;
    if (tree && level > 0) {
      m.level = level;
      for (const auto& g : {fmt::format("TopdownL{}", level), fmt::format("tma_L{}_group", level)})
        if (std::find(m.groups.begin(), m.groups.end(), g) == m.groups.end()) m.groups.push_back(g);
    }
    if (tree && !parent.empty()) {
      m.parent = parent;
      const std::string g = fmt::format("tma_{}_group", lower_case(parent));
      if (std::find(m.groups.begin(), m.groups.end(), g) == m.groups.end()) m.groups.push_back(g);
    }
    if (is_tma) m.aliases.push_back("tma_" + lower_case(m.name));
    else if (lower_case(m.name) != m.name) m.aliases.push_back(lower_case(m.name));
    m.unit = intel_unit(member(j, "UnitOfMeasure"), fmt::format("{}: metric '{}'", file.string(), m.name));

    std::string desc = o.vendor_descriptions ? member(j, "BriefDescription") : std::string();
    if (desc.empty()) {
      const std::string unit = m.unit.empty() ? "" : ", " + m.unit;
      const std::string groups = intel_groups.empty() ? "" : fmt::format(" (groups {})", fmt::format("{}", fmt::join(intel_groups, ", ")));
      const std::string domain = member(j, "CountDomain");
      const std::string of = m.unit != "%" ? ""
                             : domain.find("Slots") != std::string::npos ? " of issue slots"
                             : domain.find("Clocks") != std::string::npos ? " of cycles"
                                                                            : "";
      if (tree)
        desc = fmt::format("{}: top-down level {}{}{} (Intel TMA {})", name_words(m.name), level,
                           parent.empty() ? "" : " under " + parent, m.unit.empty() ? "" : ", in " + m.unit + of, tma);
      else if (is_tma)
        desc = fmt::format("{}: Intel TMA {} {} metric{}{}", name_words(m.name), tma,
                           m.name.rfind("Bottleneck_", 0) == 0 ? "bottleneck" : "info", groups, unit);
      else
        desc = fmt::format("{}: Intel metric{}{}", name_words(m.name), groups, unit);
    }
    m.description = desc;
    m.tma = is_tma;
    metrics.push_back(std::move(m));
    source.push_back(&j);
  }

  // Thresholds name metrics by LegacyName: the written ones by MetricName, or by their alias
  // where the name is no muParser variable (4K_Aliasing: tma_4k_aliasing).
  const auto variable = [](const std::string& v) {
    return !v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])) &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  std::map<std::string, std::string> legacy;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const Metric& m = metrics[i];
    if (variable(m.name)) legacy[member(*source[i], "LegacyName")] = m.name;
    else if (!m.aliases.empty() && variable(m.aliases.front())) legacy[member(*source[i], "LegacyName")] = m.aliases.front();
  }
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const auto t = source[i]->find("Threshold");
    if (t == source[i]->end() || !t->is_object()) continue;
    const std::string text = member(*t, "Formula");
    if (text.empty()) continue;
    if (text.find("metric_TMA_") != std::string::npos) {
      ++f.thresholds_dropped;
      continue;
    }
    std::map<std::string, std::string> alias;
    for (const auto& a : t->value("ThresholdMetrics", nlohmann::json::array()))
      alias[member(a, "Alias")] = member(a, "Value");
    try {
      const FormulaNames names = [&](const std::string& n) -> std::string {
        const auto a = alias.find(n);
        if (a == alias.end()) throw BadFormula(fmt::format("'{}' names no metric of the threshold", n));
        const auto l = legacy.find(a->second);
        if (l == legacy.end()) throw Unsupported(a->second);
        return l->second;
      };
      metrics[i].threshold = translate_formula(text, Dialect::intel, names).text;
    } catch (const Unsupported&) {
      ++f.thresholds_dropped;
    } catch (const BadFormula& b) {
      throw pmc::Error(pmc::errc::parse,
                       fmt::format("{}: metric '{}': threshold: {}", file.string(), metrics[i].name, b.what()));
    }
  }
  settle_names(metrics, f);
  f.written = metrics.size();
  f.tma = static_cast<std::size_t>(std::count_if(metrics.begin(), metrics.end(), [](const Metric& m) { return m.tma; }));

  std::string others;
  for (const auto& e : fs::directory_iterator(folder / "metrics", ec))
    if (e.path().extension() == ".json" && e.path().filename() != list) others += " " + e.path().filename().string();
  std::string head = fmt::format(
      "Generated by `pmc catalog import --layout intel --metrics-out` from Intel's perfmon {}/metrics/{} (version {}, "
      "published {}, TMA {}); do not edit: rerun scripts/regen-catalogs.sh. Intel {}: the metrics of the core "
      "catalog cpu/{}.toml. Facts only: names, groups, levels, events, formulas (in muParser's syntax), units and "
      "thresholds; the descriptions are {}. {} of Intel's {} metrics written, {} of them TMA.",
      cat.folder, list, member(header, "Version"), member(header, "DatePublished"), tma.empty() ? "none" : tma,
      cat.name, cat.tag, o.vendor_descriptions ? "Intel's, under Intel's licence" : "generated", f.written, f.listed,
      f.tma);
  if (!others.empty())
    head += fmt::format(" The folder's other lists ({}) are not this catalog's: {} is the one named like the "
                        "events file {}.", others.substr(1), list, cat.json_file);
  const std::string text = file_text(head, "archperf", fmt::format("Intel {} metrics ({}{})", cat.name, list,
                                                                   tma.empty() ? "" : ", TMA " + tma),
                                     metrics, vars, f);
  write_text(o.metrics_out / (cat.tag + ".toml"), text);
  return f;
}

void print_metric_files(const std::vector<MetricFile>& files) {
  if (files.empty()) return;
  print("{:<10} {:<42} {:>6} {:>7} {:>5} {:>7} {:>10}\n", "metrics", "list", "listed", "written", "TMA", "skipped",
        "thresholds");
  for (const auto& f : files)
    print("{:<10} {:<42} {:>6} {:>7} {:>5} {:>7} {:>10}\n", f.tag, f.source, f.listed, f.written, f.tma,
          f.skipped.size(), f.thresholds_dropped);
  for (const auto& f : files)
    for (const auto& s : f.skipped) print("{} skipped {}\n", f.tag, s);
}

}  // namespace pmc_cli::catalog_import
