// Session::run: a simulated workload on access "sim". The runner (hal/src/sim/runner.cpp) does
// the work; the session checks that it counts on a simulated device and lends itself to the
// runner as its RunTarget.
#include "session_impl.hpp"

#include "context.hpp"
#include "runner.hpp"
#include "signal_map.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

namespace pmc::detail {

// The session as the runner drives it.
class SessionImpl::SimTarget final : public RunTarget {
 public:
  explicit SimTarget(SessionImpl& s) : s_(s) {}
  RegisterAccess& simulated() override {
    s_.open_sim();
    return *s_.registers_;
  }
  [[nodiscard]] bool running() const override { return s_.running; }
  void start() override { s_.start(); }
  void stop() override { s_.stop(); }
  void poll() override { s_.poll(); }
  SignalMap* signal_map() override {
    // Built once per session, when its device is: each signal name is resolved once.
    if (!s_.signals_built_) {
      s_.signals_built_ = true;
      if (SignalMap::Resolve resolve = event_signal_resolver(*s_.ctx, *s_.registers_))
        s_.signals_ = std::make_unique<SignalMap>(std::move(resolve));
    }
    return s_.signals_.get();
  }
  [[nodiscard]] bool samples() const override {
    if (!s_.profile_request.empty()) return true;
    for (const Encoding& e : s_.encodings)
      if (e.period != 0 || e.frequency != 0) return true;
    return false;
  }

 private:
  SessionImpl& s_;
};

void SessionImpl::require_sim() const {
  if (!ctx->has_backend())
    throw Error(errc::not_supported,
                fmt::format("a simulated workload runs on a backend's device model, and no backend was chosen: {}", ctx->why));
  if (ctx->access_method() != AccessKind::sim)
    throw Error(errc::not_supported,
                fmt::format("a simulated workload needs access \"sim\"; this session counts through access '{}'",
                            access_name(ctx->access_method())));
}

WorkloadRun SessionImpl::run(const Workload& workload) {
  require_sim();
  SimTarget target(*this);
  return run_workload(target, ctx->pmu, workload);
}

WorkloadRun SessionImpl::run(WorkloadReader& reader) {
  require_sim();
  SimTarget target(*this);
  return run_workload(target, ctx->pmu, reader);
}

}  // namespace pmc::detail
