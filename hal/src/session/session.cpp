#include "session_impl.hpp"

#include "access.hpp"
#include "context.hpp"
#include "event_stats.hpp"
#include "suggest.hpp"
#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/schedule.hpp>
#include <pmc/session.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

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

// Which loaded backends profile at counter interrupts, for the messages of the sessions that
// cannot (the names come from the plugins, not from this file).
std::string profilers(const Context& ctx) {
  if (ctx.profiling_backends.empty()) return "no loaded backend does";
  if (ctx.profiling_backends.size() == 1) return fmt::format("the {} backend does", ctx.profiling_backends.front());
  return fmt::format("the backends {} do", join(ctx.profiling_backends));
}

std::string profile_on_workload(const Context& ctx) {
  if (ctx.profiling_backends.empty()) return "no loaded backend samples at counter interrupts";
  return fmt::format("a simulated PMU profiles with backend = \"{}\" on a workload", ctx.profiling_backends.front());
}

}  // namespace

SessionImpl::SessionImpl(std::shared_ptr<const Context> context, Scope s, AccessOptions o)
    : ctx(std::move(context)), scope(s), options(std::move(o)) {}

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

void SessionImpl::add(std::string_view event) {
  if (running) throw Error(errc::invalid_argument, fmt::format("cannot add event '{}' while the session is counting", event));
  EventSpec spec = parse_event(event);
  if (auto hal = find_hal_event(spec)) return add_hal_event(std::move(*hal));
  add_backend_event(spec, next_group_++);
}

