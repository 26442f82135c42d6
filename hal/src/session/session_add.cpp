// Adding events to a session: parsing, HAL events, the backend's encoding (unknown names
// answered with the nearest ones), the event sets a register access multiplexes, and opening the
// access method an event needs (msr, sim, perf). Each event string is parsed once and encoded
// once (tests/hal/session/test_parse_once.cpp counts it), and each add places only the new
// group (the sets already planned keep their counters).
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
  std::vector<EventSpec> specs;
  const DefaultEvent* d = ctx->default_event(event);  // parsed when the defaults were worked out
  specs.push_back(d ? d->spec : parse_event(event));
  add_specs(specs);
}

// A group: its events are checked together before any is added (they parse, they are known,
// and the PMU holds its PMU events at once), then added into one event set.
void SessionImpl::add_group(const std::vector<std::string>& events) {
  if (running) throw Error(errc::invalid_argument, "cannot add events while the session is counting");
  if (events.empty()) throw Error(errc::invalid_argument, "an event group needs at least one event");
  std::vector<EventSpec> specs;
  for (const auto& e : events) specs.push_back(parse_event(e));
  add_specs(specs);
}

// One group (a single add is a group of one). Everything about the PMU events that can fail
// (known, countable here, encoded, placed) runs before anything changes; the events are then
// added in the order given, HAL events among them.
void SessionImpl::add_specs(const std::vector<EventSpec>& specs) {
  std::vector<std::optional<HalEvent>> hal(specs.size());
  std::vector<Encoding> pmu_events;  // the group's PMU events, each encoded once
  for (std::size_t i = 0; i < specs.size(); ++i) {
    hal[i] = find_hal_event(specs[i]);
    if (hal[i]) continue;
    check_backend_event(specs[i]);
    const DefaultEvent* d = ctx->default_event(specs[i].text);
    pmu_events.push_back(d ? d->encoding : encode(specs[i]));
    const bool samples = pmu_events.back().period != 0 || pmu_events.back().frequency != 0;
    if (samples && ctx->access_method() != AccessKind::sim && ctx->access_method() != AccessKind::perf)
      refuse_sampling(specs[i]);
    if (ctx->access_method() == AccessKind::sim && scope.kind != Scope::Kind::thread)
      throw Error(errc::not_supported,
                  fmt::format("event '{}' cannot be counted for {}: access 'sim' counts the simulated {} device that "
                              "Session::run drives, not real activity, which needs access = \"perf\" ({})",
                              specs[i].text, scope.describe(), ctx->pmu.name, ctx->access_why()));
  }
  const std::size_t group = next_group_++;
  if (pmu_events.empty() || ctx->access_method() == AccessKind::perf) {
    // Access "perf" opens each event as it comes (the first one leads the kernel's group).
    if (pmu_events.size() > 1) (void)schedule(ctx->pmu, pmu_events);  // throws no_counter naming them
    std::size_t next = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (hal[i])
        add_hal_event(std::move(*hal[i]));
      else
        add_perf_event(specs[i], std::move(pmu_events[next++]));
    }
    return;
  }
  add_register_events(specs, hal, std::move(pmu_events), group);
}

