// Perf sampling's stacks and the sampled processes' mappings (Session::sampled_stacks(),
// sampled_mappings()): what a profile needs to name the functions once the command is gone.
#include "session_impl.hpp"

#include <algorithm>
#include <unordered_map>

namespace pmc {

std::vector<SampledStack> Session::sampled_stacks() { return impl_->sampled_stacks(); }
UserStacks Session::sampled_user_stacks() { return impl_->sampled_user_stacks(); }
std::vector<MappedFile> Session::sampled_mappings() { return impl_->sampled_mappings(); }

}  // namespace pmc

namespace pmc::detail {

std::vector<SampledStack> SessionImpl::sampled_stacks() {
  std::vector<SampledStack> out;
  if (!perf_ || !perf_->sampling()) return out;
  perf_->drain();
  std::unordered_map<PerfStack, std::uint64_t, PerfStackHash> sum;  // over the targets and CPUs
  for (const PerfSamples& s : perf_->samples())
    for (const auto& [stack, n] : s.stacks) sum[stack] += n;
  out.reserve(sum.size());
  for (auto& [stack, n] : sum) out.push_back({stack.pid, stack.kernel, stack.user, n});
  std::sort(out.begin(), out.end(), [](const SampledStack& a, const SampledStack& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.user != b.user) return a.user < b.user;
    return a.kernel < b.kernel;
  });
  return out;
}

// The targets' copies one after the other, each sample's stretches moved by what came before.
UserStacks SessionImpl::sampled_user_stacks() {
  UserStacks out;
  if (!perf_ || !perf_->sampling()) return out;
  perf_->drain();
  for (const PerfSamples& s : perf_->samples()) {
    const UserStacks& u = s.user_stacks;
    const std::size_t kernel_base = out.kernel.size(), stack_base = out.stack.size();
    for (UserStackSample sample : u.samples) {
      sample.kernel_at += kernel_base;
      sample.stack_at += stack_base;
      out.samples.push_back(sample);
    }
    out.kernel.insert(out.kernel.end(), u.kernel.begin(), u.kernel.end());
    out.stack.insert(out.stack.end(), u.stack.begin(), u.stack.end());
  }
  return out;
}

std::vector<MappedFile> SessionImpl::sampled_mappings() {
  std::vector<MappedFile> out;
  if (!perf_ || !perf_->sampling()) return out;
  perf_->drain();
  for (const auto& [pid, maps] : perf_->mappings())
    for (const PerfMapping& m : maps) out.push_back({pid, m.start, m.end, m.pgoff, m.path});
  std::sort(out.begin(), out.end(), [](const MappedFile& a, const MappedFile& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.start < b.start;
  });
  return out;
}

}  // namespace pmc::detail
