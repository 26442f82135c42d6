#include "context.hpp"
#include "session_impl.hpp"

#include <pmc/error.hpp>
#include <pmc/session.hpp>
#include <pmc/sim/device.hpp>

#include <fmt/format.h>

#include <chrono>

namespace pmc {

namespace detail {

namespace {
std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}
}  // namespace

SessionImpl::SessionImpl(std::shared_ptr<const Context> context) : ctx(std::move(context)) {
  if (ctx->access == "sim") {
    device = sim::make_device(ctx->pmu.device_model, ctx->cpu);
    regs = device.get();
  } else {
    throw Error(errc::not_supported,
                fmt::format("access '{}' is not available in this build; use access = \"sim\" to count on the "
                            "simulated {} PMU",
                            ctx->access, ctx->pmu.name));
  }
}

SessionImpl::~SessionImpl() {
  if (running) {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; the counters are switched off as far as possible
    }
  }
}

std::vector<Assignment> SessionImpl::assignments() const {
  std::vector<Assignment> out;
  for (std::size_t i = 0; i < encodings.size(); ++i) out.push_back({&ctx->pmu.counters[slots[i]], &encodings[i]});
  return out;
}

void SessionImpl::add(std::string_view event) {
  if (running) throw Error(errc::invalid_argument, fmt::format("cannot add event '{}' while the session is counting", event));
  Encoding enc = ctx->backend().encode(parse_event(event), ctx->catalog, ctx->pmu);
  std::vector<Encoding> next = encodings;
  next.push_back(std::move(enc));
  std::vector<std::size_t> placed = schedule(ctx->pmu, next);  // throws: nothing changed
  encodings = std::move(next);
  slots = std::move(placed);
  totals.assign(encodings.size(), 0);
  last_raw.assign(encodings.size(), 0);
  programmed = false;
}

void SessionImpl::program() {
  const Backend& b = ctx->backend();
  b.program(*regs, ctx->pmu, assignments());
  for (std::size_t i = 0; i < encodings.size(); ++i) b.write_counter(*regs, ctx->pmu.counters[slots[i]], 0);
  last_raw.assign(encodings.size(), 0);
  programmed = true;
}

void SessionImpl::start() {
  if (running) return;
  if (encodings.empty()) throw Error(errc::invalid_argument, "the session has no events to count");
  if (!programmed) program();
  ctx->backend().start(*regs, ctx->pmu, assignments());
  running = true;
  started_ns = now_ns();
}

void SessionImpl::poll() {
  const Backend& b = ctx->backend();
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const CounterInfo& c = ctx->pmu.counters[slots[i]];
    std::uint64_t raw = b.read_counter(*regs, c);
    std::uint64_t mask = c.width >= 64 ? ~0ull : (1ull << c.width) - 1;
    totals[i] += (raw - last_raw[i]) & mask;  // wrap-corrected delta
    last_raw[i] = raw;
  }
}

void SessionImpl::stop() {
  if (!running) return;
  ctx->backend().stop(*regs, ctx->pmu, assignments());
  running = false;
  enabled_ns += now_ns() - started_ns;
  poll();
}

void SessionImpl::reset() {
  const Backend& b = ctx->backend();
  if (programmed)
    for (std::size_t i = 0; i < encodings.size(); ++i) b.write_counter(*regs, ctx->pmu.counters[slots[i]], 0);
  totals.assign(encodings.size(), 0);
  last_raw.assign(encodings.size(), 0);
  enabled_ns = 0;
  if (running) started_ns = now_ns();
}

std::vector<Reading> SessionImpl::read() {
  if (running) poll();
  std::uint64_t enabled = enabled_ns + (running ? now_ns() - started_ns : 0);
  std::vector<Reading> out;
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    Reading r;
    r.event = encodings[i].event;
    r.canonical = encodings[i].canonical;
    r.value = totals[i];
    r.time_enabled = enabled;
    r.time_running = enabled;  // every event has its own counter: no multiplexing
    r.counter_kind = ctx->pmu.counters[slots[i]].kind;
    r.counter = ctx->pmu.counters[slots[i]].index;
    out.push_back(std::move(r));
  }
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
sim::Device* Session::device() { return impl_->device.get(); }

}  // namespace pmc