// Access "sim" or "msr": the group joins the event sets (plan_group), the access is opened on
// its first PMU event, the group's HAL events are opened, and then all of it is committed.
void SessionImpl::add_register_events(const std::vector<EventSpec>& specs, std::vector<std::optional<HalEvent>>& hal,
                                      std::vector<Encoding> pmu_events, std::size_t group) {
  std::vector<Encoding> backend;
  for (std::size_t i : backend_events_) backend.push_back(encodings[i]);
  std::vector<std::size_t> added;
  for (Encoding& e : pmu_events) {
    added.push_back(backend.size());
    backend.push_back(std::move(e));
  }
  SetPlan plan = plan_group(backend, added);  // throws: nothing changed
  const EventSpec& first = *std::find_if(specs.begin(), specs.end(), [&](const EventSpec& s) {
    return !hal[static_cast<std::size_t>(&s - specs.data())];
  });
  if (!registers_ && ctx->access_method() == AccessKind::msr) open_msr(first);
  if (!registers_ && ctx->access_method() == AccessKind::sim) open_sim();
  if (!registers_)
    throw Error(errc::not_supported, fmt::format("event '{}': unknown access '{}'", first.text, access_name(ctx->access_method())));
  std::vector<std::optional<Entry>> opened(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (hal[i]) opened[i] = open_hal_event(*hal[i]);
  // Committed. An event on an extra MSR is programmed for that MSR (a paired event's second code).
  std::vector<Encoding> programmed = backend;
  std::vector<EventSet> sets = event_sets(plan);
  for (const EventSet& set : sets)
    for (std::size_t j = 0; j < set.extra_msrs.size(); ++j)
      if (set.extra_msrs[j])
        programmed[set.events[j]] = bind_extra_msr(std::move(programmed[set.events[j]]), set.extra_msrs[j],
                                                   ctx->catalog.format());
  registers_->assign(std::move(programmed), std::move(sets));
  planned_ = std::move(plan);
  std::size_t next = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (hal[i]) {
      commit_hal_event(std::move(*hal[i]), *opened[i]);
      continue;
    }
    encodings.push_back(std::move(backend[added[next++]]));
    backend_events_.push_back(encodings.size() - 1);
    backend_groups_.push_back(group);
    entries_.push_back({registers_.get(), backend_events_.size() - 1, nullptr});
  }
  for (std::size_t i = 0; i < backend_events_.size(); ++i) entries_[backend_events_[i]].counter = registers_->counter(i);
}

SessionImpl::Entry SessionImpl::open_hal_event(const HalEvent& h) {
  if (h.info->kind == HalEventKind::tsc) {
    if (!tsc_) tsc_ = std::make_unique<TscAccess>();
    return {tsc_.get(), tsc_->add(), nullptr, h.info->unit};
  }
  const bool fresh = !perf_;
  PerfEventSpec p;
  p.event = h.encoding.event;
  p.type = PERF_TYPE_SOFTWARE;
  p.config = h.info->config;
  p.exclude_user = h.exclude_user;
  p.exclude_kernel = h.exclude_kernel;
  p.sample_period = h.period;
  p.sample_freq = h.frequency;
  try {
    return {&perf(), perf().add(p), nullptr, h.info->unit};
  } catch (...) {
    if (fresh) perf_.reset();  // as it was
    throw;
  }
}

void SessionImpl::commit_hal_event(HalEvent h, const Entry& entry) {
  if (h.period || h.frequency) ++sampling_events_;
  encodings.push_back(std::move(h.encoding));
  entries_.push_back(entry);
}

void SessionImpl::add_hal_event(HalEvent h) {
  const Entry entry = open_hal_event(h);
  commit_hal_event(std::move(h), entry);
}

