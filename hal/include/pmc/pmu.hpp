// The PMU a backend drives on one CPU: its counters and registers (PmuInfo), and the probe
// verdict that chose it (Match).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/pmu.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/catalog.hpp>
#include <pmc/export.hpp>
#include <pmc/sdk/counting.hpp>  // width_mask

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pmc {

// Verdict of a backend's probe: score 0 means "not this CPU"; the reason is always filled,
// match or not ("GenuineIntel family 6 model 8: Pentium III (Coppermine)").
struct Match {
  int score = 0;
  std::string reason;
  std::string cpu_tag;  // the catalog tag for this CPU ("piii"), when matched
  std::string part;     // what the CPU is, when matched ("Pentium III (Coppermine)")
  [[nodiscard]] bool matched() const { return score > 0; }
};

struct CounterInfo {
  CounterKind kind = CounterKind::general;
  unsigned index = 0;
  unsigned width = 0;              // bits implemented
  std::uint32_t control_msr = 0;   // event select (general) or the fixed control register
  std::uint32_t counter_msr = 0;
  unsigned control_shift = 0;      // where this counter's fields start in control_msr
  unsigned control_bits = 0;       // how wide they are; 0 = the whole register is this counter's
  std::optional<unsigned> rdpmc;   // RDPMC index, when the CPU has RDPMC for it
  // The control register bits that belong to this counter (all 64 when it has the register).
  [[nodiscard]] std::uint64_t control_mask() const {
    if (control_bits == 0 || control_bits >= 64) return ~0ull;
    return ((1ull << control_bits) - 1) << control_shift;
  }
  [[nodiscard]] std::uint64_t width_mask() const { return counting::width_mask(width); }  // bits width-1..0
};

struct PMC_API PmuInfo {
  std::string name;                 // "p6"
  std::string description;          // "Intel P6 (Pentium III, Katmai)"
  std::string cpu_tag;              // tag used to filter the catalog
  std::string device_model;         // the device model (model plugin) that behaves like this PMU
  std::vector<CounterInfo> counters;
  std::vector<std::uint32_t> registers;  // every MSR the driver may touch (msr allowlist)
  std::uint64_t reserved = 0;       // bits no encoding may contain
  std::string cpu;                  // describe() of the CPU this geometry was made for
  [[nodiscard]] unsigned general_count() const;
  [[nodiscard]] const CounterInfo* general(unsigned index) const;
  [[nodiscard]] const CounterInfo* fixed(unsigned index) const;
};

}  // namespace pmc

#endif  // C++20
