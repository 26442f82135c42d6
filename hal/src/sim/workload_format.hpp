// What the workload formats share (hal/src/sim/workload_toml.cpp, workload_compact.cpp and
// workload.cpp): overflow-checked arithmetic for the 64-bit totals, the implicit signal's name,
// and the TOML form's reader, which load_workload and WorkloadReader use for a TOML file.
#pragma once

#include "toml_util.hpp"

#include <pmc/workload.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace pmc::detail {

inline constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

// A segment with a PC range is repeated as that many segments (each walks the range again): at
// most this many.
inline constexpr std::uint64_t kMaxExpandedPcRepeat = 1u << 16;

// The implicit signal: one per unhalted cycle. Workloads may not set it.
inline constexpr std::string_view kCycles = "cycles";

// a * b, or nullopt when the product does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > kMax64 / a) return std::nullopt;
  return a * b;
}

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  if (b > kMax64 - a) return std::nullopt;
  return a + b;
}

// A workload in the TOML form from its parsed document; `source` names it in errors.
Workload workload_from_table(const toml::table& root, const std::string& source);
// One [[segment]] table of that form, checked, added to `out` (repeat times with a PC range):
// the streamed reader's piece at a time (workload_toml_stream.cpp).
void add_segment_table(const toml::table& seg, Workload& out);

}  // namespace pmc::detail
