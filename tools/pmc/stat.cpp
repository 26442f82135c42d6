// pmc stat: count events of a command (run and reported like perf stat: on stderr or -o FILE,
// exiting with the command's status) or of a simulated workload on a backend's device model.
#include "cli.hpp"
#include "stat.hpp"

#include <pmc/process.hpp>

namespace pmc_cli {

// ---------------------------------------------------------------------------------------------
// A simulated workload.

SimulatedRun run_simulated(const pmc::Hal& hal, const Options& o, const std::vector<std::string>& events,
                           const std::function<void(pmc::Session&, const pmc::Workload&)>& prepare) {
  SimulatedRun run;
  run.workload = pmc::load_workload(pmc::resolve_data(o.workload, pmc::DataKind::workload));
  pmc::Session session = hal.session();
  for (const auto& e : events) session.add(e);
  if (prepare) prepare(session, run.workload);
  run.stats = session.run(run.workload);
  run.readings = session.read();
  run.levels = session.level_histograms();
  run.profiles = session.pc_profiles();
  return run;
}

json run_json(const pmc::Hal& hal, const SimulatedRun& run) {
  return json{{"workload", run.workload.name},
              {"file", run.workload.source},
              {"backend", hal.pmu().name},
              {"pmu", hal.pmu().description},
              {"access", hal.access()},
              {"cycles", run.stats.cycles},
              {"interrupts", run.stats.interrupts},
              {"cycles_not_counted", run.stats.cycles_not_counted},
              {"counters", counters_json(run.readings)}};
}

void print_counts(const pmc::Hal& hal, const SimulatedRun& run, const char* what) {
  print("\n {} for workload '{}' ({})\n", what, run.workload.name, run.workload.source);
  print(" on the simulated {}:\n\n", hal.pmu().description);
  const std::optional<double> ipc = insn_per_cycle(run.readings);
  for (const auto& r : run.readings) {
    std::string note = fmt::format("# {} (counter {})", r.canonical, r.counter);
    if (ipc && r.generic == "instructions") note = fmt::format("# {:6.2f} insn per cycle", *ipc);
    print("{:>20}      {:<28} {}\n", group_digits(r.value), r.event, note);
  }
  print("\n{:>20}      cycles simulated\n", group_digits(run.stats.cycles));
  if (run.stats.interrupts) print("{:>20}      overflow interrupts\n", group_digits(run.stats.interrupts));
  if (run.stats.cycles_not_counted)
    print("{:>20}      cycles not counted: they ran on other CPUs of the workload, and the session counts the\n"
          "{:>20}      simulated CPU 0 (the pfm(7) shim, <pmc/pfm.h>, counts each CPU: PCNTOPENEACH)\n",
          group_digits(run.stats.cycles_not_counted), "");
  print("\n");
}

namespace {

int stat_workload(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  (void)hal.require_backend();
  std::vector<std::string> events = split_events(o.events);
  if (events.empty()) events = {"cycles", "instructions"};
  const SimulatedRun run = run_simulated(hal, o, events);
  if (o.json) {
    print("{}\n", run_json(hal, run).dump(2));
    return 0;
  }
  print_counts(hal, run, "Performance counter stats");
  return 0;
}

// ---------------------------------------------------------------------------------------------
// A command.

// The events counted when -e is not given: what works on this machine.
std::vector<std::string> default_events(const pmc::Hal& hal) {
  std::vector<std::string> e{"task-clock", "context-switches", "cpu-migrations", "page-faults"};
  if (hal.backend() && hal.access() == "perf") {
    e.push_back("cycles");
    e.push_back("instructions");
  }
  e.push_back("tsc");
  return e;
}

int stat_command(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  const bool defaults = o.events.empty();
  const std::vector<std::string> events = defaults ? default_events(hal) : split_events(o.events);
  Report report(o.output, stderr);
  std::FILE* out = report.out();
  std::optional<pmc::Session> session;
  pmc::ChildOptions child;
  child.before_exec = [&](int pid) {
    session.emplace(hal.session(command_scope(pid)));
    for (const auto& e : events) {
      try {
        session->add(e);
      } catch (const pmc::Error& err) {
        if (!defaults) throw;
        // A default that this machine or this user cannot count: user mode only when perf
        // refuses kernel mode (perf_event_paranoid), otherwise left out with a note.
        if (err.kind() == pmc::errc::permission) {
          try {
            session->add(e + ":u");
            continue;
          } catch (const pmc::Error&) {  // the note below says why the plain one failed
          }
        }
        print_to(stderr, "pmc: not counting {}: {}\n", e, err.what());
      }
    }
    session->start();
  };
  const pmc::ChildResult run = pmc::run_child(o.command, child);
  session->stop();
  const std::vector<pmc::Reading> readings = session->read();

  if (o.json) {
    json doc{{"command", o.command},
             {"exit_status", run.exit_status},
             {"elapsed_ns", run.elapsed_ns},
             {"counters", counters_json(readings)}};
    print_to(out, "{}\n", doc.dump(2));
  } else if (o.separator) {
    const std::string& sep = *o.separator;
    for (const auto& r : readings) {
      const bool counted = r.time_running > 0 || r.time_enabled == 0;
      const double percent =
          r.time_enabled ? 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled) : 100.0;
      print_to(out, "{}{}{}{}{}{}{}{}{:.2f}\n", counted ? std::to_string(r.value) : std::string("<not counted>"), sep,
            r.unit, sep, r.event, sep, r.time_running, sep, percent);
    }
  } else {
    report_table(out, o.command, readings, run);
  }
  return run.exit_status;
}

}  // namespace

