#include "session_impl.hpp"

#include "access.hpp"
#include "context.hpp"

#include <pmc/error.hpp>
#include <pmc/session.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace pmc {

std::string Scope::describe() const {
  switch (kind) {
    case Kind::thread: return "this thread";
    case Kind::process: return fmt::format("process {}", pid);
    case Kind::cpu: return fmt::format("CPU {}", cpu);
    case Kind::each_cpu: return "each CPU";
    case Kind::all_cpus: return "all CPUs";
  }
  return "?";
}

namespace detail {

SessionImpl::SessionImpl(std::shared_ptr<const Context> context, Scope s, AccessOptions o)
    : ctx(std::move(context)), scope(s), options(std::move(o)) {}

Device* SessionImpl::device() const { return registers_ ? registers_->device() : nullptr; }

// Access "sim": the first PMU event (or a workload run) builds the backend's device model.
void SessionImpl::open_sim() {
  if (registers_) return;
  registers_ = std::make_unique<RegisterAccess>(ctx, ctx->make_device());
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
std::vector<Access*> SessionImpl::accesses() const {
  std::vector<Access*> out;
  if (tsc_) out.push_back(tsc_.get());
  if (perf_) out.push_back(perf_.get());
  if (registers_) out.push_back(registers_.get());
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

void SessionImpl::add(std::string_view event) {
  if (running) throw Error(errc::invalid_argument, fmt::format("cannot add event '{}' while the session is counting", event));
  EventSpec spec = parse_event(event);
  if (auto hal = find_hal_event(spec)) return add_hal_event(std::move(*hal));
  add_backend_event(spec);
}

void SessionImpl::add_hal_event(HalEvent h) {
  std::size_t index = 0;
  Access* access = nullptr;
  if (h.info->kind == HalEventKind::tsc) {
    if (!tsc_) tsc_ = std::make_unique<TscAccess>();
    index = tsc_->add();
    access = tsc_.get();
  } else {
    const bool fresh = !perf_;
    PerfEventSpec p;
    p.event = h.encoding.event;
    p.type = PERF_TYPE_SOFTWARE;
    p.config = h.info->config;
    p.exclude_user = h.exclude_user;
    p.exclude_kernel = h.exclude_kernel;
    p.sample_period = h.period;
    try {
      index = perf().add(p);
    } catch (...) {
      if (fresh) perf_.reset();  // as it was
      throw;
    }
    access = perf_.get();
  }
  if (h.period) ++sampling_events_;
  encodings.push_back(std::move(h.encoding));
  entries_.push_back({access, index, nullptr, h.info->unit});
}

void SessionImpl::add_backend_event(const EventSpec& spec) {
  if (!ctx->loaded)
    throw Error(errc::not_supported,
                fmt::format("event '{}' needs a PMU backend, and none was chosen: {}; events available here: {}", spec.text,
                            ctx->why, [] {
                              std::string names;
                              for (const auto& e : hal_events()) names += (names.empty() ? "" : ", ") + std::string(e.name);
                              return names;
                            }()));
  if (ctx->access == "perf") return add_perf_event(spec);
  if (ctx->access == "sim" && scope.kind != Scope::Kind::thread)
    throw Error(errc::not_supported,
                fmt::format("event '{}' cannot be counted for {}: access 'sim' counts the simulated {} device that "
                            "Session::run drives, not real activity, which needs access = \"perf\" ({})",
                            spec.text, scope.describe(), ctx->pmu.name, ctx->access_reason));
  Encoding enc = ctx->backend().encode(spec, ctx->pmu_context());
  // Reschedule every backend event with the new one; on any failure nothing has changed.
  std::vector<Encoding> backend;
  for (std::size_t i : backend_events_) backend.push_back(encodings[i]);
  backend.push_back(enc);
  std::vector<std::size_t> slots = schedule(ctx->pmu, backend);  // throws: nothing changed
  if (!registers_ && ctx->access == "msr") open_msr(spec);
  if (!registers_ && ctx->access == "sim") open_sim();
  if (!registers_)
    throw Error(errc::not_supported, fmt::format("event '{}': unknown access '{}'", spec.text, ctx->access));
  std::vector<const CounterInfo*> counters;
  for (std::size_t s : slots) counters.push_back(&ctx->pmu.counters[s]);
  registers_->assign(backend, counters);
  // Committed.
  encodings.push_back(std::move(enc));
  backend_events_.push_back(encodings.size() - 1);
  entries_.push_back({registers_.get(), backend.size() - 1, nullptr});
  for (std::size_t i = 0; i < backend_events_.size(); ++i) entries_[backend_events_[i]].counter = counters[i];
}

// Access "msr": the first PMU event opens /dev/cpu/N/msr of the CPU the scope names (this
// thread: the CPU it runs on now, where it stays pinned), after checking that nobody else is
// using the PMU.
void SessionImpl::open_msr(const EventSpec& spec) {
  if (ctx->cpu.source != "native")
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'msr' programs this machine's PMU, but the session is for the CPU of "
                            "the CPUID dump {}; use access = \"sim\" to count on its simulated PMU",
                            spec.text, ctx->cpu.source));
  int cpu = -1;
  if (scope.kind == Scope::Kind::thread)
    cpu = sched_getcpu();
  else if (scope.kind == Scope::Kind::cpu)
    cpu = scope.cpu;
  else
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'msr' counts one CPU (this thread's, pinned to it, or Scope::on_cpu), "
                            "not {}; use access = \"perf\"",
                            spec.text, scope.describe()));
  if (cpu < 0) throw Error(errc::not_supported, fmt::format("event '{}': sched_getcpu failed", spec.text));
  if (auto conflict = nmi_watchdog_conflict(options))
    throw Error(errc::not_supported, fmt::format("event '{}': access 'msr' refused: {}", spec.text, *conflict));
  auto pin = std::make_unique<CpuPin>(cpu);
  auto regs = std::make_unique<MsrRegisterFile>(cpu, ctx->pmu, options);
  if (auto busy = counters_in_use(*regs, ctx->pmu, cpu, regs->device().string()))
    throw Error(errc::not_supported, fmt::format("event '{}': access 'msr' refused: {}", spec.text, *busy));
  pin_ = std::move(pin);
  registers_ = std::make_unique<RegisterAccess>(ctx, std::move(regs));
}

