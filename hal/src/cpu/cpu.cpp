// CPU probing: CPUID answers -> CpuInfo. The decoding rules are the SDM's and AMD's:
//   - vendor: leaf 0 EBX, EDX, ECX (in that order), 4 little-endian bytes each;
//   - display family = base family EAX[11:8], plus extended family EAX[27:20] only when the
//     base family is 0FH;
//   - display model = base model EAX[7:4], plus extended model EAX[19:16] << 4 only when the
//     base family is 6 or 0FH;
//   - family and model come from leaf 1 only. AMD's 80000001H EAX repeats a signature, but on
//     K7 it says family 7 where leaf 1 says 6: it is never used here.
// Leaves beyond what leaf 0 / 80000000H advertise are ignored even when a dump has them.
// Reading CPUID natively is cpu_native.cpp's; AArch64, other machines and CPU description files
// are cpu_arm.cpp's; CPUID dump files cpuid_dump.cpp's.
#include "cpuid_bits.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>

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

using detail::bit;
using detail::bits;
using detail::kExtBase;
using detail::kHybridLeaf;

constexpr std::uint32_t kArchPerfmonLeaf = 0x0A;
constexpr std::uint32_t kAmdPerfmonLeaf = 0x80000022;

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

namespace detail {

void decode_hybrid_leaf(CpuInfo& cpu, const CpuidTable& table) {
  cpu.core_type = 0;
  cpu.native_model = 0;
  if (cpu.max_leaf < kHybridLeaf) return;
  if (const auto leaf = table.get(kHybridLeaf)) {
    cpu.core_type = bits(leaf->eax, 31, 24);
    cpu.native_model = bits(leaf->eax, 23, 0);
  }
}

void decode_brand(CpuInfo& cpu, const CpuidTable& table) {
  if (cpu.max_ext_leaf < 0x80000004) return;
  const auto b2 = table.get(0x80000002);
  const auto b3 = table.get(0x80000003);
  const auto b4 = table.get(0x80000004);
  if (!b2 || !b3 || !b4) return;
  std::string brand;
  for (const auto* r : {&*b2, &*b3, &*b4}) {
    append_bytes(brand, r->eax);
    append_bytes(brand, r->ebx);
    append_bytes(brand, r->ecx);
    append_bytes(brand, r->edx);
  }
  cpu.brand = clean_string(std::move(brand));
}

}  // namespace detail

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
  detail::decode_hybrid_leaf(cpu, table);
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
  detail::decode_brand(cpu, table);

  cpu.raw = std::move(table);
  cpu.source = std::move(source);
  return cpu;
}

std::string describe(const CpuInfo& cpu) {
  std::string out;
  if (cpu.isa == Isa::aarch64)
    out = fmt::format("{} part {:#05x} r{}p{}", cpu.vendor.empty() ? std::string("unknown") : cpu.vendor, cpu.arm.part,
                      cpu.arm.variant, cpu.arm.revision);
  else if (cpu.isa == Isa::other)
    out = fmt::format("{} CPU", cpu.vendor.empty() ? std::string("unknown") : cpu.vendor);
  else
    out = fmt::format("{} family {} model {} stepping {}", cpu.vendor.empty() ? std::string("unknown-vendor") : cpu.vendor,
                      cpu.family, cpu.model, cpu.stepping);
  if (!cpu.brand.empty()) out += fmt::format(" ({})", cpu.brand);
  return out;
}

}  // namespace pmc
