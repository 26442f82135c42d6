// Matching a CPU against a probe rule (probe_rule.hpp).
#include "probe_rule.hpp"

#include <algorithm>

namespace pmc::detail {

namespace {

bool in(const std::vector<ValueRange>& ranges, unsigned v) {
  if (ranges.empty()) return true;
  return std::any_of(ranges.begin(), ranges.end(), [&](const ValueRange& r) { return v >= r.low && v <= r.high; });
}

}  // namespace

std::uint32_t cpuid_field_value(const CpuInfo& cpu, const CpuidField& f) {
  const bool extended = f.leaf >= 0x80000000u;
  if (extended ? f.leaf > cpu.max_ext_leaf : f.leaf > cpu.max_leaf) return 0;
  const auto regs = cpu.raw.get(f.leaf, f.subleaf);
  if (!regs) return 0;
  const std::uint32_t word = f.reg == 0 ? regs->eax : f.reg == 1 ? regs->ebx : f.reg == 2 ? regs->ecx : regs->edx;
  const std::uint32_t mask = f.width >= 32 ? ~0u : (1u << f.width) - 1;
  return (word >> f.low) & mask;
}

bool probe_rule_matches(const ProbeRule& r, const CpuInfo& cpu) {
  if (!r.vendors.empty() && std::find(r.vendors.begin(), r.vendors.end(), cpu.vendor) == r.vendors.end()) return false;
  if (!in(r.families, cpu.family) || !in(r.models, cpu.model) || !in(r.steppings, cpu.stepping)) return false;
  if (!std::all_of(r.cpuid_set.begin(), r.cpuid_set.end(), [&](const CpuidField& f) { return cpuid_field_value(cpu, f) != 0; }))
    return false;
  return std::all_of(r.cpuid_clear.begin(), r.cpuid_clear.end(),
                     [&](const CpuidField& f) { return cpuid_field_value(cpu, f) == 0; });
}

bool probe_rule_matches(const ProbeRule& r, const CpuInfo& cpu, std::optional<unsigned> core_type,
                        std::optional<std::uint32_t> native_model) {
  if (core_type && cpu.core_type != *core_type) return false;
  if (native_model && cpu.native_model != *native_model) return false;
  return probe_rule_matches(r, cpu);
}

}  // namespace pmc::detail
