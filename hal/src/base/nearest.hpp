// Nearest names by edit distance: the "did you mean" of the messages about a misspelt event,
// metric, backend or bundled file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// Edit distance between two strings (Levenshtein), ignoring ASCII case.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates nearest to `name`, nearest first (ties by name): the one that differs from it
// only in case alone when there is one; else at most `limit`, only those within
// max(2, length / 3) edits; names that differ only in case once (the first in the candidates).
[[nodiscard]] std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                                     std::size_t limit = 3);

}  // namespace pmc::detail
