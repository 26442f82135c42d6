// Access "perf" (perf_event.hpp): the records of the sampling events' ring buffers
// (include/uapi/linux/perf_event.h): the samples (IP, pid and tid, and the call chain when asked
// for), the lost-sample records, and the side-band records of the first sampling event that say
// where each sampled process has its code (PERF_RECORD_MMAP2, COMM with the exec flag, FORK).
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

namespace pmc::detail {

std::size_t PerfStackHash::operator()(const PerfStack& s) const noexcept {
  std::size_t h = std::hash<int>()(s.pid);
  auto mix = [&](std::uint64_t v) { h ^= std::hash<std::uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (std::uint64_t pc : s.kernel) mix(pc);
  mix(~std::uint64_t{0});
  for (std::uint64_t pc : s.user) mix(pc);
  return h;
}

namespace {

template <class T>
T field(const unsigned char* record, std::size_t at) {
  T v{};
  std::memcpy(&v, record + at, sizeof v);
  return v;
}

// The call chain's frames into the stack, by the context markers the kernel puts before each
// part (PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER); frames of other contexts (hypervisor, guest)
// are left out.
void split_chain(const unsigned char* record, std::size_t at, std::uint64_t nr, PerfStack& stack) {
  std::vector<std::uint64_t>* part = nullptr;
  for (std::uint64_t i = 0; i < nr; ++i) {
    const auto pc = field<std::uint64_t>(record, at + i * 8);
    if (pc >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) {
      part = pc == static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL) ? &stack.kernel
             : pc == static_cast<std::uint64_t>(PERF_CONTEXT_USER) ? &stack.user
                                                                   : nullptr;
      continue;
    }
    if (part) part->push_back(pc);
  }
}

}  // namespace

// After the kernel part of the chain: the sampled user registers (abi; the kPerfUserRegsMask
// registers unless abi is PERF_SAMPLE_REGS_ABI_NONE, a kernel thread's sample), then the stack
// copy (size; that many bytes; and the bytes actually copied, dyn_size, when size is not 0).
// Appended to out.user_stacks; false (the sample goes to the stacks) when the record has no
// 64-bit user registers.
bool PerfAccess::take_user_stack(const unsigned char* record, std::size_t at, std::size_t size, const PerfStack& chain,
                                 PerfSamples& out) {
  if (size < at + 8 || field<std::uint64_t>(record, at) != PERF_SAMPLE_REGS_ABI_64) return false;
  at += 8;
  if (size < at + kPerfUserRegs * 8 + 8) return false;
  UserStackSample sample;
  sample.pid = chain.pid;
  for (std::size_t k = 0; k < kPerfUserRegs; ++k) sample.regs[k] = field<std::uint64_t>(record, at + 8 * kPerfUserRegsDwarf[k]);
  at += kPerfUserRegs * 8;
  const auto bytes = field<std::uint64_t>(record, at);
  at += 8;
  std::uint64_t copied = 0;
  if (bytes != 0 && bytes <= size - at && size - at - bytes >= 8)
    copied = std::min(bytes, field<std::uint64_t>(record, at + bytes));
  UserStacks& u = out.user_stacks;
  sample.kernel_at = u.kernel.size();
  sample.kernel_frames = chain.kernel.size();
  u.kernel.insert(u.kernel.end(), chain.kernel.begin(), chain.kernel.end());
  sample.stack_at = u.stack.size();
  sample.stack_bytes = static_cast<std::size_t>(copied);
  u.stack.insert(u.stack.end(), record + at, record + at + copied);
  u.samples.push_back(sample);
  return true;
}

void PerfAccess::take_record(const perf_event_header& h, const unsigned char* record, PerfSamples& out) {
  const std::size_t size = h.size;
  std::size_t at = sizeof h;
  if (h.type == PERF_RECORD_SAMPLE && size >= at + 16) {  // ip; pid, tid; [nr, ips[nr]]
    const auto ip = field<std::uint64_t>(record, at);
    const auto pid = field<std::uint32_t>(record, at + 8);
    at += 16;
    const std::uint16_t mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    switch (mode) {
      case PERF_RECORD_MISC_USER: ++out.levels[0]; ++out.user[ip]; break;
      case PERF_RECORD_MISC_KERNEL: ++out.levels[1]; ++out.kernel[ip]; break;
      case PERF_RECORD_MISC_HYPERVISOR: ++out.levels[2]; return;
      case PERF_RECORD_MISC_GUEST_KERNEL: ++out.levels[3]; return;
      case PERF_RECORD_MISC_GUEST_USER: ++out.levels[4]; return;
      default: ++out.unknown; return;
    }
    PerfStack stack;
    stack.pid = static_cast<int>(pid);
    if ((callchain_ || user_stack_bytes_) && size >= at + 8) {
      const auto nr = field<std::uint64_t>(record, at);
      if (nr <= (size - at - 8) / 8) {
        split_chain(record, at + 8, nr, stack);
        at += 8 + nr * 8;
      } else {
        at = size;  // not a chain: nor any field after it
      }
    }
    // The chain's first frame is the sampled IP; without a chain (or an empty one) it is alone.
    std::vector<std::uint64_t>& leaf = mode == PERF_RECORD_MISC_KERNEL ? stack.kernel : stack.user;
    if (leaf.empty() || leaf.front() != ip) leaf.insert(leaf.begin(), ip);
    if (user_stack_bytes_ && take_user_stack(record, at, size, stack, out)) return;
    ++out.stacks[std::move(stack)];
    return;
  }
  if (h.type == PERF_RECORD_LOST && !format_lost_ && size >= at + 16) {  // id, lost
    out.lost += field<std::uint64_t>(record, at + 8);
    return;
  }
  if (h.type == PERF_RECORD_MMAP2 && size > at + 64) {
    // pid, tid; addr, len, pgoff; maj, min, ino, ino_generation (or the build id); prot, flags;
    // the file's name, NUL-terminated.
    const auto pid = static_cast<int>(field<std::uint32_t>(record, at));
    PerfMapping m;
    m.start = field<std::uint64_t>(record, at + 8);
    m.end = m.start + field<std::uint64_t>(record, at + 16);
    m.pgoff = field<std::uint64_t>(record, at + 24);
    const char* name = reinterpret_cast<const char*>(record + at + 64);
    m.path.assign(name, strnlen(name, size - at - 64));
    auto& maps = mappings_[pid];
    // A new mapping replaces whatever it covers (MAP_FIXED over a reservation, a reused range).
    std::erase_if(maps, [&](const PerfMapping& o) { return o.start < m.end && m.start < o.end; });
    maps.push_back(std::move(m));
    return;
  }
  if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC) && size >= at + 8) {
    const auto pid = static_cast<int>(field<std::uint32_t>(record, at));
    if (pid == static_cast<int>(field<std::uint32_t>(record, at + 4))) mappings_[pid].clear();  // a new program
    return;
  }
  if (h.type == PERF_RECORD_FORK && size >= at + 16) {  // pid, ppid, tid, ptid
    const auto pid = static_cast<int>(field<std::uint32_t>(record, at));
    const auto ppid = static_cast<int>(field<std::uint32_t>(record, at + 4));
    if (pid != ppid) {  // a process, not a thread: it starts with its parent's mappings
      const auto parent = mappings_.find(ppid);
      mappings_[pid] = parent == mappings_.end() ? std::vector<PerfMapping>() : parent->second;
    }
  }
}

