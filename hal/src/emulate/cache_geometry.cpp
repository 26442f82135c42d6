// Cache geometry from CPUID (docs/emulation.md, "Cache geometry", which cites the manuals): the
// chosen CPU's L1 instruction, L1 data and last-level caches, fitted to what Valgrind can simulate.
#include "cache_geometry.hpp"

#include "cpu_native.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <bit>
#include <optional>

namespace pmc {

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * 1024;

enum class CacheType { data, instruction, unified };

struct CacheLevel {
  unsigned level = 0;
  CacheType type = CacheType::unified;
  CacheGeometry geometry;
};

// Leaf 4 and leaf 8000001DH share one layout: EAX[4:0] type (0 none, 1 data,
// 2 instruction, 3 unified), EAX[7:5] level, EAX[9] fully associative; EBX[11:0] line size - 1,
// EBX[21:12] physical line partitions - 1, EBX[31:22] ways - 1; ECX sets - 1.
std::vector<CacheLevel> deterministic_leaf(const CpuidTable& raw, std::uint32_t leaf) {
  std::vector<CacheLevel> out;
  for (std::uint32_t sub = 0; sub < 64; ++sub) {
    const auto r = raw.get(leaf, sub);
    if (!r) break;
    const unsigned type = r->eax & 0x1F;
    if (type == 0) break;
    if (type > 3) continue;  // reserved types
    CacheLevel c;
    c.level = (r->eax >> 5) & 0x7;
    c.type = type == 1 ? CacheType::data : type == 2 ? CacheType::instruction : CacheType::unified;
    const std::uint64_t line = (r->ebx & 0xFFF) + 1u;
    const std::uint64_t partitions = ((r->ebx >> 12) & 0x3FF) + 1u;
    const std::uint64_t ways = ((r->ebx >> 22) & 0x3FF) + 1u;
    const std::uint64_t sets = std::uint64_t{r->ecx} + 1u;
    c.geometry.line = static_cast<unsigned>(line);
    c.geometry.size = ways * partitions * line * sets;
    c.geometry.ways = (r->eax >> 9) & 1u ? static_cast<unsigned>(c.geometry.size / line) : static_cast<unsigned>(ways);
    out.push_back(c);
  }
  return out;
}

// Leaf 2 descriptors (Intel SDM vol. 2A, CPUID, table "Encoding of CPUID Leaf 2 Descriptors"):
// the cache descriptors only (TLB and prefetch descriptors are skipped).
struct Descriptor {
  std::uint8_t code;
  std::uint8_t level;
  CacheType type;
  std::uint32_t kib;
  std::uint16_t ways;
  std::uint16_t line;
};
constexpr CacheType I = CacheType::instruction, D = CacheType::data, U = CacheType::unified;
// clang-format off
constexpr Descriptor kDescriptors[] = {
    {0x06, 1, I, 8, 4, 32},     {0x08, 1, I, 16, 4, 32},    {0x09, 1, I, 32, 4, 64},
    {0x0A, 1, D, 8, 2, 32},     {0x0C, 1, D, 16, 4, 32},    {0x0D, 1, D, 16, 4, 64},
    {0x0E, 1, D, 24, 6, 64},    {0x1D, 2, U, 128, 2, 64},   {0x21, 2, U, 256, 8, 64},
    {0x22, 3, U, 512, 4, 64},   {0x23, 3, U, 1024, 8, 64},  {0x24, 2, U, 1024, 16, 64},
    {0x25, 3, U, 2048, 8, 64},  {0x29, 3, U, 4096, 8, 64},  {0x2C, 1, D, 32, 8, 64},
    {0x30, 1, I, 32, 8, 64},    {0x39, 2, U, 128, 4, 64},   {0x3A, 2, U, 192, 6, 64},
    {0x3B, 2, U, 128, 2, 64},   {0x3C, 2, U, 256, 4, 64},   {0x3D, 2, U, 384, 6, 64},
    {0x3E, 2, U, 512, 4, 64},   {0x41, 2, U, 128, 4, 32},   {0x42, 2, U, 256, 4, 32},
    {0x43, 2, U, 512, 4, 32},   {0x44, 2, U, 1024, 4, 32},  {0x45, 2, U, 2048, 4, 32},
    {0x46, 3, U, 4096, 4, 64},  {0x47, 3, U, 8192, 8, 64},  {0x48, 2, U, 3072, 12, 64},
    {0x49, 2, U, 4096, 16, 64}, {0x4A, 3, U, 6144, 12, 64}, {0x4B, 3, U, 8192, 16, 64},
    {0x4C, 3, U, 12288, 12, 64},{0x4D, 3, U, 16384, 16, 64},{0x4E, 2, U, 6144, 24, 64},
    {0x60, 1, D, 16, 8, 64},    {0x66, 1, D, 8, 4, 64},     {0x67, 1, D, 16, 4, 64},
    {0x68, 1, D, 32, 4, 64},    {0x78, 2, U, 1024, 4, 64},  {0x79, 2, U, 128, 8, 64},
    {0x7A, 2, U, 256, 8, 64},   {0x7B, 2, U, 512, 8, 64},   {0x7C, 2, U, 1024, 8, 64},
    {0x7D, 2, U, 2048, 8, 64},  {0x7F, 2, U, 512, 2, 64},   {0x80, 2, U, 512, 8, 64},
    {0x82, 2, U, 256, 8, 32},   {0x83, 2, U, 512, 8, 32},   {0x84, 2, U, 1024, 8, 32},
    {0x85, 2, U, 2048, 8, 32},  {0x86, 2, U, 512, 4, 64},   {0x87, 2, U, 1024, 8, 64},
    {0xD0, 3, U, 512, 4, 64},   {0xD1, 3, U, 1024, 4, 64},  {0xD2, 3, U, 2048, 4, 64},
    {0xD6, 3, U, 1024, 8, 64},  {0xD7, 3, U, 2048, 8, 64},  {0xD8, 3, U, 4096, 8, 64},
    {0xDC, 3, U, 1536, 12, 64}, {0xDD, 3, U, 3072, 12, 64}, {0xDE, 3, U, 6144, 12, 64},
    {0xE2, 3, U, 2048, 16, 64}, {0xE3, 3, U, 4096, 16, 64}, {0xE4, 3, U, 8192, 16, 64},
    {0xEA, 3, U, 12288, 24, 64},{0xEB, 3, U, 18432, 24, 64},{0xEC, 3, U, 24576, 24, 64},
};
// clang-format on

std::vector<CacheLevel> leaf2(const CpuInfo& cpu) {
  std::vector<CacheLevel> out;
  const auto r = cpu.raw.get(2);
  if (!r) return out;
  const std::uint32_t regs[4] = {r->eax, r->ebx, r->ecx, r->edx};
  for (unsigned reg = 0; reg < 4; ++reg) {
    if (regs[reg] >> 31) continue;  // bit 31 set: the register holds no descriptors
    for (unsigned b = reg == 0 ? 1 : 0; b < 4; ++b) {  // EAX[7:0] is the iteration count
      const auto code = static_cast<std::uint8_t>(regs[reg] >> (8 * b));
      for (const Descriptor& d : kDescriptors) {
        if (d.code != code) continue;
        CacheLevel c;
        c.level = d.level;
        // 49H is the L3 of the Xeon MP family 0FH model 06H, the L2 elsewhere.
        if (code == 0x49 && cpu.family == 0xF && cpu.model == 6) c.level = 3;
        c.type = d.type;
        c.geometry = CacheGeometry{std::uint64_t{d.kib} * kKiB, d.ways, d.line};
        out.push_back(c);
      }
    }
  }
  return out;
}

// Leaf 80000006H's L2/L3 associativity field (AMD64 APM vol. 3, CPUID Fn8000_0006).
std::optional<unsigned> leaf6_ways(unsigned field, std::uint64_t size, unsigned line) {
  switch (field) {
    case 0x1: return 1;
    case 0x2: return 2;
    case 0x3: return 3;
    case 0x4: return 4;
    case 0x5: return 6;
    case 0x6: return 8;
    case 0x8: return 16;
    case 0xA: return 32;
    case 0xB: return 48;
    case 0xC: return 64;
    case 0xD: return 96;
    case 0xE: return 128;
    case 0xF: return line ? static_cast<unsigned>(size / line) : 0;  // fully associative
    default: return std::nullopt;  // 0: disabled; 9: "see Fn8000_001D"; others reserved
  }
}

// Leaves 80000005H (the L1 caches) and 80000006H (the L2 and L3).
std::vector<CacheLevel> leaves_5_and_6(const CpuInfo& cpu) {
  std::vector<CacheLevel> out;
  if (const auto r = cpu.raw.get(0x80000005)) {
    // ECX: L1D, EDX: L1I: size KiB [31:24], ways [23:16] (FFH fully associative), line [7:0].
    for (const auto& [value, type] : {std::pair{r->ecx, CacheType::data}, std::pair{r->edx, CacheType::instruction}}) {
      const std::uint64_t size = std::uint64_t{value >> 24} * kKiB;
      const unsigned assoc = (value >> 16) & 0xFF, line = value & 0xFF;
      if (size == 0 || line == 0 || assoc == 0) continue;
      out.push_back({1, type, {size, assoc == 0xFF ? static_cast<unsigned>(size / line) : assoc, line}});
    }
  }
  if (const auto r = cpu.raw.get(0x80000006)) {
    // ECX: L2 size KiB [31:16], ways [15:12], line [7:0]; EDX: L3 size [31:18] x 512 KiB.
    const std::uint64_t l2 = std::uint64_t{r->ecx >> 16} * kKiB;
    const unsigned l2_line = r->ecx & 0xFF;
    if (const auto w = leaf6_ways((r->ecx >> 12) & 0xF, l2, l2_line); w && l2 && l2_line)
      out.push_back({2, CacheType::unified, {l2, *w, l2_line}});
    const std::uint64_t l3 = std::uint64_t{r->edx >> 18} * 512 * kKiB;
    const unsigned l3_line = r->edx & 0xFF;
    if (const auto w = leaf6_ways((r->edx >> 12) & 0xF, l3, l3_line); w && l3 && l3_line)
      out.push_back({3, CacheType::unified, {l3, *w, l3_line}});
  }
  return out;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

const char* level_name(unsigned level) { return level == 3 ? "L3" : level == 2 ? "L2" : "L1"; }

// The hierarchy from decoded levels; `missing` levels come from the default (noted).
std::optional<CacheHierarchy> from_levels(const std::vector<CacheLevel>& levels, const std::string& source) {
  const CacheLevel* l1i = nullptr;
  const CacheLevel* l1d = nullptr;
  const CacheLevel* ll = nullptr;
  for (const CacheLevel& c : levels) {
    if (c.level == 1 && c.type != CacheType::data && !l1i) l1i = &c;
    if (c.level == 1 && c.type != CacheType::instruction && !l1d) l1d = &c;
    if (c.level >= 2 && c.type != CacheType::instruction && (!ll || c.level > ll->level)) ll = &c;
  }
  if (!l1i && !l1d && !ll) return std::nullopt;
  CacheHierarchy h = default_cache_hierarchy();
  h.source = source;
  h.notes.clear();
  auto take = [&](const CacheLevel* c, CacheGeometry& into, const char* what) {
    if (c)
      into = c->geometry;
    else
      h.notes.push_back(fmt::format("{} gives no {}: the default's ({})", source, what, describe(into)));
  };
  take(l1i, h.l1i, "L1 instruction cache");
  take(l1d, h.l1d, "L1 data cache");
  take(ll, h.ll, "cache beyond L1");
  h.ll_level = ll ? ll->level : 2;
  std::vector<std::string> notes;
  h.l1i = detail::fit_for_valgrind(h.l1i, "L1 instruction cache", notes);
  h.l1d = detail::fit_for_valgrind(h.l1d, "L1 data cache", notes);
  h.ll = detail::fit_for_valgrind(h.ll, fmt::format("{} cache", level_name(h.ll_level)), notes);
  h.notes.insert(h.notes.end(), notes.begin(), notes.end());
  return h;
}

// The vendors whose extended leaves 8000001DH, 80000005H and 80000006H describe the caches (on
// others they are reserved or give less).
bool ext_cache_leaves(const CpuInfo& cpu) { return cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine"; }

}  // namespace

namespace detail {

CacheGeometry fit_for_valgrind(CacheGeometry g, std::string_view what, std::vector<std::string>& notes) {
  if (g.line < 16 || !std::has_single_bit(g.line))
    throw Error(errc::invalid_argument,
                fmt::format("the {} has {}-byte lines: Valgrind simulates lines of 16 bytes or more, a power of two",
                            what, g.line));
  if (g.ways == 0 || g.size < std::uint64_t{g.ways} * g.line)
    throw Error(errc::invalid_argument, fmt::format("the {} ({} bytes, {} ways, {}-byte lines) has no sets", what,
                                                    g.size, g.ways, g.line));
  const std::uint64_t way_bytes = std::uint64_t{g.ways} * g.line;
  const std::uint64_t sets = g.size / way_bytes;
  if (g.size % way_bytes == 0 && std::has_single_bit(sets)) return g;
  const std::uint64_t fitted = std::bit_floor(sets);
  CacheGeometry out{fitted * way_bytes, g.ways, g.line};
  notes.push_back(fmt::format("the {} ({}) has {} sets; simulated with {} ({}): Valgrind needs a power-of-two number "
                              "of sets",
                              what, describe(g), sets, fitted, size_text(out.size)));
  return out;
}

}  // namespace detail

std::string describe(const CacheGeometry& cache) {
  const bool full = cache.line && cache.size == std::uint64_t{cache.ways} * cache.line;
  return fmt::format("{}, {}, {}-byte lines", size_text(cache.size),
                     full ? std::string("fully associative") : fmt::format("{}-way", cache.ways), cache.line);
}

CacheHierarchy default_cache_hierarchy() {
  CacheHierarchy h;
  h.l1i = {32 * kKiB, 8, 64};
  h.l1d = {32 * kKiB, 8, 64};
  h.ll = {1 * kMiB, 16, 64};
  h.ll_level = 2;
  h.source = "default: the CPU description has no cache leaves";
  return h;
}

CacheHierarchy cache_hierarchy(const CpuInfo& given) {
  // A native reading holds the cache leaves only when asked for (hal/src/cpu/cpu_native.cpp, kNativeLeaves).
  CpuInfo native;
  const bool fill = given.isa == Isa::x86 && given.native();
  if (fill) {
    native = given;
    for (std::uint32_t leaf : {0x02u, 0x04u, 0x80000005u, 0x80000006u, 0x8000001Du}) detail::read_native_leaf(native, leaf, 0);
  }
  const CpuInfo& cpu = fill ? native : given;
  if (cpu.isa == Isa::x86) {
    if (cpu.max_leaf >= 4)
      if (auto h = from_levels(deterministic_leaf(cpu.raw, 4), "CPUID leaf 4")) return *h;
    // 8000001DH needs TopologyExtensions (CPUID 80000001H ECX[22]).
    const auto ext1 = cpu.raw.get(0x80000001);
    if (ext_cache_leaves(cpu) && cpu.max_ext_leaf >= 0x8000001D && ext1 && ((ext1->ecx >> 22) & 1u))
      if (auto h = from_levels(deterministic_leaf(cpu.raw, 0x8000001D), "CPUID leaf 8000001DH")) return *h;
    if (cpu.max_leaf >= 2)
      if (auto h = from_levels(leaf2(cpu), "CPUID leaf 2 descriptors")) return *h;
    if (ext_cache_leaves(cpu) && cpu.max_ext_leaf >= 0x80000005)
      if (auto h = from_levels(leaves_5_and_6(cpu), "CPUID leaves 80000005H/80000006H")) return *h;
  }
  return default_cache_hierarchy();
}

}  // namespace pmc
