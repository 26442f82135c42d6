// The session behind pmc::Session: the events in the order added, each routed to an access
// method (access.hpp), backend events scheduled onto the PMU's counters.
#pragma once

#include "access.hpp"
#include "context.hpp"
#include "msr.hpp"
#include "perf_event.hpp"
#include "tsc.hpp"

#include <pmc/session.hpp>

#include <memory>
#include <vector>

namespace pmc::detail {

// Internal (the tests build sessions over a fake /dev/cpu tree through the static core).
class SessionImpl {
 public:
  // ctx->loaded may be null: a session without a backend counts HAL events only.
  explicit SessionImpl(std::shared_ptr<const Context> context, Scope scope = {}, AccessOptions options = {});
  ~SessionImpl();
  SessionImpl(const SessionImpl&) = delete;
  SessionImpl& operator=(const SessionImpl&) = delete;

  void add(std::string_view event);
  void start();
  void stop();
  void reset();
  void poll();
  std::vector<Reading> read();
  void profile(const ProfileRequest& request);
  std::vector<LevelHistogram> level_histograms();
  std::vector<PcProfile> pc_profiles();
  std::vector<PcCount> sampled_pcs(AddressSpace space);
  std::uint64_t lost_samples();
  WorkloadRun run(const Workload& workload);
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
  void add_backend_event(const EventSpec& spec);
  void add_hal_event(HalEvent event);
  void add_perf_event(const EventSpec& spec);
  void open_msr(const EventSpec& spec);
  void open_sim();
  PerfAccess& perf();
  [[nodiscard]] std::vector<PerfSamples> merged_samples();  // per CPU (each_cpu) or summed
  [[nodiscard]] std::vector<Access*> accesses() const;  // in start order
  [[nodiscard]] std::vector<int> cpus();                // Scope each_cpu: the CPUs read

  std::vector<Entry> entries_;
  std::vector<std::size_t> backend_events_;  // indexes into encodings of the backend events
  std::unique_ptr<CpuPin> pin_;                // access "msr": destroyed after the registers are stopped
  std::unique_ptr<RegisterAccess> registers_;  // access "sim" or "msr"
  std::unique_ptr<PerfAccess> perf_;           // software events, and access "perf"
  std::unique_ptr<TscAccess> tsc_;
  std::size_t sampling_events_ = 0;  // HAL clock events with period=
  bool perf_profile_ = false;        // the profile request is served by perf sampling
  bool perf_profiled_ = false;       // ... and the session has started since
};

// The tests' way from a Session to its implementation and device model (not public API).
struct SessionAccess {
  static SessionImpl& impl(Session& s) { return *s.impl_; }
  static Device* device(Session& s) { return s.impl_->device(); }
};

}  // namespace pmc::detail
