// What Hal::open found in the plugin directories, file by file.
#pragma once

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
