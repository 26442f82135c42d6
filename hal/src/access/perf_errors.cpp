// What perf_event access says about itself and about a failed perf_event_open: the facts of
// this machine that the messages quote, and the message for each errno.
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include "cpu_native.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace pmc::detail {

std::string PerfEventSpec::describe() const {
  if (hardware) return config1 ? fmt::format("{}, raw 0x{:x} config1 0x{:x}", event, config, config1)
                                : fmt::format("{}, raw 0x{:x}", event, config);
  return fmt::format("{}, software", event);
}

PerfFacts perf_facts(const AccessOptions& options) {
  PerfFacts f;
  f.paranoid_file = (options.proc_root / "sys" / "kernel" / "perf_event_paranoid").string();
  std::ifstream in(f.paranoid_file);
  int v = 0;
  if (in >> v) f.paranoid = v;
  f.pmu = find_perf_pmu(options.sysfs_root);
  try {
    const CpuInfo& cpu = native_cpu();
    f.arch_perfmon_version = cpu.arch.version;
    if (auto l1 = cpu.raw.get(1)) f.hypervisor = (l1->ecx >> 31) & 1;
  } catch (const Error&) {  // not x86: no CPUID facts to quote
  }
  return f;
}

const char* errno_name(int err) {
  switch (err) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ENODEV: return "ENODEV";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    case EMFILE: return "EMFILE";
    case EBUSY: return "EBUSY";
    case ENOSPC: return "ENOSPC";
    case E2BIG: return "E2BIG";
    case ENOSYS: return "ENOSYS";
    default: return "errno";
  }
}

namespace {

std::string target_name(const Scope& scope, int pid, int cpu) {
  if (pid > 0)
    return pid == scope.pid ? fmt::format(", process {}", pid) : fmt::format(", thread {} of process {}", pid, scope.pid);
  if (cpu >= 0) return fmt::format(", CPU {}", cpu);
  return "";
}

}  // namespace

bool perf_topdown_slots(const PerfEventSpec& event) {
  return event.type == PERF_TYPE_RAW && event.config == 0x0400;
}

bool perf_topdown_metric(const PerfEventSpec& event) {
  return event.type == PERF_TYPE_RAW && (event.config & ~std::uint64_t{0x0700}) == 0x8000;
}

std::string perf_topdown_refusal(const PerfEventSpec& event, const std::vector<PerfEventSpec>& group) {
  if (!perf_topdown_metric(event)) return {};
  if (!group.empty() && perf_topdown_slots(group.front())) return {};
  return fmt::format("{} is a top-down metric (Linux's pseudo-encoding 0x{:04X}, a byte of PERF_METRICS): Linux perf "
                     "counts it only in a group led by the slots event (TOPDOWN.SLOTS, 0x0400), and {}; add "
                     "TOPDOWN.SLOTS first",
                     event.describe(), event.config,
                     group.empty() ? std::string("it would lead this session's group")
                                   : fmt::format("this session's group is led by {}", group.front().describe()));
}

std::string perf_open_error(int err, const PerfEventSpec& event, const Scope& scope, int pid, int cpu,
                            const PerfFacts& facts) {
  const std::string head = fmt::format("perf_event_open({}{})", event.describe(), target_name(scope, pid, cpu));
  const bool pmu_error = err == ENOENT || err == ENODEV || err == EOPNOTSUPP;
  // The top-down events need more than a PMU: PERF_METRICS (IA32_PERF_CAPABILITIES bit 15).
  const std::string topdown =
      perf_topdown_metric(event) || perf_topdown_slots(event)
          ? fmt::format("; {} is a top-down event, which Linux offers only where the core has PERF_METRICS "
                        "(Ice Lake and later P-cores: {}/events/slots exists), a metric only in a group led by slots",
                        event.event, facts.pmu.directory)
          : std::string();
  if (event.hardware && pmu_error && !facts.pmu.exposed)
    return fmt::format("{}: this machine exposes no hardware PMU to Linux perf (CPUID.0AH version {}, {} missing{}){}; "
                       "count on real hardware or use access = \"sim\" with a CPUID dump (the config key 'cpu')",
                       head, facts.arch_perfmon_version, facts.pmu.directory,
                       facts.hypervisor ? "; a virtual machine whose hypervisor gives it no virtual PMU" : "", topdown);
  switch (err) {
    case EACCES:
    case EPERM: {
      std::string value = facts.paranoid == -100 ? std::string("unreadable") : std::to_string(facts.paranoid);
      std::string msg = fmt::format("{}: permission denied ({}); {} is {}", head, errno_name(err), facts.paranoid_file, value);
      const bool cpu_wide = pid < 0;
      if (facts.paranoid >= 3)
        msg += ", which forbids perf_event_open to unprivileged users; run as root or with CAP_PERFMON, or lower it "
               "(sysctl kernel.perf_event_paranoid=2)";
      else if (cpu_wide && facts.paranoid >= 1)
        msg += ", which lets only root or CAP_PERFMON count a whole CPU; count a thread or process instead, or lower "
               "it to 0";
      else if (!event.exclude_kernel && facts.paranoid >= 2)
        msg += fmt::format(", which lets unprivileged users count user mode only; count '{}:u', run as root or "
                           "with CAP_PERFMON, or lower it to 1",
                           event.event);
      else if (scope.kind == Scope::Kind::process)
        msg += fmt::format("; attaching to process {} also needs permission to trace it (the same user, or "
                           "CAP_SYS_PTRACE)",
                           scope.pid);
      else
        msg += " (a seccomp filter or a security module may forbid perf_event_open)";
      return msg;
    }
    case ESRCH: return fmt::format("{}: no such process ({})", head, errno_name(err));
    case EMFILE:
      return fmt::format("{}: too many open files (EMFILE): every event on every CPU or thread is one file "
                         "descriptor; raise the limit (ulimit -n)",
                         head);
    case EBUSY:
      return fmt::format("{}: the PMU is busy (EBUSY): another user holds it exclusively", head);
    case ENOSPC: return fmt::format("{}: no free counter for the group (ENOSPC)", head);
    case ENOSYS: return fmt::format("{}: this kernel has no perf_event_open (ENOSYS)", head);
    case ENODEV:
      if (cpu >= 0) return fmt::format("{}: CPU {} is offline or absent (ENODEV)", head, cpu);
      break;
    case EINVAL:
      if (event.hardware)
        return fmt::format("{}: the kernel rejected the event (EINVAL): the encoding is not valid for the PMU it "
                           "exposes ({}), or the group cannot be counted together{}",
                           head, facts.pmu.directory, topdown);
      if (cpu >= 0) return fmt::format("{}: the kernel rejected CPU {} (EINVAL)", head, cpu);
      break;
    default: break;
  }
  if (event.hardware && pmu_error)
    return fmt::format("{}: the PMU Linux perf exposes ({}) cannot count this event ({}: {})", head, facts.pmu.directory,
                       errno_name(err), std::strerror(err));
  return fmt::format("{}: {} ({})", head, std::strerror(err), errno_name(err));
}

}  // namespace pmc::detail
