#define BOOST_TEST_MODULE archperf_model
#include <boost/test/unit_test.hpp>

// The architectural PMU device model (versions 1-5) against docs/hardware/archperf.md. Every
// expected value below is worked out by hand from the fact sheet (section numbers in brackets;
// "item N" is section 8, "Behaviours worth a test"), never taken from a run of the model.
// Policies the sheet leaves open ([U]) are the ones sim/models/archperf/archperf_model.hpp lists.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "archperf_model.hpp"  // ArchPerfDevice (pmcmodel_archperf)
#include "session_impl.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

namespace {

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

pmc::CpuInfo intel(const Geo& g) {
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

std::unique_ptr<Device> device(const Geo& g) {
  return std::make_unique<pmc::sim::ArchPerfDevice>(intel(g));
}

const std::filesystem::path kSource(PMC_SOURCE_DIR);

// The bundled dumps: Core 2 Duo E6600 (v2, 2 x 40-bit GP, EDX = 0, PDCM) and Core i7-1065G7
// Ice Lake (v5, 8 x 48-bit GP, 4 x 48-bit fixed, ECX = 0xF, AnyThread deprecated, PDCM).
pmc::CpuInfo core2_cpu() { return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "core2.txt"); }
pmc::CpuInfo icelake_cpu() {
  return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "intel-icelake.txt");
}
std::unique_ptr<Device> core2() { return std::make_unique<pmc::sim::ArchPerfDevice>(core2_cpu()); }
std::unique_ptr<Device> icelake() { return std::make_unique<pmc::sim::ArchPerfDevice>(icelake_cpu()); }

pmc::OwnedSegment seg(u64 cycles, std::initializer_list<std::pair<const char*, u64>> signals,
                      Mode mode = Mode::user, bool halted = false) {
  pmc::OwnedSegment s(cycles, mode);
  s->halted = halted;
  for (const auto& [name, k] : signals) s.signal(name, k);
  return s;
}

// True when f() throws pmc::Error of `code` whose message contains every fragment.
template <class F>
bool throws(F&& f, errc code, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST_MESSAGE("error: " << e.what());
    if (e.kind() != code) return false;
    const std::string what = e.what();
    for (const auto& fragment : fragments)
      if (what.find(fragment) == std::string::npos) return false;
    return true;
  }
  return false;
}

// A register access that must be a #GP naming the address (and more).
template <class F>
bool gp_fault(F&& f, std::initializer_list<std::string> fragments) {
  return throws(std::forward<F>(f), errc::register_fault, fragments);
}

bool readable(Device& d, std::uint32_t msr) {
  try {
    (void)d.read(msr);
    return true;
  } catch (const pmc::Error&) {
    return false;
  }
}

}  // namespace

// =============================================================================================
BOOST_AUTO_TEST_SUITE(geometry)

// The device a session gets is the model plugin's, found by name (Context::make_device); an
// unknown name is not_found naming it and where model plugins were looked for.
BOOST_AUTO_TEST_CASE(make_device_knows_archperf) {
  auto d = device({});
  BOOST_TEST(d->name() == "archperf");
  BOOST_TEST(pmc_test::plugin_device("archperf", intel({})).device->name() == "archperf");
  BOOST_TEST(throws([] { (void)pmc_test::plugin_device("archperf2", intel({})); }, errc::not_found,
                    {"'archperf2'", "not installed", PMC_PLUGIN_DIR}));
}

// Version 0 has no architectural PMU [1]: the model refuses the CPU, naming it.
BOOST_AUTO_TEST_CASE(version_0_is_not_supported) {
  BOOST_TEST(throws([] { (void)device({.version = 0}); }, errc::not_supported,
                    {"GenuineIntel family 6 model 85 stepping 4", "CPUID.0AH:EAX[7:0] = 0"}));
  // A bundled dump without leaf 0AH: the Pentium III.
  BOOST_TEST(throws(
      [] {
        (void)std::make_unique<pmc::sim::ArchPerfDevice>(
            pmc::load_cpuid_dump(kSource / "data" / "cpuid" / "pentium-iii.txt"));
      },
      errc::not_supported, {"family 6 model 8", "architectural performance monitoring"}));
}

// [U] Geometries the register layouts cannot hold are refused.
BOOST_AUTO_TEST_CASE(impossible_geometries_are_not_supported) {
  BOOST_TEST(throws([] { (void)device({.gp = 33}); }, errc::not_supported, {"33"}));
  BOOST_TEST(throws([] { (void)device({.gp_width = 0}); }, errc::not_supported, {"0-bit"}));
  BOOST_TEST(throws([] { (void)device({.gp_width = 65}); }, errc::not_supported, {"65-bit"}));
  BOOST_TEST(throws([] { (void)device({.fixed_width = 72}); }, errc::not_supported, {"72-bit"}));
  BOOST_TEST(throws([] { (void)device({.version = 5, .fixed = 17}); }, errc::not_supported,
                    {"fixed counter 16"}));
  BOOST_TEST(throws([] { (void)device({.version = 5, .fixed = 0, .bitmap = bit(20)}); },
                    errc::not_supported, {"fixed counter 20"}));
  // Before version 5 ECX is reserved [1]: the same bitmap is ignored, no error.
  BOOST_TEST(readable(*device({.version = 4, .fixed = 3, .bitmap = bit(20)}), fixed_ctr(2)));
}

// Version 1 (Core Solo/Duo: 2 counters [6]): GP counters and event selects only. No fixed
// counters and no global MSRs (the sheet's recommendation for the [S-conflict] of [2]).
BOOST_AUTO_TEST_CASE(version_1) {
  auto d = device({.version = 1, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0,
                   .pdcm = false});
  for (std::uint32_t msr : {ia32_pmc(0), ia32_pmc(1), evtsel(0), evtsel(1)})
    BOOST_TEST(d->read(msr) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(2)); },
                      {"rdmsr", "0xc3", "IA32_PMC2", "2 general"}));
  BOOST_TEST(gp_fault([&] { d->write(evtsel(2), 0); }, {"wrmsr", "0x188", "IA32_PERFEVTSEL2"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(0)); },
                      {"0x309", "version 1 has no fixed counters"}));
  for (std::uint32_t msr : {FIXED_CTR_CTRL, GLOBAL_STATUS, GLOBAL_CTRL, GLOBAL_OVF_CTRL}) {
    BOOST_TEST(gp_fault([&] { (void)d->read(msr); }, {"rdmsr", "version 1"}), msr);
    BOOST_TEST(gp_fault([&] { d->write(msr, 0); }, {"wrmsr", "version 1"}), msr);
  }
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_CTRL); }, {"0x38f", "IA32_PERF_GLOBAL_CTRL"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_STATUS_SET); }, {"0x391", "version 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_INUSE); }, {"0x392", "version 4"}));
  // No PDCM: no IA32_PERF_CAPABILITIES and no A_PMC.
  BOOST_TEST(gp_fault([&] { (void)d->read(PERF_CAPABILITIES); }, {"0x345", "PDCM"}));
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(0), 1); }, {"0x4c1", "CPUID.1:ECX[15] = 0"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000000); }, {"RDPMC", "fixed counter 0"}));
  // AnyThread is reserved before version 3 [3].
  BOOST_TEST(gp_fault([&] { d->write(evtsel(0), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL0", "bit 21", "version 3"}));
}

// Version 2 with its EDX data (an Atom-like part): three fixed counters, global MSRs, no 0x391/
// 0x392 (version 4), no AnyThread (version 3).
BOOST_AUTO_TEST_CASE(version_2) {
  auto d = device({.version = 2, .gp = 2, .gp_width = 40, .fixed = 3, .fixed_width = 40});
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "IA32_FIXED_CTR3", "fixed counters are 0, 1, 2"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0u);
  BOOST_TEST(d->read(GLOBAL_OVF_CTRL) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS_SET, 1); }, {"0x391", "version 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(GLOBAL_INUSE); }, {"0x392", "version 4"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, F_ANY); },
                      {"IA32_FIXED_CTR_CTRL", "bit 2", "version 3"}));
  d->write(FIXED_CTR_CTRL, 0xBBB);  // OS | USR | PMI for counters 0..2
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0xBBBu);
  // PDCM and version 2: PERF_CAPABILITIES with FW_WRITE [U].
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0x2000u);
  BOOST_TEST(d->read(a_pmc(1)) == 0u);
}

