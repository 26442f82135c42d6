// The Intel architectural PMU device model's register layouts, shared by its sources:
//   archperf_geometry.cpp  which counters and registers exist (CPUID.0AH, 23H, PDCM) and why
//                          an address is absent;
//   archperf_model.cpp     RDMSR / WRMSR and RDPMC;
//   archperf_counting.cpp  which signal each counter counts, counting, overflow and PMIs.
// Facts cite docs/hardware/archperf.md by section; the [U] policies are summed up in
// archperf_model.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace pmc::sim::archperf {

// IA32_PERFEVTSELx fields [3]. EventSelect, UMASK and EN (per counter) are x86_pmu.hpp's; USR,
// OS, E, INT, INV and CMASK, at the P6's bits, are counting::evtsel's.
inline constexpr std::uint64_t kAnyThread = 1ULL << 21;  // v3+, unless deprecated
// 63:32: reserved. The model-specific bits there (IN_TX 32, IN_TXCP 33, adaptive PEBS 34) belong
// to parts with TSX / PEBS, which the model does not have [U].
inline constexpr std::uint64_t kSelHigh = 0xFFFFFFFF00000000ULL;
// EQ (bit 36) and UMASK2 (bits 47:40), which Intel's lists give events of its newest cores
// (docs/hardware/archperf.md 3.1a): accepted from version 5. UMASK2 is part of the signal the
// select reads (raw.0xVVUUEE); EQ is held, not interpreted (CMASK compares >=) [U].
inline constexpr std::uint64_t kSelEqUmask2 = (1ULL << 36) | (0xFFULL << 40);
// The extra MSRs model-specific events need (docs/hardware/archperf.md 3.1a: offcore response
// 1A6H/1A7H, load latency 3F6H, frontend 3F7H; 3E0H-3E3H of Intel's newest lists): the model holds
// what is written and reads it back. The offcore-response selects count by 1A6H/1A7H (their
// signal is qualified by the value, offcore_msr()); the others do not count by theirs [U].
inline bool extra_msr(std::uint32_t msr) {
  return msr == 0x1A6 || msr == 0x1A7 || msr == 0x3F6 || msr == 0x3F7 || (msr >= 0x3E0 && msr <= 0x3E3);
}

inline constexpr std::uint32_t kOffcoreRsp0 = 0x1A6;
inline constexpr std::uint32_t kOffcoreRsp1 = 0x1A7;
// The MSR an offcore-response event select reads (0: the select is not one), unit mask 01H
// [3.1a: "the first code of a pair uses 0x1A6, the second 0x1A7"]: B7H/BBH (Nehalem to Ice Lake,
// the Atoms) and 2AH/2BH (Golden Cove on), from version 3 (Nehalem) on; before it, 2AH/2BH are
// other events (Core 2's L2_ST, L2_LOCK) [U]. The Atom lists' unit mask 02H for 1A7H is not
// modelled: B7H/02H is another event on Sapphire Rapids (EXE.AMX_BUSY) [U].
inline std::uint32_t offcore_msr(unsigned version, unsigned event, unsigned umask) {
  if (version < 3 || umask != 0x01) return 0;
  if (event == 0xB7 || event == 0x2A) return kOffcoreRsp0;
  if (event == 0xBB || event == 0x2B) return kOffcoreRsp1;
  return 0;
}
// The first select of an offcore pair, whose name the pair's signals carry: BBH -> B7H, 2BH -> 2AH.
inline unsigned offcore_first(unsigned event) { return event == 0xBB ? 0xB7 : event == 0x2B ? 0x2A : event; }

// IA32_FIXED_CTR_CTRL: one 4-bit block per fixed counter [3].
inline constexpr unsigned kBlockBits = 4;
inline constexpr std::uint64_t kFixedOs = 0x1;
inline constexpr std::uint64_t kFixedUsr = 0x2;
inline constexpr std::uint64_t kFixedAnyThread = 0x4;
inline constexpr std::uint64_t kFixedPmi = 0x8;

// IA32_PERF_GLOBAL_CTRL / STATUS [3].
inline constexpr unsigned kFixedBit0 = 32;  // bit 32 + i: fixed counter i
inline constexpr unsigned kPerfMetricsBit = 48;
inline constexpr unsigned kTraceToPaPmiBit = 55;
inline constexpr unsigned kLbrFrzBit = 58;
inline constexpr unsigned kCtrFrzBit = 59;
inline constexpr unsigned kAsciBit = 60;
inline constexpr unsigned kOvfUncoreBit = 61;
inline constexpr unsigned kOvfBufBit = 62;
inline constexpr unsigned kCondChgdBit = 63;
inline constexpr std::uint64_t kCtrFrz = 1ULL << kCtrFrzBit;
// IA32_PERF_GLOBAL_INUSE: PMI_InUse. The sheet's source prints "[bit 32]", a typo (bit 32 is
// FC0_InUse); bit 63 is the believed position [3, U].
inline constexpr std::uint64_t kPmiInUse = 1ULL << 63;

// IA32_PERF_CAPABILITIES [3].
inline constexpr std::uint64_t kFwWrite = 1ULL << 13;

// RDPMC ECX [5]: ECX[31:16] is the counter type, ECX[15:0] the index.
inline constexpr std::uint32_t kRdpmcFixedType = 0x4000;  // bit 30
inline constexpr std::uint32_t kRdpmcMetrics = 1U << 29;
inline constexpr std::uint32_t kRdpmcFast = 1U << 31;

inline constexpr std::uint32_t kPerfMetricsMsr = 0x329;
inline constexpr std::uint32_t kDebugCtlMsr = 0x1D9;
// IA32_DEBUGCTL bit 12, FREEZE_PERFMON_ON_PMI [2, 4a].
inline constexpr std::uint64_t kFreezePerfmonOnPmi = 1ULL << 12;

// How many PMC / PERFEVTSEL / A_PMC addresses a fault message names whatever the CPU (IA32_PMC0..7
// etc.); beyond that only the CPU's own counters are named (0x1A0, for one, is IA32_MISC_ENABLE,
// not IA32_PERFEVTSEL26).
inline constexpr unsigned kNamedGp = 8;

inline std::string gp_register(std::string_view prefix, unsigned i) { return fmt::format("{}{}", prefix, i); }

}  // namespace pmc::sim::archperf
