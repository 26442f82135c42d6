#define BOOST_TEST_MODULE reliability
#include <boost/test/unit_test.hpp>

// Reliability of the `pmc` program (issue 13): the commands it runs (pmc::run_child): a process
// group of their own, signals forwarded to the whole group, the group killed when pmc dies,
// SIGINT handled as perf stat handles it, stopped commands noticed, only real executables run.
// Its output (stderr on /dev/full, a reader that closes the pipe, stdout on /dev/full) is in
// test_reliability_output.cpp.
//
// Every wait has a time limit, so a regression fails instead of hanging the run, and every test
// checks that nothing it started is left running: this test program is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so whatever pmc leaves behind is reparented to it, where the test
// sees it, reaps it, and kills what is still alive after the limit (reliability_test_support.hpp,
// shared with test_reliability_output.cpp).

#include "child.hpp"
#include "reliability_test_support.hpp"
#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/process.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace pmc_test::reliability;

namespace {

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
