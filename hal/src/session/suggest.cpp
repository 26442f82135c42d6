#include "suggest.hpp"

#include "access.hpp"
#include "text.hpp"

#include <algorithm>

namespace pmc::detail {

namespace {

constexpr std::string_view kPerfGenericNames[] = {
    "cycles",          "cpu-cycles",          "instructions",          "cache-references",
    "cache-misses",    "branches",            "branch-instructions",   "branch-misses",
    "bus-cycles",      "ref-cycles",          "stalled-cycles-frontend", "idle-cycles-frontend",
    "stalled-cycles-backend", "idle-cycles-backend", "slots",
};

}  // namespace

bool is_perf_generic_name(std::string_view name) {
  return std::any_of(std::begin(kPerfGenericNames), std::end(kPerfGenericNames),
                     [&](std::string_view g) { return iequal(g, name); });
}

std::vector<std::string> nearest_event_names(std::string_view name, const Context* ctx, std::size_t limit) {
  std::vector<std::string> candidates;
  for (std::string_view g : kPerfGenericNames) candidates.emplace_back(g);
  for (const auto& h : hal_events()) {
    candidates.emplace_back(h.name);
    if (h.alias) candidates.emplace_back(h.alias);
  }
  if (ctx && ctx->has_backend())
    for (const EventDef* e : ctx->catalog.for_cpu(ctx->pmu.cpu_tag)) {
      candidates.push_back(e->name);
      candidates.insert(candidates.end(), e->aliases.begin(), e->aliases.end());
    }
  return nearest_names(name, candidates, limit);
}

}  // namespace pmc::detail
