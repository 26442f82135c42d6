// pmc: the options of stat, profile and export (perf stat's spellings where perf has one), and
// where a command begins on the command line.
#include "cli.hpp"

namespace pmc_cli {

void add_cpu_options(CLI::App* sub, Options& o) {
  sub->add_option("--cpuid-dump", o.cpuid_dump,
                  "probe a CPUID dump file (cpuid -r or AIDA64 format, or a bundled name such as pentium-iii)");
  sub->add_option("--backend", o.backend, "use this backend instead of probing");
  sub->add_option("--access", o.access,
                  "how PMU events are counted: sim (the simulated PMU), perf (Linux perf_event_open), msr "
                  "(/dev/cpu/N/msr) or auto; overrides the config key access")
      ->type_name("METHOD")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "auto" || text == "sim" || text == "perf" || text == "msr") return {};
            return fmt::format("unknown access method '{}' (expected auto, sim, perf or msr)", text);
          },
          "auto|sim|perf|msr"));
  sub->add_flag("--json", o.json, "machine-readable output");
}

namespace {

CLI::Validator positive(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        try {
          std::size_t end = 0;
          const long long v = std::stoll(text, &end);
          if (end == text.size() && v > 0) return {};
        } catch (const std::exception&) {  // the message below
        }
        return fmt::format("{} takes a number above 0, not '{}'", what, text);
      },
      "N");
}

}  // namespace

CLI::App* add_stat(CLI::App& app, Options& o, bool options) {
  CLI::App* stat = app.add_subcommand(
      "stat", "count events of a command (pmc stat [OPTIONS] COMMAND [ARGS...]), of CPUs or processes until Ctrl-C, "
              "or of a simulated workload (--workload)");
  if (!options) return stat;
  add_cpu_options(stat, o);
  stat->add_flag("-j,--json-lines", o.json_lines,
                 "perf stat -j: one JSON object per count and line (counter-value, unit, event, event-runtime, "
                 "pcnt-running, metric-value, metric-unit), on stderr or -o FILE; --json is one document");
  stat->add_option("--workload", o.workload, "workload TOML file, or a bundled name such as p6-demo (instead of a command)");
  stat->add_option("-e,--events", o.events,
                   "events to count, comma-separated; {a,b} counts a and b always together (a group); repeatable")
      ->allow_extra_args(false)
      ->type_name("EVENTS");
  stat->add_option("-M,--metrics", o.metrics, "metrics or metric groups to compute, comma-separated (pmc list --metrics)")
      ->allow_extra_args(false)
      ->type_name("NAMES");
  stat->add_flag("--topdown", o.topdown,
                 "top-down analysis: the vendor's level-1 metrics (TopdownL1) as a tree, bottlenecks marked");
  stat->add_option("--td-level", o.td_level, "with --topdown: down to this level of the tree (1 to 6)")
      ->check(CLI::Range(1u, 6u))
      ->type_name("N");
  stat->add_flag("--metric-only", o.metric_only, "print the metrics only, not the counts they come from");
  stat->add_flag("-a,--all-cpus", o.all_cpus, "count everything on every online CPU (system-wide)");
  stat->add_option("-C,--cpu", o.cpu_list, "count everything on these CPUs (0-3,6)")->type_name("LIST");
  stat->add_option("-p,--pid", o.pids,
                   "count existing processes (every thread; PID[,PID...]) until Ctrl-C, --timeout or they end")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(positive("-p"))
      ->type_name("PID[,PID]");
  stat->add_option("-t,--tid", o.tid, "count an existing thread until Ctrl-C or --timeout")->check(positive("-t"));
  stat->add_flag("-A,--no-aggr", o.no_aggr, "with -a or -C: one count per CPU instead of their sum");
  stat->add_option("-I,--interval-print", o.interval_ms, "print the counts of every interval of MS milliseconds")
      ->check(positive("-I"))
      ->type_name("MS");
  stat->add_option("--interval-count", o.interval_count, "with -I: print N intervals, then stop counting")
      ->check(positive("--interval-count"))
      ->type_name("N");
  stat->add_option("-D,--delay", o.delay_ms, "start counting MS milliseconds after the command starts")
      ->check(positive("-D"))
      ->type_name("MS");
  stat->add_flag("-v,--verbose", o.verbose, "also print each count's raw value, enabled and running time (ns) on stderr");
  stat->add_flag("--per-thread", o.per_thread, "with -p or -t: a count per thread (COMM-TID)");
  stat->add_flag("--per-core", o.per_core, "with -a or -C: counts summed per core (S0-D0-C0, and how many CPUs)");
  stat->add_flag("--per-socket", o.per_socket, "with -a or -C: counts summed per socket (S0, and how many CPUs)");
  stat->add_flag("-B,--big-num,!--no-big-num", o.big_num, "thousands separators in the table (the default), or not");
  stat->add_flag("--all-user", o.all_user, "count every event at user level only, as if each had :u");
  stat->add_flag("--all-kernel", o.all_kernel, "count every event at kernel level only, as if each had :k");
  stat->add_flag("-d,--detailed", o.detailed,
                 "add perf's detailed events: L1-dcache and LLC loads and misses (-dd: also L1-icache, dTLB, iTLB; "
                 "-ddd: also L1-dcache prefetches)");
  stat->add_flag("--append", o.append, "with -o: append to the file instead of replacing it");
  stat->add_option("-r,--repeat", o.repeat, "run the command N times: mean and relative standard deviation")
      ->check(positive("-r"));
  stat->add_option("--timeout", o.timeout_ms, "stop after MS milliseconds (a command is sent SIGTERM)")
      ->check(positive("--timeout"))
      ->type_name("MS");
  stat->add_option("-x,--field-separator", o.separator,
                   "CSV like perf stat -x: value, unit, event, run time, percent running, metric value, metric unit");
  stat->add_option("-o,--output", o.output, "write the report to this file instead of stderr (JSON: stdout)");
  stat->add_flag("--emulate", o.emulate,
                 "run the command under Valgrind's cachegrind and count its activity on the simulated PMU of the "
                 "chosen CPU (--cpuid-dump), deterministically (docs/emulation.md)");
  stat->add_flag("--regions", o.regions,
                 "also report the regions the program marks with the region API (pmc_region_begin/end), one "
                 "row per region and event (docs/regions.md)");
  return stat;
}

