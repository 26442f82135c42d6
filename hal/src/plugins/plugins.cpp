// The plugin loader. Nothing in a plugin directory may crash, hang or stop the host: a FIFO, a
// directory, a truncated or foreign file, a library with a bad descriptor or a factory that
// fails is reported by file and reason, and the other plugins still load. The file checks made
// before dlopen are plugin_file.cpp's.
#include "plugins.hpp"
#include "bundled.hpp"
#include "environment.hpp"

#include <pmc/error.hpp>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <mutex>
#include <string>
#include <vector>

namespace pmc::detail {

namespace {

// dlopen and dlclose are not safe to call concurrently on every platform (and glibc's own lock
// is one ThreadSanitizer cannot see): load and unload one library at a time. Recursive: a load
// that fails drops its library, unloading it, while it holds the lock.
// Never destroyed: a Hal destroyed at exit, after this file's statics, still unloads under it.
std::recursive_mutex& load_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

// The descriptor a library exports under `symbol`: a pointer variable (PMC_EXPORT_*), checked
// for null. Returns nullptr and sets `why` when it is unusable.
const void* descriptor_pointer(boost::dll::shared_library& lib, const char* symbol, std::string& why) {
  void* slot = ::dlsym(lib.native(), symbol);
  if (!slot) return nullptr;
  const void* p = *static_cast<const void* const*>(slot);
  if (!p) why = fmt::format("its '{}' descriptor is a null pointer", symbol);
  return p;
}

// The version checks every descriptor gets: the same major, not a newer minor, a size at least
// the host's.
std::optional<std::string> check_version(std::uint32_t abi, std::uint32_t size, std::size_t needed, const char* what) {
  const unsigned major = abi >> 24, minor = (abi >> 16) & 0xFF;
  if (major != kAbiMajor)
    return fmt::format("{} built for plugin ABI {}.{} but this pmchal speaks ABI {}.{}; rebuild the plugin", what,
                       major, minor, kAbiMajor, kAbiMinor);
  if (minor > kAbiMinor)
    return fmt::format("{} built for plugin ABI {}.{}, newer than this pmchal's {}.{} (it may use what this pmchal "
                       "lacks); update pmchal or rebuild the plugin",
                       what, major, minor, kAbiMajor, kAbiMinor);
  if (size < needed)
    return fmt::format("its {} descriptor is {} bytes, smaller than the {} this pmchal needs", what, size, needed);
  return std::nullopt;
}

// PMC_DEBUG=plugins (a comma-separated list that names "plugins", or "all"): one line on
// stderr before each step that runs a plugin's code (its load, which runs its constructors, and
// its factory) and after it, so a plugin that crashes, exits or hangs the process is the file
// named last (docs/writing-a-backend.md). Written with one write(2) each, unbuffered.
bool tracing() {
  static const bool on = detail::debug_topic("plugins");
  return on;
}

void trace(const std::string& line) {
  if (!tracing()) return;
  const std::string text = fmt::format("pmchal: plugins: {}\n", line);
  if (::write(STDERR_FILENO, text.data(), text.size()) < 0) { /* stderr gone: nothing to tell */ }
}

}  // namespace

namespace {

PluginLoad failed_load(const std::filesystem::path& file, const std::string& message) {
  PluginLoad out;
  out.status.file = file;
  out.status.error = fmt::format("{}: {}", file.string(), message);
  return out;
}

// load_plugin() after its file checks.
PluginLoad load_checked(const std::filesystem::path& file) {
  PluginLoad out;
  out.status.file = file;
  auto fail = [&](const std::string& message) { return failed_load(file, message); };

  std::lock_guard<std::recursive_mutex> lock(load_mutex());
  std::shared_ptr<boost::dll::shared_library> library(new boost::dll::shared_library,
                                                      [](boost::dll::shared_library* l) {
                                                        std::lock_guard<std::recursive_mutex> unload(load_mutex());
                                                        delete l;
                                                      });
  std::error_code ec;
  dlerror();  // clear any stale message
  trace(fmt::format("loading {} (its constructors run now)", file.string()));
  library->load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();
    trace(fmt::format("{} did not load", file.string()));
    return fail(fmt::format("cannot load the library: {}", why ? why : ec.message()));
  }
  trace(fmt::format("loaded {}; reading its descriptors", file.string()));

  std::string why;
  const auto* bd = static_cast<const pmc_backend_descriptor*>(descriptor_pointer(*library, PMC_BACKEND_SYMBOL, why));
  if (!why.empty()) return fail(why);
  const auto* md = static_cast<const pmc_model_descriptor*>(descriptor_pointer(*library, PMC_MODEL_SYMBOL, why));
  if (!why.empty()) return fail(why);
  if (!bd && !md) {
    const bool v1 = ::dlsym(library->native(), "pmc_backend_v1") != nullptr;
    return fail(v1 ? fmt::format("a backend for plugin ABI 1 (it exports 'pmc_backend_v1'); this pmchal speaks ABI "
                                 "{}.{}: rebuild the plugin against it",
                                 kAbiMajor, kAbiMinor)
                   : fmt::format("not a pmchal plugin: it exports neither '{}' nor '{}'", PMC_BACKEND_SYMBOL,
                                 PMC_MODEL_SYMBOL));
  }