// The Core 2 quirk [1, U]: version 2 with EDX = 0. The hardware has FIXED_CTR0..2, as wide as
// the GP counters (40 bits); the bundled Core 2 dump decodes with 0 fixed counters.
BOOST_AUTO_TEST_CASE(version_2_core2_quirk_from_the_bundled_dump) {
  const pmc::CpuInfo cpu = core2_cpu();
  BOOST_TEST(cpu.arch.version == 2u);
  BOOST_TEST(cpu.arch.fixed_counters == 0u);
  BOOST_TEST(cpu.arch.fixed_width == 0u);
  auto d = core2();
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(d->read(fixed_ctr(i)) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(2)); }, {"0xc3"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3u);
  d->write(GLOBAL_CTRL, 0x700000003ULL);  // the three fixed enables exist
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x700000003u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(3)); }, {"bit 35"}));
  // Fixed width 40: 2^40 - 1 fits, bit 40 does not [4].
  d->write(fixed_ctr(1), TWO40 - 1);
  BOOST_TEST(d->read(fixed_ctr(1)) == TWO40 - 1);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(1), TWO40); },
                      {"IA32_FIXED_CTR1", "bit 40", "40-bit"}));
  // GP writes sign-extend bit 31 into 40 bits [4].
  d->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFF80000000u);
  // PDCM is set in the dump: PERF_CAPABILITIES with FW_WRITE [U], and A_PMC0/1.
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0x2000u);
  d->write(a_pmc(1), 0x123456789AULL);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0x123456789Au);
  // The fixed counters count: cycles on FIXED_CTR1 in user mode.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR));
  d->write(fixed_ctr(1), 0);
  d->run(seg(1000, {{"instructions", 2}}));
  BOOST_TEST(d->read(fixed_ctr(1)) == 1000u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // field 0: disabled
}

// The quirk is version 2's only: a version-3 CPUID with EDX = 0 (a hypervisor) has none [U].
BOOST_AUTO_TEST_CASE(quirk_applies_to_version_2_only) {
  auto d = device({.version = 3, .fixed = 0, .fixed_width = 0});
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(0)); }, {"0x309", "no fixed counters"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(0)); }, {"bit 32"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, F_OS); }, {"bit 0"}));
}

// Version 4 (Skylake-like): 0x391 and 0x392 exist, AnyThread allowed (not deprecated).
BOOST_AUTO_TEST_CASE(version_4) {
  auto d = device({});
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFu);
  BOOST_TEST(d->read(GLOBAL_STATUS_SET) == 0u);
  BOOST_TEST(d->read(GLOBAL_INUSE) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(4)); }, {"0xc5", "4 general"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(a_pmc(4)); }, {"0x4c5", "IA32_A_PMC4"}));
  d->write(evtsel(3), ANY | EN | USR | INSTRUCTIONS);
  BOOST_TEST(d->read(evtsel(3)) == (ANY | EN | USR | INSTRUCTIONS));
  d->write(FIXED_CTR_CTRL, 0xFFF);
  BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0xFFFu);
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, 0xF000); },
                      {"bit 12", "fixed counter 3 does not exist"}));
}

// Item 13: v5, EDX[4:0] = 1 and ECX = 0b101: fixed counters 0 and 2 exist, 1 does not.
BOOST_AUTO_TEST_CASE(item13_v5_fixed_bitmap_with_a_hole) {
  auto d = device({.version = 5, .fixed = 1, .bitmap = 0b101, .anythread_deprecated = true});
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(1)); },
                      {"0x30a", "IA32_FIXED_CTR1", "fixed counters are 0, 2"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(1), 0); }, {"wrmsr", "0x30a"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(3), 0); }, {"0x30c"}));
  BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR)); },
                      {"bit 5", "fixed counter 1 does not exist"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(1)); },
                      {"bit 33", "fixed counter 1"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000001); }, {"fixed counter 1"}));
  // 0 and 2 count: instructions and reference cycles.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR | F_OS) | fixed_ctrl(2, F_USR));
  d->write(GLOBAL_CTRL, fixed_bit(0) | fixed_bit(2));
  d->run(seg(100, {{"instructions", 3}}));
  d->run(seg(10, {{"instructions", 1}}, Mode::kernel));
  BOOST_TEST(d->read(fixed_ctr(0)) == 310u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 100u);  // user only; ref-cycles = cycles [U]
  BOOST_TEST(d->rdpmc(0x40000002) == 100u);
  // A bitmap beyond EDX with no EDX width: the fixed counters take the GP width [U].
  auto b = device({.version = 5, .gp_width = 40, .fixed = 0, .fixed_width = 0, .bitmap = 0b1000});
  BOOST_TEST(gp_fault([&] { (void)b->read(fixed_ctr(0)); }, {"fixed counters are 3"}));
  b->write(fixed_ctr(3), TWO40 - 1);
  BOOST_TEST(gp_fault([&] { b->write(fixed_ctr(3), TWO40); }, {"bit 40"}));
}

BOOST_AUTO_TEST_CASE(version_5_icelake_from_the_bundled_dump) {
  auto d = icelake();
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFFu);  // 8 GP counters
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(readable(*d, ia32_pmc(i)));
  BOOST_TEST(!readable(*d, ia32_pmc(8)));
  for (unsigned i = 0; i < 4; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(!readable(*d, fixed_ctr(4)));
  // FW_WRITE (13) and, Ice Lake being a top-down part (section 12), PERF_METRICS (15).
  BOOST_TEST(d->read(PERF_CAPABILITIES) == 0xA000u);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xF000000FFu);
  d->write(GLOBAL_CTRL, 0xF000000FFULL | bit(48));  // EN_PERF_METRICS exists
  BOOST_TEST(d->read(GLOBAL_CTRL) == (0xF000000FFULL | bit(48)));
  BOOST_TEST(d->read(0x329) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(49)); }, {"bit 49"}));
  // 48-bit counters.
  d->write(fixed_ctr(3), TWO48 - 1);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(3), TWO48); }, {"bit 48"}));
}

