// A backend plugin loaded by a test, with its data file, to call its methods directly (probe
// tables, PMU geometry, driver sequences) as Hal::open and the sessions do. Not public API: it
// uses the plugin loader of the static core.
//   pmc_test::LoadedForTest p6("p6");            // build tree: libp6.so and events/p6.toml
//   pmc::Match m = p6.probe(cpu);                 // Backend::probe(cpu, data)
//   pmc::PmuInfo pmu = p6.pmu(cpu);               // Backend::pmu(cpu, data, probe(cpu))
//   p6.backend().program(regs, p6.context(cpu, pmu), set);
#pragma once

#include "plugins.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>
#include <pmc/pmu.hpp>
#include <pmc/sdk/backend.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace pmc_test {

struct LoadedForTest {
  std::shared_ptr<pmc::detail::LoadedBackend> b;  // keeps the library loaded
  pmc::EventCatalog data;                         // the backend's data file

  // The backend `name` of the build tree: PMC_PLUGIN_DIR/lib<name>.so with its data file
  // PMC_DATA_DIR/events/<name>.toml.
  explicit LoadedForTest(const std::string& name)
      : LoadedForTest(std::filesystem::path(PMC_PLUGIN_DIR) / ("lib" + name + ".so"),
                      std::filesystem::path(PMC_DATA_DIR) / "events" / (name + ".toml")) {}
  LoadedForTest(const std::filesystem::path& plugin, const std::filesystem::path& data_file) {
    pmc::detail::PluginLoad load = pmc::detail::load_plugin(plugin);
    if (!load.backend) throw pmc::Error(pmc::errc::plugin, "test support: " + load.status.error);
    b = load.backend;
    data.load(data_file, b->name);
  }
  // Another instance of the backend a Hal chose (its plugin and data file). Backends hold no
  // state, so it behaves as the Hal's does; context(hal) gives the Hal's PMU and catalog.
  static LoadedForTest of(const pmc::Hal& hal) {
    const pmc::BackendInfo& info = hal.require_backend();
    return LoadedForTest(info.file, info.data);
  }

  [[nodiscard]] const pmc::Backend& backend() const { return *b->backend; }
  [[nodiscard]] const pmc::Backend* operator->() const { return b->backend.get(); }
  [[nodiscard]] pmc::Match probe(const pmc::CpuInfo& cpu) const { return backend().probe(cpu, data); }
  // The PMU as Hal::open makes it: for the probe's verdict on the CPU.
  [[nodiscard]] pmc::PmuInfo pmu(const pmc::CpuInfo& cpu) const { return backend().pmu(cpu, data, probe(cpu)); }
  // The driver calls' context. It refers to its arguments: keep them alive while it is used.
  [[nodiscard]] pmc::PmuContext context(const pmc::CpuInfo& cpu, const pmc::PmuInfo& pmu) const {
    return pmc::PmuContext{cpu, pmu, data};
  }
  // What a session of the Hal passes to its backend's driver: the Hal's CPU, PMU and catalog.
  [[nodiscard]] static pmc::PmuContext context(const pmc::Hal& hal) {
    return pmc::PmuContext{hal.cpu(), hal.pmu(), hal.events()};
  }
  [[nodiscard]] pmc::Encoding encode(std::string_view event, const pmc::PmuContext& ctx) const {
    return backend().encode(pmc::parse_event(event), ctx);
  }
};

}  // namespace pmc_test
