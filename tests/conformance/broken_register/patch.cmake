# One bug in the example backend (examples/backend-skeleton): its driver's start() clears the
# toy PMU's ToyOvf (MSR 0x7004), a register toy.toml does not declare. The model has it, so a
# session of access "sim" works; the msr access on hardware refuses it. pmc-conformance must
# fail the_driver_touches_only_declared_registers, naming 0x7004.
set(PATCH_FILE skeleton.cpp)
set(PATCH_OLD [=[class ToyBackend final : public pmc::Backend {};]=])
set(PATCH_NEW [=[// BROKEN (tests/conformance/broken_register): start() clears ToyOvf, which toy.toml does not declare.
class ToyBackend final : public pmc::Backend {
 public:
  void start(pmc::RegisterFile& regs, const pmc::PmuContext& ctx,
             std::span<const pmc::Assignment> set) const override {
    regs.write(0x7004, 0);
    pmc::Backend::start(regs, ctx, set);
  }
};]=])
