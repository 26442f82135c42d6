// Reading: one event's count, with the event's identity.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/reading.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/pmu.hpp>

#include <cstdint>
#include <string>

namespace pmc {

struct EventDef;

// One event's count. It carries the event's identity, so a reader need not re-parse strings:
// `name` is the catalog event (or HAL event) it resolved to, `generic` the Linux perf generic
// name it implements, if any ("instructions" for p6's INST_RETIRED), and `unit` what it counts.
struct Reading {
  std::string event;          // as added
  std::string canonical;
  std::string name;           // "INST_RETIRED", "task-clock"; "" for raw events
  std::string generic;        // "instructions", "cycles", ...; "" when it implements none
  bool hal = false;           // a HAL event (tsc, the OS software events), not the PMU's
  // The catalog entry it resolved to (description, counters, the file's cpu tags), valid while
  // the Hal's catalog lives; null for raw events and HAL events.
  const EventDef* def = nullptr;
  std::uint64_t value = 0;    // 64-bit, wrap-corrected over the hardware width
  // ns of wall-clock time the session was counting, and of it the time the event was on a
  // counter; PMU events on access "sim": cycles of the simulated workload instead (the device
  // has no clock)
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  bool extrapolated = false;
  std::uint64_t granularity = 1;   // counts are multiples of this (interrupt-counting PMUs)
  std::string unit;                // "" for plain counts
  CounterKind counter_kind = CounterKind::general;
  unsigned counter = 0;            // where it was scheduled (backend events only)
  int cpu = -1;                    // Scope::each_cpu(): the CPU this reading is for; -1 otherwise
};

}  // namespace pmc

#endif  // C++20
