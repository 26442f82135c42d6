// The session behind pmc::Session: the events in the order added, each routed to an access
// method (access.hpp), backend events scheduled onto the PMU's counters.
#pragma once

#include "access.hpp"
#include "context.hpp"
#include "msr.hpp"
#include "perf_event.hpp"
#include "tsc.hpp"

#include <pmc/schedule.hpp>
#include <pmc/session.hpp>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace pmc::detail {

class SignalMap;

// Internal (the tests build sessions over a fake /dev/cpu tree through the static core).
class SessionImpl {
 public:
  // ctx->loaded may be null: a session without a backend counts HAL events only.
  explicit SessionImpl(std::shared_ptr<const Context> context, Scope scope = {}, AccessOptions options = {});
  ~SessionImpl();
  SessionImpl(const SessionImpl&) = delete;
  SessionImpl& operator=(const SessionImpl&) = delete;

  void add(std::string_view event);
  void add_group(const std::vector<std::string>& events);  // all or nothing, one event set
  void start();
  void stop();
  void reset();
  void poll();
  const std::vector<Reading>& read();
  // The values read() would give, into the caller's buffer; allocates nothing once the read plan
  // is built (at the first read after the events changed).
  std::size_t read(std::span<std::uint64_t> values);
  std::size_t readings();  // how many read() gives
  void profile(const ProfileRequest& request);
  std::vector<LevelHistogram> level_histograms();
  std::vector<PcProfile> pc_profiles();
  std::vector<PcCount> sampled_pcs(AddressSpace space);
  std::uint64_t lost_samples();
  std::vector<SampledStack> sampled_stacks();   // session_stacks.cpp
  UserStacks sampled_user_stacks();
  std::vector<MappedFile> sampled_mappings();
  // Simulated workloads (session_run.cpp; the runner is hal/src/sim/runner.cpp).
  WorkloadRun run(const Workload& workload);
  WorkloadRun run(WorkloadReader& workload);  // streamed: checked whole, then run in batches
  // Access "sim" and "msr": the event sets the backend events rotate through (1: no multiplexing).
  [[nodiscard]] std::size_t event_sets() const { return registers_ ? registers_->set_count() : 0; }
  // The simulated device (access "sim", once a PMU event was added), or nullptr.
  [[nodiscard]] Device* device() const;
  [[nodiscard]] const PerfAccess* perf_access() const { return perf_.get(); }

  std::shared_ptr<const Context> ctx;
  Scope scope;
  AccessOptions options;
  std::vector<Encoding> encodings;  // every event, in the order added
  bool running = false;
  ProfileRequest profile_request;   // empty: not profiling

