// Session: a set of events counted together on one PMU, through one access method.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/session.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/encoding.hpp>
#include <pmc/export.hpp>
#include <pmc/profile.hpp>
#include <pmc/reading.hpp>
#include <pmc/scope.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

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
  // The counts with what each one is: one Reading per event (per event and CPU with
  // Scope::each_cpu), in the order added. The names, units and definitions are built once, when
  // the events change; a read fills in the numbers only, allocates nothing and makes the same
  // system calls as read(span) below. The readings are the session's: valid, and updated in
  // place, until the next read(), add() or the session's end. Copy them to keep them
  // (`std::vector<pmc::Reading> before = s.read();`).
  [[nodiscard]] const std::vector<Reading>& read();
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
  // The samples by process and stack (perf sampling only; empty otherwise), the stacks with the
  // most samples first; call chains when profile() asked for them (request.callchain).
  [[nodiscard]] std::vector<SampledStack> sampled_stacks();
  // The samples with a copy of their user stack (request.user_stack_bytes; empty otherwise).
  [[nodiscard]] UserStacks sampled_user_stacks();
  // Where each sampled process had its code: the executable mappings the kernel reported while
  // the session sampled (for a process that exec'd, those of its last program), by pid and
  // address. With them and the files, the stacks' addresses resolve to functions after the
  // processes are gone.
  [[nodiscard]] std::vector<MappedFile> sampled_mappings();

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

}  // namespace pmc

#endif  // C++20
