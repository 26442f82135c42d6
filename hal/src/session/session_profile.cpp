// Profiling a session: perf sampling of the HAL clock events, or the backend's ProfilingDriver
// at the simulated device's counter interrupts; the samples merged into level histograms, PC
// profiles and sampled PCs.
#include "session_impl.hpp"

#include "access.hpp"
#include "context.hpp"
#include "text.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pmc::detail {

namespace {

// Which loaded backends profile at counter interrupts, for the messages of the sessions that
// cannot (the names come from the plugins, not from this file).
std::string profilers(const Context& ctx) {
  const std::vector<std::string> backends = ctx.profiling_backends();
  if (backends.empty()) return "no loaded backend does";
  if (backends.size() == 1) return fmt::format("the {} backend does", backends.front());
  return fmt::format("the backends {} do", join(backends));
}

}  // namespace

// Profiling needs interrupts: either Linux perf sampling the HAL clock events given a period
// (without a backend, with access "perf", or whenever the session has such an event), or a
// backend whose driver samples at its counters' interrupts (ProfilingDriver) and an access
// method that can receive them (only the simulated device, so far).
void SessionImpl::profile(const ProfileRequest& request) {
  if (running) throw Error(errc::invalid_argument, "cannot change profiling while the session is counting");
  if (request.empty()) {
    if (perf_) perf_->sample_callchains(false);
    if (registers_) registers_->set_profile(nullptr, {});
    profile_request = {};
    perf_profile_ = false;
    return;
  }
  if (!ctx->has_backend() || ctx->access_method() == AccessKind::perf || sampling_events_ > 0) {
    if (request.pc && request.pc->start >= request.pc->end)
      throw Error(errc::invalid_argument,
                  fmt::format("the PC range [{:#x}, {:#x}) is empty", request.pc->start, request.pc->end));
    if (request.callchain || request.user_stack_bytes || perf_)
      perf().sample_callchains(request.callchain, request.user_stack_bytes);
    if (registers_) registers_->set_profile(nullptr, {});
    profile_request = request;  // the samples collected so far are kept: only the view changes
    perf_profile_ = true;
    return;
  }
  if (request.callchain || request.user_stack_bytes)
    throw Error(errc::not_supported,
                fmt::format("call chains come from Linux perf sampling (a command's or a process's), not from "
                            "backend '{}''s counter interrupts",
                            ctx->pmu.name));
  const ProfilingDriver* driver = ctx->backend().profiling();
  if (!driver)
    throw Error(errc::not_supported,
                fmt::format("backend '{}' collects no profiles: its driver does not sample at counter interrupts (it "
                            "has no pmc::ProfilingDriver); {}",
                            ctx->pmu.name, profilers(*ctx)));
  if (ctx->access_method() != AccessKind::sim)
    throw Error(errc::not_supported,
                fmt::format("profiling needs the counters' overflow interrupts, which access '{}' cannot receive in "
                            "user space; backend '{}' profiles with access = \"sim\" on a simulated workload",
                            access_name(ctx->access_method()), ctx->pmu.name));
  driver->check_profile(ctx->pmu_context(), request);  // throws: nothing changed
  open_sim();  // the driver samples on the device model
  registers_->set_profile(driver, request);
  profile_request = request;
  perf_profile_ = false;
}

std::vector<PerfSamples> SessionImpl::merged_samples() {
  std::vector<PerfSamples> out;
  if (!perf_ || !perf_->sampling()) return out;
  perf_->drain();
  if (scope.kind == Scope::Kind::each_cpu) return perf_->samples();
  PerfSamples sum;
  for (const PerfSamples& s : perf_->samples()) {
    for (std::size_t i = 0; i < sum.levels.size(); ++i) sum.levels[i] += s.levels[i];
    sum.unknown += s.unknown;
    sum.lost += s.lost;
    for (const auto& [ip, n] : s.user) sum.user[ip] += n;
    for (const auto& [ip, n] : s.kernel) sum.kernel[ip] += n;
  }
  out.push_back(std::move(sum));
  return out;
}

std::vector<PcCount> SessionImpl::sampled_pcs(AddressSpace space) {
  std::vector<PcCount> out;
  for (const PerfSamples& s : merged_samples())
    for (const auto& [ip, n] : space == AddressSpace::user ? s.user : s.kernel) out.push_back({ip, n});
  std::sort(out.begin(), out.end(), [](const PcCount& a, const PcCount& b) { return a.pc < b.pc; });
  // each_cpu: one address may come from several CPUs
  std::vector<PcCount> merged;
  for (const PcCount& c : out) {
    if (!merged.empty() && merged.back().pc == c.pc) merged.back().samples += c.samples;
    else merged.push_back(c);
  }
  return merged;
}

std::uint64_t SessionImpl::lost_samples() {
  std::uint64_t lost = 0;
  for (const PerfSamples& s : merged_samples()) lost += s.lost;
  return lost;
}

std::vector<LevelHistogram> SessionImpl::level_histograms() {
  std::vector<LevelHistogram> out;
  if (perf_profile_) {
    if (!profile_request.levels || !perf_profiled_) return out;
    for (const PerfSamples& s : merged_samples()) {
      LevelHistogram h;
      h.cpu = s.cpu;
      for (std::size_t i = 0; i < s.levels.size(); ++i) h.bins.push_back({kPerfLevelNames[i], s.levels[i]});
      out.push_back(std::move(h));
    }
    return out;
  }
  if (registers_)
    if (auto h = registers_->levels()) out.push_back(std::move(*h));
  return out;
}

std::vector<PcProfile> SessionImpl::pc_profiles() {
  std::vector<PcProfile> out;
  if (perf_profile_) {
    if (!profile_request.pc || !perf_profiled_) return out;
    const PcRange& range = *profile_request.pc;
    const std::uint64_t bytes = range.end - range.start;
    std::uint64_t bucket = 16;  // 16-byte buckets (as the simulated profilers'); doubled until at most 2^20 buckets
    while ((bytes + bucket - 1) / bucket > (std::uint64_t{1} << 20)) bucket *= 2;
    for (const PerfSamples& s : merged_samples()) {
      PcProfile p;
      p.cpu = s.cpu;
      p.range = range;
      p.bucket_bytes = bucket;
      p.samples.assign(static_cast<std::size_t>((bytes + bucket - 1) / bucket), 0);
      for (const auto& [ip, n] : range.space == AddressSpace::user ? s.user : s.kernel)
        if (ip >= range.start && ip < range.end) p.samples[static_cast<std::size_t>((ip - range.start) / bucket)] += n;
      out.push_back(std::move(p));
    }
    return out;
  }
  if (registers_)
    if (auto p = registers_->pc_profile()) out.push_back(std::move(*p));
  return out;
}

}  // namespace pmc::detail
