#include "msr.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

extern char** environ;

namespace pmc::detail {

namespace fs = std::filesystem;

std::string msr_open_error(const fs::path& device, int err, const std::string& modprobe, bool root) {
  const std::string d = device.string();
  switch (err) {
    case ENOENT:
      return fmt::format("{}: no such device: the msr driver is not loaded{}; load it as root (modprobe msr), or "
                         "count through Linux perf (access = \"perf\")",
                         d, modprobe.empty() ? (root ? "" : " (loading it needs root)") : fmt::format(" ({})", modprobe));
    case EACCES:
    case EPERM:
      return fmt::format("{}: permission denied: reading and writing MSRs needs root (CAP_SYS_RAWIO); or count "
                         "through Linux perf (access = \"perf\")",
                         d);
    case ENXIO:
    case ENODEV:
      return fmt::format("{}: the CPU is offline or has no MSRs ({})", d, std::strerror(err));
    default: return fmt::format("{}: {}", d, std::strerror(err));
  }
}

std::string load_msr_module() {
  // The PATH first, then where Debian keeps it (a non-login root shell may lack /sbin).
  std::vector<std::string> candidates{"modprobe", "/usr/sbin/modprobe", "/sbin/modprobe"};
  for (const auto& exe : candidates) {
    std::string arg0 = "modprobe", arg1 = "msr";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = exe.find('/') == std::string::npos
                       ? posix_spawnp(&pid, exe.c_str(), &actions, nullptr, argv, environ)
                       : posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == ENOENT) continue;
    if (rc != 0) return fmt::format("modprobe msr: {}", std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "done";
    return fmt::format("modprobe msr failed with exit status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return "modprobe not found";
}

MsrRegisterFile::MsrRegisterFile(int cpu, const PmuInfo& pmu, const AccessOptions& options)
    : cpu_(cpu), path_(options.msr_root / std::to_string(cpu) / "msr"), pmu_name_(pmu.name), allowed_(pmu.registers) {
  std::sort(allowed_.begin(), allowed_.end());
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  std::string modprobe;
  const bool root = geteuid() == 0;
  if (fd_ < 0 && errno == ENOENT && options.load_msr_module && root) {
    modprobe = load_msr_module();
    if (modprobe == "done") modprobe = "modprobe msr ran, but the device did not appear";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  }
  if (fd_ < 0) {
    const int err = errno;
    throw Error(err == EACCES || err == EPERM ? errc::permission : errc::not_supported,
                msr_open_error(path_, err, modprobe, root));
  }
}

MsrRegisterFile::~MsrRegisterFile() {
  if (fd_ >= 0) ::close(fd_);
}

void MsrRegisterFile::check(std::uint32_t msr, const char* what) const {
  if (std::binary_search(allowed_.begin(), allowed_.end(), msr)) return;
  std::string list;
  for (auto a : allowed_) list += fmt::format("{}0x{:X}", list.empty() ? "" : ", ", a);
  throw Error(errc::register_fault,
              fmt::format("{} MSR 0x{:X}: not a register of the {} PMU (it may touch {}); refused before reaching {}",
                          what, msr, pmu_name_, list.empty() ? std::string("none") : list, path_.string()));
}

std::uint64_t MsrRegisterFile::read(std::uint32_t msr) {
  check(msr, "rdmsr");
  std::uint64_t value = 0;
  ssize_t n = 0;
  do {
    n = ::pread(fd_, &value, sizeof value, static_cast<off_t>(msr));
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    throw Error(errc::register_fault, fmt::format("rdmsr 0x{:X} on CPU {} ({}): {}{}", msr, cpu_, path_.string(),
                                                  std::strerror(errno), errno == EIO ? " (the CPU refused it: #GP)" : ""));
  if (n != sizeof value)
    throw Error(errc::io, fmt::format("rdmsr 0x{:X} on CPU {} ({}): read {} bytes of 8", msr, cpu_, path_.string(), n));
  return value;
}

void MsrRegisterFile::write(std::uint32_t msr, std::uint64_t value) {
  check(msr, "wrmsr");
  ssize_t n = 0;
  do {
    n = ::pwrite(fd_, &value, sizeof value, static_cast<off_t>(msr));
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    throw Error(errc::register_fault,
                fmt::format("wrmsr 0x{:X} = 0x{:X} on CPU {} ({}): {}{}", msr, value, cpu_, path_.string(),
                            std::strerror(errno), errno == EIO ? " (the CPU refused it: #GP)" : ""));
  if (n != sizeof value)
    throw Error(errc::io, fmt::format("wrmsr 0x{:X} on CPU {} ({}): wrote {} bytes of 8", msr, cpu_, path_.string(), n));
}

std::uint64_t MsrRegisterFile::rdpmc(std::uint32_t index) {
  throw Error(errc::register_fault,
              fmt::format("rdpmc {} through {}: user-mode RDPMC needs CR4.PCE, which Linux grants only to perf "
                          "users; the msr access reads counters with RDMSR",
                          index, path_.string()));
}

std::optional<std::string> nmi_watchdog_conflict(const AccessOptions& options) {
  const fs::path file = options.proc_root / "sys" / "kernel" / "nmi_watchdog";
  std::ifstream in(file);
  int v = 0;
  if (!(in >> v) || v == 0) return std::nullopt;
  return fmt::format("{} is {}: the kernel's NMI watchdog counts with a performance counter, and programming the PMU "
                     "behind its back would break it and corrupt both counts; disable it (sysctl "
                     "kernel.nmi_watchdog=0) or count through Linux perf (access = \"perf\")",
                     file.string(), v);
}

std::optional<std::string> counters_in_use(RegisterFile& regs, const PmuInfo& pmu, int cpu, const std::string& device) {
  constexpr std::uint64_t kEnable = 1ull << 22;
  for (const auto& c : pmu.counters) {
    if (!c.control_msr) continue;
    const std::uint64_t v = regs.read(c.control_msr);
    const bool on = c.kind == CounterKind::general ? (v & kEnable) != 0 : ((v >> (4 * c.index)) & 3) != 0;
    if (on)
      return fmt::format("{} counter {} is already counting on CPU {}: MSR 0x{:X} = 0x{:X} ({}) in {}; another user "
                         "(Linux perf, the NMI watchdog, another tool, or a session that did not stop) owns it; stop "
                         "that user or count through Linux perf (access = \"perf\")",
                         c.kind == CounterKind::general ? "general" : "fixed", c.index, cpu, c.control_msr, v,
                         c.kind == CounterKind::general ? "EN set" : "enable bits set", device);
  }
  return std::nullopt;
}

CpuPin::CpuPin(int cpu) {
  if (sched_getaffinity(0, sizeof previous_, &previous_) != 0)
    throw Error(errc::not_supported, fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(static_cast<std::size_t>(cpu), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    throw Error(errc::not_supported,
                fmt::format("cannot pin this thread to CPU {} (sched_setaffinity: {})", cpu, std::strerror(errno)));
  restore_ = true;
}

CpuPin::~CpuPin() {
  if (restore_) sched_setaffinity(0, sizeof previous_, &previous_);
}

}  // namespace pmc::detail
