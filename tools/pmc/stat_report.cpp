// pmc stat: the reports. The table and the CSV (-x) keep perf stat's columns and units (msec for
// the clock events, <not supported> and <not counted>, the multiplexing percentage, +- noise
// with -r, a metric beside the event it is computed from); JSON carries the same in keys.
#include "stat.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace pmc_cli {

bool counted(const Row& row) {
  if (!row.reading || row.idle) return false;
  return row.reading->time_running > 0 || row.reading->time_enabled == 0;
}

double percent_running(const pmc::Reading& r) {
  return r.time_enabled ? 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled) : 100.0;
}

namespace {

bool counted(const pmc::Reading& r) { return r.time_running > 0 || r.time_enabled == 0; }

// "1,234.56" (or with --no-big-num "1234.56") for ns shown as msec.
std::string msec_text(std::uint64_t ns) { return fmt::format("{}.{:02}", digits(ns / 1000000), (ns % 1000000) / 10000); }

std::string value_text(const Row& row) {
  if (!row.reading) return "<not supported>";
  const pmc::Reading& r = *row.reading;
  if (!counted(row)) return "<not counted>";
  return r.unit == "ns" ? msec_text(r.value) : digits(r.value);
}

std::string unit_text(const Row& row) {
  if (!row.reading) return "";
  return row.reading->unit == "ns" ? "msec" : row.reading->unit;
}

// The columns before the count: -A's CPU, or --per-thread's COMM-TID, --per-core's S0-D0-C0 and
// --per-socket's S0 with the number of CPUs summed.
std::string cpu_column(const Row& row) {
  if (!row.aggr_text.empty()) return row.aggr_text + (row.aggr_count ? fmt::format("{:>4} ", row.aggr_count) : "");
  return row.cpu >= 0 ? fmt::format("CPU{:<4}", row.cpu) : std::string();
}

// Which row each metric is shown on: the row of its first input that has no metric yet (the
// same CPU or label); -1: a line of its own.
std::vector<int> place_metrics(const std::vector<Row>& rows, const std::vector<MetricRow>& metrics) {
  std::vector<int> where(metrics.size(), -1);
  std::vector<bool> taken(rows.size(), false);
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    if (!metrics[m].value.value || in_tree(metrics[m]) || metrics[m].hidden) continue;
    std::vector<pmc::Reading> readings;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].reading && !rows[i].idle && rows[i].cpu == metrics[m].cpu && rows[i].aggr == metrics[m].aggr) {
        readings.push_back(*rows[i].reading);
        index.push_back(i);
      }
    // The readings the library chose for the metric (pmc::metric_input_readings' rule).
    const pmc::MetricInputReadings in = pmc::metric_input_readings(*metrics[m].def, readings);
    for (const pmc::Reading* r : in.readings) {
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
  if (!row.reading || !row.reading->unit.empty() || !counted(row)) return std::nullopt;
  for (const Row& r : rows)
    if (r.reading && !r.idle && r.cpu == row.cpu && r.aggr == row.aggr && r.reading->hal && (r.reading->name == "task-clock" || r.reading->name == "cpu-clock") &&
        r.reading->value > 0)
      return static_cast<double>(row.reading->value) * 1e9 / static_cast<double>(r.reading->value);
  return std::nullopt;
}

std::string row_note(const Row& row, const std::vector<Row>& rows, const MetricRow* metric) {
  std::string note;
  if (metric) {
    note = "# " + metric_note(*metric);
  } else if (counted(row) && row.reading->unit == "ticks") {
    const pmc::TscFrequency f = pmc::tsc_frequency();
    if (f.hz > 0)
      note = fmt::format("# {:.6f} s at {:.4f} GHz +- {:.2g}% ({})", static_cast<double>(row.reading->value) / f.hz,
                         f.hz / 1e9, 100 * f.uncertainty_hz / f.hz, f.method);
  } else if (auto per_s = rate(row, rows)) {
    note = fmt::format("# {:>12}", per_second(*per_s));
  }
  if (counted(row) && row.reading->time_running < row.reading->time_enabled)
    note += fmt::format("  ({:.2f}%)", percent_running(*row.reading));
  if (row.noise) note += fmt::format("  ( +-{:6.2f}% )", *row.noise);
  return note;
}

}  // namespace

void report_text(std::FILE* out, const Measured& m, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics,
                 const char* title, bool metric_only) {
  const std::string what = m.command.empty() ? m.target : fmt::format("'{}'", quote_command(m.command));
  print_to(out, "\n {} for {}{}:\n\n", title, what, m.runs > 1 ? fmt::format(" ({} runs)", m.runs) : "");
  if (metric_only) write(out, metric_only_lines(metrics, MetricOnly::text));
  const std::vector<int> where = metric_only ? std::vector<int>(metrics.size(), -1) : place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size() && !metric_only; ++i) {
    const MetricRow* metric = nullptr;
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) metric = &metrics[k];
    print_to(out, "{}{:>18} {:<6} {:<28} {}\n", cpu_column(rows[i]), value_text(rows[i]), unit_text(rows[i]),
             rows[i].event, row_note(rows[i], rows, metric));
  }
  for (std::size_t k = 0; k < metrics.size() && !metric_only; ++k)
    if (where[k] < 0 && !in_tree(metrics[k]) && !metrics[k].hidden)
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

