// The archperf backend: top-down level 1 and 2 in hardware, PERF_METRICS (MSR 329H) beside fixed
// counter 3 (archperf.hpp, "Top-down"; facts: docs/hardware/archperf.md section 12).
#include "archperf.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pmc::archperf {

void add_metric_counters(PmuInfo& pmu, const EventCatalog& data) {
  const CounterInfo* slots = pmu.fixed(kSlotsCounter);
  if (!slots) return;  // no fixed counter 3: no PERF_METRICS (the events are refused: no counter)
  bool any = false;
  for (const EventDef& e : data.events()) {
    if (!e.fixed || *e.fixed < kMetricBase || *e.fixed >= kMetricBase + kMetricBytes) continue;
    if (pmu.fixed(*e.fixed)) continue;
    // No control register of its own (fixed counter 3's field governs it) and no RDPMC index of
    // its own. 64 bits: what it reads is worked out, not a register, and may fall between two
    // reads (a fraction drops), so the session's wrap-corrected deltas must be modulo 2^64.
    pmu.counters.push_back(CounterInfo{CounterKind::fixed, *e.fixed, 64, 0, kPerfMetrics, 0, 0, std::nullopt});
    any = true;
  }
  if (!any) return;
  pmu.registers.push_back(kPerfMetrics);
  std::sort(pmu.registers.begin(), pmu.registers.end());
  pmu.registers.erase(std::unique(pmu.registers.begin(), pmu.registers.end()), pmu.registers.end());
}

std::uint64_t read_metric(RegisterFile& regs, const PmuInfo& pmu, const CounterInfo& c) {
  const CounterInfo* slots_counter = pmu.fixed(kSlotsCounter);
  const std::uint64_t slots = regs.read(slots_counter->counter_msr) & slots_counter->width_mask();
  const std::uint64_t byte = (regs.read(kPerfMetrics) >> (8 * (c.index - kMetricBase))) & 0xFF;
  // Linux: slots x byte / 0xFF, the quotient truncated; the product needs 72 bits at most.
  return static_cast<std::uint64_t>(static_cast<counting::u128>(slots) * byte / 0xFF);
}

std::optional<std::uint64_t> slots_control(std::span<const Assignment> set) {
  std::optional<std::uint64_t> control;
  const Assignment* first = nullptr;
  for (const Assignment& a : set) {
    if (a.counter->kind != CounterKind::fixed || (a.counter->index != kSlotsCounter && !is_metric(*a.counter))) continue;
    const std::uint64_t mine = a.encoding->fixed_control & 0x7;
    if (control && *control != mine)
      throw Error(errc::invalid_argument,
                  fmt::format("'{}' and '{}' both count with fixed counter 3 (TOPDOWN.SLOTS and PERF_METRICS) but "
                              "filter privilege levels differently; give them the same u / k modifiers",
                              first->encoding->event, a.encoding->event));
    control = mine;
    if (!first) first = &a;
  }
  return control;
}

}  // namespace pmc::archperf
