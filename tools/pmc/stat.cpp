// pmc stat: count events like perf stat: of a command (reported on stderr or -o FILE, exiting
// with the command's status), of processes, threads or CPUs until Ctrl-C or --timeout, at
// intervals (-I), over repeated runs (-r), or of a simulated workload on a backend's device model.
#include "stat.hpp"

#include <pmc/process.hpp>

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>

namespace pmc_cli {

namespace {

bool scaled(const std::vector<pmc::Reading>& readings) {
  return std::any_of(readings.begin(), readings.end(),
                     [](const pmc::Reading& r) { return r.extrapolated || r.time_running < r.time_enabled; });
}

// The readings of groups counted without multiplexing: the workload runs once with all of them
// and, when the PMU had to rotate them, again for each half, and so on down to groups that fit
// (a simulated workload counts the same on every run, so each pass is exact). Readings come in
// the groups' order.
std::vector<pmc::Reading> count_in_passes(const pmc::Hal& hal, const pmc::Workload& workload,
                                          const std::vector<EventGroup>& groups, unsigned& passes) {
  pmc::Session session = hal.session();
  for (const auto& g : groups) {
    if (g.braces)
      session.add_group(g.events);
    else
      session.add(g.events.front());
  }
  (void)session.run(workload);
  ++passes;
  std::vector<pmc::Reading> readings = session.read();
  if (groups.size() < 2 || !scaled(readings)) return readings;
  const auto half = groups.begin() + static_cast<std::ptrdiff_t>(groups.size() / 2);
  std::vector<pmc::Reading> out = count_in_passes(hal, workload, {groups.begin(), half}, passes);
  std::vector<pmc::Reading> rest = count_in_passes(hal, workload, {half, groups.end()}, passes);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

}  // namespace

SimulatedRun run_simulated(const pmc::Hal& hal, const Options& o, const std::vector<EventGroup>& events,
                           const std::function<void(pmc::Session&, const pmc::Workload&)>& prepare,
                           const Plan* plan) {
  SimulatedRun run;
  run.workload = pmc::load_workload(pmc::resolve_data(o.workload, pmc::DataKind::workload));
  pmc::Session session = hal.session();
  std::vector<EventGroup> added;
  const auto add = [&](EventGroup g) {
    for (auto& e : g.events) e = counted_as(o, e);  // --all-user, --all-kernel
    if (g.braces)
      session.add_group(g.events);
    else
      session.add(g.events.front());
    added.push_back(g);
  };
  for (const auto& g : events) add(g);
  if (plan)
    add_metric_events(
        *plan, [&]() -> const std::vector<pmc::Encoding>& { return session.encodings(); }, add);
  if (prepare) prepare(session, run.workload);
  run.stats = session.run(run.workload);
  run.readings = session.read();
  run.levels = session.level_histograms();
  run.profiles = session.pc_profiles();
  // Metrics want their events counted over the same cycles: rather than scaled estimates, the
  // workload runs again in passes (as toplev counts a program several times).
  if (plan && plan->metrics_asked && !prepare && scaled(run.readings)) {
    run.passes = 0;
    run.readings = count_in_passes(hal, run.workload, added, run.passes);
  }
  // The rows keep the names given, as perf prints task-clock, not task-clock:u, for --all-user.
  const std::string mode = counted_as(o, "");
  for (auto& r : run.readings)
    if (!mode.empty() && r.event.size() > mode.size() && r.event.ends_with(mode)) r.event.resize(r.event.size() - mode.size());
  return run;
}

pmc::Scope command_scope(int pid) {
  pmc::Scope scope = pmc::Scope::process(pid);
  scope.inherit = true;
  scope.enable_on_exec = true;
  return scope;
}

namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

int stat_workload(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  (void)hal.require_backend();
  const Plan plan = make_plan(hal, o, [&] { return pmc::default_events(hal, pmc::DefaultEvents::workload); });
  const SimulatedRun run = run_simulated(hal, o, plan.groups, {}, &plan);
  std::vector<Row> rows;
  for (const auto& r : run.readings) rows.push_back({r.event, r, {}, -1, std::nullopt});
  const std::vector<MetricRow> metrics = evaluate(plan, rows, std::nullopt);
  if (o.json) {
    json doc = run_json(hal, run);
    doc["metrics"] = metrics_json(metrics);
    print("{}\n", doc.dump(2));
    return 0;
  }
  if (o.json_lines) {
    report_json_lines(stderr, rows, metrics);
    return 0;
  }
  print_counts(hal, run, "Performance counter stats", metrics, o.metric_only);
  return 0;
}

// SIGINT and SIGTERM end a count that has no command (attached, system-wide); restored after.
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// -D: a command that ended before counting began: every row <not counted>.
std::vector<Row> not_counted(std::vector<Row> rows) {
  for (Row& r : rows)
    if (r.reading) r.idle = true;
  return rows;
}

// One measurement; with -I the interval lines are printed as it goes.
struct Outcome {
  std::vector<Row> rows;
  Measured measured;
};

Outcome measure(const pmc::Hal& hal, const Plan& plan, const Options& o, const Target& t, std::FILE* out) {
  std::optional<Counters> counters;
  std::vector<Row> previous;
  std::uint64_t started = 0, last = 0, launched = 0;
  std::size_t intervals = 0;
  int child_pid = 0;
  bool sent_term = false, counting = false, stopped = false;
  const auto more_intervals = [&] { return !o.interval_count || intervals < o.interval_count; };
  // One interval's rows: from the last one (or the start) to now.
  const auto print_interval = [&](std::uint64_t now) {
    const std::vector<Row> rows = counters->read();
    const std::vector<Row> delta = difference(rows, previous);
    const double seconds = static_cast<double>(now - started) / 1e9;
    const std::vector<MetricRow> metrics = evaluate(plan, delta, static_cast<double>(now - last));
    if (o.json)
      print_to(out, "{}\n", json{{"interval", seconds}, {"counters", rows_json(delta)},
                                 {"not_supported", not_supported_json(delta)}, {"metrics", metrics_json(metrics)}}
                                .dump());
    else if (o.json_lines)
      report_json_lines(out, delta, metrics, seconds);
    else if (o.separator)
      report_csv(out, *o.separator, delta, metrics, interval_time(seconds) + *o.separator);
    else
      report_interval_text(out, seconds, delta, metrics, intervals % 25 == 0);
    previous = rows;
    last = now;
    ++intervals;
  };
  const auto begin = [&] {
    counters->start();
    counting = true;
    started = last = now_ns();
    previous = counters->read();
  };
  const auto stop = [&] {
    if (!stopped && counting) counters->stop();
    stopped = true;
  };
  auto tick = [&] {
    if (!counters) return;
    const std::uint64_t now = now_ns();
    if (!counting && launched && now - launched >= o.delay_ms * 1'000'000) {
      begin();
      write(stderr, "Events enabled\n");  // perf stat -D says so
    }
    if (counting && !stopped && o.interval_ms && now - last >= o.interval_ms * 1'000'000) {
      print_interval(now);
      if (!more_intervals()) stop();  // --interval-count: the command runs on, uncounted
    }
    if (o.timeout_ms && launched && now - launched >= o.timeout_ms * 1'000'000 && child_pid > 0 && !sent_term) {
      ::kill(-child_pid, SIGTERM);  // the command's process group (run_child made it)
      sent_term = true;
    }
  };
  Outcome result;
  result.measured.command = o.command;
  result.measured.target = t.describe;
  if (!o.command.empty()) {
    pmc::ChildOptions child;
    if (!t.scopes.empty()) counters.emplace(hal, plan, t.scopes, t.per_cpu, t.labels);
    child.before_exec = [&](int pid) {
      child_pid = pid;
      launched = now_ns();
      if (!counters) {
        pmc::Scope scope = command_scope(pid);
        scope.enable_on_exec = o.delay_ms == 0;  // -D: switched on later, by tick
        counters.emplace(hal, plan, std::vector<pmc::Scope>{scope}, false);
      }
      if (o.delay_ms)
        write(stderr, "Events disabled\n");
      else
        begin();
    };
    if (o.interval_ms || o.timeout_ms || o.delay_ms) {
      child.tick = tick;
      child.tick_interval = std::chrono::milliseconds(std::min<std::uint64_t>(10, o.interval_ms ? o.interval_ms : 10));
    }
    result.measured.child = pmc::run_child(o.command, child);
    stop();
    result.measured.elapsed_ns = result.measured.child.elapsed_ns;
  } else {
    counters.emplace(hal, plan, t.scopes, t.per_cpu, t.labels);
    StopSignals signals;
    begin();
    launched = started;
    while (!g_stop) {
      const timespec pause{0, 10'000'000};
      nanosleep(&pause, nullptr);  // a signal ends it early
      tick();
      counters->poll();
      if (o.timeout_ms && now_ns() - started >= o.timeout_ms * 1'000'000) break;
      if (stopped) break;  // --interval-count reached
      bool alive = o.pids.empty() && !o.tid;
      for (int pid : o.pids) alive = alive || task_alive(pid);
      if (o.tid) alive = task_alive(o.tid);
      if (!alive) break;  // the processes (or the thread) are gone
    }
    stop();
    result.measured.elapsed_ns = now_ns() - started;
  }
  // -I: the last interval, cut short by the command's end (perf prints it too).
  if (o.interval_ms && counting && more_intervals()) print_interval(now_ns());
  result.rows = counting ? counters->read() : not_counted(counters->read());
  return result;
}

// -r: the mean of each count over the runs, and its noise as perf prints it: the standard
// deviation of the mean relative to the mean, in percent (100 * sqrt(var / n) / mean, var the
// sample variance with n - 1).
double noise(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double m2 = 0;
  for (double x : v) m2 += (x - mean) * (x - mean);
  const double variance = m2 / static_cast<double>(v.size() - 1);
  const double stddev_mean = std::sqrt(variance / static_cast<double>(v.size()));
  return mean != 0 ? 100.0 * stddev_mean / mean : 0;
}

Outcome combine(const std::vector<Outcome>& runs) {
  Outcome out = runs.back();
  const double n = static_cast<double>(runs.size());
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    if (!out.rows[i].reading) continue;
    std::vector<double> values;
    double enabled = 0, running = 0;
    for (const Outcome& r : runs) {
      const pmc::Reading& x = *r.rows.at(i).reading;
      values.push_back(static_cast<double>(x.value));
      enabled += static_cast<double>(x.time_enabled);
      running += static_cast<double>(x.time_running);
    }
    double mean = 0;
    for (double v : values) mean += v;
    pmc::Reading& r = *out.rows[i].reading;
    r.value = static_cast<std::uint64_t>(std::llround(mean / n));
    r.time_enabled = static_cast<std::uint64_t>(std::llround(enabled / n));
    r.time_running = static_cast<std::uint64_t>(std::llround(running / n));
    out.rows[i].noise = noise(values);
  }
  std::vector<double> elapsed;
  double sum = 0;
  for (const Outcome& r : runs) {
    elapsed.push_back(static_cast<double>(r.measured.elapsed_ns));
    sum += elapsed.back();
  }
  out.measured.elapsed_ns = static_cast<std::uint64_t>(std::llround(sum / n));
  out.measured.elapsed_noise = noise(elapsed);
  out.measured.runs = static_cast<unsigned>(runs.size());
  return out;
}

int stat_real(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  const Target t = target_of(o);
  const Plan plan = make_plan(
      hal, o, [&] { return pmc::default_events(hal, t.cpu_wide ? pmc::DefaultEvents::cpus : pmc::DefaultEvents::task); });
  Report report(o.output, o.json ? stdout : stderr, o.append);
  std::FILE* out = report.out();
  // --regions: the -e events as the user wrote them, groups aside.
  std::vector<std::string> region_events;
  if (!plan.defaults)
    for (const EventGroup& g : plan.groups) region_events.insert(region_events.end(), g.events.begin(), g.events.end());
  if (region_events.empty()) region_events.emplace_back("task-clock");
  const RegionsRun regions(o, region_events);
  std::vector<Outcome> runs;
  // -r N: a run cut by SIGINT, SIGTERM, SIGHUP or SIGQUIT ends the repeats; it is left out and
  // pmc exits as that signal says (128 + N) after reporting the runs that completed.
  int cut_by = 0;
  for (unsigned i = 0; i < o.repeat; ++i) {
    Outcome run = measure(hal, plan, o, t, out);
    const pmc::ChildResult& child = run.measured.child;
    if (o.repeat > 1 && child.interrupted) {
      // The signal the command died of; a command that caught it and exited says 128 + N itself
      // (a shell's convention), else it was SIGINT's default handling that it replaced.
      cut_by = child.signal                                         ? child.signal
               : child.exit_status > 128 && child.exit_status < 160 ? child.exit_status - 128
                                                                    : SIGINT;
      const char* name = sigabbrev_np(cut_by);
      error_line(fmt::format("run {} of {} interrupted by SIG{}: {}", i + 1, o.repeat, name ? name : "?",
                             runs.empty() ? std::string("no run completed, nothing to report")
                                          : fmt::format("the report is of the {} run{} that completed", runs.size(),
                                                        runs.size() == 1 ? "" : "s")));
      if (runs.empty()) return 128 + cut_by;
      break;
    }
    runs.push_back(std::move(run));
  }
  const Outcome result = runs.size() > 1 ? combine(runs) : runs.front();
  if (o.verbose) report_verbose(result.rows);
  const int status = cut_by ? 128 + cut_by : o.command.empty() ? 0 : result.measured.child.exit_status;
  if (o.interval_ms) return status;  // the intervals were the report
  const std::vector<MetricRow> metrics =
      evaluate(plan, result.rows, static_cast<double>(result.measured.elapsed_ns));
  if (o.json) {
    json doc{{"counters", rows_json(result.rows)},
             {"not_supported", not_supported_json(result.rows)},
             {"metrics", metrics_json(metrics)},
             {"elapsed_ns", result.measured.elapsed_ns},
             {"runs", result.measured.runs}};
    if (const auto r = regions.report()) doc["regions"] = json::parse(pmc::region_report_json(*r));
    if (!o.command.empty()) {
      doc["command"] = o.command;
      doc["exit_status"] = status;
    } else {
      doc["target"] = t.describe;
    }
    if (result.measured.runs > 1) doc["elapsed_noise_percent"] = result.measured.elapsed_noise;
    print_to(out, "{}\n", doc.dump(2));
  } else if (o.json_lines && o.metric_only) {
    write(out, metric_only_lines(metrics, MetricOnly::json_object));
  } else if (o.json_lines) {
    report_json_lines(out, result.rows, metrics);
  } else if (o.separator && o.metric_only) {
    write(out, metric_only_lines(metrics, MetricOnly::csv, *o.separator));
  } else if (o.separator) {
    report_csv(out, *o.separator, result.rows, metrics);
    if (const auto r = regions.report()) report_regions_csv(out, *o.separator, *r);
  } else {
    report_text(out, result.measured, result.rows, metrics, "Performance counter stats", o.metric_only);
    if (const auto r = regions.report()) write(out, pmc::format_region_table(*r));
  }
  return status;
}

}  // namespace

int cmd_stat(const Options& o) {
  if (auto why = stat_conflict(o)) {
    error_line(fmt::format("{} (see 'pmc stat --help')", *why));
    return 2;
  }
  set_big_num(o.big_num);
  if (!o.workload.empty()) return stat_workload(o);
  return stat_real(o);
}

}  // namespace pmc_cli
