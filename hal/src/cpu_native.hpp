// Reading this CPU where there is no CPUID: the pieces of read_native_cpu() for AArch64 Linux
// and other machines, parametrised by path so that the tests can feed them a fixture.
#pragma once

#include <pmc/cpu.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pmc::detail {

// MIDR_EL1 rebuilt from the first processor's "CPU implementer", "CPU variant", "CPU part" and
// "CPU revision" lines of Linux's /proc/cpuinfo on arm64 (Architecture = 0xF); nullopt when the
// implementer or the part is missing.
std::optional<std::uint32_t> midr_from_proc_cpuinfo(std::string_view text);
// The first (by name) Arm PMUv3 device Linux registered: <sysfs>/bus/event_source/devices/armv8*
// (armv8_pmuv3_0, armv8_cortex_a72, ...).
std::optional<std::string> arm_pmu_in_sysfs(const std::filesystem::path& sysfs_root);
// An AArch64 CpuInfo from <sysfs>/devices/system/cpu/cpu0/regs/identification/midr_el1, else
// from proc_cpuinfo; the PMU inferred from sysfs (ArmId::pmu_inferred). Never throws: what it
// cannot read it leaves at 0 ("unknown").
CpuInfo read_native_arm(const std::filesystem::path& proc_cpuinfo, const std::filesystem::path& sysfs_root);
// Neither x86 nor AArch64: Isa::other, the machine name from uname as the brand.
CpuInfo native_other();

}  // namespace pmc::detail
