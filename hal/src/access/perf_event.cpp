#include "perf_event.hpp"

#include "cpu_native.hpp"

#include "text.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PMC_HAVE_RDPMC 1
#else
#define PMC_HAVE_RDPMC 0
#endif

namespace pmc::detail {

namespace fs = std::filesystem;

std::string PerfEventSpec::describe() const {
  if (hardware) return fmt::format("{}, raw 0x{:x}", event, config);
  return fmt::format("{}, software", event);
}

// ---------------------------------------------------------------------------------------------
// Pure parts

PerfEventSpec perf_raw_event(const Encoding& e, const RegisterFormat& format) {
  auto field = [&](const char* name, unsigned bit) {
    if (auto f = format.field(name)) return *f;
    BitField one;
    one.ranges[0] = BitRange{bit, 1};
    one.count = 1;
    return one;
  };
  const BitField usr = field("usr", 16), os = field("os", 17), en = field("en", 22), intr = field("int", 20);
  PerfEventSpec p;
  p.event = e.event;
  p.type = PERF_TYPE_RAW;
  p.hardware = true;
  std::uint64_t config = e.config;
  bool user = (config & usr.mask()) != 0;
  bool kernel = (config & os.mask()) != 0;
  const auto event_field = format.field("event");
  const bool has_event = event_field ? (config & event_field->mask()) != 0 : (config & 0xFF) != 0;
  if (!has_event && e.fixed && e.counters.empty()) {
    // A fixed-counter-only event: Linux schedules these pseudo-encodings onto the fixed
    // counters (arch/x86/events/intel: 0x00c0 fixed 0, 0x003c fixed 1, 0x0300 fixed 2).
    static constexpr std::uint64_t kFixedPseudo[] = {0x00c0, 0x003c, 0x0300};
    if (*e.fixed < std::size(kFixedPseudo)) config = kFixedPseudo[*e.fixed];
    // IA32_FIXED_CTR_CTRL: per counter a nibble, bit 0 = OS, bit 1 = USR; accept it shifted into
    // place or not.
    std::uint64_t ctl = e.fixed_control;
    if (ctl > 0xF) ctl >>= 4 * *e.fixed;
    kernel = ctl & 1;
    user = ctl & 2;
  }
  config &= ~(usr.mask() | os.mask() | en.mask() | intr.mask());
  p.config = config;
  p.exclude_user = !user;
  p.exclude_kernel = !kernel;
  return p;
}

Count scale_count(std::uint64_t value, std::uint64_t time_enabled, std::uint64_t time_running) {
  Count c;
  c.time_enabled = time_enabled;
  c.time_running = time_running;
  if (time_running == 0) return c;  // never on a counter: nothing known
  if (time_running >= time_enabled) {
    c.value = value;
    return c;
  }
  __extension__ typedef unsigned __int128 u128;  // value * enabled needs 128 bits
  const u128 scaled = (static_cast<u128>(value) * time_enabled + time_running / 2) / time_running;
  c.value = scaled > ~0ull ? ~0ull : static_cast<std::uint64_t>(scaled);
  c.extrapolated = true;
  return c;
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  auto number = [&](std::string_view s) {
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0)
      throw Error(errc::parse, fmt::format("CPU list '{}': '{}' is not a CPU number", text, s));
    return v;
  };
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    auto dash = part.find('-');
    int lo = number(part.substr(0, dash));
    int hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) throw Error(errc::parse, fmt::format("CPU list '{}': range '{}' is backwards", text, part));
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<int> online_cpus(const fs::path& sysfs_root) {
  const fs::path file = sysfs_root / "devices" / "system" / "cpu" / "online";
  std::ifstream in(file);
  std::string text;
  if (!in || !std::getline(in, text)) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    std::vector<int> out;
    for (int c = 0; c < n; ++c) out.push_back(c);
    return out;
  }
  return parse_cpu_list(text);
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

namespace {

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

std::string target_name(const Scope& scope, int pid, int cpu) {
  if (pid > 0)
    return pid == scope.pid ? fmt::format(", process {}", pid) : fmt::format(", thread {} of process {}", pid, scope.pid);
  if (cpu >= 0) return fmt::format(", CPU {}", cpu);
  return "";
}

}  // namespace

