// Session: a set of events counted together on one PMU, through one access method.
#pragma once

#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>
#include <pmc/profile.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// One event's count. It carries the event's identity, so a reader need not re-parse strings:
// `name` is the catalog event (or HAL event) it resolved to, `generic` the Linux perf generic
// name it implements, if any ("instructions" for p6's INST_RETIRED), and `unit` what it counts.
struct Reading {
  std::string event;          // as added
  std::string canonical;
  std::string name;           // "INST_RETIRED", "task-clock"; "" for raw events
  std::string generic;        // "instructions", "cycles", ...; "" when it implements none
  bool hal = false;           // a HAL event (tsc, the OS software events), not the PMU's
  std::uint64_t value = 0;    // 64-bit, wrap-corrected over the hardware width
  // ns of wall-clock time the session was counting, and of it the time the event was on a
  // counter; PMU events on access "sim": cycles of the simulated workload instead (the device
  // has no clock)
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  bool extrapolated = false;
  std::uint64_t granularity = 1;   // counts are multiples of this (interrupt-counting PMUs)
  std::string unit;                // "" for plain counts
  CounterKind counter_kind = CounterKind::general;
  unsigned counter = 0;            // where it was scheduled (backend events only)
  int cpu = -1;                    // Scope::each_cpu(): the CPU this reading is for; -1 otherwise
};

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

namespace detail {
class SessionImpl;
struct SessionAccess;
}  // namespace detail

class PMC_API Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();  // stops the counters if they are running

  // Parses, encodes and schedules one more event. Throws (and leaves the session as it was)
  // on a bad string, an unknown event, or when no assignment of all events to counters exists;
  // that error names the events that compete for the same counters.
  //
  // More events than counters: on access "sim" and "msr" the session splits the events into
  // event sets the PMU holds at once and rotates them over the counters (multiplexing, as the
  // kernel does for perf): each set counts for a slice (100,000 cycles of the simulated
  // workload; 4 ms on "msr", at poll()), and each Reading carries time_enabled, time_running and
  // a count scaled to the enabled time (extrapolated). Access "perf" keeps one group: a set the
  // PMU cannot hold at once is refused there.
  void add(std::string_view event);
  // Adds events that are always counted at the same time (perf's {a,b}): they share one event
  // set. All or nothing; throws no_counter, naming the events, when the PMU cannot hold them at
  // once.
  void add_group(const std::vector<std::string>& events);
  [[nodiscard]] const std::vector<Encoding>& encodings() const;

  void start();
  void stop();
  void reset();              // zero the counts (and the hardware counters)
  [[nodiscard]] std::vector<Reading> read();
  // The hot-loop read: the values read() would give, in the same order (one per event, or per
  // event and CPU with Scope::each_cpu), into the caller's buffer, which must hold readings()
  // of them; returns how many it wrote. It allocates nothing and builds no string (after the
  // first read since the events changed), and makes no system call beyond one read() per perf
  // group and target (none where the rdpmc path serves the group). Values only: the times and
  // names are read()'s.
  std::size_t read(std::span<std::uint64_t> values);
  [[nodiscard]] std::size_t readings() const;  // how many values read() gives
  // Folds the hardware counters into the 64-bit totals. Must run at least once per 2^(width-1)
  // events; the simulated workload runner calls it between chunks.
  void poll();
  [[nodiscard]] bool running() const;

  // Profiling (pmc/profile.hpp): asks the PMU to record, at each interrupt of the session's
  // counters, the execution level (a level histogram) and/or the interrupted PC (a PC profile
  // over request.pc). Only while stopped; an empty request stops profiling. Throws
  // not_supported when the backend or the access method cannot sample at counter interrupts,
  // and the backend's refusal for a request its PMU cannot collect. reset() empties them.
  void profile(const ProfileRequest& request);
  [[nodiscard]] const ProfileRequest& profile_request() const;
  // What was collected since start (or the last reset): one per CPU counted, empty when not
  // asked for or before the first start.
  [[nodiscard]] std::vector<LevelHistogram> level_histograms();
  [[nodiscard]] std::vector<PcProfile> pc_profiles();
  //
  // Profiling through Linux perf sampling: a session without a backend, with access "perf", or
  // with a sampling HAL event (cpu-clock or task-clock with `period=N` ns) samples the
  // interrupted IP of its sampling events (each its own mmap ring buffer of
  // 1 + PerfAccess::kRingPages pages, read by stop(), read(), poll() and the calls below; poll
  // at least every 16,384 samples per CPU, which pmc profile does every 10 ms). start() then
  // needs a sampling event. Level histograms have the bins "user", "kernel", "hypervisor",
  // "guest kernel", "guest user" (the sample's cpumode); PC profiles bucket the sampled IPs of
  // request.pc->space that fall in the range, 16-byte buckets doubled until there are at most
  // 2^20. Every sampled IP is kept (user and kernel), so the range may be changed with
  // profile() after stop() and the profile read again.
  // The sampled IPs of one address space, ascending (perf sampling only; empty otherwise).
  [[nodiscard]] std::vector<PcCount> sampled_pcs(AddressSpace space);
  // Samples the kernel dropped because a ring buffer was full, since start or the last reset
  // (the events' PERF_FORMAT_LOST count; before Linux 6.0 the PERF_RECORD_LOST records, which the
  // kernel writes only once a buffer has room again); 0 for the backend profilers.
  [[nodiscard]] std::uint64_t lost_samples();

  // Simulated access: runs a workload through the session's simulated PMU (its backend's
  // device model), folding the counters between chunks so no wrap is missed. A stopped session
  // is started for the run and stopped after it (counts accumulate); a running one keeps
  // running. Throws not_supported when the session does not count on a simulated PMU (no
  // backend, access perf or msr) and not_found when the device model is not installed.
  WorkloadRun run(const Workload& workload);
  // The same for a workload streamed from its file: the memory held does not grow with the
  // number of segments. Every segment is read and checked first (a refused workload counts
  // nothing), then the file is read again and run in batches; errors name file:line:column.
  WorkloadRun run(WorkloadReader& workload);

  [[nodiscard]] const Scope& scope() const;

  PMC_INTERNAL explicit Session(std::unique_ptr<detail::SessionImpl> impl);

 private:
  friend struct detail::SessionAccess;  // the tests' way to the device model (not public API)
  std::unique_ptr<detail::SessionImpl> impl_;
};

// Assigns each event to a counter it allows, such that no counter is used twice (a bipartite
// matching; an assignment is found whenever one exists). Returns, per event, the index into
// pmu.counters. Throws no_counter naming the events that compete, when none exists.
PMC_API std::vector<std::size_t> schedule(const PmuInfo& pmu, const std::vector<Encoding>& events);

}  // namespace pmc
