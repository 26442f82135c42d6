// CPU probing: CPUID answers -> CpuInfo. The decoding rules are the SDM's and AMD's:
//   - vendor: leaf 0 EBX, EDX, ECX (in that order), 4 little-endian bytes each;
//   - display family = base family EAX[11:8], plus extended family EAX[27:20] only when the
//     base family is 0FH;
//   - display model = base model EAX[7:4], plus extended model EAX[19:16] << 4 only when the
//     base family is 6 or 0FH;
//   - family and model come from leaf 1 only. AMD's 80000001H EAX repeats a signature, but on
//     K7 it says family 7 where leaf 1 says 6: it is never used here.
// Leaves beyond what leaf 0 / 80000000H advertise are ignored even when a dump has them.
#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <initializer_list>
#include <cstdint>
#include <string>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PMC_HAVE_CPUID 1
#else
#define PMC_HAVE_CPUID 0
#endif

namespace pmc {

void CpuidTable::set(std::uint32_t leaf, std::uint32_t subleaf, CpuidRegs regs) {
  leaves_.insert_or_assign(std::pair{leaf, subleaf}, regs);
}

std::optional<CpuidRegs> CpuidTable::get(std::uint32_t leaf, std::uint32_t subleaf) const {
  auto it = leaves_.find(std::pair{leaf, subleaf});
  if (it == leaves_.end()) return std::nullopt;
  return it->second;
}

namespace {

constexpr std::uint32_t kArchPerfmonLeaf = 0x0A;
constexpr std::uint32_t kExtBase = 0x80000000;
constexpr std::uint32_t kAmdPerfmonLeaf = 0x80000022;

// Bits hi..lo of v (inclusive), as the SDM tables write them.
constexpr unsigned bits(std::uint32_t v, unsigned hi, unsigned lo) {
  const unsigned width = hi - lo + 1;
  const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
  return static_cast<unsigned>((v >> lo) & mask);
}
constexpr bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

// Appends the 4 bytes of a register, low byte first (how CPUID packs strings).
void append_bytes(std::string& out, std::uint32_t reg) {
  for (unsigned i = 0; i < 4; ++i) out.push_back(static_cast<char>((reg >> (8 * i)) & 0xFFu));
}

// Cuts at the first NUL (the strings are NUL-padded) and trims surrounding blanks (older Intel
// brand strings are right-justified with leading spaces).
std::string clean_string(std::string s) {
  if (auto nul = s.find('\0'); nul != std::string::npos) s.resize(nul);
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

// 80000000H answers with the highest *basic* leaf's data on CPUs without extended leaves
// (SDM: out-of-range inputs return the highest basic leaf), so only 8000xxxxH counts as a
// maximum.
std::uint32_t max_extended(const CpuidTable& t) {
  const auto r = t.get(kExtBase);
  if (!r || (r->eax & 0xFFFF0000u) != kExtBase) return 0;
  return r->eax;
}

ArchPerfmon decode_arch_perfmon(const CpuidRegs& r) {
  ArchPerfmon a;
  a.version = bits(r.eax, 7, 0);
  a.gp_counters = bits(r.eax, 15, 8);
  a.gp_width = bits(r.eax, 23, 16);
  a.ebx_length = bits(r.eax, 31, 24);
  a.unavailable_events = r.ebx;
  a.fixed_bitmap = r.ecx;
  a.fixed_counters = bits(r.edx, 4, 0);
  a.fixed_width = bits(r.edx, 12, 5);
  a.anythread_deprecated = bit(r.edx, 15);
  return a;
}

}  // namespace

CpuInfo decode_cpuid(CpuidTable table, std::string source) {
  const auto leaf0 = table.get(0);
  if (!leaf0) {
    throw Error(errc::parse,
                fmt::format("{}: CPUID leaf 0 missing (no vendor string or maximum leaf)", source));
  }
  const auto leaf1 = table.get(1);
  if (!leaf1) {
    throw Error(errc::parse,
                fmt::format("{}: CPUID leaf 1 missing (no family/model/stepping signature)", source));
  }

  CpuInfo cpu;
  std::string vendor;
  append_bytes(vendor, leaf0->ebx);
  append_bytes(vendor, leaf0->edx);
  append_bytes(vendor, leaf0->ecx);
  cpu.vendor = clean_string(std::move(vendor));
  cpu.max_leaf = leaf0->eax;

  cpu.signature = leaf1->eax;
  const unsigned base_family = bits(cpu.signature, 11, 8);
  const unsigned ext_family = bits(cpu.signature, 27, 20);
  const unsigned base_model = bits(cpu.signature, 7, 4);
  const unsigned ext_model = bits(cpu.signature, 19, 16);
  cpu.family = base_family == 0xF ? base_family + ext_family : base_family;
  cpu.model = (base_family == 0x6 || base_family == 0xF) ? base_model + (ext_model << 4) : base_model;
  cpu.stepping = bits(cpu.signature, 3, 0);

  if (cpu.max_leaf >= 7) {
    if (const auto leaf7 = table.get(7, 0)) cpu.hybrid = bit(leaf7->edx, 15);
  }
  if (cpu.max_leaf >= kArchPerfmonLeaf) {
    if (const auto leafa = table.get(kArchPerfmonLeaf)) cpu.arch = decode_arch_perfmon(*leafa);
  }

  cpu.max_ext_leaf = max_extended(table);
  // The AMD bits are reserved (zero) on Intel, so they are read whatever the vendor: Hygon
  // and other AMD-compatible parts then get them too.
  if (cpu.max_ext_leaf >= 0x80000001) {
    if (const auto e1 = table.get(0x80000001)) {
      cpu.amd.perfctr_core = bit(e1->ecx, 23);
      cpu.amd.perfctr_nb = bit(e1->ecx, 24);
      cpu.amd.perfctr_llc = bit(e1->ecx, 28);
    }
  }
  if (cpu.max_ext_leaf >= kAmdPerfmonLeaf) {
    if (const auto e22 = table.get(kAmdPerfmonLeaf)) {
      cpu.amd.perfmon_v2 = bit(e22->eax, 0);
      cpu.amd.v2_core_counters = bits(e22->ebx, 3, 0);
    }
  }
  if (cpu.max_ext_leaf >= 0x80000004) {
    const auto b2 = table.get(0x80000002);
    const auto b3 = table.get(0x80000003);
    const auto b4 = table.get(0x80000004);
    if (b2 && b3 && b4) {
      std::string brand;
      for (const auto* r : {&*b2, &*b3, &*b4}) {
        append_bytes(brand, r->eax);
        append_bytes(brand, r->ebx);
        append_bytes(brand, r->ecx);
        append_bytes(brand, r->edx);
      }
      cpu.brand = clean_string(std::move(brand));
    }
  }

  cpu.raw = std::move(table);
  cpu.source = std::move(source);
  return cpu;
}

#if PMC_HAVE_CPUID
namespace {

// Enough for every subleaf enumeration the SDM and APM define today; protects against a
// hypervisor that reports nonsense counts.
constexpr std::uint32_t kMaxSubleaves = 64;
constexpr std::uint32_t kMaxBasicLeaf = 0xFF;
constexpr std::uint32_t kMaxExtLeaf = kExtBase + 0xFF;

CpuidRegs native_cpuid(std::uint32_t leaf, std::uint32_t subleaf) {
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

CpuInfo read_native_cpu() {
#if PMC_HAVE_CPUID
  CpuidTable t;
  const std::uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  // 0 also means "no CPUID instruction" on old i386 (__get_cpuid_max checks the ID flag); a
  // CPU whose leaf 0 says 0 has no leaf 1 to decode either.
  if (max_leaf == 0) throw Error(errc::not_supported, "native: CPUID is unavailable or reports no leaf 1");
  for (std::uint32_t leaf = 0; leaf <= max_leaf && leaf <= kMaxBasicLeaf; ++leaf) read_leaf(t, leaf);

  const CpuidRegs ext0 = native_cpuid(kExtBase, 0);
  t.set(kExtBase, 0, ext0);
  if ((ext0.eax & 0xFFFF0000u) == kExtBase) {
    for (std::uint32_t leaf = kExtBase + 1; leaf <= ext0.eax && leaf <= kMaxExtLeaf; ++leaf) read_leaf(t, leaf);
  }
  return decode_cpuid(std::move(t), "native");
#else
  throw Error(errc::not_supported, "native: the CPUID instruction exists only on x86 CPUs; "
                                   "use a CPUID dump file instead (cpu = \"<dump file>\")");
#endif
}

std::string describe(const CpuInfo& cpu) {
  std::string out = fmt::format("{} family {} model {} stepping {}",
                                cpu.vendor.empty() ? std::string("unknown-vendor") : cpu.vendor,
                                cpu.family, cpu.model, cpu.stepping);
  if (!cpu.brand.empty()) out += fmt::format(" ({})", cpu.brand);
  return out;
}

}  // namespace pmc
