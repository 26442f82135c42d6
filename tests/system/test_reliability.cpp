#define BOOST_TEST_MODULE reliability
#include <boost/test/unit_test.hpp>

// Reliability of the `pmc` program (issue 13): output that cannot kill it (stderr on /dev/full,
// a reader that closes the pipe; stdout on /dev/full is an error, issue 26) and the commands it runs (pmc::run_child): a process group of
// their own, signals forwarded to the whole group, the group killed when pmc dies, SIGINT
// handled as perf stat handles it, stopped commands noticed, only real executables run.
//
// Every wait has a time limit, so a regression fails instead of hanging the run, and every test
// checks that nothing it started is left running: this test program is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so whatever pmc leaves behind is reparented to it, where the test
// sees it, reaps it, and kills what is still alive after the limit.

#include "child.hpp"
#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/process.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Becomes the subreaper of everything it starts (once, for the whole program).
struct Subreaper {
  Subreaper() { BOOST_REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(Subreaper);

// The state letter and parent of a process from /proc/<pid>/stat; nullopt when it is gone.
struct ProcState {
  char state = '?';
  pid_t parent = 0;
};
std::optional<ProcState> proc_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto paren = line.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(paren + 1));
  ProcState s;
  rest >> s.state >> s.parent;
  return s;
}

// Waits (up to `limit`) until a pid is gone: exited and reaped (this program reaps the ones
// reparented to it). Returns false, after killing it, if it is still alive.
bool gone(pid_t pid, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    std::optional<ProcState> s = proc_state(pid);
    if (!s) return true;
    if (s->state == 'Z' || s->state == 'X') {
      if (s->parent == ::getpid()) ::waitpid(pid, nullptr, WNOHANG);
      else return true;  // dead; its parent reaps it
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      if (s->parent == ::getpid()) ::waitpid(pid, nullptr, 0);
      return false;
    }
    std::this_thread::sleep_for(5ms);
  }
}

