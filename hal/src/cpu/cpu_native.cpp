// Reading this machine's CPU: CPUID natively on x86 (each leaf once per process, native_cpu()),
// Linux's view on AArch64 (cpu_arm.cpp), uname elsewhere. The decoding is cpu.cpp's.
#include "cpu_native.hpp"
#include "cpuid_bits.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <atomic>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PMC_HAVE_CPUID 1
#if defined(__GLIBC__) && __has_include(<sys/platform/x86.h>)
// glibc 2.33 and later (<sys/platform/x86.h>, whose inline helpers Clang's C++ refuses: _Bool):
// the loader's CPUID answers by index, CPUID_INDEX_1 0, CPUID_INDEX_7 1, CPUID_INDEX_80000001 2,
// CPUID_INDEX_7_ECX_1 6; each entry's first member is the four registers as CPUID gave them.
extern "C" const void* __x86_get_cpuid_feature_leaf(unsigned int);
#define PMC_HAVE_STARTUP_CPUID 1
#endif
#else
#define PMC_HAVE_CPUID 0
#endif
#ifndef PMC_HAVE_STARTUP_CPUID
#define PMC_HAVE_STARTUP_CPUID 0
#endif

namespace pmc {

#if PMC_HAVE_CPUID
namespace {

using detail::bit;
using detail::bits;
using detail::kExtBase;

// Enough for every subleaf enumeration the SDM and APM define today; protects against a
// hypervisor that reports nonsense counts.
constexpr std::uint32_t kMaxSubleaves = 64;
constexpr std::uint32_t kMaxBasicLeaf = 0xFF;
constexpr std::uint32_t kMaxExtLeaf = kExtBase + 0xFF;
constexpr std::uint32_t kHypervisorBase = 0x40000000;

// The leaves a native reading holds. In a virtual machine each CPUID instruction traps to the
// hypervisor (about 6 us on the project's guests: the whole table, 65 instructions there, took
// 0.4 ms of every pmc command), so not every leaf, but those CpuInfo decodes and the library and
// the in-tree backends and models read at every Hal::open: 0 and 1 (vendor, signature,
// features), 7 (features, hybrid), 0AH and 23H (architectural perfmon), 15H and 16H (the TSC
// rate), 1AH (hybrid core type); 80000001H (AMD perfmon features), 80000002H-80000004H (brand),
// 80000022H (PerfMonV2). Others are read when asked for (read_native_leaf): the cache leaves 2,
// 4, 80000005H, 80000006H and 8000001DH by emulation (cache_hierarchy), the hypervisor's
// 40000000H and 40000010H by the TSC's rate (tsc.cpp), a leaf a backend's probe table names by
// Hal::open. A CPUID dump keeps every leaf it has.
constexpr std::uint32_t kNativeLeaves[] = {0x00, 0x01, 0x07, 0x0A, 0x15, 0x16, 0x1A, 0x23};
constexpr std::uint32_t kNativeExtLeaves[] = {0x80000001, 0x80000022};
constexpr std::uint32_t kBrandLeaves[] = {0x80000002, 0x80000003, 0x80000004};

// Leaves 0AH, 15H, 16H, 1AH and 23H are Intel's; AMD's APM does not define them (they read as
// zero: the AMD fact sheet of docs/hardware, section 1), so on AMD and Hygon parts (leaf 0 EBX
// "Auth"enticAMD, "Hygo"nGenuine) they are never asked for, neither by the native reading nor
// by read_native_leaf.
bool intel_leaf_on_amd(std::uint32_t vendor_ebx, std::uint32_t leaf) {
  const bool reserved = vendor_ebx == 0x68747541 || vendor_ebx == 0x6F677948;
  return reserved && (leaf == 0x0A || leaf == 0x15 || leaf == 0x16 || leaf == 0x1A || leaf == 0x23);
}

// Whether glibc's copy of the leaves it reads at start-up (startup_cpuid) is complete for this
// vendor: its dynamic loader reads 80000001H only on the parts it knows ("GenuineIntel",
// "AuthenticAMD", "HygonGenuine", "CentaurHauls", "  Shanghai  "), leaf 1 and leaf 7 on all.
// Set by read_native_cpu from leaf 0 (the same answer in every thread, hence relaxed).
std::atomic<bool> g_startup_has_extended{false};

bool vendor_read_fully_by_glibc(const CpuidRegs& l0) {
  constexpr std::uint32_t kEbx[] = {0x756E6547, 0x68747541, 0x6F677948, 0x746E6543, 0x68532020};
  constexpr std::uint32_t kEcx[] = {0x6C65746E, 0x444D4163, 0x656E6975, 0x736C7561, 0x20206961};
  for (std::size_t i = 0; i < std::size(kEbx); ++i)
    if (l0.ebx == kEbx[i] && l0.ecx == kEcx[i]) return true;
  return false;
}

// The answer glibc's dynamic loader got from CPUID at this process's start, which it keeps
// (<sys/platform/x86.h>, __x86_get_cpuid_feature_leaf): leaf 1, leaf 7 subleaves 0 and 1, and
// 80000001H. Each CPUID instruction not executed is a trap to the hypervisor saved in a virtual
// machine (docs/performance.md). The loader reads leaf 7 when leaf 0 says it exists and
// 80000001H when 80000000H does, as the callers here ask only for leaves the CPU has; leaf 1's
// EBX[31:24] (the initial APIC ID) is then the CPU the process started on, as any reading's is
// the CPU it ran on. nullopt: a leaf glibc does not keep, or no glibc.
std::optional<CpuidRegs> startup_cpuid(std::uint32_t leaf, std::uint32_t subleaf) {
#if PMC_HAVE_STARTUP_CPUID
  unsigned index = 0;
  if (leaf == 1 && subleaf == 0) index = 0;
  else if (leaf == 7 && subleaf == 0) index = 1;
  else if (leaf == 7 && subleaf == 1) index = 6;
  else if (leaf == 0x80000001 && subleaf == 0 && g_startup_has_extended.load(std::memory_order_relaxed)) index = 2;
  else return std::nullopt;
  const auto* f = static_cast<const std::uint32_t*>(__x86_get_cpuid_feature_leaf(index));
  if (f == nullptr) return std::nullopt;
  const CpuidRegs r{f[0], f[1], f[2], f[3]};
  // Leaf 1 EAX is never 0 where the loader read it (the signature's family is at least 4).
  if (leaf == 1 && r.eax == 0) return std::nullopt;
  return r;
#else
  (void)leaf;
  (void)subleaf;
  return std::nullopt;
#endif
}

CpuidRegs native_cpuid(std::uint32_t leaf, std::uint32_t subleaf) {
  if (const auto kept = startup_cpuid(leaf, subleaf)) return *kept;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid_count(leaf, subleaf, a, b, c, d);
  return {a, b, c, d};
}

// Reads subleaf 0 and, for the leaves that have them, the further subleaves the SDM (basic
// leaves) or the APM (8000001DH, 80000026H) defines. Enumerations that end with a null entry
// keep that entry, as `cpuid -r` does.
void read_leaf(CpuidTable& t, std::uint32_t leaf) {
  const CpuidRegs s0 = native_cpuid(leaf, 0);
  t.set(leaf, 0, s0);
  auto read_range = [&](std::uint32_t last) {  // subleaves 1..last
    for (std::uint32_t i = 1; i <= last && i < kMaxSubleaves; ++i) t.set(leaf, i, native_cpuid(leaf, i));
  };
  auto read_until = [&](auto is_end) {  // subleaves 1.. up to and including the first null one
    if (is_end(s0)) return;
    for (std::uint32_t i = 1; i < kMaxSubleaves; ++i) {
      const CpuidRegs r = native_cpuid(leaf, i);
      t.set(leaf, i, r);
      if (is_end(r)) break;
    }
  };
  auto read_bitmap = [&](std::uint64_t map, std::uint32_t first) {  // subleaf i when bit i set
    for (std::uint32_t i = first; i < 64 && i < kMaxSubleaves; ++i) {
      if ((map >> i) & 1u) t.set(leaf, i, native_cpuid(leaf, i));
    }
  };
  const auto cache_type_null = [](const CpuidRegs& r) { return bits(r.eax, 4, 0) == 0; };
  const auto level_type_null = [](const CpuidRegs& r) { return bits(r.ecx, 15, 8) == 0; };

  switch (leaf) {
    case 0x04:        // deterministic cache parameters: until cache type 0
    case 0x8000001D:  // AMD cache topology, same layout
      read_until(cache_type_null);
      break;
    case 0x0B:        // extended topology: until level type 0
    case 0x1F:        // V2 extended topology
    case 0x80000026:  // AMD extended CPU topology
      read_until(level_type_null);
      break;
    case 0x07:  // structured extended features: EAX = highest subleaf
    case 0x14:  // processor trace
    case 0x17:  // SoC vendor attributes
    case 0x18:  // deterministic address translation
    case 0x1D:  // tile information: EAX = highest palette
    case 0x20:  // HRESET
    case 0x24:  // AVX10
      read_range(s0.eax);
      break;
    case 0x0D: {  // XSAVE: 0 and 1, then state component i for each XCR0 | IA32_XSS bit i >= 2
      const CpuidRegs s1 = native_cpuid(leaf, 1);
      t.set(leaf, 1, s1);
      const std::uint64_t xcr0 = (std::uint64_t{s0.edx} << 32) | s0.eax;
      const std::uint64_t xss = (std::uint64_t{s1.edx} << 32) | s1.ecx;
      read_bitmap(xcr0 | xss, 2);
      break;
    }
    case 0x0F:  // RDT monitoring: EDX bit i = resource i has subleaf i
      read_bitmap(s0.edx, 1);
      break;
    case 0x10:  // RDT allocation: EBX bit i = resource i has subleaf i
      read_bitmap(s0.ebx, 1);
      break;
    case 0x12:  // SGX (when CPUID.(7,0):EBX[2]): 0, 1, then EPC sections until an invalid one
      if (const auto l7 = t.get(7, 0); l7 && bit(l7->ebx, 2)) {
        t.set(leaf, 1, native_cpuid(leaf, 1));
        for (std::uint32_t i = 2; i < kMaxSubleaves; ++i) {
          const CpuidRegs r = native_cpuid(leaf, i);
          t.set(leaf, i, r);
          if (bits(r.eax, 3, 0) == 0) break;
        }
      }
      break;
    case 0x23:  // architectural perfmon extended: EAX bit i = subleaf i valid
      read_bitmap(s0.eax, 1);
      break;
    default:  // 1AH (hybrid core type) and the rest have no subleaves
      break;
  }
}

}  // namespace
#endif

#if PMC_HAVE_CPUID
namespace {

// This CPU's leaves (kNativeLeaves, kNativeExtLeaves, and the brand's when with_brand), decoded.
CpuInfo read_native_x86(bool with_brand) {
  CpuidTable t;
#if defined(__i386__)
  // An old i386 may have no CPUID instruction (__get_cpuid_max checks the ID flag).
  if (__get_cpuid_max(0, nullptr) == 0) throw Error(errc::not_supported, "native: CPUID is unavailable");
#endif
  const CpuidRegs l0 = native_cpuid(0, 0);
  t.set(0, 0, l0);
  g_startup_has_extended.store(vendor_read_fully_by_glibc(l0), std::memory_order_relaxed);
  const std::uint32_t max_leaf = l0.eax;
  // A CPU whose leaf 0 says 0 has no leaf 1 to decode.
  if (max_leaf == 0) throw Error(errc::not_supported, "native: CPUID is unavailable or reports no leaf 1");
  for (std::uint32_t leaf : kNativeLeaves) {
    if (leaf == 0 || leaf > max_leaf || intel_leaf_on_amd(l0.ebx, leaf)) continue;
    read_leaf(t, leaf);
  }

  const CpuidRegs ext0 = native_cpuid(kExtBase, 0);
  t.set(kExtBase, 0, ext0);
  if ((ext0.eax & 0xFFFF0000u) == kExtBase) {
    for (std::uint32_t leaf : kNativeExtLeaves)
      if (leaf <= ext0.eax && leaf <= kMaxExtLeaf) read_leaf(t, leaf);
    if (with_brand)
      for (std::uint32_t leaf : kBrandLeaves)
        if (leaf <= ext0.eax) read_leaf(t, leaf);
  }
  CpuInfo cpu = decode_cpuid(std::move(t), "native");
  cpu.from = CpuSource::native;
  return cpu;
}

std::atomic<bool> g_brand_read{false};

// The brand's three leaves, read once per process (by the first complete_brand that needs them).
const CpuidRegs* native_brand_leaves() {
  // Never destroyed, as native_cpu()'s reading.
  static const CpuidRegs* const leaves = [] {
    auto* r = new CpuidRegs[std::size(kBrandLeaves)];
    for (std::size_t i = 0; i < std::size(kBrandLeaves); ++i) r[i] = native_cpuid(kBrandLeaves[i], 0);
    return r;
  }();
  g_brand_read.store(true, std::memory_order_release);
  return leaves;
}

}  // namespace
#endif

CpuInfo read_native_cpu() {
#if PMC_HAVE_CPUID
  return read_native_x86(true);
#elif defined(__aarch64__)
  return detail::read_native_arm("/proc/cpuinfo", "/sys");
#else
  return detail::native_other();
#endif
}

namespace detail {

namespace {
std::atomic<bool> g_native_read{false};
}

const CpuInfo& native_cpu() {
  // Never destroyed (no exit handler to register, and usable from other statics' destructors).
#if PMC_HAVE_CPUID
  static const CpuInfo* const cpu = new CpuInfo(read_native_x86(false));
#else
  static const CpuInfo* const cpu = new CpuInfo(read_native_cpu());
#endif
  g_native_read.store(true, std::memory_order_release);
  return *cpu;
}

bool native_cpu_read() { return g_native_read.load(std::memory_order_acquire); }

void complete_brand(CpuInfo& cpu) {
#if PMC_HAVE_CPUID
  if (cpu.isa != Isa::x86 || !cpu.native() || !cpu.brand.empty() || cpu.max_ext_leaf < kBrandLeaves[2]) return;
  const CpuidRegs* leaves = native_brand_leaves();
  for (std::size_t i = 0; i < std::size(kBrandLeaves); ++i)
    if (!cpu.raw.get(kBrandLeaves[i])) cpu.raw.set(kBrandLeaves[i], 0, leaves[i]);
  decode_brand(cpu, cpu.raw);
#else
  (void)cpu;
#endif
}

bool native_brand_read() {
#if PMC_HAVE_CPUID
  return g_brand_read.load(std::memory_order_acquire);
#else
  return false;
#endif
}

void read_native_leaf(CpuInfo& cpu, std::uint32_t leaf, std::uint32_t subleaf) {
#if PMC_HAVE_CPUID
  if (cpu.isa != Isa::x86 || !cpu.native() || cpu.raw.get(leaf, subleaf) || cpu.raw.get(leaf, 0)) return;
  if (const auto l0 = cpu.raw.get(0); l0 && intel_leaf_on_amd(l0->ebx, leaf)) return;
  // The hypervisor's range (only under one: CPUID.1:ECX[31]), as far as its vendor leaf
  // 40000000H says (EAX: its largest leaf).
  if (leaf >= kHypervisorBase && leaf <= kHypervisorBase + 0xFF) {
    const auto l1 = cpu.raw.get(1);
    if (!l1 || !bit(l1->ecx, 31)) return;
    if (!cpu.raw.get(kHypervisorBase)) cpu.raw.set(kHypervisorBase, 0, native_cpuid(kHypervisorBase, 0));
    if (leaf != kHypervisorBase && leaf <= cpu.raw.get(kHypervisorBase)->eax) cpu.raw.set(leaf, 0, native_cpuid(leaf, 0));
    return;
  }
  const bool extended = leaf >= kExtBase;
  if (extended ? leaf > cpu.max_ext_leaf || leaf > kMaxExtLeaf : leaf > cpu.max_leaf || leaf > kMaxBasicLeaf) return;
  read_leaf(cpu.raw, leaf);
  if (leaf == kHybridLeaf) decode_hybrid_leaf(cpu, cpu.raw);
#else
  (void)cpu;
  (void)leaf;
  (void)subleaf;
#endif
}

}  // namespace detail

}  // namespace pmc
