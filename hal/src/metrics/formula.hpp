// What a metric formula reads (docs/metrics.md, "Constants"): its names, walked over the subset of
// muParser's syntax that metric files use, with the conditions that depend only on constants
// decided, as perf decides `#smt_on` before it opens events.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// The names (variables) a formula reads when `constant` gives the value of each name that is a
// known constant (nullopt for any other name): every name, except that of `c ? a : b` whose
// condition folds to a number only the side taken is walked, and of `&&` / `||` whose left side
// decides, only that side. Names appear once each, in the order first read. Throws
// std::invalid_argument for text it cannot read (muParser reports such formulas first).
std::vector<std::string> formula_reads(std::string_view formula,
                                       const std::function<std::optional<double>(std::string_view)>& constant);

}  // namespace pmc::detail
