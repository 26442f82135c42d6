#include "nearest.hpp"

#include "text.hpp"

#include <algorithm>

namespace pmc::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (ascii_lower(a[i - 1]) == ascii_lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  // The name in another case is the one meant (a backend's name in capitals: that one alone).
  for (const std::string& c : candidates)
    if (c != name && iequal(c, name)) return {c};
  const std::size_t within = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == name) continue;
    const std::size_t d = edit_distance(name, c);
    if (d > within) continue;
    if (std::any_of(scored.begin(), scored.end(), [&](const auto& s) { return iequal(candidates[s.second], c); }))
      continue;
    scored.emplace_back(d, i);
  }
  std::sort(scored.begin(), scored.end(), [&](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : candidates[x.second] < candidates[y.second];
  });
  std::vector<std::string> out;
  for (const auto& [d, i] : scored) {
    if (out.size() == limit) break;
    out.push_back(candidates[i]);
  }
  return out;
}

}  // namespace pmc::detail
