// Device models as a session gets them (not public API: the plugin loader and the session
// internals of the static core):
//  - installed_models(), plugin_device(): the model plugins of the build tree, and a device one
//    of them builds, found by name as Context::make_device finds it for a session;
//  - ChunkSpy<D>, spy_context<D>(): a session context whose device model is D wrapped so that a
//    callback runs after each Device::run() call. Session::run() splits a workload into chunks
//    and polls between them; the callback sees each chunk as it ran (the chunking tests).
#pragma once

#include "context.hpp"
#include "plugins.hpp"
#include "support/backend.hpp"

#include <pmc/cpu.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

namespace pmc_test {

// The model plugins in PMC_PLUGIN_DIR, registered as Hal::open registers them, and loaded.
inline std::shared_ptr<const pmc::detail::ModelRegistry> installed_models() {
  auto registry = std::make_shared<pmc::detail::ModelRegistry>();
  registry->dirs = {std::filesystem::path(PMC_PLUGIN_DIR)};
  for (auto& p : pmc::detail::load_plugins(registry->dirs)) registry->add(p);
  registry->load_deferred();
  return registry;
}

// The device the installed model plugin `model` builds for `cpu` (Context::make_device: throws
// not_found when no plugin provides the model, and the model's refusal of the CPU).
inline pmc::detail::DeviceHandle plugin_device(const std::string& model, const pmc::CpuInfo& cpu) {
  pmc::detail::Context ctx;
  ctx.cpu = cpu;
  ctx.pmu.name = "test";
  ctx.pmu.device_model = model;
  ctx.models = installed_models();
  return ctx.make_device();
}

// Called after each Device::run() of a ChunkSpy (empty: nothing is called).
inline std::function<void()> between_chunks;
// Device::run() calls of every ChunkSpy so far.
inline std::uint64_t chunks_run = 0;

// Device model D (built from the CpuInfo, or by default when D takes none) that calls
// between_chunks after each run().
template <class D>
class ChunkSpy final : public pmc::Device {
 public:
  explicit ChunkSpy(const pmc::CpuInfo& cpu) : d_(make(cpu)) {}
  [[nodiscard]] D& inner() { return *d_; }
  [[nodiscard]] std::string_view name() const override { return d_->name(); }
  std::uint64_t read(std::uint32_t msr) override { return d_->read(msr); }
  void write(std::uint32_t msr, std::uint64_t value) override { d_->write(msr, value); }
  std::uint64_t rdpmc(std::uint32_t index) override { return d_->rdpmc(index); }
  void run(const pmc::Segment& segment) override {
    d_->run(segment);
    ++chunks_run;
    if (between_chunks) between_chunks();
  }
  [[nodiscard]] bool executes(const pmc::Segment& segment) const override { return d_->executes(segment); }
  [[nodiscard]] std::uint64_t interrupts() const override { return d_->interrupts(); }
  void set_reader_cpl(unsigned cpl) override { d_->set_reader_cpl(cpl); }
  void set_cr4_pce(bool enabled) override { d_->set_cr4_pce(enabled); }
  void configure(std::string_view setting, std::uint64_t value) override { d_->configure(setting, value); }

 private:
  static std::unique_ptr<D> make(const pmc::CpuInfo& cpu) {
    if constexpr (std::is_constructible_v<D, const pmc::CpuInfo&>) return std::make_unique<D>(cpu);
    else return std::make_unique<D>();
  }
  std::unique_ptr<D> d_;
};

// A context as Hal::open makes it for `backend` on `cpu` with access "sim", except that the
// device model the PMU names is ChunkSpy<D>. Change ctx->pmu (counter widths) before a session
// is made over it.
template <class D>
std::shared_ptr<pmc::detail::Context> spy_context(const LoadedForTest& backend, const pmc::CpuInfo& cpu) {
  static const pmc::pmc_model_descriptor descriptor{pmc::kAbiVersion, sizeof(pmc::pmc_model_descriptor), "spy",
                                               "test: a device model that reports each run()",
                                               &pmc::make_device<ChunkSpy<D>>, nullptr};
  auto ctx = std::make_shared<pmc::detail::Context>();
  ctx->loaded = backend.b;
  ctx->cpu = cpu;
  ctx->catalog = backend.data;
  ctx->pmu = backend.pmu(cpu);
  ctx->access = pmc::detail::AccessKind::sim;
  ctx->why = "test: spy_context";
  auto model = std::make_shared<pmc::detail::LoadedModel>();
  model->descriptor = &descriptor;
  model->name = ctx->pmu.device_model;
  model->file = "(test spy)";
  auto registry = std::make_shared<pmc::detail::ModelRegistry>();
  registry->models.push_back(model);
  ctx->models = registry;
  return ctx;
}

}  // namespace pmc_test
