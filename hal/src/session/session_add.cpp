// Adding events to a session: parsing, HAL events, the backend's encoding (unknown names
// answered with the nearest ones), the event sets a register access multiplexes, and opening the
// access method an event needs (msr, sim, perf).
#include "session_impl.hpp"

#include "access.hpp"
#include "context.hpp"
#include "event_stats.hpp"
#include "suggest.hpp"
#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/schedule.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace pmc::detail {

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
  count_encode();  // event_stats.hpp: the tests check that one event is encoded once
  try {
    return ctx->encode(spec);
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
  // A hybrid CPU: the registers and the simulated device are those of the core the CPU was read
  // on; another core type's events count under perf, on the CPUs of that type.
  if (const CorePart* part = spec.pmu.empty() ? nullptr : ctx->part(spec.pmu);
      part && !part->own && ctx->access != AccessKind::perf)
    throw Error(errc::not_supported,
                fmt::format("event '{}' is an event of the {} cores of this hybrid CPU ({}), and access '{}' counts "
                            "the core it was read on ({}): only access \"perf\" counts another core type's events, on "
                            "the CPUs of that type",
                            spec.text, part->name, part->shown, access_name(ctx->access), ctx->parts.front().name));
  if (ctx->access == AccessKind::perf) return add_perf_event(spec);
  Encoding enc = encode(spec);
  if (enc.period != 0 && ctx->access != AccessKind::sim) refuse_sampling(spec);
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
  // An event on an extra MSR is programmed for that MSR (a paired event's second code).
  for (const EventSet& set : sets)
    for (std::size_t j = 0; j < set.extra_msrs.size(); ++j)
      if (set.extra_msrs[j])
        backend[set.events[j]] = bind_extra_msr(std::move(backend[set.events[j]]), set.extra_msrs[j],
                                                ctx->catalog.format());
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
// with it (a matching of the set's events onto counters and of their extra register values onto
// MSRs, place()), else opens a new set. A group the PMU cannot hold even alone is an error
// (place()'s, naming its events): an exclusive event grouped with others, say. An exclusive
// event added alone opens a set of its own, and no later event joins it. One set: no
// multiplexing. Each set keeps the placement that admitted its last group, so no set is
// scheduled twice (place() is a function of the PMU and the events in order).
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
  // The counter slots (and extra MSRs) of the events, or nullopt when the PMU cannot hold them
  // at once.
  auto placement = [&](const std::vector<std::size_t>& events) -> std::optional<Placement> {
    try {
      return place(ctx->pmu, encodings_of(events));
    } catch (const Error& e) {
      if (e.kind() != errc::no_counter) throw;
      return std::nullopt;
    }
  };
  std::vector<std::vector<std::size_t>> sets;
  std::vector<Placement> slots;  // parallel: each set's counter slots and extra MSRs
  for (const auto& group : members) {
    bool placed = false;
    for (std::size_t k = 0; k < sets.size() && !placed; ++k) {
      std::vector<std::size_t> trial = sets[k];
      trial.insert(trial.end(), group.begin(), group.end());
      if (auto fit = placement(trial)) {
        sets[k] = std::move(trial);
        slots[k] = std::move(*fit);
        placed = true;
      }
    }
    if (placed) continue;
    slots.push_back(place(ctx->pmu, encodings_of(group)));  // throws no_counter: the group cannot count at all
    sets.push_back(group);
  }
  std::vector<EventSet> out;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    EventSet es;
    for (std::size_t j = 0; j < sets[k].size(); ++j) {
      es.events.push_back(sets[k][j]);
      es.counters.push_back(&ctx->pmu.counters[slots[k].slots[j]]);
      es.extra_msrs.push_back(slots[k].extra_msrs[j]);
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
// A backend event given period=N samples at its counter's overflow interrupt, which only a
// driver in the kernel can take: the simulated machine's (access "sim") or Linux perf's (access
// "perf", sample_period); access "msr" has none.
void SessionImpl::refuse_sampling(const EventSpec& spec) const {
  throw Error(errc::not_supported,
              fmt::format("event '{}': period= samples at the counter's overflow interrupt, which access '{}' cannot "
                          "receive in user space (the PMI goes to the kernel's handler); sample with access \"perf\" "
                          "(the kernel's handler) or a simulated workload (access \"sim\")",
                          spec.text, access_name(ctx->access)));
}

void SessionImpl::add_perf_event(const EventSpec& spec) {
  if (!ctx->cpu.native())
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'perf' counts this machine's PMU, but the session is for the CPU of "
                            "the CPUID dump {}; use access = \"sim\" to count on its simulated PMU",
                            spec.text, ctx->cpu.source));
  Encoding enc = encode(spec);
  // A hybrid CPU: the kernel's PMU of the event's core type (the CPU's own when unprefixed), one
  // per session, since a perf group counts on one PMU.
  const CorePart* part = nullptr;
  if (!ctx->parts.empty()) {
    part = spec.pmu.empty() ? nullptr : ctx->part(spec.pmu);
    if (!part) part = &ctx->parts.front();  // unprefixed, or "BACKEND::EVENT": the CPU's own
  }
  if (part && !backend_events_.empty() && part != part_)
    throw Error(errc::not_supported,
                fmt::format("event '{}' counts on the {} cores, and the session's events on the {} cores: access "
                            "'perf' counts a session's events as one group, which the kernel keeps on one PMU; count "
                            "each core type in a session of its own",
                            spec.text, part->name, part_->name));
  const PmuContext on = part ? ctx->pmu_context(*part) : ctx->pmu_context();
  const PmuInfo& pmu = on.pmu;
  PerfEventSpec raw = perf_raw_event(enc, on.catalog.format());
  if (part) {
    if (part->perf_pmu.empty())
      throw Error(errc::not_supported, fmt::format("event '{}': Linux perf's PMU for the {} cores is not known (two "
                                                   "parts share core type {:#x})",
                                                   spec.text, part->name, part->core_type));
    const std::optional<std::uint32_t> type = perf_pmu_type(options.sysfs_root, part->perf_pmu);
    if (!type)
      throw Error(errc::not_supported,
                  fmt::format("event '{}' counts on the {} cores ({}), and Linux perf exposes no {} PMU ({} missing)",
                              spec.text, part->name, part->shown, part->perf_pmu,
                              (options.sysfs_root / "bus/event_source/devices" / part->perf_pmu / "type").string()));
    raw.type = *type;
    // CPU-wide scopes count on the part's CPUs only (the PMU refuses the others).
    if (!perf_) options.perf_pmu = part->perf_pmu;
    if (options.perf_pmu != part->perf_pmu && scope.kind != Scope::Kind::thread && scope.kind != Scope::Kind::process)
      throw Error(errc::not_supported,
                  fmt::format("event '{}' counts on the {} cores, and this session's perf events were opened on every "
                              "CPU of {}: add it first, or count it in a session of its own",
                              spec.text, part->name, scope.describe()));
  }
  std::vector<Encoding> backend;
  for (std::size_t i : backend_events_) backend.push_back(encodings[i]);
  backend.push_back(enc);
  std::vector<std::size_t> slots;
  try {
    slots = schedule(pmu, backend);  // throws: nothing changed
  } catch (const Error& e) {
    // Access "perf" counts a session's events as one group per target, which the kernel puts on
    // the counters at once: an exclusive event cannot share it (the register accesses multiplex).
    const bool exclusive =
        std::any_of(backend.begin(), backend.end(), [](const Encoding& b) { return b.exclusive; });
    if (e.kind() != errc::no_counter || !exclusive) throw;
    throw Error(errc::no_counter, fmt::format("{}; access 'perf' counts a session's events as one group, so count it "
                                              "in a session of its own",
                                              e.what()));
  }
  const bool fresh = !perf_;
  std::size_t index = 0;
  try {
    index = perf().add(raw);
  } catch (...) {
    if (fresh) perf_.reset();
    throw;
  }
  if (enc.period) ++sampling_events_;  // sampled by perf: sample_period, precise_ip
  encodings.push_back(std::move(enc));
  backend_events_.push_back(encodings.size() - 1);
  backend_groups_.push_back(next_group_);
  entries_.push_back({perf_.get(), index, nullptr});
  part_ = part;
  for (std::size_t i = 0; i < backend_events_.size(); ++i)
    entries_[backend_events_[i]].counter = &pmu.counters[slots[i]];
}

}  // namespace pmc::detail
