// The event catalog an events TOML file declares, with the PMU's shape and probe table (docs/event-format.md).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/catalog.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>
#include <pmc/register_format.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

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
  std::map<std::string, std::uint64_t, std::less<>> defaults;  // modifier values unless given
  std::vector<std::string> cpus;       // cpu tags it applies to; empty = every CPU of the file
  std::optional<UnitMaskGroup> unit_masks;
  std::optional<std::uint64_t> fixed_umask;  // a unit mask value that is always applied
  bool merge = false;                  // needs an even counter and its odd neighbour (merge event)
  std::string reference;               // where the fact comes from (manual, table)
  SourceRef source;                    // where it was defined
  std::vector<std::string> aliases;    // other names find() accepts (the SDM's spelling, ...)
  // Model-specific catalogs (docs/event-format.md, "Events of one model"):
  std::uint64_t umask2 = 0;            // unit-mask extension, written into [format] field umask2
  std::map<std::string, std::uint64_t, std::less<>> set;  // [format] field values always written
  std::string extra;                   // the extra register it needs ([extra.NAME]), "" when none
  std::uint64_t extra_value = 0;       // the value that register holds for it
  std::vector<std::uint32_t> extra_msrs;  // the MSRs of the set it may use; empty = all declared
  std::optional<std::uint64_t> code2;  // the second code of a paired event (offcore response)
  bool fixed_only = false;             // `counters = []` with `fixed`: no general counter can count it
  bool exclusive = false;              // must be the only event counting (Intel "taken alone")
  bool deprecated = false;             // listed only when asked for; still encodes
  std::uint64_t period = 0;            // default sampling period; 0 = none given
  unsigned precise = 0;                // precise (PEBS) level, 0-3
  std::string errata;                  // erratum IDs that concern it ("SKL057, SKL058")
  std::string topic;                   // a short category ("cache", "memory", ...)
};

// An extra register an event may need beside its event select ([extra.NAME]): one of a set of
// MSRs holds the value the event gives (offcore response, load latency, frontend).
struct ExtraRegDef {
  std::string name;                    // "offcore_rsp"
  std::vector<std::uint32_t> msrs;     // the MSRs that can hold it (any one of them)
  std::string description;
  SourceRef source;
};

// A CPU tag names a model family inside one backend ("piii"); the backend's probe decides
// which tag a CPU has, events list the tags they apply to.
struct CpuTag {
  std::string name;
  std::string description;
};

// A modifier an events file declares ([modifier.NAME]) or one of the built-in ones (u, k, e,
// i, c, t with libpfm4's meanings; `period` is the backend's own, read by its encode()).
struct ModifierDef {
  enum class Kind {
    flag,    // 0 or 1; a bare ":h" is 1
    value,   // ":c=N", a number up to max
    user,    // the privilege pair: naming one level alone selects just that level, an explicit
    kernel,  //   0 turns a level off, both default to 1 (docs/event-format.md)
  };
  std::string name;
  std::string field;            // the [format] field it sets; empty for backend-read modifiers
  Kind kind = Kind::flag;
  bool inverted = false;        // the field holds 1 - value (flags)
  std::optional<std::uint64_t> max;  // kind value: the largest value (default: the field's)
  std::string description;
  std::string refusal;          // non-empty: this PMU has no such modifier; the reason why
  SourceRef source;
};

// ---------------------------------------------------------------------------------------------
// The PMU's shape as data ([pmu], [[pmu.counters]], [[pmu.registers]], [[probe]]).
enum class CounterKind { general, fixed };

