// Access "perf" (perf_event.hpp): reading the group of each target, by rdpmc from the events'
// user pages when the kernel allows it, by one read() of the group otherwise; the counts less
// their bases at the last reset, scaled when the group was multiplexed. These are the hot paths:
// read_counts() and read_values() allocate nothing (read() builds the vectors it returns).
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#if PMC_HAVE_RDPMC
#include <x86intrin.h>
#endif

namespace pmc::detail {

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

namespace {

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

}  // namespace

long perf_thread_id() { return current_tid(); }

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
std::size_t PerfAccess::read_values(std::uint64_t* out) {
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
        return n;  // size(): the group's events, in order
      }
    }
  }
  return read_values_slowly(out);
}

// rdpmc, an interrupted or failed read (reported there), ids out of order: the general path.
std::size_t PerfAccess::read_values_slowly(std::uint64_t* out) {
  read_counts(scratch_);
  for (std::size_t k = 0; k < events_.size(); ++k) out[k] = scratch_[k].value;
  return events_.size();
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
