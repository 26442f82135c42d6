// What a Hal shares with the sessions it creates: the loaded backend (which keeps its library
// loaded), the CPU, the PMU geometry, the catalog and the device models. Sessions hold a
// shared_ptr to it, so a session may outlive the Hal object that created it.
#pragma once

#include "access_kind.hpp"
#include "once.hpp"
#include "plugins.hpp"

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/pmu.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc::detail {

// One core type of a hybrid CPU (docs/event-format.md, "Hybrid parts"): its name, its events and
// its PMU as the backend describes it for a core of that type.
struct CorePart {
  std::string name;      // "adl_grt": what `NAME::EVENT` selects
  std::string perf_pmu;  // "cpu_atom": Linux perf's PMU of that core type ("" when shared)
  unsigned core_type = 0;
  std::string shown;     // "cpu/adl-grt.toml (Alder Lake, Gracemont E-core)"
  bool own = false;      // the core the CPU was read on: Context::cpu/pmu/catalog are its
  CpuInfo cpu;           // the CPU, with this part's core type and native model
  PmuInfo pmu;
  EventCatalog catalog;  // the backend's files, this part's file, events_path
};

// The generic events a simulated workload counts when none are given (pmc::default_events,
// DefaultEvents::workload), each parsed and encoded once per Hal: a session adding one by that
// name takes its spec and encoding from here (hal/src/session/default_events.cpp fills it).
struct DefaultEvent {
  std::string name;
  EventSpec spec;
  Encoding encoding;
};
struct WorkloadDefaults {
  std::once_flag once;
  std::atomic<bool> ready{false};
  std::vector<DefaultEvent> events;
};

// A backend chosen by the probe an earlier open kept (Preselection): its library is loaded at
// the first use of Context::backend(), not by Hal::open.
struct LaterBackend {
  std::filesystem::path file;  // the library
  std::string name;            // its backend's name, as the kept probe recorded it
  bool profiles = false;       // its driver samples at counter interrupts (as recorded)
};

struct Context {
  // The backend, loaded. Null: no backend (HAL events only), or `later` loads it at first use.
  // Read it through backend() and has_backend().
  mutable std::shared_ptr<LoadedBackend> loaded;
  std::optional<LaterBackend> later;
  mutable Once loaded_once;
  [[nodiscard]] bool has_backend() const { return later.has_value() || loaded != nullptr; }
  // Hal::open's native reading has no brand string yet (its three CPUID leaves are three traps to
  // the hypervisor in a virtual machine): complete_cpu() adds it, once, to `cpu` and to each
  // part's, before the first reader that may look at it (Hal::cpu(), and ensure(), which runs
  // before the backend's code sees the CPU). A context without a backend (Hal::session) is made
  // with the whole reading.
  CpuInfo cpu;
  void complete_cpu() const;
  mutable Once cpu_completed;
  PmuInfo pmu;           // valid after ensure()
  EventCatalog catalog;  // valid after ensure()
  // Hal::open leaves the catalog and the PMU (each hybrid part's too) to this, run once at their
  // first use, ensure(): a HAL opened to ask what it is reads no events file. A failure (an
  // events file that cannot be read, a backend refusing its PMU) is thrown there, and again at
  // the next use. Null: they are filled already.
  std::function<void(Context&)> complete;
  void ensure() const;
  mutable Once completed;
  // The access method sessions count with, and why: Hal::open leaves the choice (which looks at
  // sysfs for the PMU Linux perf exposes) to the first that asks, through access_method() and
  // access_why(); a Context made otherwise (the tests') sets `access` itself.
  mutable AccessKind access = AccessKind::sim;
  mutable std::string access_reason;
  std::function<std::pair<AccessKind, std::string>()> choose_access;
  mutable Once access_chosen;
  [[nodiscard]] AccessKind access_method() const {
    settle_access();
    return access;
  }
  [[nodiscard]] const std::string& access_why() const {
    settle_access();
    return access_reason;
  }
  void settle_access() const {
    if (choose_access)
      access_chosen([this] {
        auto [kind, reason] = choose_access();
        access = kind;
        access_reason = std::move(reason);
      });
  }
  std::string why;     // why this backend, or why none (for "needs a backend" errors)
  std::shared_ptr<const ModelRegistry> models;
  std::shared_ptr<const PluginSet> plugins;  // every plugin library (for messages naming backends)
  // The backends whose driver samples at counter interrupts (loads the ones Hal::open did not).
  [[nodiscard]] std::vector<std::string> profiling_backends() const {
    return plugins ? plugins->profiling_backends() : std::vector<std::string>{};
  }
  // The backend; a `later` one is loaded now (its checks again, dlopen, its factory), and a
  // library that no longer loads, or holds another backend, throws Error(plugin) naming it.
  [[nodiscard]] const Backend& backend() const;
  [[nodiscard]] PmuContext pmu_context() const {
    ensure();
    return PmuContext{cpu, pmu, catalog};
  }
  // Hybrid CPUs: every core type, this CPU's own part first; empty otherwise.
  std::vector<CorePart> parts;
  // A part's CPU, PMU and events (the Context's own for the part the CPU was read on).
  [[nodiscard]] PmuContext pmu_context(const CorePart& p) const {
    ensure();
    return p.own ? pmu_context() : PmuContext{p.cpu, p.pmu, p.catalog};
  }
  // The part a `PMU::` prefix names (its name or Linux perf's), or null: not a part.
  [[nodiscard]] const CorePart* part(std::string_view pmu_name) const;
  // The backend's encoding of an event string; one with a part's prefix is encoded with that
  // part's events and PMU, and its canonical form names the part.
  [[nodiscard]] Encoding encode(const EventSpec& spec) const;
  // Once worked out: the default workload event of that name, or null.
  std::shared_ptr<WorkloadDefaults> defaults = std::make_shared<WorkloadDefaults>();
  [[nodiscard]] const DefaultEvent* default_event(std::string_view name) const {
    if (!defaults->ready.load(std::memory_order_acquire)) return nullptr;
    for (const DefaultEvent& e : defaults->events)
      if (e.name == name) return &e;
    return nullptr;
  }
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
