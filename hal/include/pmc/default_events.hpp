// The events a count without an event list counts, as perf stat's are when -e is not given.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/default_events.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string>
#include <vector>

namespace pmc {

class Hal;

// What is counted: the kind of target decides the list.
enum class DefaultEvents {
  // A simulated workload (Session::run): the generic events the backend has (cycles,
  // instructions, branches, branch-misses, in that order), as many as its counters hold at once;
  // a backend with none of them, its first events for this CPU that fit.
  workload,
  // A command, a process or a thread (perf stat's defaults): task-clock, context-switches,
  // cpu-migrations, page-faults, cycles, instructions, branches, branch-misses, and tsc.
  task,
  // CPUs (perf stat -a, -C): the same with cpu-clock for task-clock, without tsc.
  cpus,
};

// The default event strings for the Hal. For task and cpus they are the list itself: an event
// this machine cannot count is for the caller to leave out (Session::add says which). For
// workload the backend's encodings are tried against its counters (pmc::schedule); throws
// not_supported when the Hal has no backend.
PMC_API std::vector<std::string> default_events(const Hal& hal, DefaultEvents what);

}  // namespace pmc

#endif  // C++20
