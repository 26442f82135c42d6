// The muParser set-up every metric formula is read with (docs/metrics.md, "Schema"): the
// functions vendor formulas use besides muParser's own.
#pragma once

#include <muParser.h>

namespace pmc::detail {

// d_ratio(a, b): a / b, and 0 when b is 0 (Linux perf's definition, which AMD's formulas use).
inline double metric_d_ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }

inline void define_metric_functions(mu::Parser& p) { p.DefineFun("d_ratio", metric_d_ratio); }

}  // namespace pmc::detail
