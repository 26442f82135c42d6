// Scheduling: which counter each event of a set uses.
#pragma once

#include <pmc/encoding.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>

#include <cstddef>
#include <vector>

namespace pmc {

// Assigns each event to a counter it allows, such that no counter is used twice (a bipartite
// matching; an assignment is found whenever one exists). Returns, per event, the index into
// pmu.counters. Throws no_counter naming the events that compete, when none exists.
PMC_API std::vector<std::size_t> schedule(const PmuInfo& pmu, const std::vector<Encoding>& events);

}  // namespace pmc
