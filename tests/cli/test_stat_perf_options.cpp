#define BOOST_TEST_MODULE stat_perf_options
#include <boost/test/unit_test.hpp>

// perf stat's options in `pmc stat`, each with perf's meaning, shown by what it changes: -v (the
// raw counts), --per-thread (a row per thread, COMM-TID), -B/--no-big-num (thousands
// separators), -p PID,PID, -D (counting starts later), --interval-count, --all-user and
// --all-kernel (counts of one level, exact on the simulated P6), -d (perf's detailed events,
// <not supported> where this machine has no PMU), --per-core and --per-socket (sysfs topology,
// perf's S0-D0-C0 prefix), --append. Compared with perf's own output where perf is installed.

#include "support/perf_stat.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <map>
#include <regex>

namespace fs = std::filesystem;
using pmc_test::Result;
using pmc_test::csv_rows;
using pmc_test::lines_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

boost::test_tools::assertion_result cpu_wide(boost::unit_test::test_unit_id) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  boost::test_tools::assertion_result r(geteuid() == 0 || paranoid <= 0);
  r.message() << "counting whole CPUs needs root (or perf_event_paranoid <= 0; it is " << paranoid << ")";
  return r;
}

// A sleeping process to attach to, killed and reaped at the end.
struct Sleeper {
  pid_t pid;
  explicit Sleeper(pmc_test::PmcCommand& f) : pid(pmc_test::spawn("/bin/sleep", {"30"}, f.env)) {}
  ~Sleeper() {
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
};

// The events (third CSV column) of a -x, report.
std::vector<std::string> events_of(const std::string& csv, std::size_t column = 2) {
  std::vector<std::string> out;
  for (const auto& row : csv_rows(csv, column + 1)) out.push_back(row[column]);
  return out;
}

std::uint64_t count_of(const std::string& text, const std::string& event) {
  for (const auto& l : lines_of(text)) {
    const auto w = pmc_test::words(l);
    if (w.size() >= 2 && w[1] == event) {
      std::string digits;
      for (char c : w[0])
        if (c != ',') digits += c;
      return std::stoull(digits);
    }
  }
  return 0;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(stat_perf_options, pmc_test::PmcCommand)

// -v: "EVENT: VALUE ENABLED RUNNING", the raw numbers of the counts the report shows.
BOOST_AUTO_TEST_CASE(verbose_prints_the_raw_counts) {
  const Result r = pmc({"stat", "-v", "-x,", "-e", "task-clock,page-faults", "--", "true"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const std::regex raw(R"((\S+): (\d+) (\d+) (\d+))");
  std::map<std::string, std::vector<std::string>> verbose;
  for (const auto& l : lines_of(r.err)) {
    std::smatch m;
    if (std::regex_match(l, m, raw)) verbose[m[1]] = {m[2], m[3], m[4]};
  }
  BOOST_REQUIRE_EQUAL(verbose.size(), 2u);
  for (const auto& row : csv_rows(r.err)) {
    if (row[2] != "page-faults") continue;
    BOOST_TEST(verbose["page-faults"][0] == row[0]);  // the count
    BOOST_TEST(verbose["page-faults"][2] == row[3]);  // its run time
  }
  // Without -v, none of those lines.
  const Result quiet = pmc({"stat", "-x,", "-e", "page-faults", "--", "true"});
  BOOST_TEST(!contains(quiet.err, "page-faults: "), quiet.err);
}

BOOST_AUTO_TEST_CASE(verbose_lines_are_perfs, *pmc_test::requires_perf()) {
  const Result perf = pmc_test::perf_stat(*this, {"-v", "-x,", "-e", "page-faults", "--", "true"});
  const Result mine = pmc({"stat", "-v", "-x,", "-e", "page-faults", "--", "true"});
  const std::regex raw(R"(page-faults: \d+ \d+ \d+)");
  const auto has = [&](const std::string& text) {
    for (const auto& l : lines_of(text))
      if (std::regex_match(l, raw)) return true;
    return false;
  };
  BOOST_TEST(has(perf.err), perf.err);
  BOOST_TEST(has(mine.err), mine.err);
}

// -B (the default) and --no-big-num: 7,550,000 or 7550000.
BOOST_AUTO_TEST_CASE(big_num_switches_the_thousands_separators) {
  const std::vector<std::string> base{"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e",
                                      "INST_RETIRED:u"};
  for (const char* flag : {"", "-B", "--big-num"}) {
    std::vector<std::string> args = base;
    if (*flag) args.emplace_back(flag);
    const Result r = pmc(args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r);
    BOOST_TEST(contains(r.out, "7,550,000"), flag << ": " << r.out);
  }
  std::vector<std::string> args = base;
  args.emplace_back("--no-big-num");
  const Result r = pmc(args);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  BOOST_TEST(contains(r.out, " 7550000 "), r.out);
  BOOST_TEST(!contains(r.out, "7,550,000"), r.out);
}

// perf takes -B's separator from the locale (LC_NUMERIC): under LC_ALL=C, which the tests run
// with, it prints none even with -B; pmc's table always groups unless --no-big-num. So with perf
// the comparison is of --no-big-num: both print the count without separators.
BOOST_AUTO_TEST_CASE(no_big_num_as_perf, *pmc_test::requires_perf()) {
  // dd's 8 MiB buffer: thousands of page faults.
  const std::vector<std::string> cmd{"-e", "page-faults", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=8M", "count=1"};
  for (const char* flag : {"--no-big-num"}) {
    std::vector<std::string> args{flag};
    args.insert(args.end(), cmd.begin(), cmd.end());
    std::vector<std::string> ours{"stat"};
    ours.insert(ours.end(), args.begin(), args.end());
    const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
    BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
    std::string a, b;
    for (const auto& l : lines_of(mine.err))
      if (contains(l, "page-faults")) a = pmc_test::words(l).at(0);
    for (const auto& l : lines_of(perf.err))
      if (contains(l, "page-faults")) b = pmc_test::words(l).at(0);
    BOOST_TEST(std::stoull(std::regex_replace(a, std::regex(","), "")) > 1000u, a);
    BOOST_TEST(!contains(a, ","), flag << ": pmc " << a);
    BOOST_TEST(!contains(b, ","), flag << ": perf " << b);
  }
}

// -p PID,PID: both processes; --per-thread: a row per thread, COMM-TID first.
BOOST_AUTO_TEST_CASE(several_processes_and_per_thread_rows) {
  Sleeper one(*this), two(*this);
  const std::string pids = std::to_string(one.pid) + "," + std::to_string(two.pid);
  const Result r = pmc({"stat", "-p", pids, "--per-thread", "-x,", "-e", "task-clock", "--timeout", "200"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const auto rows = csv_rows(r.err);
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  BOOST_TEST(rows[0][0] == "sleep-" + std::to_string(one.pid));
  BOOST_TEST(rows[1][0] == "sleep-" + std::to_string(two.pid));
  BOOST_TEST(rows[0][3] == "task-clock");
  // Asleep throughout: perf's <not counted>.
  BOOST_TEST(rows[0][1] == "<not counted>");
  // Without --per-thread, one row for both, and the table names them.
  const Result sum = pmc({"stat", "-p", pids, "-e", "task-clock", "--timeout", "200"});
  BOOST_REQUIRE_MESSAGE(sum.status == 0, sum);
  BOOST_TEST(contains(sum.err, "process id '" + pids + "'"), sum.err);
  // --per-thread needs -p or -t, as perf's.
  const Result bad = pmc({"stat", "--per-thread", "--", "true"});
  BOOST_TEST(bad.status == 2);
  BOOST_TEST(contains(bad.err, "--per-thread"), bad.err);
}

BOOST_AUTO_TEST_CASE(per_thread_rows_match_perfs, *pmc_test::requires_perf()) {
  Sleeper one(*this), two(*this);
  const std::string pids = std::to_string(one.pid) + "," + std::to_string(two.pid);
  const Result mine = pmc({"stat", "-p", pids, "--per-thread", "-e", "task-clock", "--timeout", "200"});
  const Result perf =
      pmc_test::perf_stat(*this, {"-p", pids, "--per-thread", "-e", "task-clock", "--", "sleep", "0.2"});
  BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
  std::vector<std::vector<std::string>> a, b;
  for (const auto& l : lines_of(mine.err))
    if (contains(l, "task-clock")) a.push_back(pmc_test::words(l));
  for (const auto& l : lines_of(perf.err))
    if (contains(l, "task-clock")) b.push_back(pmc_test::words(l));
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST(a[i] == b[i], boost::test_tools::per_element());
  // The columns too: perf's "%16s-%-8d" before the count, which ends where perf's does.
  std::size_t unit_mine = 0, unit_perf = 1;
  for (const auto& l : lines_of(mine.err))
    if (contains(l, "task-clock")) unit_mine = l.find(" msec");
  for (const auto& l : lines_of(perf.err))
    if (contains(l, "task-clock")) unit_perf = l.find(" msec");
  BOOST_TEST(unit_mine == unit_perf);
}

// -D MS: nothing counted before MS have passed; a command that ends sooner counts nothing.
BOOST_AUTO_TEST_CASE(delay_starts_counting_later) {
  const Result now = pmc({"stat", "-x,", "-e", "page-faults", "--", "true"});
  BOOST_REQUIRE_MESSAGE(now.status == 0, now);
  BOOST_TEST(std::stoull(csv_rows(now.err).at(0).at(0)) > 0u);
  const Result later = pmc({"stat", "-D", "3000", "-x,", "-e", "task-clock,page-faults", "--", "true"});
  BOOST_REQUIRE_MESSAGE(later.status == 0, later);
  BOOST_TEST(contains(later.err, "Events disabled"), later.err);
  for (const auto& row : csv_rows(later.err)) BOOST_TEST(row[0] == "<not counted>", row[2]);
  // Counting starts while the command still runs.
  const Result within = pmc({"stat", "-D", "100", "-x,", "-e", "task-clock", "--", "sleep", "0.6"});
  BOOST_REQUIRE_MESSAGE(within.status == 0, within);
  BOOST_TEST(contains(within.err, "Events enabled"), within.err);
  BOOST_TEST(csv_rows(within.err).at(0).at(0) != "<not counted>", within.err);
}

BOOST_AUTO_TEST_CASE(delay_matches_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"-D", "1000", "-x,", "-e", "task-clock,page-faults", "--", "true"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
  const auto a = csv_rows(mine.err), b = csv_rows(perf.err);
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST(a[i] == b[i], boost::test_tools::per_element());
}

// --interval-count N: N intervals, then no more (the command runs to its end).
BOOST_AUTO_TEST_CASE(interval_count_stops_after_n) {
  const Result r = pmc({"stat", "-I", "100", "--interval-count", "2", "-x,", "-e", "task-clock", "--", "sleep", "0.5"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  BOOST_TEST(csv_rows(r.err).size() == 2u, r.err);
  BOOST_TEST(pmc({"stat", "--interval-count", "2", "--", "true"}).status == 2);  // needs -I
}

BOOST_AUTO_TEST_CASE(interval_count_matches_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"-I", "100", "--interval-count", "3", "-x,", "-e", "task-clock", "--", "sleep", "0.5"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
  BOOST_TEST(csv_rows(mine.err).size() == csv_rows(perf.err).size());
}

// --all-user, --all-kernel: every event counted at that level only, the rows named as given.
// On the simulated P6 the counts are exact: the user and the kernel count add up to the total.
BOOST_AUTO_TEST_CASE(all_user_and_all_kernel_count_one_level) {
  const auto count = [&](std::vector<std::string> extra, const std::string& event) {
    std::vector<std::string> args{"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "-e", event};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = pmc(args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r);
    return count_of(r.out, event);
  };
  const std::uint64_t all = count({}, "INST_RETIRED");
  const std::uint64_t user = count({"--all-user"}, "INST_RETIRED");
  const std::uint64_t kernel = count({"--all-kernel"}, "INST_RETIRED");
  BOOST_TEST(user == 7'550'000u);  // as INST_RETIRED:u counts it
  BOOST_TEST(user == count({}, "INST_RETIRED:u"));
  BOOST_TEST(kernel == count({}, "INST_RETIRED:k"));
  BOOST_TEST(kernel > 0u);
  BOOST_TEST(user + kernel == all);
  BOOST_TEST(pmc({"stat", "--all-user", "--all-kernel", "--", "true"}).status == 2);
}

BOOST_AUTO_TEST_CASE(all_user_rows_are_named_as_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"--all-user", "-x,", "-e", "task-clock,page-faults", "--", "true"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
  BOOST_REQUIRE_MESSAGE(mine.status == 0, mine);
  BOOST_TEST(events_of(mine.err) == events_of(perf.err), boost::test_tools::per_element());
}

// -d: perf's detailed events after the others; this machine has no PMU, so <not supported>.
BOOST_AUTO_TEST_CASE(detailed_adds_perfs_events) {
  const Result r = pmc({"stat", "-d", "-x,", "-e", "task-clock", "--", "true"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r);
  const auto events = events_of(r.err);
  BOOST_TEST(events == (std::vector<std::string>{"task-clock", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads",
                                                 "LLC-load-misses"}),
             boost::test_tools::per_element());
  const Result dd = pmc({"stat", "-dd", "-x,", "-e", "task-clock", "--", "true"});
  BOOST_TEST(events_of(dd.err).size() == 11u, dd.err);
}

BOOST_AUTO_TEST_CASE(detailed_rows_match_perfs, *pmc_test::requires_perf()) {
  const std::vector<std::string> args{"-d", "-x,", "-e", "task-clock", "--", "true"};
  std::vector<std::string> ours{"stat"};
  ours.insert(ours.end(), args.begin(), args.end());
  const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
  const auto a = csv_rows(mine.err), b = csv_rows(perf.err);
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i][2] == b[i][2]);
    BOOST_TEST((a[i][0] == "<not supported>") == (b[i][0] == "<not supported>"), a[i][2]);
  }
}

// --per-core, --per-socket: the CPUs summed per core / socket of the sysfs topology.
BOOST_AUTO_TEST_CASE(per_core_and_per_socket, *boost::unit_test::precondition(cpu_wide)) {
  const Result core = pmc({"stat", "-a", "--per-core", "-x,", "-e", "task-clock", "--", "sleep", "0.1"});
  BOOST_REQUIRE_MESSAGE(core.status == 0, core);
  const std::regex core_id(R"(S\d+-D\d+-C\d+)");
  unsigned cpus = 0;
  for (const auto& row : csv_rows(core.err)) {
    BOOST_TEST(std::regex_match(row[0], core_id), row[0]);
    cpus += static_cast<unsigned>(std::stoul(row[1]));
  }
  const Result socket = pmc({"stat", "-a", "--per-socket", "-x,", "-e", "task-clock", "--", "sleep", "0.1"});
  BOOST_REQUIRE_MESSAGE(socket.status == 0, socket);
  unsigned socket_cpus = 0;
  for (const auto& row : csv_rows(socket.err)) {
    BOOST_TEST(std::regex_match(row[0], std::regex(R"(S\d+)")), row[0]);
    socket_cpus += static_cast<unsigned>(std::stoul(row[1]));
  }
  BOOST_TEST(cpus == socket_cpus);  // every CPU in one core and one socket
  BOOST_TEST(cpus > 0u);
  BOOST_TEST(pmc({"stat", "--per-core", "--", "true"}).status == 2);  // needs -a or -C
}

BOOST_AUTO_TEST_CASE(per_core_rows_match_perfs, *pmc_test::requires_perf() * boost::unit_test::precondition(cpu_wide)) {
  for (const char* mode : {"--per-core", "--per-socket"}) {
    const std::vector<std::string> args{"-a", mode, "-x,", "-e", "task-clock", "--", "sleep", "0.1"};
    std::vector<std::string> ours{"stat"};
    ours.insert(ours.end(), args.begin(), args.end());
    const Result mine = pmc(ours), perf = pmc_test::perf_stat(*this, args);
    const auto a = csv_rows(mine.err), b = csv_rows(perf.err);
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      BOOST_TEST(a[i][0] == b[i][0]);  // S0-D0-C0 / S0
      BOOST_TEST(a[i][1] == b[i][1]);  // how many CPUs
      BOOST_TEST(a[i][4] == b[i][4]);  // the event
    }
    // The table's prefix columns.
    const Result text = pmc({"stat", "-a", mode, "-e", "task-clock", "--", "sleep", "0.1"});
    const Result perf_text = pmc_test::perf_stat(*this, {"-a", mode, "-e", "task-clock", "--", "sleep", "0.1"});
    std::vector<std::string> x, y;
    std::size_t unit_x = 0, unit_y = 1;
    for (const auto& l : lines_of(text.err))
      if (contains(l, "task-clock") && x.empty()) {
        x = pmc_test::words(l);
        unit_x = l.find(" msec");
      }
    for (const auto& l : lines_of(perf_text.err))
      if (contains(l, "task-clock") && y.empty()) {
        y = pmc_test::words(l);
        unit_y = l.find(" msec");
      }
    BOOST_REQUIRE(x.size() >= 2u);
    BOOST_REQUIRE(y.size() >= 2u);
    BOOST_TEST(x[0] == y[0], mode);  // S0-D0-C0
    BOOST_TEST(x[1] == y[1], mode);  // CPUs
    BOOST_TEST(unit_x == unit_y, mode << ": the count's column ends where perf's does");
  }
}

// --append: the second report after the first, not instead of it.
BOOST_AUTO_TEST_CASE(append_keeps_the_earlier_report) {
  const fs::path file = tmp.path() / "report.csv";
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(pmc({"stat", "-o", file.string(), "--append", "-x,", "-e", "page-faults", "--", "true"}).status == 0);
  BOOST_TEST(csv_rows(pmc_test::slurp(file)).size() == 2u);
  BOOST_REQUIRE(pmc({"stat", "-o", file.string(), "-x,", "-e", "page-faults", "--", "true"}).status == 0);
  BOOST_TEST(csv_rows(pmc_test::slurp(file)).size() == 1u);
  BOOST_TEST(pmc({"stat", "--append", "--", "true"}).status == 2);  // needs -o
}

BOOST_AUTO_TEST_SUITE_END()
