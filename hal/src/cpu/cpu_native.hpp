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

// This machine's CPU, read once per process (read_native_cpu): the answers do not change, and in
// a virtual machine every CPUID instruction traps to the hypervisor (about 6 us each on the
// project's KVM guests, 65 of them for a whole table: docs/performance.md). Everything in the
// library that needs a native leaf asks this table rather than executing CPUID again. On x86 it
// has no brand (CpuInfo::brand empty, leaves 80000002H-80000004H absent): complete_brand() adds
// it where it is asked for. Throws what read_native_cpu() throws (and tries again at the next
// call).
const CpuInfo& native_cpu();
// Whether native_cpu() has been read already (so that asking costs nothing).
bool native_cpu_read();
// The brand string of a native x86 reading that has none yet (native_cpu()'s, and the copies
// Hal::open makes of it): its three leaves, read once per process, into cpu.raw, and
// CpuInfo::brand decoded from them. Nothing for a CPU read from a file, off x86, or a CPU whose
// 80000000H says it has no brand. Not thread-safe on one CpuInfo: Hal::cpu() and
// Context::complete_cpu() call it once each, before anyone else reads the reading's brand.
void complete_brand(CpuInfo& cpu);
// Whether the brand's leaves have been read in this process (a test's question).
bool native_brand_read();
// A native reading holds the leaves the library decodes and reads (cpu_native.cpp,
// kNativeLeaves), not every one: this reads `leaf` (with the subleaves it defines) into `cpu`
// when the CPU is this machine's, the leaf exists, and the reading lacks it (Hal::open: the
// leaves a backend's probe table names). Nothing for a CPUID dump or off x86.
void read_native_leaf(CpuInfo& cpu, std::uint32_t leaf, std::uint32_t subleaf);

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
