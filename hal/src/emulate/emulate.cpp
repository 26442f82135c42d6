// Emulated counting (docs/emulation.md): a real program's activity, as Valgrind's cachegrind
// simulates it, counted by a backend's device model.
//   1. cache_hierarchy(): the chosen CPU's caches from its CPUID (leaf 4, 8000001DH, leaf 2,
//      80000005H/6H), fitted to what Valgrind can simulate;
//   2. run_under_valgrind(): the program under cachegrind with those caches and branch
//      simulation; parse_cachegrind() reads its output (per function and source line);
//   3. emulated_signals(): which device-model signals that activity becomes, per model;
//   4. check_emulated_event(): whether an event counts only that activity, in proportion (black
//      box: it is run on the model);
//   5. count_emulated(): each event alone on the model, line by line.
#include <pmc/emulate.hpp>

#include "cpu_native.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unordered_map>

namespace pmc {

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * 1024;

// What the emulation provides, for messages.
constexpr std::string_view kProvides =
    "the program's user-mode instructions, loads, stores, conditional and indirect branches and their "
    "mispredictions, and L1 instruction, L1 data and last-level cache misses, as Valgrind's cachegrind "
    "simulates them";

struct QuantityInfo {
  std::string_view name;
  std::string_view description;
};
constexpr std::array<QuantityInfo, kQuantities> kQuantityInfo{{
    {"Ir", "instructions executed"},
    {"Dr", "data reads"},
    {"Dw", "data writes"},
    {"I1mr", "L1 instruction-cache misses"},
    {"D1mr", "L1 data-cache read misses"},
    {"D1mw", "L1 data-cache write misses"},
    {"ILmr", "last-level misses of instruction fetches"},
    {"DLmr", "last-level misses of data reads"},
    {"DLmw", "last-level misses of data writes"},
    {"Bc", "conditional branches"},
    {"Bcm", "conditional branches mispredicted"},
    {"Bi", "indirect jumps and calls"},
    {"Bim", "indirect jumps and calls mispredicted"},
}};

std::optional<Quantity> quantity_of(std::string_view name) {
  for (std::size_t i = 0; i < kQuantities; ++i)
    if (kQuantityInfo[i].name == name) return static_cast<Quantity>(i);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Cache geometry from CPUID (docs/emulation.md, "Cache geometry", which cites the manuals).

enum class CacheType { data, instruction, unified };

struct CacheLevel {
  unsigned level = 0;
  CacheType type = CacheType::unified;
  CacheGeometry geometry;
};

// Leaf 4 (Intel) and leaf 8000001DH (AMD) share one layout: EAX[4:0] type (0 none, 1 data,
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

// AMD leaf 80000006H L2/L3 associativity field (AMD64 APM vol. 3, CPUID Fn8000_0006).
std::optional<unsigned> amd_ways(unsigned field, std::uint64_t size, unsigned line) {
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

std::vector<CacheLevel> amd_legacy(const CpuInfo& cpu) {
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
    if (const auto w = amd_ways((r->ecx >> 12) & 0xF, l2, l2_line); w && l2 && l2_line)
      out.push_back({2, CacheType::unified, {l2, *w, l2_line}});
    const std::uint64_t l3 = std::uint64_t{r->edx >> 18} * 512 * kKiB;
    const unsigned l3_line = r->edx & 0xFF;
    if (const auto w = amd_ways((r->edx >> 12) & 0xF, l3, l3_line); w && l3 && l3_line)
      out.push_back({3, CacheType::unified, {l3, *w, l3_line}});
  }
  return out;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

// Fits one cache to Valgrind: a power-of-two line of at least 16 bytes (else an error), a
// power-of-two number of sets (rounded down, noted).
CacheGeometry fit(CacheGeometry g, std::string_view what, std::vector<std::string>& notes) {
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
  h.l1i = fit(h.l1i, "L1 instruction cache", notes);
  h.l1d = fit(h.l1d, "L1 data cache", notes);
  h.ll = fit(h.ll, fmt::format("{} cache", level_name(h.ll_level)), notes);
  h.notes.insert(h.notes.end(), notes.begin(), notes.end());
  return h;
}

bool amd_like(const CpuInfo& cpu) { return cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine"; }

// ---------------------------------------------------------------------------------------------
// The cachegrind output file.

[[noreturn]] void bad_line(const std::string& source, std::size_t line, std::string_view message) {
  throw Error(errc::parse, fmt::format("{}:{}: {}", source, line, message));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The numbers of a count or summary line.
std::vector<std::uint64_t> numbers(std::string_view text, const std::string& source, std::size_t line) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i == text.size()) break;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r') ++j;
    std::uint64_t v = 0;
    if (j == i + 1 && text[i] == '.') {  // "." is a zero
      out.push_back(0);
      i = j;
      continue;
    }
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, v);
    if (ec == std::errc::result_out_of_range)
      bad_line(source, line, fmt::format("count '{}' does not fit in 64 bits", text.substr(i, j - i)));
    if (ec != std::errc() || end != text.data() + j)
      bad_line(source, line, fmt::format("'{}' is not a count (a decimal number or '.')", text.substr(i, j - i)));
    out.push_back(v);
    i = j;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Signals.

enum class Condition { none, ll_is_l2, zen };

struct Rule {
  std::string_view model;  // "" = every model
  std::string_view signal;
  std::vector<Quantity> terms;
  std::string_view meaning;
  std::string_view note;
  Condition condition = Condition::none;
};

constexpr std::string_view kBranchNote =
    "Valgrind counts conditional branches and indirect jumps and calls only: direct jumps, direct calls and "
    "returns, which the real event also counts, are not included; a REP-prefixed string instruction adds one "
    "conditional branch per iteration";
constexpr std::string_view kMispredictNote =
    "mispredicted by Valgrind's predictor (16,384 2-bit counters indexed by address and recent branch history; "
    "indirect: a 512-entry last-target table), not the CPU's";
constexpr std::string_view kInstructionNote =
    "a REP-prefixed string instruction counts once per iteration (the CPU retires it once)";
constexpr std::string_view kMemoryNote =
    "a read-modify-write instruction counts as one read (Valgrind counts it so); REP string instructions once per "
    "iteration";
constexpr std::string_view kCacheNote =
    "in Valgrind's simulated caches (LRU, write-allocate, no prefetching), with this CPU's geometry";
constexpr std::string_view kL2Reason =
    "it counts L2 misses or requests reaching the last level; the emulation simulates two cache levels (L1 and the "
    "last), and this CPU's last level is its L3, with an L2 between";

using Q = Quantity;
const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      // Every model: the generic signals of docs/workload-format.md.
      {"", "instructions", {Q::Ir}, "instructions", kInstructionNote},
      {"", "branches", {Q::Bc, Q::Bi}, "conditional branches, indirect jumps and calls", kBranchNote},
      {"", "branch-misses", {Q::Bcm, Q::Bim}, "mispredicted conditional branches, indirect jumps and calls",
       kMispredictNote},
      {"", "loads", {Q::Dr}, "data reads", kMemoryNote},
      {"", "stores", {Q::Dw}, "data writes", kMemoryNote},
      {"", "l1i-misses", {Q::I1mr}, "L1 instruction-cache misses", kCacheNote},
      {"", "l1d-misses", {Q::D1mr, Q::D1mw}, "L1 data-cache misses", kCacheNote},
      // P6 (docs/hardware/p6.md section 5): the events' own signals.
      {"p6", "data_mem_refs", {Q::Dr, Q::Dw}, "loads and stores", kMemoryNote},
      {"p6", "dcu_lines_in", {Q::D1mr, Q::D1mw}, "lines allocated in the L1 data cache (its misses)", kCacheNote},
      {"p6", "ifu_ifetch_miss", {Q::I1mr}, "L1 instruction-cache misses", kCacheNote},
      {"p6", "l2_lines_in", {Q::ILmr, Q::DLmr, Q::DLmw}, "lines allocated in the L2 (its misses)", kCacheNote,
       Condition::ll_is_l2},
      // P5 (docs/hardware/p5.md section 5).
      {"p5", "data_read", {Q::Dr}, "data reads", kMemoryNote},
      {"p5", "data_write", {Q::Dw}, "data writes", kMemoryNote},
      {"p5", "data_read_or_write", {Q::Dr, Q::Dw}, "data reads and writes", kMemoryNote},
      {"p5", "data_read_miss", {Q::D1mr}, "L1 data-cache read misses", kCacheNote},
      {"p5", "data_write_miss", {Q::D1mw},
       "L1 data-cache write misses",
       "in Valgrind's simulated caches, which allocate on a write miss (the Pentium's does not: repeated writes to a "
       "missing line each miss there)"},
      {"p5", "data_read_miss_or_write_miss", {Q::D1mr, Q::D1mw}, "L1 data-cache misses", kCacheNote},
      {"p5", "code_cache_miss", {Q::I1mr}, "L1 instruction-cache misses", kCacheNote},
      // Intel architectural performance monitoring (docs/hardware/archperf.md).
      {"archperf", "llc-references", {Q::I1mr, Q::D1mr, Q::D1mw}, "requests reaching the last level (L1 misses)",
       kCacheNote, Condition::ll_is_l2},
      {"archperf", "llc-misses", {Q::ILmr, Q::DLmr, Q::DLmw}, "last-level misses", kCacheNote},
      // AMD (docs/hardware/amd.md 6.1, 6.3): the generic signals, and Zen's retired conditional branches.
      {"amd", "cache-references", {Q::I1mr, Q::D1mr, Q::D1mw}, "requests to the L2 (L1 misses)",
       "in Valgrind's simulated caches (LRU, write-allocate); the CPU's prefetch requests are not included"},
      {"amd", "cache-misses", {Q::ILmr, Q::DLmr, Q::DLmw}, "L2 misses", kCacheNote, Condition::ll_is_l2},
      {"amd", "amd.0x0D1.0x00", {Q::Bc}, "retired conditional branches",
       "a REP-prefixed string instruction adds one per iteration in Valgrind", Condition::zen},
  };
  return r;
}

std::uint64_t sum_terms(const Activity& a, const std::vector<Quantity>& terms) {
  std::uint64_t total = 0;
  for (Quantity q : terms) {
    if (a[q] > std::numeric_limits<std::uint64_t>::max() - total)
      throw Error(errc::invalid_argument, "an emulated signal's total exceeds 2^64 - 1");
    total += a[q];
  }
  return total;
}

std::string terms_text(const std::vector<Quantity>& terms) {
  std::string out;
  for (Quantity q : terms) out += (out.empty() ? "" : " + ") + std::string(quantity_name(q));
  return out;
}

void require_sim(const Hal& hal) {
  (void)hal.require_backend();
  if (hal.access() != "sim")
    throw Error(errc::not_supported,
                fmt::format("emulated counting runs on the simulated PMU (access \"sim\"), not access \"{}\"",
                            hal.access()));
}

// One probe of an event on the model: a fresh session (no edge-detector memory carried over)
// running the segments.
struct ProbeSegment {
  std::uint64_t cycles = 1;
  Mode mode = Mode::user;
  std::vector<SignalCount> signals;
};

std::uint64_t probe(const Hal& hal, std::string_view event, const std::vector<ProbeSegment>& segments) {
  Session s = hal.session();
  s.add(event);
  Workload w;
  for (const ProbeSegment& p : segments) {
    Segment seg;
    seg.cycles = p.cycles;
    seg.mode = p.mode;
    seg.signals = p.signals;
    w.add(seg);
  }
  s.run(w);
  return s.read().front().value;
}

// The modifiers of an event string that set anything besides the privilege levels and the
// sampling period (shown when an event's count is not proportional to the activity).
std::string shaping_modifiers(const Hal& hal, const EventSpec& spec) {
  std::string out;
  auto add = [&](std::string_view name, std::optional<std::uint64_t> value) {
    out += fmt::format("{}:{}{}", out.empty() ? "" : " ", name, value ? fmt::format("={}", *value) : "");
  };
  for (const EventModifier& m : spec.modifiers) {
    if (m.name == "u" || m.name == "k" || m.name == "period") continue;
    if (m.value && *m.value == 0) continue;
    add(m.name, m.value);
  }
  // A bare word is parsed as a unit mask; the encoder reads it as a flag when the backend
  // declares a modifier of that name (the Pentium's :d).
  for (const std::string& w : spec.unit_masks)
    if (const ModifierDef* d = hal.events().modifier(w); d && d->refusal.empty() && w != "u" && w != "k") add(w, {});
  return out;
}

EmulationVerdict refuse(std::string reason) {
  EmulationVerdict v;
  v.reason = std::move(reason);
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string_view quantity_name(Quantity q) { return kQuantityInfo.at(static_cast<std::size_t>(q)).name; }
std::string_view quantity_description(Quantity q) { return kQuantityInfo.at(static_cast<std::size_t>(q)).description; }

Activity& Activity::operator+=(const Activity& other) {
  for (std::size_t i = 0; i < kQuantities; ++i) {
    if (other.counts[i] > std::numeric_limits<std::uint64_t>::max() - counts[i])
      throw Error(errc::invalid_argument,
                  fmt::format("the total of {} exceeds 2^64 - 1", kQuantityInfo[i].name));
    counts[i] += other.counts[i];
  }
  return *this;
}

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
  // A native reading holds the cache leaves only when asked for (cpu.cpp, kNativeLeaves).
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
    if (amd_like(cpu) && cpu.max_ext_leaf >= 0x8000001D && ext1 && ((ext1->ecx >> 22) & 1u))
      if (auto h = from_levels(deterministic_leaf(cpu.raw, 0x8000001D), "CPUID leaf 8000001DH")) return *h;
    if (cpu.max_leaf >= 2)
      if (auto h = from_levels(leaf2(cpu), "CPUID leaf 2 descriptors")) return *h;
    if (amd_like(cpu) && cpu.max_ext_leaf >= 0x80000005)
      if (auto h = from_levels(amd_legacy(cpu), "CPUID leaves 80000005H/80000006H")) return *h;
  }
  return default_cache_hierarchy();
}

