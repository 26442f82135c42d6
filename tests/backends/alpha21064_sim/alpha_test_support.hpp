// What the tests of the alpha21064_sim backend share (test_alpha_backend.cpp,
// test_alpha_sessions.cpp): the Hal with the backend chosen by name (no CPUID dump matches it).
#pragma once

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace pmc_test::alpha21064 {

namespace fs = std::filesystem;
using pmc::errc;
using u64 = std::uint64_t;

inline const fs::path kDumps = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";

inline pmc::Config alpha_config(const std::string& dump = "pentium-iii.txt") {
  pmc::Config cfg;
  cfg.cpu = (kDumps / dump).string();
  cfg.backend = "alpha21064_sim";
  return cfg;
}

inline pmc::Hal alpha() { return pmc::Hal::open(alpha_config()); }

}  // namespace pmc_test::alpha21064
