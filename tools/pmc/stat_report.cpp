// pmc stat: the reports. The table and the CSV (-x) keep perf stat's columns and units (msec for
// the clock events, <not supported> and <not counted>, the multiplexing percentage, +- noise
// with -r, a metric beside the event it is computed from); JSON carries the same in keys.
#include "stat.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace pmc_cli {

namespace {

bool counted(const pmc::Reading& r) { return r.time_running > 0 || r.time_enabled == 0; }

std::string value_text(const Row& row) {
  if (!row.reading) return "<not supported>";
  const pmc::Reading& r = *row.reading;
  if (!counted(r)) return "<not counted>";
  return r.unit == "ns" ? msec(r.value) : group_digits(r.value);
}

std::string unit_text(const Row& row) {
  if (!row.reading) return "";
  return row.reading->unit == "ns" ? "msec" : row.reading->unit;
}

std::string cpu_column(const Row& row) { return row.cpu >= 0 ? fmt::format("CPU{:<4}", row.cpu) : std::string(); }

double percent_running(const pmc::Reading& r) {
  return r.time_enabled ? 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled) : 100.0;
}

// Which row each metric is shown on: the row of its first input that has no metric yet (the
// same CPU); -1: a line of its own.
std::vector<int> place_metrics(const std::vector<Row>& rows, const std::vector<MetricRow>& metrics) {
  std::vector<int> where(metrics.size(), -1);
  std::vector<bool> taken(rows.size(), false);
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    if (!metrics[m].value.value || in_tree(metrics[m])) continue;
    std::vector<pmc::Reading> readings;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].reading && rows[i].cpu == metrics[m].cpu) {
        readings.push_back(*rows[i].reading);
        index.push_back(i);
      }
    for (const auto& in : metrics[m].def->events) {
      const pmc::Reading* r = pmc::metric_reading(readings, in.event);
      if (!r) continue;
      const std::size_t row = index[static_cast<std::size_t>(r - readings.data())];
      if (taken[row]) continue;
      taken[row] = true;
      where[m] = static_cast<int>(row);
      break;
    }
  }
  return where;
}

// A count's rate per second of task-clock (perf's note for plain counts), when there is one.
std::optional<double> rate(const Row& row, const std::vector<Row>& rows) {
  if (!row.reading || !row.reading->unit.empty() || !counted(*row.reading)) return std::nullopt;
  for (const Row& r : rows)
    if (r.reading && r.cpu == row.cpu && r.reading->hal && (r.reading->name == "task-clock" || r.reading->name == "cpu-clock") &&
        r.reading->value > 0)
      return static_cast<double>(row.reading->value) * 1e9 / static_cast<double>(r.reading->value);
  return std::nullopt;
}

std::string row_note(const Row& row, const std::vector<Row>& rows, const MetricRow* metric) {
  std::string note;
  if (metric) {
    note = "# " + metric_note(*metric);
  } else if (row.reading && counted(*row.reading) && row.reading->unit == "ticks") {
    const pmc::TscFrequency f = pmc::tsc_frequency();
    if (f.hz > 0)
      note = fmt::format("# {:.6f} s at {:.4f} GHz +- {:.2g}% ({})", static_cast<double>(row.reading->value) / f.hz,
                         f.hz / 1e9, 100 * f.uncertainty_hz / f.hz, f.method);
  } else if (auto per_s = rate(row, rows)) {
    note = fmt::format("# {:>12}", per_second(*per_s));
  }
  if (row.reading && counted(*row.reading) && row.reading->time_running < row.reading->time_enabled)
    note += fmt::format("  ({:.2f}%)", percent_running(*row.reading));
  if (row.noise) note += fmt::format("  ( +-{:6.2f}% )", *row.noise);
  return note;
}

}  // namespace

