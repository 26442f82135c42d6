// Access "perf": Linux perf_event_open. All of a session's perf events form ONE group per
// target (a thread, a process's thread, a CPU), read at once (PERF_FORMAT_GROUP with the times
// enabled and running and the event ids), switched on and off through the group leader. Reads
// use the rdpmc fast path of the mmap page when the kernel allows it (this thread, not
// inherited, every event on a counter), read() otherwise. Counts of a multiplexed group are
// scaled to the time enabled and flagged extrapolated.
// The read path costs what the kernel costs: whether a group can take the rdpmc path is
// decided when events are added (only hardware events ever sit on a counter; a software event
// makes the group read() it), the calling thread's id is cached (no gettid per read), and the
// buffers are sized when events are added, so read_counts() makes one read() per target (none
// with rdpmc) and allocates nothing.
// Where it is done: perf_event.cpp (raw events, attributes, opening the group, start and stop),
// perf_read.cpp (group reads, the rdpmc fast path, scaling), perf_sampling.cpp (sampling events
// and their ring buffers), perf_errors.cpp (what a failed open says); perf_kernel.hpp is what
// they share of the kernel's interface.
#pragma once

#include "access.hpp"
#include "cpu_list.hpp"  // online_cpus: the targets of CPU-wide scopes

#include <pmc/export.hpp>
#include <pmc/profile.hpp>  // UserStacks

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pmc::detail {

// One event as perf_event_open is asked for it.
struct PerfEventSpec {
  std::string event;            // the event string as given
  std::uint32_t type = PERF_TYPE_SOFTWARE;
  std::uint64_t config = 0;
  std::uint64_t config1 = 0;    // the extra register's value (offcore_rsp, ldlat, frontend)
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool hardware = false;        // a raw PMU event (for messages)
  // Sampling (the HAL clock events' `period=N`): a sample (PERF_SAMPLE_IP) every N of the
  // event's units, written to the event's mmap ring buffer; 0: counting only.
  std::uint64_t sample_period = 0;
  // Sampling at a frequency (`freq=N`): perf_event_attr.freq = 1, sample_freq = N; the kernel
  // adjusts the period so that about N samples come a second. One of the two, or neither.
  std::uint64_t sample_freq = 0;
  unsigned precise_ip = 0;      // a sampling PMU event's :p/:pp/:ppp (perf_event_attr.precise_ip)
  // "task-clock, software" or "INST_RETIRED, raw 0xc0": how messages name it.
  [[nodiscard]] std::string describe() const;
};

// The raw perf event of a backend encoding: the event-select value without EN (the kernel
// enables) and INT (the kernel asks for interrupts when it samples), with the usr/os bits turned
// into exclude_user/exclude_kernel (the kernel sets those bits itself). Fields come from the
// catalog's register format (usr, os, en, int); bits 16, 17, 22 and 20 when it has none. A
// fixed-counter-only event uses the Linux pseudo-encoding of its fixed counter. An event that
// needs an extra register passes its value as config1, where Linux's Intel PMU takes the
// offcore response, load latency and frontend values (it chooses the MSR itself). An event given
// period=N samples: sample_period N, precise_ip its :p/:pp/:ppp; freq=N: sample_freq N. Pure.
PerfEventSpec perf_raw_event(const Encoding& encoding, const RegisterFormat& format);

// Linux's top-down events on Intel cores (arch/x86/include/asm/perf_event.h): the slots
// pseudo-encoding 0x0400 (fixed counter 3) and the metric pseudo-encodings 0x8000 + byte << 8.
// Linux counts a metric event only in a group whose leader is the slots event. Pure.
bool perf_topdown_slots(const PerfEventSpec& event);
bool perf_topdown_metric(const PerfEventSpec& event);
// Why `event` cannot join the group `group` (its events so far, the leader first) under Linux's
// top-down rule, or "" when it can. Pure.
std::string perf_topdown_refusal(const PerfEventSpec& event, const std::vector<PerfEventSpec>& group);

// A count scaled for multiplexing: value * enabled / running when the group ran for only part
// of the time it was enabled (extrapolated), the value itself otherwise; a group that never ran
// reports 0 with time_running 0. Pure.
Count scale_count(std::uint64_t value, std::uint64_t time_enabled, std::uint64_t time_running);

// What the error messages quote about this machine.
struct PerfFacts {
  int paranoid = -100;            // /proc/sys/kernel/perf_event_paranoid; -100 when unreadable
  std::string paranoid_file;
  PerfPmuFacts pmu;
  unsigned arch_perfmon_version = 0;  // native CPUID.0AH
  bool hypervisor = false;            // CPUID.1:ECX[31]
};
PerfFacts perf_facts(const AccessOptions& options);

// The one-line message for a failed perf_event_open, naming the event, the target and what to
// do. err is the errno. Pure.
std::string perf_open_error(int err, const PerfEventSpec& event, const Scope& scope, int pid, int cpu,
                                    const PerfFacts& facts);

// What one event's mmap page yields: count and times as of now.
struct UserPageRead {
  std::uint64_t count = 0;
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
};
// The self-monitoring read of include/uapi/linux/perf_event.h: under the page's seqlock, the
// kernel's offset plus the counter read by rdpmc(index - 1), sign-extended from pmc_width bits,
// and the times advanced by the TSC (time_offset, time_mult, time_shift). nullopt when the page
// does not allow it (no cap_user_rdpmc, or the event is not on a counter now: index 0).
// rdpmc and rdtsc are passed in so a test can drive it with a hand-made page.
template <class Rdpmc, class Rdtsc>
std::optional<UserPageRead> read_user_page(const volatile perf_event_mmap_page& page, Rdpmc&& rdpmc, Rdtsc&& rdtsc) {
  std::uint32_t seq = 0, index = 0, time_mult = 0;
  std::uint16_t width = 0, time_shift = 0;
  std::uint64_t count = 0, enabled = 0, running = 0, cycles = 0, time_offset = 0, time_cycles = 0, time_mask = 0;
  std::uint64_t pmc = 0;
  bool user_time = false, user_time_short = false, user_rdpmc = false;
  do {
    seq = page.lock;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    enabled = page.time_enabled;
    running = page.time_running;
    user_time = page.cap_user_time;
    user_time_short = page.cap_user_time_short;
    if (user_time) {
      cycles = rdtsc();
      time_offset = page.time_offset;
      time_mult = page.time_mult;
      time_shift = page.time_shift;
      time_cycles = page.time_cycles;
      time_mask = page.time_mask;
    }
    index = page.index;
    count = page.offset;
    user_rdpmc = page.cap_user_rdpmc;
    if (user_rdpmc && index) {
      width = page.pmc_width;
      pmc = rdpmc(index - 1);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
  } while (page.lock != seq);
  if (!user_rdpmc || index == 0 || width == 0 || width > 64) return std::nullopt;
  // Sign-extend the width-bit counter: the kernel programs it with -(remaining) and keeps the
  // rest of the count in offset.
  const unsigned shift = 64u - width;
  count += static_cast<std::uint64_t>(static_cast<std::int64_t>(pmc << shift) >> shift);
  if (user_time) {
    if (user_time_short) cycles = time_cycles + ((cycles - time_cycles) & time_mask);
    const std::uint64_t quot = time_shift < 64 ? cycles >> time_shift : 0;
    const std::uint64_t rem = time_shift < 64 ? cycles & ((1ull << time_shift) - 1) : cycles;
    const std::uint64_t delta = time_offset + quot * time_mult + ((rem * time_mult) >> time_shift);
    enabled += delta;
    running += delta;  // index != 0: the event is on a counter now
  }
  return UserPageRead{count, enabled, running};
}

// One user or kernel sample's stack (perf_records.cpp): the process, then the kernel frames and
// the user frames, each leaf first. The sampled IP is the first frame (of `kernel` for a kernel
// sample); without call chains it is the only one; with them the callers follow (return
// addresses, as the kernel's frame-pointer walk gives them).
struct PerfStack {
  int pid = -1;
  std::vector<std::uint64_t> kernel, user;
  bool operator==(const PerfStack&) const = default;
};
struct PerfStackHash {
  std::size_t operator()(const PerfStack& s) const noexcept;
};

// An executable mapping of a sampled process, from the kernel's PERF_RECORD_MMAP2 records
// ("[vdso]" and the like for the kernel's own).
struct PerfMapping {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
};

// What the sampling events of one target wrote to their ring buffers since the last reset.
struct PerfSamples {
  int cpu = -1;  // the target's CPU (per-CPU scopes); -1 otherwise
  // By the sample header's cpumode (misc & PERF_RECORD_MISC_CPUMODE_MASK): user, kernel,
  // hypervisor, guest kernel, guest user.
  std::array<std::uint64_t, 5> levels{};
  std::uint64_t unknown = 0;  // cpumode unknown: in no level and no address space
  // Samples the kernel dropped (ring buffer full): the events' PERF_FORMAT_LOST count (Linux
  // 6.0), else the PERF_RECORD_LOST records (written only once the buffer has room again).
  std::uint64_t lost = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> user, kernel;  // sampled IP -> samples
  std::unordered_map<PerfStack, std::uint64_t, PerfStackHash> stacks;  // user and kernel samples by stack
  UserStacks user_stacks;  // the samples with a copy of their user stack, instead of in `stacks`
};
inline constexpr const char* kPerfLevelNames[5] = {"user", "kernel", "hypervisor", "guest kernel", "guest user"};

class PerfAccess final : public Access {
 public:
  // The CPUs of the hybrid part's PMU the options name (AccessOptions::perf_pmu), as sysfs lists
  // them; nullopt: every CPU. Throws when sysfs does not say.
  [[nodiscard]] std::optional<std::vector<int>> pmu_cpus() const;
  // Data pages of each sampling event's ring buffer (plus one header page): 256 KiB with 4 KiB
  // pages, 16,384 samples of 16 bytes. Halved while the kernel refuses the mapping
  // (perf_event_mlock_kb for users without CAP_IPC_LOCK).
  static constexpr std::size_t kRingPages = 64;

  // The targets follow from the scope: this thread; each thread of a process (only the process
  // itself with enable_on_exec); one CPU; every online CPU.
  PerfAccess(const Scope& scope, AccessOptions options);
  ~PerfAccess() override;
  PerfAccess(const PerfAccess&) = delete;
  PerfAccess& operator=(const PerfAccess&) = delete;
  [[nodiscard]] std::string_view name() const override { return "perf"; }

  // Opens the event on every target, in the group; only while stopped. Throws (the message of
  // perf_open_error) and leaves the access as it was.
  std::size_t add(const PerfEventSpec& event);
  // Inline, so that a session's start and stop reach the ioctl without a call of their own.
  void start() override {
    if (toggle_fd_ >= 0 && !running_) [[likely]] {
      if (::ioctl(toggle_fd_, PERF_EVENT_IOC_ENABLE, 0) != 0) ioctl_failed("PERF_EVENT_IOC_ENABLE");
      started_once_ = running_ = true;
      return;
    }
    start_slowly();
  }
  void stop() override {
    if (toggle_fd_ >= 0 && running_) [[likely]] {
      running_ = false;
      if (::ioctl(toggle_fd_, PERF_EVENT_IOC_DISABLE, 0) != 0) ioctl_failed("PERF_EVENT_IOC_DISABLE");
      return;
    }
    stop_slowly();
  }
  void reset() override;
  [[nodiscard]] std::vector<std::vector<Count>> read() override;
  void read_counts(std::span<Count> out) override;
  // The shortest path, for a session whose readings are this group's events in order: one
  // target, no sampling event. The values (scaled when multiplexed) into out[0..size()); size().
  [[nodiscard]] bool direct_readable() const { return targets_.size() == 1 && samplers_.empty(); }
  std::size_t read_values(std::uint64_t* out);
  // The same direct read with the group's times: the counts (scaled when multiplexed) into the
  // value, time_enabled, time_running and extrapolated of out[0..size()) (a Count, or the
  // session's Readings themselves); false when the direct path does not apply now (rdpmc, an
  // interrupted read, ids out of order), and the caller takes read_counts.
  template <class Out>
  bool read_group(Out* out) {
    if (direct_fd_ < 0) return false;
    std::uint64_t* buf = buffer_.data();
    if (::read(direct_fd_, buf, direct_bytes_) != static_cast<ssize_t>(direct_bytes_)) [[unlikely]]
      return false;
    const Target& t = targets_.front();
    const Raw* base = t.base.data();
    const std::uint64_t* ids = t.ids.data();
    const std::size_t n = t.ids.size();  // the group's events, in order
    if (buf[0] != n) [[unlikely]]
      return false;
    // Every base of a group read has the group's times.
    const std::uint64_t enabled = buf[1] - base[0].time_enabled, running = buf[2] - base[0].time_running;
    if (running >= enabled && running != 0) [[likely]] {
      for (std::size_t k = 0; k < n; ++k) {
        if (buf[4 + 2 * k] != ids[k]) [[unlikely]]
          return false;
        out[k].value = buf[3 + 2 * k] - base[k].value;
        out[k].time_enabled = enabled;
        out[k].time_running = running;
        out[k].extrapolated = false;
      }
      return true;
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (buf[4 + 2 * k] != ids[k]) [[unlikely]]
        return false;
      const Count c = scale_count(buf[3 + 2 * k] - base[k].value, enabled, running);
      out[k].value = c.value;
      out[k].time_enabled = c.time_enabled;
      out[k].time_running = c.time_running;
      out[k].extrapolated = c.extrapolated;
    }
    return true;
  }
  [[nodiscard]] std::size_t counts_per_event() const override {
    return scope_.kind == Scope::Kind::each_cpu ? targets_.size() : 1;
  }
  void poll() override { drain(); }

  // Sampling events: a sampling event is not in the group. With inherit on a thread or process
  // target it is opened once per online CPU (pid, cpu) (the kernel maps no ring buffer of an
  // inherited per-task event; per CPU, the samples of inherited children go to the parent
  // event's buffer), otherwise on the target itself. drain() reads every ring buffer into
  // samples(); stop(), read() and poll() drain too.
  void drain();
  [[nodiscard]] const std::vector<PerfSamples>& samples() const { return samples_; }  // one per target
  [[nodiscard]] bool sampling() const { return !samplers_.empty(); }
  [[nodiscard]] std::size_t ring_bytes() const { return ring_bytes_; }  // data bytes of the last buffer mapped
  // Call chains (perf_records.cpp): each sample of every sampling event also records its user
  // and kernel call chain (PERF_SAMPLE_CALLCHAIN, frame pointers); the events already open are
  // opened again. Only while stopped; throws the kernel's refusal and leaves them as they were.
  // With user_stack_bytes (x86-64): the user registers and that many bytes of the user stack
  // too (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER), and only the kernel part of the chain.
  void sample_callchains(bool on, std::uint32_t user_stack_bytes = 0);
  [[nodiscard]] bool callchains() const { return callchain_; }
  // The executable mappings of each sampled process (pid) as the kernel reported them since the
  // first sampling event opened: after an exec only its new ones, a forked child starting with
  // its parent's. Kept across reset().
  [[nodiscard]] const std::unordered_map<int, std::vector<PerfMapping>>& mappings() const { return mappings_; }

  [[nodiscard]] std::size_t size() const { return events_.size(); }
  [[nodiscard]] std::vector<int> cpus() const;             // the targets' CPUs (each_cpu)
  [[nodiscard]] std::string_view last_read_path() const { return last_path_; }  // "rdpmc" | "read"
  // Whether the group of a target may try the rdpmc path (decided when events are added).
  [[nodiscard]] bool rdpmc_possible(std::size_t target = 0) const {
    return target < targets_.size() && targets_[target].rdpmc;
  }
  [[nodiscard]] int leader_fd(std::size_t target = 0) const;

 private:
  struct Raw {
    std::uint64_t value = 0, time_enabled = 0, time_running = 0;
    std::uint64_t lost = 0;  // sampling events with PERF_FORMAT_LOST
  };
  struct Target {
    int pid = 0;
    int cpu = -1;
    std::vector<int> fds;
    std::vector<std::uint64_t> ids;
    std::vector<void*> pages;  // mmap'ed user pages (thread scope), nullptr where none
    std::vector<Raw> base;     // the raw values at the last reset
    std::vector<Raw> raw;      // the values of the last read (sized when events are added)
    bool rdpmc = false;        // every grouped event may sit on a counter and has its page
  };
  // One fd of a sampling event, with its ring buffer.
  struct SampleFd {
    std::size_t target = 0;  // index into targets_
    int fd = -1;
    void* map = nullptr;
    std::size_t map_bytes = 0;
    Raw base;
  };
  struct Slot {
    bool sampling = false;
    std::size_t pos = 0;  // grouped: position in Target::fds; sampling: index into samplers_
  };
  const std::vector<Raw>& read_target(Target& t);
  void update_paths();  // after the event set changed: the rdpmc decision and the direct path
  std::size_t read_values_slowly(std::uint64_t* out);
  void start_slowly();
  void stop_slowly();
  [[noreturn]] void ioctl_failed(const char* request) const;
  Raw read_sample_fd(const SampleFd& s) const;
  std::size_t add_sampler(const PerfEventSpec& event);
  void check_sample_rate(const PerfEventSpec& event) const;  // freq= against perf_event_max_sample_rate
  void drain(SampleFd& s);
  // One record of a ring buffer, copied whole (perf_records.cpp).
  void take_record(const perf_event_header& h, const unsigned char* record, PerfSamples& out);
  bool take_user_stack(const unsigned char* record, std::size_t at, std::size_t size, const PerfStack& chain,
                       PerfSamples& out);
  // Opens the fds of one sampling event on every target, their ring buffers mapped.
  std::vector<SampleFd> open_sampler(const PerfEventSpec& event, bool first);
  [[nodiscard]] const std::string& group_name() const;
  static void close_event(Target& t, std::size_t i);
  static void close_sample_fd(SampleFd& s);

  Scope scope_;
  AccessOptions options_;
  std::vector<Target> targets_;
  std::vector<PerfEventSpec> events_;
  std::vector<Slot> slots_;                    // per event
  std::vector<std::vector<SampleFd>> samplers_;  // per sampling event
  std::vector<PerfSamples> samples_;           // per target
  std::size_t ring_bytes_ = 0;
  bool callchain_ = false;  // PERF_SAMPLE_CALLCHAIN on the sampling events
  std::uint32_t user_stack_bytes_ = 0;  // and the user registers and stack (sample_stack_user)
  std::unordered_map<int, std::vector<PerfMapping>> mappings_;  // per pid
  std::vector<unsigned char> record_;  // drain's copy of one record
  bool format_lost_ = true;  // PERF_FORMAT_LOST (Linux 6.0): cleared when the kernel refuses it
  long owner_tid_ = 0;
  bool running_ = false;
  bool started_once_ = false;
  bool software_grouped_ = false;       // a grouped event is a software event: never on a counter
  std::vector<std::uint64_t> buffer_;  // the group read's: nr, enabled, running, {value, id} x n
  std::vector<Count> scratch_;         // read_values' general path (sized when events are added)
  // The direct path, decided when events are added: one target, no sampling event, no rdpmc:
  // its leader's fd, else -1; and the bytes of its group read.
  int direct_fd_ = -1;
  std::size_t direct_bytes_ = 0;
  int toggle_fd_ = -1;  // start and stop's ioctl: direct_fd_, unless enable_on_exec starts it
  const char* last_path_ = "read";
};

}  // namespace pmc::detail