struct CounterGroup {
  CounterKind kind = CounterKind::general;
  unsigned first = 0;                 // index of the group's first counter
  unsigned count = 0;
  unsigned width = 0;
  std::uint32_t control = 0;          // control register of the first counter
  std::uint32_t control_stride = 0;   // address step between counters (0: one shared register)
  std::uint32_t counter = 0;          // counter register of the first counter
  std::uint32_t counter_stride = 1;
  unsigned control_shift = 0;         // counter-relative fields: counter i's part of the control
  unsigned control_shift_stride = 0;  //   register starts at control_shift + i * stride
  unsigned control_bits = 0;          //   and is control_bits wide (0: the whole register)
  std::optional<unsigned> rdpmc;      // RDPMC index of the first counter
  std::vector<std::string> cpus;      // CPUs that have the group; empty = every CPU
};

struct RegisterDecl {
  std::uint32_t address = 0;
  std::string name;
  std::vector<std::string> cpus;      // empty = every CPU
};

// A range of values: family, model or stepping of a probe rule (inclusive).
struct ValueRange {
  unsigned low = 0;
  unsigned high = 0;
};

// One CPUID field a probe rule tests: leaf, subleaf, register (0 EAX .. 3 EDX) and bits.
struct CpuidField {
  std::uint32_t leaf = 0;
  std::uint32_t subleaf = 0;
  unsigned reg = 0;
  unsigned low = 0;
  unsigned width = 1;
  std::string text;                   // as written ("1.edx.23")
};

struct ProbeRule {
  std::vector<std::string> vendors;   // empty = any vendor
  std::vector<ValueRange> families;   // empty = any
  std::vector<ValueRange> models;
  std::vector<ValueRange> steppings;
  std::vector<CpuidField> cpuid_set;   // each must be non-zero
  std::vector<CpuidField> cpuid_clear; // each must be zero
  std::string tag;                    // the cpu tag of a match
  std::string name;                   // the reason text of a match
  std::string refusal;                // non-empty: a match of the rule refuses the CPU
  SourceRef source;
};

struct PmuDescription {
  std::string description;
  std::string model;                  // the device model (model plugin) that simulates it
  int score = 1;                      // probe score of a match
  std::uint64_t reserved = 0;         // bits no encoding may contain
  std::vector<std::string> driver_fields;  // fields the encoder never sets (the driver does)
  std::optional<std::uint64_t> merge_event;
  std::string unmatched;              // the reason when no probe rule matches (optional)
  std::vector<CounterGroup> counters;
  std::vector<RegisterDecl> registers;
  std::vector<ProbeRule> probe;
};

namespace detail {
struct CatalogLoader;
struct CatalogCache;
struct CatalogState;
struct EncodeTables;
}  // namespace detail

class PMC_API EventCatalog {
 public:
  // A copy of a catalog restored from the parse cache shares the cache file's events with the
  // original and decodes them on its own. Moves are noexcept: catalogs move in vectors.
  EventCatalog();
  EventCatalog(const EventCatalog& other);
  EventCatalog& operator=(const EventCatalog& other);
  EventCatalog(EventCatalog&& other) noexcept;
  EventCatalog& operator=(EventCatalog&& other) noexcept;
  ~EventCatalog();

  // Loads an events file (or every *.toml in a directory, in name order). Throws pmc::Error
  // with file:line:column for malformed TOML, unknown keys, wrong types, out-of-range values.
  // Events of a file for another backend are ignored. One file may define a name more than
  // once only with disjoint, non-empty `cpus` lists (one definition per CPU). A later file's definition replaces the earlier definitions of its name for
  // the CPUs it applies to (all when it has no `cpus`); an earlier one keeps the CPUs the later
  // does not name. Each definition remembers which file it came from. Files unchanged since a
  // load that began as this one did are not parsed again: the parse cache restores what that load
  // gave (docs/performance.md).
  void load(const std::filesystem::path& path, std::string_view backend);
  void load_string(std::string_view toml, const std::string& name, std::string_view backend);

