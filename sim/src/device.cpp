// The registry of simulated PMU device models, and running a workload through one.
#include <pmc/sim/device.hpp>

#include <pmc/error.hpp>

#include "archperf_model.hpp"
#include "alpha21064_model.hpp"
#include "p6_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace pmc::sim {

std::unique_ptr<Device> make_device(std::string_view model, const CpuInfo& cpu) {
  if (model == "p6") return std::make_unique<P6Device>(cpu);
  if (model == "alpha21064") return std::make_unique<Alpha21064Device>();  // CPU 0 of its own system
  if (model == "archperf") return std::make_unique<ArchPerfDevice>(cpu);
  throw Error(errc::not_found,
              fmt::format("no simulated device model '{}' (available: alpha21064, archperf, p6)", model));
}

namespace {

// An upper bound of the events any counter can add per cycle of `s`: every event counts one
// signal, or a sum of distinct signals (MESI states, self + other, a name and its alias), or at
// most 1 per cycle (CMASK, edge detect, unhalted cycles). Saturates at 2^64 - 1.
std::uint64_t max_events_per_cycle(const Segment& s) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t sum = 0;
  for (const auto& [name, k] : s.signals) sum = k > kMax - sum ? kMax : sum + k;
  return std::max<std::uint64_t>(sum, 1);
}

}  // namespace

void run_workload(Device& device, const Workload& workload, unsigned counter_width,
                  const std::function<void()>& between_chunks) {
  if (counter_width < 2 || counter_width > 64) {
    throw Error(errc::invalid_argument,
                fmt::format("counter width {} is not in 2..64", counter_width));
  }
  // A chunk may add at most half the counter range minus one, so a reader that folds the
  // difference of two readings modulo 2^width can never miss a wrap.
  const std::uint64_t budget = (std::uint64_t{1} << (counter_width - 1)) - 1;
  for (std::size_t index = 0; index < workload.segments.size(); ++index) {
    const Segment& segment = workload.segments[index];
    if (segment.cycles == 0) continue;
    const std::uint64_t rate = max_events_per_cycle(segment);
    const std::uint64_t chunk = budget / rate;
    if (chunk == 0) {
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {}: up to {} events per cycle overflow half of a "
                              "{}-bit counter in a single cycle",
                              workload.source.empty() ? workload.name : workload.source,
                              index + 1, rate, counter_width));
    }
    Segment piece = segment;
    for (std::uint64_t left = segment.cycles; left > 0; left -= piece.cycles) {
      piece.cycles = std::min(left, chunk);
      device.run(piece);
      if (between_chunks) between_chunks();
    }
  }
}

}  // namespace pmc::sim
