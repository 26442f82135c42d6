// Events: the parsed event string (EventSpec), the event catalog loaded from TOML (EventDef,
// UnitMask, EventCatalog) and register field layouts declared as data (RegisterFormat).
#pragma once

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// ---------------------------------------------------------------------------------------------
// Event strings, in the libpfm4 syntax PAPI users write:
//   [PMU::]EVENT[:UMASK...][:u[=0|1]][:k[=0|1]][:e=0|1][:i=0|1][:c=N][:name=value...]
// or a generic name from Linux perf (instructions, cycles, branch-misses, ...).
// Modifiers are kept by name; which ones an event accepts is checked when it is encoded.
struct EventModifier {
  std::string name;            // "u", "k", "e", "i", "c", "period", ...
  std::optional<std::uint64_t> value;  // nullopt for a bare flag such as ":u"
  std::size_t column = 0;      // 1-based column in the original string, for messages
};

struct PMC_API EventSpec {
  std::string text;                   // the string as given
  std::string pmu;                    // "p6" in "p6::INST_RETIRED", else empty
  std::string name;                   // event or generic name
  std::vector<std::string> unit_masks;
  std::vector<std::size_t> unit_mask_columns;
  std::vector<EventModifier> modifiers;

  [[nodiscard]] const EventModifier* modifier(std::string_view n) const;
};

// Throws pmc::Error(parse) with a message that quotes the string and names the column.
PMC_API EventSpec parse_event(std::string_view text);

// Formats "event 'TEXT', column N: WHAT" for errors about a part of an event string.
PMC_API std::string event_error(const EventSpec& spec, std::size_t column, std::string_view what);

// ---------------------------------------------------------------------------------------------
// Register layouts as data: "event = 0-7" means bits 7:0 of the register hold the event code.
struct BitField {
  unsigned low = 0;
  unsigned width = 0;  // 0 = absent
  [[nodiscard]] std::uint64_t mask() const {
    return width >= 64 ? ~0ull : (((1ull << width) - 1) << low);
  }
  [[nodiscard]] std::uint64_t max_value() const { return width >= 64 ? ~0ull : (1ull << width) - 1; }
  [[nodiscard]] bool present() const { return width != 0; }
};

// Parses "7", "0-7" or "24-31" (low-high, inclusive). Throws invalid_argument.
PMC_API BitField parse_bit_range(std::string_view text);

class PMC_API RegisterFormat {
 public:
  void add(std::string name, BitField field);
  [[nodiscard]] std::optional<BitField> field(std::string_view name) const;
  [[nodiscard]] const std::map<std::string, BitField, std::less<>>& fields() const { return fields_; }
  // Places value into the named field of reg. Throws attribute_value when the value does not
  // fit ("cmask 300 does not fit field 24-31 (8 bits)"), not_supported when the field is absent.
  void set(std::uint64_t& reg, std::string_view name, std::uint64_t value) const;
  [[nodiscard]] std::uint64_t get(std::uint64_t reg, std::string_view name) const;

 private:
  std::map<std::string, BitField, std::less<>> fields_;
};

// ---------------------------------------------------------------------------------------------
// The catalog: what an events TOML file declares (see docs/event-format.md).
struct PMC_API SourceRef {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  [[nodiscard]] std::string str() const;  // "file:line:column"
};

struct UnitMask {
  std::string name;
  std::uint64_t value = 0;
  std::string description;
  std::string generic;         // a generic name meaning "this event with this unit mask"
};

struct UnitMaskGroup {
  std::string name;
  bool combinable = false;     // bits may be OR'ed together (MESI); otherwise pick one
  std::vector<UnitMask> masks;
  std::vector<std::string> default_masks;  // applied when the string names none
};

struct EventDef {
  std::string name;
  std::uint64_t code = 0;
  std::string description;
  std::string generic;                 // generic name this event implements (default umask)
  std::vector<unsigned> counters;      // allowed general counters; empty = all
  std::optional<unsigned> fixed;       // the fixed counter that can count it, if any
  std::vector<std::string> modifiers;  // accepted modifiers ("u", "k", "e", "i", "c", ...)
  std::vector<std::string> cpus;       // cpu tags it applies to; empty = every CPU of the file
  std::optional<UnitMaskGroup> unit_masks;
  std::optional<std::uint64_t> fixed_umask;  // a unit mask value that is always applied
  std::string reference;               // where the fact comes from (manual, table)
  SourceRef source;                    // where it was defined
  std::vector<std::string> aliases;    // other names find() accepts (the SDM's spelling, ...)
};

// A CPU tag names a model family inside one backend ("piii"); the backend's probe decides
// which tag a CPU has, events list the tags they apply to.
struct CpuTag {
  std::string name;
  std::string description;
};

namespace detail { struct CatalogLoader; }

class PMC_API EventCatalog {
 public:
  // Loads an events file (or every *.toml in a directory, in name order). Throws pmc::Error
  // with file:line:column for malformed TOML, unknown keys, wrong types, out-of-range values.
  // Events of a file for another backend are ignored. One file may define a name more than
  // once only with disjoint, non-empty `cpus` lists (one definition per CPU). A later file's
  // definition replaces the earlier definitions of its name for the CPUs it applies to (all
  // when it has no `cpus`); an earlier one keeps the CPUs the later does not name. Each
  // definition remembers which file it came from.
  void load(const std::filesystem::path& path, std::string_view backend);
  void load_string(std::string_view toml, const std::string& name, std::string_view backend);

  // Case-insensitive lookup among the events that apply to the CPU tag (all when empty): names
  // first, then aliases. A name has at most one definition per tag; with an empty tag the
  // first definition in catalog order is found.
  [[nodiscard]] const EventDef* find(std::string_view name, std::string_view tag = {}) const;
  // The event a generic name stands for, and the unit masks it implies (empty = defaults).
  [[nodiscard]] const EventDef* find_generic(std::string_view generic, std::string_view tag,
                                             std::vector<std::string>* masks) const;
  [[nodiscard]] const std::vector<EventDef>& events() const { return events_; }
  [[nodiscard]] const RegisterFormat& format() const { return format_; }
  [[nodiscard]] const std::vector<CpuTag>& cpu_tags() const { return cpus_; }
  [[nodiscard]] const std::vector<std::string>& default_modifiers() const { return default_modifiers_; }
  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }
  // Events that apply to a CPU with the given tag (every definition when tag is empty, so a
  // name defined per CPU appears once per definition).
  [[nodiscard]] std::vector<const EventDef*> for_cpu(std::string_view tag) const;
  // Checks the tables themselves (duplicate codes, overlapping combinable bits, defaults that
  // name no mask, counters out of range). Returns one message per defect.
  [[nodiscard]] std::vector<std::string> validate(unsigned general_counters) const;

 private:
  friend struct detail::CatalogLoader;
  std::vector<EventDef> events_;
  RegisterFormat format_;
  std::vector<CpuTag> cpus_;
  std::vector<std::string> files_;
  std::vector<std::string> default_modifiers_;
};

}  // namespace pmc
