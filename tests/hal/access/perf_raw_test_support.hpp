// What the tests of PMU events through perf (test_perf_raw.cpp, test_perf_raw_counting.cpp)
// share: a Hal with the p6 backend forced onto this machine's CPU.
#pragma once

#include <pmc/hal.hpp>

#include <string>

namespace perf_raw_test {

inline pmc::Hal p6_native(const std::string& access) {
  pmc::Config cfg;
  cfg.backend = "p6";  // forced onto this machine's CPU, whatever it is
  cfg.access = access;
  return pmc::Hal::open(cfg);
}

}  // namespace perf_raw_test
