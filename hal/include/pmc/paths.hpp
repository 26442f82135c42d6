// Where the library finds its plugins and data, and bundled data by bare name.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/paths.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <filesystem>
#include <string_view>
#include <vector>

namespace pmc {

// Where the installed (or built) library finds its plugins and data, relative to itself.
struct Paths {
  std::filesystem::path plugins;   // <libdir>/pmchal/plugins
  std::filesystem::path events;    // <prefix>/share/pmchal/events
  std::filesystem::path data;      // <prefix>/share/pmchal
};
PMC_API Paths default_paths();

// Bundled data by bare name: "pentium-iii" names share/pmchal/cpuid/pentium-iii.txt, "p6-demo"
// share/pmchal/workloads/p6-demo.toml. A name that is an existing file, or has a '/' or a '.',
// is returned as given (so a loader reports a missing file by the name the user gave). Any
// other name that is not bundled throws Error(not_found) naming the nearest bundled names:
// "no bundled CPUID dump 'skylak'; did you mean 'skylake'?" (pmc list --cpuid-dumps lists them).
enum class DataKind { cpuid_dump, workload };
PMC_API std::filesystem::path resolve_data(std::string_view given, DataKind kind);
// The bundled files of a kind, sorted; each one's stem is the name resolve_data takes.
PMC_API std::vector<std::filesystem::path> bundled_data(DataKind kind);

}  // namespace pmc

#endif  // C++20
