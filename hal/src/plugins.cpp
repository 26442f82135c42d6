#include "plugins.hpp"

#include <pmc/backend.hpp>

#include <boost/dll/shared_library.hpp>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace pmc::detail {

namespace {
// dlopen is not safe to call concurrently on every platform; load one library at a time.
std::mutex load_mutex;
}  // namespace

PluginLoad load_plugin(const std::filesystem::path& file) {
  std::lock_guard<std::mutex> lock(load_mutex);
  PluginLoad out;
  out.status.file = file;
  auto fail = [&](std::string message) {
    out.status.error = fmt::format("{}: {}", file.string(), message);
    out.loaded.reset();
    return out;
  };
  auto library = std::make_shared<boost::dll::shared_library>();
  std::error_code ec;
  dlerror();  // clear any stale message
  library->load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();
    return fail(fmt::format("cannot load the library: {}", why ? why : ec.message()));
  }
  if (!library->has(PMC_BACKEND_SYMBOL))
    return fail(fmt::format("not a pmchal backend: it exports no '{}' descriptor", PMC_BACKEND_SYMBOL));
  const auto& descriptor = library->get_alias<const pmc_backend_descriptor>(PMC_BACKEND_SYMBOL);
  unsigned major = descriptor.abi_version >> 24;
  if (major != kBackendAbiMajor)
    return fail(fmt::format("built for backend ABI {}.{} but this pmchal speaks ABI {}.{}; rebuild the plugin",
                            major, (descriptor.abi_version >> 16) & 0xFF, kBackendAbiMajor,
                            (kBackendAbiVersion >> 16) & 0xFF));
  if (descriptor.struct_size < sizeof(pmc_backend_descriptor))
    return fail(fmt::format("its descriptor is {} bytes, smaller than the {} this pmchal needs",
                            descriptor.struct_size, sizeof(pmc_backend_descriptor)));
  if (!descriptor.create || !descriptor.name) return fail("its descriptor has no name or no factory");
  std::unique_ptr<Backend> backend;
  try {
    backend.reset(descriptor.create());
  } catch (const std::exception& e) {
    return fail(fmt::format("the factory of backend '{}' threw: {}", descriptor.name, e.what()));
  } catch (...) {
    return fail(fmt::format("the factory of backend '{}' threw a non-standard exception", descriptor.name));
  }
  if (!backend) return fail(fmt::format("the factory of backend '{}' returned no backend", descriptor.name));
  out.loaded = std::make_shared<LoadedBackend>();
  out.loaded->library = std::move(library);
  out.loaded->backend = std::move(backend);
  out.loaded->file = file.string();
  out.status.backend = std::string(out.loaded->backend->name());
  return out;
}

std::vector<PluginLoad> load_plugins(const std::vector<std::filesystem::path>& dirs) {
  namespace fs = std::filesystem;
  std::vector<PluginLoad> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      PluginLoad missing;
      missing.status.file = dir;
      missing.status.error = fmt::format("{}: plugin directory does not exist", dir.string());
      out.push_back(std::move(missing));
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".so" && !entry.is_directory()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      PluginLoad p = load_plugin(f);
      if (p.loaded) {
        auto same = std::find_if(out.begin(), out.end(), [&](const PluginLoad& o) {
          return o.loaded && o.status.backend == p.status.backend;
        });
        if (same != out.end()) {
          p.status.error = fmt::format("{}: backend '{}' is already loaded from {}; this copy is ignored",
                                       f.string(), p.status.backend, same->status.file.string());
          p.status.backend.clear();
          p.loaded.reset();
        }
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace pmc::detail
