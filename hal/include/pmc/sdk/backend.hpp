// Plugin SDK: what a backend (the driver of one PMU family) implements, and the versioned
// descriptor its library exports. A backend is mostly data: its events TOML declares the
// register fields, the modifiers, the counters and registers and the probe table
// (docs/event-format.md); every operation below has a default that works from that data, and a
// backend overrides only its quirks. docs/writing-a-backend.md walks through one.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/backend.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>
#include <pmc/sdk/abi.hpp>
#include <pmc/sdk/register_file.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pmc {

class ProfilingDriver;

// What every operation after the probe receives: the decoded CPU, the PMU the backend made
// for it, and its catalog (events, register format, modifiers, the [pmu] description).
struct PmuContext {
  const CpuInfo& cpu;
  const PmuInfo& pmu;
  const EventCatalog& catalog;
};

// Which counter an event landed on in a session.
struct Assignment {
  const CounterInfo* counter = nullptr;
  const Encoding* encoding = nullptr;
};

// The probe table of a backend's data ([[probe]]) applied to a CPU: the first matching rule
// decides; no rule matching is a refusal naming the backend.
PMC_API Match probe_table(const CpuInfo& cpu, const EventCatalog& data);
// The counters and registers the data declares ([[pmu.counters]], [[pmu.registers]]) for a CPU
// with the given tag: groups and registers whose `cpus` exclude it are left out.
PMC_API PmuInfo pmu_from_data(const CpuInfo& cpu, const EventCatalog& data, std::string_view tag);
// Encodes with the modifiers the catalog declares (or the built-in ones: u -> usr, k -> os,
// e -> edge, i -> inv, c -> cmask, t -> any) over its register format, and refuses an encoding
// that sets a bit of pmu.reserved or a driver field. The default Backend::encode.
PMC_API Encoding encode_with_catalog(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu);
// The same for an event definition the backend made itself (a raw event such as "r16"): the
// string's unit masks and modifiers against `def`, whose name is the canonical one. The result's
// `def` is null.
PMC_API Encoding encode_event(const EventSpec& spec, const EventDef& def, const EventCatalog& catalog,
                              const PmuInfo& pmu);

class PMC_API Backend {
 public:
  virtual ~Backend();

  // Hal::open calls probe() for every backend with its data file loaded (the probe table, the
  // [pmu] section), and pmu() for the chosen one. Neither executes CPUID, and probe() never
  // throws (a throw disqualifies the backend, with the message as the reason). Defaults:
  // probe_table() and pmu_from_data().
  [[nodiscard]] virtual Match probe(const CpuInfo& cpu, const EventCatalog& data) const;
  [[nodiscard]] virtual PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match& verdict) const;

  // Event string -> register value. Default: encode_with_catalog(spec, ctx.catalog, ctx.pmu).
  [[nodiscard]] virtual Encoding encode(const EventSpec& spec, const PmuContext& ctx) const;

  // The driver. program() writes the selection of every counter while the PMU is stopped (a
  // counter no event uses gets 0); start() and stop() switch counting on and off for all
  // assigned counters at once; read_counter() and write_counter() access a counter's raw value
  // (width bits). The defaults drive a PMU whose counters each have an enable field "en" in
  // their control register (or, without one, count from the moment the selection is written):
  //  - program: the selection without "en" (without an "en" field: 0) to each general counter;
  //  - start: the selection with "en" (without one: the selection), counters in index order;
  //  - stop: the selection without "en" (without one: 0), counters in index order;
  // a counter with a part of a shared control register (CounterInfo::control_bits) is written
  // by read-modify-write of that part only. Fixed counters need the backend's own code.
  virtual void program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const;
  virtual void start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const;
  virtual void stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const;
  [[nodiscard]] virtual std::uint64_t read_counter(RegisterFile& regs, const PmuContext& ctx,
                                                   const CounterInfo& counter) const;
  virtual void write_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& counter,
                             std::uint64_t value) const;

  // Optional capability: a driver that samples at counter interrupts (pmc/sdk/profiling.hpp).
  // Declared in the descriptor too (kBackendProfiles); nullptr when the backend has none.
  [[nodiscard]] virtual const ProfilingDriver* profiling() const noexcept;

 protected:
  // Writes one counter's part of its control register (read-modify-write when it has only a part).
  static void write_control(RegisterFile& regs, const CounterInfo& counter, std::uint64_t value);
};

// Capability flags of a backend descriptor.
inline constexpr std::uint32_t kBackendProfiles = 1u << 0;  // Backend::profiling() is non-null

extern "C" {
// The descriptor a backend library exports (C layout), checked before anything else is called.
struct pmc_backend_descriptor {
  std::uint32_t abi_version;   // kAbiVersion when built
  std::uint32_t struct_size;   // sizeof(pmc_backend_descriptor) when built
  const char* name;            // "p6": also the name of its data file, <name>.toml
  std::uint32_t capabilities;  // kBackend* flags
  // Creates the backend. Must not throw: on failure it returns nullptr and writes a one-line
  // reason into error (error_size bytes, NUL-terminated).
  pmc::Backend* (*create)(char* error, std::size_t error_size) noexcept;
};
}

// The symbol a backend library exports its descriptor under.
#define PMC_BACKEND_SYMBOL "pmc_backend_v2"

// In exactly one source file of a backend library, at global scope:
//   PMC_EXPORT_BACKEND(mybackend::descriptor);
#define PMC_EXPORT_BACKEND(qualified_descriptor) \
  PMC_DETAIL_EXPORT_DESCRIPTOR(pmc_backend_v2, qualified_descriptor)

// A factory for the descriptor: constructs T, reporting any exception as the error.
template <class T>
pmc::Backend* make_backend(char* error, std::size_t error_size) noexcept {
  try {
    return new T();
  } catch (const std::exception& e) {
    if (error && error_size) {
      std::size_t n = 0;
      for (const char* p = e.what(); *p && n + 1 < error_size; ++p) error[n++] = *p;
      error[n] = '\0';
    }
  } catch (...) {
    if (error && error_size) {
      const char* what = "unknown exception";
      std::size_t n = 0;
      for (const char* p = what; *p && n + 1 < error_size; ++p) error[n++] = *p;
      error[n] = '\0';
    }
  }
  return nullptr;
}

}  // namespace pmc

#endif  // C++20
