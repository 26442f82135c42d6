// Plugin SDK: perf's raw events, parsed in one place for every backend (docs/event-format.md,
// "Raw events and perf's PMU syntax"):
//  - "rNNN": NNN is the config value in hex, perf's meaning: the bits of the event select
//    (r01C2 is umask 01, event C2 on Intel; r1000000C0 event 1C0 on AMD);
//  - "PMU/term=value,.../modifiers": the PMU's perf format terms ([perf_format] of the data,
//    RegisterFormat::terms()) place their values into a config value; config=N gives all of it.
// Either config value is read back through the register format ([format]): `event` and `umask`
// are the event's code and unit mask, a field a modifier sets (edge, inv, cmask, any) becomes
// that modifier's value, so the string's own modifiers and the backend's rules apply as to a
// catalog event, and the encoding equals the catalog event's of the same bits.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/raw_event.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/catalog.hpp>
#include <pmc/encoding.hpp>
#include <pmc/event_spec.hpp>
#include <pmc/export.hpp>
#include <pmc/pmu.hpp>

#include <cstdint>
#include <optional>

namespace pmc {

struct RawEvent {
  std::uint64_t config = 0;  // the config value: rNNN's, or what the terms wrote
  EventDef def;              // code, unit mask, other fields; modifier fields as its defaults
  EventSpec spec;            // the string's unit masks and modifiers, named def.name ("r01C2")
};

// The value of an "rNNN" name (r and 1 to 16 hex digits), nullopt for any other name. Throws
// invalid_argument for more than 16 digits.
PMC_API std::optional<std::uint64_t> raw_config(const EventSpec& spec);

// The raw event a string stands for on this PMU: nullopt when it is neither form, or an rNNN
// that names a catalog event or carries another PMU's prefix (encode_with_catalog answers
// those). Throws pmc::Error naming the fault: an unknown PMU (not_found), a term the PMU does
// not have (attribute, listing its terms), a value too wide for its term (attribute_value),
// privilege bits in the value (invalid_argument: they are :u and :k, as in perf), a driver's
// field or bits no field holds (invalid_argument), a modifier that contradicts the value's bits
// (feature_combination).
PMC_API std::optional<RawEvent> raw_event(const EventSpec& spec, const EventCatalog& catalog, const PmuInfo& pmu);

// Encodes a raw event like a catalog event (encode_event); `event` is the string as given.
PMC_API Encoding encode_raw(const EventSpec& given, const RawEvent& raw, const EventCatalog& catalog,
                            const PmuInfo& pmu);

}  // namespace pmc

#endif  // C++20
