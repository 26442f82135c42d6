// What the tests of the P6 device model (test_p6_model.cpp and the test_p6_model_<topic>.cpp
// beside it) share: the MSRs, PerfEvtSel fields and event codes of docs/hardware/p6.md (section
// numbers in brackets), the CPUs (Pentium Pro, Pentium III, Pentium M), segments, and the check
// of a pmc::Error's kind and message.
#pragma once

#include "support/model_checks.hpp"

#include <boost/test/unit_test.hpp>

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "p6_model.hpp"  // P6Device (pmcmodel_p6), with the Pentium M firmware setting (IA32_MISC_ENABLE)

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace p6_model_test {

using pmc::errc;
using pmc::Device;
using pmc::Mode;
using pmc::Segment;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t PerfCtr0 = 0xC1, PerfCtr1 = 0xC2, PerfEvtSel0 = 0x186, PerfEvtSel1 = 0x187;
// PerfEvtSel fields [3].
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, E = 1ULL << 18, PC = 1ULL << 19,
              INT = 1ULL << 20, EN = 1ULL << 22, INV = 1ULL << 23;
constexpr u64 umask(u64 m) { return m << 8; }
constexpr u64 cmask(u64 c) { return c << 24; }
// Event codes [5].
constexpr u64 INST_RETIRED = 0xC0, CPU_CLK_UNHALTED = 0x79, L2_RQSTS = 0x2E, L2_LD = 0x29,
              FLOPS = 0xC1, FP_COMP_OPS_EXE = 0x10, CYCLES_DIV_BUSY = 0x14, FP_ASSIST = 0x11,
              MUL = 0x12, DIV = 0x13, BR_INST_RETIRED = 0xC4, BR_MISS_PRED_RETIRED = 0xC5,
              UOPS_RETIRED = 0xC2, BUS_TRAN_BRD = 0x65, BUS_DATA_RCV = 0x64, MMX_INSTR_EXEC = 0xB0,
              EMON_KNI_INST_RETIRED = 0xD8, L2_LINES_IN = 0x24, L2_LINES_OUT = 0x26,
              L2_M_LINES_OUTM = 0x27, L2_IFETCH = 0x28;

constexpr u64 TWO40 = 1ULL << 40;

inline pmc::CpuInfo pentium_pro() {
  pmc::CpuInfo cpu;
  cpu.vendor = "GenuineIntel";
  cpu.family = 6;
  cpu.model = 1;
  cpu.stepping = 9;
  cpu.signature = 0x619;
  cpu.source = "test";
  return cpu;
}

inline std::unique_ptr<Device> p6() { return std::make_unique<pmc::sim::P6Device>(pentium_pro()); }

// Family 6 models 9 (Banias) and 13 (Dothan) are the Pentium M [1]; 8 is a Pentium III
// (Coppermine).
inline pmc::CpuInfo p6_model(unsigned model, unsigned stepping) {
  pmc::CpuInfo cpu = pentium_pro();
  cpu.model = model;
  cpu.stepping = stepping;
  cpu.signature = 0x600 | (model << 4) | stepping;
  return cpu;
}
inline pmc::CpuInfo pentium_m() { return p6_model(13, 8); }
inline pmc::CpuInfo pentium_iii() { return p6_model(8, 3); }

// IA32_MISC_ENABLE and its bit 7 "performance monitoring available" [1].
constexpr std::uint32_t MiscEnable = 0x1A0;
constexpr u64 PerfmonAvailable = 1ULL << 7;

using pmc_test::seg;  // tests/support/model_checks.hpp

using pmc_test::throws;

}  // namespace p6_model_test
