// Access "perf" (perf_event.hpp): the raw event of an encoding, the attributes of each event,
// opening the group on every target, and switching it on and off. The reads are
// perf_read.cpp's, the sampling events perf_sampling.cpp's, the error messages perf_errors.cpp's.
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <cstring>

namespace pmc::detail {

namespace fs = std::filesystem;

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
  // Fixed index 16 and up: the pseudo counters Linux gives the top-down metrics (its metric
  // index base is fixed counter 16), whose encoding already is Linux's pseudo-encoding (0x8000
  // + byte << 8): it goes as it is.
  if (!has_event && e.fixed && e.counters.empty() && *e.fixed < 16) {
    // A fixed-counter-only event: Linux schedules these pseudo-encodings onto the fixed
    // counters (arch/x86/events/intel: 0x00c0 fixed 0, 0x003c fixed 1, and from fixed 2 on
    // event 0 with unit mask index + 1: 0x0300 fixed 2, 0x0400 slots, 0x0500..0x0700 fixed 4-6).
    static constexpr std::uint64_t kFixedPseudo[] = {0x00c0, 0x003c};
    config = *e.fixed < std::size(kFixedPseudo) ? kFixedPseudo[*e.fixed] : std::uint64_t{*e.fixed + 1} << 8;
    // IA32_FIXED_CTR_CTRL: per counter a nibble, bit 0 = OS, bit 1 = USR; accept it shifted into
    // place or not.
    std::uint64_t ctl = e.fixed_control;
    if (ctl > 0xF) ctl >>= 4 * *e.fixed;
    kernel = ctl & 1;
    user = ctl & 2;
  }
  config &= ~(usr.mask() | os.mask() | en.mask() | intr.mask());
  p.config = config;
  if (!e.extra.empty()) p.config1 = e.extra_value;
  p.exclude_user = !user;
  p.exclude_kernel = !kernel;
  p.sample_period = e.period;
  p.sample_freq = e.frequency;
  p.precise_ip = e.precise;
  return p;
}

PerfAccess::PerfAccess(const Scope& scope, AccessOptions options) : scope_(scope), options_(std::move(options)) {
  owner_tid_ = perf_thread_id();
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
      if (const auto of_pmu = pmu_cpus(); of_pmu && std::find(of_pmu->begin(), of_pmu->end(), scope_.cpu) == of_pmu->end())
        throw Error(errc::not_supported, fmt::format("scope CPU {}: not a CPU of the {} PMU (its CPUs: {})", scope_.cpu,
                                                     options_.perf_pmu, fmt::join(*of_pmu, ",")));
      targets_.push_back({-1, scope_.cpu, {}, {}, {}, {}, {}, false});
      break;
    case Scope::Kind::each_cpu:
    case Scope::Kind::all_cpus: {
      const auto of_pmu = pmu_cpus();
      for (int c : online_cpus(options_.sysfs_root))
        if (!of_pmu || std::find(of_pmu->begin(), of_pmu->end(), c) != of_pmu->end())
          targets_.push_back({-1, c, {}, {}, {}, {}, {}, false});
      if (targets_.empty())
        throw Error(errc::not_supported, fmt::format("{}: no online CPU is a CPU of the {} PMU", scope_.describe(),
                                                     options_.perf_pmu));
      break;
    }
  }
}

// The CPUs of a hybrid part's PMU (AccessOptions::perf_pmu), as sysfs lists them; nullopt: all.
std::optional<std::vector<int>> PerfAccess::pmu_cpus() const {
  if (options_.perf_pmu.empty()) return std::nullopt;
  const fs::path file = options_.sysfs_root / "bus" / "event_source" / "devices" / options_.perf_pmu / "cpus";
  std::ifstream in(file);
  std::string text;
  if (!std::getline(in, text))
    throw Error(errc::not_supported, fmt::format("{}: cannot read the CPUs of the {} PMU", file.string(), options_.perf_pmu));
  return parse_sysfs_cpu_list(text);
}

PerfAccess::~PerfAccess() {
  for (auto& t : targets_)
    for (std::size_t i = t.fds.size(); i-- > 0;) close_event(t, i);
  for (auto& sampler : samplers_)
    for (auto& s : sampler) close_sample_fd(s);
}

const std::string& PerfAccess::group_name() const {
  for (std::size_t i = 0; i < events_.size(); ++i)
    if (!slots_[i].sampling) return events_[i].event;
  return events_.front().event;
}

void PerfAccess::close_event(Target& t, std::size_t i) {
  if (i < t.pages.size() && t.pages[i]) munmap(t.pages[i], kPerfPageSize);
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
  if (event.sample_period || event.sample_freq) return add_sampler(event);
  if (const std::string why = perf_topdown_refusal(event, events_); !why.empty())
    throw Error(errc::invalid_argument, why);
  const std::size_t index = events_.size();
  const std::size_t pos = targets_.front().fds.size();  // its place in each target's group
  const bool inherit = scope_.inherit && (scope_.kind == Scope::Kind::thread || scope_.kind == Scope::Kind::process);
  std::size_t opened = 0;
  try {
    for (auto& t : targets_) {
      perf_event_attr attr = perf_attr(event);
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
      if (scope_.kind == Scope::Kind::thread && !inherit && perf_on_a_counter(event)) {
        page = mmap(nullptr, kPerfPageSize, PROT_READ, MAP_SHARED, static_cast<int>(fd), 0);
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
  if (!perf_on_a_counter(event)) software_grouped_ = true;
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

}  // namespace pmc::detail
