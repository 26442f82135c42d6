#define BOOST_TEST_MODULE stat_options
#include <boost/test/unit_test.hpp>

// `pmc stat` with perf stat's options, as a user runs it: the command begins at the first word
// that is neither an option nor an option's value; -e groups; <not supported> rows; unknown
// events named with the nearest names; -x with perf's seven columns; -j on stdout; -I, -r,
// --timeout, -a, -C, -A, -p, -t; --version. Real counts come from the perf software events of
// this machine; simulated ones from the bundled workloads, whose totals are worked out by hand.

#include "support/perf_stat.hpp"
#include "support/pmc_command.hpp"
#include "support/preconditions.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using pmc_test::Result;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using pmc_test::lines_of;
std::vector<std::string> fields(const std::string& line, char sep) { return pmc_test::split(line, sep); }

// CSV lines of an event (its third column, after the time and CPU columns when there are).
std::vector<std::vector<std::string>> csv_rows(const std::string& text, char sep, std::size_t event_column = 2) {
  std::vector<std::vector<std::string>> out;
  for (const auto& l : lines_of(text)) {
    auto f = fields(l, sep);
    if (f.size() > event_column) out.push_back(f);
  }
  return out;
}

const json* counter(const json& doc, const std::string& event) {
  for (const auto& c : doc.at("counters"))
    if (c.at("event") == event) return &c;
  return nullptr;
}

// CPU-wide events need root or CAP_PERFMON where perf_event_paranoid > 0.
boost::test_tools::assertion_result cpu_wide(boost::unit_test::test_unit_id) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  boost::test_tools::assertion_result r(geteuid() == 0 || paranoid <= 0);
  r.message() << "counting whole CPUs needs root (or perf_event_paranoid <= 0; it is " << paranoid << ")";
  return r;
}

unsigned online_cpu_count() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string list;
  std::getline(in, list);
  unsigned n = 0;
  for (const auto& part : fields(list, ',')) {
    const auto dash = part.find('-');
    n += dash == std::string::npos ? 1u : static_cast<unsigned>(std::stoi(part.substr(dash + 1)) - std::stoi(part) + 1);
  }
  return n;
}

// A `sleep` of our own to attach to; killed (and reaped) by the destructor.
struct Sleeper {
  pid_t pid = 0;
  explicit Sleeper(const char* seconds) {
    std::vector<std::string> args{"/bin/sleep", seconds};
    std::vector<char*> argv = pmc_test::c_strings(args);
    BOOST_REQUIRE(posix_spawn(&pid, "/bin/sleep", nullptr, nullptr, argv.data(), environ) == 0);
  }
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  bool alive() const { return ::kill(pid, 0) == 0; }
};

