// The names users type for an event (event_names.hpp): a catalog's name or alias first, then the
// two spellings other tools use for Intel's and perf's EVENT.UMASK names, then a generic name.
#include "event_names.hpp"
#include "text.hpp"

#include <pmc/catalog.hpp>

#include <algorithm>
#include <array>
#include <cstring>

namespace pmc::detail {

namespace {

bool has_unit_mask(const EventDef& def, std::string_view name) {
  if (!def.unit_masks) return false;
  return std::any_of(def.unit_masks->masks.begin(), def.unit_masks->masks.end(),
                     [&](const UnitMask& m) { return iequal(m.name, name); });
}

// A bare word the encoder reads as a flag modifier of def rather than a unit mask.
bool is_flag_of(const EventCatalog& catalog, const EventDef& def, std::string_view word) {
  if (std::find(def.modifiers.begin(), def.modifiers.end(), word) == def.modifiers.end()) return false;
  const ModifierDef* m = catalog.modifier(word);
  return m && m->refusal.empty() && m->kind == ModifierDef::Kind::flag;
}

}  // namespace

ResolvedName resolve_event_name(const EventSpec& spec, const EventCatalog& catalog, std::string_view tag,
                                bool generic) {
  ResolvedName r;
  r.def = catalog.find(spec.name, tag);
  // libpfm4's EVENT:UMASK for the event Intel names EVENT.UMASK (INST_RETIRED:ANY_P).
  if (!spec.unit_masks.empty()) {
    const std::string_view first = spec.unit_masks.front();
    if (!r.def || (!has_unit_mask(*r.def, first) && !is_flag_of(catalog, *r.def, first))) {
      std::array<char, 256> joined{};
      if (spec.name.size() + 1 + first.size() <= joined.size()) {
        std::memcpy(joined.data(), spec.name.data(), spec.name.size());
        joined[spec.name.size()] = '.';
        std::memcpy(joined.data() + spec.name.size() + 1, first.data(), first.size());
        if (const EventDef* d = catalog.find(std::string_view(joined.data(), spec.name.size() + 1 + first.size()), tag)) {
          r.def = d;
          r.skip = 1;
          return r;
        }
      }
    }
  }
  if (r.def) return r;
  // perf's event.umask (ls_dispatch.ld_dispatch): event `ls_dispatch`, its unit mask `ld_dispatch`.
  if (const std::size_t dot = spec.name.rfind('.'); dot != std::string::npos && dot > 0 && dot + 1 < spec.name.size()) {
    const std::string_view name(spec.name);
    const std::string_view mask = name.substr(dot + 1);
    if (const EventDef* d = catalog.find(name.substr(0, dot), tag); d && has_unit_mask(*d, mask)) {
      r.def = d;
      r.lead_mask = mask;
      r.lead_column = (spec.pmu.empty() ? 1 : spec.pmu.size() + 3) + dot + 1;
      return r;
    }
  }
  if (generic) {
    r.def = catalog.find_generic_mask(spec.name, tag, &r.generic_mask);
    r.by_generic = r.def != nullptr;
  }
  return r;
}

}  // namespace pmc::detail
