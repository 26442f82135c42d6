// The archperf backend's shared parts (backends/archperf/):
//   geometry.cpp  the PMU from CPUID alone, for probe(), pmu() and encode();
//   encode.cpp    event strings to IA32_PERFEVTSELx / IA32_FIXED_CTR_CTRL values;
//   archperf.cpp  the backend (probe, pmu, the driver), with the quirks listed at its top.
// Facts: docs/hardware/archperf.md.
#pragma once

#include <pmc/cpu.hpp>
#include <pmc/event.hpp>
#include <pmc/sdk/backend.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pmc::archperf {

inline constexpr unsigned kMaxGeneral = 32;  // PERF_GLOBAL_CTRL has enable bits 31:0 for them
// IA32_FIXED_CTR0..6 (0x309..0x30F): Intel numbers fixed counters up to 6 (4-6 on the newest Atom
// cores: TOPDOWN_BAD_SPECULATION.ALL, TOPDOWN_FE_BOUND.ALL, TOPDOWN_RETIRING.ALL in its event
// lists); CPUID says which of them a CPU has, and IA32_FIXED_CTR_CTRL holds 4 bits for each.
inline constexpr unsigned kMaxFixed = 7;

inline bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

enum class AnyThread { reserved, supported, deprecated };

// ---------------------------------------------------------------------------------------------
// The geometry, from CPUID alone.
struct Geometry {
  unsigned version = 0;         // as reported
  std::vector<unsigned> general;
  unsigned general_width = 0;
  std::vector<unsigned> fixed;
  unsigned fixed_width = 0;
  std::uint32_t ebx = 0;
  unsigned ebx_length = 0;
  AnyThread any = AnyThread::reserved;
  bool pdcm = false;            // CPUID.1:ECX[15]: IA32_PERF_CAPABILITIES exists
  // The event select's extensions (CPUID leaf 23H, where CPUID.(7,1):EAX[8] says it exists):
  bool ext_leaf = false;        // leaf 23H is enumerated, so the two bits below are known
  bool umask2 = false;          // 23H.0:EBX[0]: UMASK2, IA32_PERFEVTSELx bits 47:40
  bool eq = false;              // 23H.0:EBX[1]: EQ, IA32_PERFEVTSELx bit 36
  std::string hybrid;           // "", or a short label for the description
  std::vector<std::string> notes;
  std::string refusal;          // why the probe does not match; empty when it does
};

Geometry geometry(const CpuInfo& cpu);
// "4 general counters x 48 bits, 3 fixed (0,1,2) x 48 bits".
std::string summary(const Geometry& g);

// ---------------------------------------------------------------------------------------------
// What encode() needs from CPUID (see the comment at the top of archperf.cpp).
struct Facts {
  unsigned version = 3;
  std::uint32_t ebx = 0;
  unsigned ebx_length = 32;
  AnyThread any = AnyThread::supported;
  bool ext_leaf = false;  // Geometry's: CPUID leaf 23H says whether UMASK2 and EQ exist
  bool umask2 = false;
  bool eq = false;
  std::string cpu;  // for messages
};

// The facts of the CPU in the context (a CPU without leaf 0AH, archperf forced onto it, is the
// smallest architectural PMU: version 1, the seven events).
Facts facts_of(const CpuInfo& cpu);

// The IA32_PERFEVTSELx bits encode() and the driver use, from archperf.toml's [format] (fact
// sheet section 3): the data declares the layout, the code does not repeat it.
struct SelectBits {
  std::uint64_t usr = 0, os = 0, edge = 0, pc = 0, intr = 0, any = 0, en = 0, inv = 0, cmask = 0;
  std::uint64_t umask2 = 0, eq = 0;  // 0 when the [format] has no such field
};
// Throws not_supported naming a field the catalog's [format] lacks.
SelectBits select_bits(const EventCatalog& catalog);

// Backend::encode for archperf (encode.cpp): the catalog or a raw event (rNNN, cpu/.../), checked against
// the CPU's EBX vector and AnyThread state, with EN set.
Encoding encode_event_for_cpu(const EventSpec& given, const PmuContext& ctx);

// ---------------------------------------------------------------------------------------------
// Top-down level 1 and 2 in hardware (topdown.cpp; docs/hardware/archperf.md section 12):
// PERF_METRICS (MSR 329H) holds one byte per metric, a fraction of the slots fixed counter 3
// counts. Each byte is a pseudo counter, fixed index 16 + byte as Linux numbers them
// (INTEL_PMC_IDX_METRIC_BASE), which the scheduler places like any fixed counter; the driver
// runs them all through fixed counter 3, GLOBAL_CTRL bit 48 and MSR 329H.
inline constexpr unsigned kMetricBase = 16;  // pseudo fixed index of PERF_METRICS byte 0
inline constexpr unsigned kMetricBytes = 8;
inline constexpr unsigned kSlotsCounter = 3;  // IA32_FIXED_CTR3, TOPDOWN.SLOTS
inline constexpr std::uint32_t kPerfMetrics = 0x329;
inline constexpr unsigned kEnPerfMetrics = 48;  // IA32_PERF_GLOBAL_CTRL / STATUS bit

inline bool is_metric(const CounterInfo& c) {
  return c.kind == CounterKind::fixed && c.index >= kMetricBase && c.index < kMetricBase + kMetricBytes;
}
// The pseudo counters of the PERF_METRICS events the CPU's catalog holds (cpu/topdown-l1.toml,
// topdown-l2.toml load on the CPUs that have them), when fixed counter 3 is present; adds MSR
// 329H to the registers the driver may touch.
void add_metric_counters(PmuInfo& pmu, const EventCatalog& data);
// What a PERF_METRICS event reads: FIXED_CTR3 x its byte / 0xFF (Linux's rule, truncated).
std::uint64_t read_metric(RegisterFile& regs, const PmuInfo& pmu, const CounterInfo& c);
// Fixed counter 3's field of IA32_FIXED_CTR_CTRL for a set (the slots event's and the metric
// events' controls, which must agree), or nullopt when the set uses neither; throws
// invalid_argument naming two events whose privilege filters differ.
std::optional<std::uint64_t> slots_control(std::span<const Assignment> set);

}  // namespace pmc::archperf