double seconds_elapsed(const std::string& report) {
  static const std::regex re(R"(([0-9.]+) seconds time elapsed)");
  std::smatch m;
  if (!std::regex_search(report, m, re)) return -1;
  return std::stod(m[1].str());
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(the_command_begins_at_the_first_word_that_is_no_option, pmc_test::PmcCommand) {
  // perf's spelling: no "--"; -e takes one value, so `ls` is the command and `-l /` its arguments.
  Result r = pmc({"stat", "-e", "task-clock", "ls", "-l", "/"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "total "), r);  // ls -l's first line
  BOOST_TEST(contains(r.err, "Performance counter stats for 'ls -l /'"), r);
  BOOST_TEST(contains(r.err, " msec   task-clock"), r);
  r = pmc({"stat", "-e", "task-clock,page-faults", "ls", "-l", "/"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "page-faults"), r);
  // Options with values (-x ;, -e), flags, then a command whose own options look like pmc's.
  r = pmc({"stat", "-x", ";", "-e", "task-clock", "sh", "-c", "echo -e x; exit 4"});
  BOOST_TEST(r.status == 4, r);
  BOOST_TEST(contains(r.out, "x\n"), r);
  // "--" is still accepted; and an unknown option before the command is an error.
  r = pmc({"stat", "-e", "task-clock", "--", "sh", "-c", "exit 5"});
  BOOST_TEST(r.status == 5, r);
  r = pmc({"stat", "--bogus", "true"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "--bogus"), r);
}

BOOST_FIXTURE_TEST_CASE(version, pmc_test::PmcCommand) {
  Result r = pmc({"--version"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(std::regex_match(r.out, std::regex(R"(pmc [0-9]+\.[0-9]+\.[0-9]+ \(pmchal\)\n)")), r);
}

BOOST_AUTO_TEST_CASE(events_this_machine_cannot_count_are_not_supported_rows, *pmc_test::requires_no_perf_pmu()) {
  pmc_test::PmcCommand c;
  const fs::path marker = c.tmp.path() / "ran";
  Result r = c.pmc({"stat", "-e", "cycles,task-clock", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(fs::exists(marker));  // the command ran
  static const std::regex row(R"(\n +<not supported> +cycles *\n)");
  BOOST_TEST(std::regex_search(r.err, row), r);
  BOOST_TEST(contains(r.err, " msec   task-clock"), r);
  // CSV: perf's row for it; JSON: the reason.
  r = c.pmc({"stat", "-x", ",", "-e", "cycles", "true"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.err == "<not supported>,,cycles,0,100.00,,\n", r);
  r = c.pmc({"stat", "--json", "-e", "cycles,page-faults", "true"});
  json j = json::parse(r.out);
  BOOST_TEST(j.at("not_supported").at(0).at("event") == "cycles");
  BOOST_TEST(!j.at("not_supported").at(0).at("reason").get<std::string>().empty());
  BOOST_TEST(j.at("counters").size() == 1u);
  // The default events are perf's, the ones this machine lacks shown the same way.
  r = c.pmc({"stat", "true"});
  for (const char* e : {"cycles", "instructions", "branches", "branch-misses"})
    BOOST_TEST(std::regex_search(r.err, std::regex(std::string(R"(<not supported> +)") + e + " *\n")), e << r);
  // Without a backend, each such default says so, with probe's reason for choosing none.
  const json probe = json::parse(c.pmc({"probe", "--json"}).out);
  if (probe.at("backend").is_null()) {
    r = c.pmc({"stat", "--json", "true"});
    j = json::parse(r.out);
    BOOST_TEST(j.at("not_supported").size() == 4u, r);
    for (const auto& n : j.at("not_supported")) {
      const std::string why = n.at("reason").get<std::string>();
      const std::string event = n.at("event").get<std::string>();
      BOOST_TEST(contains(why, "event '" + event + "' needs a PMU backend, and none was chosen: "), why);
      BOOST_TEST(contains(why, probe.at("reason").get<std::string>()), why);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(an_unknown_event_names_the_nearest, pmc_test::PmcCommand) {
  const fs::path marker = tmp.path() / "ran";
  Result r = pmc({"stat", "-e", "tsk-clock", "touch", marker.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "unknown event 'tsk-clock'"), r);
  BOOST_TEST(contains(r.err, "nearest names: task-clock"), r);
  BOOST_TEST(!fs::exists(marker));  // the command never ran
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e", "FLOPZ"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "nearest names: FLOPS"), r);
}

BOOST_FIXTURE_TEST_CASE(csv_has_perfs_seven_columns, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "-x", ";", "-e", "task-clock,page-faults,tsc", "true"});
  BOOST_TEST(r.status == 0, r);
  const auto rows = csv_rows(r.err, ';');
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  for (const auto& f : rows) BOOST_TEST(f.size() == 7u, r);
  // value (msec for the clock events, as perf), unit, event, run time (ns), percent running,
  // metric value, metric unit.
  BOOST_TEST(rows[0][1] == "msec");
  BOOST_TEST(rows[0][2] == "task-clock");
  const double msec = std::stod(rows[0][0]);
  const double run_ns = std::stod(rows[0][3]);
  BOOST_TEST(std::abs(msec - run_ns / 1e6) <= 0.005 + 1e-9, rows[0][0] << " msec vs " << rows[0][3] << " ns");
  BOOST_TEST(rows[0][4] == "100.00");
  BOOST_TEST(rows[0][6] == "CPUs utilized");
  BOOST_TEST(rows[1][1] == "");
  BOOST_TEST(rows[1][2] == "page-faults");
  BOOST_TEST((rows[1][6] == "K/sec" || rows[1][6] == "M/sec" || rows[1][6] == "/sec"), rows[1][6]);
  BOOST_TEST(rows[2][1] == "ticks");
}

BOOST_FIXTURE_TEST_CASE(json_on_stdout_or_the_output_file, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "--json", "-e", "task-clock", "sh", "-c", "echo hello"});
  BOOST_TEST(r.status == 0, r);
  BOOST_REQUIRE(r.out.rfind("hello\n", 0) == 0u);  // the command's output, then the report
  json j = json::parse(r.out.substr(6));
  BOOST_TEST(j.at("exit_status") == 0);
  BOOST_TEST(j.at("command") == json::array({"sh", "-c", "echo hello"}));
  BOOST_TEST(r.err.empty(), r);
  const fs::path file = tmp.path() / "report.json";
  r = pmc({"stat", "--json", "-o", file.string(), "-e", "task-clock", "sh", "-c", "echo hello"});
  BOOST_TEST(r.out == "hello\n", r);
  BOOST_TEST(json::parse(pmc_test::slurp(file)).at("counters").size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(interval_lines_in_text_csv_and_json, pmc_test::PmcCommand) {
  // 350 ms of sleep printed every 100 ms: three lines at least, time stamps 0.1 s apart.
  Result r = pmc({"stat", "-I", "100", "-e", "task-clock", "sleep", "0.35"});
  BOOST_TEST(r.status == 0, r);
  std::vector<double> times;
  for (const auto& l : lines_of(r.err))
    if (contains(l, "task-clock")) times.push_back(std::stod(l));
  BOOST_REQUIRE_MESSAGE(times.size() >= 3u, r);
  // The last interval is the partial one the command's end cut short (perf prints it too).
  for (std::size_t i = 1; i + 1 < times.size(); ++i) BOOST_TEST(times[i] - times[i - 1] >= 0.099, r);
  BOOST_TEST(!contains(r.err, "seconds time elapsed"), r);  // the intervals are the report
  r = pmc({"stat", "-I", "100", "-x", ",", "-e", "task-clock", "sleep", "0.25"});
  const auto rows = csv_rows(r.err, ',', 3);
  BOOST_REQUIRE_MESSAGE(rows.size() >= 2u, r);
  for (const auto& f : rows) {
    BOOST_TEST(f.size() == 8u);  // the time, then perf's seven columns
    BOOST_TEST(f[3] == "task-clock");
  }
  r = pmc({"stat", "-I", "100", "--json", "-e", "task-clock", "sleep", "0.25"});
  const auto json_lines = lines_of(r.out);
  BOOST_REQUIRE_MESSAGE(json_lines.size() >= 2u, r);
  for (const auto& l : json_lines) {
    json j = json::parse(l);  // JSON Lines: one object a line
    BOOST_TEST(j.at("interval").get<double>() > 0.0);
    BOOST_TEST(j.at("counters").at(0).at("event") == "task-clock");
  }
}

BOOST_FIXTURE_TEST_CASE(repeat_prints_the_mean_and_its_noise, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "-r", "3", "-e", "task-clock,page-faults", "true"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "Performance counter stats for 'true' (3 runs):"), r);
  BOOST_TEST(std::regex_search(r.err, std::regex(R"(task-clock .*\( \+- *[0-9.]+% \))")), r);
  BOOST_TEST(std::regex_search(r.err, std::regex(R"(\+- [0-9.]+ seconds time elapsed  \( \+- *[0-9.]+% \))")), r);
  r = pmc({"stat", "-r", "3", "-x", ",", "-e", "task-clock", "true"});
  const auto rows = csv_rows(r.err, ',');
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].size() == 8u);  // perf's variance column after the percentage
  BOOST_TEST(std::regex_match(rows[0][5], std::regex(R"([0-9.]+%)")), rows[0][5]);
  r = pmc({"stat", "-r", "2", "--json", "-e", "task-clock", "true"});
  json j = json::parse(r.out);
  BOOST_TEST(j.at("runs") == 2);
  BOOST_TEST(j.at("counters").at(0).contains("noise_percent"));
}

BOOST_FIXTURE_TEST_CASE(timeout_ends_a_command, pmc_test::PmcCommand) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r = pmc({"stat", "--timeout", "200", "-e", "task-clock", "sleep", "30"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(r.status == 128 + SIGTERM, r);
  BOOST_TEST(took < 20.0);  // a hang guard, not a timing assertion
  BOOST_TEST(contains(r.err, "task-clock"), r);
}

BOOST_FIXTURE_TEST_CASE(all_cpus_and_cpu_lists, pmc_test::PmcCommand, *boost::unit_test::precondition(cpu_wide)) {
  // cpu-clock of a whole CPU advances with the wall clock whatever runs: -a over 200 ms counts
  // about 200 ms per online CPU, -C 0 about 200 ms.
  const unsigned cpus = online_cpu_count();
  Result r = pmc({"stat", "-a", "-x", ",", "-e", "cpu-clock", "sleep", "0.2"});
  BOOST_TEST(r.status == 0, r);
  auto rows = csv_rows(r.err, ',');
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(std::stod(rows[0][0]) >= 0.19 * 1000 * cpus, r);
  r = pmc({"stat", "-a", "-A", "-x", ",", "-e", "cpu-clock", "sleep", "0.2"});
  rows = csv_rows(r.err, ',', 3);
  BOOST_REQUIRE_EQUAL(rows.size(), cpus);
  for (unsigned c = 0; c < cpus; ++c) {
    BOOST_TEST(rows[c][0] == "CPU" + std::to_string(c));
    BOOST_TEST(std::stod(rows[c][1]) >= 190.0, r);
  }
  r = pmc({"stat", "-C", "0", "-A", "-e", "cpu-clock", "sleep", "0.2"});
  BOOST_TEST(contains(r.err, "CPU0 "), r);
  BOOST_TEST(!contains(r.err, "CPU1 "), r);
  // Without a command: until --timeout (or Ctrl-C).
  r = pmc({"stat", "-a", "--timeout", "200", "-e", "cpu-clock"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "Performance counter stats for system wide:"), r);
  BOOST_TEST(seconds_elapsed(r.err) >= 0.19, r);
  r = pmc({"stat", "-C", "0-x", "true"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "'0-x' is not a CPU list"), r);
}

BOOST_FIXTURE_TEST_CASE(attach_to_a_process_or_a_thread, pmc_test::PmcCommand) {
  Sleeper s("30");
  Result r = pmc({"stat", "-p", std::to_string(s.pid), "--timeout", "200", "-e", "task-clock,context-switches"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "Performance counter stats for process id '" + std::to_string(s.pid) + "'"), r);
  BOOST_TEST(seconds_elapsed(r.err) >= 0.19, r);
  BOOST_TEST(s.alive());  // attaching never ends the process
  r = pmc({"stat", "-t", std::to_string(s.pid), "--timeout", "200", "-e", "task-clock"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "thread id '" + std::to_string(s.pid) + "'"), r);
  // The count ends when the process does.
  Sleeper brief("0.3");
  const auto t0 = std::chrono::steady_clock::now();
  r = pmc({"stat", "-p", std::to_string(brief.pid), "-e", "task-clock"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 20.0);
}

BOOST_FIXTURE_TEST_CASE(ctrl_c_ends_an_attached_count, pmc_test::PmcCommand) {
  Sleeper s("30");
  const fs::path report = tmp.path() / "report.txt";
  std::vector<std::string> args{(fs::path(PMC_BIN_DIR) / "pmc").string(), "stat", "-p", std::to_string(s.pid), "-o",
                                report.string(), "-e", "task-clock"};
  std::vector<char*> argv = pmc_test::c_strings(args);
  std::vector<std::string> env_s = pmc_test::env_strings(env);
  std::vector<char*> envp = pmc_test::c_strings(env_s);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pmc_pid = 0;
  BOOST_REQUIRE(posix_spawn(&pmc_pid, argv[0], nullptr, &attr, argv.data(), envp.data()) == 0);
  posix_spawnattr_destroy(&attr);
  // SIGINT once pmc catches it (its SigCgt mask in /proc has bit 1): a fixed sleep raced a slow
  // start under the sanitizers, where the default action killed pmc before it was counting.
  BOOST_REQUIRE_MESSAGE(pmc_test::catches_signal_within(pmc_pid, SIGINT, 30000),
                        "pmc stat -p did not install its SIGINT handler within 30 s");
  BOOST_REQUIRE(::kill(pmc_pid, SIGINT) == 0);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 2000 && done == 0; ++i) {
    done = waitpid(pmc_pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {  // a hang guard
    ::kill(pmc_pid, SIGKILL);
    waitpid(pmc_pid, &status, 0);
    BOOST_FAIL("pmc stat -p did not end on SIGINT");
  }
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0);
  BOOST_TEST(contains(pmc_test::slurp(report), "task-clock"), pmc_test::slurp(report));
  BOOST_TEST(s.alive());
}

BOOST_FIXTURE_TEST_CASE(usage_errors, pmc_test::PmcCommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"stat", "-p", "1", "true"}, {"stat", "-A", "true"}, {"stat", "-r", "2", "-a"},
        {"stat", "-x", ",", "-j", "true"}, {"stat", "-r", "2", "-I", "100", "true"},
        {"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-a"}, {"stat", "-p", "1", "-t", "1"},
        {"stat", "-I", "0", "true"}}) {
    Result r = pmc(args);
    BOOST_TEST(r.status == 2, r);
    BOOST_TEST(r.err.rfind("pmc: ", 0) == 0u, r);
  }
}

// ---------------------------------------------------------------------------------------------
// Groups, multiplexing and metrics on the simulated Pentium III (p6-demo, by hand: 6,290,000
// cycles, 5,290,000 unhalted; 7,900,000 instructions; FLOPS 3,000,000; MUL 400,000; DIV 10,000).

BOOST_FIXTURE_TEST_CASE(six_p6_events_are_multiplexed_and_marked, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                  "cycles,instructions,FLOPS,MUL,DIV,branches", "--json"});
  BOOST_TEST(r.status == 0, r);
  json j = json::parse(r.out);
  // Three sets in slices of 100,000 cycles: 21, 21 and 20 slices plus the last 90,000 cycles.
  const std::map<std::string, std::uint64_t> running{{"cycles", 2'100'000}, {"instructions", 2'100'000},
                                                     {"FLOPS", 2'100'000},  {"MUL", 2'100'000},
                                                     {"DIV", 2'090'000},    {"branches", 2'090'000}};
  for (const auto& [event, run] : running) {
    const json* c = counter(j, event);
    BOOST_REQUIRE_MESSAGE(c, event);
    BOOST_TEST(c->at("extrapolated") == true, event);
    BOOST_TEST(c->at("time_enabled") == 6'290'000u, event);
    BOOST_TEST(c->at("time_running") == run, event);
  }
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
           "cycles,instructions,FLOPS,MUL,DIV,branches"});
  // 2,100,000 / 6,290,000 = 33.39%
  BOOST_TEST(std::regex_search(r.out, std::regex(R"(cycles .*\(33\.39%, scaled\))")), r);
}