std::string perf_open_error(int err, const PerfEventSpec& event, const Scope& scope, int pid, int cpu,
                            const PerfFacts& facts) {
  const std::string head = fmt::format("perf_event_open({}{})", event.describe(), target_name(scope, pid, cpu));
  const bool pmu_error = err == ENOENT || err == ENODEV || err == EOPNOTSUPP;
  if (event.hardware && pmu_error && !facts.pmu.exposed)
    return fmt::format("{}: this machine exposes no hardware PMU to Linux perf (CPUID.0AH version {}, {} missing{}); "
                       "count on real hardware or use access = \"sim\" with a CPUID dump (the config key 'cpu')",
                       head, facts.arch_perfmon_version, facts.pmu.directory,
                       facts.hypervisor ? "; a virtual machine whose hypervisor gives it no virtual PMU" : "");
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
                           "exposes ({}), or the group cannot be counted together",
                           head, facts.pmu.directory);
      if (cpu >= 0) return fmt::format("{}: the kernel rejected CPU {} (EINVAL)", head, cpu);
      break;
    default: break;
  }
  if (event.hardware && pmu_error)
    return fmt::format("{}: the PMU Linux perf exposes ({}) cannot count this event ({}: {})", head, facts.pmu.directory,
                       errno_name(err), std::strerror(err));
  return fmt::format("{}: {} ({})", head, std::strerror(err), errno_name(err));
}

// ---------------------------------------------------------------------------------------------
// PerfAccess

namespace {

long perf_event_open(perf_event_attr* attr, int pid, int cpu, int group_fd, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

// The calling thread's id, asked of the kernel once per thread (glibc caches no tid); a forked
// child forgets its copy of the forking thread's.
thread_local long t_tid = 0;
void forget_tid() { t_tid = 0; }
long current_tid() {
  if (t_tid == 0) {
    static const int registered = pthread_atfork(nullptr, nullptr, forget_tid);
    (void)registered;
    t_tid = syscall(SYS_gettid);
  }
  return t_tid;
}

// Events that may sit on a hardware counter, and so be read with rdpmc.
bool on_a_counter(const PerfEventSpec& e) {
  return e.type == PERF_TYPE_RAW || e.type == PERF_TYPE_HARDWARE || e.type == PERF_TYPE_HW_CACHE;
}

std::uint64_t rdpmc_instruction(std::uint32_t counter) {
#if PMC_HAVE_RDPMC
  return __rdpmc(static_cast<int>(counter));
#else
  (void)counter;
  return 0;
#endif
}

std::uint64_t rdtsc_instruction() {
#if PMC_HAVE_RDPMC
  return __rdtsc();
#else
  return 0;
#endif
}

const std::size_t kPageSize = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// What every perf event of a session is asked for: the event and its privilege filters.
perf_event_attr attr_of(const PerfEventSpec& event) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.exclude_user = event.exclude_user;
  attr.exclude_kernel = event.exclude_kernel;
  return attr;
}

// PERF_FORMAT_LOST (Linux 6.0), spelt out for older kernel headers.
constexpr std::uint64_t kFormatLost = 1u << 4;

}  // namespace

PerfAccess::PerfAccess(const Scope& scope, AccessOptions options) : scope_(scope), options_(std::move(options)) {
  owner_tid_ = current_tid();
  switch (scope_.kind) {
    case Scope::Kind::thread: targets_.push_back({0, -1, {}, {}, {}, {}, {}, false}); break;
    case Scope::Kind::process: {
      if (scope_.pid <= 0)
        throw Error(errc::invalid_argument, fmt::format("scope process {}: not a process id", scope_.pid));
      if (scope_.enable_on_exec || scope_.one_thread) {
        targets_.push_back({scope_.pid, -1, {}, {}, {}, {}, {}, false});
        break;
      }
      const fs::path tasks = options_.proc_root / std::to_string(scope_.pid) / "task";
      std::error_code ec;
      std::vector<int> tids;
      for (const auto& entry : fs::directory_iterator(tasks, ec)) {
        int tid = 0;
        const std::string n = entry.path().filename().string();
        if (std::from_chars(n.data(), n.data() + n.size(), tid).ec == std::errc()) tids.push_back(tid);
      }
      if (tids.empty())
        throw Error(errc::not_found, fmt::format("scope process {}: no such process ({} unreadable)", scope_.pid,
                                                 tasks.string()));
      std::sort(tids.begin(), tids.end());
      for (int tid : tids) targets_.push_back({tid, -1, {}, {}, {}, {}, {}, false});
      break;
    }
    case Scope::Kind::cpu:
      if (scope_.cpu < 0) throw Error(errc::invalid_argument, fmt::format("scope CPU {}: not a CPU number", scope_.cpu));
      targets_.push_back({-1, scope_.cpu, {}, {}, {}, {}, {}, false});
      break;
    case Scope::Kind::each_cpu:
    case Scope::Kind::all_cpus:
      for (int c : online_cpus(options_.sysfs_root)) targets_.push_back({-1, c, {}, {}, {}, {}, {}, false});
      break;
  }
}

