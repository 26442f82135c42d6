// The entry point: CPU probing, plugin discovery, backend and access selection (Hal::open).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/hal.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/config.hpp>
#include <pmc/cpu.hpp>
#include <pmc/encoding.hpp>
#include <pmc/catalog.hpp>
#include <pmc/export.hpp>
#include <pmc/hal_events.hpp>
#include <pmc/paths.hpp>
#include <pmc/plugin.hpp>
#include <pmc/pmu.hpp>
#include <pmc/session.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// The chosen backend.
struct BackendInfo {
  std::string name;                 // "p6"
  std::string description;          // its data file's description
  std::filesystem::path file;       // the plugin
  std::filesystem::path data;       // its data file (events, registers, probe table)
  bool profiles = false;            // its driver samples at counter interrupts
  // The per-CPU events files loaded for this CPU from <data dir>/<name>/cpu/, as
  // "cpu/skl.toml (Skylake client)" (docs/event-format.md, "Events of one model"); empty: none.
  std::vector<std::string> cpu_catalogs;
  // A hybrid CPU's core types (docs/event-format.md, "Hybrid parts"), the one the CPU was read on
  // first; empty for other CPUs. `PART::EVENT` (or Linux perf's PMU name) encodes an event of a
  // part; Hal::events(part) lists its events.
  struct HybridPart {
    std::string name;       // "adl_grt"
    std::string perf_pmu;   // "cpu_atom", "cpu_core"; "" when two parts share a core type
    unsigned core_type = 0; // CPUID.1AH:EAX[31:24]: 0x20 Atom, 0x40 Core
    std::string shown;      // "cpu/adl-grt.toml (Alder Lake, Gracemont E-core)"
    bool own = false;       // the core type of the CPU read: Hal::events() and Hal::pmu() are its
  };
  std::vector<HybridPart> hybrid;
};

struct Candidate {
  std::string backend;
  Match match;
};

namespace detail { class HalImpl; }

class PMC_API Hal {
 public:
  // Reads the CPU (config.cpu), finds the plugins, loads the backends whose probe table can
  // match (or the one config.backend names), probes them and chooses one. A plugin that fails
  // to load is reported in plugins(), not thrown, unless it is the one config.backend names.
  // The chosen backend's events and PMU are read at their first use (pmu(), events(),
  // encode(), session()), which throws an events file's error; config.events_path is read here.
  // A backend whose probe an earlier open kept (the parse cache) is loaded at that first use too.
  static Hal open(const Config& config);
  Hal(Hal&&) noexcept;
  Hal& operator=(Hal&&) noexcept;
  ~Hal();

  [[nodiscard]] const Config& config() const;
  // The CPU config.cpu names. Natively on x86, Hal::open reads it without the brand string (three
  // CPUID leaves, each a trap to the hypervisor in a virtual machine): the first call adds it.
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
  // A hybrid part's events and PMU, by its name or Linux perf's (BackendInfo::hybrid); throws
  // not_found naming the parts there are.
  [[nodiscard]] const EventCatalog& events(std::string_view part) const;
  [[nodiscard]] const PmuInfo& pmu(std::string_view part) const;
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

#endif  // C++20