// [U] Versions above 5 follow the version-5 rules (the bitmap is honoured).
BOOST_AUTO_TEST_CASE(version_6_is_modelled_as_5) {
  auto d = device({.version = 6, .fixed = 0, .fixed_width = 48, .bitmap = 0b10});
  BOOST_TEST(readable(*d, fixed_ctr(1)));
  BOOST_TEST(!readable(*d, fixed_ctr(0)));
  BOOST_TEST(readable(*d, GLOBAL_INUSE));
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// CPUID leaf 23H: hybrid parts, whose core types each have their own counters. The fact sheet
// does not describe leaf 23H, so every rule tested here is a [U] policy of the model
// (sim/models/archperf/archperf_model.hpp, "CPUID leaf 23H"): 23H counts when CPUID.0:EAX >= 23H,
// CPUID.(7,1):EAX[8] = 1 and CPUID.23H.0:EAX[1] = 1; then sub-leaf 1 EAX is the general-purpose
// counter bitmap and EBX the fixed one, replacing leaf 0AH's counts; widths stay leaf 0AH's.
namespace {

struct Leaf23 {
  std::uint32_t gp = 0;          // CPUID.23H.1:EAX
  std::uint32_t fixed = 0;       // CPUID.23H.1:EBX
  std::uint32_t max_leaf = 0x23; // CPUID.0:EAX
  std::uint32_t leaf7_top = 1;   // CPUID.(7,0):EAX: the highest sub-leaf of leaf 7
  bool announced = true;         // CPUID.(7,1):EAX[8]
  std::uint32_t subleaves = 0x3; // CPUID.23H.0:EAX: sub-leaves 0 and 1
  bool has_subleaf1 = true;      // the CpuInfo holds CPUID.23H.1
};

pmc::CpuInfo hybrid(const Geo& g, const Leaf23& l) {
  pmc::CpuInfo cpu = intel(g);
  cpu.max_leaf = l.max_leaf;
  cpu.hybrid = true;
  cpu.raw.set(7, 0, pmc::CpuidRegs{l.leaf7_top, 0, 0, 1U << 15});  // EDX[15]: hybrid
  cpu.raw.set(7, 1, pmc::CpuidRegs{l.announced ? (1U << 8) : 0U, 0, 0, 0});
  cpu.raw.set(0x23, 0, pmc::CpuidRegs{l.subleaves, 0, 0, 0});
  if (l.has_subleaf1) cpu.raw.set(0x23, 1, pmc::CpuidRegs{l.gp, l.fixed, 0, 0});
  return cpu;
}

std::unique_ptr<Device> hybrid_device(const Geo& g, const Leaf23& l) {
  return std::make_unique<pmc::sim::ArchPerfDevice>(hybrid(g, l));
}

pmc::CpuInfo test_dump(const char* name) {
  return pmc::load_cpuid_dump(std::filesystem::path(PMC_TEST_DATA) / "cpuid" / name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cpuid_23h)

// tests/data/cpuid/archperf-hybrid-mtl.txt (Meteor Lake, read on an E-core), by hand from its
// bytes:
//   leaf 0     EAX = 0x00000023            -> maximum basic leaf 23H: leaf 23H can be read;
//   leaf 7.1   EAX = 0x00200910            -> 0x910 = bits 4, 8, 11: bit 8 set, leaf 23H exists;
//   leaf 23H.0 EAX = 0x00000003            -> bits 0, 1: sub-leaf 1 exists;
//   leaf 23H.1 EAX = 0x000000FF            -> general-purpose counters 0-7 (eight);
//              EBX = 0x00000007            -> fixed counters 0, 1, 2 (no FIXED_CTR3);
//   leaf 0AH   EAX = 0x07300605            -> version 5, EAX[15:8] = 6 counters (replaced by
//                                             23H's eight), EAX[23:16] = 0x30 = 48 bits,
//                                             EAX[31:24] = 7 events;
//              ECX = 0x00000007, EDX = 0x00008603 -> EDX[4:0] = 3, EDX[12:5] = 0x8603 >> 5 =
//                                             0x430, & 0xFF = 0x30 = 48 bits, EDX[15] = 1
//                                             (AnyThread deprecated); replaced by 23H's EBX;
//   leaf 1     ECX = 0x7FFEFBFF            -> bit 15 (0xFBFF: 1111 1011 1111 1111) set: PDCM,
//                                             so IA32_PERF_CAPABILITIES with FW_WRITE [U] and
//                                             IA32_A_PMC0-7 at 0x4C1-0x4C8.
// So: IA32_PMC0-7 (0xC1-0xC8), IA32_PERFEVTSEL0-7 (0x186-0x18D), 48 bits wide; GLOBAL_CTRL
// resets to 0xFF and accepts 0x7_0000_00FF; 0xC9 (IA32_PMC8) and 0x30C (FIXED_CTR3) #GP.
BOOST_AUTO_TEST_CASE(meteor_lake_e_core_counters_from_cpuid_23h) {
  const pmc::CpuInfo cpu = test_dump("archperf-hybrid-mtl.txt");
  BOOST_TEST(cpu.arch.gp_counters == 6u);  // leaf 0AH alone would give six
  auto d = std::make_unique<pmc::sim::ArchPerfDevice>(cpu);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFFu);
  for (unsigned i = 0; i < 8; ++i) {
    BOOST_TEST(d->read(ia32_pmc(i)) == 0u, "PMC" << i);
    BOOST_TEST(d->read(evtsel(i)) == 0u, "PERFEVTSEL" << i);
    BOOST_TEST(d->read(a_pmc(i)) == 0u, "A_PMC" << i);
  }
  // Past IA32_PMC7 the model names counter MSRs only up to the last present counter (the [U]
  // rule of kNamedGp: 0xCE is not IA32_PMC13), so 0xC9 is an unimplemented MSR, as on Ice Lake;
  // absent counters below it are named with CPUID.23H (non_contiguous_bitmaps).
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(8)); }, {"rdmsr", "0xc9"}));
  BOOST_TEST(gp_fault([&] { d->write(evtsel(8), 0); }, {"wrmsr", "0x18e"}));
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(8), 0); }, {"wrmsr", "0x4c9"}));
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "IA32_FIXED_CTR3", "CPUID.23H says fixed counter 3 is absent",
                       "fixed counters are 0, 1, 2"}));
  d->write(GLOBAL_CTRL, 0x7000000FFULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x7000000FFu);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(8)); },
                      {"bit 8", "CPUID.23H says general-purpose counter 8 is absent"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(3)); },
                      {"bit 35", "CPUID.23H says fixed counter 3 is absent"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(8); }, {"RDPMC", "general-purpose counter 8"}));
  // AnyThread is deprecated (EDX[15] = 1) on the counters 23H adds too.
  BOOST_TEST(gp_fault([&] { d->write(evtsel(7), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL7", "bit 21", "deprecated"}));

  // PMC6 and PMC7 (the two leaf 0AH does not report) count and overflow like the others.
  d->write(evtsel(6), EN | USR | BRANCHES);
  d->write(evtsel(7), EN | USR | OS | INT | INSTRUCTIONS);
  d->write(a_pmc(7), TWO48 - 100);  // 100 instructions to the 48-bit wrap
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(7), TWO48); }, {"IA32_A_PMC7", "bit 48"}));
  d->run(seg(50, {{"instructions", 3}, {"branches", 1}}));  // 150 instructions: wraps once
  BOOST_TEST(d->read(ia32_pmc(6)) == 50u);
  BOOST_TEST(d->read(ia32_pmc(7)) == 50u);  // 2^48 - 100 + 150 - 2^48
  BOOST_TEST(d->rdpmc(7) == 50u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(7));
  BOOST_TEST(d->interrupts() == 1u);
  d->write(GLOBAL_OVF_CTRL, bit(7));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(6) | bit(7) | bit(63)));  // INT on PMC7: PMI_InUse
}

// tests/data/cpuid/archperf-hybrid-adl.txt (Alder Lake, read on a P-core), by hand: leaf 0
// EAX = 0x20 (no leaf 23H to read) and leaf 7.1 EAX = 0x00400810 (bits 4, 11, 22: bit 8 clear).
// Leaf 0AH alone: EAX = 0x07300605 -> 6 general-purpose counters of 48 bits; ECX = 7,
// EDX[4:0] = 3 -> fixed counters 0-2. GLOBAL_CTRL resets to 0x3F; 0xC7 (IA32_PMC6) #GPs
// with leaf 0AH's message.
BOOST_AUTO_TEST_CASE(alder_lake_p_core_without_cpuid_23h_uses_leaf_0ah) {
  auto d = std::make_unique<pmc::sim::ArchPerfDevice>(test_dump("archperf-hybrid-adl.txt"));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x3Fu);
  for (unsigned i = 0; i < 6; ++i) BOOST_TEST(readable(*d, ia32_pmc(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(6)); },
                      {"0xc7", "IA32_PMC6", "this PMU has 6 general-purpose counters"}));
  BOOST_TEST(!throws([&] { (void)d->read(ia32_pmc(6)); }, errc::register_fault, {"CPUID.23H"}));
  for (unsigned i = 0; i < 3; ++i) BOOST_TEST(readable(*d, fixed_ctr(i)));
  BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(3)); },
                      {"0x30c", "fixed counters are 0, 1, 2"}));
}

// [U] The gate: 23H replaces leaf 0AH's four counters (GLOBAL_CTRL reset 0xF) only when all
// announcements hold. 23H.1 here says two general counters (EAX = 0b11, reset 0x3) and fixed
// counter 0 only (EBX = 1).
BOOST_AUTO_TEST_CASE(cpuid_23h_counts_only_when_announced) {
  const Leaf23 l{.gp = 0x3, .fixed = 0x1};
  auto used = hybrid_device({}, l);
  BOOST_TEST(used->read(GLOBAL_CTRL) == 0x3u);
  BOOST_TEST(!readable(*used, ia32_pmc(2)));
  BOOST_TEST(!readable(*used, fixed_ctr(1)));
  struct Case {
    const char* what;
    Leaf23 leaf;
  };
  Leaf23 low_max = l, not_announced = l, no_subleaf_bit = l, no_subleaf = l, no_leaf71 = l;
  low_max.max_leaf = 0x22;      // leaf 23H beyond CPUID.0:EAX (the table still holds it)
  no_leaf71.leaf7_top = 0;      // sub-leaf (7,1) beyond CPUID.(7,0):EAX (the table still holds it)
  not_announced.announced = false;
  no_subleaf_bit.subleaves = 0x1;  // 23H.0:EAX[1] = 0
  no_subleaf.has_subleaf1 = false;
  for (const Case& c : {Case{"CPUID.0:EAX = 22H", low_max},
                        Case{"CPUID.(7,1):EAX[8] = 0", not_announced},
                        Case{"CPUID.(7,0):EAX = 0", no_leaf71},
                        Case{"CPUID.23H.0:EAX[1] = 0", no_subleaf_bit},
                        Case{"no sub-leaf 1 in the CpuInfo", no_subleaf}}) {
    auto d = hybrid_device({}, c.leaf);
    BOOST_TEST(d->read(GLOBAL_CTRL) == 0xFu, c.what);  // leaf 0AH: four counters
    BOOST_TEST(readable(*d, ia32_pmc(3)), c.what);
    BOOST_TEST(readable(*d, fixed_ctr(2)), c.what);
    BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(4)); }, {"this PMU has 4 general"}),
               c.what);
  }
}