  if (md) {
    if (auto bad = check_version(md->abi_version, md->struct_size, sizeof(pmc_model_descriptor), "model"))
      return fail(*bad);
    if (!md->name || !*md->name || !md->create) return fail("its model descriptor has no name or no factory");
    out.model = std::make_shared<LoadedModel>();
    out.model->library = library;
    out.model->descriptor = md;
    out.model->name = md->name;
    out.model->file = file.string();
    PluginStatus s;
    s.file = file;
    s.kind = PluginKind::model;
    s.name = md->name;
    s.description = md->description ? md->description : "";
    out.model_status = s;
  }
  if (bd) {
    if (auto bad = check_version(bd->abi_version, bd->struct_size, sizeof(pmc_backend_descriptor), "backend"))
      return fail(*bad);
    if (!bd->name || !*bd->name || !bd->create) return fail("its backend descriptor has no name or no factory");
    std::array<char, 512> error{};
    std::unique_ptr<Backend> backend;
    trace(fmt::format("calling the factory of backend '{}' in {}", bd->name, file.string()));
    try {
      backend.reset(bd->create(error.data(), error.size()));
    } catch (...) {  // a factory must not throw; one that does is broken, reported like a failure
      return fail(fmt::format("the factory of backend '{}' threw, which a factory must not do", bd->name));
    }
    error.back() = '\0';
    if (!backend)
      return fail(fmt::format("the factory of backend '{}' failed{}", bd->name,
                              error[0] ? fmt::format(": {}", error.data()) : std::string(" and gave no reason")));
    const bool profiles = backend->profiling() != nullptr;
    if (profiles != ((bd->capabilities & kBackendProfiles) != 0))
      return fail(fmt::format("backend '{}' {} profiling in its descriptor but its driver {}", bd->name,
                              profiles ? "does not declare" : "declares", profiles ? "has it" : "has none"));
    out.backend = std::make_shared<LoadedBackend>();
    out.backend->library = library;
    out.backend->backend = std::move(backend);
    out.backend->name = bd->name;
    out.backend->file = file.string();
    out.backend->capabilities = bd->capabilities;
    out.status.kind = PluginKind::backend;
    out.status.name = bd->name;
    trace(fmt::format("{}: backend '{}' ready", file.string(), bd->name));
  } else {
    out.status = *out.model_status;
    out.model_status.reset();
  }
  return out;
}

// A library whose backend or model name an earlier one has: reported, not used.
void mark_shadowed(PluginStatus& s, const std::filesystem::path& file, const char* kind, const std::string& name,
                   const std::string& winner) {
  s.error = fmt::format("{}: {} '{}' is already loaded from {}; this copy is ignored", file.string(), kind, name, winner);
  s.name.clear();
}

}  // namespace

PluginLoad load_plugin(const std::filesystem::path& file) {
  if (auto why = unsafe_plugin_file(file)) return failed_load(file, *why);
  return load_checked(file);
}

void ModelRegistry::add(const PluginLoad& p) {
  if (p.deferred) deferred.push_back(p.status.file);
  else if (p.model) models.push_back(p.model);
  else if (!p.backend && !p.status.error.empty()) broken.push_back(p.status);
}

void ModelRegistry::load_deferred_at(std::size_t i) const {
  if (loaded_.size() < deferred.size()) {
    loaded_.resize(deferred.size(), false);
    deferred_loads.resize(deferred.size());
  }
  if (loaded_[i]) return;
  loaded_[i] = true;
  const std::filesystem::path& file = deferred[i];
  PluginLoad p = load_plugin(file);  // checked again: the file may have changed since
  if (p.backend) {  // not what its symbol table said: a model-only library that defines a backend
    p = failed_load(file, "it was listed as a device model's library (by its exports, or by its name "
                          "lib<name>-model.so) and defines a backend: a backend's library is lib<name>.so");
  }
  if (p.model) {
    for (const auto& m : models)
      if (m->name == p.model->name) {
        mark_shadowed(p.status, file, "model", p.model->name, m->file);
        p.model.reset();
        break;
      }
  }
  if (p.model) {
    models.push_back(p.model);
  } else if (!p.status.error.empty()) {
    p.status.kind = PluginKind::model;  // what its symbol table said it is
    broken.push_back(p.status);
  }
  deferred_loads[i] = std::move(p);
}

void ModelRegistry::load_deferred() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < deferred.size(); ++i) load_deferred_at(i);
}

