// Small text helpers shared by the loaders and the encoder.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// Event and unit-mask names are matched without regard to case, as libpfm4 does. The names are
// ASCII, so only A-Z fold, with no locale call: this is the library's one case-blind compare
// (event lookups run it on their hot path).
inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

inline bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

inline std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += separator;
    out += i;
  }
  return out;
}

// Linux perf's other spellings of its generic hardware events (perf list: "cpu-cycles OR
// cycles", "branch-instructions OR branches", "idle-cycles-frontend OR stalled-cycles-frontend",
// ...). Events files name the first column's right-hand side; either spelling finds it.
inline std::string_view perf_generic_name(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
      {"cpu-cycles", "cycles"},
      {"branch-instructions", "branches"},
      {"idle-cycles-frontend", "stalled-cycles-frontend"},
      {"idle-cycles-backend", "stalled-cycles-backend"},
  };
  for (const auto& [other, canonical] : kSynonyms)
    if (iequal(name, other)) return canonical;
  return name;
}

}  // namespace pmc::detail