BOOST_FIXTURE_TEST_CASE(braces_group_events, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e", "{MUL,DIV}"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "MUL, DIV"), r);
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e", "{FLOPS,MUL},DIV", "--json"});
  BOOST_TEST(r.status == 0, r);
  json j = json::parse(r.out);
  BOOST_TEST(counter(j, "FLOPS")->at("time_running") == counter(j, "MUL")->at("time_running"));
  // Real events in a group, and malformed groups.
  r = pmc({"stat", "-e", "{task-clock,page-faults},cs", "true"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.err, "page-faults"), r);
  BOOST_TEST(contains(r.err, " cs "), r);
  for (const char* bad : {"{task-clock", "{a,{b}}", "{task-clock}x", "task-clock,,cs"}) {
    r = pmc({"stat", "-e", bad, "true"});
    BOOST_TEST(r.status == 1, r);
    BOOST_TEST(contains(r.err, "event list"), r);
  }
}

BOOST_FIXTURE_TEST_CASE(metrics_on_workloads, pmc_test::PmcCommand) {
  // FLOPS_PER_CYCLE needs FLOPS and CPU_CLK_UNHALTED, which fit: 3,000,000 / 5,290,000.
  Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-M", "FLOPS_PER_CYCLE", "--json"});
  BOOST_TEST(r.status == 0, r);
  json j = json::parse(r.out);
  BOOST_TEST(j.at("counters").size() == 2u, r.out);  // -M alone counts what the metric needs
  BOOST_TEST(j.at("metrics").at(0).at("name") == "FLOPS_PER_CYCLE");
  BOOST_TEST(j.at("metrics").at(0).at("value").get<double>() == 3'000'000.0 / 5'290'000.0,
             boost::test_tools::tolerance(1e-12));
  // The text shows it beside its first event; IPC (shown by default) beside instructions:
  // 7,900,000 / 5,290,000 = 1.493.
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo"});
  BOOST_TEST(std::regex_search(r.out, std::regex(R"(7,900,000 +instructions +# +1\.493 insn per cycle)")), r);
  // A zero count as divisor says so: a workload that is all halted has no unhalted cycle.
  const fs::path halted = tmp.path() / "halted.toml";
  pmc_test::spit(halted, "[[segment]]\ncycles = 1000\nhalted = true\n");
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", halted.string(), "-M", "IPC"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "IPC: the formula 'instructions / cycles' divides by zero: instructions and cycles counted 0"), r);
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-M", "IPCC"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "unknown metric or metric group 'IPCC'; nearest: IPC"), r);
}

