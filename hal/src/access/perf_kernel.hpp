// What the perf_event files of this folder share about the kernel's interface: the system call,
// the attribute every event starts from, the page size of the mmap'ed pages, errno's names, and
// the calling thread's id. The files: perf_event.cpp (building attributes, opening the group,
// start and stop), perf_read.cpp (group reads and the rdpmc fast path), perf_sampling.cpp
// (sampling events and their ring buffers), perf_errors.cpp (what a failed open says).
#pragma once

#include "perf_event.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

// rdpmc and rdtsc, the fast path's instructions (perf_read.cpp), exist on x86 only.
#if defined(__x86_64__) || defined(__i386__)
#define PMC_HAVE_RDPMC 1
#else
#define PMC_HAVE_RDPMC 0
#endif

namespace pmc::detail {

inline long perf_event_open(perf_event_attr* attr, int pid, int cpu, int group_fd, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

// What every perf event of a session is asked for: the event and its privilege filters.
inline perf_event_attr perf_attr(const PerfEventSpec& event) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.config1 = event.config1;
  attr.exclude_user = event.exclude_user;
  attr.exclude_kernel = event.exclude_kernel;
  return attr;
}

// A sampling event's attribute (perf_sampling.cpp opens it): perf_attr with the period, or
// freq = 1 and the frequency (perf record -F), and the precision.
inline perf_event_attr perf_sampling_attr(const PerfEventSpec& event) {
  perf_event_attr attr = perf_attr(event);
  if (event.sample_freq) {
    attr.freq = 1;
    attr.sample_freq = event.sample_freq;
  } else {
    attr.sample_period = event.sample_period;
  }
  attr.precise_ip = event.precise_ip & 3u;  // :p, :pp, :ppp of a PMU event
  return attr;
}

// Events that may sit on a hardware counter, and so be read with rdpmc.
inline bool perf_on_a_counter(const PerfEventSpec& e) {
  return e.type == PERF_TYPE_RAW || e.type == PERF_TYPE_HARDWARE || e.type == PERF_TYPE_HW_CACHE;
}

// The user registers that --call-graph dwarf samples (PERF_SAMPLE_REGS_USER) on x86-64, by the
// bits of arch/x86/include/uapi/asm/perf_regs.h: AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7,
// IP 8, R8-R15 16-23. A sample holds them in the order of their bits; kPerfUserRegsDwarf says
// where DWARF register k (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip) is among them.
// No mask elsewhere: user stacks are not sampled there.
#if defined(__x86_64__)
inline constexpr std::uint64_t kPerfUserRegsMask = 0x1ffull | (0xffull << 16);
#else
inline constexpr std::uint64_t kPerfUserRegsMask = 0;
#endif
inline constexpr std::size_t kPerfUserRegs = 17;
// perf's largest stack copy: a record's size is 16 bits.
inline constexpr std::uint32_t kPerfMaxUserStack = 65528;
inline constexpr std::uint8_t kPerfUserRegsDwarf[kPerfUserRegs] = {0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8};

// PERF_FORMAT_LOST (Linux 6.0), spelt out for older kernel headers.
inline constexpr std::uint64_t kPerfFormatLost = 1u << 4;

// The size of the user page of an event, and of each page of a ring buffer.
inline const std::size_t kPerfPageSize = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// "EACCES" for EACCES, and so on for the errors perf_event_open and mmap give; "errno" else.
const char* errno_name(int err);

// The calling thread's id (perf_read.cpp, where the read path asks it at every read).
long perf_thread_id();

}  // namespace pmc::detail
