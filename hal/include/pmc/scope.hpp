// Scope: whose activity a session counts.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/scope.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string>

namespace pmc {

// Whose activity a session counts: the ideas of the pfm(7) open modes ONE / EACH / ALL and of
// perf_event_open's pid and cpu arguments. Which access method can do what is in
// docs/user-guide.md: access "sim" counts this thread only (one simulated CPU); the emulated
// Alpha's pfm(7) open modes over several CPUs are the C shim's (<pmc/pfm.h>).
struct PMC_API Scope {
  enum class Kind {
    thread,    // the thread that starts the session (default)
    process,   // another process, by pid: each of its threads
    cpu,       // everything that runs on one CPU
    each_cpu,  // every online CPU, one reading per event and CPU
    all_cpus,  // every online CPU, summed
  };
  Kind kind = Kind::thread;
  int pid = 0;                  // Kind::process
  int cpu = -1;                 // Kind::cpu
  bool inherit = false;         // also count threads and child processes created later
  bool enable_on_exec = false;  // Kind::process: counting begins when the process calls exec
  bool one_thread = false;      // Kind::process: pid is a thread id, and only that thread counts

  static Scope this_thread() { return {}; }
  static Scope process(int pid, bool inherit = true) { return {Kind::process, pid, -1, inherit, false}; }
  static Scope on_cpu(int cpu) { return {Kind::cpu, -1, cpu, false, false}; }
  static Scope each_cpu() { return {Kind::each_cpu, -1, -1, false, false}; }
  static Scope all_cpus() { return {Kind::all_cpus, -1, -1, false, false}; }
  // One thread of any process, by its thread id (perf stat -t).
  static Scope thread_id(int tid) { return {Kind::process, tid, -1, false, false, true}; }
  [[nodiscard]] std::string describe() const;  // "this thread", "process 1234", "CPU 2", ...
};

}  // namespace pmc

#endif  // C++20
