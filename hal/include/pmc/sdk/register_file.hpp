// Plugin SDK: RegisterFile, 64-bit registers addressed like MSRs, plus RDPMC. Implemented by
// the simulated device models (model plugins) and by the MSR device /dev/cpu/N/msr. Backends
// drive PMUs only through this.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/register_file.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstdint>

namespace pmc {

class PMC_API RegisterFile {
 public:
  virtual ~RegisterFile();
  // RDMSR / WRMSR. An address the PMU does not have, or a reserved bit set in a write, throws
  // pmc::Error(register_fault) as the #GP of the real instruction would.
  virtual std::uint64_t read(std::uint32_t msr) = 0;
  virtual void write(std::uint32_t msr, std::uint64_t value) = 0;
  // RDPMC with ECX = index. Throws register_fault for an invalid index or when user-mode
  // RDPMC is not permitted (or the CPU has no RDPMC).
  virtual std::uint64_t rdpmc(std::uint32_t index) = 0;
};

}  // namespace pmc

#endif  // C++20
