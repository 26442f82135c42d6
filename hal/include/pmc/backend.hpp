// The plugin SDK: what a backend (one PMU family) implements, and the versioned descriptor a
// backend library exports. A backend is mostly data (its events TOML, its register format);
// the code is probe rules, the counter geometry and the driver quirks.
#pragma once

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/register_file.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// Verdict of Backend::probe: score 0 means "not this CPU"; the reason is always filled, match
// or not ("GenuineIntel family 6 model 8: Pentium III (Coppermine)").
struct Match {
  int score = 0;
  std::string reason;
  std::string cpu_tag;  // the catalog tag for this CPU ("piii"), when matched
  [[nodiscard]] bool matched() const { return score > 0; }
};

enum class CounterKind { general, fixed };

struct CounterInfo {
  CounterKind kind = CounterKind::general;
  unsigned index = 0;
  unsigned width = 0;              // bits implemented
  std::uint32_t control_msr = 0;   // event select (general) or the fixed control register
  std::uint32_t counter_msr = 0;
};

struct PMC_API PmuInfo {
  std::string name;                 // "p6"
  std::string description;          // "Intel P6 (Pentium III, Katmai)"
  std::string cpu_tag;              // tag used to filter the catalog
  std::string device_model;         // sim/ device model that behaves like this PMU
  std::vector<CounterInfo> counters;
  std::vector<std::uint32_t> registers;  // every MSR the driver may touch (msr allowlist)
  std::string cpu;                  // describe() of the CPU this geometry was made for
  // Facts from CPUID a backend's pmu() records for its own encode() (which sees no CpuInfo),
  // e.g. archperf's "arch.ebx" availability vector. Keys are the backend's own.
  std::map<std::string, std::uint64_t, std::less<>> properties;
  [[nodiscard]] unsigned general_count() const;
  [[nodiscard]] const CounterInfo* general(unsigned index) const;
  [[nodiscard]] const CounterInfo* fixed(unsigned index) const;
};

// The result of encoding one event string. Pure: the same input gives the same bits.
struct Encoding {
  std::string event;                  // the string as given
  std::string canonical;              // "p6::L2_LD:M:E:S:I:u=1:k=1:e=0:i=0:c=0"
  std::uint64_t config = 0;           // event-select value as the driver programs it
  std::vector<unsigned> counters;     // general counters allowed (never empty unless fixed-only)
  std::optional<unsigned> fixed;      // fixed counter that can count it, if any
  std::uint64_t fixed_control = 0;    // control bits for the fixed counter, if any
  bool interrupt = false;             // overflow interrupt requested
  std::uint64_t granularity = 1;      // counts are multiples of this (interrupt-counting PMUs)
  const EventDef* def = nullptr;      // catalog entry (valid while the catalog lives)
};

// Which counter an event landed on in a session.
struct Assignment {
  const CounterInfo* counter = nullptr;
  const Encoding* encoding = nullptr;
};

// Encodes with the libpfm4 modifier meanings (u -> field "usr", k -> "os", e -> "edge",
// i -> "inv", c -> "cmask") over the catalog's register format. Backends call it and then add
// their own checks; it is the default Backend::encode.
PMC_API Encoding encode_with_catalog(const EventSpec& spec, const EventCatalog& catalog,
                                     const PmuInfo& pmu);

class PMC_API Backend {
 public:
  virtual ~Backend();

  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view description() const = 0;
  // Never executes CPUID; decides from the decoded CpuInfo only.
  [[nodiscard]] virtual Match probe(const CpuInfo& cpu) const = 0;
  // Counter geometry and register addresses for a CPU this backend matched.
  [[nodiscard]] virtual PmuInfo pmu(const CpuInfo& cpu) const = 0;
  // File name of its built-in events table in the events directory ("p6.toml").
  [[nodiscard]] virtual std::string events_file() const;

  [[nodiscard]] virtual Encoding encode(const EventSpec& spec, const EventCatalog& catalog,
                                        const PmuInfo& pmu) const;

  // Driver. program() writes one counter's selection while the PMU is stopped; start() and
  // stop() switch counting on and off for all assigned counters at once; read/write access a
  // counter's raw value (width bits).
  virtual void program(RegisterFile& regs, const PmuInfo& pmu, const std::vector<Assignment>& set) const = 0;
  virtual void start(RegisterFile& regs, const PmuInfo& pmu, const std::vector<Assignment>& set) const = 0;
  virtual void stop(RegisterFile& regs, const PmuInfo& pmu, const std::vector<Assignment>& set) const = 0;
  [[nodiscard]] virtual std::uint64_t read_counter(RegisterFile& regs, const CounterInfo& c) const;
  virtual void write_counter(RegisterFile& regs, const CounterInfo& c, std::uint64_t value) const;
};

// ---------------------------------------------------------------------------------------------
// The descriptor a backend library exports (C layout), checked before anything else is called.
// Version rule (as FreeBSD's PMC_VERSION): MMmmpppp; a different major is incompatible, a
// newer minor on the host is fine, struct_size must be at least what the host knows.
inline constexpr std::uint32_t kBackendAbiMajor = 1;
inline constexpr std::uint32_t kBackendAbiVersion = (kBackendAbiMajor << 24) | (2u << 16) | 0u;  // 1.2: ProfilingDriver

extern "C" {
struct pmc_backend_descriptor {
  std::uint32_t abi_version;
  std::uint32_t struct_size;
  const char* name;
  // Creates the backend; returns nullptr on failure. It should not throw; the host catches
  // whatever it throws (while the library is still loaded) and reports the plugin as broken.
  pmc::Backend* (*create)();
};
}

// The alias name every backend exports its descriptor under.
#define PMC_BACKEND_SYMBOL "pmc_backend_v1"

}  // namespace pmc
