// Access "msr": the backend's driver programs the PMU directly through Linux's MSR device,
// /dev/cpu/N/msr (pread/pwrite of 8 bytes at the MSR address), as the seeds' drivers did with
// WRMSR/RDMSR in their kernels. Safety in the spirit of msr-safe: only the registers the
// backend declares (PmuInfo::registers) pass; any other address is refused before it reaches
// the device. The thread is pinned to the CPU it programs, and a PMU the kernel is using
// (NMI watchdog, perf, another tool) is reported instead of being overwritten.
#pragma once

#include "access.hpp"

#include <pmc/sdk/backend.hpp>
#include <pmc/export.hpp>
#include <pmc/sdk/register_file.hpp>

#include <sched.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pmc::detail {

class MsrRegisterFile final : public RegisterFile {
 public:
  // Opens <options.msr_root>/<cpu>/msr for reading and writing. When it does not exist and
  // options.load_msr_module is set, runs `modprobe msr` (as root only) and tries again.
  // Throws with the path and what to do.
  MsrRegisterFile(int cpu, const PmuInfo& pmu, const AccessOptions& options);
  ~MsrRegisterFile() override;
  MsrRegisterFile(const MsrRegisterFile&) = delete;
  MsrRegisterFile& operator=(const MsrRegisterFile&) = delete;

  std::uint64_t read(std::uint32_t msr) override;
  void write(std::uint32_t msr, std::uint64_t value) override;
  // RDPMC from user mode needs CR4.PCE, which only perf grants: refused (counters are read
  // with RDMSR).
  std::uint64_t rdpmc(std::uint32_t index) override;

  [[nodiscard]] int cpu() const { return cpu_; }
  [[nodiscard]] const std::filesystem::path& device() const { return path_; }

 private:
  void check(std::uint32_t msr, const char* what) const;

  int cpu_;
  std::filesystem::path path_;
  std::string pmu_name_;
  std::vector<std::uint32_t> allowed_;
  int fd_ = -1;
};

// The message for a device that cannot be opened. `modprobe` says what loading the module gave
// (empty when it was not tried). Pure.
std::string msr_open_error(const std::filesystem::path& device, int err, const std::string& modprobe, bool root);

// Runs `modprobe msr`; returns what happened ("modprobe msr: exit status 1", "modprobe: not
// found", "done").
std::string load_msr_module();

// "/proc/sys/kernel/nmi_watchdog is 1: ..." when the kernel's NMI watchdog may hold a counter.
std::optional<std::string> nmi_watchdog_conflict(const AccessOptions& options);

// A counter of the PMU already switched on (EN, bit 22, in an event select; the enable bits of
// a fixed counter): someone else (perf, the NMI watchdog, another tool) is counting with it.
std::optional<std::string> counters_in_use(RegisterFile& regs, const PmuInfo& pmu, int cpu,
                                                   const std::string& device);

// Pins the calling thread to one CPU for its lifetime and restores the previous mask.
class CpuPin {
 public:
  explicit CpuPin(int cpu);
  ~CpuPin();
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;

 private:
  cpu_set_t previous_{};
  bool restore_ = false;
};

}  // namespace pmc::detail
