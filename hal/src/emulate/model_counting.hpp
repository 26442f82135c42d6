// Counting on the device model, shared by model_counting.cpp (the probes and the count of one
// event) and emulate.cpp (the public entry points that check and count a list of events).
#pragma once

#include <pmc/emulate.hpp>

#include <cstdint>
#include <vector>

namespace pmc::detail {

// Throws not_supported unless the Hal has a backend and runs on the simulated PMU (access "sim").
void require_sim(const Hal& hal);

// Counts result.event alone over every source line of the activity: per_line[i] is line i's
// count; result.reading the total (no time), result.interrupts the model's overflow interrupts.
void count_one(const Hal& hal, const SignalMap& map, const ProgramActivity& activity, EmulatedEvent& result,
               std::vector<std::uint64_t>& per_line);

}  // namespace pmc::detail