// Access "perf": the kernel programs the counters from the raw encoding. Scheduling still runs,
// so a set the PMU cannot hold at once is refused with the same message as on the other
// accesses (one group would never be scheduled), and readings say which counter it planned.
void SessionImpl::add_perf_event(const EventSpec& spec) {
  if (ctx->cpu.source != "native")
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'perf' counts this machine's PMU, but the session is for the CPU of "
                            "the CPUID dump {}; use access = \"sim\" to count on its simulated PMU",
                            spec.text, ctx->cpu.source));
  Encoding enc = ctx->backend().encode(spec, ctx->pmu_context());
  std::vector<Encoding> backend;
  for (std::size_t i : backend_events_) backend.push_back(encodings[i]);
  backend.push_back(enc);
  std::vector<std::size_t> slots = schedule(ctx->pmu, backend);  // throws: nothing changed
  const bool fresh = !perf_;
  std::size_t index = 0;
  try {
    index = perf().add(perf_raw_event(enc, ctx->catalog.format()));
  } catch (...) {
    if (fresh) perf_.reset();
    throw;
  }
  encodings.push_back(std::move(enc));
  backend_events_.push_back(encodings.size() - 1);
  entries_.push_back({perf_.get(), index, nullptr});
  for (std::size_t i = 0; i < backend_events_.size(); ++i)
    entries_[backend_events_[i]].counter = &ctx->pmu.counters[slots[i]];
}

