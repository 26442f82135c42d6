// What Hal::open found in the plugin directories, file by file.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/plugin.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <filesystem>
#include <string>

namespace pmc {

// One plugin file Hal::open found: a backend (a PMU's driver), a device model (a simulated
// PMU), or a file that failed to load (error says why).
enum class PluginKind { backend, model, unknown };
struct PluginStatus {
  std::filesystem::path file;
  PluginKind kind = PluginKind::unknown;
  std::string name;      // the backend's or model's name, when loaded
  std::string description;
  std::string error;     // empty when loaded
};

}  // namespace pmc

#endif  // C++20
