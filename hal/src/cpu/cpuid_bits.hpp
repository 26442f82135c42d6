// Register fields as the CPUID tables of the SDM and the APM, and the Arm ARM's ID register
// tables, write them (bits hi..lo), for the decoders of cpu.cpp, cpu_native.cpp and cpu_arm.cpp.
#pragma once

#include <cstdint>

namespace pmc::detail {

// The first extended CPUID leaf, 80000000H (its EAX: the highest extended leaf).
inline constexpr std::uint32_t kExtBase = 0x80000000;

// Bits hi..lo of v (inclusive), as the SDM tables write them.
constexpr unsigned bits(std::uint32_t v, unsigned hi, unsigned lo) {
  const unsigned width = hi - lo + 1;
  const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
  return static_cast<unsigned>((v >> lo) & mask);
}
constexpr bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

}  // namespace pmc::detail