// [U] Bitmaps with holes. 23H.1 EAX = 0x2D = 0b10'1101: general-purpose counters 0, 2, 3, 5;
// EBX = 0x9 = 0b1001: fixed counters 0 and 3. Leaf 0AH (version 5, eight 48-bit general
// counters, fixed 0-2 through EDX[4:0] = 3 and ECX = 0x7) says otherwise and is ignored:
// PMC1, PMC4, PMC6, PMC7 and FIXED_CTR1/2 do not exist, FIXED_CTR3 does.
BOOST_AUTO_TEST_CASE(non_contiguous_bitmaps) {
  auto d = hybrid_device({.version = 5, .gp = 8, .fixed = 3, .bitmap = 0x7,
                          .anythread_deprecated = true},
                         {.gp = 0x2D, .fixed = 0x9});
  // Reset: EN_PMCi for every present i [U]: 0x2D.
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x2Du);
  for (unsigned i : {0U, 2U, 3U, 5U}) {
    BOOST_TEST(readable(*d, ia32_pmc(i)), i);
    BOOST_TEST(readable(*d, evtsel(i)), i);
    BOOST_TEST(readable(*d, a_pmc(i)), i);
  }
  for (unsigned i : {1U, 4U, 6U, 7U}) {
    const std::string absent = "CPUID.23H says general-purpose counter " + std::to_string(i) +
                               " is absent";
    BOOST_TEST(gp_fault([&] { (void)d->read(ia32_pmc(i)); },
                        {"rdmsr", "IA32_PMC" + std::to_string(i), absent, "0, 2, 3, 5"}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(ia32_pmc(i), 0); }, {"wrmsr", absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(evtsel(i), EN); },
                        {"IA32_PERFEVTSEL" + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(a_pmc(i), 0); },
                        {"IA32_A_PMC" + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { (void)d->rdpmc(i); }, {"RDPMC", absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(i)); },
                        {"bit " + std::to_string(i), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_OVF_CTRL, bit(i)); }, {absent}), i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS_SET, bit(i)); }, {absent}), i);
  }
  BOOST_TEST(readable(*d, fixed_ctr(0)));
  BOOST_TEST(readable(*d, fixed_ctr(3)));
  for (unsigned i : {1U, 2U}) {
    const std::string absent = "CPUID.23H says fixed counter " + std::to_string(i) + " is absent";
    BOOST_TEST(gp_fault([&] { (void)d->read(fixed_ctr(i)); },
                        {"IA32_FIXED_CTR" + std::to_string(i), absent, "fixed counters are 0, 3",
                         "CPUID.23H.1:EBX = 0x9"}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(FIXED_CTR_CTRL, fixed_ctrl(i, F_USR)); },
                        {"bit " + std::to_string(4 * i + 1), absent}),
               i);
    BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, fixed_bit(i)); }, {absent}), i);
    BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000000 | i); }, {"RDPMC", absent}), i);
  }
  BOOST_TEST(d->rdpmc(0x40000003) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(40); }, {"counter 40 is beyond CPUID.23H's bitmap"}));

  // Everything present counts: GP 0, 2, 3, 5 and fixed 0, 3, in 10 user cycles of 2
  // instructions, 1 branch and 4 slots.
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(evtsel(2), EN | USR | BRANCHES);
  d->write(evtsel(3), EN | USR | CORE_CYCLES);
  d->write(evtsel(5), EN | USR | INT | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR) | fixed_ctrl(3, F_USR | F_PMI));
  d->write(GLOBAL_CTRL, 0x2D | fixed_bit(0) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x90000002Du);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(2) | bit(3) | bit(5) | fixed_bit(0) |
                                       fixed_bit(3) | bit(63)));
  d->run(seg(10, {{"instructions", 2}, {"branches", 1}, {"slots", 4}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 20u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(5)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 40u);
  // Status bits of the present counters: set through 0x391 (v4+), cleared through 0x390.
  d->write(GLOBAL_STATUS_SET, bit(5) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(5) | fixed_bit(3)));
  d->write(GLOBAL_OVF_CTRL, bit(5) | fixed_bit(3));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
}

// [U] 23H replaces leaf 0AH's counts outright; widths and everything else stay leaf 0AH's.
BOOST_AUTO_TEST_CASE(cpuid_23h_replaces_leaf_0ah_counts) {
  // Version 2 with EDX[4:0] = 0 would get the Core 2 quirk's three fixed counters; with 23H
  // saying none (EBX = 0), there are none.
  auto v2 = hybrid_device({.version = 2, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0},
                          {.gp = 0x3, .fixed = 0});
  BOOST_TEST(gp_fault([&] { (void)v2->read(fixed_ctr(0)); },
                      {"0x309", "CPUID.23H says fixed counter 0 is absent", "no fixed counters"}));
  BOOST_TEST(v2->read(GLOBAL_CTRL) == 0x3u);
  // EAX[15:8] is not consulted: 40 counters there (beyond GLOBAL_CTRL) are no error when 23H
  // gives the bitmap; the width (EAX[23:16] = 40) still comes from leaf 0AH.
  auto many = hybrid_device({.gp = 40, .gp_width = 40}, {.gp = 0x1, .fixed = 0x1});
  many->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(many->read(ia32_pmc(0)) == 0xFF80000000u);  // sign-extended to 40 bits
  BOOST_TEST(!readable(*many, ia32_pmc(1)));
  // No general-purpose counter in leaf 0AH, one in 23H: it takes EAX[23:16] = 48 bits.
  auto none_in_0a = hybrid_device({.gp = 0}, {.gp = 0x1, .fixed = 0x1});
  none_in_0a->write(a_pmc(0), TWO48 - 1);
  BOOST_TEST(none_in_0a->read(ia32_pmc(0)) == TWO48 - 1);
  // A fixed width of 0 in EDX[12:5] with a 23H fixed counter: the GP width, as for the ECX
  // bitmap [U].
  auto no_fixed_width = hybrid_device({.version = 5, .gp_width = 40, .fixed = 0, .fixed_width = 0},
                                      {.gp = 0x1, .fixed = 0x4});
  no_fixed_width->write(fixed_ctr(2), TWO40 - 1);
  BOOST_TEST(gp_fault([&] { no_fixed_width->write(fixed_ctr(2), TWO40); }, {"bit 40"}));
  // A fixed counter beyond FIXED_CTR_CTRL's 16 blocks is refused, naming 23H.
  BOOST_TEST(throws([] { (void)hybrid_device({}, {.gp = 0x1, .fixed = bit(16) | 1}); },
                    errc::not_supported, {"CPUID.23H.1:EBX", "fixed counter 16"}));
  // Version 1 has no fixed counters whatever EBX says.
  auto v1 = hybrid_device({.version = 1, .gp = 2, .fixed = 0, .fixed_width = 0},
                          {.gp = 0x1, .fixed = 0x7});
  BOOST_TEST(gp_fault([&] { (void)v1->read(fixed_ctr(0)); }, {"version 1 has no fixed counters"}));
  BOOST_TEST(!readable(*v1, ia32_pmc(1)));
  // No counters at all in 23H.1: every counter MSR faults; GLOBAL_CTRL resets to 0.
  auto empty = hybrid_device({}, {.gp = 0, .fixed = 0});
  BOOST_TEST(empty->read(GLOBAL_CTRL) == 0u);
  BOOST_TEST(gp_fault([&] { (void)empty->read(ia32_pmc(0)); },
                      {"CPUID.23H says general-purpose counter 0 is absent", "are none"}));
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
BOOST_AUTO_TEST_SUITE(registers)

// Item 3: reset: GLOBAL_CTRL = (1 << N) - 1, fixed counters globally disabled; the rest zero.
BOOST_AUTO_TEST_CASE(item3_reset_values) {
  struct Case {
    unsigned gp;
    u64 ctrl;
  };
  for (const Case& c : {Case{1, 0x1}, Case{2, 0x3}, Case{4, 0xF}, Case{8, 0xFF},
                        Case{32, 0xFFFFFFFF}}) {
    auto d = device({.gp = c.gp});
    BOOST_TEST(d->read(GLOBAL_CTRL) == c.ctrl, "N = " << c.gp);
    BOOST_TEST(d->read(FIXED_CTR_CTRL) == 0u);
    BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
    for (unsigned i = 0; i < c.gp; ++i) {
      BOOST_TEST(d->read(ia32_pmc(i)) == 0u);
      BOOST_TEST(d->read(evtsel(i)) == 0u);
    }
  }
  // Consequence: a GP counter counts as soon as its EN is set; a fixed counter does not count
  // until GLOBAL_CTRL[32 + i] is set.
  auto d = device({});
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR));
  d->run(seg(100, {{"instructions", 2}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 200u);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
}

BOOST_AUTO_TEST_CASE(unimplemented_msrs_fault_naming_the_address) {
  auto d = device({});
  BOOST_TEST(gp_fault([&] { (void)d->read(0x10); }, {"rdmsr", "0x10", "not implemented"}));
  BOOST_TEST(gp_fault([&] { d->write(0x1A0, 0); }, {"wrmsr", "0x1a0", "not implemented"}));
  BOOST_TEST(gp_fault([&] { d->write(0x1D9, bit(0)); }, {"0x1d9", "IA32_DEBUGCTL", "bit 0"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(0xC0); }, {"0xc0"}));
  BOOST_TEST(gp_fault([&] { (void)d->read(0x393); }, {"0x393"}));
}

BOOST_AUTO_TEST_CASE(event_selects_read_back_and_reserved_bits_fault) {
  auto d = device({});  // v4: AnyThread writable
  d->write(evtsel(0), 0xFFFFFFFF);
  BOOST_TEST(d->read(evtsel(0)) == 0xFFFFFFFFu);
  d->write(evtsel(1), PC | E | INT | OS | USR | umask(0x34) | 0x56);
  BOOST_TEST(d->read(evtsel(1)) == 0x1F3456u);
  // 63:32 reserved (no TSX / PEBS bits in the model) [3, U]; a refused write changes nothing.
  for (unsigned b : {32U, 33U, 34U, 63U}) {
    BOOST_TEST(gp_fault([&] { d->write(evtsel(0), bit(b) | EN); },
                        {"IA32_PERFEVTSEL0", "0x186", "bit " + std::to_string(b), "63:32"}));
  }
  BOOST_TEST(d->read(evtsel(0)) == 0xFFFFFFFFu);
}

// Item 14: AnyThread with EDX[15] = 1 or version < 3 is rejected, in PERFEVTSEL (bit 21) and in
// FIXED_CTR_CTRL (bit 4i+2) [1, 3].
BOOST_AUTO_TEST_CASE(item14_anythread_rules) {
  auto ice = icelake();  // EDX[15] = 1
  BOOST_TEST(gp_fault([&] { ice->write(evtsel(5), ANY | EN | USR | INSTRUCTIONS); },
                      {"IA32_PERFEVTSEL5", "bit 21", "deprecated"}));
  BOOST_TEST(gp_fault([&] { ice->write(FIXED_CTR_CTRL, fixed_ctrl(3, F_ANY | F_USR)); },
                      {"IA32_FIXED_CTR_CTRL", "bit 14", "deprecated"}));
  ice->write(FIXED_CTR_CTRL, 0xBBBB);
  BOOST_TEST(ice->read(FIXED_CTR_CTRL) == 0xBBBBu);
  auto v2 = device({.version = 2});
  BOOST_TEST(gp_fault([&] { v2->write(evtsel(0), ANY); }, {"bit 21", "version 3"}));
  BOOST_TEST(gp_fault([&] { v2->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_ANY)); },
                      {"bit 6", "version 3"}));
  // Version 3 without deprecation accepts it; the model, one logical processor, counts the
  // same with and without it [U].
  auto v3 = device({.version = 3});
  v3->write(evtsel(0), ANY | EN | USR | INSTRUCTIONS);
  v3->write(evtsel(1), EN | USR | INSTRUCTIONS);
  v3->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_ANY | F_USR));
  v3->write(GLOBAL_CTRL, 0x3 | fixed_bit(0));
  v3->run(seg(10, {{"instructions", 4}}));
  BOOST_TEST(v3->read(ia32_pmc(0)) == 40u);
  BOOST_TEST(v3->read(ia32_pmc(1)) == 40u);
  BOOST_TEST(v3->read(fixed_ctr(0)) == 40u);
}

