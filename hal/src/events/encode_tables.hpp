// What the encoder needs of a catalog, by index instead of by name: the [format] fields it writes
// and, per event, its modifiers resolved to their definitions and fields. Built with the lookup
// tables (EventCatalog::build_index) whenever the catalog changes, shared by its copies (it
// holds indexes, never pointers into one copy).
#pragma once

#include <pmc/event.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace pmc::detail {

struct EncodeTables {
  static constexpr std::uint16_t kUnknown = 0xFFFF;

  // A [format] field, with what placing a value needs worked out once.
  struct Field {
    bool present = false;
    bool contiguous = false;  // one range: a value goes in shifted by `low`
    unsigned low = 0;
    std::uint64_t mask = 0, max = 0;
    BitField bits;
    static Field of(const std::optional<BitField>& f);
  };
  Field event, umask, umask2;  // the [format] fields "event", "umask" and "umask2"
  // Every modifier the catalog knows: the declared ones in order, then the built-ins it does not
  // redeclare; `def` is the index in that list (declared first), `field` the [format] field it
  // sets (absent: none, or not in the format).
  struct Modifier {
    std::uint32_t def = 0;
    Field field;
  };
  std::vector<Modifier> modifiers;
  // Per event of the catalog: its `modifiers` list as indexes into `modifiers` (kUnknown for a
  // name the catalog does not know), from ids[first[i]] on.
  std::vector<std::uint32_t> first;
  std::vector<std::uint16_t> ids;
  std::uint64_t driver_mask = 0;  // the bits of the driver's own fields ([pmu] driver_fields)

  // The catalog's tables (its events decoded first), or nullptr when it has none yet.
  static const EncodeTables* of(const EventCatalog& catalog);
  static void build(const EventCatalog& catalog);
  // The definition behind a Modifier.
  static const ModifierDef& definition(const EventCatalog& catalog, const Modifier& m);
  // The position of `def` in the catalog's events, or npos when it is not one of them.
  static std::size_t position(const EventCatalog& catalog, const EventDef* def);
};

}  // namespace pmc::detail