PerfAccess::~PerfAccess() {
  for (auto& t : targets_)
    for (std::size_t i = t.fds.size(); i-- > 0;) close_event(t, i);
  for (auto& sampler : samplers_)
    for (auto& s : sampler) close_sample_fd(s);
}

void PerfAccess::close_sample_fd(SampleFd& s) {
  if (s.map) munmap(s.map, s.map_bytes);
  if (s.fd >= 0) ::close(s.fd);
  s.map = nullptr;
  s.fd = -1;
}

const std::string& PerfAccess::group_name() const {
  for (std::size_t i = 0; i < events_.size(); ++i)
    if (!slots_[i].sampling) return events_[i].event;
  return events_.front().event;
}

void PerfAccess::close_event(Target& t, std::size_t i) {
  if (i < t.pages.size() && t.pages[i]) munmap(t.pages[i], kPageSize);
  if (i < t.fds.size() && t.fds[i] >= 0) ::close(t.fds[i]);
  t.pages.resize(std::min(t.pages.size(), i));
  t.fds.resize(std::min(t.fds.size(), i));
  t.ids.resize(std::min(t.ids.size(), i));
  t.base.resize(std::min(t.base.size(), i));
  t.raw.resize(std::min(t.raw.size(), i));
}

// The rdpmc decision, made when the event set changes: this thread's own group, not inherited,
// with only events that may sit on a counter, each with its page. read_user_page() still checks
// at every read that the kernel allows it and that each event is on a counter right now. And
// the direct path: one target, no sampling event, no rdpmc: start, stop and read_values() go
// straight to the leader.
void PerfAccess::update_paths() {
  const bool inherit = scope_.inherit && (scope_.kind == Scope::Kind::thread || scope_.kind == Scope::Kind::process);
  for (auto& t : targets_)
    t.rdpmc = PMC_HAVE_RDPMC && scope_.kind == Scope::Kind::thread && !inherit && !software_grouped_ &&
              !t.fds.empty() && std::all_of(t.pages.begin(), t.pages.end(), [](void* p) { return p != nullptr; });
  const Target& first = targets_.front();
  const bool direct = targets_.size() == 1 && samplers_.empty() && !first.rdpmc && !first.fds.empty() &&
                      first.fds.size() == events_.size();
  direct_fd_ = direct ? first.fds[0] : -1;
  toggle_fd_ = scope_.enable_on_exec ? -1 : direct_fd_;  // enable_on_exec: the kernel's first start
  direct_bytes_ = (3 + 2 * first.fds.size()) * sizeof(std::uint64_t);
}

void PerfAccess::ioctl_failed(const char* request) const {
  throw Error(errc::not_supported,
              fmt::format("perf: {} on the group of {}: {}", request, group_name(), std::strerror(errno)));
}

std::vector<int> PerfAccess::cpus() const {
  std::vector<int> out;
  for (const auto& t : targets_) out.push_back(t.cpu);
  return out;
}

int PerfAccess::leader_fd(std::size_t target) const {
  return target < targets_.size() && !targets_[target].fds.empty() ? targets_[target].fds[0] : -1;
}