// A group: its events are checked together before any is added (they parse, they are known,
// and the PMU holds its PMU events at once), then added into one event set.
void SessionImpl::add_group(const std::vector<std::string>& events) {
  if (running) throw Error(errc::invalid_argument, "cannot add events while the session is counting");
  if (events.empty()) throw Error(errc::invalid_argument, "an event group needs at least one event");
  std::vector<EventSpec> specs;
  for (const auto& e : events) specs.push_back(parse_event(e));
  std::vector<Encoding> pmu_events;
  for (const EventSpec& spec : specs) {
    if (find_hal_event(spec)) continue;
    if (!ctx->loaded) add_backend_event(spec, next_group_);  // throws: unknown, or no backend
    pmu_events.push_back(encode(spec));
  }
  if (!pmu_events.empty()) (void)schedule(ctx->pmu, pmu_events);  // throws no_counter naming them
  const std::size_t group = next_group_++;
  for (const EventSpec& spec : specs) {
    if (auto hal = find_hal_event(spec)) {
      add_hal_event(std::move(*hal));
      continue;
    }
    add_backend_event(spec, group);
  }
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

bool SessionImpl::known_name(const EventSpec& spec) const {
  if (!ctx->loaded) return false;
  const std::string_view generic = perf_generic_name(spec.name);
  std::vector<std::string> masks;
  return ctx->catalog.find(spec.name) != nullptr || ctx->catalog.find_generic(generic, {}, &masks) != nullptr;
}

void SessionImpl::unknown_event(const EventSpec& spec, const std::string& what) const {
  const std::vector<std::string> near = nearest_event_names(spec.name, ctx.get());
  throw Error(errc::not_found, near.empty() ? what : fmt::format("{}; nearest names: {}", what, join(near)));
}

// The backend's encoding; an unknown name is answered with the nearest names.
Encoding SessionImpl::encode(const EventSpec& spec) const {
  try {
    detail::count_encode();
    return ctx->backend().encode(spec, ctx->pmu_context());
  } catch (const Error& e) {
    if (e.kind() == errc::not_found && spec.pmu.empty() && !known_name(spec)) unknown_event(spec, e.what());
    throw;
  }
}

void SessionImpl::add_backend_event(const EventSpec& spec, std::size_t group) {
  if (!ctx->loaded) {
    if (!spec.pmu.empty() || !is_perf_generic_name(spec.name))
      unknown_event(spec, event_error(spec, 1, fmt::format("unknown event '{}': not a HAL event, and no PMU backend was "
                                                           "chosen ({})",
                                                           spec.name, ctx->why)));
    throw Error(errc::not_supported,
                fmt::format("event '{}' needs a PMU backend, and none was chosen: {}; events available here: {}", spec.text,
                            ctx->why, [] {
                              std::string names;
                              for (const auto& e : hal_events()) names += (names.empty() ? "" : ", ") + std::string(e.name);
                              return names;
                            }()));
  }
  if (ctx->access == AccessKind::perf) return add_perf_event(spec);
  Encoding enc = encode(spec);
  if (ctx->access == AccessKind::sim && scope.kind != Scope::Kind::thread)
    throw Error(errc::not_supported,
                fmt::format("event '{}' cannot be counted for {}: access 'sim' counts the simulated {} device that "
                            "Session::run drives, not real activity, which needs access = \"perf\" ({})",
                            spec.text, scope.describe(), ctx->pmu.name, ctx->access_reason));
  // Regroup every backend event with the new one; on any failure nothing has changed.
  std::vector<Encoding> backend;
  for (std::size_t i : backend_events_) backend.push_back(encodings[i]);
  backend.push_back(enc);
  std::vector<std::size_t> groups = backend_groups_;
  groups.push_back(group);
  std::vector<EventSet> sets = plan_sets(backend, groups);  // throws: nothing changed
  if (!registers_ && ctx->access == AccessKind::msr) open_msr(spec);
  if (!registers_ && ctx->access == AccessKind::sim) open_sim();
  if (!registers_)
    throw Error(errc::not_supported, fmt::format("event '{}': unknown access '{}'", spec.text, access_name(ctx->access)));
  registers_->assign(backend, std::move(sets));
  // Committed.
  encodings.push_back(std::move(enc));
  backend_events_.push_back(encodings.size() - 1);
  backend_groups_.push_back(group);
  entries_.push_back({registers_.get(), backend.size() - 1, nullptr});
  for (std::size_t i = 0; i < backend_events_.size(); ++i) entries_[backend_events_[i]].counter = registers_->counter(i);
}

// First fit, group by group in the order added: a group joins the first set the PMU can hold
// with it (a matching of the set's events onto counters, schedule()), else opens a new set. A
// group the PMU cannot hold even alone is an error (schedule()'s, naming its events). One set:
// no multiplexing.
std::vector<EventSet> SessionImpl::plan_sets(const std::vector<Encoding>& backend,
                                             const std::vector<std::size_t>& groups) const {
  std::vector<std::vector<std::size_t>> members;  // per group, in order of first appearance
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < backend.size(); ++i) {
    auto it = std::find(ids.begin(), ids.end(), groups[i]);
    if (it == ids.end()) {
      ids.push_back(groups[i]);
      members.push_back({i});
    } else {
      members[static_cast<std::size_t>(it - ids.begin())].push_back(i);
    }
  }
  auto encodings_of = [&](const std::vector<std::size_t>& events) {
    std::vector<Encoding> out;
    for (std::size_t i : events) out.push_back(backend[i]);
    return out;
  };
  auto fits = [&](const std::vector<std::size_t>& events) {
    try {
      (void)schedule(ctx->pmu, encodings_of(events));
      return true;
    } catch (const Error& e) {
      if (e.kind() != errc::no_counter) throw;
      return false;
    }
  };
  std::vector<std::vector<std::size_t>> sets;
  for (const auto& group : members) {
    bool placed = false;
    for (auto& set : sets) {
      std::vector<std::size_t> trial = set;
      trial.insert(trial.end(), group.begin(), group.end());
      if (fits(trial)) {
        set = std::move(trial);
        placed = true;
        break;
      }
    }
    if (placed) continue;
    (void)schedule(ctx->pmu, encodings_of(group));  // throws no_counter: the group cannot count at all
    sets.push_back(group);
  }
  std::vector<EventSet> out;
  for (auto& set : sets) {
    const std::vector<std::size_t> slots = schedule(ctx->pmu, encodings_of(set));
    EventSet es;
    for (std::size_t k = 0; k < set.size(); ++k) {
      es.events.push_back(set[k]);
      es.counters.push_back(&ctx->pmu.counters[slots[k]]);
    }
    out.push_back(std::move(es));
  }
  return out;
}

