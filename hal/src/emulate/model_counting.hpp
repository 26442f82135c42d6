// Counting on the device model, shared by model_counting.cpp (the probes and the count of one
// event) and emulate.cpp (the public entry points that check and count a list of events).
#pragma once

#include <pmc/emulate.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <vector>

namespace pmc::detail {

// Throws not_supported unless the Hal has a backend and runs on the simulated PMU (access "sim").
void require_sim(const Hal& hal);

// The signals of map that event reads (its check_emulated_event reads), in the map's order.
std::vector<const EmulatedSignal*> signals_read(const SignalMap& map, const EmulatedEvent& event);

// One source line's activity as segments (docs/emulation.md, "The activity as segments"), into
// out (cleared first): a staircase in which each signal occurs once per cycle until its total
// (its quantities added up over the line) is reached; user mode; none when every total is 0.
void line_segments(const std::vector<const EmulatedSignal*>& signals, const Activity& activity, Workload& out);

// Counts result.event alone over every source line of the activity: per_line[i] is line i's
// count; result.reading the total (no time), result.interrupts the model's overflow interrupts.
void count_one(const Hal& hal, const SignalMap& map, const ProgramActivity& activity, EmulatedEvent& result,
               std::vector<std::uint64_t>& per_line);

}  // namespace pmc::detail