// ---------------------------------------------------------------------------------------------

const FunctionActivity* ProgramActivity::function(std::string_view name) const {
  for (const FunctionActivity& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

ProgramActivity parse_cachegrind(std::string_view text, const std::string& source) {
  ProgramActivity out;
  out.source = source;
  std::vector<std::optional<Quantity>> columns;  // per event of the file: its quantity, if known
  bool have_events = false, have_summary = false;
  std::string file;
  constexpr std::size_t kNoFunction = std::numeric_limits<std::size_t>::max();
  std::size_t function = kNoFunction;  // the current fn= (an index into out.functions)
  std::unordered_map<std::string, std::size_t> function_index;
  std::map<std::tuple<std::size_t, std::string, std::uint64_t>, std::size_t> line_index;
  // Instructions per (function, file): the file a function is named after.
  std::map<std::pair<std::size_t, std::string>, std::uint64_t> ir_by_file;
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    if (have_summary) bad_line(source, number, "text after the summary: line");
    auto starts = [&](std::string_view prefix) { return line.substr(0, prefix.size()) == prefix; };
    if (starts("desc:")) {
      out.description.emplace_back(trim(line.substr(5)));
    } else if (starts("cmd:")) {
      out.command = std::string(trim(line.substr(4)));
    } else if (starts("events:")) {
      if (have_events) bad_line(source, number, "a second events: line");
      have_events = true;
      std::string_view rest = line.substr(7);
      std::size_t i = 0;
      while (i < rest.size()) {
        while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
        if (i == rest.size()) break;
        std::size_t j = i;
        while (j < rest.size() && rest[j] != ' ' && rest[j] != '\t') ++j;
        const auto q = quantity_of(rest.substr(i, j - i));
        if (q && out.present[static_cast<std::size_t>(*q)])
          bad_line(source, number, fmt::format("event '{}' is named twice", rest.substr(i, j - i)));
        if (q) out.present[static_cast<std::size_t>(*q)] = true;
        columns.push_back(q);
        i = j;
      }
      if (columns.empty()) bad_line(source, number, "the events: line names no event");
    } else if (starts("fl=")) {
      file = std::string(line.substr(3));
      function = kNoFunction;
    } else if (starts("fn=")) {
      const std::string name(line.substr(3));
      auto [it, added] = function_index.emplace(name, out.functions.size());
      if (added) out.functions.push_back({name, {}, {}});
      function = it->second;
    } else if (starts("summary:")) {
      if (!have_events) bad_line(source, number, "summary: before the events: line");
      const auto v = numbers(line.substr(8), source, number);
      if (v.size() > columns.size())
        bad_line(source, number,
                 fmt::format("the summary has {} counts for {} events", v.size(), columns.size()));
      for (std::size_t i = 0; i < v.size(); ++i)  // missing trailing counts are 0
        if (columns[i]) out.total[*columns[i]] = v[i];
      have_summary = true;
    } else if (line.front() >= '0' && line.front() <= '9') {
      if (!have_events) bad_line(source, number, "a count line before the events: line");
      if (function == kNoFunction) bad_line(source, number, "a count line outside a function (no fn= line before it)");
      auto v = numbers(line, source, number);
      const std::uint64_t line_number = v.front();
      v.erase(v.begin());
      if (v.size() > columns.size())
        bad_line(source, number, fmt::format("{} counts for {} events", v.size(), columns.size()));
      Activity a;
      for (std::size_t i = 0; i < v.size(); ++i)  // missing trailing counts are 0
        if (columns[i]) a[*columns[i]] = v[i];
      const std::string& name = file.empty() ? std::string("???") : file;
      auto [it, added] = line_index.emplace(std::tuple{function, name, line_number}, out.lines.size());
      if (added) out.lines.push_back({function, name, line_number, {}});
      out.lines[it->second].activity += a;
      out.functions[function].activity += a;
      ir_by_file[{function, name}] += a[Quantity::Ir];
    } else {
      bad_line(source, number, fmt::format("unexpected line '{}' (expected desc:, cmd:, events:, fl=, fn=, a count "
                                           "line or summary:)",
                                           line.substr(0, 60)));
    }
  }
  if (!have_events) throw Error(errc::parse, fmt::format("{}: no events: line (not a cachegrind output file?)", source));
  if (!have_summary)
    throw Error(errc::parse, fmt::format("{}: no summary: line (the file is incomplete: did Valgrind finish?)", source));
  Activity sum;
  for (const SourceLine& l : out.lines) sum += l.activity;
  for (std::size_t i = 0; i < kQuantities; ++i) {
    if (out.present[i] && sum.counts[i] != out.total.counts[i])
      throw Error(errc::parse, fmt::format("{}: the lines add up to {} {}, the summary says {}", source,
                                           sum.counts[i], kQuantityInfo[i].name, out.total.counts[i]));
  }
  std::vector<std::uint64_t> best(out.functions.size(), 0);
  for (const auto& [key, ir] : ir_by_file) {
    FunctionActivity& f = out.functions[key.first];
    if (f.file.empty() || ir > best[key.first]) {
      f.file = key.second;
      best[key.first] = ir;
    }
  }
  return out;
}

ProgramActivity load_cachegrind(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(errc::io, fmt::format("{}: cannot read: {}", file.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cachegrind(text.str(), file.string());
}

// ---------------------------------------------------------------------------------------------

namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pmc-emulate-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error(errc::io, fmt::format("cannot create a temporary directory {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string valgrind_cache(const CacheGeometry& g) { return fmt::format("{},{},{}", g.size, g.ways, g.line); }

// The lines of Valgrind's log that say what went wrong (its own, not the summary).
std::string log_excerpt(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    std::string_view v = line;
    const std::string_view mark = v.substr(0, 2);
    if (mark == "==" || mark == "--") {  // "==123== text", "--123-- text"
      const std::size_t close = v.find(mark, 2);
      v = close == std::string_view::npos ? std::string_view() : trim(v.substr(close + 2));
    }
    if (!v.empty()) last = std::string(v);
  }
  return last;
}

std::string valgrind_version(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("Using Valgrind-");
    if (at == std::string::npos) continue;
    std::string v = line.substr(at + 6);
    v = v.substr(0, v.find(' '));
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  }
  return {};
}

}  // namespace

EmulatedRun run_under_valgrind(const std::vector<std::string>& argv, const CacheHierarchy& caches,
                               const ValgrindOptions& options) {
  if (argv.empty()) throw Error(errc::invalid_argument, "no program to run under Valgrind");
  (void)find_executable(argv.front());  // the program's own error, before Valgrind's
  std::filesystem::path valgrind;
  try {
    valgrind = find_executable(options.valgrind);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("emulated counting runs the program under Valgrind's cachegrind, and {} "
                                      "(install Debian's valgrind package)",
                                      e.what()));
  }
  std::vector<std::string> notes;
  // Fitted again: a hierarchy made by hand must fit Valgrind too (a fitted one is unchanged).
  const CacheGeometry l1i = fit(caches.l1i, "L1 instruction cache", notes);
  const CacheGeometry l1d = fit(caches.l1d, "L1 data cache", notes);
  const CacheGeometry ll = fit(caches.ll, "last-level cache", notes);
  TempDir dir;
  const std::filesystem::path out = dir.path() / "cachegrind.out";
  const std::filesystem::path log = dir.path() / "valgrind.log";
  EmulatedRun run;
  run.caches = caches;
  run.caches.l1i = l1i;
  run.caches.l1d = l1d;
  run.caches.ll = ll;
  run.caches.notes.insert(run.caches.notes.end(), notes.begin(), notes.end());
  run.command = {valgrind.string(),
                 "--tool=cachegrind",
                 "--command-line-only=yes",  // no ~/.valgrindrc, ./.valgrindrc or $VALGRIND_OPTS
                 "--cache-sim=yes",
                 "--branch-sim=yes",
                 "--I1=" + valgrind_cache(l1i),
                 "--D1=" + valgrind_cache(l1d),
                 "--LL=" + valgrind_cache(ll),
                 "--cachegrind-out-file=" + out.string(),
                 "--log-file=" + log.string(),
                 "--"};
  run.command.insert(run.command.end(), argv.begin(), argv.end());
  run.child = run_child(run.command);
  run.valgrind = valgrind_version(log);
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) {
    const std::string said = log_excerpt(log);
    throw Error(errc::io, fmt::format("Valgrind wrote no cachegrind output for '{}' (it exited with status {}){}",
                                      argv.front(), run.child.exit_status,
                                      said.empty() ? std::string() : ": " + said));
  }
  run.activity = load_cachegrind(out);
  if (!options.keep.empty()) {
    std::filesystem::copy_file(out, options.keep, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec)
      throw Error(errc::io, fmt::format("{}: cannot write cachegrind's output there: {}", options.keep.string(),
                                        ec.message()));
  }
  return run;
}

