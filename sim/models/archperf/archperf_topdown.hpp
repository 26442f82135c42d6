// The archperf model's top-down parts: which CPUs have the PERF_METRICS MSR (329H) beside fixed
// counter 3 (TOPDOWN.SLOTS), how many of its bytes they fill, and how many issue slots a core
// has per cycle (docs/hardware/archperf.md section 12, policy 10.27). The table is data,
// topdown.toml (its sources are there), built into the model and read by archperf_topdown.cpp.
#pragma once

#include <cstdint>

namespace pmc::sim::archperf {

struct TopdownPart {
  unsigned width = 0;  // issue slots per unhalted cycle
  unsigned level = 0;  // 1: PERF_METRICS bytes 0-3; 2: bytes 0-7
};

// The part a CPU is (display family and model; core_type = CPUID.1AH:EAX[31:24], which a hybrid
// part's row names), or nullptr. Throws invalid_argument when topdown.toml is malformed.
const TopdownPart* topdown_part(unsigned family, unsigned model, unsigned core_type);

// The workload signals PERF_METRICS byte k reads (docs/workload-format.md), named as Linux perf
// names the pseudo events of the bytes.
inline constexpr const char* kTopdownSignals[8] = {
    "topdown-retiring",  "topdown-bad-spec",      "topdown-fe-bound",  "topdown-be-bound",
    "topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound",
};

inline constexpr std::uint32_t kPerfMetricsCap = 1U << 15;  // IA32_PERF_CAPABILITIES[15]

}  // namespace pmc::sim::archperf
