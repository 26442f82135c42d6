// What the tests of the architectural PMU device model (test_archperf_model.cpp and the
// test_archperf_model_<topic>.cpp beside it) share: the MSRs, fields and architectural events of
// docs/hardware/archperf.md (section numbers in brackets), a CPU described by its leaf 0AH fields
// (Geo), the bundled Core 2 and Ice Lake dumps, segments, and the checks of errors and #GPs.
#pragma once

#include "support/model_checks.hpp"

#include <boost/test/unit_test.hpp>

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "archperf_model.hpp"  // ArchPerfDevice (pmcmodel_archperf)

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace archperf_model_test {

using pmc::errc;
using pmc::Device;
using pmc::Mode;
using pmc::Segment;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t PMC0 = 0xC1, PERFEVTSEL0 = 0x186, A_PMC0 = 0x4C1, FIXED_CTR0 = 0x309,
                        PERF_CAPABILITIES = 0x345, FIXED_CTR_CTRL = 0x38D,
                        GLOBAL_STATUS = 0x38E, GLOBAL_CTRL = 0x38F, GLOBAL_OVF_CTRL = 0x390,
                        GLOBAL_STATUS_SET = 0x391, GLOBAL_INUSE = 0x392;
constexpr std::uint32_t ia32_pmc(unsigned i) { return PMC0 + i; }
constexpr std::uint32_t evtsel(unsigned i) { return PERFEVTSEL0 + i; }
constexpr std::uint32_t a_pmc(unsigned i) { return A_PMC0 + i; }
constexpr std::uint32_t fixed_ctr(unsigned i) { return FIXED_CTR0 + i; }

// PERFEVTSEL fields [3].
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, E = 1ULL << 18, PC = 1ULL << 19,
              INT = 1ULL << 20, ANY = 1ULL << 21, EN = 1ULL << 22, INV = 1ULL << 23;
constexpr u64 umask(u64 m) { return m << 8; }
constexpr u64 cmask(u64 c) { return c << 24; }
// FIXED_CTR_CTRL blocks [3].
constexpr u64 F_OS = 0x1, F_USR = 0x2, F_ANY = 0x4, F_PMI = 0x8;
constexpr u64 fixed_ctrl(unsigned i, u64 block) { return block << (4 * i); }
// GLOBAL_CTRL / STATUS bits [3].
constexpr u64 bit(unsigned n) { return 1ULL << n; }
constexpr u64 fixed_bit(unsigned i) { return bit(32 + i); }
constexpr u64 CTR_FRZ = bit(59);

// Architectural events [7a] as event | umask.
constexpr u64 CORE_CYCLES = 0x3C, INSTRUCTIONS = 0xC0, REF_CYCLES = umask(0x01) | 0x3C,
              LLC_REFERENCES = umask(0x4F) | 0x2E, LLC_MISSES = umask(0x41) | 0x2E,
              BRANCHES = 0xC4, BRANCH_MISSES = 0xC5, TOPDOWN_SLOTS = umask(0x01) | 0xA4,
              TOPDOWN_RETIRING = umask(0x02) | 0xC2;

constexpr u64 TWO31 = 1ULL << 31, TWO40 = 1ULL << 40, TWO47 = 1ULL << 47, TWO48 = 1ULL << 48;

// A CPU described by its leaf 0AH fields [1] (and CPUID.1:ECX[15], PDCM).
struct Geo {
  unsigned version = 4;
  unsigned gp = 4;
  unsigned gp_width = 48;
  unsigned fixed = 3;
  unsigned fixed_width = 48;
  std::uint32_t bitmap = 0;          // ECX
  bool anythread_deprecated = false; // EDX[15]
  bool pdcm = true;                  // CPUID.1:ECX[15]
  unsigned ebx_length = 7;           // EAX[31:24]
  std::uint32_t unavailable = 0;     // EBX
};

inline pmc::CpuInfo intel(const Geo& g) {
  pmc::CpuInfo cpu;
  cpu.vendor = "GenuineIntel";
  cpu.family = 6;
  cpu.model = 0x55;
  cpu.stepping = 4;
  cpu.signature = 0x50654;
  cpu.max_leaf = 0x16;
  cpu.source = "test";
  cpu.arch.version = g.version;
  cpu.arch.gp_counters = g.gp;
  cpu.arch.gp_width = g.gp_width;
  cpu.arch.ebx_length = g.ebx_length;
  cpu.arch.unavailable_events = g.unavailable;
  cpu.arch.fixed_bitmap = g.bitmap;
  cpu.arch.fixed_counters = g.fixed;
  cpu.arch.fixed_width = g.fixed_width;
  cpu.arch.anythread_deprecated = g.anythread_deprecated;
  cpu.raw.set(1, 0, pmc::CpuidRegs{0x50654, 0, g.pdcm ? (1U << 15) : 0U, 0});
  return cpu;
}

inline std::unique_ptr<Device> device(const Geo& g) {
  return std::make_unique<pmc::sim::ArchPerfDevice>(intel(g));
}

const std::filesystem::path kSource(PMC_SOURCE_DIR);

// The bundled dumps: Core 2 Duo E6600 (v2, 2 x 40-bit GP, EDX = 0, PDCM) and Core i7-1065G7
// Ice Lake (v5, 8 x 48-bit GP, 4 x 48-bit fixed, ECX = 0xF, AnyThread deprecated, PDCM).
inline pmc::CpuInfo core2_cpu() { return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "core2.txt"); }
inline pmc::CpuInfo icelake_cpu() {
  return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "intel-icelake.txt");
}
inline std::unique_ptr<Device> core2() { return std::make_unique<pmc::sim::ArchPerfDevice>(core2_cpu()); }
inline std::unique_ptr<Device> icelake() { return std::make_unique<pmc::sim::ArchPerfDevice>(icelake_cpu()); }

using pmc_test::seg;  // tests/support/model_checks.hpp

using pmc_test::throws;

// A register access that must be a #GP naming the address (and more).
template <class F>
bool gp_fault(F&& f, std::initializer_list<std::string> fragments) {
  return throws(std::forward<F>(f), errc::register_fault, fragments);
}

inline bool readable(Device& d, std::uint32_t msr) {
  try {
    (void)d.read(msr);
    return true;
  } catch (const pmc::Error&) {
    return false;
  }
}

}  // namespace archperf_model_test
