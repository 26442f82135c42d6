// The library's one way to read its environment variables (PMC_*, XDG_*, HOME).
//
// In a setuid or setgid program (or one run with file capabilities: the kernel's AT_SECURE),
// the user who started it must not steer where it reads configs, caches or events, or where it
// writes reports: there every variable reads as unset and the built-in defaults apply
// (docs/user-guide.md, "Environment variables"). glibc's secure_getenv does exactly that.
#pragma once

#include <stdlib.h>

#include <string_view>

namespace pmc::detail {

// The variable's value, or nullptr when it is unset or the process runs with privileges the
// user did not have.
inline const char* environment(const char* name) { return ::secure_getenv(name); }

// The value when it is set and not empty, else nullptr (how most PMC_* variables are read).
inline const char* environment_nonempty(const char* name) {
  const char* value = environment(name);
  return value && *value ? value : nullptr;
}

// Whether PMC_DEBUG, a comma-separated list, names `topic` ("plugins", "cache") or "all".
inline bool debug_topic(std::string_view topic) {
  const char* env = environment("PMC_DEBUG");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (item == topic || item == "all") return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace pmc::detail