BOOST_FIXTURE_TEST_CASE(metrics_on_commands, pmc_test::PmcCommand) {
  Result r = pmc({"stat", "-M", "CPU_UTILIZATION", "--json", "sleep", "0.1"});
  BOOST_TEST(r.status == 0, r);
  json j = json::parse(r.out);
  const json& m = j.at("metrics").at(0);
  BOOST_TEST(m.at("name") == "CPU_UTILIZATION");
  // task-clock (ns) over the elapsed ns, the definition in data/metrics/generic.toml
  const double want = counter(j, "task-clock")->at("value").get<double>() / j.at("elapsed_ns").get<double>();
  BOOST_TEST(m.at("value").get<double>() == want, boost::test_tools::tolerance(1e-9));
  r = pmc({"stat", "-M", "CPU_UTILIZATION,os", "true"});
  BOOST_TEST(contains(r.err, "CPUs utilized"), r);
  BOOST_TEST(contains(r.err, "faults per CPU second"), r);
}

BOOST_FIXTURE_TEST_CASE(default_events_per_backend, pmc_test::PmcCommand) {
  // The README's example: the Alpha 21064 has no `instructions`; its generic events that fit its
  // two counters are cycles (counter 0) and branch-misses (counter 1; branches would need counter
  // 0 too). alpha-counters: 278,533 cycles, counted per 65,536-cycle interrupt: 4 x 65,536.
  Result r = pmc({"stat", "--backend", "alpha21064_sim", "--workload", "alpha-counters", "--json"});
  BOOST_TEST(r.status == 0, r);
  json j = json::parse(r.out);
  BOOST_REQUIRE_EQUAL(j.at("counters").size(), 2u);
  BOOST_TEST(j.at("counters").at(0).at("event") == "cycles");
  BOOST_TEST(j.at("counters").at(0).at("value") == 262'144);
  BOOST_TEST(j.at("counters").at(1).at("event") == "branch-misses");
  // A Core 2 (archperf v2: three fixed and two general counters) holds all four: archperf-demo
  // has 5,750,000 unhalted cycles, 15,700,000 instructions, 5,650,000 branches, 200,000 misses.
  r = pmc({"stat", "--cpuid-dump", "core2", "--workload", "archperf-demo", "--json"});
  j = json::parse(r.out);
  BOOST_REQUIRE_EQUAL(j.at("counters").size(), 4u);
  BOOST_TEST(counter(j, "cycles")->at("value") == 5'750'000);
  BOOST_TEST(counter(j, "instructions")->at("value") == 15'700'000);
  BOOST_TEST(counter(j, "branches")->at("value") == 5'650'000);
  BOOST_TEST(counter(j, "branch-misses")->at("value") == 200'000);
}

BOOST_FIXTURE_TEST_CASE(list_metrics, pmc_test::PmcCommand) {
  Result r = pmc({"list", "--metrics", "--cpuid-dump", "pentium-iii"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "L2_MISS_RATE"), r);
  BOOST_TEST(contains(r.out, "= L2_LINES_IN / INST_RETIRED"), r);
  r = pmc({"list", "--metrics", "--cpuid-dump", "pentium-iii", "--json"});
  json j = json::parse(r.out);
  std::map<std::string, json> by;
  for (const auto& m : j) by[m.at("name").get<std::string>()] = m;
  BOOST_TEST(by.at("IPC").at("available") == true);
  BOOST_TEST(by.at("FRONTEND_STALL_RATIO").at("available") == false);
  BOOST_TEST(contains(by.at("FRONTEND_STALL_RATIO").at("unavailable").get<std::string>(), "stalled-cycles-frontend"));
  BOOST_TEST(by.at("L2_MISS_RATE").at("backend") == "p6");
}
