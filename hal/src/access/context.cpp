// Events of a hybrid CPU's core types (context.hpp, docs/event-format.md "Hybrid parts"): a
// `PART::EVENT` string is encoded with that part's catalog and PMU.
#include "context.hpp"

#include "text.hpp"

#include <pmc/error.hpp>
#include <pmc/event_spec.hpp>

#include <fmt/format.h>

namespace pmc::detail {

const CorePart* Context::part(std::string_view pmu_name) const {
  for (const CorePart& p : parts)
    if (iequal(p.name, pmu_name) || (!p.perf_pmu.empty() && iequal(p.perf_pmu, pmu_name))) return &p;
  return nullptr;
}

Encoding Context::encode(const EventSpec& spec) const {
  const CorePart* p = spec.pmu.empty() ? nullptr : part(spec.pmu);
  if (!p) return backend().encode(spec, pmu_context());
  // The string after "PART::", encoded as the part's own: its messages quote that string, so
  // they are said to be about the part.
  const EventSpec inner = parse_event(std::string_view(spec.text).substr(spec.pmu.size() + 2));
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
