#define BOOST_TEST_MODULE amd_pmi
#include <boost/test/unit_test.hpp>

// The AMD model's overflow interrupts against docs/hardware/amd.md section 4a: INT (PERF_CTL
// bit 20), the 48-bit counter's overflow (bit 47 clearing after a negative preset), PerfMonV2's
// PerfCntrGlobalStatus (C000_0300H) and PerfCntrGlobalStatusClr (C000_0302H), LVTPC (not masked
// on delivery on PerfMonV2 parts) and the simulated PMI handler of docs/profiling.md. Expected
// values are worked out by hand in the comments.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include "amd_model.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace {

using u64 = std::uint64_t;
using pmc::Mode;
using pmc::sim::AmdDevice;

constexpr std::uint32_t PERF_CTL0 = 0xC0010200, PERF_CTR0 = 0xC0010201, PerfEvtSel0 = 0xC0010000,
                        PerfCtr0 = 0xC0010004;
constexpr std::uint32_t GlobalStatus = 0xC0000300, GlobalCtl = 0xC0000301, GlobalStatusClr = 0xC0000302;
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, INT = 1ULL << 20, EN = 1ULL << 22, INSTRUCTIONS = 0x0C0;
constexpr u64 TWO47 = 1ULL << 47, TWO48 = 1ULL << 48;

constexpr std::uint32_t LVTPC = 0xFEE00340;
constexpr u64 MASKED = 1ULL << 16, NMI = 0x400;
constexpr std::uint32_t HANDLER = 0x50000000, KERNEL = 0x50000004, USER = 0x50000005, RELOAD0 = 0x50000100,
                        RELOADS0 = 0x50000200;

pmc::CpuInfo dump_cpu(const std::string& file) {
  return pmc::load_cpuid_dump(std::filesystem::path(PMC_SOURCE_DIR) / "data" / "cpuid" / file);
}

pmc::OwnedSegment seg(u64 cycles, u64 instructions, Mode mode = Mode::user) {
  pmc::OwnedSegment s(cycles, mode);
  s.signal("instructions", instructions);
  return s;
}

}  // namespace

// Zen 4 (PerfMonV2): counter 0 preset to -10 (a sign-extended 64-bit write) with INT counts 25
// instructions: it wraps once, to 15 (bit 47 went from 1 to 0), sets GlobalStatus bit 0 and
// raises one PMI. The PMI does not mask LVTPC on this part. StatusClr bit 0 clears the bit.
BOOST_AUTO_TEST_CASE(perfmon_v2_status_and_clear) {
  AmdDevice d(dump_cpu("amd-zen4-genoa.txt"));
  BOOST_REQUIRE(d.perfmon_v2());
  d.write(LVTPC, NMI);
  d.write(GlobalCtl, 0);
  d.write(PERF_CTR0, ~u64{9});  // -10
  BOOST_TEST(d.read(PERF_CTR0) == TWO48 - 10);
  BOOST_TEST((d.read(PERF_CTR0) & TWO47) != 0u);
  d.write(PERF_CTL0, EN | USR | INT | INSTRUCTIONS);
  d.write(GlobalCtl, 1);
  d.run(seg(25, 1));
  BOOST_TEST(d.read(PERF_CTR0) == 15u);
  BOOST_TEST((d.read(PERF_CTR0) & TWO47) == 0u);
  BOOST_TEST(d.read(GlobalStatus) == 1u);
  BOOST_TEST(d.interrupts() == 1u);
  BOOST_TEST(d.read(LVTPC) == NMI);
  d.write(GlobalStatusClr, 1);
  BOOST_TEST(d.read(GlobalStatus) == 0u);
}

// A K8 (no PerfMonV2): no status register; the delivered PMI masks LVTPC.
BOOST_AUTO_TEST_CASE(legacy_overflow_masks_lvtpc) {
  AmdDevice d(dump_cpu("amd-k8-revf.txt"));
  BOOST_REQUIRE(!d.perfmon_v2());
  d.write(LVTPC, NMI);
  d.write(PerfCtr0, TWO48 - 1);
  d.write(PerfEvtSel0, EN | USR | INT | INSTRUCTIONS);
  d.run(seg(2, 1));
  BOOST_TEST(d.read(PerfCtr0) == 1u);
  BOOST_TEST(d.interrupts() == 1u);
  BOOST_TEST(d.read(LVTPC) == (NMI | MASKED));
  BOOST_CHECK_THROW(d.read(GlobalStatus), pmc::Error);
}

// The handler with RELOAD = 2^48 - 10: 25 user instructions overflow at the 10th and 20th (2
// user samples, counter 2^48 - 10 + 5), then 7 kernel cycles of 3 (21) at the 5th and 15th (2
// kernel samples, counter 2^48 - 10 + 6). GlobalStatus stays clear: the handler clears it.
BOOST_AUTO_TEST_CASE(the_handler_reloads_and_samples) {
  AmdDevice d(dump_cpu("amd-zen4-genoa.txt"));
  d.write(LVTPC, NMI);
  d.write(HANDLER, 1);
  d.write(RELOAD0, TWO48 - 10);
  d.write(PERF_CTR0, TWO48 - 10);
  d.write(PERF_CTL0, EN | USR | OS | INT | INSTRUCTIONS);
  d.run(seg(25, 1));
  BOOST_TEST(d.read(PERF_CTR0) == TWO48 - 5);
  BOOST_TEST(d.read(USER) == 2u);
  d.run(seg(7, 3, Mode::kernel));
  BOOST_TEST(d.read(KERNEL) == 2u);
  BOOST_TEST(d.read(PERF_CTR0) == TWO48 - 4);
  BOOST_TEST(d.read(RELOADS0) == 4u);
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  BOOST_TEST(d.interrupts() == 4u);
}