// ---------------------------------------------------------------------------------------------

std::string SignalMap::describe() const {
  std::string out;
  for (const EmulatedSignal& s : signals) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.signal, terms_text(s.terms));
  return out;
}

SignalMap emulated_signals(const Hal& hal, const CacheHierarchy& caches) {
  (void)hal.require_backend();
  SignalMap map;
  map.model = hal.pmu().device_model;
  const CpuInfo& cpu = hal.cpu();
  const bool zen = amd_like(cpu) && cpu.family >= 0x17;
  for (const Rule& r : rules()) {
    if (!r.model.empty() && r.model != map.model) continue;
    if (r.condition == Condition::zen && !zen) continue;
    if (r.condition == Condition::ll_is_l2 && caches.ll_level != 2) {
      map.withheld.push_back({std::string(r.signal), std::string(kL2Reason)});
      continue;
    }
    map.signals.push_back({std::string(r.signal), r.terms, std::string(r.meaning),
                           std::string(r.note)});
  }
  return map;
}

EmulationVerdict check_emulated_event(const Hal& hal, const SignalMap& map, std::string_view event) {
  require_sim(hal);
  const EventSpec spec = parse_event(event);
  for (const EventModifier& m : spec.modifiers) {
    if ((m.name == "e" || m.name == "i" || m.name == "c") && (!m.value || *m.value != 0))
      return refuse(fmt::format(
          "with :{} its count depends on how the events spread over cycles (edge detection, inversion and counter "
          "masks look at each cycle), and the emulation knows the totals only",
          m.name));
  }
  {
    Session s = hal.session();
    s.add(event);
    if (s.read().front().hal)
      return refuse("it is a HAL event (time or an OS count of this process), not the emulated program's");
  }
  std::vector<Signal> ids;
  for (const EmulatedSignal& s : map.signals) ids.push_back(signal(s.signal));
  const std::string shaping = shaping_modifiers(hal, spec);
  const std::string with = shaping.empty() ? std::string() : fmt::format(" with {}", shaping);

  if (probe(hal, event, {{2, Mode::user, {}}}) != 0)
    return refuse(fmt::format(
        "it counts{} in cycles without any activity: it counts cycles or a duration (stalls, bus or timing events), "
        "and the emulation has no time",
        with));
  std::vector<SignalCount> all;
  for (Signal id : ids) all.push_back({id, 1});
  const std::uint64_t together = probe(hal, event, {{1, Mode::user, all}});
  EmulationVerdict v;
  if (together != 0) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint64_t a11 = probe(hal, event, {{1, Mode::user, {{ids[i], 1}}}});
      const std::uint64_t a21 = probe(hal, event, {{2, Mode::user, {{ids[i], 1}}}});
      const std::uint64_t a12 = probe(hal, event, {{1, Mode::user, {{ids[i], 2}}}});
      if (a11 == 0 && a21 == 0 && a12 == 0) continue;
      if (a11 == 0 || a21 != 2 * a11 || a12 != 2 * a11)
        return refuse(fmt::format(
            "its count{} of {} is not in proportion to the occurrences (1 per cycle for 1 cycle: {}, for 2 "
            "cycles: {}; 2 in 1 cycle: {}): it depends on how they spread over cycles, which the emulation does not "
            "know",
            with, map.signals[i].signal, a11, a21, a12));
      v.reads.emplace_back(map.signals[i].signal, a11);
      sum += a11;
    }
    if (!v.reads.empty() && sum != together)
      return refuse(fmt::format("its count{} of the signals together ({}) is not the sum of their counts apart ({})",
                                with, together, sum));
    if (v.reads.empty())
      return refuse(fmt::format("its count{} depends on how the activity spreads over cycles", with));
    v.producible = true;
    return v;
  }
  for (const WithheldSignal& w : map.withheld)
    if (probe(hal, event, {{1, Mode::user, {{signal(w.signal), 1}}}}) != 0)
      return refuse(fmt::format("it counts the {} signal: {}", w.signal, w.reason));
  if (!all.empty() && probe(hal, event, {{1, Mode::kernel, all}}) != 0)
    return refuse("it counts kernel mode only, and the emulation sees the program's user mode only");
  return refuse(fmt::format("it counts{} none of the activity the emulation provides", with));
}