// Access "msr": the first PMU event opens /dev/cpu/N/msr of the CPU the scope names (this
// thread: the CPU it runs on now, where it stays pinned), after checking that nobody else is
// using the PMU.
void SessionImpl::open_msr(const EventSpec& spec) {
  if (!ctx->cpu.native())
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
  registers_ = std::make_unique<RegisterAccess>(ctx, std::move(regs), options);
}

// Access "perf": the kernel programs the counters from the raw encoding. Scheduling still runs,
// so a set the PMU cannot hold at once is refused with the same message as on the other
// accesses (one group would never be scheduled), and readings say which counter it planned.
void SessionImpl::add_perf_event(const EventSpec& spec) {
  if (!ctx->cpu.native())
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'perf' counts this machine's PMU, but the session is for the CPU of "
                            "the CPUID dump {}; use access = \"sim\" to count on its simulated PMU",
                            spec.text, ctx->cpu.source));
  Encoding enc = encode(spec);
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
  backend_groups_.push_back(next_group_);
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
  if (!ctx->loaded || ctx->access == AccessKind::perf || sampling_events_ > 0) {
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
                            "has no pmc::ProfilingDriver); {}",
                            ctx->pmu.name, profilers(*ctx)));
  if (ctx->access != AccessKind::sim)
    throw Error(errc::not_supported,
                fmt::format("profiling needs the counters' overflow interrupts, which access '{}' cannot receive in "
                            "user space; backend '{}' profiles with access = \"sim\" on a simulated workload",
                            access_name(ctx->access), ctx->pmu.name));
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
                            ctx->loaded ? std::string()
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

// Rebuilt only when the events changed since it was built. An access method that exists
// without events (the device model a workload run or profile() opened) has nothing to start or
// read until an event is routed to it, which rebuilds the plan.
SessionImpl::ReadPlan& SessionImpl::build_plan() {
  const AccessList now = accesses();
  ReadPlan p;
  p.events = entries_.size();
  p.access = now;
  std::array<std::size_t, 3> per{};  // counts per event, per access
  std::size_t total = 0;
  for (std::size_t k = 0; k < now.size; ++k) {
    std::size_t events = 0;
    for (const Entry& e : entries_)
      if (e.access == now.list[k]) events = std::max(events, e.index + 1);
    per[k] = now.list[k]->counts_per_event();
    p.offset[k] = total;
    total += events * per[k];
  }
  p.offset[now.size] = total;
  p.counts.assign(total, Count{});
  // each_cpu: perf counts each CPU apart; a count that is not per CPU (tsc) is the same on every CPU.
  std::vector<int> each;
  if (scope.kind == Scope::Kind::each_cpu) each = cpus();
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const Entry& e = entries_[i];
    const auto k = static_cast<std::size_t>(std::find(now.begin(), now.end(), e.access) - now.begin());
    const std::size_t first = p.offset[k] + e.index * per[k];
    if (each.empty()) {
      p.route.push_back(static_cast<std::uint32_t>(first));
      p.cpu.push_back(-1);
      p.event.push_back(static_cast<std::uint32_t>(i));
      continue;
    }
    for (std::size_t t = 0; t < each.size(); ++t) {
      p.route.push_back(static_cast<std::uint32_t>(per[k] > 1 || e.access == perf_.get() ? first + t : first));
      p.cpu.push_back(each[t]);
      p.event.push_back(static_cast<std::uint32_t>(i));
    }
  }
  if (now.size == 1 && now.list[0] == perf_.get() && perf_->direct_readable() && p.route.size() == perf_->size()) {
    bool in_order = true;
    for (std::size_t k = 0; k < p.route.size(); ++k) in_order = in_order && p.route[k] == k;
    if (in_order) p.direct = perf_.get();
  }
  p.readings = p.route.size();
  plan_ = std::move(p);
  return plan_;
}