// Children of this program still alive after `limit` (they are killed and reaped; zombies are
// reaped and not counted). Called at the end of every test that runs pmc.
std::vector<std::string> left_running(std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<std::string> alive;
  for (;;) {
    alive.clear();
    std::vector<pid_t> pids;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::stol(name));
      std::optional<ProcState> s = proc_state(pid);
      if (!s || s->parent != ::getpid()) continue;
      if (s->state == 'Z' || s->state == 'X') {
        ::waitpid(pid, nullptr, WNOHANG);
        continue;
      }
      pids.push_back(pid);
      std::ifstream comm("/proc/" + name + "/comm");
      std::string c;
      std::getline(comm, c);
      alive.push_back(name + " (" + c + ")");
    }
    if (alive.empty()) return alive;
    if (std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids) {
        ::kill(p, SIGKILL);
        ::waitpid(p, nullptr, 0);
      }
      return alive;
    }
    std::this_thread::sleep_for(5ms);
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// pmc started in the background with default signal dispositions and an empty signal mask
// (whatever this test inherited), stdin from /dev/null, stdout and stderr to the files given
// (or the write end of a pipe for stdout).
class Pmc {
 public:
  Pmc(const std::vector<std::string>& args, const pmc_test::Env& env, const std::string& out, const std::string& err,
      int stdout_fd = -1) {
    pid_ = pmc_test::spawn(kPmc, args, env, out, err, stdout_fd);
    BOOST_REQUIRE_MESSAGE(pid_ > 0, "posix_spawn: " << std::strerror(-pid_));
  }
  ~Pmc() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Pmc(const Pmc&) = delete;
  Pmc& operator=(const Pmc&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }
  // Waits up to `limit` for pmc to end; nullopt (and pmc killed) if it did not.
  std::optional<int> wait(std::chrono::milliseconds limit = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!status_) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        status_ = status;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        status_ = status;
        return std::nullopt;
      }
      std::this_thread::sleep_for(5ms);
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// "exit N", "signal N" (core dumps included): what a wait status says, for messages.
std::string describe(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

struct Fixture {
  pmc_test::TempDir tmp{"pmc-test-reliability"};
  pmc_test::Env env;
  fs::path out = tmp.path() / "stdout";
  fs::path err = tmp.path() / "stderr";
  fs::path report = tmp.path() / "report.txt";
  fs::path pids = tmp.path() / "pids";

  Fixture() {
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = tmp.path().string();
    env["XDG_CONFIG_HOME"] = tmp.path().string();
    env["LC_ALL"] = "C";
  }
  ~Fixture() {
    const std::vector<std::string> alive = left_running();
    BOOST_TEST(alive.empty(), "left running: " << join(alive));
  }

  // Runs pmc to the end (at most `limit`) with stdout and stderr to the given files; the wait
  // status, or nullopt when it had to be killed.
  std::optional<int> pmc(const std::vector<std::string>& args, const std::string& to_out, const std::string& to_err,
                         std::chrono::milliseconds limit = 60s) {
    Pmc p(args, env, to_out, to_err);
    return p.wait(limit);
  }

  // The pids the command wrote to `pids`, one a line, once there are `n` of them (at most 20 s).
  std::vector<pid_t> wait_for_pids(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
      std::vector<pid_t> got;
      std::istringstream in(pmc_test::slurp(pids));
      std::string line;
      while (std::getline(in, line))
        if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos)
          got.push_back(static_cast<pid_t>(std::stol(line)));
      if (got.size() >= n && pmc_test::slurp(pids).back() == '\n') return got;
      if (std::chrono::steady_clock::now() > deadline) {
        BOOST_ERROR("the command did not write " << n << " pids: '" << pmc_test::slurp(pids) << "'");
        return got;
      }
      std::this_thread::sleep_for(5ms);
    }
  }

  // The command, `sh -c 'sleep 60 & sleep 60; wait'`, that also writes its own pid and
  // the background sleep's to `pids`: a process tree like a build or a server with workers.
  std::string two_sleepers() const {
    const std::string tmp_file = pids.string() + ".tmp";
    return "echo $$ > " + tmp_file + "; sleep 60 & echo $! >> " + tmp_file + "; mv " + tmp_file + " " +
           pids.string() + "; sleep 60; wait";
  }
  // The shell, its background sleep and its foreground sleep (its other child), once all three
  // run (at most 20 s). "Run" means the foreground child has exec'd sleep: between its fork and
  // its exec it is still the shell, whose SIGINT handler a signal would meet there and the exec
  // would then forget (dash, run with -c, catches SIGINT), leaving the sleep to run its 60 s;
  // the shell's other children (the `mv`) are not the sleep either.
  std::vector<pid_t> sleeper_tree() {
    std::vector<pid_t> tree = wait_for_pids(2);
    if (tree.size() != 2) return tree;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in("/proc/" + std::to_string(tree[0]) + "/task/" + std::to_string(tree[0]) + "/children");
      pid_t c = 0;
      while (in >> c) {
        if (c == tree[1]) continue;
        std::ifstream comm("/proc/" + std::to_string(c) + "/comm");
        std::string name;
        if (std::getline(comm, name) && name == "sleep") {
          tree.push_back(c);
          return tree;
        }
      }
      std::this_thread::sleep_for(5ms);
    }
    BOOST_ERROR("the shell did not start its foreground sleep");
    return tree;
  }
};

// Waits (at most 20 s) until a process is stopped (state T) and returns whether it is.
bool becomes_stopped(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<ProcState> s = proc_state(pid);
    if (s && s->state == 'T') return true;
    if (!s || s->state == 'Z') return false;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

}  // namespace

// =============================================================================================
BOOST_AUTO_TEST_SUITE(output)

