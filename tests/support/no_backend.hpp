// A Hal with no backend at all: the CPU is a Transmeta Crusoe (a CPUID dump written here), which
// no backend drives, so sessions count only the HAL events.
#pragma once

#include "child_process.hpp"

#include <pmc/hal.hpp>

namespace pmc_test {

// The dump, written as <tmp>/crusoe.txt (for the `pmc` command: --cpuid-dump FILE).
inline fs::path no_backend_dump(const TempDir& tmp) {
  const auto dump = tmp.path() / "crusoe.txt";
  spit(dump, "CPUID 00000000: 00000001-756E6547-3638784D-54656E69\n"
             "CPUID 00000001: 00000543-00000000-00000000-00000010\n");
  return dump;
}

inline pmc::Hal no_backend_hal(const TempDir& tmp) {
  pmc::Config cfg;
  cfg.cpu = no_backend_dump(tmp).string();
  return pmc::Hal::open(cfg);
}

}  // namespace pmc_test
