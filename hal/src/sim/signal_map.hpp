// Signals named after catalog events (docs/workload-format.md, "Signals named after events"): a
// workload (a file, or the segments the emulation layer builds) may write
// "MEM_LOAD_RETIRED.L3_MISS" = 3; the device model counts a signal of its own for that event's
// select ("raw.0x20D1" or whatever the model's descriptor signal_of says). SignalMap rewrites
// each segment on its way to the device (the runner, runner.cpp, calls apply() for every
// segment of Session::run): each signal name is resolved once, the first time its number is
// seen, and a segment is rewritten into one buffer the map keeps, so the per-segment path
// allocates nothing once every signal is known.
#pragma once

#include "access.hpp"

#include <pmc/workload.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace pmc::detail {

class SignalMap {
 public:
  // What a signal name stands for: the device's signal, or nullopt when the name is not an
  // event's (it then reaches the device unchanged). May throw: the error stops the run.
  using Resolve = std::function<std::optional<Signal>(std::string_view name)>;
  explicit SignalMap(Resolve resolve) : resolve_(std::move(resolve)) {}

  // Resolves the signals of the segment not seen before (the runner calls it for every segment
  // before anything runs, so a bad name counts nothing).
  void learn(const Segment& segment);
  // The segment as the device sees it: the segment itself when no signal of it is an event's,
  // else a copy whose signals (each event-named one replaced by the device's, two that meet
  // added up, saturating at 2^64 - 1) live in this map until the next call.
  [[nodiscard]] Segment apply(const Segment& segment);

 private:
  static constexpr std::uint32_t kUnknown = ~std::uint32_t{0};
  static constexpr std::uint32_t kSame = kUnknown - 1;
  Resolve resolve_;
  std::vector<std::uint32_t> to_;  // by signal number: kUnknown, kSame or the device's signal
  std::vector<SignalCount> buffer_;
};

// The resolver of a session's simulated device: a name the catalog finds as an event (its own
// name or an alias, with unit masks in the libpfm4 form "EVENT:UMASK" where the catalog has
// them; no modifiers) is encoded by the backend and handed to the model's signal_of. nullptr
// when the model has no signal_of: then no name is mapped.
[[nodiscard]] SignalMap::Resolve event_signal_resolver(const Context& ctx, const RegisterAccess& regs);

}  // namespace pmc::detail