// An error message that cannot be written (stderr on a full device) once threw inside the
// error handler: SIGABRT instead of exit 1. encode's documented status when one event fails is
// 1, with the good events still printed on stdout.
BOOST_FIXTURE_TEST_CASE(encode_with_stderr_on_dev_full, Fixture) {
  const auto status =
      pmc({"encode", "--cpuid-dump", "pentium-iii", "INST_RETIRED", "BAD_EVENT"}, out.string(), "/dev/full");
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 1");
  BOOST_TEST(contains(pmc_test::slurp(out), "INST_RETIRED"), pmc_test::slurp(out));
  // A usage error: exit 2 however stderr fares.
  const auto usage = pmc({"encode", "--no-such-option"}, out.string(), "/dev/full");
  BOOST_REQUIRE(usage);
  BOOST_TEST(describe(*usage) == "exit 2");
  // An error before anything is printed (a config file that does not exist): exit 1.
  const auto missing = pmc({"--config", (tmp.path() / "none.toml").string(), "probe"}, out.string(), "/dev/full");
  BOOST_REQUIRE(missing);
  BOOST_TEST(describe(*missing) == "exit 1");
}

// stat reports on stderr; on a full device the report is lost, the command's status is not.
BOOST_FIXTURE_TEST_CASE(stat_with_stderr_on_dev_full, Fixture) {
  const auto status = pmc({"stat", "-e", "task-clock", "--", "sh", "-c", "exit 3"}, out.string(), "/dev/full");
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 3");
  // Killed by a signal: 128 + N, report or not.
  const auto killed = pmc({"stat", "-e", "tsc", "--", "sh", "-c", "kill -TERM $$"}, out.string(), "/dev/full");
  BOOST_REQUIRE(killed);
  BOOST_TEST(describe(*killed) == "exit " + std::to_string(128 + SIGTERM));
  // A command that cannot start: exit 1, with nowhere to say why.
  const auto cannot = pmc({"stat", "--", "no-such-command-pmc-test"}, out.string(), "/dev/full");
  BOOST_REQUIRE(cannot);
  BOOST_TEST(describe(*cannot) == "exit 1");
}

// Reports on stdout to a full device: an error naming standard output, exit 1 (issue 26 item
// 13: once lost silently, exit 0).
BOOST_FIXTURE_TEST_CASE(stdout_on_dev_full, Fixture) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"list", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"list", "--cpuid-dump", "pentium-iii", "--json"},
        std::vector<std::string>{"probe", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo"},
        std::vector<std::string>{"--help"}}) {
    BOOST_TEST_CONTEXT("pmc " << join(args)) {
      const auto status = pmc(args, "/dev/full", err.string());
      BOOST_REQUIRE(status);
      BOOST_TEST(describe(*status) == "exit 1", pmc_test::slurp(err));
      BOOST_TEST(pmc_test::slurp(err) == "pmc: writing standard output: No space left on device\n");
    }
  }
}

