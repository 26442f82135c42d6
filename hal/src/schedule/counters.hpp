// The counter matching of schedule.cpp, which placement.cpp completes (exclusive events, extra
// registers) into pmc::place and pmc::schedule.
#pragma once

#include <pmc/encoding.hpp>
#include <pmc/pmu.hpp>

#include <cstddef>
#include <vector>

namespace pmc::detail {

// Per event, the index into pmu.counters of the counter it uses; throws no_counter naming the
// events that compete when no assignment exists.
std::vector<std::size_t> match_counters(const PmuInfo& pmu, const std::vector<Encoding>& events);

}  // namespace pmc::detail
