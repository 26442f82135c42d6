// The entry point: configuration, plugin discovery, CPU probing, backend and access selection.
#pragma once

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>
#include <pmc/session.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pmc {

// Where a setting came from: "default", "command line", "$PMC_CONFIG" or "file:line:column".
struct Origin {
  std::string where = "default";
};

struct Config {
  std::string backend = "auto";                    // "auto" or a backend name
  std::string access = "auto";                     // "auto" | "sim" | "perf" | "msr"
  std::vector<std::filesystem::path> plugin_path;  // searched before the built-in directory
  std::vector<std::filesystem::path> events_path;  // files or directories, loaded after built-ins
  std::string cpu = "native";                      // "native", a CPUID dump or a CPU description file
  std::vector<std::string> region_events;          // [regions] events: what regions count (docs/regions.md)
  std::filesystem::path region_output;             // [regions] output: their JSON at exit (empty: none)
  std::optional<std::filesystem::path> file;       // the config file read, if any
  std::string found_by;                            // "--config", "$PMC_CONFIG", ... or "built-in defaults"
  std::map<std::string, Origin> origin;            // key -> where its value came from
};

// Parses one config file; unknown keys, wrong types and unknown values are errors with
// file:line:column. Relative paths in it are relative to the file's directory.
PMC_API Config load_config(const std::filesystem::path& file);
// The search order: explicit file, $PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml (or
// ~/.config/pmc/config.toml), /etc/pmc/config.toml, built-in defaults.
PMC_API Config find_config(const std::optional<std::filesystem::path>& explicit_file);

// Where the installed (or built) library finds its plugins and data, relative to itself.
struct Paths {
  std::filesystem::path plugins;   // <libdir>/pmchal/plugins
  std::filesystem::path events;    // <prefix>/share/pmchal/events
  std::filesystem::path data;      // <prefix>/share/pmchal
};
PMC_API Paths default_paths();

// Bundled data by bare name: "pentium-iii" names share/pmchal/cpuid/pentium-iii.txt, "p6-demo"
// share/pmchal/workloads/p6-demo.toml. A name that is an existing file, or has a '/', is
// returned as given (so a loader reports a missing file by the name the user gave).
enum class DataKind { cpuid_dump, workload };
PMC_API std::filesystem::path resolve_data(std::string_view given, DataKind kind);

// The rate of this machine's time-stamp counter (the `tsc` event). From CPUID 15H (crystal
// clock * TSC/crystal ratio), else CPUID 16H (base frequency, MHz), else the hypervisor's
// timing leaf (CPUID 40000010H), else the kernel's calibration (the perf mmap page's time
// conversion), else measured against CLOCK_MONOTONIC_RAW since the first `tsc` event started,
// to 100 ppm (sleeping only for what that interval lacks). Computed once per process.
struct TscFrequency {
  double hz = 0;              // 0 when this machine has no usable TSC
  double uncertainty_hz = 0;  // half-width of the interval the true rate lies in
  std::string method;         // "cpuid 15H...", "cpuid 16H...", "hypervisor...", "the kernel's...", "measured..."
};
PMC_API TscFrequency tsc_frequency();

// The events pmchal counts itself, with any backend or none (docs/user-guide.md "HAL
// events"): `tsc` and the OS software events.
struct HalEventDescription {
  std::string name;         // "context-switches"
  std::string alias;        // perf's other spelling ("cs"), or ""
  std::string unit;         // the Reading::unit of its counts: "ns", "ticks" or ""
  std::string description;
};
PMC_API std::vector<HalEventDescription> hal_events();

// One plugin file Hal::open found: a backend (a PMU's driver), a device model (a simulated
// PMU), or a file that failed to load (error says why).
enum class PluginKind { backend, model, unknown };
struct PluginStatus {
  std::filesystem::path file;
  PluginKind kind = PluginKind::unknown;
  std::string name;      // the backend's or model's name, when loaded
  std::string description;
  std::string error;     // empty when loaded
};

// The chosen backend.
struct BackendInfo {
  std::string name;                 // "p6"
  std::string description;          // its data file's description
  std::filesystem::path file;       // the plugin
  std::filesystem::path data;       // its data file (events, registers, probe table)
  bool profiles = false;            // its driver samples at counter interrupts
};

struct Candidate {
  std::string backend;
  Match match;
};

namespace detail { class HalImpl; }

class PMC_API Hal {
 public:
  // Reads the CPU (config.cpu), loads every plugin, probes each, chooses the backend and
  // loads its events. A plugin that fails to load is reported in plugins(), not thrown,
  // unless it is the one config.backend names.
  static Hal open(const Config& config);
  Hal(Hal&&) noexcept;
  Hal& operator=(Hal&&) noexcept;
  ~Hal();

  [[nodiscard]] const Config& config() const;
  [[nodiscard]] const CpuInfo& cpu() const;
  [[nodiscard]] const std::vector<PluginStatus>& plugins() const;
  [[nodiscard]] const std::vector<Candidate>& candidates() const;
  // The chosen backend, or nullptr when none matches; why() says why.
  [[nodiscard]] const BackendInfo* backend() const;
  [[nodiscard]] const std::string& why() const;
  // The chosen backend; throws not_supported with why() when there is none.
  [[nodiscard]] const BackendInfo& require_backend() const;
  [[nodiscard]] const PmuInfo& pmu() const;
  [[nodiscard]] const EventCatalog& events() const;
  [[nodiscard]] std::string access() const;   // the access method a session will use
  [[nodiscard]] const std::string& access_reason() const;  // why that one (or why none)

  [[nodiscard]] Encoding encode(std::string_view event) const;
  // A session (of this thread by default). It needs no backend: without one it counts only the
  // HAL events (tsc and the OS software events, see docs/user-guide.md), and adding a PMU event
  // throws not_supported with why().
  [[nodiscard]] Session session(const Scope& scope = Scope::this_thread()) const;

 private:
  PMC_INTERNAL explicit Hal(std::unique_ptr<detail::HalImpl> impl);
  std::unique_ptr<detail::HalImpl> impl_;
};

}  // namespace pmc
