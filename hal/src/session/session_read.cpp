// Reading a session: the read plan (where each reading's count comes from, built when the
// events change) and the reads over it; read(span) is the hot path and allocates nothing.
#include "session_impl.hpp"

#include "access.hpp"
#include "perf_event.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pmc::detail {

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
  // What each reading is, once: read() fills in the numbers only.
  p.readings_out.resize(p.readings);
  for (std::size_t k = 0; k < p.readings; ++k) {
    const std::size_t i = p.event[k];
    const Entry& e = entries_[i];
    Reading& r = p.readings_out[k];
    r.event = encodings[i].event;
    r.canonical = encodings[i].canonical;
    r.name = encodings[i].name;
    r.generic = encodings[i].generic;
    r.def = encodings[i].def;
    r.hal = e.counter == nullptr;
    r.unit = e.unit;
    r.cpu = p.cpu[k];
    r.granularity = encodings[i].granularity;
    if (e.counter) {
      r.counter_kind = e.counter->kind;
      r.counter = e.counter->index;
    }
  }
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

// The hot path: the plan's checks, then a tail call of the perf group's read (the direct plan's
// readings are the group's events in order). Every other case is read_through's, so that this
// one saves no register and makes no frame.
std::size_t SessionImpl::read(std::span<std::uint64_t> values) {
  if (plan_current() && plan_.direct && values.size() >= plan_.readings) [[likely]]
    return plan_.direct->read_values(values.data());
  return read_through(values);
}

std::size_t SessionImpl::read_through(std::span<std::uint64_t> values) {
  ReadPlan& plan = read_plan();
  if (values.size() < plan.readings) buffer_too_small(values.size(), plan.readings);
  if (plan.direct) return plan.direct->read_values(values.data());
  read_counts(plan);
  const Count* counts = plan.counts.data();
  const std::uint32_t* route = plan.route.data();
  const std::size_t n = plan.route.size();
  for (std::size_t k = 0; k < n; ++k) values[k] = counts[route[k]].value;
  return n;
}

// The numbers only, into the readings the plan built: no allocation, no string.
const std::vector<Reading>& SessionImpl::read() {
  ReadPlan& plan = read_plan();
  // One perf group, its events in order: straight into the readings.
  if (plan.direct && plan.direct->read_group(plan.readings_out.data())) [[likely]]
    return plan.readings_out;
  read_counts(plan);
  const Count* counts = plan.counts.data();
  const std::uint32_t* route = plan.route.data();
  Reading* out = plan.readings_out.data();
  const std::size_t n = plan.readings;
  for (std::size_t k = 0; k < n; ++k) {
    const Count& c = counts[route[k]];
    out[k].value = c.value;
    out[k].time_enabled = c.time_enabled;
    out[k].time_running = c.time_running;
    out[k].extrapolated = c.extrapolated;
  }
  return plan.readings_out;
}

}  // namespace pmc::detail