std::size_t PerfAccess::add(const PerfEventSpec& event) {
  if (running_) throw Error(errc::invalid_argument, "cannot add a perf event while the counters run");
  if (event.sample_period) return add_sampler(event);
  const std::size_t index = events_.size();
  const std::size_t pos = targets_.front().fds.size();  // its place in each target's group
  const bool inherit = scope_.inherit && (scope_.kind == Scope::Kind::thread || scope_.kind == Scope::Kind::process);
  std::size_t opened = 0;
  try {
    for (auto& t : targets_) {
      perf_event_attr attr = attr_of(event);
      attr.read_format =
          PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
      attr.inherit = inherit;
      const bool leader = t.fds.empty();
      attr.disabled = leader;  // members follow their leader
      attr.enable_on_exec = leader && scope_.enable_on_exec;
      const int group = leader ? -1 : t.fds[0];
      long fd = -1;
      do {
        fd = perf_event_open(&attr, t.pid, t.cpu, group, PERF_FLAG_FD_CLOEXEC);
      } while (fd < 0 && errno == EINTR);
      if (fd < 0) {
        const int err = errno;
        throw Error(err == EACCES || err == EPERM ? errc::permission : errc::not_supported,
                    perf_open_error(err, event, scope_, t.pid, t.cpu, perf_facts(options_)));
      }
      std::uint64_t id = 0;
      if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) != 0) {
        const int err = errno;
        ::close(static_cast<int>(fd));
        throw Error(errc::not_supported, fmt::format("perf_event_open({}): PERF_EVENT_IOC_ID failed: {}",
                                                     event.describe(), std::strerror(err)));
      }
      void* page = nullptr;
      if (scope_.kind == Scope::Kind::thread && !inherit && on_a_counter(event)) {
        page = mmap(nullptr, kPageSize, PROT_READ, MAP_SHARED, static_cast<int>(fd), 0);
        if (page == MAP_FAILED) page = nullptr;  // no fast path for this event: read() it
      }
      t.fds.push_back(static_cast<int>(fd));
      t.ids.push_back(id);
      t.pages.push_back(page);
      t.base.push_back({});
      t.raw.push_back({});
      ++opened;
    }
  } catch (...) {
    for (std::size_t k = 0; k < opened; ++k) close_event(targets_[k], pos);
    throw;
  }
  events_.push_back(event);
  slots_.push_back({false, pos});
  if (!on_a_counter(event)) software_grouped_ = true;
  buffer_.assign(3 + 2 * targets_.front().fds.size(), 0);
  scratch_.assign(events_.size(), Count{});
  update_paths();
  // Every count restarts from zero when the event set changes.
  if (index > 0) reset();
  return index;
}