// Item 4: IA32_PMC0 keeps EAX sign-extended; IA32_A_PMC0 takes the full width [4].
BOOST_AUTO_TEST_CASE(item4_legacy_and_full_width_counter_writes) {
  auto d = device({});  // 48 bits, PDCM
  d->write(ia32_pmc(0), 0x180000000ULL);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFFFF80000000u);
  BOOST_TEST(d->rdpmc(0) == 0xFFFF80000000u);
  d->write(a_pmc(0), 0x180000000ULL);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0x180000000u);
  BOOST_TEST(d->read(a_pmc(0)) == 0x180000000u);  // the alias reads the same counter
  d->write(ia32_pmc(0), 0x7FFFFFFF);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0x7FFFFFFFu);
  d->write(ia32_pmc(0), 0xFFFFFFFF00000001ULL);  // EDX ignored, bit 31 = 0
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(ia32_pmc(3), 0x123456789ABCDEF0ULL);  // EAX = 0x9ABCDEF0, bit 31 set
  BOOST_TEST(d->read(ia32_pmc(3)) == 0xFFFF9ABCDEF0u);
  // A full-width write with a bit above the width is a #GP [U, design rule].
  BOOST_TEST(gp_fault([&] { d->write(a_pmc(0), TWO48); }, {"IA32_A_PMC0", "bit 48", "48-bit"}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(a_pmc(0), TWO48 - 1);
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - 1);
}

// Item 5: A_PMC access when PERF_CAPABILITIES[13] = 0 is a #GP. Version 1 with PDCM has
// PERF_CAPABILITIES = 0 [U]; without PDCM there is no PERF_CAPABILITIES at all.
BOOST_AUTO_TEST_CASE(item5_a_pmc_needs_fw_write) {
  auto v1 = device({.version = 1, .fixed = 0, .fixed_width = 0, .pdcm = true});
  BOOST_TEST(v1->read(PERF_CAPABILITIES) == 0u);
  BOOST_TEST(gp_fault([&] { v1->write(a_pmc(0), 5); },
                      {"0x4c1", "IA32_PERF_CAPABILITIES[13] = 0"}));
  BOOST_TEST(gp_fault([&] { (void)v1->read(a_pmc(1)); }, {"0x4c2"}));
  auto nopdcm = device({.pdcm = false});
  BOOST_TEST(gp_fault([&] { (void)nopdcm->read(PERF_CAPABILITIES); }, {"0x345"}));
  BOOST_TEST(gp_fault([&] { nopdcm->write(a_pmc(0), 5); }, {"0x4c1", "CPUID.1:ECX[15] = 0"}));
  // PERF_CAPABILITIES is read-only [2].
  auto d = device({});
  BOOST_TEST(gp_fault([&] { d->write(PERF_CAPABILITIES, 0x2000); }, {"0x345", "read-only"}));
}

// Item 6: a fixed counter write with bits above EDX[12:5] is a #GP and changes nothing.
BOOST_AUTO_TEST_CASE(item6_fixed_counter_writes_above_the_width_fault) {
  auto d = device({.fixed_width = 44});
  d->write(fixed_ctr(2), 0xABCDEF01234ULL);
  BOOST_TEST(d->read(fixed_ctr(2)) == 0xABCDEF01234u);
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(2), bit(44) | 1); },
                      {"IA32_FIXED_CTR2", "0x30b", "bit 44", "44-bit"}));
  BOOST_TEST(gp_fault([&] { d->write(fixed_ctr(0), bit(63)); }, {"bit 63"}));
  BOOST_TEST(d->read(fixed_ctr(2)) == 0xABCDEF01234u);
  d->write(fixed_ctr(0), bit(44) - 1);  // full width, no sign extension
  BOOST_TEST(d->read(fixed_ctr(0)) == bit(44) - 1);
}

BOOST_AUTO_TEST_CASE(global_ctrl_reserved_bits) {
  auto d = device({});  // 4 GP, 3 fixed
  d->write(GLOBAL_CTRL, 0x70000000FULL);
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x70000000Fu);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(4)); },
                      {"IA32_PERF_GLOBAL_CTRL", "0x38f", "bit 4", "4 general-purpose"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(35)); }, {"bit 35", "fixed counter 3"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(48)); }, {"bit 48"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_CTRL, bit(63)); }, {"bit 63"}));
  BOOST_TEST(d->read(GLOBAL_CTRL) == 0x70000000Fu);
}

// Which status bits 0x390 / 0x391 accept, by version [3, 6].
BOOST_AUTO_TEST_CASE(status_reset_and_set_bits_by_version) {
  auto v2 = device({.version = 2});
  v2->write(GLOBAL_OVF_CTRL, bit(62) | bit(63) | 0xF | 0x700000000ULL);
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(61)); },
                      {"IA32_PERF_GLOBAL_OVF_CTRL", "0x390", "bit 61", "version 3"}));
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(4)); }, {"bit 4"}));
  auto v3 = device({.version = 3});
  v3->write(GLOBAL_OVF_CTRL, bit(61));
  BOOST_TEST(gp_fault([&] { v3->write(GLOBAL_OVF_CTRL, CTR_FRZ); }, {"bit 59", "version 4"}));
  auto v4 = device({});
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_OVF_CTRL, bit(60)); },
                      {"IA32_PERF_GLOBAL_STATUS_RESET", "bit 60", "ASCI"}));
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_STATUS_SET, bit(48)); },
                      {"IA32_PERF_GLOBAL_STATUS_SET", "bit 48"}));
  BOOST_TEST(gp_fault([&] { v4->write(GLOBAL_STATUS_SET, fixed_bit(3)); },
                      {"fixed counter 3"}));
  // Every defined bit: 0..3, 32..34, 55, 58, 59, 61, 62, 63.
  const u64 all = 0xF | 0x700000000ULL | bit(55) | bit(58) | bit(59) | bit(61) | bit(62) | bit(63);
  v4->write(GLOBAL_STATUS_SET, all);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == all);
  BOOST_TEST(v4->read(GLOBAL_STATUS_SET) == 0u);  // [U] reads return 0
  BOOST_TEST(v4->read(GLOBAL_OVF_CTRL) == 0u);
  v4->write(GLOBAL_OVF_CTRL, bit(55) | bit(63) | 0x5);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == (all & ~(bit(55) | bit(63) | 0x5)));
  v4->write(GLOBAL_OVF_CTRL, all);
  BOOST_TEST(v4->read(GLOBAL_STATUS) == 0u);
}

// Item 9: v4 INUSE [3].
BOOST_AUTO_TEST_CASE(item9_v4_inuse) {
  auto d = device({});
  d->write(evtsel(2), USR | INSTRUCTIONS);  // non-zero event (EN not needed)
  BOOST_TEST(d->read(GLOBAL_INUSE) == bit(2));
  d->write(evtsel(2), EN | USR);  // event 0 with EN = 1
  BOOST_TEST(d->read(GLOBAL_INUSE) == 0u);
  d->write(evtsel(0), umask(0x01) | 0x3C);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(2, F_USR) | fixed_ctrl(1, F_OS));
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | fixed_bit(1) | fixed_bit(2)));
  // PMI_InUse (bit 63 [U]): any INT, or any fixed PMI bit, even with the field disabled.
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_PMI));
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(63)));
  d->write(FIXED_CTR_CTRL, 0);
  d->write(evtsel(3), INT);
  BOOST_TEST(d->read(GLOBAL_INUSE) == (bit(0) | bit(63)));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_INUSE, 0); }, {"0x392", "read-only"}));
}

