// The event a string names (docs/event-format.md, "Names users type"): a catalog name or alias,
// libpfm4's EVENT:UMASK spelling of an event named EVENT.UMASK, perf's event.umask spelling of
// event EVENT with unit mask UMASK, or a generic name. The encoder's first step.
#pragma once

#include <pmc/catalog.hpp>
#include <pmc/event_spec.hpp>

#include <cstddef>
#include <string_view>

namespace pmc::detail {

struct ResolvedName {
  const EventDef* def = nullptr;       // nullptr: the string names no event for this CPU
  bool by_generic = false;             // a generic name: generic_mask is the unit mask it implies
  const UnitMask* generic_mask = nullptr;
  std::size_t skip = 0;                // unit masks of the string the name consumed (EVENT:UMASK)
  std::string_view lead_mask;          // a unit mask the name carried (event.umask), "" when none
  std::size_t lead_column = 0;         //   and its column in the string
};

// Tries, in order: spec.name as a name or alias; with a first unit mask that is not one of that
// event's (nor a flag modifier it takes), NAME.UMASK as a name; a dotted name as an event and
// one of its unit masks (split at the last dot); spec.name as a generic name (when `generic`).
// Allocates nothing.
ResolvedName resolve_event_name(const EventSpec& spec, const EventCatalog& catalog, std::string_view tag,
                                bool generic = true);

}  // namespace pmc::detail
