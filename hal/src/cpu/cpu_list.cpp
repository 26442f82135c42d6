// The kernel's CPU lists (cpu_list.hpp).
#include "cpu_list.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <string>

namespace pmc::detail {

std::vector<int> parse_sysfs_cpu_list(std::string_view text) {
  std::vector<int> out;
  auto number = [&](std::string_view s) {
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0)
      throw Error(errc::parse, fmt::format("CPU list '{}': '{}' is not a CPU number", text, s));
    return v;
  };
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    auto dash = part.find('-');
    int lo = number(part.substr(0, dash));
    int hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
    if (hi < lo) throw Error(errc::parse, fmt::format("CPU list '{}': range '{}' is backwards", text, part));
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::optional<std::string> read_first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::vector<int> online_cpus(const std::filesystem::path& sysfs_root) {
  const std::optional<std::string> text = read_first_line(sysfs_root / "devices" / "system" / "cpu" / "online");
  if (!text) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    std::vector<int> out;
    for (int c = 0; c < n; ++c) out.push_back(c);
    return out;
  }
  return parse_sysfs_cpu_list(*text);
}

}  // namespace pmc::detail