CLI::App* add_profile(CLI::App& app, Options& o, bool options) {
  CLI::App* profile = app.add_subcommand(
      "profile", "where a command (pmc profile [-e EVENTS] COMMAND ARGS...) or a simulated workload spends its "
                 "samples: by execution level and by PC");
  if (!options) return profile;
  add_cpu_options(profile, o);
  profile->add_option("--workload", o.workload,
                      "workload TOML file, or a bundled name such as alpha-profile (instead of a command)");
  profile
      ->add_option("-e,--events", o.events,
                   "events that sample, comma-separated (default: a command: cpu-clock:period=100000, a sample "
                   "every 100 us of CPU time; a workload: cycles, whose counter interrupt interval sets the rate, "
                   "PF_CYCLES:period=4096)")
      ->allow_extra_args(false);
  profile->add_option("-o,--output", o.output, "a command: write the report to this file instead of stderr");
  profile
      ->add_option("--pc", o.pc_range,
                   "profile the PCs in START:END (END exclusive; hex or decimal), default: the workload's busiest "
                   "code, or for a command the 64 KiB window with the most samples")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              (void)parse_pc_range(text, false);
            } catch (const pmc::Error& e) {
              return e.what();
            }
            return {};
          },
          "START:END"));
  profile->add_flag("--kernel", o.kernel, "profile kernel-mode PCs instead of user-mode ones");
  profile->add_flag("--emulate", o.emulate,
                    "run the command under Valgrind's cachegrind and attribute the simulated PMU's counts to "
                    "functions and source lines (docs/emulation.md)");
  profile->add_option("--top", o.top, "how many rows of the table (or of the hottest PC buckets) to list (default 10)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  profile->add_flag("-g", o.callchain,
                    "a command: record call chains (frame pointers: the program built with -fno-omit-frame-pointer) "
                    "and print the call graph, callers above callees");
  profile->add_option("--call-graph", o.call_graph, "a command: how call chains are recorded: fp (as -g), or dwarf[,SIZE] (SIZE bytes of user stack copied at each sample, default 8192, and unwound with libdw)")
      ->type_name("fp|dwarf");
  profile->add_option("--sort", o.sort,
                      "a command (or --emulate): the table's keys, comma-separated, as perf report's: dso, sym, srcline (default "
                      "dso,sym)")
      ->type_name("KEYS");
  profile->add_option("--folded", o.folded,
                      "a command (or --emulate): write the stacks to FILE as collapsed stacks (main;work;hot 123 lines, which "
                      "flamegraph.pl and speedscope read); with -g whole call chains")
      ->type_name("FILE");
  profile->add_option("--flamegraph", o.flamegraph,
                      "a command (or --emulate): write an interactive SVG flame graph of the stacks to FILE (hover names a frame, "
                      "a click zooms); with -g whole call chains")
      ->type_name("FILE.svg");
  return profile;
}

