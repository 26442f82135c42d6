// pmc: probe the CPU, list and encode events, count events of a command or a simulated workload,
// profile a command (Linux perf sampling) or a simulated workload. This file parses the command
// line; each subcommand is its own file. Errors are one line on stderr; exit 2 for usage errors,
// 1 for everything else, and stat and profile exit with the command's status. Nothing written to
// an unwritable stream (stderr on /dev/full) changes the exit status.
#include "cli.hpp"

#include <CLI/CLI.hpp>

#include <csignal>

using namespace pmc_cli;

int main(int argc, char** argv) {
  // A closed pipe is a write error to report, not a reason to die.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"pmc: count CPU performance events through pmchal", "pmc"};
  app.require_subcommand(1);
  app.fallthrough();  // --config is accepted after the subcommand too
  Options o;
  std::string config;
  app.add_option("--config", config, "config file (otherwise $PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml or ~/.config/pmc/config.toml, /etc/pmc/config.toml)");

  auto add_cpu = [&](CLI::App* sub) {
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
  };
  CLI::App* probe = app.add_subcommand("probe", "the CPU, the chosen backend and why");
  add_cpu(probe);
  CLI::App* list = app.add_subcommand(
      "list", "the events of the chosen backend and the HAL events (tsc, software events) (pmc list [WORD...])");
  add_cpu(list);
  list->add_option("WORD", o.filters,
                   "show only the events whose name or one of whose aliases contains WORD, ignoring case; "
                   "with several words, an event that matches any one of them is shown")
      ->type_name("");
  CLI::App* encode = app.add_subcommand("encode", "the register value each event would be programmed with");
  add_cpu(encode);
  encode->add_option("events", o.events, "event strings (EVENT[:UMASK...][:u][:k][:e=1][:i=1][:c=N])")->required();
  CLI::App* stat = app.add_subcommand(
      "stat", "count events of a command (pmc stat [-e EVENTS] -- COMMAND ARGS...) or of a simulated workload");
  add_cpu(stat);
  stat->add_option("--workload", o.workload, "workload TOML file, or a bundled name such as p6-demo (instead of a command)");
  stat->add_option("-e,--events", o.events,
                   "events to count, comma-separated (default: a command: task-clock, context-switches, "
                   "cpu-migrations, page-faults, tsc, and cycles, instructions where a PMU is counted through perf; "
                   "a workload: cycles,instructions)");
  stat->add_option("-x,--field-separator", o.separator, "a command: CSV lines value SEP unit SEP event SEP time_running SEP percent");
  stat->add_option("-o,--output", o.output, "a command: write the counts to this file instead of stderr");
  stat->add_option("command", o.command, "the command to count and its arguments (after --)");
  stat->positionals_at_end();
  CLI::App* profile = app.add_subcommand(
      "profile", "where a command (pmc profile [-e EVENTS] -- COMMAND ARGS...) or a simulated workload spends its "
                 "samples: by execution level and by PC");
  add_cpu(profile);
  profile->add_option("--workload", o.workload,
                      "workload TOML file, or a bundled name such as alpha-profile (instead of a command)");
  profile->add_option("-e,--events", o.events,
                      "events that sample, comma-separated (default: a command: cpu-clock:period=100000, a sample "
                      "every 100 us of CPU time; a workload: cycles, whose counter interrupt interval sets the rate, "
                      "PF_CYCLES:period=4096)");
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
  profile->add_option("--top", o.top, "how many of the hottest PC buckets to list (default 10)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  profile->add_option("command", o.command, "the command to profile and its arguments (after --)");
  profile->positionals_at_end();

  // CLI11 reports a misspelt subcommand as "a subcommand is required"; name it instead.
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--config") {
      ++i;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg.rfind("--config=", 0) == 0) continue;
    if (!arg.empty() && arg[0] == '-') {
      error_line(fmt::format("unknown option '{}' before the subcommand (see 'pmc --help')", arg));
      return 2;
    }
    if (arg != "probe" && arg != "list" && arg != "encode" && arg != "stat" && arg != "profile") {
      error_line(fmt::format("unknown subcommand '{}' (expected probe, list, encode, stat or profile; see 'pmc --help')", arg));
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    write(stdout, app.help());
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    write(stdout, app.help("", CLI::AppFormatMode::All));
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    error_line(fmt::format("{} (see 'pmc --help')", what));
    return 2;
  }
  if (!config.empty()) o.config = config;
  try {
    if (probe->parsed()) return cmd_probe(o);
    if (list->parsed()) return cmd_list(o);
    if (encode->parsed()) return cmd_encode(o);
    if (stat->parsed()) return cmd_stat(o);
    if (profile->parsed()) return cmd_profile(o);
  } catch (const std::exception& e) {
    error_line(e.what());
    return 1;
  } catch (...) {
    error_line("unexpected error");
    return 1;
  }
  return 2;
}