void report_text(std::FILE* out, const Measured& m, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics,
                 const char* title, bool metric_only) {
  const std::string what = m.command.empty() ? m.target : fmt::format("'{}'", quote_command(m.command));
  print_to(out, "\n {} for {}{}:\n\n", title, what, m.runs > 1 ? fmt::format(" ({} runs)", m.runs) : "");
  const std::vector<int> where = metric_only ? std::vector<int>(metrics.size(), -1) : place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size() && !metric_only; ++i) {
    const MetricRow* metric = nullptr;
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) metric = &metrics[k];
    print_to(out, "{}{:>18} {:<6} {:<28} {}\n", cpu_column(rows[i]), value_text(rows[i]), unit_text(rows[i]),
             rows[i].event, row_note(rows[i], rows, metric));
  }
  for (std::size_t k = 0; k < metrics.size(); ++k)
    if (where[k] < 0 && !in_tree(metrics[k]))
      print_to(out, "{}{:>18} {:<6} {:<28} # {}\n", metrics[k].cpu >= 0 ? fmt::format("CPU{:<4}", metrics[k].cpu) : "",
               "", "", metrics[k].def->name, metric_note(metrics[k]));
  print_tree(out, metrics);
  if (m.elapsed_ns) {
    const double seconds = static_cast<double>(m.elapsed_ns) / 1e9;
    if (m.runs > 1)
      print_to(out, "\n{:>18.9f} +- {:.9f} seconds time elapsed  ( +-{:6.2f}% )\n\n", seconds,
               seconds * m.elapsed_noise / 100.0, m.elapsed_noise);
    else
      print_to(out, "\n{:>18.9f} seconds time elapsed\n\n", seconds);
  }
  if (!m.command.empty() && m.runs == 1) {
    print_to(out, "{:>18.9f} seconds user\n", m.child.user_seconds);
    print_to(out, "{:>18.9f} seconds sys\n\n", m.child.system_seconds);
  }
}

void report_csv(std::FILE* out, const std::string& sep, const std::vector<Row>& rows,
                const std::vector<MetricRow>& metrics, const std::string& prefix) {
  const std::vector<int> where = place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::string line = prefix;
    if (row.cpu >= 0) line += fmt::format("CPU{}{}", row.cpu, sep);
    std::string value = "<not supported>", runtime = "0", percent = "100.00";
    if (row.reading) {
      const pmc::Reading& r = *row.reading;
      value = !counted(r) ? "<not counted>"
                          : r.unit == "ns" ? fmt::format("{:.2f}", static_cast<double>(r.value) / 1e6) : std::to_string(r.value);
      runtime = std::to_string(r.time_running);
      percent = fmt::format("{:.2f}", counted(r) ? percent_running(r) : 0.0);
    }
    line += fmt::format("{}", fmt::join(std::vector<std::string>{value, unit_text(row), row.event, runtime, percent}, sep));
    if (row.noise) line += fmt::format("{}{:.2f}%", sep, *row.noise);
    std::string metric_value, metric_unit;
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) {
        metric_value = fmt::format("{:.3f}", *metrics[k].value.value);
        metric_unit = metrics[k].def->unit;
      }
    if (metric_value.empty())
      if (auto per_s = rate(row, rows)) {
        const std::string text = per_second(*per_s);  // "7.968 K/sec"
        metric_value = text.substr(0, text.find(' '));
        metric_unit = text.substr(text.find(' ') + 1);
      }
    print_to(out, "{}{}{}{}{}\n", line, sep, metric_value, sep, metric_unit);
  }
  for (std::size_t k = 0; k < metrics.size(); ++k) {
    if (where[k] >= 0) continue;
    const MetricRow& mr = metrics[k];
    std::string line = prefix;
    if (mr.cpu >= 0) line += fmt::format("CPU{}{}", mr.cpu, sep);
    const std::string value = mr.value.value ? fmt::format("{:.3f}", *mr.value.value) : std::string();
    const std::vector<std::string> cols{"", "", mr.def->name, "", "", value, mr.value.value ? mr.def->unit : mr.value.error};
    print_to(out, "{}{}\n", line, fmt::join(cols, sep));
  }
}

json rows_json(const std::vector<Row>& rows) {
  std::vector<pmc::Reading> readings;
  std::vector<const Row*> counted_rows;
  for (const Row& r : rows)
    if (r.reading) {
      readings.push_back(*r.reading);
      counted_rows.push_back(&r);
    }
  json counters = counters_json(readings);
  for (std::size_t i = 0; i < counted_rows.size(); ++i) {
    counters[i]["event"] = counted_rows[i]->event;  // with the :u a default may have got
    if (counted_rows[i]->noise) counters[i]["noise_percent"] = *counted_rows[i]->noise;
  }
  return counters;
}

json not_supported_json(const std::vector<Row>& rows) {
  json out = json::array();
  for (const Row& r : rows)
    if (!r.reading) out.push_back({{"event", r.event}, {"reason", r.reason}});
  return out;
}