void SessionImpl::read_counts(ReadPlan& plan) {
  for (std::size_t k = 0; k < plan.access.size; ++k)
    plan.access.list[k]->read_counts(
        std::span<Count>(plan.counts.data() + plan.offset[k], plan.offset[k + 1] - plan.offset[k]));
}

std::size_t SessionImpl::readings() { return read_plan().route.size(); }

namespace {
[[noreturn, gnu::noinline, gnu::cold]] void buffer_too_small(std::size_t size, std::size_t readings) {
  throw Error(errc::invalid_argument,
              fmt::format("a buffer of {} values cannot hold the session's {} readings", size, readings));
}
}  // namespace

// The hot path: the plan's check, then straight to the perf group when the plan allows.
std::size_t SessionImpl::read(std::span<std::uint64_t> values) {
  ReadPlan& plan = read_plan();
  const std::size_t n = plan.readings;
  if (values.size() < n) [[unlikely]]
    buffer_too_small(values.size(), n);
  if (plan.direct) [[likely]] {
    plan.direct->read_values(values.data());
    return n;
  }
  return read_through(plan, values);
}

std::size_t SessionImpl::read_through(ReadPlan& plan, std::span<std::uint64_t> values) {
  read_counts(plan);
  const Count* counts = plan.counts.data();
  const std::uint32_t* route = plan.route.data();
  const std::size_t n = plan.route.size();
  for (std::size_t k = 0; k < n; ++k) values[k] = counts[route[k]].value;
  return n;
}

