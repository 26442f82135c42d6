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
    // Counters beyond the PMU are a defect only when the event has none within it: a model's
    // catalog names the part's counters, and a virtual machine may offer fewer.
    const bool some_counter = std::any_of(e.counters.begin(), e.counters.end(),
                                          [&](unsigned c) { return c < general_counters; });
    if (!some_counter && applies(e, tag))
      for (unsigned c : e.counters)
        problems.push_back(fmt::format("{}: event {} names counter {} but the PMU has {}", at, e.name, c, general_counters));
    if (e.unit_masks && e.fixed_umask)
      problems.push_back(fmt::format("{}: event {} has both named unit masks and a fixed umask", at, e.name));
    if (e.unit_masks && e.unit_masks->masks.size() == 1 && e.unit_masks->default_masks.empty())
      problems.push_back(fmt::format("{}: event {} has only one unit mask but no default", at, e.name));
    if (auto f = format_.field("event"); f && (f->place(e.code) & pmu_.reserved))
      problems.push_back(fmt::format("{}: event {} has code 0x{:X}, which sets reserved bits", at, e.name, e.code));
    std::uint64_t fixed_bits = 0;  // what umask2 and set always write
    if (auto f = format_.field("umask2"); f && e.umask2) fixed_bits |= f->place(e.umask2);
    for (const auto& [name, v] : e.set)
      if (auto f = format_.field(name)) fixed_bits |= f->place(v);
    if (fixed_bits & pmu_.reserved)
      problems.push_back(fmt::format("{}: event {} sets reserved bits 0x{:X} (umask2 or set)", at, e.name,
                                     fixed_bits & pmu_.reserved));
    if (!e.extra.empty() && !extra_reg(e.extra))
      problems.push_back(fmt::format("{}: event {} needs extra register '{}', which no file declares", at, e.name, e.extra));
    for (const auto& [mod, v] : e.defaults)
      if (const ModifierDef* m = modifier(mod); m && !m->field.empty()) {
        const auto f = format_.field(m->field);
        if (f && v > f->max_value())
          problems.push_back(fmt::format("{}: event {}: default {}={} does not fit field {}", at, e.name, mod, v, m->field));
      }
  }
  // Events sharing a code are one event twice unless something else tells them apart: the unit
  // mask (fixed, extension, fields the event sets, modifier defaults such as a counter mask),
  // the extra register's value, disjoint counters (the Pentium MMX's per-counter codes) or
  // disjoint CPUs. Within one file, and compared within each code only: a model's catalog has hundreds of events and
  // dozens per code.
  std::vector<const EventDef*> by_code;
  by_code.reserve(events_.size());
  for (const auto& e : events_) by_code.push_back(&e);
  std::stable_sort(by_code.begin(), by_code.end(), [](const EventDef* a, const EventDef* b) { return a->code < b->code; });
  for (std::size_t i = 0; i < by_code.size(); ++i) {
    const EventDef& e = *by_code[i];
    for (std::size_t j = i + 1; j < by_code.size() && by_code[j]->code == e.code; ++j) {
      const EventDef& other = *by_code[j];
      const bool disjoint_counters =
          !e.counters.empty() && !other.counters.empty() &&
          std::none_of(e.counters.begin(), e.counters.end(), [&](unsigned c) {
            return std::find(other.counters.begin(), other.counters.end(), c) != other.counters.end();
          });
      // A later file restating an earlier file's event under its own name (a model's catalog
      // giving INST_RETIRED.ANY_P beside its backend data file's INSTRUCTION_RETIRED) is no defect.
      // Fixed-only events on different fixed counters (Nehalem's lists give all three 00H/00H).
      const bool other_fixed = (e.fixed_only || other.fixed_only) && e.fixed != other.fixed;
      if (disjoint_counters || other_fixed || e.source.file != other.source.file) continue;
      const bool shared_cpu = e.cpus.empty() || other.cpus.empty() ||
                              std::any_of(e.cpus.begin(), e.cpus.end(), [&](const std::string& t) {
                                return std::find(other.cpus.begin(), other.cpus.end(), t) != other.cpus.end();
                              });
      const bool same_selection = e.fixed_umask == other.fixed_umask && e.umask2 == other.umask2 &&
                                  e.set == other.set && e.defaults == other.defaults && e.extra == other.extra &&
                                  e.extra_value == other.extra_value && e.code2 == other.code2 &&
                                  e.precise == other.precise;  // a precise (PEBS) twin is its own event
      if (shared_cpu && same_selection) {
        const bool e_first = &e < &other;  // report at the later one, naming the earlier first
        const EventDef& first = e_first ? e : other;
        const EventDef& later = e_first ? other : e;
        problems.push_back(fmt::format("{}: events {} and {} share code 0x{:02X} on the same CPUs", later.source.str(),
                                       first.name, later.name, e.code));
      }
    }
  }
  return problems;
}

}  // namespace pmc
