// What a Hal shares with the sessions it creates: the loaded backend (which keeps its library
// loaded), the CPU, the PMU geometry, the catalog and the device models. Sessions hold a
// shared_ptr to it, so a session may outlive the Hal object that created it.
#pragma once

#include "access_kind.hpp"
#include "plugins.hpp"

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/pmu.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace pmc::detail {

struct Context {
  std::shared_ptr<LoadedBackend> loaded;  // null: no backend (HAL events only)
  CpuInfo cpu;
  PmuInfo pmu;
  EventCatalog catalog;
  AccessKind access = AccessKind::sim;
  std::string access_reason;  // why that one
  std::string why;     // why this backend, or why none (for "needs a backend" errors)
  std::shared_ptr<const ModelRegistry> models;
  std::vector<std::string> profiling_backends;  // loaded backends whose driver samples (for messages)
  [[nodiscard]] const Backend& backend() const { return *loaded->backend; }
  [[nodiscard]] PmuContext pmu_context() const { return PmuContext{cpu, pmu, catalog}; }
  // Builds the device model the PMU names for this CPU (ModelRegistry::make_device, in
  // hal/src/plugins/model_device.cpp). Throws not_found naming the model and the directories
  // searched when no plugin provides it, and the model's own reason when its factory refuses
  // the CPU.
  [[nodiscard]] DeviceHandle make_device() const {
    static const ModelRegistry kNone;  // a context without a registry: no model is installed
    return (models ? *models : kNone).make_device(pmu.device_model, pmu.name, cpu);
  }
};

}  // namespace pmc::detail
