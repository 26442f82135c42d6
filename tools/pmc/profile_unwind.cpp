// pmc profile --call-graph dwarf (profile_unwind.hpp): libdwfl's unwinder fed from the copies.
// Each process's Dwfl is attached (dwfl_attach_state) to callbacks that present one sample at a
// time as the process's only thread: its registers are the sampled ones, and its memory is the
// copied stack; other addresses are refused, so a frame whose return address lies outside the
// copy ends the walk.
#include "profile_unwind.hpp"

#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

namespace pmc_cli {

namespace {

// The sample being unwound, which the callbacks read through their argument.
struct Current {
  int pid = -1;
  const pmc::UserStackSample* sample = nullptr;
  const unsigned char* stack = nullptr;  // the copy, from the sampled rsp up
  bool given = false;                    // next_thread has named the thread once
  std::vector<std::uint64_t>* frames = nullptr;
};

constexpr std::size_t kRsp = 7, kRip = 16;  // x86-64 DWARF register numbers

pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
  auto* c = static_cast<Current*>(arg);
  if (c->given) return 0;
  c->given = true;
  *thread_arg = c;
  return c->pid;
}

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  const auto* c = static_cast<const Current*>(arg);
  const std::uint64_t sp = c->sample->regs[kRsp];
  if (addr < sp || addr - sp > c->sample->stack_bytes || c->sample->stack_bytes - (addr - sp) < sizeof *result)
    return false;
  std::memcpy(result, c->stack + (addr - sp), sizeof *result);
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  const auto* c = static_cast<const Current*>(arg);
  Dwarf_Word regs[kRip];  // rax .. r15; rip is the PC
  for (std::size_t k = 0; k < kRip; ++k) regs[k] = c->sample->regs[k];
  if (!dwfl_thread_state_registers(thread, 0, kRip, regs)) return false;
  dwfl_thread_state_register_pc(thread, c->sample->regs[kRip]);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {next_thread, nullptr, memory_read, set_initial_registers, nullptr,
                                                nullptr};

// The first frame is the sampled instruction; the others are return addresses, but for a signal
// frame's interrupted instruction (an activation), which is moved one on so that naming it as a
// caller (one byte before) lands on it.
int take_frame(Dwfl_Frame* state, void* arg) {
  auto* c = static_cast<Current*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
  c->frames->push_back(activation && !c->frames->empty() ? pc + 1 : pc);
  return c->frames->size() < kMaxUnwoundFrames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int walk_thread(Dwfl_Thread* thread, void* arg) {
  // Its end (-1 at the outermost frame without call frame information, or at a refused read) is
  // where the stack ends: what was found is kept.
  (void)dwfl_thread_getframes(thread, take_frame, arg);
  return DWARF_CB_ABORT;
}

struct VectorHash {
  std::size_t operator()(const std::pair<int, std::vector<std::uint64_t>>& s) const noexcept {
    std::size_t h = std::hash<int>()(s.first);
    for (std::uint64_t v : s.second) h = h * 1099511628211ull ^ std::hash<std::uint64_t>()(v);
    return h;
  }
};

}  // namespace

std::vector<pmc::SampledStack> unwind_stacks(const pmc::UserStacks& copies, Symbolizer& symbols) {
  std::map<int, Current> current;  // per process: where its Dwfl's callbacks look (stable nodes)
  std::map<int, bool> attached;
  std::unordered_map<std::pair<int, std::vector<std::uint64_t>>, std::size_t, VectorHash> index;  // -> out
  std::vector<pmc::SampledStack> out;
  std::vector<std::uint64_t> frames;
  frames.reserve(kMaxUnwoundFrames);
  for (const pmc::UserStackSample& s : copies.samples) {
    frames.clear();
    Dwfl* dwfl = symbols.dwfl(s.pid);
    Current& c = current[s.pid];
    if (dwfl && !attached.count(s.pid)) {
      c.pid = s.pid;
      attached[s.pid] = dwfl_attach_state(dwfl, nullptr, s.pid, &kThreadCallbacks, &c);
    }
    if (dwfl && attached[s.pid]) {
      c.sample = &s;
      c.stack = copies.stack.data() + s.stack_at;
      c.given = false;
      c.frames = &frames;
      (void)dwfl_getthreads(dwfl, walk_thread, &c);
    }
    if (frames.empty()) frames.push_back(s.regs[kRip]);  // no unwinding: the sampled address alone
    // One key: the kernel frames, a separator no address has, then the user frames.
    std::vector<std::uint64_t> key(copies.kernel.begin() + static_cast<std::ptrdiff_t>(s.kernel_at),
                                   copies.kernel.begin() + static_cast<std::ptrdiff_t>(s.kernel_at + s.kernel_frames));
    key.push_back(~std::uint64_t{0});
    key.insert(key.end(), frames.begin(), frames.end());
    auto [it, added] = index.try_emplace({s.pid, std::move(key)}, out.size());
    if (added) {
      pmc::SampledStack st;
      st.pid = s.pid;
      st.kernel.assign(copies.kernel.begin() + static_cast<std::ptrdiff_t>(s.kernel_at),
                       copies.kernel.begin() + static_cast<std::ptrdiff_t>(s.kernel_at + s.kernel_frames));
      st.user = frames;
      out.push_back(std::move(st));
    }
    ++out[it->second].samples;
  }
  std::sort(out.begin(), out.end(), [](const pmc::SampledStack& a, const pmc::SampledStack& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.user != b.user) return a.user < b.user;
    return a.kernel < b.kernel;
  });
  return out;
}

}  // namespace pmc_cli
