// The configuration: which backend, access method, plugin and event directories, CPU (docs/user-guide.md, "The config file").
#pragma once
#if __cplusplus < 202002L
#error "<pmc/config.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pmc {

// Where a setting came from: "default", "command line", "$PMC_CONFIG" or "file:line:column".
struct Origin {
  std::string where = "default";
};

struct Config {
  std::string backend = "auto";                    // "auto" or a backend name
  std::string access = "auto";                     // "auto" | "sim" | "perf" | "msr"
  std::vector<std::filesystem::path> plugin_path;  // searched before the built-in directory
  std::vector<std::filesystem::path> events_path;  // files or directories, loaded after built-ins
  std::string cpu = "native";                      // "native", a CPUID dump or a CPU description file
  std::vector<std::string> region_events;          // [regions] events: what regions count (docs/regions.md)
  std::filesystem::path region_output;             // [regions] output: their JSON at exit (empty: none)
  std::optional<std::filesystem::path> file;       // the config file read, if any
  std::string found_by;                            // "--config", "$PMC_CONFIG", ... or "built-in defaults"
  std::map<std::string, Origin> origin;            // key -> where its value came from
};

// Parses one config file; unknown keys, wrong types and unknown values are errors with
// file:line:column. Relative paths in it are relative to the file's directory.
PMC_API Config load_config(const std::filesystem::path& file);
// The search order: explicit file, $PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml (or
// ~/.config/pmc/config.toml), /etc/pmc/config.toml, built-in defaults.
PMC_API Config find_config(const std::optional<std::filesystem::path>& explicit_file);

}  // namespace pmc

#endif  // C++20
