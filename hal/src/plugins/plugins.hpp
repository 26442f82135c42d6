// The plugin loader: backend and device-model libraries from the plugin directories. Internal
// (the tests link the core statically to reach it).
#pragma once

#include "root_safety.hpp"

#include <pmc/plugin.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/model.hpp>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <functional>
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
  bool deferred_backend = false;           // a backend library Hal::open did not need (PluginSet)
};

// The descriptors a library's dynamic symbol table defines.
struct Exports {
  bool backend = false;  // PMC_BACKEND_SYMBOL
  bool model = false;    // PMC_MODEL_SYMBOL
};

// The device models the plugin directories offer, and where they were looked for. Libraries that
// define only a model are listed by load_plugins() but loaded at the first need: a simulated
// device (only the library named lib<model>-model.so when there is one, every library
// otherwise), or the list of plugins (every library). Safe from several threads.
struct ModelRegistry {
  mutable std::vector<std::shared_ptr<LoadedModel>> models;  // complete after load_deferred()
  std::vector<std::filesystem::path> dirs;
  mutable std::vector<PluginStatus> broken;       // model libraries that failed to load
  std::vector<std::filesystem::path> deferred;    // model-only libraries, in directory order
  mutable std::vector<PluginLoad> deferred_loads;  // what loading each of `deferred` gave (after load_deferred())
  // Registers what load_plugins() gave for one library: its model, its failure (a library that
  // is no backend), or the model-only library to load later.
  void add(const PluginLoad& p);
  // Loads the deferred libraries not loaded yet: their checks again, dlopen, the descriptor; a
  // model name already loaded is reported as shadowed.
  void load_deferred() const;
  // Builds the device model `model` (a backend's [pmu] model; its PMU is `pmu_name`) for `cpu`,
  // loading deferred libraries first: the one named lib<model>-model.so (the first such in
  // directory order), then, when that does not provide the model, all. Throws not_supported
  // when the backend names no model or the model's factory refuses the CPU (with its reason),
  // not_found naming the directories searched when no plugin provides it (model_device.cpp).
  [[nodiscard]] DeviceHandle make_device(const std::string& model, const std::string& pmu_name,
                                         const CpuInfo& cpu) const;

 private:
  std::shared_ptr<LoadedModel> find_model(const std::string& name) const;  // mutex_ held
  void load_deferred_at(std::size_t i) const;                             // mutex_ held
  mutable std::mutex mutex_;
  mutable std::vector<bool> loaded_;  // per deferred library
};

// probe_table() (<pmc/sdk/backend.hpp>) over a [pmu] section alone: the first [[probe]] rule
// that matches decides (backend.cpp).
Match probe_with_table(const CpuInfo& cpu, const PmuDescription& pmu, std::string_view backend);

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
// ModelRegistry). A library that defines only a backend descriptor is loaded when `load_backend`
// is empty or says yes for its file; otherwise it is checked, not loaded, and marked
// deferred_backend (Hal::open asks only for the backends whose probe table can match the CPU).
// `pass_over`, when given, says of a file which kind it is taken for without opening it: those
// are listed unchecked and unloaded (a model: deferred; a backend: deferred_backend), and the
// checks run when they are loaded. Hal::open passes over the libraries named lib<name>-model.so
// and the backends whose data file's probe table refuses the CPU. Both are given the library's
// path as text (a std::filesystem::path is made only for what is kept of a file).
std::vector<PluginLoad> load_plugins(
    const std::vector<std::filesystem::path>& dirs,
    const std::function<bool(const std::string&)>& load_backend = {},
    const std::function<std::optional<PluginKind>(const std::string&)>& pass_over = {});

// The libraries of the plugin directories as Hal::open found them. The backend libraries it did
// not load (deferred_backend) are loaded, once and safely from several threads, when something
// asks for every backend: the list of plugins, or a message naming the backends that sample.
class PluginSet {
 public:
  explicit PluginSet(std::vector<PluginLoad> loads) : loads_(std::move(loads)) {}
  // Every library, the deferred backends loaded (a name found again is reported as shadowed).
  const std::vector<PluginLoad>& all() const;
  // The libraries as Hal::open left them (deferred backends not loaded).
  [[nodiscard]] const std::vector<PluginLoad>& as_opened() const { return loads_; }
  // The names of the backends whose driver samples at counter interrupts (all() first).
  [[nodiscard]] std::vector<std::string> profiling_backends() const;

 private:
  std::vector<PluginLoad> loads_;
  mutable std::vector<PluginLoad> all_;
  mutable std::once_flag all_once_;
};

// Hal::plugins()'s statuses in the parse cache (plugin_statuses.cpp): the key of a listing
// (empty: not cached: a directory could not be listed, no cache, or PMC_DEBUG=plugins), the
// statuses stored under it when the libraries have not changed since, and storing them (only
// when none failed).
std::string plugin_statuses_key(const std::vector<PluginLoad>& loads);
std::optional<std::vector<PluginStatus>> cached_plugin_statuses(const std::string& key);
void store_plugin_statuses(const std::string& key, const std::vector<PluginStatus>& statuses);

}  // namespace pmc::detail
