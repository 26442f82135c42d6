# One bug in the example backend (examples/backend-skeleton): its driver's start() also sets bit
# 20 of ToyEvtSel (an interrupt enable on other PMUs), which the toy PMU reserves: the model
# raises #GP. pmc-conformance must fail the_driver_programs_every_event_on_the_model with the
# step and the exception's text (not Boost's bare "unexpected exception").
set(PATCH_FILE skeleton.cpp)
set(PATCH_OLD [=[class ToyBackend final : public pmc::Backend {};]=])
set(PATCH_NEW [=[// BROKEN (tests/conformance/broken_reserved): start() sets ToyEvtSel bit 20, which is reserved.
class ToyBackend final : public pmc::Backend {
 public:
  void start(pmc::RegisterFile& regs, const pmc::PmuContext& ctx,
             std::span<const pmc::Assignment> set) const override {
    pmc::Backend::start(regs, ctx, set);
    for (const pmc::Assignment& a : set)
      regs.write(a.counter->control_msr, regs.read(a.counter->control_msr) | (std::uint64_t{1} << 20));
  }
};]=])