json metrics_json(const std::vector<MetricRow>& metrics) {
  json out = json::array();
  for (const MetricRow& m : metrics) {
    json j{{"name", m.def->name},
           {"group", m.def->group},
           {"unit", m.def->unit},
           {"value", m.value.value ? json(*m.value.value) : json(nullptr)}};
    if (!m.value.value) j["error"] = m.value.error;
    if (m.def->groups.size() > 1) j["groups"] = m.def->groups;
    if (m.def->level > 0) j["level"] = m.def->level;
    if (!m.def->parent.empty()) j["parent"] = m.def->parent;
    if (m.crossed) j["bottleneck"] = *m.crossed;
    if (m.value.scaled) j["scaled"] = true;
    if (m.cpu >= 0) j["cpu"] = m.cpu;
    out.push_back(std::move(j));
  }
  return out;
}

void report_interval_text(std::FILE* out, double seconds, const std::vector<Row>& rows,
                          const std::vector<MetricRow>& metrics, bool header) {
  if (header) print_to(out, "#{:>19} {:>18} {:<6} {}\n", "time", "counts", "unit", "events");
  const std::vector<int> where = place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MetricRow* metric = nullptr;
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) metric = &metrics[k];
    print_to(out, "{:>20.9f} {}{:>18} {:<6} {:<28} {}\n", seconds, cpu_column(rows[i]), value_text(rows[i]),
             unit_text(rows[i]), rows[i].event, row_note(rows[i], rows, metric));
  }
}

void report_table(std::FILE* out, const std::vector<std::string>& command, const std::vector<pmc::Reading>& readings,
                  const pmc::ChildResult& run, const char* title) {
  std::vector<Row> rows;
  for (const auto& r : readings) rows.push_back({r.event, r, {}, r.cpu, std::nullopt});
  Measured m;
  m.command = command;
  m.child = run;
  m.elapsed_ns = run.elapsed_ns;
  report_text(out, m, rows, {}, title);
}

// ---------------------------------------------------------------------------------------------
// A simulated workload.

json run_json(const pmc::Hal& hal, const SimulatedRun& run) {
  return json{{"workload", run.workload.name},
              {"file", run.workload.source},
              {"backend", hal.pmu().name},
              {"pmu", hal.pmu().description},
              {"access", hal.access()},
              {"cycles", run.stats.cycles},
              {"interrupts", run.stats.interrupts},
              {"cycles_not_counted", run.stats.cycles_not_counted},
              {"runs", run.passes},
              {"counters", counters_json(run.readings)}};
}

void print_counts(const pmc::Hal& hal, const SimulatedRun& run, const char* what, const std::vector<MetricRow>& metrics,
                  bool metric_only) {
  print("\n {} for workload '{}' ({})\n", what, run.workload.name, run.workload.source);
  print(" on the simulated {}:\n\n", hal.pmu().description);
  std::vector<Row> rows;
  for (const auto& r : run.readings) rows.push_back({r.event, r, {}, -1, std::nullopt});
  const std::vector<int> where = metric_only ? std::vector<int>(metrics.size(), -1) : place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size() && !metric_only; ++i) {
    const pmc::Reading& r = run.readings[i];
    std::string note = fmt::format("# {} (counter {})", r.canonical, r.counter);
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) note = "# " + metric_note(metrics[k]);
    if (r.extrapolated || r.time_running < r.time_enabled)
      note += fmt::format("  ({:.2f}%, scaled)", percent_running(r));
    print("{:>20}      {:<28} {}\n", counted(r) ? group_digits(r.value) : "<not counted>", r.event, note);
  }
  for (std::size_t k = 0; k < metrics.size(); ++k)
    if (where[k] < 0 && !in_tree(metrics[k]))
      print("{:>20}      {:<28} # {}\n", "", metrics[k].def->name, metric_note(metrics[k]));
  print_tree(stdout, metrics);
  print("\n{:>20}      cycles simulated\n", group_digits(run.stats.cycles));
  if (run.passes > 1)
    print("{:>20}      runs of the workload: its events do not fit the counters at once, and each run counted a "
          "set that does\n",
          run.passes);
  if (run.stats.interrupts) print("{:>20}      overflow interrupts\n", group_digits(run.stats.interrupts));
  if (run.stats.cycles_not_counted)
    print("{:>20}      cycles not counted: they ran on other CPUs of the workload, and the session counts the\n"
          "{:>20}      simulated CPU 0 (the pfm(7) shim, <pmc/pfm.h>, counts each CPU: PCNTOPENEACH)\n",
          group_digits(run.stats.cycles_not_counted), "");
  print("\n");
}

}  // namespace pmc_cli
