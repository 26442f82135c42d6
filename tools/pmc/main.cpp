// pmc: probe the CPU, list and encode events, count events of a command or a simulated workload,
// profile a command (Linux perf sampling) or a simulated workload, export counts to Prometheus,
// import the vendors' event lists as catalogs.
// This file parses the command line (options.cpp has the longer option lists); each subcommand is
// its own file. Errors are one line on stderr; exit 2 for usage errors,
// 1 for everything else, and stat and profile exit with the command's status. A report that
// could not be written (stdout or -o on a full disk) is an error naming the file, exit 1
// (finish_output); only stderr may fail unnoticed (where would it be said?).
#include "cli.hpp"
#include "emulate.hpp"

#include <CLI/CLI.hpp>

#include <csignal>

using namespace pmc_cli;

namespace pmc_cli {
int list_cpuid_dumps(const Options& o);  // list_dumps.cpp: pmc list --cpuid-dumps
}

namespace {

int run(int argc, char** argv) {
  // A closed pipe is a write error to report, not a reason to die.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"pmc: count CPU performance events through pmchal", "pmc"};
  app.require_subcommand(1);
  app.fallthrough();  // --config is accepted after the subcommand too
  Options o;
  std::string config;
  app.add_option("--config", config, "config file (otherwise $PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml or ~/.config/pmc/config.toml, /etc/pmc/config.toml)");

  // The subcommand, found before CLI11 parses: only its options are set up (making all of them
  // cost every command 0.2 ms: docs/performance.md), the others by name for 'pmc --help'.
  // CLI11 reports a misspelt subcommand as "a subcommand is required"; name it instead.
  std::string_view chosen;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--config") {
      ++i;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg == "--version" || arg.rfind("--config=", 0) == 0) continue;
    if (!arg.empty() && arg[0] == '-') {
      error_line(fmt::format("unknown option '{}' before the subcommand (see 'pmc --help')", arg));
      return 2;
    }
    if (arg != "probe" && arg != "list" && arg != "encode" && arg != "stat" && arg != "profile" && arg != "export" &&
        arg != "catalog") {
      error_line(fmt::format(
          "unknown subcommand '{}' (expected probe, list, encode, stat, profile, export or catalog; see 'pmc --help')",
          arg));
      return 2;
    }
    chosen = arg;
    break;
  }
  auto full = [&](std::string_view name) { return chosen.empty() || chosen == name; };

  app.set_version_flag("--version", fmt::format("pmc {} (pmchal)", PMC_VERSION), "the version of pmc and exit");
  CLI::App* probe = app.add_subcommand("probe", "the CPU, the chosen backend and why");
  if (full("probe")) add_cpu_options(probe, o);
  bool cpuid_dumps = false;  // pmc list --cpuid-dumps (list_dumps.cpp)
  CLI::App* list = app.add_subcommand(
      "list", "the events of the chosen backend and the HAL events (tsc, software events) (pmc list [WORD...]), or "
              "the metrics (--metrics)");
  if (full("list")) {
    add_cpu_options(list, o);
    list->add_option("WORD", o.filters,
                     "show only the events whose name or one of whose aliases contains WORD, ignoring case; "
                     "with several words, an event that matches any one of them is shown")
        ->type_name("");
    list->add_flag("--metrics", o.list_metrics, "the metrics and metric groups (pmc stat -M) instead of the events");
    list->add_flag("--cpuid-dumps", cpuid_dumps,
                   "the bundled CPUID dumps (the names --cpuid-dump takes) and the CPU each describes, instead of "
                   "the events");
    list->add_flag("--deprecated", o.deprecated, "list the deprecated events too (marked [deprecated]; hidden otherwise)");
    list->add_option("--topic", o.topics, "only the events of this topic (cache, memory, ...), ignoring case; repeat "
                                          "or separate with commas for several")
        ->delimiter(',')
        ->type_name("TOPIC");
    list->add_option("--counter", o.counter, "only the events that can use general counter N, or a fixed counter "
                                             "(fixed, or fixedN for fixed counter N)")
        ->type_name("N|fixed");
  }
  CLI::App* encode = app.add_subcommand("encode", "the register value each event would be programmed with");
  if (full("encode")) {
    add_cpu_options(encode, o);
    encode->add_option("events", o.events, "event strings (EVENT[:UMASK...][:u][:k][:e=1][:i=1][:c=N])")->required();
  }
  CLI::App* stat = add_stat(app, o, full("stat"));
  CLI::App* profile = add_profile(app, o, full("profile"));
  CLI::App* exp = add_export(app, o, full("export"));
  CLI::App* import = add_catalog(app, o, full("catalog"));

  try {
    app.parse(split_command(argc, argv, app, o), argv);
  } catch (const CLI::CallForVersion& e) {
    write(stdout, e.what() + std::string("\n"));
    return 0;
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
    if (list->parsed()) return cpuid_dumps ? list_cpuid_dumps(o) : cmd_list(o);
    if (encode->parsed()) return cmd_encode(o);
    if (stat->parsed()) return o.emulate ? stat_emulated(o) : cmd_stat(o);
    if (profile->parsed()) return cmd_profile(o);  // --emulate too, once its options are checked
    if (exp->parsed()) return cmd_export(o);
    if (import->parsed()) return cmd_catalog_import(o);
  } catch (const std::exception& e) {
    error_line(e.what());
    return 1;
  } catch (...) {
    error_line("unexpected error");
    return 1;
  }
  return 2;
}

}  // namespace

// Every output stream is checked when the command ends: a report lost to a full disk is an error.
int main(int argc, char** argv) { return finish_output(run(argc, argv)); }
