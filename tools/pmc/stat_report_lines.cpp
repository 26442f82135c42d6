// pmc stat: perf stat -j's lines (one JSON object per count, in perf's own spacing: "key" : value,
// separated by ", "), -v's raw counts, and -B/--no-big-num.
#include "stat.hpp"

namespace pmc_cli {

namespace {

bool g_big_num = true;

std::string json_string(std::string_view text) { return json(text).dump(); }

}  // namespace

void set_big_num(bool on) { g_big_num = on; }

std::string digits(std::uint64_t v) { return g_big_num ? group_digits(v) : std::to_string(v); }

void report_json_lines(std::FILE* out, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics,
                       std::optional<double> interval) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::string line = "{";
    if (interval) line += fmt::format("\"interval\" : {:.9f}, ", *interval);
    if (row.aggr_kind) {
      line += fmt::format("{} : {}, ", json_string(row.aggr_kind), json_string(row.aggr));
      if (row.aggr_count) line += fmt::format("\"aggregate-number\" : {}, ", row.aggr_count);
    } else if (row.cpu >= 0) {
      line += fmt::format("\"cpu\" : \"{}\", ", row.cpu);
    }
    std::string value = "<not supported>", unit;
    std::uint64_t runtime = 0;
    double percent = 100.0;
    if (row.reading) {
      const pmc::Reading& r = *row.reading;
      unit = r.unit == "ns" ? "msec" : r.unit;
      runtime = r.time_running;
      if (!counted(row)) {
        value = "<not counted>";
        if (!row.idle) percent = 0.0;  // enabled, never on a counter
      } else {
        value = fmt::format("{:f}", r.unit == "ns" ? static_cast<double>(r.value) / 1e6 : static_cast<double>(r.value));
        percent = percent_running(r);
      }
    }
    line += fmt::format("\"counter-value\" : {}, \"unit\" : {}, \"event\" : {}, \"event-runtime\" : {}, "
                        "\"pcnt-running\" : {:.2f}, ",
                        json_string(value), json_string(unit), json_string(row.event), runtime, percent);
    if (row.noise) line += fmt::format("\"variance\" : {:.2f}, ", *row.noise);
    const auto metric = counted(row) ? row_metric(i, rows, metrics) : std::nullopt;
    line += fmt::format("\"metric-value\" : {:f}, \"metric-unit\" : {}}}\n", metric ? metric->first : 0.0,
                        json_string(metric ? metric->second : std::string()));
    write(out, line);
  }
}

std::string metric_only_lines(const std::vector<MetricRow>& metrics, MetricOnly style, const std::string& sep) {
  // perf leaves out the rates and CPU utilization (its valid_only_metric), and what has no value.
  std::vector<const MetricRow*> shown;
  for (const MetricRow& m : metrics)
    if (m.value.value && !m.hidden && !in_tree(m) && m.def->unit.find("/sec") == std::string::npos &&
        m.def->unit.find("CPUs utilized") == std::string::npos)
      shown.push_back(&m);
  std::string header, values;
  if (style == MetricOnly::json_object) {
    for (const MetricRow* m : shown)
      values += fmt::format("{}{} : \"{:.2f}\"", values.empty() ? "" : ", ", json_string(m->def->unit), *m->value.value);
    return "{" + values + "}\n";
  }
  for (const MetricRow* m : shown) {
    const std::string value = fmt::format("{:.2f}", *m->value.value);
    if (style == MetricOnly::csv) {
      header += m->def->unit + sep;
      values += value + sep;
    } else {
      const std::size_t width = std::max<std::size_t>(20, m->def->unit.size());
      header += fmt::format("{:>{}} ", m->def->unit, width);
      values += fmt::format("{:>{}} ", value, width);
    }
  }
  return header + "\n" + values + "\n";
}

void report_verbose(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    const std::string who = !row.aggr.empty() ? row.aggr + ": " : row.cpu >= 0 ? fmt::format("{}: ", row.cpu) : "";
    if (!row.reading)
      print_to(stderr, "{}: {}<not supported>: {}\n", row.event, who, row.reason);
    else
      print_to(stderr, "{}: {}{} {} {}\n", row.event, who, row.reading->value, row.reading->time_enabled,
               row.reading->time_running);
  }
}

}  // namespace pmc_cli
