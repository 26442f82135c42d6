// Running a command to count it, as perf stat does: the child waits until its counters are
// open, then execs; pmc waits for it and reports how it ended.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/process.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// How a command ended.
struct ChildResult {
  int exit_status = 0;          // its exit code, or 128 + N when signal N killed it
  int signal = 0;               // the signal that killed it; 0 when it exited
  bool interrupted = false;     // a SIGINT, SIGTERM, SIGHUP or SIGQUIT sent to this process was
                                // forwarded to the command before it ended (also when the command
                                // caught it and exited: its exit_status then says how)
  std::uint64_t elapsed_ns = 0; // from the exec to the end
  double user_seconds = 0;      // CPU time of the command and its waited-for children
  double system_seconds = 0;
};

struct ChildOptions {
  // Called with the child's pid after the fork and before its exec (the child waits): open and
  // start counters on it here. If it throws, the child exits without running the command and
  // the exception propagates.
  std::function<void(int pid)> before_exec;
  // Called about every `tick_interval` while the command runs (drain sample buffers, print
  // interval counts); nullptr: not called.
  std::function<void()> tick;
  std::chrono::milliseconds tick_interval{10};
};

// The executable a command name runs: a name with a '/' as given, else the first match in
// $PATH. Throws not_found when there is none, permission when it is not executable, and
// invalid_argument when it is neither an ELF file nor a script with a "#!" line (execvp would
// hand such a file to /bin/sh; this refuses it).
PMC_API std::filesystem::path find_executable(std::string_view name);

// Runs argv[0] (found by find_executable) with the arguments, in a process group of its own:
//  - SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process are forwarded to the command's
//    group for the duration (the handlers are restored after); when the terminal is this
//    process's, the command's group gets it (Ctrl-C and Ctrl-Z reach the command, as from a
//    shell), and gets it back when it ends;
//  - a command ended by such a signal is reported interrupted, and whatever it left running in
//    its group is killed, so nothing of an interrupted run is left behind;
//  - a watchdog kills the command's group if this process dies (even by SIGKILL);
//  - when the command stops (SIGSTOP, SIGTSTP), this process stops too (as a shell job would);
//    when it is continued, it continues the command.
// Returns when the command has ended. Throws not_found/permission/invalid_argument for a command
// that cannot be run, io for a failing fork or pipe. One run at a time per process.
PMC_API ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options = {});

}  // namespace pmc

#endif  // C++20
