// The archperf model's top-down parts: which CPUs have the PERF_METRICS MSR (329H) beside fixed
// counter 3 (TOPDOWN.SLOTS), how many of its bytes they fill, and how many issue slots a core
// has per cycle (docs/hardware/archperf.md section 12). A datasheet table, kept apart from the
// code that uses it: a row is one display model of family 6 (and, on a hybrid part, the core
// type whose PMU has the metrics; 0 = any).
//
// Sources of each column:
//  - which parts: the Intel metric files name PERF_METRICS.* events for exactly these catalogs
//    (perfmon ICL, ICX, RKL, TGL: the four level-1 events; SPR, EMR, GNR, ADL, MTL, ARL, LNL
//    P-cores: the eight) [S]; the models are the mapfile rows of those catalogs (cpu/index.toml);
//  - level: 1 = bytes 0-3, 2 = bytes 0-7 (Linux num_topdown_events 4 on Ice Lake, 8 from
//    Sapphire Rapids and the Alder Lake P-core on) [S];
//  - width (slots per unhalted cycle): 5 where Intel's metric formulas multiply by it
//    (`( 5 ) * a` in the ICL/ICX/RKL/TGL Fetch_Latency); the level-2 parts' metric files use
//    no width at all, and the 6 (Golden Cove, Raptor Cove, Redwood Cove) and 8 (Lion Cove) here
//    are the project's [U] values (docs/hardware/archperf.md policy 10.27).
#pragma once

#include <cstdint>

namespace pmc::sim::archperf {

struct TopdownPart {
  unsigned model;          // family 6 display model
  unsigned core_type;      // CPUID.1AH:EAX[31:24] the row needs (0x40 P-core), 0 = any
  unsigned width;          // issue slots per unhalted cycle
  unsigned level;          // 1: PERF_METRICS bytes 0-3; 2: bytes 0-7
};

// clang-format off
inline constexpr TopdownPart kTopdownParts[] = {
    {0x7D, 0, 5, 1}, {0x7E, 0, 5, 1},                  // Ice Lake client (Sunny Cove)
    {0x6A, 0, 5, 1}, {0x6C, 0, 5, 1},                  // Ice Lake server
    {0x8C, 0, 5, 1}, {0x8D, 0, 5, 1},                  // Tiger Lake (Willow Cove)
    {0xA7, 0, 5, 1},                                    // Rocket Lake (Cypress Cove)
    {0x8F, 0, 6, 2},                                    // Sapphire Rapids (Golden Cove)
    {0xCF, 0, 6, 2},                                    // Emerald Rapids (Raptor Cove)
    {0xAD, 0, 6, 2}, {0xAE, 0, 6, 2},                  // Granite Rapids (Redwood Cove)
    {0x97, 0x40, 6, 2}, {0x9A, 0x40, 6, 2},            // Alder Lake P-core (Golden Cove)
    {0xB7, 0x40, 6, 2}, {0xBA, 0x40, 6, 2}, {0xBF, 0x40, 6, 2},  // Raptor Lake P-core
    {0xAA, 0x40, 6, 2}, {0xAC, 0x40, 6, 2}, {0xB5, 0x40, 6, 2},  // Meteor Lake P-core
    {0xC5, 0x40, 8, 2}, {0xC6, 0x40, 8, 2},            // Arrow Lake P-core (Lion Cove)
    {0xBD, 0x40, 8, 2},                                 // Lunar Lake P-core (Lion Cove)
};
// clang-format on

// The row of a CPU, or nullptr.
inline const TopdownPart* topdown_part(unsigned family, unsigned model, unsigned core_type) {
  if (family != 6) return nullptr;
  for (const TopdownPart& p : kTopdownParts)
    if (p.model == model && (p.core_type == 0 || p.core_type == core_type)) return &p;
  return nullptr;
}

// The workload signals PERF_METRICS byte k reads (docs/workload-format.md), named as Linux perf
// names the pseudo events of the bytes.
inline constexpr const char* kTopdownSignals[8] = {
    "topdown-retiring",  "topdown-bad-spec",      "topdown-fe-bound",  "topdown-be-bound",
    "topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound",
};

inline constexpr std::uint32_t kPerfMetricsCap = 1U << 15;  // IA32_PERF_CAPABILITIES[15]

}  // namespace pmc::sim::archperf