std::vector<Reading> SessionImpl::read() {
  ReadPlan& plan = read_plan();
  read_counts(plan);
  std::vector<Reading> out;
  out.reserve(plan.route.size());
  for (std::size_t k = 0; k < plan.route.size(); ++k) {
    const std::size_t i = plan.event[k];
    const Entry& e = entries_[i];
    const Count& c = plan.counts[plan.route[k]];
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
    r.cpu = plan.cpu[k];
    r.granularity = encodings[i].granularity;
    if (e.counter) {
      r.counter_kind = e.counter->kind;
      r.counter = e.counter->index;
    }
    out.push_back(std::move(r));
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
  if (ctx->access != AccessKind::sim)
    throw Error(errc::not_supported,
                fmt::format("a simulated workload needs access \"sim\"; this session counts through access '{}'",
                            access_name(ctx->access)));
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
  // A segment of more chunks than this is fast-forwarded (below) when it can be.
  constexpr std::uint64_t kChunksBeforeFastForward = 64;
  // Runs `chunk` cycles of the segment, then folds the counters.
  auto run_chunk = [&](Segment& segment, std::uint64_t cycles) {
    segment.cycles = cycles;
    device.run(segment);
    registers_->advance(cycles);  // the session's time; the next set when the slice is over
    poll();
  };
  // Segment length costs nothing (docs/workload-format.md): every cycle of a segment is the
  // same, so after its first chunk (an edge detector may count the segment's start) each chunk
  // adds the same amount to a counter. Three chunks are run and measured; when the second and
  // third agree (a whole number per cycle), the device runs the rest in one call, and each
  // event's total gets the exact count, per cycle x cycles, of which the fold saw only the part
  // modulo 2^width. Returns the cycles left to run chunk by chunk (0 when done).
  RegisterAccess& regs = *registers_;
  std::vector<std::uint64_t> t0, t1, t2;
  auto fast_forward = [&](std::size_t index, Segment& segment, std::uint64_t chunk, std::uint64_t total) {
    auto totals = [&](std::vector<std::uint64_t>& t) {
      t.resize(regs.events());
      for (std::size_t e = 0; e < t.size(); ++e) t[e] = regs.total(e);
    };
    run_chunk(segment, chunk);
    totals(t0);
    run_chunk(segment, chunk);
    totals(t1);
    run_chunk(segment, chunk);
    totals(t2);
    const std::uint64_t left = total - 3 * chunk;
    for (std::size_t e = 0; e < t0.size(); ++e) {
      const std::uint64_t per_chunk = t1[e] - t0[e];
      if (t2[e] - t1[e] != per_chunk || per_chunk % chunk != 0) return left;  // not uniform: chunk by chunk
    }
    run_chunk(segment, left);
    for (std::size_t e = 0; e < t0.size(); ++e) {
      const std::uint64_t exact = (t1[e] - t0[e]) / chunk * left;  // modulo 2^64, as the total is
      const std::uint64_t folded = regs.total(e) - t2[e];
      if (((exact - folded) & regs.counter(e)->width_mask()) != 0)
        throw Error(errc::plugin,
                    fmt::format("{}: segment {}: device model '{}' counted {} per cycle on counter {} over {} cycles, "
                                "then a count that differs from {} x {} modulo 2^{}: the model does not count a "
                                "uniform segment uniformly",
                                workload.source.empty() ? workload.name : workload.source, index + 1, device.name(),
                                (t1[e] - t0[e]) / chunk, regs.counter(e)->index, 2 * chunk, (t1[e] - t0[e]) / chunk,
                                left, regs.counter(e)->width));
      regs.add_to_total(e, exact - folded);
    }
    return std::uint64_t{0};
  };
  const bool was_running = running;
  if (!was_running) start();
  WorkloadRun out;
  try {
    for (std::size_t index = 0; index < workload.size(); ++index) {
      Segment segment = workload.segment(index);
      if (segment.cycles == 0) continue;
      out.cycles += segment.cycles;
      if (!device.executes(segment)) out.cycles_not_counted += segment.cycles;
      // A 64-bit counter needs no split: its fold modulo 2^64 is the 64-bit total's own
      // arithmetic.
      const std::uint64_t chunk = width == 64 ? segment.cycles : budget / max_events_per_cycle(segment);
      const std::uint64_t total = segment.cycles;
      std::uint64_t left = total;
      if (total / chunk > kChunksBeforeFastForward && regs.set_count() < 2)
        left = fast_forward(index, segment, chunk, total);
      while (left > 0) {
        // Multiplexing: a chunk ends where the active event set's slice does (issue 14).
        const std::uint64_t cycles = std::min({left, chunk, registers_->cycles_to_rotation()});
        left -= cycles;
        run_chunk(segment, cycles);
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

// A streamed workload: every segment is checked as run() checks a workload (the rate that a
// chunk of the narrowest counter's half range must hold, and the reader's own checks) before
// anything runs; then the file is read again and run() counts it batch by batch, the session
// kept running between batches, so the memory held is one batch whatever the length.
WorkloadRun SessionImpl::run(WorkloadReader& reader) {
  if (!ctx->loaded || ctx->access != AccessKind::sim) return run(Workload{});  // run()'s refusal
  unsigned width = 64;
  for (const auto& c : ctx->pmu.counters) width = std::min(width, c.width);
  if (width < 2) return run(Workload{});
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  reader.rewind();
  std::size_t index = 0;
  while (const Segment* segment = reader.next()) {
    ++index;
    const std::uint64_t rate = max_events_per_cycle(*segment);
    if (segment->cycles != 0 && budget / rate == 0)
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {}: up to {} events per cycle overflow half of a {}-bit counter in a single "
                              "cycle",
                              reader.where(), index, rate, width));
  }
  reader.rewind();
  constexpr std::size_t kBatch = 4096;
  Workload batch;
  batch.name = reader.name();
  batch.source = reader.source();
  WorkloadRun out;
  const bool was_running = running;
  if (!was_running) start();
  try {
    for (bool more = true; more;) {
      batch.clear();
      while (batch.size() < kBatch) {
        const Segment* segment = reader.next();
        if (!segment) {
          more = false;
          break;
        }
        batch.add(*segment);
      }
      if (batch.empty()) break;
      const WorkloadRun part = run(batch);
      out.cycles += part.cycles;
      out.cycles_not_counted += part.cycles_not_counted;
      out.interrupts = part.interrupts;  // the device's total
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
  return out;
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
std::vector<Reading> Session::read() { return impl_->read(); }
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
