// Event strings: what a user types, parsed (EventSpec).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/event_spec.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// Event strings, in the libpfm4 syntax PAPI users write:
//   [PMU::]EVENT[:UMASK...][:u[=0|1]][:k[=0|1]][:e=0|1][:i=0|1][:c=N][:name=value...]
// or a generic name from Linux perf (instructions, cycles, branch-misses, ...), or perf's raw
// forms: rNNN (the config value in hex) and PMU/term=value,.../[modifiers] (cpu/event=0x3c/u).
// perf's combined modifier letters are split: ":uk" is u and k, ":ukppp" u, k and ppp.
// Modifiers are kept by name; which ones an event accepts is checked when it is encoded. A bare
// word other than u, k, e, i and t is kept as a unit mask; the encoder reads it as a flag
// modifier when the backend declares one of that name and the event has no such unit mask.
struct EventModifier {
  std::string name;                    // "u", "k", "e", "i", "c", "period", ...
  std::optional<std::uint64_t> value;  // nullopt for a bare flag such as ":u"
  std::size_t column = 0;              // 1-based column in the original string, for messages
};

struct PMC_API EventSpec {
  std::string text;                   // the string as given
  std::string pmu;                    // "p6" in "p6::INST_RETIRED", else empty
  std::string name;                   // event or generic name
  std::vector<std::string> unit_masks;
  std::vector<std::size_t> unit_mask_columns;
  std::vector<EventModifier> modifiers;
  // perf's "PMU/term=value,.../modifiers" form: its terms in order ("event", 0x3c, column), a
  // term without '=' has the value 1 (perf's "edge" is edge=1); empty for the other forms. Then
  // `pmu` is the PMU before the '/', `name` the text up to the closing '/', and the modifiers
  // after it are in `modifiers`. Encoded with the PMU's perf format terms
  // (RegisterFormat::terms(), pmc/sdk/raw_event.hpp).
  std::vector<EventModifier> terms;

  [[nodiscard]] bool perf_terms() const { return !terms.empty(); }
  [[nodiscard]] const EventModifier* modifier(std::string_view n) const;
};

// Throws pmc::Error(parse) with a message that quotes the string and names the column.
PMC_API EventSpec parse_event(std::string_view text);

// Formats "event 'TEXT', column N: WHAT" for errors about a part of an event string.
PMC_API std::string event_error(const EventSpec& spec, std::size_t column, std::string_view what);

}  // namespace pmc

#endif  // C++20