std::shared_ptr<LoadedModel> ModelRegistry::find_model(const std::string& name) const {
  for (const auto& m : models)
    if (m->name == name) return m;
  return nullptr;
}

std::vector<PluginLoad> load_plugins(const std::vector<std::filesystem::path>& dirs,
                                     const std::function<bool(const std::string&)>& load_backend,
                                     const std::function<std::optional<PluginKind>(const std::string&)>& pass_over) {
  namespace fs = std::filesystem;
  std::vector<PluginLoad> out;
  auto report = [&](const fs::path& file, std::string message) {
    PluginLoad p;
    p.status.file = file;
    p.status.error = fmt::format("{}: {}", file.string(), message);
    out.push_back(std::move(p));
  };
  for (const auto& dir : dirs) {
    if (dir.empty()) {
      PluginLoad p;
      p.status.error = "an empty plugin directory name (\"\") is ignored: plugins are never loaded from the current "
                       "directory implicitly";
      out.push_back(std::move(p));
      continue;
    }
    std::error_code ec;
    std::vector<std::string> files;
    const auto names = list_directory(dir.native(), ec);  // sorted (Hal::open's listed it already)
    if (!names) {
      // Why: not there (or not a directory), or not readable.
      struct stat st {};
      const int rc = scoped_stat(dir.native(), st);
      const int err = rc != 0 ? errno : 0;
      report(dir, (rc == 0 && !S_ISDIR(st.st_mode)) || err == ENOENT || err == ENOTDIR
                      ? std::string("plugin directory does not exist")
                      : fmt::format("plugin directory cannot be read: {}", ec.message()));
      continue;
    }
    for (const std::string& name : *names)
      if (name.size() > 3 && name.ends_with(".so")) files.emplace_back(joined_path(dir.native(), name));
    out.reserve(out.size() + files.size());
    for (const auto& f : files) {
      // A library that defines only a device model is loaded when a model is first needed
      // (ModelRegistry::load_deferred): counting on real hardware needs none.
      if (const std::optional<PluginKind> kind = pass_over ? pass_over(f) : std::nullopt) {
        PluginLoad p;
        p.status.file = f;
        p.status.kind = *kind;
        (*kind == PluginKind::model ? p.deferred : p.deferred_backend) = true;
        out.push_back(std::move(p));
        continue;
      }
      std::optional<Exports> exports;
      if (auto why = inspect_plugin_file(f, &exports)) {
        out.push_back(failed_load(f, *why));
        continue;
      }
      if (exports && exports->model && !exports->backend) {
        PluginLoad p;
        p.status.file = f;
        p.status.kind = PluginKind::model;
        p.deferred = true;
        out.push_back(std::move(p));
        continue;
      }
      if (load_backend && exports && exports->backend && !exports->model && !load_backend(f)) {
        PluginLoad p;
        p.status.file = f;
        p.status.kind = PluginKind::backend;
        p.deferred_backend = true;
        out.push_back(std::move(p));
        continue;
      }
      PluginLoad p = load_checked(f);
      for (const auto& o : out) {
        if (p.backend && o.backend && o.backend->name == p.backend->name) {
          mark_shadowed(p.status, f, "backend", p.backend->name, o.backend->file);
          p.backend.reset();
        }
        if (p.model && o.model && o.model->name == p.model->name) {
          mark_shadowed(p.model_status ? *p.model_status : p.status, f, "model", p.model->name, o.model->file);
          p.model.reset();
        }
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

const std::vector<PluginLoad>& PluginSet::all() const {
  std::call_once(all_once_, [this] {
    all_.reserve(loads_.size());
    for (const PluginLoad& p : loads_) {
      if (!p.deferred_backend) {
        all_.push_back(p);
        continue;
      }
      PluginLoad loaded = load_plugin(p.status.file);  // checked again: the file may have changed since
      if (loaded.model) {  // not what its symbol table said
        loaded = failed_load(p.status.file, "it was listed as a backend's library (by its exports, or by its data file "
                                            "<name>.toml) and defines a device model too: a model's library is "
                                            "lib<name>-model.so");
      }
      if (loaded.backend)
        for (const PluginLoad& o : all_)
          if (o.backend && o.backend->name == loaded.backend->name) {
            mark_shadowed(loaded.status, p.status.file, "backend", loaded.backend->name, o.backend->file);
            loaded.backend.reset();
            break;
          }
      if (!loaded.backend) loaded.status.kind = PluginKind::backend;  // what its symbol table said it is
      all_.push_back(std::move(loaded));
    }
  });
  return all_;
}

std::vector<std::string> PluginSet::profiling_backends() const {
  std::vector<std::string> out;
  for (const PluginLoad& p : all())
    if (p.backend && p.backend->backend->profiling()) out.push_back(p.backend->name);
  return out;
}

}  // namespace pmc::detail