std::vector<std::string> emulated_events(const Hal& hal, const SignalMap& map) {
  require_sim(hal);
  std::vector<std::string> out;
  for (const EventDef* def : hal.events().for_cpu(hal.pmu().cpu_tag)) {
    if (std::find(out.begin(), out.end(), def->name) != out.end()) continue;
    try {
      if (check_emulated_event(hal, map, def->name).producible) out.push_back(def->name);
    } catch (const Error&) {
      // needs a unit mask, or not on this CPU: not counted with its defaults
    }
  }
  return out;
}

namespace {

// Counts one event over every line of the activity.
void count_one(const Hal& hal, const SignalMap& map, const ProgramActivity& activity, EmulatedEvent& result,
               std::vector<std::uint64_t>& per_line) {
  std::vector<Signal> ids;
  for (const EmulatedSignal& s : map.signals) ids.push_back(signal(s.signal));
  Session session = hal.session();
  session.add(result.event);
  per_line.assign(activity.lines.size(), 0);
  Workload w;
  w.reserve(ids.size(), ids.size() * ids.size());
  std::vector<std::pair<std::uint64_t, Signal>> totals;
  std::vector<SignalCount> signals;
  std::uint64_t value = 0, previous = 0;
  WorkloadRun last;
  session.start();
  for (std::size_t i = 0; i < activity.lines.size(); ++i) {
    // The line's totals as a staircase: while a signal's total is not reached it occurs once per
    // cycle, so the segments' cycles are the largest total and every rule that adds
    // cycles x occurrences counts each total exactly.
    totals.clear();
    for (std::size_t s = 0; s < ids.size(); ++s) {
      const std::uint64_t t = sum_terms(activity.lines[i].activity, map.signals[s].terms);
      if (t) totals.emplace_back(t, ids[s]);
    }
    if (totals.empty()) continue;
    std::sort(totals.begin(), totals.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    w.clear();
    std::uint64_t done = 0;
    for (std::size_t k = 0; k < totals.size(); ++k) {
      if (totals[k].first == done) continue;
      signals.clear();
      for (std::size_t j = k; j < totals.size(); ++j) signals.push_back({totals[j].second, 1});
      Segment seg;
      seg.cycles = totals[k].first - done;
      seg.mode = Mode::user;
      seg.signals = signals;
      w.add(seg);
      done = totals[k].first;
    }
    last = session.run(w);
    session.read(std::span<std::uint64_t>(&value, 1));
    per_line[i] = value - previous;
    previous = value;
  }
  session.stop();
  result.reading = session.read().front();
  result.reading.time_enabled = result.reading.time_running = 0;
  result.interrupts = last.interrupts;
}

}  // namespace

namespace {

// The verdict of each event, with the check that the signals it reads are in the activity (a
// cachegrind run without branch or cache simulation lacks some); throws for refused ones.
std::vector<EmulationVerdict> verdicts(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events,
                                       const ProgramActivity* activity) {
  std::vector<EmulationVerdict> out;
  std::string refused;
  for (const std::string& e : events) {
    EmulationVerdict v = check_emulated_event(hal, map, e);
    if (v.producible && activity) {
      std::string missing;
      for (const auto& read : v.reads) {
        const auto it = std::find_if(map.signals.begin(), map.signals.end(),
                                     [&](const EmulatedSignal& s) { return s.signal == read.first; });
        for (Quantity q : it->terms)
          if (!activity->present[static_cast<std::size_t>(q)])
            missing += fmt::format("{}{} ({})", missing.empty() ? "" : ", ", quantity_name(q), quantity_description(q));
      }
      if (!missing.empty()) {
        v.producible = false;
        v.reason = fmt::format("{} has no {}: Valgrind ran without that simulation", activity->source, missing);
      }
    }
    if (!v.producible) refused += fmt::format("{}cannot emulate {}: {}", refused.empty() ? "" : "; ", e, v.reason);
    out.push_back(std::move(v));
  }
  if (!refused.empty()) {
    std::string list;
    for (const std::string& c : emulated_events(hal, map)) list += (list.empty() ? "" : ", ") + c;
    throw Error(errc::not_supported,
                fmt::format("{}. The emulation provides {}; on the {} model: {}; events that count them on this CPU: "
                            "{}",
                            refused, kProvides, map.model, map.describe(), list.empty() ? "none" : list));
  }
  return out;
}

}  // namespace

void require_emulated_events(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events) {
  require_sim(hal);
  (void)verdicts(hal, map, events, nullptr);
}

EmulatedCounts count_emulated(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events,
                              const ProgramActivity& activity) {
  require_sim(hal);
  EmulatedCounts out;
  std::vector<EmulationVerdict> v = verdicts(hal, map, events, &activity);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EmulatedEvent ev;
    ev.event = events[i];
    ev.reads = std::move(v[i].reads);
    out.events.push_back(std::move(ev));
  }
  out.per_line.resize(out.events.size());
  out.per_function.resize(out.events.size());
  for (std::size_t e = 0; e < out.events.size(); ++e) {
    count_one(hal, map, activity, out.events[e], out.per_line[e]);
    out.per_function[e].assign(activity.functions.size(), 0);
    for (std::size_t i = 0; i < activity.lines.size(); ++i)
      out.per_function[e][activity.lines[i].function] += out.per_line[e][i];
  }
  return out;
}

}  // namespace pmc
