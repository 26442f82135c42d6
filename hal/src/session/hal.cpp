#include "access.hpp"
#include "bundled.hpp"
#include "catalog_loader.hpp"
#include "context.hpp"
#include "cpu_catalogs.hpp"
#include "cpu_native.hpp"
#include "event_stats.hpp"
#include "nearest.hpp"
#include "plugins.hpp"
#include "preselection.hpp"
#include "root_safety.hpp"
#include "session_impl.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include <algorithm>
#include <mutex>

namespace pmc {

std::vector<HalEventDescription> hal_events() {
  std::vector<HalEventDescription> out;
  for (const auto& e : detail::hal_events())
    out.push_back({e.name, e.alias ? e.alias : "", e.unit, e.description});
  return out;
}

namespace detail {

class HalImpl {
 public:
  Config config;
  CpuInfo cpu;  // moved into ctx when a backend is chosen (Hal::cpu() is ctx->cpu then)
  Once cpu_completed;  // its brand, read at the first Hal::cpu() (without a ctx)
  std::shared_ptr<PluginSet> plugins;
  std::once_flag statuses_once;  // the statuses are made at the first Hal::plugins()
  std::vector<PluginStatus> statuses;
  std::vector<Candidate> candidates;
  std::string why;
  std::shared_ptr<ModelRegistry> models;
  std::shared_ptr<Context> ctx;  // null when no backend was chosen
  BackendInfo info;
  std::string access_reason;     // why no access method (without a backend; else ctx->access_why())
};

}  // namespace detail

namespace {

std::string origin_of(const Config& c, const std::string& key) {
  auto it = c.origin.find(key);
  return it == c.origin.end() ? std::string("default") : it->second.where;
}

// One backend with its data, probed (load null: a library Hal::open did not load; `later` set:
// one chosen by its kept probe, loaded at its first use).
struct Probed {
  const detail::PluginLoad* load = nullptr;
  std::optional<detail::LaterBackend> later;
  std::filesystem::path data;
  std::optional<EventCatalog> catalog;  // the data file's (read only when the probe was not kept)
  std::string description;              // the data file's
  std::string data_error;
};

// A data file whose 'backend' is another's (so nothing of it was loaded).
Error another_backends(const std::filesystem::path& data, const std::string& backend) {
  return Error(errc::invalid_argument, fmt::format("{}: the data file is for another backend (its 'backend' is not '{}')",
                                                   data.string(), backend));
}

// Each backend library's data and verdict, in the order of `loads`, into impl.candidates.
std::vector<Probed> probe_backends(const std::vector<detail::PluginLoad>& loads, detail::Preselection& pre,
                                   detail::HalImpl& impl) {
  std::vector<Probed> probed;
  probed.reserve(static_cast<std::size_t>(std::count_if(
      loads.begin(), loads.end(), [](const detail::PluginLoad& p) { return p.backend || p.deferred_backend; })));
  // The names of the backends known so far, loaded or kept: a later library with one of them is
  // shadowed, as load_plugins shadows a loaded one (it cannot see the names of those it did not
  // load).
  std::vector<std::string> taken;
  auto take = [&taken](const std::string& name) {
    if (std::find(taken.begin(), taken.end(), name) != taken.end()) return false;
    taken.push_back(name);
    return true;
  };
  for (const auto& p : loads) {
    if (p.deferred_backend) {
      Probed b;
      if (auto* s = pre.skipped(p.status.file)) {
        impl.candidates.push_back({s->name, s->verdict});
      } else if (const detail::Preselection::Probe* kept = pre.probed(p.status.file.native())) {
        // Passed over with the probe an earlier open kept: known without loading the library.
        if (!take(kept->name)) continue;
        try {
          // (Looked up in the directory's listing, which this open made already.)
          const auto* memo = detail::scoped_listing(p.status.file.parent_path().native());
          b.data = detail::data_file(detail::library_name(p.status.file.native()), p.status.file,
                                     memo && *memo ? &**memo : nullptr);
          b.description = kept->description;
          b.later = detail::LaterBackend{p.status.file, kept->name, kept->profiles};
          impl.candidates.push_back({kept->name, kept->match});
        } catch (const std::exception& e) {  // its data file is gone since
          b.data_error = e.what();
          impl.candidates.push_back({kept->name, Match{0, fmt::format("its data file cannot be used: {}", e.what()), {}, {}}});
        }
      } else {
        const std::string name = detail::library_name(p.status.file.native());
        impl.candidates.push_back(
            {name, Match{0, fmt::format("not loaded: backend = \"{}\" is named ({})", pre.config().backend,
                                        origin_of(pre.config(), "backend")),
                         {}, {}}});
      }
      probed.push_back(std::move(b));
      continue;
    }
    if (!p.backend || !take(p.backend->name)) continue;
    Probed b;
    b.load = &p;
    Candidate c{p.backend->name, {}};
    // The probe an earlier open of the same library, data file and CPU kept: the data file is
    // then read at the catalog's first use.
    if (const detail::Preselection::Probe* kept = pre.probed(p.status.file.native())) {
      try {
        b.data = detail::data_file(p.backend->name, p.backend->file);
        b.description = kept->description;
        c.match = kept->match;
        impl.candidates.push_back(std::move(c));
        probed.push_back(std::move(b));
        continue;
      } catch (const std::exception&) {  // gone since: as below
      }
    }
    try {
      b.data = detail::data_file(p.backend->name, p.backend->file);
      b.catalog.emplace().load(b.data, p.backend->name);
      b.description = b.catalog->description();
      if (b.catalog->files().empty()) throw another_backends(b.data, p.backend->name);
    } catch (const std::exception& e) {
      b.data_error = e.what();
      c.match = Match{0, fmt::format("its data file cannot be used: {}", e.what()), {}, {}};
    }
    if (b.data_error.empty()) {
      pre.read_leaves(b.catalog->pmu());
      try {
        detail::complete_brand(impl.cpu);  // the backend's code sees the whole reading
        c.match = p.backend->backend->probe(pre.cpu(), *b.catalog);
        pre.remember(p.status.file, {c.match, b.description, p.backend->name,
                                     p.backend->backend->profiling() != nullptr, !p.model});
      } catch (const std::exception& e) {  // a broken probe disqualifies its backend only
        c.match = Match{0, fmt::format("its probe failed: {}", e.what()), {}, {}};
      }
    }
    impl.candidates.push_back(std::move(c));
    probed.push_back(std::move(b));
  }
  return probed;
}

}  // namespace

Hal Hal::open(const Config& config) {
  const detail::RootCheckScope root_checks;  // each directory above the files read is checked once
  // Checked where the config is taken, not when the first event meets it (the C API and C++
  // callers fill Config themselves; the config file and the CLI check it as they read it).
  if (config.access != "auto" && !detail::parse_access(config.access))
    throw Error(errc::invalid_argument,
                fmt::format("access = \"{}\" ({}): not an access method (expected auto, sim, perf or msr)",
                            config.access.size() > 80 ? config.access.substr(0, 80) + "..." : config.access,
                            origin_of(config, "access")));
  auto impl = std::make_unique<detail::HalImpl>();
  impl->config = config;
  impl->cpu = config.cpu == "native" ? detail::native_cpu()
                                     : load_cpu_file(resolve_data(config.cpu, DataKind::cpuid_dump));

  std::vector<std::filesystem::path> dirs = config.plugin_path;
  dirs.push_back(detail::paths().plugins);
  detail::Preselection pre(config, impl->cpu, dirs);
  impl->plugins = std::make_shared<detail::PluginSet>(
      detail::load_plugins(dirs, [&pre](const std::string& lib) { return pre.load(lib); },
                           [&pre](const std::string& lib) { return pre.pass_over(lib); }));
  impl->models = std::make_shared<detail::ModelRegistry>();
  impl->models->dirs = dirs;
  for (const auto& p : impl->plugins->as_opened()) impl->models->add(p);

  // Each backend's data (probe table, [pmu]) and its verdict on this CPU. A backend named in the
  // config whose library was not loaded by its file name is looked for in every library.
  bool every = false;  // every backend library loaded
  std::vector<Probed> probed = probe_backends(impl->plugins->as_opened(), pre, *impl);
  if (config.backend != "auto" &&
      std::none_of(impl->candidates.begin(), impl->candidates.end(),
                   [&](const Candidate& c) { return c.backend == config.backend; }) &&
      std::any_of(impl->plugins->as_opened().begin(), impl->plugins->as_opened().end(),
                  [](const detail::PluginLoad& p) { return p.deferred_backend; })) {
    every = true;
    impl->candidates.clear();
    probed = probe_backends(impl->plugins->all(), pre, *impl);
  }
  const std::vector<detail::PluginLoad>& loads = every ? impl->plugins->all() : impl->plugins->as_opened();
  pre.store();  // the verdicts and the probes, for the next open

  Probed* chosen = nullptr;
  const Candidate* verdict = nullptr;
  if (config.backend == "auto") {
    int best = 0;
    for (std::size_t i = 0; i < probed.size(); ++i)
      if (impl->candidates[i].match.score > best) {
        best = impl->candidates[i].match.score;
        chosen = &probed[i];
        verdict = &impl->candidates[i];
      }
    // (Joined, not formatted: nothing else an open that keeps its probes makes formats text.)
    if (!chosen) detail::complete_brand(impl->cpu);  // describe() names it
    impl->why = chosen ? "backend = \"auto\" (" + origin_of(config, "backend") + "): " + verdict->backend +
                             " matched with score " + std::to_string(verdict->match.score) + ": " +
                             verdict->match.reason
                       : fmt::format("backend = \"auto\" ({}): no loaded backend matches {}", origin_of(config, "backend"),
                                     describe(impl->cpu));
  } else {
    const std::string where = origin_of(config, "backend");
    for (std::size_t i = 0; i < probed.size(); ++i)
      if (impl->candidates[i].backend == config.backend) {
        chosen = &probed[i];
        verdict = &impl->candidates[i];
      }
    if (!chosen) {
      for (const auto& p : loads)
        if (!p.backend && p.status.file.stem() == "lib" + config.backend)
          throw Error(errc::plugin, fmt::format("{}: backend '{}' failed to load: {}", where, config.backend, p.status.error));
      std::vector<std::string> names;
      for (const auto& p : loads)
        if (p.backend) names.push_back(p.backend->name);
      const std::vector<std::string> near = detail::nearest_names(config.backend, names);
      throw Error(errc::not_found,
                  fmt::format("{}: unknown backend '{}'{} (loaded backends: {})", where, config.backend,
                              near.empty() ? std::string() : fmt::format("; did you mean '{}'?", fmt::join(near, "', '")),
                              names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (!chosen->data_error.empty())
      throw Error(errc::plugin, fmt::format("{}: backend '{}' cannot be used: {}", where, config.backend, chosen->data_error));
    impl->why = fmt::format("backend = \"{}\" ({}); its probe says: {}{}", config.backend, where,
                            verdict->match.matched() ? "" : "no match, ", verdict->match.reason);
  }

  if (chosen) {
    auto ctx = std::make_shared<detail::Context>();
    if (chosen->later) ctx->later = chosen->later;
    else ctx->loaded = chosen->load->backend;
    const std::string name = chosen->later ? chosen->later->name : ctx->loaded->name;
    ctx->cpu = std::move(impl->cpu);  // Hal::cpu() is the context's from here
    // The data file's events, more beside it (<name>/*.toml), then the files of <name>/cpu/
    // whose index rows match the CPU, then the operator's events_path: loaded at the first use
    // (Context::ensure). Which files of cpu/ they are is known now (BackendInfo names them).
    const auto extra = chosen->data.parent_path() / name;
    struct stat st {};
    const bool has_extra = detail::scoped_stat(extra, st) == 0 && S_ISDIR(st.st_mode);
    std::vector<std::filesystem::path> own_files;
    if (has_extra)
      for (const auto& f : detail::cpu_catalogs(extra / "cpu", name, ctx->cpu)) {
        own_files.push_back(f.path);
        impl->info.cpu_catalogs.push_back(f.shown);
      }
    // A hybrid CPU: each other core type's events and PMU, as on a core of that type.
    if (has_extra)
      for (const auto& f : detail::hybrid_parts(extra / "cpu", name, ctx->cpu)) {
        detail::CorePart part{f.name, f.perf_pmu, f.core_type, f.shown, f.own, ctx->cpu, {}, {}};
        part.cpu.core_type = f.core_type;
        part.cpu.native_model = f.native_model;
        // This CPU's own part first.
        impl->info.hybrid.insert(f.own ? impl->info.hybrid.begin() : impl->info.hybrid.end(),
                                 {f.name, f.perf_pmu, f.core_type, f.shown, f.own});
        ctx->parts.insert(f.own ? ctx->parts.begin() : ctx->parts.end(), std::move(part));
      }
    impl->info.description = chosen->description;  // the data file's (the first file's wins)
    ctx->complete = [name, data = std::move(chosen->catalog), data_path = chosen->data,
                     extra = has_extra ? extra : std::filesystem::path(), own_files = std::move(own_files),
                     events_path = config.events_path, match = verdict->match](detail::Context& c) {
      const detail::RootCheckScope scope;  // as in open(): each directory checked once
      auto catalog_for = [&](const CpuInfo& cpu, const std::vector<std::filesystem::path>* files) {
        std::vector<std::filesystem::path> rest;
        if (!extra.empty()) {
          rest.push_back(extra);
          if (files) {
            rest.insert(rest.end(), files->begin(), files->end());
          } else {
            // (A native reading holds leaf 1AH, the core type and native model rows may name.)
            for (const auto& f : detail::cpu_catalogs(extra / "cpu", name, cpu)) rest.push_back(f.path);
          }
        }
        rest.insert(rest.end(), events_path.begin(), events_path.end());
        EventCatalog cat;
        if (data) {  // read by this open's probe
          cat = *data;
          for (const auto& p : rest) cat.load(p, name);
          return cat;
        }
        // The probe was kept from an earlier open: the whole catalog's record, when the parse
        // cache has it, is all that is read.
        rest.insert(rest.begin(), data_path);
        detail::load_chain(cat, rest, name);
        if (std::find(cat.files().begin(), cat.files().end(), data_path.string()) == cat.files().end())
          throw another_backends(data_path, name);
        return cat;
      };
      EventCatalog catalog = catalog_for(c.cpu, &own_files);
      PmuInfo pmu = c.backend().pmu(c.cpu, catalog, match);
      std::vector<std::pair<EventCatalog, PmuInfo>> parts;
      for (const detail::CorePart& part : c.parts) {
        if (part.own) {
          parts.emplace_back();
          continue;
        }
        EventCatalog part_catalog = catalog_for(part.cpu, nullptr);
        PmuInfo part_pmu = c.backend().pmu(part.cpu, part_catalog, match);
        parts.emplace_back(std::move(part_catalog), std::move(part_pmu));
      }
      // Nothing is changed until everything is made.
      c.catalog = std::move(catalog);
      c.pmu = std::move(pmu);
      for (std::size_t i = 0; i < parts.size(); ++i)
        if (!c.parts[i].own) {
          c.parts[i].catalog = std::move(parts[i].first);
          c.parts[i].pmu = std::move(parts[i].second);
        }
    };
    // The operator's own events files are read now: a mistake in one is the config's, reported
    // when it is taken.
    if (!config.events_path.empty()) ctx->ensure();
    ctx->models = impl->models;
    ctx->why = impl->why;
    ctx->plugins = impl->plugins;
    // Chosen when first asked (find_perf_pmu's look at sysfs is no part of an open that only
    // asks what the HAL is); config.access was checked above.
    ctx->choose_access = [configured = config.access, origin = origin_of(config, "access"), native = ctx->cpu.native(),
                          matched = verdict->match.matched(), backend = verdict->backend] {
      detail::AccessChoice choice =
          detail::choose_access(configured, origin, native, matched, backend, detail::find_perf_pmu());
      return std::pair{choice.access, std::move(choice.reason)};
    };
    impl->info.name = name;
    impl->info.file = chosen->later ? chosen->later->file : std::filesystem::path(ctx->loaded->file);
    impl->info.data = chosen->data;
    impl->info.profiles = chosen->later ? chosen->later->profiles : ctx->backend().profiling() != nullptr;
    impl->ctx = std::move(ctx);
  } else {
    impl->access_reason = "no backend, so no PMU events: a session counts only the HAL events (tsc and the OS "
                          "software events through perf_event_open)";
  }
  return Hal(std::move(impl));
}

Hal::Hal(std::unique_ptr<detail::HalImpl> impl) : impl_(std::move(impl)) {}
Hal::Hal(Hal&&) noexcept = default;
Hal& Hal::operator=(Hal&&) noexcept = default;
Hal::~Hal() = default;

const Config& Hal::config() const { return impl_->config; }
const CpuInfo& Hal::cpu() const {
  if (impl_->ctx) {
    impl_->ctx->complete_cpu();
    return impl_->ctx->cpu;
  }
  impl_->cpu_completed([this] { detail::complete_brand(impl_->cpu); });
  return impl_->cpu;
}
const std::vector<PluginStatus>& Hal::plugins() const {
  detail::HalImpl& impl = *impl_;
  std::call_once(impl.statuses_once, [&impl] {
    const detail::RootCheckScope root_checks;  // as in open(): each directory checked once
    // Unchanged libraries are listed as they were the last time, without loading them.
    const std::string key = detail::plugin_statuses_key(impl.plugins->as_opened());
    if (auto cached = detail::cached_plugin_statuses(key)) {
      impl.statuses = std::move(*cached);
      return;
    }
    impl.models->load_deferred();  // every library's status is asked for: load the model-only ones
    std::size_t next_deferred = 0;
    for (const auto& p : impl.plugins->all()) {
      const detail::PluginLoad& load = p.deferred ? impl.models->deferred_loads.at(next_deferred++) : p;
      impl.statuses.push_back(load.status);
      if (load.model_status) impl.statuses.push_back(*load.model_status);
    }
    detail::store_plugin_statuses(key, impl.statuses);
  });
  return impl.statuses;
}
const std::vector<Candidate>& Hal::candidates() const { return impl_->candidates; }
const BackendInfo* Hal::backend() const { return impl_->ctx ? &impl_->info : nullptr; }
const std::string& Hal::why() const { return impl_->why; }

const BackendInfo& Hal::require_backend() const {
  if (!impl_->ctx)
    throw Error(errc::not_supported,
                fmt::format("{}; name a backend (the config key 'backend') or give a CPUID dump of a supported CPU "
                            "(the config key 'cpu') to use its simulated PMU",
                            impl_->why));
  return impl_->info;
}

const PmuInfo& Hal::pmu() const {
  (void)require_backend();
  impl_->ctx->ensure();
  return impl_->ctx->pmu;
}

const EventCatalog& Hal::events() const {
  (void)require_backend();
  impl_->ctx->ensure();
  return impl_->ctx->catalog;
}

namespace {

const detail::CorePart& part_of(const detail::Context& ctx, std::string_view name) {
  if (const detail::CorePart* p = ctx.part(name)) return *p;
  std::string parts;
  for (const auto& p : ctx.parts)
    parts += (parts.empty() ? "" : ", ") + p.name + (p.perf_pmu.empty() ? "" : " (" + p.perf_pmu + ")");
  throw Error(errc::not_found, ctx.parts.empty() ? fmt::format("no part '{}': the CPU ({}) is not a hybrid part", name,
                                                               ctx.cpu.source)
                                                 : fmt::format("no part '{}' of this hybrid CPU; its parts: {}", name, parts));
}

}  // namespace

const EventCatalog& Hal::events(std::string_view part) const {
  (void)require_backend();
  return impl_->ctx->pmu_context(part_of(*impl_->ctx, part)).catalog;
}

const PmuInfo& Hal::pmu(std::string_view part) const {
  (void)require_backend();
  return impl_->ctx->pmu_context(part_of(*impl_->ctx, part)).pmu;
}

std::string Hal::access() const {
  return impl_->ctx ? std::string(detail::access_name(impl_->ctx->access_method())) : std::string();
}
const std::string& Hal::access_reason() const { return impl_->ctx ? impl_->ctx->access_why() : impl_->access_reason; }

Encoding Hal::encode(std::string_view event) const {
  (void)require_backend();
  const detail::Context& ctx = *impl_->ctx;
  detail::count_encode();
  return ctx.encode(parse_event(event));
}

Session Hal::session(const Scope& scope) const {
  if (impl_->ctx) return Session(std::make_unique<detail::SessionImpl>(impl_->ctx, scope));
  // No backend: a context without one, for the HAL events.
  auto ctx = std::make_shared<detail::Context>();
  ctx->cpu = cpu();  // (with its brand: another thread's Hal::cpu() may be adding it)
  ctx->why = impl_->why;
  ctx->models = impl_->models;
  ctx->plugins = impl_->plugins;
  return Session(std::make_unique<detail::SessionImpl>(std::move(ctx), scope));
}

}  // namespace pmc
