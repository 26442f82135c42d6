// The simulated-workload runner (Session::run): drives a workload through the device model of
// access "sim" in chunks, folding the counters between chunks, ending a chunk where the
// multiplexing slice ends, fast-forwarding long uniform segments, and streaming a
// WorkloadReader in batches. It knows the session only through RunTarget.
#pragma once

#include "access.hpp"
#include "signal_map.hpp"

#include <pmc/pmu.hpp>
#include <pmc/workload.hpp>

namespace pmc::detail {

// What a run drives: the counting it runs under (a session's), as the runner needs it.
class RunTarget {
 public:
  virtual ~RunTarget() = default;
  // The register access over the simulated device, built at the first call (which throws when
  // the device model cannot be built).
  virtual RegisterAccess& simulated() = 0;
  [[nodiscard]] virtual bool running() const = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Folds every counter the target reads (between two chunks).
  virtual void poll() = 0;
  // The map of signals named after catalog events (signal_map.hpp) every segment goes through
  // on its way to the device, kept by the target so that each name is resolved once; nullptr:
  // the device sees the segments as they are. Called after simulated().
  virtual SignalMap* signal_map() { return nullptr; }
  // Whether the counting samples (a profile request, or an event with a sampling period): then
  // a multiplexed segment rotates slice by slice, each slice restarting the sampling counters.
  [[nodiscard]] virtual bool samples() const { return false; }
};

// Runs a workload on the target's device, splitting segments so that no counter of the PMU's
// narrowest width can pass half its range between two polls. Every segment is checked before
// anything runs (a refused workload counts nothing), and its signal names resolved (the
// target's signal_map()). Starts the target if it is not running, and stops it again after.
WorkloadRun run_workload(RunTarget& target, const PmuInfo& pmu, const Workload& workload);
// Whether a multiplexed uniform segment is rotated in closed form (runner.cpp), which is the
// default; off, slice by slice: the reference the tests compare it with.
bool closed_form_rotation();
void set_closed_form_rotation(bool on);
// The same for a streamed workload: checked whole first, then run in batches, the target kept
// running between them, so the memory held is one batch whatever the length.
WorkloadRun run_workload(RunTarget& target, const PmuInfo& pmu, WorkloadReader& reader);

}  // namespace pmc::detail
