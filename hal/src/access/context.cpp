// Events of a hybrid CPU's core types (context.hpp, docs/event-format.md "Hybrid parts"): a
// `PART::EVENT` string is encoded with that part's catalog and PMU.
#include "context.hpp"

#include "cpu_native.hpp"

#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/event_spec.hpp>

#include <fmt/format.h>

namespace pmc::detail {

void Context::ensure() const {
  if (!complete) {
    complete_cpu();
    return;
  }
  // Contexts are made mutable (std::make_shared<Context>) and shared as const once opened.
  completed([this] {
    complete_cpu();
    complete(const_cast<Context&>(*this));
  });
}

void Context::complete_cpu() const {
  cpu_completed([this] {
    auto& self = const_cast<Context&>(*this);
    complete_brand(self.cpu);
    for (CorePart& p : self.parts) complete_brand(p.cpu);
  });
}

const Backend& Context::backend() const {
  if (later)
    loaded_once([this] {
      // Checked again and loaded as Hal::open would have: the file may have changed since.
      PluginLoad p = load_plugin(later->file);
      if (!p.backend)
        throw Error(errc::plugin, fmt::format("backend '{}' cannot be loaded: {}", later->name,
                                              p.status.error.empty() ? later->file.string() + ": it defines no backend"
                                                                     : p.status.error));
      if (p.backend->name != later->name || (p.backend->backend->profiling() != nullptr) != later->profiles)
        throw Error(errc::plugin, fmt::format("{}: the library changed after the HAL was opened (it holds backend '{}' "
                                              "now, not the '{}' that was chosen); open the HAL again",
                                              later->file.string(), p.backend->name, later->name));
      loaded = std::move(p.backend);
    });
  return *loaded->backend;
}

const CorePart* Context::part(std::string_view pmu_name) const {
  for (const CorePart& p : parts)
    if (iequal(p.name, pmu_name) || (!p.perf_pmu.empty() && iequal(p.perf_pmu, pmu_name))) return &p;
  return nullptr;
}

Encoding Context::encode(const EventSpec& spec) const {
  const CorePart* p = spec.pmu.empty() ? nullptr : part(spec.pmu);
  if (!p && spec.perf_terms() && !parts.empty()) {
    // perf's PMU/term=value/ on a hybrid CPU: Linux has no "cpu" PMU there, one per core type.
    std::string names;
    for (const CorePart& c : parts)
      names += fmt::format("{}{} ({} cores)", names.empty() ? "" : ", ", c.perf_pmu.empty() ? c.name : c.perf_pmu, c.name);
    throw Error(errc::not_found, event_error(spec, 1, fmt::format("unknown PMU '{}' on this hybrid CPU: its core PMUs "
                                                                  "are {}",
                                                                  spec.pmu, names)));
  }
  if (!p) return backend().encode(spec, pmu_context());
  // The string after "PART::", encoded as the part's own: its messages quote that string, so
  // they are said to be about the part. perf's "cpu_atom/term=value/" is the part's "cpu/.../".
  EventSpec inner;
  if (spec.perf_terms()) {
    inner = spec;
    inner.pmu = "cpu";
  } else {
    inner = parse_event(std::string_view(spec.text).substr(spec.pmu.size() + 2));
  }
  Encoding e;
  try {
    e = backend().encode(inner, pmu_context(*p));
  } catch (const Error& err) {
    throw Error(err.kind(), fmt::format("{} (on {}, {})", err.what(), p->name, p->shown));
  }
  e.event = spec.text;
  const std::string_view rest = std::string_view(e.canonical).substr(std::min(e.canonical.find("::"), e.canonical.size()));
  e.canonical = p->name + std::string(rest);
  return e;
}

}  // namespace pmc::detail
