#include "access.hpp"
#include "context.hpp"
#include "plugins.hpp"
#include "session_impl.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fmt/format.h>

#include <algorithm>

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
  CpuInfo cpu;
  std::vector<PluginLoad> plugins;
  std::vector<PluginStatus> statuses;
  std::vector<Candidate> candidates;
  std::string why;
  std::shared_ptr<Context> ctx;  // null when no backend was chosen
  std::string access_reason;     // why ctx->access (or why no access method)
};

}  // namespace detail

namespace {

std::string origin_of(const Config& c, const std::string& key) {
  auto it = c.origin.find(key);
  return it == c.origin.end() ? std::string("default") : it->second.where;
}

// A bare name ("pentium-iii") that is not a file names a dump bundled in share/pmchal/cpuid.
std::filesystem::path resolve_cpuid_dump(const std::string& given) {
  std::error_code ec;
  if (std::filesystem::exists(given, ec)) return given;
  auto bundled = default_paths().data / "cpuid" / (given + ".txt");
  if (given.find('/') == std::string::npos && std::filesystem::exists(bundled, ec)) return bundled;
  return given;
}

}  // namespace

Hal Hal::open(const Config& config) {
  auto impl = std::make_unique<detail::HalImpl>();
  impl->config = config;
  impl->cpu = config.cpu == "native" ? read_native_cpu() : load_cpuid_dump(resolve_cpuid_dump(config.cpu));

  std::vector<std::filesystem::path> dirs = config.plugin_path;
  dirs.push_back(default_paths().plugins);
  impl->plugins = detail::load_plugins(dirs);
  for (const auto& p : impl->plugins) impl->statuses.push_back(p.status);

  const detail::PluginLoad* chosen = nullptr;
  int best = 0;
  for (const auto& p : impl->plugins) {
    if (!p.loaded) continue;
    Candidate c{p.status.backend, {}};
    try {
      c.match = p.loaded->backend->probe(impl->cpu);
    } catch (const std::exception& e) {  // a broken probe disqualifies its backend only
      c.match = Match{0, fmt::format("its probe failed: {}", e.what()), {}};
    }
    if (config.backend == "auto" && c.match.score > best) {
      best = c.match.score;
      chosen = &p;
    }
    impl->candidates.push_back(std::move(c));
  }
  if (config.backend == "auto") {
    if (chosen) {
      auto it = std::find_if(impl->candidates.begin(), impl->candidates.end(),
                             [&](const Candidate& c) { return c.backend == chosen->status.backend; });
      impl->why = fmt::format("backend = \"auto\" ({}): {} matched with score {}: {}", origin_of(config, "backend"),
                              chosen->status.backend, it->match.score, it->match.reason);
    } else {
      impl->why = fmt::format("backend = \"auto\" ({}): no loaded backend matches {}", origin_of(config, "backend"),
                              describe(impl->cpu));
    }
  } else {
    for (const auto& p : impl->plugins)
      if (p.loaded && p.status.backend == config.backend) chosen = &p;
    std::string where = origin_of(config, "backend");
    if (!chosen) {
      for (const auto& p : impl->plugins)
        if (!p.loaded && p.status.file.stem() == "lib" + config.backend)
          throw Error(errc::plugin, fmt::format("{}: backend '{}' failed to load: {}", where, config.backend, p.status.error));
      std::string names;
      for (const auto& p : impl->plugins)
        if (p.loaded) names += (names.empty() ? "" : ", ") + p.status.backend;
      throw Error(errc::not_found, fmt::format("{}: unknown backend '{}' (loaded backends: {})", where, config.backend,
                                               names.empty() ? std::string("none") : names));
    }
    auto it = std::find_if(impl->candidates.begin(), impl->candidates.end(),
                           [&](const Candidate& c) { return c.backend == config.backend; });
    impl->why = fmt::format("backend = \"{}\" ({}); its probe says: {}{}", config.backend, where,
                            it->match.matched() ? "" : "no match, ", it->match.reason);
  }

  if (chosen) {
    auto ctx = std::make_shared<detail::Context>();
    ctx->loaded = chosen->loaded;
    ctx->cpu = impl->cpu;
    ctx->pmu = ctx->backend().pmu(impl->cpu);
    auto builtin = default_paths().events / ctx->backend().events_file();
    std::error_code ec;
    if (std::filesystem::exists(builtin, ec)) ctx->catalog.load(builtin, ctx->pmu.name);
    for (const auto& p : config.events_path) ctx->catalog.load(p, ctx->pmu.name);
    auto verdict = std::find_if(impl->candidates.begin(), impl->candidates.end(),
                                [&](const Candidate& c) { return c.backend == chosen->status.backend; });
    const detail::AccessChoice choice = detail::choose_access(
        config.access, origin_of(config, "access"), impl->cpu.source == "native",
        verdict != impl->candidates.end() && verdict->match.matched(), chosen->status.backend, detail::find_perf_pmu());
    ctx->access = choice.access;
    impl->access_reason = choice.reason;
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
const CpuInfo& Hal::cpu() const { return impl_->cpu; }
const std::vector<PluginStatus>& Hal::plugins() const { return impl_->statuses; }
const std::vector<Candidate>& Hal::candidates() const { return impl_->candidates; }
const Backend* Hal::backend() const { return impl_->ctx ? &impl_->ctx->backend() : nullptr; }
const std::string& Hal::why() const { return impl_->why; }

const Backend& Hal::require_backend() const {
  if (!impl_->ctx)
    throw Error(errc::not_supported,
                fmt::format("{}; name a backend (--backend or 'backend' in the config) or give a CPUID dump of a "
                            "supported CPU (--cpuid-dump) to use its simulated PMU",
                            impl_->why));
  return impl_->ctx->backend();
}

const PmuInfo& Hal::pmu() const {
  (void)require_backend();
  return impl_->ctx->pmu;
}

const EventCatalog& Hal::events() const {
  (void)require_backend();
  return impl_->ctx->catalog;
}

std::string Hal::access() const { return impl_->ctx ? impl_->ctx->access : std::string(); }
const std::string& Hal::access_reason() const { return impl_->access_reason; }

Encoding Hal::encode(std::string_view event) const {
  const Backend& b = require_backend();
  return b.encode(parse_event(event), impl_->ctx->catalog, impl_->ctx->pmu);
}

Session Hal::session() const {
  (void)require_backend();
  return Session(std::make_unique<detail::SessionImpl>(impl_->ctx));
}

Session Hal::session(const Scope& scope) const {
  if (impl_->ctx) return Session(std::make_unique<detail::SessionImpl>(impl_->ctx, scope));
  // No backend: a context without one, for the HAL events.
  auto ctx = std::make_shared<detail::Context>();
  ctx->cpu = impl_->cpu;
  return Session(std::make_unique<detail::SessionImpl>(std::move(ctx), scope));
}

}  // namespace pmc
