#define BOOST_TEST_MODULE child_signals
#include <boost/test/unit_test.hpp>

// Issue 26: the command `pmc stat` and `pmc profile` run starts as a shell would start it (pmc
// ignores SIGPIPE for itself: the command once inherited that, so `sh -c 'kill -PIPE $$'` exited
// 0 and `yes | head -1` saw write errors), and a signal during `pmc stat -r N` ends the repeats
// (once the cut run was averaged in, the other runs still ran, and pmc exited 0).
// pmc is started with default dispositions and an empty mask (pmc_test::spawn), as from a shell;
// every wait has a time limit.

#include "support/child_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

struct Fixture {
  pmc_test::TempDir tmp{"pmc-test-child-signals"};
  pmc_test::Env env;
  fs::path out = tmp.path() / "stdout";
  fs::path err = tmp.path() / "stderr";
  fs::path report = tmp.path() / "report.txt";

  Fixture() {
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = tmp.path().string();
    env["XDG_CONFIG_HOME"] = tmp.path().string();
    env["LC_ALL"] = "C";
  }

  pid_t start(const std::vector<std::string>& args) {
    const pid_t pid = pmc_test::spawn(kPmc, args, env, out, err);
    BOOST_REQUIRE_MESSAGE(pid > 0, "posix_spawn: " << std::strerror(-pid));
    return pid;
  }
  // pmc's exit code (-signal when killed), or nullopt (and pmc killed) after `limit`.
  static std::optional<int> wait(pid_t pid, std::chrono::milliseconds limit = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return std::nullopt;
      }
      std::this_thread::sleep_for(5ms);
    }
  }
  std::optional<int> pmc(const std::vector<std::string>& args) { return wait(start(args)); }
  std::string context() const {
    return "stdout: " + pmc_test::slurp(out) + "\nstderr: " + pmc_test::slurp(err) + "\nreport: " +
           (fs::exists(report) ? pmc_test::slurp(report) : std::string("(none)"));
  }
  // The lines of a file.
  static std::size_t lines(const fs::path& file) {
    std::istringstream in(pmc_test::slurp(file));
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

}  // namespace