pmc::Scope command_scope(int pid) {
  pmc::Scope scope = pmc::Scope::process(pid);
  scope.inherit = true;
  scope.enable_on_exec = true;
  return scope;
}

void report_table(std::FILE* out, const std::vector<std::string>& command, const std::vector<pmc::Reading>& readings,
                  const pmc::ChildResult& run, const char* title) {
  std::optional<std::uint64_t> task_clock;
  for (const auto& r : readings)
    if (r.hal && r.name == "task-clock" && r.time_running) task_clock = r.value;
  const std::optional<double> ipc = insn_per_cycle(readings);
  print_to(out, "\n {} for '{}':\n\n", title, quote_command(command));
  for (const auto& r : readings) {
    const bool counted = r.time_running > 0 || r.time_enabled == 0;
    std::string value = !counted ? "<not counted>" : r.unit == "ns" ? msec(r.value) : group_digits(r.value);
    std::string unit = r.unit == "ns" ? "msec" : r.unit;
    std::string note;
    if (counted) {
      if (r.unit == "ns" && run.elapsed_ns)
        note = fmt::format("# {:8.3f} CPUs utilized", static_cast<double>(r.value) / static_cast<double>(run.elapsed_ns));
      else if (r.unit == "ticks") {
        const pmc::TscFrequency f = pmc::tsc_frequency();
        if (f.hz > 0)
          note = fmt::format("# {:.6f} s at {:.4f} GHz +- {:.2g}% ({})", static_cast<double>(r.value) / f.hz, f.hz / 1e9,
                             100 * f.uncertainty_hz / f.hz, f.method);
      } else if (ipc && r.generic == "instructions")
        note = fmt::format("# {:8.2f} insn per cycle", *ipc);
      else if (r.unit.empty() && task_clock && *task_clock)
        note = fmt::format("# {:>12}", per_second(static_cast<double>(r.value) * 1e9 / static_cast<double>(*task_clock)));
      if (r.time_running < r.time_enabled)
        note += fmt::format("  ({:.2f}%)", 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled));
    }
    std::string event = r.cpu >= 0 ? fmt::format("CPU{} {}", r.cpu, r.event) : r.event;
    print_to(out, "{:>18} {:<6} {:<28} {}\n", value, unit, event, note);
  }
  print_to(out, "\n{:>18.9f} seconds time elapsed\n\n", static_cast<double>(run.elapsed_ns) / 1e9);
  print_to(out, "{:>18.9f} seconds user\n", run.user_seconds);
  print_to(out, "{:>18.9f} seconds sys\n\n", run.system_seconds);
}

int cmd_stat(const Options& o) {
  if (!o.workload.empty() && !o.command.empty()) {
    error_line("stat counts either a simulated workload (--workload) or a command, not both (see 'pmc stat --help')");
    return 2;
  }
  if (o.workload.empty() && o.command.empty()) {
    error_line("stat needs a command (pmc stat [-e EVENTS] -- COMMAND ARGS...) or --workload FILE (see 'pmc stat --help')");
    return 2;
  }
  if (!o.workload.empty()) {
    if (o.separator || !o.output.empty()) {
      error_line("-x and -o apply to counting a command, not --workload (see 'pmc stat --help')");
      return 2;
    }
    return stat_workload(o);
  }
  return stat_command(o);
}

}  // namespace pmc_cli
