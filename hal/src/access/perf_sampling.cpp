// Access "perf" (perf_event.hpp): sampling events, each opened outside the group with its own
// ring buffer, and the drain that reads what the kernel wrote there into PerfAccess::samples().
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace pmc::detail {

void PerfAccess::close_sample_fd(SampleFd& s) {
  if (s.map) munmap(s.map, s.map_bytes);
  if (s.fd >= 0) ::close(s.fd);
  s.map = nullptr;
  s.fd = -1;
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

// `first`: the session's first sampling event, whose buffers also get the records of the
// processes' executable mappings, execs and forks (perf_records.cpp).
std::vector<PerfAccess::SampleFd> PerfAccess::open_sampler(const PerfEventSpec& event, bool first) {
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
        perf_event_attr attr = perf_sampling_attr(event);
        attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | (callchain_ ? PERF_SAMPLE_CALLCHAIN : 0);
        if (user_stack_bytes_) {  // --call-graph dwarf: the kernel's chain stops at the user stack
          attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
          attr.exclude_callchain_user = 1;
          attr.sample_regs_user = kPerfUserRegsMask;
          attr.sample_stack_user = user_stack_bytes_;
        }
        if (first) attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = attr.task = 1;
        attr.inherit = inherit;
        attr.disabled = 1;
        attr.enable_on_exec = scope_.enable_on_exec;
        long fd = -1;
        for (;;) {
          attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
          if (format_lost_) attr.read_format |= kPerfFormatLost;
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
        // A copy of the user stack makes each sample kilobytes long: twice the pages then.
        for (std::size_t pages = user_stack_bytes_ ? 2 * kRingPages : kRingPages; pages >= 1 && !added.map; pages /= 2) {
          const std::size_t bytes = (1 + pages) * kPerfPageSize;
          void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, added.fd, 0);
          if (map == MAP_FAILED) {
            err = errno;
            continue;
          }
          added.map = map;
          added.map_bytes = bytes;
          ring_bytes_ = pages * kPerfPageSize;
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
  return fds;
}

std::size_t PerfAccess::add_sampler(const PerfEventSpec& event) {
  if (event.sample_freq) check_sample_rate(event);
  std::vector<SampleFd> fds = open_sampler(event, samplers_.empty());
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

// freq=N above the kernel's limit, /proc/sys/kernel/perf_event_max_sample_rate (read now: the
// kernel lowers it when its interrupts take too long), is refused by perf_event_open with EINVAL;
// said here with both numbers.
void PerfAccess::check_sample_rate(const PerfEventSpec& event) const {
  const std::filesystem::path file = options_.proc_root / "sys" / "kernel" / "perf_event_max_sample_rate";
  std::ifstream in(file);
  std::uint64_t max = 0;
  if (!(in >> max) || event.sample_freq <= max) return;  // unreadable: the kernel says
  throw Error(errc::attribute_value,
              fmt::format("event '{}': freq={} is above the kernel's limit of {} samples a second ({}); ask for at "
                          "most {}, or raise the limit (sysctl kernel.perf_event_max_sample_rate)",
                          event.event, event.sample_freq, max, file.string(), max));
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
  const std::uint64_t size = page->data_size ? page->data_size : s.map_bytes - kPerfPageSize;
  const std::uint64_t offset = page->data_offset ? page->data_offset : kPerfPageSize;
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
    record_.resize(h.size);
    copy(tail, record_.data(), h.size);
    take_record(h, record_.data(), out);
    tail += h.size;
  }
  __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

}  // namespace pmc::detail
