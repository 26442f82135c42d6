// Register fields as the CPUID tables of the SDM and the APM, and the Arm ARM's ID register
// tables, write them (bits hi..lo), for the decoders of cpu.cpp, cpu_native.cpp and cpu_arm.cpp.
#pragma once

#include <pmc/cpu.hpp>

#include <cstdint>

namespace pmc::detail {

// The first extended CPUID leaf, 80000000H (its EAX: the highest extended leaf).
inline constexpr std::uint32_t kExtBase = 0x80000000;

// The hybrid leaf, 1AH: EAX[31:24] core type, EAX[23:0] native model ID (CpuInfo::core_type).
inline constexpr std::uint32_t kHybridLeaf = 0x1A;

// Bits hi..lo of v (inclusive), as the SDM tables write them.
constexpr unsigned bits(std::uint32_t v, unsigned hi, unsigned lo) {
  const unsigned width = hi - lo + 1;
  const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
  return static_cast<unsigned>((v >> lo) & mask);
}
constexpr bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

// CpuInfo::core_type and native_model from leaf 1AH of table (0 when the CPU has none): by
// decode_cpuid, and again when a native reading adds the leaf later (read_native_leaf).
void decode_hybrid_leaf(CpuInfo& cpu, const CpuidTable& table);
// CpuInfo::brand from leaves 80000002H-80000004H of table (unchanged when the CPU or the table
// has none): by decode_cpuid, and when a native reading gets them later (complete_brand).
void decode_brand(CpuInfo& cpu, const CpuidTable& table);

}  // namespace pmc::detail
