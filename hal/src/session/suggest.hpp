// Unknown event names: the names a session knows that are nearest to a misspelt one.
#pragma once

#include "context.hpp"
#include "nearest.hpp"  // edit_distance, nearest_names

#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// Whether a name is one of Linux perf's generic hardware event names (cycles, cpu-cycles,
// instructions, cache-references, ...), which any backend may implement.
[[nodiscard]] bool is_perf_generic_name(std::string_view name);

// The known event names nearest to `name` by edit distance (Levenshtein, ignoring case): the
// catalog's event names and aliases for the CPU (ctx may have no backend, or be null), perf's
// generic names and the HAL events' names and aliases. At most `limit` names, nearest first,
// only those within max(2, length / 3) edits; empty when none is that near.
[[nodiscard]] std::vector<std::string> nearest_event_names(std::string_view name, const Context* ctx,
                                                           std::size_t limit = 3);

}  // namespace pmc::detail
