# One bug in the example backend (examples/backend-skeleton): its driver's start() enables
# counter 0 only. pmc-conformance must fail every_counter_counts_at_once.
set(PATCH_FILE skeleton.cpp)
set(PATCH_OLD [=[class ToyBackend final : public pmc::Backend {};]=])
set(PATCH_NEW [=[// BROKEN (tests/conformance/broken_counter0): start() enables counter 0 only.
class ToyBackend final : public pmc::Backend {
 public:
  void start(pmc::RegisterFile& regs, const pmc::PmuContext& ctx,
             std::span<const pmc::Assignment> set) const override {
    for (const pmc::Assignment& a : set)
      if (a.counter->index == 0) pmc::Backend::start(regs, ctx, std::span<const pmc::Assignment>(&a, 1));
  }
};]=])
