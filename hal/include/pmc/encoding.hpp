// Encoding: what an event string gives on one PMU.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/encoding.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pmc {

struct EventDef;

// The result of encoding one event string. Pure: the same input gives the same bits.
struct Encoding {
  std::string event;                  // the string as given
  std::string canonical;              // "p6::L2_LD:M:E:S:I:u=1:k=1:e=0:i=0:c=0"
  std::string name;                   // the catalog event's name ("INST_RETIRED"); "" for raw events
  std::string generic;                // the perf generic name it implements ("instructions"), or ""
  std::uint64_t config = 0;           // event-select value as the driver programs it
  std::vector<unsigned> counters;     // general counters allowed (never empty unless fixed-only)
  std::optional<unsigned> fixed;      // fixed counter that can count it, if any
  std::uint64_t fixed_control = 0;    // control bits for the fixed counter, if any
  bool interrupt = false;             // overflow interrupt requested
  // Sampling: a counter-overflow interrupt every `period` events (the event's `period=N`), which
  // the driver reloads the counter for and whose interrupted PC its handler records
  // (docs/profiling.md, "Sampling on each backend"); 0: counting only.
  std::uint64_t period = 0;
  // Sampling at a frequency (the event's `freq=N`): about N interrupts a second, the driver
  // adjusting the period as it goes (perf's freq mode; docs/profiling.md); 0: none. An event has
  // a period or a frequency, not both.
  std::uint64_t frequency = 0;
  unsigned precise = 0;               // :p, :pp, :ppp on a sampling event: perf's precise_ip (0-3)
  bool merge = false;                 // needs an even counter and its odd neighbour
  std::uint64_t granularity = 1;      // counts are multiples of this (interrupt-counting PMUs)
  std::string extra;                  // extra register name ("offcore_rsp"), "" when none
  std::uint64_t extra_value = 0;      // its value: perf_event_attr.config1 under perf access
  std::vector<std::uint32_t> extra_msrs;  // MSRs that can hold it (msr access programs one)
  bool exclusive = false;             // must count alone
  const EventDef* def = nullptr;      // catalog entry (valid while the catalog lives)
};

}  // namespace pmc

#endif  // C++20