// The group is switched through its leader alone: the members stay enabled and count whenever
// the kernel schedules the leader's group, so enabling the leader switches the whole group on
// (and disabling it off). PERF_IOC_FLAG_GROUP would switch each member too, and Linux 6.18 was
// seen not to schedule the members it re-enables that way until the next context switch: after
// a stop and a start, the members of a software group counted nothing.
void PerfAccess::start_slowly() {
  if (running_ || events_.empty()) return;
  // With enable_on_exec the kernel switches the group on when the process calls exec.
  if (!(scope_.enable_on_exec && !started_once_)) {
    for (auto& t : targets_)
      if (!t.fds.empty() && ioctl(t.fds[0], PERF_EVENT_IOC_ENABLE, 0) != 0)
        ioctl_failed("PERF_EVENT_IOC_ENABLE");
    for (std::size_t i = 0; i < samplers_.size(); ++i)
      for (auto& s : samplers_[i])
        if (ioctl(s.fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
          throw Error(errc::not_supported, fmt::format("perf: PERF_EVENT_IOC_ENABLE on sampling event {}: {}",
                                                       s.fd, std::strerror(errno)));
  }
  started_once_ = true;
  running_ = true;
}

void PerfAccess::stop_slowly() {
  if (!running_) return;
  running_ = false;
  for (auto& t : targets_)
    if (!t.fds.empty() && ioctl(t.fds[0], PERF_EVENT_IOC_DISABLE, 0) != 0)
      ioctl_failed("PERF_EVENT_IOC_DISABLE");
  for (auto& sampler : samplers_)
    for (auto& s : sampler)
      if (ioctl(s.fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
        throw Error(errc::not_supported,
                    fmt::format("perf: PERF_EVENT_IOC_DISABLE on a sampling event: {}", std::strerror(errno)));
  if (!samplers_.empty()) drain();
}

const std::vector<PerfAccess::Raw>& PerfAccess::read_target(Target& t) {
  const std::size_t n = t.fds.size();
  // The fast path: this thread's own counters, each on a hardware counter right now.
  if (t.rdpmc && current_tid() == owner_tid_) {
    std::size_t i = 0;
    for (; i < n; ++i) {
      const auto& page = *static_cast<const volatile perf_event_mmap_page*>(t.pages[i]);
      auto r = read_user_page(page, rdpmc_instruction, rdtsc_instruction);
      if (!r) break;
      t.raw[i] = {r->count, r->time_enabled, r->time_running, 0};
    }
    if (i == n) {
      last_path_ = "rdpmc";
      return t.raw;
    }
  }
  // One read of the whole group: nr, time_enabled, time_running, then {value, id} per event.
  std::uint64_t* buf = buffer_.data();
  const std::size_t want = (3 + 2 * n) * sizeof(std::uint64_t);
  ssize_t got = 0;
  do {
    got = ::read(t.fds[0], buf, want);
  } while (got < 0 && errno == EINTR);
  if (got < 0)
    throw Error(errc::io, fmt::format("perf: reading the group of {}: {}", group_name(), std::strerror(errno)));
  if (static_cast<std::size_t>(got) < want || buf[0] != n)
    throw Error(errc::io, fmt::format("perf: the group of {} read {} bytes for {} events", group_name(), got, n));
  // The kernel lists the leader, then the members in the order they joined: the ids match
  // position by position, unless the group changed under us.
  std::size_t k = 0;
  while (k < n && buf[4 + 2 * k] == t.ids[k]) {
    t.raw[k] = {buf[3 + 2 * k], buf[1], buf[2], 0};
    ++k;
  }
  if (k < n) {
    for (auto& r : t.raw) r = Raw{};
    for (k = 0; k < n; ++k) {
      auto it = std::find(t.ids.begin(), t.ids.end(), buf[4 + 2 * k]);
      if (it != t.ids.end()) t.raw[static_cast<std::size_t>(it - t.ids.begin())] = {buf[3 + 2 * k], buf[1], buf[2], 0};
    }
  }
  last_path_ = "read";
  return t.raw;
}

PerfAccess::Raw PerfAccess::read_sample_fd(const SampleFd& s) const {
  std::uint64_t buf[4] = {};  // value, time_enabled, time_running[, lost]
  const std::size_t want = (format_lost_ ? 4 : 3) * sizeof(std::uint64_t);
  ssize_t got = 0;
  do {
    got = ::read(s.fd, buf, want);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(want))
    throw Error(errc::io, fmt::format("perf: reading a sampling event: {}", got < 0 ? std::strerror(errno) : "short read"));
  return {buf[0], buf[1], buf[2], buf[3]};
}

std::size_t PerfAccess::add_sampler(const PerfEventSpec& event) {
  const bool inherit = scope_.inherit && (scope_.kind == Scope::Kind::thread || scope_.kind == Scope::Kind::process);
  std::vector<int> cpus;
  if (inherit) cpus = online_cpus(options_.sysfs_root);
  std::vector<SampleFd> fds;
  auto give_up = [&] {
    for (auto& s : fds) close_sample_fd(s);
  };
  try {
    for (std::size_t ti = 0; ti < targets_.size(); ++ti) {
      const Target& t = targets_[ti];
      std::vector<int> on = {t.cpu};
      if (t.cpu < 0 && inherit) on = cpus;
      for (int cpu : on) {
        perf_event_attr attr = attr_of(event);
        attr.sample_period = event.sample_period;
        attr.sample_type = PERF_SAMPLE_IP;
        attr.inherit = inherit;
        attr.disabled = 1;
        attr.enable_on_exec = scope_.enable_on_exec;
        long fd = -1;
        for (;;) {
          attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
          if (format_lost_) attr.read_format |= kFormatLost;
          do {
            fd = perf_event_open(&attr, t.pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
          } while (fd < 0 && errno == EINTR);
          // A kernel before 6.0 refuses the read format it does not know: count PERF_RECORD_LOST.
          if (fd < 0 && errno == EINVAL && format_lost_ && samplers_.empty() && fds.empty()) {
            format_lost_ = false;
            continue;
          }
          break;
        }
        if (fd < 0) {
          const int err = errno;
          throw Error(err == EACCES || err == EPERM ? errc::permission : errc::not_supported,
                      perf_open_error(err, event, scope_, t.pid, cpu, perf_facts(options_)));
        }
        SampleFd s;
        s.target = ti;
        s.fd = static_cast<int>(fd);
        fds.push_back(s);
        SampleFd& added = fds.back();
        int err = 0;
        for (std::size_t pages = kRingPages; pages >= 1 && !added.map; pages /= 2) {
          const std::size_t bytes = (1 + pages) * kPageSize;
          void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, added.fd, 0);
          if (map == MAP_FAILED) {
            err = errno;
            continue;
          }
          added.map = map;
          added.map_bytes = bytes;
          ring_bytes_ = pages * kPageSize;
        }
        if (!added.map)
          throw Error(err == EPERM ? errc::permission : errc::not_supported,
                      fmt::format("perf: mapping the sample buffer of {}{}: {} ({}); "
                                  "/proc/sys/kernel/perf_event_mlock_kb limits these buffers for users without "
                                  "CAP_IPC_LOCK",
                                  event.describe(), cpu >= 0 ? fmt::format(" on CPU {}", cpu) : std::string(),
                                  std::strerror(err), errno_name(err)));
      }
    }
  } catch (...) {
    give_up();
    throw;
  }
  const std::size_t index = events_.size();
  events_.push_back(event);
  slots_.push_back({true, samplers_.size()});
  samplers_.push_back(std::move(fds));
  update_paths();
  if (samples_.empty())
    for (const auto& t : targets_) {
      samples_.emplace_back();
      samples_.back().cpu = t.cpu;
    }
  if (index > 0) reset();
  return index;
}

void PerfAccess::drain() {
  for (auto& sampler : samplers_)
    for (auto& s : sampler) drain(s);
  if (!format_lost_) return;
  for (auto& t : samples_) t.lost = 0;
  for (auto& sampler : samplers_)
    for (auto& s : sampler) samples_[s.target].lost += read_sample_fd(s).lost - s.base.lost;
}

// The ring buffer protocol of include/uapi/linux/perf_event.h: records from data_tail (ours) up
// to data_head (the kernel's, read with acquire), wrapping at data_size; then data_tail is
// stored with release so that the kernel may overwrite what was read.
void PerfAccess::drain(SampleFd& s) {
  if (!s.map) return;
  auto* page = static_cast<perf_event_mmap_page*>(s.map);
  const std::uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
  std::uint64_t tail = page->data_tail;
  const std::uint64_t size = page->data_size ? page->data_size : s.map_bytes - kPageSize;
  const std::uint64_t offset = page->data_offset ? page->data_offset : kPageSize;
  const auto* data = static_cast<const unsigned char*>(s.map) + offset;
  auto copy = [&](std::uint64_t pos, void* to, std::size_t n) {
    const std::size_t at = static_cast<std::size_t>(pos % size);
    const std::size_t first = std::min<std::size_t>(n, static_cast<std::size_t>(size) - at);
    std::memcpy(to, data + at, first);
    std::memcpy(static_cast<unsigned char*>(to) + first, data, n - first);
  };
  PerfSamples& out = samples_[s.target];
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header h{};
    copy(tail, &h, sizeof h);
    if (h.size < sizeof h || h.size > head - tail) {  // not a record boundary: start over at the head
      tail = head;
      break;
    }
    if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + sizeof(std::uint64_t)) {
      std::uint64_t ip = 0;
      copy(tail + sizeof h, &ip, sizeof ip);
      switch (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) {
        case PERF_RECORD_MISC_USER: ++out.levels[0]; ++out.user[ip]; break;
        case PERF_RECORD_MISC_KERNEL: ++out.levels[1]; ++out.kernel[ip]; break;
        case PERF_RECORD_MISC_HYPERVISOR: ++out.levels[2]; break;
        case PERF_RECORD_MISC_GUEST_KERNEL: ++out.levels[3]; break;
        case PERF_RECORD_MISC_GUEST_USER: ++out.levels[4]; break;
        default: ++out.unknown; break;
      }
    } else if (h.type == PERF_RECORD_LOST && !format_lost_ && h.size >= sizeof h + 2 * sizeof(std::uint64_t)) {
      std::uint64_t lost[2] = {};  // id, lost
      copy(tail + sizeof h, lost, sizeof lost);
      out.lost += lost[1];
    }
    tail += h.size;
  }
  __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

void PerfAccess::reset() {
  for (auto& t : targets_)
    if (!t.fds.empty()) t.base = read_target(t);
  for (auto& sampler : samplers_)
    for (auto& s : sampler) s.base = read_sample_fd(s);
  drain();
  for (auto& s : samples_) {
    const int cpu = s.cpu;
    s = PerfSamples();
    s.cpu = cpu;
  }
}

void PerfAccess::read_counts(std::span<Count> out) {
  if (!samplers_.empty()) drain();
  const bool each = scope_.kind == Scope::Kind::each_cpu;
  const std::size_t targets = targets_.size(), events = events_.size();
  if (out.size() < events * (each ? targets : 1))
    throw Error(errc::invalid_argument, fmt::format("perf: {} counts asked for {} events", out.size(), events));
  for (std::size_t ti = 0; ti < targets; ++ti) {
    Target& t = targets_[ti];
    if (!t.fds.empty()) read_target(t);
    for (std::size_t i = 0; i < events; ++i) {
      Count c;
      if (!slots_[i].sampling) {
        const std::size_t p = slots_[i].pos;
        const Raw& r = t.raw[p];
        const Raw& b = t.base[p];
        c = scale_count(r.value - b.value, r.time_enabled - b.time_enabled, r.time_running - b.time_running);
      } else {
        // The target's fds of this sampling event: one, or one per CPU of an inherited task
        // event. Per CPU, each fd is enabled for the task's whole time and runs only while the
        // task is on its CPU, so its running time is short of its enabled time without any
        // multiplexing (a software event never is): the raw values add up and must not be
        // scaled to the enabled time, which would count the task once per CPU.
        std::size_t parts = 0;
        Raw first;
        bool ran = false;
        for (const SampleFd& s : samplers_[slots_[i].pos]) {
          if (s.target != ti) continue;
          const Raw r = read_sample_fd(s);
          const Raw part{r.value - s.base.value, r.time_enabled - s.base.time_enabled,
                         r.time_running - s.base.time_running, 0};
          if (parts++ == 0) first = part;
          c.value += part.value;
          c.time_enabled = std::max(c.time_enabled, part.time_enabled);
          ran = ran || part.time_running != 0;
        }
        if (parts == 1) {
          c = scale_count(first.value, first.time_enabled, first.time_running);
        } else {
          c.time_running = ran ? c.time_enabled : 0;
        }
      }
      if (each) {
        c.cpu = t.cpu;
        out[i * targets + ti] = c;
      } else if (ti == 0) {
        out[i] = c;
      } else {  // threads of a process, or CPUs: summed
        Count& sum = out[i];
        sum.value += c.value;
        sum.time_enabled += c.time_enabled;
        sum.time_running += c.time_running;
        sum.extrapolated = sum.extrapolated || c.extrapolated;
      }
    }
  }
}

namespace {
[[gnu::noinline, gnu::cold]] void scale_values(std::uint64_t* values, std::size_t n, std::uint64_t enabled,
                                               std::uint64_t running) {
  for (std::size_t k = 0; k < n; ++k) values[k] = scale_count(values[k], enabled, running).value;
}
}  // namespace

// The direct path: one read() of the group, the values less their bases; the rest (rdpmc, an
// interrupted or failed read, ids out of order, a multiplexed group to scale) is
// read_values_slowly's.
void PerfAccess::read_values(std::uint64_t* out) {
  if (direct_fd_ >= 0) [[likely]] {
    std::uint64_t* buf = buffer_.data();
    if (::read(direct_fd_, buf, direct_bytes_) == static_cast<ssize_t>(direct_bytes_)) [[likely]] {
      const Target& t = targets_.front();
      const Raw* base = t.base.data();
      const std::uint64_t* ids = t.ids.data();
      const std::size_t n = buf[0];
      bool in_order = n == events_.size();
      for (std::size_t k = 0; k < n && in_order; ++k) {
        in_order = buf[4 + 2 * k] == ids[k];
        out[k] = buf[3 + 2 * k] - base[k].value;
      }
      if (in_order) [[likely]] {
        // Every base of a group read has the group's times.
        const std::uint64_t enabled = buf[1] - base[0].time_enabled, running = buf[2] - base[0].time_running;
        if (running < enabled) [[unlikely]]
          scale_values(out, n, enabled, running);
        return;
      }
    }
  }
  read_values_slowly(out);
}

// rdpmc, an interrupted or failed read (reported there), ids out of order: the general path.
void PerfAccess::read_values_slowly(std::uint64_t* out) {
  read_counts(scratch_);
  for (std::size_t k = 0; k < events_.size(); ++k) out[k] = scratch_[k].value;
}

std::vector<std::vector<Count>> PerfAccess::read() {
  const std::size_t per = counts_per_event();
  std::vector<Count> counts(events_.size() * per);
  read_counts(counts);
  std::vector<std::vector<Count>> out(events_.size());
  for (std::size_t i = 0; i < events_.size(); ++i)
    out[i].assign(counts.begin() + static_cast<std::ptrdiff_t>(i * per),
                  counts.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
  return out;
}

}  // namespace pmc::detail