// Profiling needs interrupts: either Linux perf sampling the HAL clock events given a period
// (without a backend, with access "perf", or whenever the session has such an event), or a
// backend whose driver samples at its counters' interrupts (ProfilingDriver) and an access
// method that can receive them (only the simulated device, so far).
void SessionImpl::profile(const ProfileRequest& request) {
  if (running) throw Error(errc::invalid_argument, "cannot change profiling while the session is counting");
  if (request.empty()) {
    if (registers_) registers_->set_profile(nullptr, {});
    profile_request = {};
    perf_profile_ = false;
    return;
  }
  if (!ctx->loaded || ctx->access == "perf" || sampling_events_ > 0) {
    if (request.pc && request.pc->start >= request.pc->end)
      throw Error(errc::invalid_argument,
                  fmt::format("the PC range [{:#x}, {:#x}) is empty", request.pc->start, request.pc->end));
    if (registers_) registers_->set_profile(nullptr, {});
    profile_request = request;  // the samples collected so far are kept: only the view changes
    perf_profile_ = true;
    return;
  }
  const ProfilingDriver* driver = ctx->backend().profiling();
  if (!driver)
    throw Error(errc::not_supported,
                fmt::format("backend '{}' collects no profiles: its driver does not sample at counter interrupts (it "
                            "has no pmc::ProfilingDriver); the alpha21064_sim backend does",
                            ctx->pmu.name));
  if (ctx->access != "sim")
    throw Error(errc::not_supported,
                fmt::format("profiling needs the counters' overflow interrupts, which access '{}' cannot receive in "
                            "user space; backend '{}' profiles with access = \"sim\" on a simulated workload",
                            ctx->access, ctx->pmu.name));
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
    std::uint64_t bucket = 16;  // the Alpha's; doubled until at most 2^20 buckets
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

void SessionImpl::start() {
  if (running) return;
  if (encodings.empty()) throw Error(errc::invalid_argument, "the session has no events to count");
  if (!profile_request.empty() && perf_profile_ && sampling_events_ == 0)
    throw Error(errc::invalid_argument,
                fmt::format("the session profiles but counts no sampling event; add cpu-clock or task-clock with a "
                            "sampling period in ns (cpu-clock:period=100000){}",
                            ctx->loaded ? std::string()
                                        : fmt::format(" (a PMU's counter interrupts need a backend, and no backend "
                                                      "matches this CPU ({}); a simulated PMU profiles with backend "
                                                      "= \"alpha21064_sim\" on a workload)",
                                                      describe(ctx->cpu))));
  if (!profile_request.empty() && !perf_profile_ && backend_events_.empty())
    throw Error(errc::invalid_argument,
                "the session profiles at counter interrupts but counts no PMU event; add one (cycles, for example)");
  std::vector<Access*> started;
  try {
    for (Access* a : accesses()) {
      a->start();
      started.push_back(a);
    }
  } catch (...) {
    for (auto it = started.rbegin(); it != started.rend(); ++it) {
      try {
        (*it)->stop();
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
  auto list = accesses();
  std::exception_ptr first;
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    try {
      (*it)->stop();
    } catch (...) {  // stop every access even when one fails, then report the first failure
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void SessionImpl::reset() {
  for (Access* a : accesses()) a->reset();
}

void SessionImpl::poll() {
  for (Access* a : accesses()) a->poll();
}

std::vector<Reading> SessionImpl::read() {
  std::vector<std::pair<Access*, std::vector<std::vector<Count>>>> counts;
  for (Access* a : accesses()) counts.emplace_back(a, a->read());
  std::vector<int> each;  // each_cpu: a count that is not per CPU is the same on every CPU
  if (scope.kind == Scope::Kind::each_cpu) each = cpus();
  std::vector<Reading> out;
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const Entry& e = entries_[i];
    const std::vector<Count>* parts = nullptr;
    for (const auto& [a, c] : counts)
      if (a == e.access) parts = &c.at(e.index);
    std::vector<Count> spread;
    if (!each.empty() && parts->size() == 1 && parts->front().cpu < 0) {
      for (int cpu : each) {
        spread.push_back(parts->front());
        spread.back().cpu = cpu;
      }
      parts = &spread;
    }
    for (const Count& c : *parts) {
      Reading r;
      r.event = encodings[i].event;
      r.canonical = encodings[i].canonical;
      r.name = encodings[i].name;
      r.generic = encodings[i].generic;
      r.hal = e.counter == nullptr;
      r.unit = e.unit;
      r.value = c.value;
      r.time_enabled = c.time_enabled;
      r.time_running = c.time_running;
      r.extrapolated = c.extrapolated;
      r.cpu = c.cpu;
      r.granularity = encodings[i].granularity;
      if (e.counter) {
        r.counter_kind = e.counter->kind;
        r.counter = e.counter->index;
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

namespace {

// An upper bound of the events any counter can add per cycle of `s`: every event counts one
// signal, or a sum of distinct signals (MESI states, self + other, a name and its alias), or at
// most 1 per cycle (CMASK, edge detect, unhalted cycles). Saturates at 2^64 - 1.
std::uint64_t max_events_per_cycle(const Segment& s) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t sum = 0;
  for (const auto& c : s.signals) sum = c.per_cycle > kMax - sum ? kMax : sum + c.per_cycle;
  return std::max<std::uint64_t>(sum, 1);
}

}  // namespace

// Runs a workload, splitting segments so that no counter of the PMU's narrowest width can pass
// half its range between two polls (which fold the hardware counts into 64-bit totals).
WorkloadRun SessionImpl::run(const Workload& workload) {
  if (!ctx->loaded)
    throw Error(errc::not_supported,
                fmt::format("a simulated workload runs on a backend's device model, and no backend was chosen: {}", ctx->why));
  if (ctx->access != "sim")
    throw Error(errc::not_supported,
                fmt::format("a simulated workload needs access \"sim\"; this session counts through access '{}'",
                            ctx->access));
  open_sim();
  Device& device = *this->device();
  unsigned width = 64;
  for (const auto& c : ctx->pmu.counters) width = std::min(width, c.width);
  if (width < 2)
    throw Error(errc::invalid_argument, fmt::format("counter width {} is not in 2..64", width));
  // A chunk may add at most half the counter range minus one, so a reader that folds the
  // difference of two readings modulo 2^width can never miss a wrap.
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  // Every segment's rate is checked before anything runs, so a refused workload counts nothing.
  for (std::size_t index = 0; index < workload.size(); ++index) {
    const Segment segment = workload.segment(index);
    const std::uint64_t rate = max_events_per_cycle(segment);
    if (segment.cycles != 0 && budget / rate == 0)
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {}: up to {} events per cycle overflow half of a {}-bit counter in a single "
                              "cycle",
                              workload.source.empty() ? workload.name : workload.source, index + 1, rate, width));
  }
  const bool was_running = running;
  if (!was_running) start();
  WorkloadRun out;
  try {
    for (std::size_t index = 0; index < workload.size(); ++index) {
      Segment segment = workload.segment(index);
      if (segment.cycles == 0) continue;
      out.cycles += segment.cycles;
      if (!device.executes(segment)) out.cycles_not_counted += segment.cycles;
      const std::uint64_t chunk = budget / max_events_per_cycle(segment);
      const std::uint64_t total = segment.cycles;
      for (std::uint64_t left = total; left > 0;) {
        segment.cycles = std::min(left, chunk);
        left -= segment.cycles;
        device.run(segment);
        poll();
      }
    }
  } catch (...) {
    if (!was_running) {
      try {
        stop();
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
  if (!was_running) stop();
  out.interrupts = device.interrupts();
  return out;
}

}  // namespace detail

Session::Session(std::unique_ptr<detail::SessionImpl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

void Session::add(std::string_view event) { impl_->add(event); }
const std::vector<Encoding>& Session::encodings() const { return impl_->encodings; }
void Session::start() { impl_->start(); }
void Session::stop() { impl_->stop(); }
void Session::reset() { impl_->reset(); }
std::vector<Reading> Session::read() { return impl_->read(); }
void Session::poll() { impl_->poll(); }
bool Session::running() const { return impl_->running; }
WorkloadRun Session::run(const Workload& workload) { return impl_->run(workload); }
void Session::profile(const ProfileRequest& request) { impl_->profile(request); }
const ProfileRequest& Session::profile_request() const { return impl_->profile_request; }
std::vector<LevelHistogram> Session::level_histograms() { return impl_->level_histograms(); }
std::vector<PcProfile> Session::pc_profiles() { return impl_->pc_profiles(); }
std::vector<PcCount> Session::sampled_pcs(AddressSpace space) { return impl_->sampled_pcs(space); }
std::uint64_t Session::lost_samples() { return impl_->lost_samples(); }
const Scope& Session::scope() const { return impl_->scope; }

}  // namespace pmc
