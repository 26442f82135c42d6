// pmc catalog import --layout perf --metrics-out: the metrics of Linux perf's AMD lists (the
// MetricName entries of amdzenN/*.json, pipeline.json and recommended.json) to the amd backend's
// metrics/zenN.toml. A metric that names another has that one's formula inlined, unscaled, as
// perf computes it; the ScaleUnit's factor multiplies the formula and its rest is the unit.
#include "catalog_import_metrics.hpp"

#include <pmc/error.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/ranges.h>

namespace pmc_cli::catalog_import {

namespace {

struct PerfMetric {
  const nlohmann::json* json = nullptr;
  std::string file;  // "pipeline.json"
};

struct Translated {
  Formula formula;
  std::vector<std::string> events;
};

// perf's `cpu@event\,cmask\=0x6@` as the project's event string ("event:c=6"); terms with no
// counterpart stay as written (the library then says the metric cannot be counted).
std::string pmu_event(const std::string& token) {
  const std::size_t at = token.find('@');
  std::string body;
  for (std::size_t i = at + 1; i + 1 < token.size(); ++i)
    if (token[i] != '\\') body += token[i];
  std::string out;
  std::size_t pos = 0;
  while (pos <= body.size()) {
    std::size_t end = body.find(',', pos);
    if (end == std::string::npos) end = body.size();
    const std::string term = body.substr(pos, end - pos);
    pos = end + 1;
    if (out.empty()) {
      if (term.find('=') != std::string::npos) throw Unsupported(fmt::format("a raw perf event ({})", token));
      out = term;
      continue;
    }
    const std::size_t eq = term.find('=');
    const std::string key = term.substr(0, eq), value = eq == std::string::npos ? "1" : term.substr(eq + 1);
    if (key == "cmask")
      out += fmt::format(":c={}", parse_number(value, token));
    else if (key == "inv")
      out += fmt::format(":i={}", parse_number(value, token));
    else if (key == "edge")
      out += fmt::format(":e={}", parse_number(value, token));
    else
      out += ":" + term;
  }
  return out;
}

class PerfList {
 public:
  PerfList(std::map<std::string, PerfMetric> defs, Variables& vars) : defs_(std::move(defs)), vars_(vars) {}

  // The metric's formula, unscaled, and the events it reads (through the metrics it names too).
  const Translated& get(const std::string& name) {
    if (auto it = done_.find(name); it != done_.end()) return it->second;
    if (active_.count(name)) throw BadFormula(fmt::format("metric '{}' refers to itself", name));
    active_.insert(name);
    Translated t;
    t.formula = translate(member(*defs_.at(name).json, "MetricExpr"), {}, t.events);
    active_.erase(name);
    return done_.emplace(name, std::move(t)).first->second;
  }

  Formula translate(const std::string& expr, std::string_view scale, std::vector<std::string>& events) {
    const FormulaNames names = [&](const std::string& n) -> std::string {
      if (defs_.count(n)) {
        const Translated& sub = get(n);
        for (const auto& e : sub.events) use(events, e);
        return sub.formula.operand ? sub.formula.text : "(" + sub.formula.text + ")";
      }
      if (n == "#smt_on") return "smt_on";
      if (n == "#num_cpus_online") return "num_cpus";
      if (n == "#num_packages") return "num_sockets";
      if (n == "duration_time") return "duration_time";
      if (n[0] == '#') throw Unsupported(fmt::format("perf's literal {}", n));
      std::string event = n.find('@') != std::string::npos ? pmu_event(n) : n;
      event.erase(std::remove(event.begin(), event.end(), '\\'), event.end());
      use(events, event);
      return vars_.of(event);
    };
    return translate_formula(expr, Dialect::perf, names, scale);
  }

