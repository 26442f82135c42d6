// EventCatalog::validate: the checks of a catalog's tables as a whole, beyond what the loader
// refuses in a single file (duplicate codes across files, counters the PMU lacks, ...).
#include "catalog_state.hpp"

#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pmc {

using detail::applies;

std::vector<std::string> EventCatalog::validate(unsigned general_counters, std::string_view tag) const {
  materialize();
  std::vector<std::string> problems;
  if (!format_.field("event")) problems.push_back("the register format has no 'event' field");
  for (const auto& e : events_) {
    std::string at = e.source.str();
    if (e.description.empty()) problems.push_back(fmt::format("{}: event {} has no description", at, e.name));
    for (unsigned c : e.counters)
      if (c >= general_counters && applies(e, tag))
        problems.push_back(fmt::format("{}: event {} names counter {} but the PMU has {}", at, e.name, c, general_counters));
    if (e.unit_masks && e.fixed_umask)
      problems.push_back(fmt::format("{}: event {} has both named unit masks and a fixed umask", at, e.name));
    if (e.unit_masks && e.unit_masks->masks.size() == 1 && e.unit_masks->default_masks.empty())
      problems.push_back(fmt::format("{}: event {} has only one unit mask but no default", at, e.name));
    if (auto f = format_.field("event"); f && (f->place(e.code) & pmu_.reserved))
      problems.push_back(fmt::format("{}: event {} has code 0x{:X}, which sets reserved bits", at, e.name, e.code));
    for (const auto& [mod, v] : e.defaults)
      if (const ModifierDef* m = modifier(mod); m && !m->field.empty()) {
        const auto f = format_.field(m->field);
        if (f && v > f->max_value())
          problems.push_back(fmt::format("{}: event {}: default {}={} does not fit field {}", at, e.name, mod, v, m->field));
      }
    for (const auto& other : events_) {
      if (&other == &e || other.code != e.code) continue;
      // The same code on disjoint counters is two events (the Pentium MMX's per-counter codes).
      const bool disjoint_counters =
          !e.counters.empty() && !other.counters.empty() &&
          std::none_of(e.counters.begin(), e.counters.end(), [&](unsigned c) {
            return std::find(other.counters.begin(), other.counters.end(), c) != other.counters.end();
          });
      if (disjoint_counters) continue;
      bool shared_cpu = e.cpus.empty() || other.cpus.empty() ||
                        std::any_of(e.cpus.begin(), e.cpus.end(), [&](const std::string& t) {
                          return std::find(other.cpus.begin(), other.cpus.end(), t) != other.cpus.end();
                        });
      bool same_umask = e.fixed_umask == other.fixed_umask;
      if (shared_cpu && same_umask && &other < &e)
        problems.push_back(fmt::format("{}: events {} and {} share code 0x{:02X} on the same CPUs", at, other.name,
                                       e.name, e.code));
    }
  }
  return problems;
}

}  // namespace pmc
