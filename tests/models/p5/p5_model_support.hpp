// What the tests of the P5 device model (test_p5_model.cpp and the test_p5_model_<topic>.cpp
// beside it) share: the MSRs, CESR fields and event codes of docs/hardware/p5.md (section numbers
// in brackets), the bundled Pentium dumps, segments, and the check of a pmc::Error's kind and
// message.
#pragma once

#include "support/model_checks.hpp"

#include <boost/test/unit_test.hpp>

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "p5_model.hpp"  // P5Device (pmcmodel_p5)

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace p5_model_test {

using pmc::errc;
using pmc::Mode;
using pmc::sim::P5Device;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t TSC = 0x10, CESR = 0x11, CTR0 = 0x12, CTR1 = 0x13;
// A CESR half [3]: ES 5:0, CC 8:6 (bit 6 CPL 0-2, bit 7 CPL 3, bit 8 clocks), PC 9. CTR1's half
// is CTR0's shifted left by 16.
constexpr u64 OS = 0x040, USR = 0x080, CLK = 0x100, PC = 0x200;
constexpr u64 ctr1(u64 half) { return half << 16; }
// Event codes [5.1, 5.2].
constexpr u64 DATA_READ = 0x00, DATA_READ_OR_WRITE = 0x28, BRANCHES = 0x12, TAKEN_BRANCH_OR_BTB_HIT = 0x14, INSTRUCTIONS_EXECUTED = 0x16,
              INSTRUCTIONS_EXECUTED_V_PIPE = 0x17, BUS_CYCLE_DURATION = 0x18, MMX_INSTRUCTIONS_EXECUTED = 0x2B,
              CYCLES_NOT_IN_HALT = 0x30, TAKEN_BRANCHES = 0x32, PIPELINE_FLUSHES_WRONG_PREDICTION = 0x35,
              RETURNS = 0x39;

constexpr u64 TWO40 = u64{1} << 40;

inline pmc::CpuInfo dump(const std::string& name) {
  return pmc::load_cpuid_dump(std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name + ".txt");
}
// pentium-mmx.txt: 0x543, MMX (CPUID.1:EDX[23]); pentium.txt: 0x525, no MMX;
// pentium-mmx-e74.txt: 0x544, MMX; pentium-overdrive.txt: 0x1532, no MMX.
inline const pmc::CpuInfo& mmx_cpu() {
  static const pmc::CpuInfo c = dump("pentium-mmx");
  return c;
}
inline const pmc::CpuInfo& plain_cpu() {
  static const pmc::CpuInfo c = dump("pentium");
  return c;
}

using pmc_test::seg;  // tests/support/model_checks.hpp

using pmc_test::throws;

}  // namespace p5_model_test