bool SessionImpl::known_name(const EventSpec& spec) const {
  if (!ctx->has_backend()) return false;
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

// What refuses a PMU event before it is encoded: no backend, another core type's event on an
// access that counts the CPU's own, a CPUID dump's CPU under access "perf".
void SessionImpl::check_backend_event(const EventSpec& spec) const {
  if (!ctx->has_backend()) {
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
      part && !part->own && ctx->access_method() != AccessKind::perf)
    throw Error(errc::not_supported,
                fmt::format("event '{}' is an event of the {} cores of this hybrid CPU ({}), and access '{}' counts "
                            "the core it was read on ({}): only access \"perf\" counts another core type's events, on "
                            "the CPUs of that type",
                            spec.text, part->name, part->shown, access_name(ctx->access_method()), ctx->parts.front().name));
  if (ctx->access_method() == AccessKind::perf && !ctx->cpu.native())
    throw Error(errc::not_supported,
                fmt::format("event '{}': access 'perf' counts this machine's PMU, but the session is for the CPU of "
                            "the CPUID dump {}; use access = \"sim\" to count on its simulated PMU",
                            spec.text, ctx->cpu.source));
}

// First fit, group by group in the order added: the new group joins the first set the PMU can
// hold with it (a matching of the set's events onto counters and of their extra register values
// onto MSRs, place()), else opens a new set. A group the PMU cannot hold even alone is an error
// (place()'s, naming its events): an exclusive event grouped with others, say. An exclusive
// event added alone opens a set of its own, and no later event joins it. One set: no
// multiplexing. The sets already planned keep their placements; only the new group is placed.
SessionImpl::SetPlan SessionImpl::plan_group(const std::vector<Encoding>& backend,
                                             const std::vector<std::size_t>& group) const {
  auto encodings_of = [&](const std::vector<std::size_t>& events) {
    std::vector<Encoding> out;
    for (std::size_t i : events) out.push_back(backend[i]);
    return out;
  };
  SetPlan plan = planned_;
  for (std::size_t k = 0; k < plan.members.size(); ++k) {
    std::vector<std::size_t> trial = plan.members[k];
    trial.insert(trial.end(), group.begin(), group.end());
    try {
      plan.placements[k] = place(ctx->pmu, encodings_of(trial));
    } catch (const Error& e) {
      if (e.kind() != errc::no_counter) throw;
      continue;  // the PMU cannot hold them at once
    }
    plan.members[k] = std::move(trial);
    return plan;
  }
  plan.placements.push_back(place(ctx->pmu, encodings_of(group)));  // throws no_counter: the group cannot count at all
  plan.members.push_back(group);
  return plan;
}

std::vector<EventSet> SessionImpl::event_sets(const SetPlan& plan) const {
  std::vector<EventSet> out;
  for (std::size_t k = 0; k < plan.members.size(); ++k) {
    EventSet es;
    for (std::size_t j = 0; j < plan.members[k].size(); ++j) {
      es.events.push_back(plan.members[k][j]);
      es.counters.push_back(&ctx->pmu.counters[plan.placements[k].slots[j]]);
      es.extra_msrs.push_back(plan.placements[k].extra_msrs[j]);
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

// A backend event given period=N or freq=N samples at its counter's overflow interrupt, which
// only a driver in the kernel can take: the simulated machine's (access "sim") or Linux perf's
// (access "perf", sample_period or sample_freq); access "msr" has none.
void SessionImpl::refuse_sampling(const EventSpec& spec) const {
  const char* how = spec.modifier("freq") ? "freq=" : spec.modifier("period") ? "period=" : "a precision (:p, :pp, :ppp: sampling at perf record's 4000 Hz)";
  throw Error(errc::not_supported,
              fmt::format("event '{}': {} samples at the counter's overflow interrupt, which access '{}' cannot "
                          "receive in user space (the PMI goes to the kernel's handler); sample with access \"perf\" "
                          "(the kernel's handler) or a simulated workload (access \"sim\")",
                          spec.text, how, access_name(ctx->access_method())));
}

// Access "perf" (check_backend_event refused a dump's CPU): the kernel programs the counters
// from the raw encoding. Scheduling still runs, so a set the PMU cannot hold at once is refused
// with the same message as on the other accesses (one group would never be scheduled), and
// readings say which counter it planned.
void SessionImpl::add_perf_event(const EventSpec& spec, Encoding enc) {
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
  if (enc.period || enc.frequency) ++sampling_events_;  // sampled by perf: sample_period or sample_freq, precise_ip
  encodings.push_back(std::move(enc));
  backend_events_.push_back(encodings.size() - 1);
  backend_groups_.push_back(next_group_);
  entries_.push_back({perf_.get(), index, nullptr});
  part_ = part;
  for (std::size_t i = 0; i < backend_events_.size(); ++i)
    entries_[backend_events_[i]].counter = &pmu.counters[slots[i]];
}

}  // namespace pmc::detail
