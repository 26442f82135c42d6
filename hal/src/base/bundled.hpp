// The bundled data by bare name (share/pmchal/cpuid/*.txt, share/pmchal/workloads/*.toml): the
// names resolve_data (<pmc/paths.hpp>) takes, for the "did you mean" of a mistyped one.
#pragma once

#include <pmc/paths.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace pmc::detail {

// dir + "/" + name as text (std::filesystem::path's operator/ splits both into components, which
// Hal::open's lookups spent much of their time on).
[[nodiscard]] inline std::string joined_path(std::string_view dir, std::string_view name) {
  std::string out;
  out.reserve(dir.size() + 1 + name.size());  // one allocation, not one per append
  out.append(dir);
  if (!out.empty() && out.back() != '/') out += '/';
  return out.append(name);
}

// This library's own file (or the program's, when the core is linked in), absolute, as it was
// when it was loaded: what default_paths() are found from.
[[nodiscard]] const std::filesystem::path& library_file();

// default_paths(), without copying them: the library's own calls (Hal::open asks for each
// backend's data file).
[[nodiscard]] const Paths& paths();

// The file names in a directory, sorted by name (readdir: no std::filesystem::path per entry,
// which Hal::open's listings of the plugin directories spent most of their time building);
// nullopt with `error` set when it cannot be read.
[[nodiscard]] std::optional<std::vector<std::string>> list_directory(const std::string& dir, std::error_code& error);

// The bare names of the bundled files of a kind ("pentium-iii", ...), sorted.
[[nodiscard]] std::vector<std::string> bundled_names(DataKind kind);

}  // namespace pmc::detail
