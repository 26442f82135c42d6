// pmc stat: metrics that form a tree (Intel's top-down analysis, AMD's pipeline utilization;
// MetricDef::level and parent) drawn as one, each node under its parent with its share and a
// mark where the vendor's threshold says it is a bottleneck (as perf and toplev mark them).
#include "stat.hpp"

#include <algorithm>
#include <cmath>

namespace pmc_cli {

namespace {

std::string bar(double percent) {
  const int width = 20;
  const int filled = static_cast<int>(std::lround(std::clamp(percent, 0.0, 100.0) * width / 100.0));
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), ' ') + "]";
}

void print_node(std::FILE* out, const std::vector<MetricRow>& rows, std::size_t i, int depth,
                std::vector<bool>& shown) {
  shown[i] = true;
  const MetricRow& m = rows[i];
  const std::string name = std::string(static_cast<std::size_t>(2 * depth), ' ') + m.def->name;
  if (m.value.value) {
    const double v = *m.value.value;
    const bool percent = !m.def->unit.empty() && m.def->unit[0] == '%';
    print_to(out, "  {:<40} {:>8.2f} {:<4} {}{}{}\n", name, v, m.def->unit, percent ? bar(v) : std::string(22, ' '),
             m.crossed.value_or(false) ? "  <== bottleneck" : "", m.value.scaled ? "  (from scaled counts)" : "");
  } else {
    print_to(out, "  {:<40} {:>8} {:<4} ({})\n", name, "-", m.def->unit, m.value.error);
  }
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (!shown[k] && in_tree(rows[k]) && rows[k].cpu == m.cpu && rows[k].def->parent == m.def->name)
      print_node(out, rows, k, depth + 1, shown);
}

}  // namespace

void mark_thresholds(std::vector<MetricRow>& metrics) {
  for (MetricRow& m : metrics) {
    if (m.def->threshold.empty() || !m.value.value) continue;
    m.crossed = pmc::metric_threshold(*m.def, [&](std::string_view name) -> std::optional<double> {
      for (const MetricRow& o : metrics)
        if (o.cpu == m.cpu && (o.def->name == name || std::find(o.def->aliases.begin(), o.def->aliases.end(),
                                                                  name) != o.def->aliases.end()))
          return o.value.value;
      return std::nullopt;
    });
  }
}

void print_tree(std::FILE* out, const std::vector<MetricRow>& metrics) {
  if (std::none_of(metrics.begin(), metrics.end(), in_tree)) return;
  std::vector<bool> shown(metrics.size(), false);
  std::vector<int> cpus;
  for (const MetricRow& m : metrics)
    if (in_tree(m) && std::find(cpus.begin(), cpus.end(), m.cpu) == cpus.end()) cpus.push_back(m.cpu);
  for (int cpu : cpus) {
    print_to(out, "\n Top-down tree{} (a child is part of its parent; <== marks a bottleneck, as the vendor defines it):\n\n",
             cpu >= 0 ? fmt::format(" of CPU{}", cpu) : "");
    // A root is a node whose parent is not among the rows (level 1, or a deeper level asked alone).
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const MetricRow& m = metrics[i];
      if (shown[i] || !in_tree(m) || m.cpu != cpu) continue;
      const bool has_parent = std::any_of(metrics.begin(), metrics.end(), [&](const MetricRow& o) {
        return o.cpu == cpu && in_tree(o) && o.def->name == m.def->parent;
      });
      if (!has_parent) print_node(out, metrics, i, 0, shown);
    }
  }
}

}  // namespace pmc_cli