// Item 11: RDPMC conventions [5].
BOOST_AUTO_TEST_CASE(item11_rdpmc) {
  auto d = icelake();
  d->write(fixed_ctr(1), 0x123456789ABULL);
  d->write(a_pmc(7), 0xFEDCBA987654ULL);
  BOOST_TEST(d->rdpmc(0x40000001) == 0x123456789ABu);
  BOOST_TEST(d->rdpmc(7) == 0xFEDCBA987654u);
  BOOST_TEST(d->rdpmc(0x40000003) == 0u);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000004); },
                      {"RDPMC", "0x40000004", "fixed counter 4"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(8); }, {"RDPMC", "8 general-purpose"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x80000000); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x80000001); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0xC0000001); }, {"bit 31"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x60000000); }, {"bit 29"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x00010000); }, {"0x10000"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40010001); }, {"0x4001"}));
  // CPL 3 needs CR4.PCE.
  d->set_reader_cpl(3);
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(0x40000001); }, {"CPL 3", "CR4.PCE"}));
  BOOST_TEST(gp_fault([&] { (void)d->rdpmc(7); }, {"CPL 3", "CR4.PCE"}));
  d->set_cr4_pce(true);
  BOOST_TEST(d->rdpmc(0x40000001) == 0x123456789ABu);
  d->set_cr4_pce(false);
  d->set_reader_cpl(0);
  BOOST_TEST(d->rdpmc(7) == 0xFEDCBA987654u);
  BOOST_TEST(throws([&] { d->set_reader_cpl(4); }, errc::invalid_argument, {"CPL 4"}));
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
BOOST_AUTO_TEST_SUITE(counting)

// Item 1: fixed counter 0 counts only with FIXED_CTR_CTRL[1:0] != 0 AND GLOBAL_CTRL[32].
BOOST_AUTO_TEST_CASE(item1_fixed_counter_needs_both_enables) {
  auto d = device({});
  const pmc::OwnedSegment s = seg(100, {{"instructions", 2}});
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_OS | F_USR));
  d->write(GLOBAL_CTRL, 0);
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // field 3, GLOBAL_CTRL[32] = 0: frozen
  d->write(FIXED_CTR_CTRL, 0);
  d->write(GLOBAL_CTRL, fixed_bit(0));
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);  // the reverse: frozen
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_OS | F_USR));
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 200u);  // both
  d->write(GLOBAL_CTRL, 0);
  d->run(s);
  BOOST_TEST(d->read(fixed_ctr(0)) == 200u);
}

// Item 2: PERFEVTSELi.EN = 1 but GLOBAL_CTRL[i] = 0 -> no counting (v2+); v1: EN alone.
BOOST_AUTO_TEST_CASE(item2_gp_counter_needs_en_and_global_ctrl) {
  const pmc::OwnedSegment s = seg(100, {{"instructions", 2}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);
  d->write(evtsel(2), USR | INSTRUCTIONS);  // EN = 0
  d->write(GLOBAL_CTRL, 0b0110);
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);    // EN, GLOBAL_CTRL[0] = 0
  BOOST_TEST(d->read(ia32_pmc(1)) == 200u);  // both
  BOOST_TEST(d->read(ia32_pmc(2)) == 0u);    // GLOBAL_CTRL[2], EN = 0
  auto v1 = device({.version = 1, .gp = 2, .fixed = 0, .fixed_width = 0});
  v1->write(evtsel(0), EN | USR | INSTRUCTIONS);
  v1->write(evtsel(1), USR | INSTRUCTIONS);  // per-counter EN (unlike P6's counter-0 EN)
  v1->run(s);
  BOOST_TEST(v1->read(ia32_pmc(0)) == 200u);
  BOOST_TEST(v1->read(ia32_pmc(1)) == 0u);
}

// The USR / OS filter of GP counters and the enable field of fixed counters [3, 4].
BOOST_AUTO_TEST_CASE(mode_filtering) {
  const pmc::OwnedSegment user = seg(100, {{"instructions", 2}});
  const pmc::OwnedSegment kernel = seg(50, {{"instructions", 2}}, Mode::kernel);
  struct Case {
    u64 sel_bits, field, want;
  };
  for (const Case& c : {Case{0, 0, 0}, Case{USR, F_USR, 200}, Case{OS, F_OS, 100},
                        Case{USR | OS, F_USR | F_OS, 300}}) {
    auto d = device({});
    d->write(evtsel(0), EN | c.sel_bits | INSTRUCTIONS);
    d->write(evtsel(1), EN | c.sel_bits | CORE_CYCLES);
    d->write(FIXED_CTR_CTRL, fixed_ctrl(0, c.field) | fixed_ctrl(1, c.field));
    d->write(GLOBAL_CTRL, 0xF | fixed_bit(0) | fixed_bit(1));
    d->run(user);
    d->run(kernel);
    BOOST_TEST(d->read(ia32_pmc(0)) == c.want);
    BOOST_TEST(d->read(ia32_pmc(1)) == c.want / 2);  // one cycle per two instructions
    BOOST_TEST(d->read(fixed_ctr(0)) == c.want);
    BOOST_TEST(d->read(fixed_ctr(1)) == c.want / 2);
  }
}

// Signals [7a, 7b]: each architectural event and fixed counter counts its generic signal.
BOOST_AUTO_TEST_CASE(architectural_events_and_fixed_counters_count_their_signals) {
  auto d = icelake();  // L = 8, all available
  const u64 events[] = {CORE_CYCLES, INSTRUCTIONS, REF_CYCLES,    LLC_REFERENCES,
                        LLC_MISSES,  BRANCHES,     BRANCH_MISSES, TOPDOWN_SLOTS};
  for (unsigned i = 0; i < 8; ++i) d->write(evtsel(i), EN | USR | events[i]);
  d->write(FIXED_CTR_CTRL, 0x2222);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  d->run(seg(10, {{"instructions", 2},
                  {"ref-cycles", 3},
                  {"llc-references", 4},
                  {"llc-misses", 5},
                  {"branches", 6},
                  {"branch-misses", 7},
                  {"slots", 8}}));
  const u64 want[] = {10, 20, 30, 40, 50, 60, 70, 80};
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(d->read(ia32_pmc(i)) == want[i], "counter " << i);
  BOOST_TEST(d->read(fixed_ctr(0)) == 20u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 30u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 80u);
}

// [U] ref-cycles: the unhalted cycles unless the workload gives it; halted cycles count neither.
BOOST_AUTO_TEST_CASE(reference_cycles_policy) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | OS | REF_CYCLES);
  d->write(evtsel(1), EN | USR | OS | CORE_CYCLES);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR | F_OS) | fixed_ctrl(2, F_USR | F_OS));
  d->write(GLOBAL_CTRL, 0xF | fixed_bit(1) | fixed_bit(2));
  d->run(seg(100, {{"instructions", 1}}));                  // ref = cycles = 100
  d->run(seg(40, {{"ref-cycles", 3}}));                     // ref 120, cycles 40
  d->run(seg(50, {}, Mode::kernel, true));                  // halted: 0 and 0
  d->run(seg(5, {{"ref-cycles", 1}}, Mode::kernel, true));  // given while halted: 5, cycles 0
  BOOST_TEST(d->read(ia32_pmc(0)) == 225u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 225u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 140u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 140u);
}

// Other event / umask pairs count "raw.0xUUEE"; an architectural event matches on both fields.
BOOST_AUTO_TEST_CASE(other_events_count_raw_signals) {
  const pmc::OwnedSegment s = seg(10, {{"raw.0x01C2", 3}, {"raw.0x02C2", 5}, {"raw.0x01C0", 7},
                             {"raw.0x00D1", 9}, {"instructions", 11}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | umask(0x01) | 0xC2);
  d->write(evtsel(1), EN | USR | umask(0x01) | INSTRUCTIONS);  // C0/01 is not C0/00
  d->write(evtsel(2), EN | USR | 0xD1);
  d->write(evtsel(3), EN | USR | umask(0xFF) | 0xFF);          // nothing gives raw.0xFFFF
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 30u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 70u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 90u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 0u);
}

