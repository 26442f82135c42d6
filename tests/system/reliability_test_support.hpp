// What the reliability tests of the `pmc` program share (test_reliability.cpp,
// test_reliability_output.cpp): pmc started in the background, and a fixture that checks that
// nothing a test started is left running. Every wait has a time limit, so a regression fails
// instead of hanging the run. A program that includes this header is a child subreaper
// (PR_SET_CHILD_SUBREAPER, a global fixture), so whatever pmc leaves behind is reparented to it,
// where the test sees it, reaps it, and kills what is still alive after the limit.
#pragma once

#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"
#include "support/messages.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace pmc_test::reliability {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

using pmc_test::contains;

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
inline std::optional<ProcState> proc_state(pid_t pid) {
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
inline bool gone(pid_t pid, std::chrono::milliseconds limit = 10s) {
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
inline std::vector<std::string> left_running(std::chrono::milliseconds limit = 10s) {
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

inline std::string join(const std::vector<std::string>& v) {
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
inline std::string describe(int status) {
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

}  // namespace pmc_test::reliability