// A shell dying of SIGPIPE: 141 from pmc stat, pmc stat -r and pmc profile, as from a shell.
BOOST_FIXTURE_TEST_CASE(a_command_killed_by_sigpipe_gives_141, Fixture) {
  const std::vector<std::vector<std::string>> commands = {
      {"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", "kill -PIPE $$"},
      {"stat", "-r", "2", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", "kill -PIPE $$"},
      {"profile", "-o", report.string(), "--", "sh", "-c", "kill -PIPE $$"},
  };
  for (const auto& args : commands) {
    BOOST_TEST_CONTEXT("pmc " << args[0] << " " << args[1]) {
      const auto status = pmc(args);
      BOOST_REQUIRE(status.has_value());
      BOOST_TEST(*status == 128 + SIGPIPE, context());
    }
  }
}

// `yes | head -1` inside: yes dies of SIGPIPE quietly once head has gone, as in a shell (with
// SIGPIPE ignored it printed "yes: standard output: Broken pipe").
BOOST_FIXTURE_TEST_CASE(yes_head_inside_ends_quietly, Fixture) {
  const auto status = pmc({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", "yes | head -1"});
  BOOST_REQUIRE(status.has_value());
  BOOST_TEST(*status == 0, context());
  BOOST_TEST(pmc_test::slurp(out) == "y\n", context());
  BOOST_TEST(pmc_test::slurp(err).find("Broken pipe") == std::string::npos, context());
}

// The command sees no signal blocked, and ignores what the same command started directly from
// here (default dispositions, as pmc itself was started) ignores: nothing pmc set up for itself,
// SIGPIPE in particular (signals above 31 the environment may ignore are passed on, as a shell
// passes them on).
BOOST_FIXTURE_TEST_CASE(the_command_ignores_and_blocks_nothing, Fixture) {
  const std::vector<std::string> grep = {"-E", "^Sig(Ign|Blk):", "/proc/self/status"};
  const fs::path direct = tmp.path() / "direct";
  const pid_t pid = pmc_test::spawn("/bin/grep", grep, env, direct, tmp.path() / "direct.err");
  BOOST_REQUIRE(pid > 0);
  BOOST_REQUIRE(wait(pid).value_or(-1) == 0);
  std::vector<std::string> args = {"stat", "-e", "tsc", "-o", report.string(), "--", "grep"};
  args.insert(args.end(), grep.begin(), grep.end());
  const auto status = pmc(args);
  BOOST_REQUIRE(status.has_value());
  BOOST_TEST(*status == 0, context());
  const std::string got = pmc_test::slurp(out);
  BOOST_TEST(got == pmc_test::slurp(direct), context());
  BOOST_TEST(got.find("SigBlk:\t0000000000000000\n") != std::string::npos, context());
  const auto ign = got.find("SigIgn:\t");
  BOOST_TEST_REQUIRE(ign != std::string::npos);
  const unsigned long long ignored = std::stoull(got.substr(ign + 8, 16), nullptr, 16);
  BOOST_TEST((ignored & 0x7FFFFFFFull) == 0u, context());  // signals 1-31 (SIGPIPE among them): none ignored
}

// SIGTERM or SIGINT to pmc during the second of `-r 5` runs: the repeats end there, the first
// run is reported as the one that completed, and pmc exits 128 + N. Each run appends a line to
// `runs` before it sleeps, so the test knows when the second has started and how many ran.
BOOST_FIXTURE_TEST_CASE(a_signal_ends_the_repeats, Fixture) {
  for (int sig : {SIGTERM, SIGINT}) {
    BOOST_TEST_CONTEXT("signal " << ::strsignal(sig)) {
      const fs::path runs = tmp.path() / "runs";
      fs::remove(runs);
      const pid_t pid = start({"stat", "-r", "5", "-e", "tsc", "-o", report.string(), "--", "sh", "-c",
                               "echo run >> " + runs.string() + "; exec sleep 1"});
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      while (lines(runs) < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
      BOOST_REQUIRE_MESSAGE(lines(runs) == 2u, "the second run did not start: " << context());
      BOOST_REQUIRE(::kill(pid, sig) == 0);
      const auto status = wait(pid, 30s);
      BOOST_REQUIRE_MESSAGE(status, "pmc did not end after the signal");
      BOOST_TEST(*status == 128 + sig, context());
      BOOST_TEST(lines(runs) == 2u, "runs started after the signal: " << context());
      const std::string abbrev = sig == SIGTERM ? "SIGTERM" : "SIGINT";
      BOOST_TEST(pmc_test::slurp(err).find("run 2 of 5 interrupted by " + abbrev +
                                           ": the report is of the 1 run that completed") != std::string::npos,
                 context());
      const std::string text = pmc_test::slurp(report);
      BOOST_TEST(text.find("seconds time elapsed") != std::string::npos, context());
      BOOST_TEST(text.find("runs)") == std::string::npos, "the report counts more than one run: " << context());
    }
  }
}

// Interrupted in the first run: nothing completed, nothing reported, 128 + N.
BOOST_FIXTURE_TEST_CASE(a_signal_in_the_first_run_reports_nothing, Fixture) {
  const fs::path runs = tmp.path() / "runs";
  const pid_t pid = start({"stat", "-r", "5", "-e", "tsc", "-o", report.string(), "--", "sh", "-c",
                           "echo run >> " + runs.string() + "; exec sleep 1"});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (lines(runs) < 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  BOOST_REQUIRE(::kill(pid, SIGTERM) == 0);
  const auto status = wait(pid, 30s);
  BOOST_REQUIRE_MESSAGE(status, "pmc did not end after the signal");
  BOOST_TEST(*status == 128 + SIGTERM, context());
  BOOST_TEST(lines(runs) == 1u, context());
  BOOST_TEST(pmc_test::slurp(err).find("run 1 of 5 interrupted by SIGTERM: no run completed") != std::string::npos,
             context());
}