 private:
  // Where one event is counted.
  struct Entry {
    Access* access = nullptr;
    std::size_t index = 0;          // its index among that access's events
    const CounterInfo* counter = nullptr;  // backend events on a register access or perf
    const char* unit = "";                 // HAL events: what they count in ("ns", "ticks")
  };
  // The event sets of the backend events on access "sim" and "msr", in first-fit order.
  struct SetPlan {
    std::vector<std::vector<std::size_t>> members;  // per set: indexes into the backend events
    std::vector<Placement> placements;              // parallel: their counters and extra MSRs
  };
  void add_specs(const std::vector<EventSpec>& specs);  // one group, all or nothing for its PMU events
  void check_backend_event(const EventSpec& spec) const;
  void add_register_events(const std::vector<EventSpec>& specs, std::vector<std::optional<HalEvent>>& hal,
                           std::vector<Encoding> pmu_events, std::size_t group);
  // The sets with the new group's events (indexes into `backend`, the backend events with the
  // group's appended); the earlier sets keep their placements; throws with nothing changed.
  [[nodiscard]] SetPlan plan_group(const std::vector<Encoding>& backend, const std::vector<std::size_t>& group) const;
  [[nodiscard]] std::vector<EventSet> event_sets(const SetPlan& plan) const;
  void add_hal_event(HalEvent event);
  [[nodiscard]] Entry open_hal_event(const HalEvent& event);  // opened, not yet a reading
  void commit_hal_event(HalEvent event, const Entry& entry);
  void add_perf_event(const EventSpec& spec, Encoding enc);
  [[noreturn]] void refuse_sampling(const EventSpec& spec) const;
  // An unknown event name: the not_found error with the nearest names this session knows.
  [[noreturn]] void unknown_event(const EventSpec& spec, const std::string& what) const;
  [[nodiscard]] bool known_name(const EventSpec& spec) const;
  [[nodiscard]] Encoding encode(const EventSpec& spec) const;  // the backend's, unknown names answered
  void open_msr(const EventSpec& spec);
  void open_sim();
  // Throws unless the session counts on a simulated device (a backend, access "sim").
  void require_sim() const;
  class SimTarget;  // the session as the workload runner drives it (session_run.cpp)
  PerfAccess& perf();
  [[nodiscard]] std::vector<PerfSamples> merged_samples();  // per CPU (each_cpu) or summed
  // The access methods in start order, without allocating.
  struct AccessList {
    std::array<Access*, 3> list{};
    std::size_t size = 0;
    [[nodiscard]] Access* const* begin() const { return list.data(); }
    [[nodiscard]] Access* const* end() const { return list.data() + size; }
  };
  [[nodiscard]] AccessList accesses() const;
  // Where each reading's count comes from, built when the events change (read_plan(); an
  // access method comes with the first event routed to it), so that a read only asks each
  // access for its counts and copies numbers. start, stop, reset and poll use its access list.
  struct ReadPlan {
    std::size_t events = ~std::size_t{0};  // what it was built for
    AccessList access;
    std::array<std::size_t, 4> offset{};  // per access: its first count in `counts`; [size]: the end
    std::vector<Count> counts;            // scratch: every access's counts, event-major
    std::vector<std::uint32_t> route;     // per reading: its count in `counts`
    std::vector<int> cpu;                 // per reading: its CPU (each_cpu), else -1
    std::vector<std::uint32_t> event;     // per reading: its event (index into encodings)
    std::vector<Reading> readings_out;    // what read() returns: identity built with the plan
    // A session whose readings are exactly one perf group's events, in order: read() asks
    // the group directly (PerfAccess::read_values).
    PerfAccess* direct = nullptr;
    std::size_t readings = 0;  // route.size()
  };
  // entries_ grows with encodings, one entry per event (and is cheaper to count).
  [[nodiscard]] bool plan_current() const { return plan_.events == entries_.size(); }
  ReadPlan& read_plan() { return plan_current() ? plan_ : build_plan(); }
  ReadPlan& build_plan();
  void start_slowly();
  void read_counts(ReadPlan& plan);
  std::size_t read_through(std::span<std::uint64_t> values);  // read()'s other cases
  [[nodiscard]] std::vector<int> cpus();                // Scope each_cpu: the CPUs read

  std::vector<Entry> entries_;
  std::vector<std::size_t> backend_events_;  // indexes into encodings of the backend events
  std::vector<std::size_t> backend_groups_;  // parallel: the group each belongs to (add_group)
  std::size_t next_group_ = 0;
  SetPlan planned_;
  const CorePart* part_ = nullptr;  // hybrid CPU under access "perf": the core type of the events
  std::unique_ptr<CpuPin> pin_;                // access "msr": destroyed after the registers are stopped
  std::unique_ptr<RegisterAccess> registers_;  // access "sim" or "msr"
  std::unique_ptr<PerfAccess> perf_;           // software events, and access "perf"
  std::unique_ptr<TscAccess> tsc_;
  std::unique_ptr<SignalMap> signals_;  // Session::run: event-named signals (session_run.cpp)
  bool signals_built_ = false;
  std::size_t sampling_events_ = 0;  // HAL clock events with period=
  bool perf_profile_ = false;        // the profile request is served by perf sampling
  bool perf_profiled_ = false;       // ... and the session has started since
  ReadPlan plan_;
};

// The tests' way from a Session to its implementation and device model (not public API).
struct SessionAccess {
  static SessionImpl& impl(Session& s) { return *s.impl_; }
  static Device* device(Session& s) { return s.impl_->device(); }
};

}  // namespace pmc::detail