// Item 12 (the hardware side): EBX bit i = 1 -> architectural event i counts nothing [U];
// i >= EAX[31:24] -> not an architectural event on this CPU: its raw signal [U].
BOOST_AUTO_TEST_CASE(item12_unavailable_and_unenumerated_events) {
  const pmc::OwnedSegment s = seg(10, {{"llc-references", 1}, {"llc-misses", 2}, {"slots", 3},
                             {"raw.0x01A4", 4}, {"raw.0x02C2", 5}, {"branches", 6}});
  // EBX bit 4 (LLC Misses) set.
  auto d = device({.unavailable = bit(4)});
  d->write(evtsel(0), EN | USR | LLC_MISSES);
  d->write(evtsel(1), EN | USR | LLC_REFERENCES);
  d->write(evtsel(2), EN | USR | TOPDOWN_SLOTS);  // index 7 >= L = 7: raw
  d->write(evtsel(3), EN | USR | BRANCHES);
  d->run(s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 10u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 40u);
  BOOST_TEST(d->read(ia32_pmc(3)) == 60u);
  // The fixed counters count whatever EBX says of their GP twins [U].
  auto f = device({.unavailable = bit(1)});
  f->write(evtsel(0), EN | USR | INSTRUCTIONS);
  f->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR));
  f->write(GLOBAL_CTRL, 0x1 | fixed_bit(0));
  f->run(seg(10, {{"instructions", 2}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(f->read(fixed_ctr(0)) == 20u);
  // The Core 2 dump (L = 7): TOPDOWN.SLOTS is not architectural there; Ice Lake (L = 8): it is.
  auto c2 = core2();
  c2->write(evtsel(0), EN | USR | TOPDOWN_SLOTS);
  c2->run(s);
  BOOST_TEST(c2->read(ia32_pmc(0)) == 40u);
  auto ice = icelake();
  ice->write(evtsel(0), EN | USR | TOPDOWN_SLOTS);
  ice->run(s);
  BOOST_TEST(ice->read(ia32_pmc(0)) == 30u);
  // Event 11 (Topdown Retiring, C2/02) has no generic signal: raw whether enumerated or not;
  // enumerated and marked unavailable, nothing. An EBX bit beyond L means nothing.
  auto l13 = device({.ebx_length = 13, .unavailable = bit(11)});
  auto l8 = device({.ebx_length = 8, .unavailable = bit(11)});
  auto l13ok = device({.ebx_length = 13});
  for (auto* x : {l13.get(), l8.get(), l13ok.get()}) {
    x->write(evtsel(0), EN | USR | TOPDOWN_RETIRING);
    x->run(s);
  }
  BOOST_TEST(l13->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(l8->read(ia32_pmc(0)) == 50u);
  BOOST_TEST(l13ok->read(ia32_pmc(0)) == 50u);
}

// Item 10: INV with CMASK = 0 is ignored; CMASK / INV / E as in p6.md [3].
BOOST_AUTO_TEST_CASE(item10_inv_ignored_when_cmask_is_zero) {
  for (u64 inv : {u64{0}, INV}) {
    auto d = device({});
    d->write(evtsel(0), EN | USR | inv | INSTRUCTIONS);
    d->run(seg(100, {{"instructions", 3}}));
    d->run(seg(50, {}));
    BOOST_TEST(d->read(ia32_pmc(0)) == 300u);
  }
}

BOOST_AUTO_TEST_CASE(item10_cmask_threshold_and_invert) {
  const pmc::OwnedSegment k0 = seg(10, {}), k1 = seg(20, {{"branches", 1}}),
                k2 = seg(30, {{"branches", 2}}), k5 = seg(40, {{"branches", 5}});
  auto d = device({});
  d->write(evtsel(0), EN | USR | cmask(2) | BRANCHES);
  d->write(evtsel(1), EN | USR | INV | cmask(2) | BRANCHES);
  d->write(evtsel(2), EN | USR | cmask(5) | BRANCHES);
  for (const pmc::OwnedSegment* s : {&k0, &k1, &k2, &k5}) d->run(*s);
  BOOST_TEST(d->read(ia32_pmc(0)) == 30u + 40u);  // cycles with >= 2
  BOOST_TEST(d->read(ia32_pmc(1)) == 10u + 20u);  // cycles with < 2, zero included
  BOOST_TEST(d->read(ia32_pmc(2)) == 40u);
}

BOOST_AUTO_TEST_CASE(item10_edge_detect) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);             // condition: >= 1 event [I]
  d->write(evtsel(1), EN | USR | E | cmask(2) | INSTRUCTIONS);  // condition: >= 2 events
  d->write(evtsel(2), EN | USR | E | INV | INSTRUCTIONS);       // INV ignored with CMASK = 0
  // k per cycle: 1 (100 cycles), 3, 0, 2, 2, 1, 4 (5 cycles each)
  for (u64 k : {1, 3, 0, 2, 2, 1, 4}) d->run(seg(k == 1 ? 100 : 5, {{"instructions", k}}));
  // >= 1: asserts at 1, holds through 3, drops at 0, asserts at 2, holds to the end.
  BOOST_TEST(d->read(ia32_pmc(0)) == 2u);
  // >= 2: asserts at 3, drops at 0, asserts at 2, holds, drops at 1, asserts at 4.
  BOOST_TEST(d->read(ia32_pmc(1)) == 3u);
  BOOST_TEST(d->read(ia32_pmc(2)) == 2u);
}

// [U] edge-detector memory: per counter, updated only in cycles the counter counts (GLOBAL_CTRL
// clear, wrong mode or CTR_Frz leave it alone), cleared by writing the event select.
BOOST_AUTO_TEST_CASE(edge_detector_state_policy) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);
  d->run(seg(10, {{"instructions", 1}}));  // edge: 1
  d->write(GLOBAL_CTRL, 0);
  d->run(seg(10, {}));                     // not counted: state stays asserted
  d->write(GLOBAL_CTRL, 0xF);
  d->run(seg(10, {}, Mode::kernel));       // not counted (USR only)
  d->write(GLOBAL_STATUS_SET, CTR_FRZ);
  d->run(seg(10, {}));                     // frozen
  d->write(GLOBAL_OVF_CTRL, CTR_FRZ);
  d->run(seg(10, {{"instructions", 1}}));  // continues: no edge
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);  // rewrite clears the state
  d->run(seg(10, {{"instructions", 1}}));  // edge: 2
  BOOST_TEST(d->read(ia32_pmc(0)) == 2u);
  d->run(seg(10, {}));                     // counted, deasserts
  d->run(seg(10, {{"instructions", 1}}));  // edge: 3
  BOOST_TEST(d->read(ia32_pmc(0)) == 3u);
}

// Item 7: an overflow of PMC1 sets GLOBAL_STATUS bit 1 (INT = 0 too [U]); 1 << 1 to 0x390 clears
// it; 0 changes nothing; GLOBAL_STATUS is read-only.
BOOST_AUTO_TEST_CASE(item7_overflow_status_and_ovf_ctrl) {
  auto d = device({});
  d->write(ia32_pmc(1), 0xFFFFFFFF);  // sign-extended: 2^48 - 1
  BOOST_TEST(d->read(ia32_pmc(1)) == TWO48 - 1);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);  // INT = 0
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  BOOST_TEST(d->interrupts() == 0u);
  d->write(GLOBAL_OVF_CTRL, 0);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  d->write(GLOBAL_OVF_CTRL, bit(0) | bit(2));  // other bits: no effect on bit 1
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  d->write(GLOBAL_OVF_CTRL, bit(1));
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS, 0); },
                      {"IA32_PERF_GLOBAL_STATUS", "0x38e", "read-only"}));
  BOOST_TEST(gp_fault([&] { d->write(GLOBAL_STATUS, bit(1)); }, {"read-only"}));
  // With INT: the status bit and one PMI per wrap.
  d->write(a_pmc(1), TWO48 - 2);
  d->write(evtsel(1), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 3}}));
  BOOST_TEST(d->read(ia32_pmc(1)) == 1u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(1));
  BOOST_TEST(d->interrupts() == 1u);
  // A fixed counter's overflow sets bit 32 + i, and its PMI bit raises the interrupt.
  d->write(fixed_ctr(1), TWO48 - 10);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR | F_OS | F_PMI));
  d->write(GLOBAL_CTRL, fixed_bit(1));
  d->run(seg(25, {}));
  BOOST_TEST(d->read(fixed_ctr(1)) == 15u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(1) | fixed_bit(1)));
  BOOST_TEST(d->interrupts() == 2u);
  // The version-2 name of 0x390 in messages.
  auto v2 = device({.version = 2});
  BOOST_TEST(gp_fault([&] { v2->write(GLOBAL_OVF_CTRL, bit(40)); },
                      {"IA32_PERF_GLOBAL_OVF_CTRL", "bit 40"}));
}

// Version 1: an overflow raises the PMI (INT) but there is no status register to set.
BOOST_AUTO_TEST_CASE(version_1_overflow_raises_the_pmi) {
  auto d = device({.version = 1, .gp = 2, .gp_width = 40, .fixed = 0, .fixed_width = 0});
  d->write(ia32_pmc(0), 0xFFFFFFFF);  // 2^40 - 1
  d->write(ia32_pmc(1), 0xFFFFFFFF);
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
}

