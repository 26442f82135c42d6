#pragma once

#include "context.hpp"

#include <pmc/hal.hpp>

#include <filesystem>
#include <memory>
#include <vector>

namespace pmc::detail {

struct PluginLoad {
  std::shared_ptr<LoadedBackend> loaded;  // null when it failed
  PluginStatus status;
};

// Exported for the tests (not part of the public API).
// Loads one backend library: dlopen with RTLD_NOW, the descriptor, its ABI version, then the
// factory. Never throws; a failure is described in status.error, naming the file.
PMC_API PluginLoad load_plugin(const std::filesystem::path& file);

// Every *.so in the directories, in order; a backend name found again later is reported as
// shadowed and not loaded.
PMC_API std::vector<PluginLoad> load_plugins(const std::vector<std::filesystem::path>& dirs);

}  // namespace pmc::detail