void PerfAccess::sample_callchains(bool on, std::uint32_t user_stack_bytes) {
  if (on == callchain_ && user_stack_bytes == user_stack_bytes_) return;
  if (running_) throw Error(errc::invalid_argument, "cannot change call-chain sampling while the events count");
  if (user_stack_bytes && !kPerfUserRegsMask)
    throw Error(errc::not_supported, "user stacks are sampled (for DWARF unwinding) on x86-64 only");
  if (user_stack_bytes % 8 || user_stack_bytes > kPerfMaxUserStack)
    throw Error(errc::invalid_argument, fmt::format("a user stack copy of {} bytes: it must be a multiple of 8 up to {}",
                                                    user_stack_bytes, kPerfMaxUserStack));
  const bool was = callchain_;
  const std::uint32_t was_bytes = user_stack_bytes_;
  callchain_ = on;
  user_stack_bytes_ = user_stack_bytes;
  std::vector<std::vector<SampleFd>> reopened(samplers_.size());
  try {
    for (std::size_t i = 0; i < events_.size(); ++i)
      if (slots_[i].sampling) reopened[slots_[i].pos] = open_sampler(events_[i], slots_[i].pos == 0);
  } catch (...) {
    callchain_ = was;
    user_stack_bytes_ = was_bytes;
    for (auto& fds : reopened)
      for (auto& s : fds) close_sample_fd(s);
    throw;
  }
  for (std::size_t i = 0; i < samplers_.size(); ++i) {
    for (auto& s : samplers_[i]) close_sample_fd(s);
    samplers_[i] = std::move(reopened[i]);
  }
  for (auto& t : samples_) {
    const int cpu = t.cpu;
    t = PerfSamples();
    t.cpu = cpu;
  }
}

}  // namespace pmc::detail