// `pmc list | head -1`: the reader goes away. pmc ignores SIGPIPE, so each write fails with
// EPIPE instead of killing it; it ends normally (exit 0: the listing is not an error) with
// nothing on stderr. Here the reader closes the pipe at once, before pmc has opened its Hal (a
// real `head -1` below too).
BOOST_FIXTURE_TEST_CASE(a_reader_that_goes_away, Fixture) {
  int fds[2];
  BOOST_REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::optional<int> status;
  {
    Pmc p({"list", "--cpuid-dump", "pentium-iii"}, env, "", err.string(), fds[1]);
    ::close(fds[1]);
    ::close(fds[0]);
    status = p.wait(60s);
  }
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 0");
  BOOST_TEST(pmc_test::slurp(err).empty(), pmc_test::slurp(err));

  // Through a shell pipeline, as a user types it; bash's PIPESTATUS gives pmc's status.
  const pmc_test::Result r =
      pmc_test::run("/usr/bin/bash",
                    {"-c", kPmc.string() + " list --cpuid-dump pentium-iii | head -1; echo \"pmc ${PIPESTATUS[0]}\" >&2"},
                    env, tmp.path());
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(std::count(r.out.begin(), r.out.end(), '\n') == 1, r);
  BOOST_TEST(contains(r.out, "events for"), r);  // the listing's first line
  BOOST_TEST(r.err == "pmc 0\n", r);
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
BOOST_AUTO_TEST_SUITE(children)

// The command leads a process group of its own (so signals reach everything it starts), not
// pmc's group.
BOOST_FIXTURE_TEST_CASE(own_process_group, Fixture) {
  // /proc/self/stat of the shell: "pid (sh) state ppid pgrp ..."; comm "sh" holds no space.
  const std::string script = "read -r line < /proc/$$/stat; set -- $line; echo \"$1 $4 $5\" > " + pids.string();
  const auto status = pmc({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", script}, out.string(), err.string());
  BOOST_REQUIRE(status);
  BOOST_TEST(describe(*status) == "exit 0", pmc_test::slurp(err));
  std::istringstream in(pmc_test::slurp(pids));
  pid_t pid = 0, parent = 0, group = 0;
  BOOST_REQUIRE(static_cast<bool>(in >> pid >> parent >> group));
  BOOST_TEST(group == pid);           // it leads its group
  BOOST_TEST(group != ::getpgrp());   // not the group pmc was started in (this test's)
  BOOST_TEST(parent != ::getpid());   // pmc's child, not this test's
}

// SIGTERM, SIGHUP and SIGQUIT sent to pmc go to the command's whole group: the shell and both
// sleeps end (once, SIGTERM left both sleeps running); pmc reports and exits 128 + N (the
// shell's death).
BOOST_FIXTURE_TEST_CASE(signals_reach_the_whole_group, Fixture) {
  for (int sig : {SIGTERM, SIGHUP, SIGQUIT}) {
    BOOST_TEST_CONTEXT("signal " << sig << " (" << ::strsignal(sig) << ")") {
      fs::remove(pids);
      Pmc p({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", two_sleepers()}, env, out.string(),
            err.string());
      const std::vector<pid_t> tree = sleeper_tree();
      BOOST_REQUIRE(tree.size() == 3u);
      BOOST_REQUIRE(::kill(p.pid(), sig) == 0);
      const auto status = p.wait(30s);
      BOOST_REQUIRE_MESSAGE(status, "pmc did not end after the signal");
      BOOST_TEST(describe(*status) == "exit " + std::to_string(128 + sig), pmc_test::slurp(err));
      BOOST_TEST(contains(pmc_test::slurp(report), "seconds time elapsed"), pmc_test::slurp(report));
      for (pid_t t : tree) BOOST_TEST(gone(t), "pid " << t << " still running");
    }
  }
}

// SIGINT as perf stat handles it: the command ends (its group gets the signal, as from Ctrl-C;
// a non-interactive shell's background jobs ignore SIGINT, so what is left of the group is
// killed once the command has ended), pmc reports and exits with the command's status (130:
// the shell died of SIGINT). It once never ended: the signal reached the shell alone, which
// waited for its foreground sleep.
BOOST_FIXTURE_TEST_CASE(sigint_ends_the_command_and_pmc_reports, Fixture) {
  Pmc p({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", two_sleepers()}, env, out.string(),
        err.string());
  const std::vector<pid_t> tree = sleeper_tree();
  BOOST_REQUIRE(tree.size() == 3u);
  BOOST_REQUIRE(::kill(p.pid(), SIGINT) == 0);
  const auto status = p.wait(30s);
  BOOST_REQUIRE_MESSAGE(status, "pmc did not end after SIGINT");
  BOOST_TEST(describe(*status) == "exit 130", pmc_test::slurp(err));
  BOOST_TEST(contains(pmc_test::slurp(report), "Performance counter stats for 'sh -c"), pmc_test::slurp(report));
  for (pid_t t : tree) BOOST_TEST(gone(t), "pid " << t << " still running");
}

// A command that handles SIGINT decides for itself: it finishes, and pmc exits with its status.
BOOST_FIXTURE_TEST_CASE(a_command_that_handles_sigint_decides, Fixture) {
  const std::string script = "trap 'echo caught > " + (tmp.path() / "caught").string() + "' INT; echo $$ > " +
                             pids.string() + "; i=0; while [ ! -e " + (tmp.path() / "caught").string() +
                             " ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; exit 5";
  Pmc p({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", script}, env, out.string(), err.string());
  BOOST_REQUIRE(wait_for_pids(1).size() == 1u);
  BOOST_REQUIRE(::kill(p.pid(), SIGINT) == 0);
  const auto status = p.wait(40s);
  BOOST_REQUIRE_MESSAGE(status, "pmc did not end");
  BOOST_TEST(describe(*status) == "exit 5", pmc_test::slurp(err));
  BOOST_TEST(fs::exists(tmp.path() / "caught"));
  BOOST_TEST(contains(pmc_test::slurp(report), "seconds time elapsed"));
}

// pmc killed outright (SIGKILL: no handler runs): its watchdog kills the command's group, so
// the shell and its background sleeps do not outlive it. The watchdog ends too (left_running).
BOOST_FIXTURE_TEST_CASE(the_group_dies_with_pmc, Fixture) {
  Pmc p({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", two_sleepers()}, env, out.string(),
        err.string());
  const std::vector<pid_t> tree = sleeper_tree();
  BOOST_REQUIRE(tree.size() == 3u);
  BOOST_REQUIRE(::kill(p.pid(), SIGKILL) == 0);
  const auto status = p.wait(30s);
  BOOST_REQUIRE(status);
  BOOST_TEST(describe(*status) == "signal 9 (Killed)");
  for (pid_t t : tree) BOOST_TEST(gone(t), "pid " << t << " outlived pmc");
}

// A command that stops itself (SIGSTOP, as a job stopped by Ctrl-Z) once left pmc waiting
// forever. pmc stops too, as a shell job would, so the user's shell regains the terminal; a
// SIGCONT to pmc (what `fg` sends) continues both, and pmc exits with the command's status.
BOOST_FIXTURE_TEST_CASE(a_stopped_command_stops_pmc_and_sigcont_resumes_both, Fixture) {
  const fs::path resumed = tmp.path() / "resumed";
  const std::string script =
      "echo $$ > " + pids.string() + "; kill -STOP $$; echo yes > " + resumed.string() + "; exit 4";
  Pmc p({"stat", "-e", "tsc", "-o", report.string(), "--", "sh", "-c", script}, env, out.string(), err.string());
  const std::vector<pid_t> shell = wait_for_pids(1);
  BOOST_REQUIRE(shell.size() == 1u);
  BOOST_TEST(becomes_stopped(shell[0]), "the command did not stop");
  BOOST_TEST(becomes_stopped(p.pid()), "pmc did not stop with its command");
  BOOST_TEST(!fs::exists(resumed));
  BOOST_REQUIRE(::kill(p.pid(), SIGCONT) == 0);
  const auto status = p.wait(30s);
  BOOST_REQUIRE_MESSAGE(status, "pmc did not end after SIGCONT");
  BOOST_TEST(describe(*status) == "exit 4", pmc_test::slurp(err));
  BOOST_TEST(pmc_test::slurp(resumed) == "yes\n");
}

// A file of garbage bytes with the execute bit: execvp would hand it to /bin/sh (ENOEXEC), which
// runs its lines as commands. find_executable refuses it; the "command" in it never runs.
BOOST_FIXTURE_TEST_CASE(only_real_executables_run, Fixture) {
  const fs::path marker = tmp.path() / "ran";
  const fs::path garbage = tmp.path() / "garbage";
  // Not ELF, no "#!": a line sh would run, then bytes no format has.
  pmc_test::spit(garbage, "touch " + marker.string() + "\n\x01\x02\xfe\xff garbage\n");
  fs::permissions(garbage, fs::perms(0755));
  const auto status = pmc({"stat", "-e", "tsc", "--", garbage.string()}, out.string(), err.string());
  BOOST_REQUIRE(status);
  BOOST_TEST(describe(*status) == "exit 1");
  BOOST_TEST(pmc_test::slurp(err) == "pmc: cannot run '" + garbage.string() + "': " + garbage.string() +
                                         " is not an executable: neither an ELF file nor a script starting with #!\n");
  BOOST_TEST(!fs::exists(marker));

  // The library call says the same, with its error kind.
  try {
    (void)pmc::find_executable(garbage.string());
    BOOST_ERROR("find_executable accepted a file of garbage bytes");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::invalid_argument));
    BOOST_TEST(contains(e.what(), "neither an ELF file nor a script"), e.what());
  }
  // Found through $PATH too (a bad first match does not hide a good later one).
  fs::create_directories(tmp.path() / "bin1");
  fs::create_directories(tmp.path() / "bin2");
  fs::copy_file(garbage, tmp.path() / "bin1" / "tool");
  pmc_test::spit(tmp.path() / "bin2" / "tool", "#!/bin/sh\nexit 6\n");
  fs::permissions(tmp.path() / "bin2" / "tool", fs::perms(0755));
  env["PATH"] = (tmp.path() / "bin1").string() + ":" + (tmp.path() / "bin2").string() + ":/usr/bin:/bin";
  const auto via_path = pmc({"stat", "-e", "tsc", "--", "tool"}, out.string(), err.string());
  BOOST_REQUIRE(via_path);
  BOOST_TEST(describe(*via_path) == "exit 6", pmc_test::slurp(err));
  BOOST_TEST(!fs::exists(marker));
  // A script with "#!" and an ELF program run.
  pmc_test::spit(tmp.path() / "script", "#!/bin/sh\nexit 7\n");
  fs::permissions(tmp.path() / "script", fs::perms(0755));
  const auto script = pmc({"stat", "-e", "tsc", "--", (tmp.path() / "script").string()}, out.string(), err.string());
  BOOST_REQUIRE(script);
  BOOST_TEST(describe(*script) == "exit 7", pmc_test::slurp(err));
}

// run_child directly (the library, not the CLI): a SIGTERM to this process while the command
// runs is forwarded to the command's group, the result says so, nothing is left, and this
// process's own SIGTERM handling is what it was before.
BOOST_FIXTURE_TEST_CASE(run_child_forwards_and_cleans_up, Fixture) {
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  pmc::ChildOptions options;
  std::thread killer;
  const fs::path ready = pids;
  options.before_exec = [&](int) {
    // Once the command has written its pids (at most 20 s), this process gets SIGTERM.
    killer = std::thread([ready] {
      for (int i = 0; i < 4000; ++i) {
        std::error_code ec;
        if (fs::exists(ready, ec)) break;
        std::this_thread::sleep_for(5ms);
      }
      ::kill(::getpid(), SIGTERM);
    });
  };
  const pmc::ChildResult r = pmc::run_child({"sh", "-c", two_sleepers()}, options);
  killer.join();
  BOOST_TEST(r.interrupted);
  BOOST_TEST(r.signal == SIGTERM);
  BOOST_TEST(r.exit_status == 128 + SIGTERM);
  for (pid_t t : wait_for_pids(2)) BOOST_TEST(gone(t), "pid " << t << " still running");
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  BOOST_TEST((after.sa_handler == before.sa_handler));
}

// ChildOptions whose before_exec notes the process it is given and the program that process
// runs while it waits.
struct ExecWitness {
  pid_t pid = 0;
  std::string exe;
  pmc::ChildOptions options() {
    pmc::ChildOptions o;
    o.before_exec = [this](int p) {
      pid = p;
      exe = fs::read_symlink("/proc/" + std::to_string(p) + "/exe").string();
    };
    return o;
  }
};

// The process before_exec is given is the helper program (hal/helper/pmc_child.c), started with
// posix_spawn so that nothing of this process is copied, and waiting; the command then runs in
// that same process. The helper's reading of `go` and its exec leave the command nothing of its
// own: the exit status is the command's.
BOOST_FIXTURE_TEST_CASE(run_child_starts_the_command_through_the_helper, Fixture) {
  const fs::path helper = pmc::detail::child_helper();
  BOOST_REQUIRE_MESSAGE(!helper.empty(), "pmc-child is not beside the plugin directory");
  ExecWitness witness;
  const pmc::ChildResult r = pmc::run_child({"sh", "-c", "echo $$ > " + pids.string() + "; exit 3"}, witness.options());
  BOOST_TEST(r.exit_status == 3);
  BOOST_TEST(witness.exe == fs::canonical(helper).string());
  BOOST_TEST(wait_for_pids(1) == std::vector<pid_t>{witness.pid}, "the command ran elsewhere than before_exec was told");
}

// Where the helper is missing, run_child forks instead, with the same contract: the command in
// the process before_exec was given, its status, an exec that fails reported by its errno.
BOOST_FIXTURE_TEST_CASE(run_child_without_the_helper_forks, Fixture) {
  ExecWitness witness;
  const pmc::ChildResult r =
      pmc::detail::run_child({"sh", "-c", "echo $$ > " + pids.string() + "; exit 5"}, witness.options(), fs::path());
  BOOST_TEST(r.exit_status == 5);
  BOOST_TEST(witness.exe == fs::read_symlink("/proc/self/exe").string());  // a copy of this program
  BOOST_TEST(wait_for_pids(1) == std::vector<pid_t>{witness.pid}, "the command ran elsewhere than before_exec was told");

  // A script whose interpreter does not exist: find_executable accepts it, the exec fails.
  const fs::path script = tmp.path() / "no-interpreter";
  pmc_test::spit(script, "#!/nonexistent/interpreter\n");
  fs::permissions(script, fs::perms(0755));
  for (const fs::path& helper : {fs::path(), pmc::detail::child_helper()}) {
    BOOST_TEST_CONTEXT("helper '" << helper.string() << "'") {
      try {
        (void)pmc::detail::run_child({script.string()}, {}, helper);
        BOOST_ERROR("a failing exec was not reported");
      } catch (const pmc::Error& e) {
        BOOST_TEST((e.kind() == pmc::errc::not_found), e.what());
        BOOST_TEST(std::string(e.what()) == "cannot run '" + script.string() + "': No such file or directory");
      }
    }
  }
}

// Without the helper the watchdog is a fork of the caller, and still kills the command's group
// when the caller dies by SIGKILL.
BOOST_FIXTURE_TEST_CASE(without_the_helper_the_group_dies_with_its_caller, Fixture) {
  const pid_t caller = ::fork();
  BOOST_REQUIRE(caller >= 0);
  if (caller == 0) {
    try {
      (void)pmc::detail::run_child({"sh", "-c", two_sleepers()}, {}, fs::path());
    } catch (...) {
    }
    _exit(0);
  }
  const std::vector<pid_t> tree = sleeper_tree();
  BOOST_REQUIRE(tree.size() == 3u);
  BOOST_REQUIRE(::kill(caller, SIGKILL) == 0);
  int status = 0;
  BOOST_REQUIRE(::waitpid(caller, &status, 0) == caller);
  for (pid_t t : tree) BOOST_TEST(gone(t), "pid " << t << " outlived its caller");
}

// The helper is no command: misused, it says so and runs nothing; told to execute, it waits
// for `go` and gives up (127) at its end, running nothing.
BOOST_FIXTURE_TEST_CASE(the_helper_is_not_a_command, Fixture) {
  const fs::path helper = pmc::detail::child_helper();
  BOOST_REQUIRE(!helper.empty());
  const pmc_test::Result bare = pmc_test::run(helper, {}, env, tmp.path());
  BOOST_TEST(bare.status == 2, bare);
  BOOST_TEST(contains(bare.err, "not a command"), bare);
  const fs::path marker = tmp.path() / "ran";
  // Descriptor 0 is /dev/null here: end of file at once, as when the caller gives up.
  const pmc_test::Result gave_up =
      pmc_test::run(helper, {"exec", "0", "1", "/usr/bin/touch", "touch", marker.string()}, env, tmp.path());
  BOOST_TEST(gave_up.status == 127, gave_up);
  BOOST_TEST(!fs::exists(marker));
}

BOOST_AUTO_TEST_SUITE_END()
