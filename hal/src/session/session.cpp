// A session's lifetime and its access methods: construction, start (straight to a single perf
// group when it can), stop, reset, poll, and pmc::Session, which forwards to SessionImpl. The
// rest is by concern: session_add.cpp (adding events), session_read.cpp (the read plan and
// reads), session_profile.cpp (profiling), session_run.cpp (simulated workloads).
#include "session_impl.hpp"
#include "signal_map.hpp"  // the complete type ~SessionImpl destroys

#include "access.hpp"
#include "context.hpp"

#include <pmc/error.hpp>
#include <pmc/session.hpp>

#include <fmt/format.h>

#include <exception>

namespace pmc {

std::string Scope::describe() const {
  switch (kind) {
    case Kind::thread: return "this thread";
    case Kind::process: return fmt::format("{} {}", one_thread ? "thread" : "process", pid);
    case Kind::cpu: return fmt::format("CPU {}", cpu);
    case Kind::each_cpu: return "each CPU";
    case Kind::all_cpus: return "all CPUs";
  }
  return "?";
}

namespace detail {

namespace {

std::string profile_on_workload(const Context& ctx) {
  const std::vector<std::string> backends = ctx.profiling_backends();
  if (backends.empty()) return "no loaded backend samples at counter interrupts";
  return fmt::format("a simulated PMU profiles with backend = \"{}\" on a workload", backends.front());
}

}  // namespace

SessionImpl::SessionImpl(std::shared_ptr<const Context> context, Scope s, AccessOptions o)
    : ctx(std::move(context)), scope(s), options(std::move(o)) {
  ctx->ensure();  // the catalog and the PMU Hal::open left to their first use
}

Device* SessionImpl::device() const { return registers_ ? registers_->device() : nullptr; }

// Access "sim": the first PMU event (or a workload run) builds the backend's device model.
void SessionImpl::open_sim() {
  if (registers_) return;
  registers_ = std::make_unique<RegisterAccess>(ctx, ctx->make_device(), options);
}

SessionImpl::~SessionImpl() {
  if (running) {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; the counters are switched off as far as possible
    }
  }
}

// The timing order: the clock-like HAL events bracket the PMU counters.
SessionImpl::AccessList SessionImpl::accesses() const {
  AccessList out;
  if (tsc_) out.list[out.size++] = tsc_.get();
  if (perf_) out.list[out.size++] = perf_.get();
  if (registers_) out.list[out.size++] = registers_.get();
  return out;
}

std::vector<int> SessionImpl::cpus() {
  if (perf_) return perf_->cpus();
  return online_cpus(options.sysfs_root);
}

PerfAccess& SessionImpl::perf() {
  if (!perf_) perf_ = std::make_unique<PerfAccess>(scope, options);
  return *perf_;
}

// A session that is one perf group goes straight to it; the rest is start_slowly()'s.
void SessionImpl::start() {
  if (running) return;
  ReadPlan& plan = read_plan();
  if (plan.direct && profile_request.empty()) [[likely]] {
    plan.direct->start();
    running = true;
    return;
  }
  start_slowly();
}

void SessionImpl::start_slowly() {
  if (encodings.empty()) throw Error(errc::invalid_argument, "the session has no events to count");
  if (!profile_request.empty() && perf_profile_ && sampling_events_ == 0)
    throw Error(errc::invalid_argument,
                fmt::format("the session profiles but counts no sampling event; add cpu-clock or task-clock with a "
                            "sampling period in ns (cpu-clock:period=100000){}",
                            ctx->has_backend() ? std::string()
                                        : fmt::format(" (a PMU's counter interrupts need a backend, and no backend "
                                                      "matches this CPU ({}); {})",
                                                      describe(ctx->cpu), profile_on_workload(*ctx))));
  if (!profile_request.empty() && !perf_profile_ && backend_events_.empty())
    throw Error(errc::invalid_argument,
                "the session profiles at counter interrupts but counts no PMU event; add one (cycles, for example)");
  const AccessList& list = read_plan().access;
  std::size_t started = 0;
  try {
    for (; started < list.size; ++started) list.list[started]->start();
  } catch (...) {
    while (started-- > 0) {
      try {
        list.list[started]->stop();
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
  running = true;
  if (perf_profile_) perf_profiled_ = true;
}

void SessionImpl::stop() {
  if (!running) return;
  running = false;
  ReadPlan& plan = read_plan();
  if (plan.direct) [[likely]] {
    plan.direct->stop();
    return;
  }
  const AccessList& list = plan.access;
  std::exception_ptr first;
  for (std::size_t k = list.size; k-- > 0;) {
    try {
      list.list[k]->stop();
    } catch (...) {  // stop every access even when one fails, then report the first failure
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void SessionImpl::reset() {
  for (Access* a : read_plan().access) a->reset();
}

void SessionImpl::poll() {
  for (Access* a : read_plan().access) a->poll();
}

}  // namespace detail

Session::Session(std::unique_ptr<detail::SessionImpl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

void Session::add(std::string_view event) { impl_->add(event); }
void Session::add_group(const std::vector<std::string>& events) { impl_->add_group(events); }
const std::vector<Encoding>& Session::encodings() const { return impl_->encodings; }
void Session::start() { impl_->start(); }
void Session::stop() { impl_->stop(); }
void Session::reset() { impl_->reset(); }
const std::vector<Reading>& Session::read() { return impl_->read(); }
std::size_t Session::read(std::span<std::uint64_t> values) { return impl_->read(values); }
std::size_t Session::readings() const { return impl_->readings(); }
void Session::poll() { impl_->poll(); }
bool Session::running() const { return impl_->running; }
WorkloadRun Session::run(const Workload& workload) { return impl_->run(workload); }
WorkloadRun Session::run(WorkloadReader& workload) { return impl_->run(workload); }
void Session::profile(const ProfileRequest& request) { impl_->profile(request); }
const ProfileRequest& Session::profile_request() const { return impl_->profile_request; }
std::vector<LevelHistogram> Session::level_histograms() { return impl_->level_histograms(); }
std::vector<PcProfile> Session::pc_profiles() { return impl_->pc_profiles(); }
std::vector<PcCount> Session::sampled_pcs(AddressSpace space) { return impl_->sampled_pcs(space); }
std::uint64_t Session::lost_samples() { return impl_->lost_samples(); }
const Scope& Session::scope() const { return impl_->scope; }

}  // namespace pmc