CLI::App* add_export(CLI::App& app, Options& o, bool options) {
  CLI::App* exp = app.add_subcommand(
      "export", "serve counts and metrics of every CPU to Prometheus (--listen ADDR:PORT) or write them for "
                "node_exporter's textfile collector (--textfile FILE)");
  if (!options) return exp;
  add_cpu_options(exp, o);
  exp->add_option("--listen", o.listen, "serve /metrics over HTTP on this address (127.0.0.1:9464, :9464)")
      ->type_name("ADDR:PORT");
  exp->add_option("--textfile", o.textfile, "write the metrics to FILE (atomically: a temporary file, then rename)")
      ->type_name("FILE");
  exp->add_option("--interval", o.export_interval, "seconds between readings (default 1)")
      ->check(CLI::Range(0.01, 86400.0))
      ->type_name("S");
  exp->add_option("-e,--events", o.events, "events to count, comma-separated")->allow_extra_args(false);
  exp->add_option("-M,--metrics", o.metrics, "metrics or metric groups to compute, comma-separated")
      ->allow_extra_args(false);
  exp->add_option("-C,--cpu", o.cpu_list, "only these CPUs (default: every online CPU)")->type_name("LIST");
  exp->add_flag("--aggregate", o.aggregate, "one series per event summed over the CPUs instead of one per CPU");
  exp->add_option("--timeout", o.timeout_ms, "stop after MS milliseconds (default: until SIGINT or SIGTERM)")
      ->check(positive("--timeout"))
      ->type_name("MS");
  return exp;
}

int split_command(int argc, char** argv, const CLI::App& app, Options& o) {
  auto takes_value = [&](const CLI::App* sub, const std::string& name) -> std::optional<bool> {
    for (const CLI::App* a : {sub, &app}) {
      if (!a) continue;
      if (const CLI::Option* opt = a->get_option_no_throw(name)) return opt->get_items_expected_min() > 0;
    }
    return std::nullopt;  // unknown: CLI11 reports it
  };
  const CLI::App* sub = nullptr;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    for (const char* name : {"stat", "profile"})
      if (arg == name) sub = app.get_subcommand(name);
    break;
  }
  if (!sub) return argc;
  for (++i; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      o.command.assign(argv + i + 1, argv + argc);
      return i;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      o.command.assign(argv + i, argv + argc);
      return i;
    }
    if (arg[1] == '-') {
      if (arg.find('=') != std::string::npos) continue;
      if (takes_value(sub, arg).value_or(false)) ++i;
      continue;
    }
    // -x, -x VALUE, -xVALUE, and flags run together (-aA)
    for (std::size_t k = 1; k < arg.size(); ++k) {
      const auto value = takes_value(sub, std::string("-") + arg[k]);
      if (!value) break;
      if (*value) {
        if (k + 1 == arg.size()) ++i;
        break;
      }
    }
  }
  return argc;
}

}  // namespace pmc_cli
