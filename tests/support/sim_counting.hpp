// Counting catalog events on a bundled CPUID dump's simulated PMU through the public API: the
// tests of workload signals named after events (tests/models/*/test_*_event_signals.cpp).
#pragma once

#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace pmc_test {

// A Hal on data/cpuid/<dump> with access "sim" (built here: the user's config file is never read).
inline pmc::Config sim_config_for(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = (std::filesystem::path(PMC_SOURCE_DIR) / "data" / "cpuid" / dump).string();
  cfg.backend = "auto";
  cfg.access = "sim";
  return cfg;
}

// Counts `events` over the workload in one session (one group: each event on a counter of its
// own, so nothing is multiplexed) and returns the values in the order given.
inline std::vector<std::uint64_t> count(const pmc::Hal& hal, const pmc::Workload& w,
                                        const std::vector<std::string>& events) {
  pmc::Session s = hal.session();
  s.add_group(events);
  s.run(w);
  std::vector<std::uint64_t> out;
  for (const pmc::Reading& r : s.read()) out.push_back(r.value);
  if (out.size() != events.size()) throw std::runtime_error("one reading per event expected");
  return out;
}

inline std::uint64_t count1(const pmc::Hal& hal, const pmc::Workload& w, const std::string& event) {
  return count(hal, w, {event}).at(0);
}

}  // namespace pmc_test
