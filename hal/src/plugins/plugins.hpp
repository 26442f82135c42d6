// The plugin loader: backend and device-model libraries from the plugin directories. Internal
// (the tests link the core statically to reach it).
#pragma once

#include "root_safety.hpp"

#include <pmc/plugin.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace pmc::detail {

struct LoadedBackend {
  // Declared first so it is destroyed last: the backend's code lives in the library.
  std::shared_ptr<boost::dll::shared_library> library;
  std::unique_ptr<Backend> backend;
  std::string name;
  std::string file;
  std::uint32_t capabilities = 0;
  LoadedBackend() = default;
  LoadedBackend(const LoadedBackend&) = delete;
  LoadedBackend& operator=(const LoadedBackend&) = delete;
  ~LoadedBackend() { backend.reset(); }
};

struct LoadedModel {
  std::shared_ptr<boost::dll::shared_library> library;
  const pmc_model_descriptor* descriptor = nullptr;
  std::string name;
  std::string file;
};

// A device built by a model plugin, with the library that holds its code.
struct DeviceHandle {
  std::shared_ptr<LoadedModel> model;  // declared first: destroyed after the device
  std::unique_ptr<Device> device;
  DeviceHandle() = default;
  DeviceHandle(DeviceHandle&&) noexcept = default;
  DeviceHandle& operator=(DeviceHandle&&) noexcept = default;
  ~DeviceHandle() { device.reset(); }
};

struct PluginLoad {
  std::shared_ptr<LoadedBackend> backend;  // a backend library that loaded
  std::shared_ptr<LoadedModel> model;      // a model library that loaded (a library may be both)
  PluginStatus status;                     // for a library that is both: the backend's
  std::optional<PluginStatus> model_status;
  bool deferred = false;                   // a model-only library, checked but not loaded yet
};

// The descriptors a library's dynamic symbol table defines.
struct Exports {
  bool backend = false;  // PMC_BACKEND_SYMBOL
  bool model = false;    // PMC_MODEL_SYMBOL
};

// The device models the plugin directories offer, and where they were looked for. Libraries that
// define only a model are listed by load_plugins() but loaded at the first need: a simulated
// device, or the list of plugins.
struct ModelRegistry {
  mutable std::vector<std::shared_ptr<LoadedModel>> models;  // complete after load_deferred()
  std::vector<std::filesystem::path> dirs;
  mutable std::vector<PluginStatus> broken;       // model libraries that failed to load
  std::vector<std::filesystem::path> deferred;    // model-only libraries, in directory order
  mutable std::vector<PluginLoad> deferred_loads;  // what loading each of `deferred` gave
  // Registers what load_plugins() gave for one library: its model, its failure (a library that
  // is no backend), or the model-only library to load later.
  void add(const PluginLoad& p);
  // Loads the deferred libraries, once (safe from several threads): their checks again, dlopen,
  // the descriptor; a model name already loaded is reported as shadowed.
  void load_deferred() const;
  // Builds the device model `model` (a backend's [pmu] model; its PMU is `pmu_name`) for `cpu`,
  // loading the deferred libraries first. Throws not_supported when the backend names no model
  // or the model's factory refuses the CPU (with its reason), not_found naming the directories
  // searched when no plugin provides it (model_device.cpp).
  [[nodiscard]] DeviceHandle make_device(const std::string& model, const std::string& pmu_name,
                                         const CpuInfo& cpu) const;

 private:
  mutable std::once_flag deferred_once_;
};

// Why a file may not be loaded, or nullopt when it may: it must be a regular file (not a FIFO,
// device, directory or dangling link), a complete ELF shared object for this machine (header,
// program headers and loadable segments inside the file), and, when the process runs as root,
// neither it nor a directory above it may be writable by group or others (a sticky
// root-owned directory such as /tmp excepted) or owned by a user other than root.
std::optional<std::string> unsafe_plugin_file(const std::filesystem::path& file);
// The same checks, and when they pass and `exports` is given, what the library's dynamic symbol
// table defines (nullopt there when it cannot be read without loading the library).
std::optional<std::string> inspect_plugin_file(const std::filesystem::path& file, std::optional<Exports>* exports);
// The ownership and mode part of the check above (root_safety.hpp: unsafe_for_root) applies to
// any file pmchal reads as root: plugins, configs, events files.

// Loads one library: the checks above, dlopen with RTLD_NOW, then the backend descriptor and/or
// the model descriptor (their ABI version and size), and the backend's factory. Never throws; a
// failure is described in status.error, naming the file.
PluginLoad load_plugin(const std::filesystem::path& file);

// Every *.so in the directories, in order; a backend or model name found again later is reported
// as shadowed and not loaded. A bad directory entry is reported, never thrown. A library whose
// symbol table defines only a model descriptor is checked but not loaded (deferred: see
// ModelRegistry).
std::vector<PluginLoad> load_plugins(const std::vector<std::filesystem::path>& dirs);

}  // namespace pmc::detail