 private:
  std::map<std::string, PerfMetric> defs_;
  Variables& vars_;
  std::map<std::string, Translated> done_;
  std::set<std::string> active_;
};

}  // namespace

MetricFile import_perf_metrics(const fs::path& folder, const std::string& tag, const ImportOptions& o) {
  MetricFile f;
  f.tag = tag;
  f.source = folder.filename().string();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<nlohmann::json> docs;
  docs.reserve(files.size());  // the metrics point into them
  std::map<std::string, PerfMetric> defs;
  std::vector<std::string> order;
  std::set<std::string> lists;
  for (const auto& file : files) {
    docs.push_back(read_json(file));
    if (!docs.back().is_array()) continue;
    for (const auto& j : docs.back()) {
      if (!j.is_object() || !j.contains("MetricName")) continue;
      const std::string name = member(j, "MetricName");
      ++f.listed;
      lists.insert(file.filename().string());
      if (!defs.emplace(name, PerfMetric{&j, file.filename().string()}).second) {
        f.skipped.push_back(fmt::format("{}: a second metric of that name", name));
        continue;
      }
      order.push_back(name);
    }
  }

  Variables vars;
  PerfList list(defs, vars);
  std::vector<Metric> metrics;
  for (const auto& name : order) {
    const PerfMetric& p = defs.at(name);
    const nlohmann::json& j = *p.json;
    Metric m;
    m.name = name;
    // ScaleUnit: a factor, then the unit ("100%", "1ns", "6.103515625e-5MiB").
    const std::string scale_unit = member(j, "ScaleUnit");
    char* end = nullptr;
    std::strtod(scale_unit.c_str(), &end);
    const auto digits = static_cast<std::size_t>(end - scale_unit.c_str());
    const std::string scale = scale_unit.substr(0, digits);
    m.unit = scale_unit.substr(digits);
    try {
      m.formula = list.translate(member(j, "MetricExpr"), scale, m.events).text;
    } catch (const Unsupported& u) {
      f.skipped.push_back(fmt::format("{}: {}", name, u.what()));
      continue;
    } catch (const BadFormula& b) {
      throw pmc::Error(pmc::errc::parse,
                       fmt::format("{}: metric '{}': formula: {}", (folder / p.file).string(), name, b.what()));
    }
    m.groups = split_groups(member(j, "MetricGroup"));
    const std::vector<std::string> perf_groups = m.groups;
    for (const auto& g : perf_groups) {
      if (g.rfind("PipelineL", 0) == 0 && g.size() > 9 &&
          std::all_of(g.begin() + 9, g.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        m.level = std::stoi(g.substr(9));
        if (std::find(m.groups.begin(), m.groups.end(), "TopdownL" + g.substr(9)) == m.groups.end())
          m.groups.push_back("TopdownL" + g.substr(9));
      }
      if (g.size() > 6 && g.compare(g.size() - 6, 6, "_group") == 0 && defs.count(g.substr(0, g.size() - 6)))
        m.parent = g.substr(0, g.size() - 6);
    }
    if (lower_case(name) != name) m.aliases.push_back(lower_case(name));
    // perf's threshold, if any, over metric names.
    if (const std::string t = member(j, "MetricThreshold"); !t.empty()) {
      try {
        const FormulaNames names = [&](const std::string& n) -> std::string {
          if (!defs.count(n)) throw Unsupported(n);
          return n;
        };
        m.threshold = translate_formula(t, Dialect::perf, names).text;
      } catch (const Unsupported&) {
        ++f.thresholds_dropped;
      } catch (const BadFormula& b) {
        throw pmc::Error(pmc::errc::parse,
                         fmt::format("{}: metric '{}': threshold: {}", (folder / p.file).string(), name, b.what()));
      }
    }
    std::string desc = o.vendor_descriptions ? member(j, "BriefDescription") : std::string();
    if (desc.empty()) {
      const std::string unit = m.unit.empty() ? "" : ", " + m.unit;
      if (m.level > 0)
        desc = fmt::format("{}: AMD pipeline utilization level {}{}{}", name_words(name), m.level,
                           m.parent.empty() ? "" : " under " + m.parent,
                           m.unit == "%" ? ", in % of dispatch slots" : unit);
      else if (!perf_groups.empty())
        desc = fmt::format("{}: AMD metric (groups {}){}", name_words(name), fmt::join(perf_groups, ", "), unit);
      else
        desc = fmt::format("{}: AMD metric{}", name_words(name), unit);
      if (!member(j, "PerPkg").empty() && member(j, "PerPkg") != "0") desc += ", one value per package";
    }
    m.description = desc;
    metrics.push_back(std::move(m));
  }
  settle_names(metrics, f);
  f.written = metrics.size();
  std::string files_read;
  for (const auto& l : lists) files_read += (files_read.empty() ? "" : ", ") + l;
  const std::string head = fmt::format(
      "Generated by `pmc catalog import --layout perf --metrics-out` from Linux perf's {} list ({}); do not edit: "
      "rerun scripts/regen-catalogs.sh. AMD {}: perf's metrics with the metrics they name inlined. Facts only: "
      "names, groups, events, formulas (in muParser's syntax), units; the descriptions are {}. {} of perf's {} "
      "metrics written.",
      f.source, files_read, tag, o.vendor_descriptions ? "perf's (GPL-2.0 text)" : "generated", f.written, f.listed);
  write_text(o.metrics_out / (tag + ".toml"),
             file_text(head, "amd", fmt::format("AMD {} metrics (Linux perf's {} list)", tag, f.source), metrics, vars, f));
  return f;
}

}  // namespace pmc_cli::catalog_import