std::optional<std::pair<double, std::string>> row_metric(std::size_t row, const std::vector<Row>& rows,
                                                         const std::vector<MetricRow>& metrics) {
  const std::vector<int> where = place_metrics(rows, metrics);
  for (std::size_t k = 0; k < metrics.size(); ++k)
    if (where[k] == static_cast<int>(row)) return std::pair(*metrics[k].value.value, metrics[k].def->unit);
  if (auto per_s = rate(rows[row], rows)) {
    const std::string text = per_second(*per_s);  // "7.968 K/sec"
    const double scale = text.find(" G/") != std::string::npos   ? 1e9
                         : text.find(" M/") != std::string::npos ? 1e6
                         : text.find(" K/") != std::string::npos ? 1e3
                                                                 : 1.0;
    return std::pair(*per_s / scale, text.substr(text.find(' ') + 1));
  }
  return std::nullopt;
}

void report_csv(std::FILE* out, const std::string& sep, const std::vector<Row>& rows,
                const std::vector<MetricRow>& metrics, const std::string& prefix) {
  const std::vector<int> where = place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::string line = prefix;
    if (!row.aggr.empty())
      line += row.aggr + sep + (row.aggr_count ? fmt::format("{}{}", row.aggr_count, sep) : "");
    else if (row.cpu >= 0)
      line += fmt::format("CPU{}{}", row.cpu, sep);
    std::string value = "<not supported>", runtime = "0", percent = "100.00";
    if (row.reading) {
      const pmc::Reading& r = *row.reading;
      value = !counted(row)  ? "<not counted>"
              : r.unit == "ns" ? fmt::format("{:.2f}", static_cast<double>(r.value) / 1e6)
                               : std::to_string(r.value);
      runtime = std::to_string(r.time_running);
      // perf: the share of the enabled time it ran; 100.00 when it was not enabled at all
      percent = fmt::format("{:.2f}", counted(row) || row.idle ? percent_running(r) : 0.0);
    }
    line += fmt::format("{}", fmt::join(std::vector<std::string>{value, unit_text(row), row.event, runtime, percent}, sep));
    if (row.noise) line += fmt::format("{}{:.2f}%", sep, *row.noise);
    std::string metric_value, metric_unit;
    if (const auto m = row_metric(i, rows, metrics)) {
      metric_value = fmt::format("{:.3f}", m->first);
      metric_unit = m->second;
    }
    print_to(out, "{}{}{}{}{}\n", line, sep, metric_value, sep, metric_unit);
  }
  for (std::size_t k = 0; k < metrics.size(); ++k) {
    if (where[k] >= 0 || metrics[k].hidden) continue;
    const MetricRow& mr = metrics[k];
    std::string line = prefix;
    if (!mr.aggr.empty())
      line += mr.aggr + sep;
    else if (mr.cpu >= 0)
      line += fmt::format("CPU{}{}", mr.cpu, sep);
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
    if (!m.value.value) {
      j["error"] = m.value.error;
      j["reason"] = m.value.error;  // why there is no value (no row in the table)
      if (m.value.incompatible) j["incompatible"] = true;
    }
    if (!m.aggr.empty()) j["aggr"] = m.aggr;
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

std::string interval_time(double seconds) { return fmt::format("{:16.9f}", seconds); }

void report_interval_text(std::FILE* out, double seconds, const std::vector<Row>& rows,
                          const std::vector<MetricRow>& metrics, bool header) {
  if (header) print_to(out, "#{:>15} {:>18} {} {}\n", "time", "counts", "unit", "events");
  const std::vector<int> where = place_metrics(rows, metrics);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MetricRow* metric = nullptr;
    for (std::size_t k = 0; k < metrics.size(); ++k)
      if (where[k] == static_cast<int>(i)) metric = &metrics[k];
    print_to(out, "{} {}{:>18} {:<6} {:<28} {}\n", interval_time(seconds), cpu_column(rows[i]), value_text(rows[i]),
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
    print("{:>20}      {:<28} {}\n", counted(r) ? digits(r.value) : "<not counted>", r.event, note);
  }
  if (metric_only) write(stdout, metric_only_lines(metrics, MetricOnly::text));
  for (std::size_t k = 0; k < metrics.size() && !metric_only; ++k)
    if (where[k] < 0 && !in_tree(metrics[k]) && !metrics[k].hidden)
      print("{:>20}      {:<28} # {}\n", "", metrics[k].def->name, metric_note(metrics[k]));
  print_tree(stdout, metrics);
  print("\n{:>20}      cycles simulated\n", digits(run.stats.cycles));
  if (run.passes > 1)
    print("{:>20}      runs of the workload: its events do not fit the counters at once, and each run counted a "
          "set that does\n",
          run.passes);
  if (run.stats.interrupts) print("{:>20}      overflow interrupts\n", digits(run.stats.interrupts));
  if (run.stats.cycles_not_counted)
    print("{:>20}      cycles not counted: they ran on other CPUs of the workload, and the session counts the\n"
          "{:>20}      simulated CPU 0 (the pfm(7) shim, <pmc/pfm.h>, counts each CPU: PCNTOPENEACH)\n",
          digits(run.stats.cycles_not_counted), "");
  print("\n");
}

}  // namespace pmc_cli
