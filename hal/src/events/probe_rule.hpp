// Whether a CPU is one a [[probe]] rule, or a row of a backend's cpu/ index, describes: vendor,
// display family, model and stepping ranges, CPUID fields set or clear, and the hybrid core type
// and native model of CPUID leaf 1AH. Backends' probe tables (probe_table, hal/src/plugins) and
// the per-CPU catalogs (cpu_catalogs.hpp) match the same way.
#pragma once

#include <pmc/catalog.hpp>
#include <pmc/cpu.hpp>

#include <cstdint>
#include <optional>

namespace pmc::detail {

// The value of a CPUID field of the CPU; 0 when the CPU does not report its leaf.
std::uint32_t cpuid_field_value(const CpuInfo& cpu, const CpuidField& f);

// The rule's vendors, families, models, steppings, cpuid_set and cpuid_clear all hold for the
// CPU (its tag, name and refusal are the caller's).
bool probe_rule_matches(const ProbeRule& r, const CpuInfo& cpu);

// The same, and the CPU's CPUID.1AH core type and native model ID are the given ones (when given;
// a CPU without leaf 1AH has 0 for both, which no hybrid core type is).
bool probe_rule_matches(const ProbeRule& r, const CpuInfo& cpu, std::optional<unsigned> core_type,
                        std::optional<std::uint32_t> native_model);

}  // namespace pmc::detail