  // Case-insensitive lookup among the events that apply to the CPU tag (all when empty): names
  // first, then aliases. With a tag, the first definition that applies; with an empty tag the
  // first definition in catalog order. Hashed: it costs the same for 10 events or 2,000, and
  // allocates nothing. (A catalog restored from the parse cache is not decoded for its first
  // lookups: they read the cache file's name table and decode the one event found.)
  [[nodiscard]] const EventDef* find(std::string_view name, std::string_view tag = {}) const;
  // The event a generic name stands for, and the unit masks it implies (empty = defaults).
  [[nodiscard]] const EventDef* find_generic(std::string_view generic, std::string_view tag,
                                             std::vector<std::string>* masks) const;
  // The same without building the list: the unit mask a generic name implies, or nullptr (the
  // event's defaults).
  [[nodiscard]] const EventDef* find_generic_mask(std::string_view generic, std::string_view tag,
                                                  const UnitMask** mask) const;
  // The events are decoded when first asked for (by this or the lookups below): a catalog
  // read from the parse cache holds only its PMU description until then (docs/performance.md).
  [[nodiscard]] const std::vector<EventDef>& events() const;
  [[nodiscard]] const RegisterFormat& format() const { return format_; }
  [[nodiscard]] const std::vector<CpuTag>& cpu_tags() const { return cpus_; }
  [[nodiscard]] const std::vector<std::string>& default_modifiers() const { return default_modifiers_; }
  // The modifier of that name: declared by a file, else built in; nullptr when neither.
  [[nodiscard]] const ModifierDef* modifier(std::string_view name) const;
  [[nodiscard]] const std::vector<ModifierDef>& modifiers() const { return modifiers_; }
  // The extra register of that name ([extra.NAME] of any file loaded), or nullptr.
  [[nodiscard]] const ExtraRegDef* extra_reg(std::string_view name) const;
  [[nodiscard]] const std::vector<ExtraRegDef>& extra_regs() const { return extra_regs_; }
  [[nodiscard]] const PmuDescription& pmu() const { return pmu_; }
  [[nodiscard]] const std::string& description() const { return description_; }
  [[nodiscard]] const std::string& backend() const { return backend_; }  // the backend it was loaded for
  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }
  // Events that apply to a CPU with the given tag (every definition when tag is empty, so a
  // name defined per CPU appears once per definition).
  [[nodiscard]] std::vector<const EventDef*> for_cpu(std::string_view tag) const;
  // Checks the tables themselves (duplicate codes, overlapping combinable bits, defaults that
  // name no mask, counters out of range, codes with reserved bits). Returns one message per
  // defect. With a CPU tag, counters are checked only for the events of that CPU (a catalog of
  // several CPUs may name counters only some have).
  [[nodiscard]] std::vector<std::string> validate(unsigned general_counters, std::string_view tag = {}) const;

 private:
  friend struct detail::CatalogLoader;
  friend struct detail::CatalogCache;
  friend struct detail::CatalogState;
  friend struct detail::EncodeTables;
  void materialize() const;  // decodes pending events (thread-safe)
  void build_index() const;  // the lookup tables, after the events changed
  mutable std::vector<EventDef> events_;
  RegisterFormat format_;
  std::vector<CpuTag> cpus_;
  std::vector<std::string> files_;
  std::vector<std::string> default_modifiers_;
  std::vector<ModifierDef> modifiers_;   // declared by files; built-ins are looked up after
  std::vector<ExtraRegDef> extra_regs_;  // [extra.NAME] of the files: by file, by name in a file
  PmuDescription pmu_;
  std::string description_;
  std::string backend_;
  // What the library keeps beside the events and no user sees (hal/src/events/catalog_state.hpp):
  // the lookup tables, the encoder's tables, the parse cache's key and the events it left to
  // decode. Null in a catalog nothing was loaded into (or moved from).
  mutable std::unique_ptr<detail::CatalogState> state_;
};

// The built-in modifiers (u, k, e, i, c, t): what a file that declares none gets.
PMC_API const std::vector<ModifierDef>& builtin_modifiers();

}  // namespace pmc

#endif  // C++20
