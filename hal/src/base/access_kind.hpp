// The access methods by type: how a session reaches counters (docs/user-guide.md "Access
// methods"). Config files, the C API and the CLI name them; the library compares the type.
#pragma once

#include <optional>
#include <string_view>

namespace pmc::detail {

enum class AccessKind {
  sim,   // the backend's device model (a simulated PMU)
  perf,  // Linux perf_event_open
  msr,   // /dev/cpu/N/msr, the registers the backend declares
};

[[nodiscard]] constexpr std::string_view access_name(AccessKind a) {
  switch (a) {
    case AccessKind::sim: return "sim";
    case AccessKind::perf: return "perf";
    case AccessKind::msr: return "msr";
  }
  return "?";
}

// The access a name means ("sim", "perf", "msr"); nullopt for anything else ("auto" included).
[[nodiscard]] constexpr std::optional<AccessKind> parse_access(std::string_view name) {
  for (AccessKind a : {AccessKind::sim, AccessKind::perf, AccessKind::msr})
    if (name == access_name(a)) return a;
  return std::nullopt;
}

}  // namespace pmc::detail