// Item 8: v4 STATUS_SET sets status bits; CTR_Frz = 1 stops every counter until cleared.
BOOST_AUTO_TEST_CASE(item8_v4_status_set_and_ctr_frz) {
  auto d = device({});
  d->write(GLOBAL_STATUS_SET, fixed_bit(1));
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->write(GLOBAL_STATUS_SET, 0);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->write(evtsel(0), EN | USR | INSTRUCTIONS);
  d->write(FIXED_CTR_CTRL, fixed_ctrl(1, F_USR));
  d->write(GLOBAL_CTRL, 0xF | fixed_bit(1));
  d->run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  d->write(GLOBAL_STATUS_SET, CTR_FRZ);
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(33) | CTR_FRZ));
  d->run(seg(1000, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 10u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 10u);
  d->write(GLOBAL_OVF_CTRL, CTR_FRZ);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(33));
  d->run(seg(5, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 15u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 15u);
}

// Item 15: sampling presets. Without full-width writes the largest period is 2^31 - 1 (a
// sign-extended 32-bit write); with them 2^(w-1) - 1 through A_PMC.
BOOST_AUTO_TEST_CASE(item15_sampling_presets) {
  // No PDCM: legacy writes only. -(2^31 - 1) = 0x...80000001 -> 2^48 - 2^31 + 1.
  auto d = device({.pdcm = false});
  d->write(ia32_pmc(0), (0 - (TWO31 - 1)));
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - (TWO31 - 1));
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(TWO31 - 2, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == TWO48 - 1);
  BOOST_TEST(d->interrupts() == 0u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(0));
  // A larger preset cannot be written the legacy way: 2^48 - 2^40 keeps EAX = 0.
  d->write(ia32_pmc(1), TWO48 - TWO40);
  BOOST_TEST(d->read(ia32_pmc(1)) == 0u);
  // Full-width: -(2^47 - 1) = 2^47 + 1 through A_PMC0, overflow after exactly 2^47 - 1 events.
  auto f = device({});
  f->write(a_pmc(0), TWO47 + 1);
  BOOST_TEST(f->read(ia32_pmc(0)) == TWO48 - (TWO47 - 1));
  f->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  f->run(seg(TWO47 - 2, {{"instructions", 1}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == TWO48 - 1);
  BOOST_TEST(f->interrupts() == 0u);
  f->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(f->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(f->interrupts() == 1u);
}

// Closed form: huge segments cost one step, wraps and PMIs are exact.
BOOST_AUTO_TEST_CASE(closed_form_huge_segments) {
  auto d = device({});
  d->write(FIXED_CTR_CTRL, fixed_ctrl(0, F_USR | F_PMI) | fixed_ctrl(1, F_USR | F_PMI));
  d->write(GLOBAL_CTRL, fixed_bit(0) | fixed_bit(1) | 0x1);
  d->write(ia32_pmc(0), 5);
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  // 2^63 cycles of 2^20 + 7 instructions: 2^83 + 7 * 2^63 events, a multiple of 2^48, so the
  // 48-bit counters end where they started; wraps = 2^35 + 7 * 2^15 each. Cycles: 2^63 = 2^15
  // wraps of 2^48.
  d->run(seg(1ULL << 63, {{"instructions", (1ULL << 20) + 7}}));
  BOOST_TEST(d->read(fixed_ctr(0)) == 0u);
  BOOST_TEST(d->read(ia32_pmc(0)) == 5u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 0u);
  const u64 inst_wraps = (1ULL << 35) + 7 * (1ULL << 15);
  BOOST_TEST(d->interrupts() == 2 * inst_wraps + (1ULL << 15));
  BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(0) | fixed_bit(0) | fixed_bit(1)));
  // 40-bit GP counters (Core 2): 2^41 instructions in one segment wrap twice.
  auto c = core2();
  c->write(ia32_pmc(0), 5);
  c->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  c->run(seg(TWO40, {{"instructions", 2}}));
  BOOST_TEST(c->read(ia32_pmc(0)) == 5u);
  BOOST_TEST(c->interrupts() == 2u);
}

// A 64-bit counter wraps at 2^64 (no shift past the width anywhere).
BOOST_AUTO_TEST_CASE(width_64_counters) {
  auto d = device({.gp_width = 64, .fixed_width = 64});
  d->write(ia32_pmc(0), 0x80000000);
  BOOST_TEST(d->read(ia32_pmc(0)) == 0xFFFFFFFF80000000u);
  d->write(a_pmc(0), ~u64{0});
  d->write(evtsel(0), EN | USR | INT | INSTRUCTIONS);
  d->run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 0u);
  BOOST_TEST(d->interrupts() == 1u);
  // 3 cycles of 2^64 - 1: 3 * 2^64 - 3 -> 2^64 - 3, two more wraps.
  d->run(seg(3, {{"instructions", ~u64{0}}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == ~u64{0} - 2);
  BOOST_TEST(d->interrupts() == 3u);
  d->write(fixed_ctr(0), ~u64{0});
  BOOST_TEST(d->read(fixed_ctr(0)) == ~u64{0});
}

BOOST_AUTO_TEST_CASE(zero_cycle_segments_change_nothing) {
  auto d = device({});
  d->write(evtsel(0), EN | USR | E | INSTRUCTIONS);
  d->write(evtsel(1), EN | USR | CORE_CYCLES);
  d->run(seg(10, {{"instructions", 1}}));
  d->run(seg(0, {}));
  d->run(seg(0, {{"instructions", 1}}));
  d->run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d->read(ia32_pmc(0)) == 1u);
  BOOST_TEST(d->read(ia32_pmc(1)) == 20u);
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
BOOST_AUTO_TEST_SUITE(workloads)

// The shipped example through an Ice Lake, read every chunk of a 48-bit budget. Totals from the
// file's segments (worked out in its header comment). Session::run() chunks the workload; the
// session's device is the archperf model in a ChunkSpy, which sees each chunk. The session
// counts one event, and the counters are then programmed here, as the fact sheet gives them.
BOOST_AUTO_TEST_CASE(archperf_demo_example) {
  const auto w = pmc::load_workload(kSource / "examples" / "workloads" / "archperf-demo.toml");
  BOOST_TEST(w.total_cycles() == 6'000'000u);
  static const pmc_test::LoadedForTest backend("archperf");
  pmc::Session s(std::make_unique<pmc::detail::SessionImpl>(
      pmc_test::spy_context<pmc::sim::ArchPerfDevice>(backend, icelake_cpu())));
  s.add("instructions");
  s.start();  // a running session stays running through run()
  Device* d = &pmc_test::device(s);
  const u64 events[] = {INSTRUCTIONS | USR, INSTRUCTIONS | OS, BRANCHES | USR | OS,
                        BRANCH_MISSES | USR | OS, LLC_REFERENCES | USR | OS,
                        LLC_MISSES | USR | OS, REF_CYCLES | USR | OS,
                        umask(0x01) | 0xC2 | USR | OS};
  d->write(GLOBAL_CTRL, 0);
  for (unsigned i = 0; i < 8; ++i) d->write(evtsel(i), EN | events[i]);
  for (unsigned i = 0; i < 8; ++i) d->write(ia32_pmc(i), 0);
  for (unsigned i = 0; i < 4; ++i) d->write(fixed_ctr(i), 0);
  d->write(FIXED_CTR_CTRL, 0x3333);
  d->write(GLOBAL_CTRL, 0xF000000FFULL);
  int chunks = 0;
  pmc_test::between_chunks = [&] { ++chunks; };
  const pmc::WorkloadRun run = s.run(w);
  pmc_test::between_chunks = nullptr;
  BOOST_TEST(s.running());
  BOOST_TEST(chunks == 6);  // one chunk per segment: no segment nears 2^47 events
  BOOST_TEST(run.cycles == 6'000'000u);
  const u64 want[] = {15'200'000, 500'000, 5'650'000, 200'000,
                      700'000,    500'000, 5'850'000, 20'000'000};
  for (unsigned i = 0; i < 8; ++i) BOOST_TEST(d->read(ia32_pmc(i)) == want[i], "counter " << i);
  BOOST_TEST(d->read(fixed_ctr(0)) == 15'700'000u);
  BOOST_TEST(d->read(fixed_ctr(1)) == 5'750'000u);
  BOOST_TEST(d->read(fixed_ctr(2)) == 5'850'000u);
  BOOST_TEST(d->read(fixed_ctr(3)) == 23'000'000u);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->interrupts() == 0u);
  BOOST_TEST(run.interrupts == 0u);
}

// Raw signals in TOML, quoted or as a dotted key (docs/workload-format.md).
BOOST_AUTO_TEST_CASE(raw_signals_from_toml) {
  const auto w = pmc::parse_workload(R"(
[[segment]]
cycles = 10
signals = { "raw.0x01C2" = 3 }

[[segment]]
cycles = 20
[segment.signals]
raw.0x01C2 = 5
)",
                                          "raw");
  auto d = device({});
  d->write(evtsel(0), EN | USR | umask(0x01) | 0xC2);
  for (std::size_t i = 0; i < w.size(); ++i) d->run(w.segment(i));
  BOOST_TEST(d->read(ia32_pmc(0)) == 130u);  // 10 x 3 + 20 x 5
}

BOOST_AUTO_TEST_SUITE_END()
