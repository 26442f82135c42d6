// Scheduling: which counter each event of a set uses, and which extra register.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/schedule.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/encoding.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>
#include <pmc/register_format.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pmc {

// Assigns each event to a counter it allows, such that no counter is used twice (a bipartite
// matching; an assignment is found whenever one exists). Returns, per event, the index into
// pmu.counters. Throws no_counter naming the events that compete, when none exists; also when
// an exclusive event (Encoding::exclusive) is not alone, or when the events need more values in
// extra registers than the MSRs that hold them (place()).
PMC_API std::vector<std::size_t> schedule(const PmuInfo& pmu, const std::vector<Encoding>& events);

// Where each event of a set counts: its counter, and for an event that needs an extra register
// (Encoding::extra: offcore response, load latency, frontend) the MSR of Encoding::extra_msrs
// that holds its value. One MSR holds one value: events with the same value may share it.
struct Placement {
  std::vector<std::size_t> slots;         // per event: index into pmu.counters
  std::vector<std::uint32_t> extra_msrs;  // per event: the MSR it uses, 0 when it needs none
};
PMC_API Placement place(const PmuInfo& pmu, const std::vector<Encoding>& events);

// The encoding of an event placed on extra MSR `msr` (one of e.extra_msrs): extra_msrs becomes
// {msr}, and an event with a second code (EventDef::code2, Intel's paired offcore events) takes
// it in the event select's `event` field when msr is the second of its MSRs. Throws
// invalid_argument when msr is not one of the event's.
PMC_API Encoding bind_extra_msr(Encoding e, std::uint32_t msr, const RegisterFormat& format);

}  // namespace pmc

#endif  // C++20
