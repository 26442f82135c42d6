// Profiling: what a PMU records at each counter interrupt besides the count. Two views:
//  - a level histogram: the interrupts by the execution level the CPU was at (the Alpha
//    21064's pfm(7) IPL histogram: IPL 0-5, idle, user; an x86 PMU would have ring 0 and 3);
//  - a PC profile: the interrupts by the address of the interrupted instruction, in equal
//    buckets over one address range of user or kernel code.
// A session asks for them with Session::profile() and reads them with level_histograms() and
// pc_profiles(). A backend provides them through a ProfilingDriver (<pmc/sdk/profiling.hpp>); without
// a PMU, Linux perf samples the HAL clock events cpu-clock and task-clock given a `period=N`
// (docs/user-guide.md, "Profiling a command").
#pragma once
#if __cplusplus < 202002L
#error "<pmc/profile.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pmc {

enum class AddressSpace { user, kernel };

// [start, end) of user or kernel addresses.
struct PcRange {
  AddressSpace space = AddressSpace::user;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

struct ProfileRequest {
  bool levels = false;         // a histogram of execution levels
  std::optional<PcRange> pc;   // a PC profile over this range
  // Perf sampling only: each sample's call chain too (the kernel's frame-pointer walk of the
  // user stack, and the kernel stack when kernel mode is sampled), in Session::sampled_stacks().
  bool callchain = false;
  // Perf sampling on x86-64 only: a copy of this many bytes of the user stack (from the stack
  // pointer up; a multiple of 8, at most 65528, perf's --call-graph dwarf,SIZE) and the user
  // registers at each sample, for the caller's own unwinder (the DWARF call frame information).
  // The samples of a user stack are then in Session::sampled_user_stacks() with their kernel
  // frames, not in sampled_stacks().
  std::uint32_t user_stack_bytes = 0;
  [[nodiscard]] bool empty() const { return !levels && !pc && !callchain && user_stack_bytes == 0; }
};

struct LevelBin {
  std::string label;           // "IPL 0", "idle", "user": the PMU's names, in its order
  std::uint64_t samples = 0;
};

struct PMC_API LevelHistogram {
  int cpu = -1;                // the CPU, for per-CPU histograms; -1 otherwise
  std::vector<LevelBin> bins;
  [[nodiscard]] std::uint64_t total() const;
};

struct PcBucket {
  std::uint64_t start = 0;     // first address of the bucket
  std::uint64_t end = 0;       // one past its last (the range's end for the last bucket)
  std::uint64_t samples = 0;
};

struct PMC_API PcProfile {
  int cpu = -1;
  PcRange range;
  std::uint64_t bucket_bytes = 0;       // bucket b covers range.start + b * bucket_bytes on
  std::vector<std::uint64_t> samples;   // samples per bucket
  [[nodiscard]] std::uint64_t total() const;
  [[nodiscard]] PcBucket bucket(std::size_t b) const;
  // The n buckets with the most samples, most first, ties in address order; empty buckets
  // are never listed.
  [[nodiscard]] std::vector<PcBucket> hottest(std::size_t n) const;
};

// One sampled address and how many samples fell on it (Session::sampled_pcs()).
struct PcCount {
  std::uint64_t pc = 0;
  std::uint64_t samples = 0;
};

// One sampled stack of perf sampling and how many samples had it (Session::sampled_stacks()):
// the process, the kernel frames, then the user frames, each leaf first. The sampled address is
// the first frame (of `kernel` for a sample in kernel mode); without call chains it is the only
// one, with them the callers follow as return addresses (the instruction after each call).
struct SampledStack {
  int pid = -1;
  std::vector<std::uint64_t> kernel;
  std::vector<std::uint64_t> user;
  std::uint64_t samples = 0;
};

// One sample with its user stack copied (ProfileRequest::user_stack_bytes): the user registers in
// x86-64 DWARF numbering (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then rip as 16), the
// kernel frames (a sample in kernel mode: leaf first, as SampledStack::kernel) and the copied
// bytes, which start at the sampled rsp. Both lists are stretches of the UserStacks that holds the
// sample, so that a sample costs no allocation of its own.
struct UserStackSample {
  int pid = -1;
  std::array<std::uint64_t, 17> regs{};
  std::size_t kernel_at = 0, kernel_frames = 0;  // UserStacks::kernel[kernel_at, + kernel_frames)
  std::size_t stack_at = 0, stack_bytes = 0;     // UserStacks::stack[stack_at, + stack_bytes)
};

struct UserStacks {
  std::vector<UserStackSample> samples;  // in the order they were taken, per target
  std::vector<std::uint64_t> kernel;
  std::vector<unsigned char> stack;
};

// An executable mapping of a sampled process (Session::sampled_mappings()): [start, end) maps
// the file `path` from byte `offset` on; the kernel's own mappings have names such as "[vdso]".
struct MappedFile {
  int pid = -1;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t offset = 0;
  std::string path;
};

}  // namespace pmc

#endif  // C++20
