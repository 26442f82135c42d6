// Sampling on the simulated AMD PMU end to end (docs/profiling.md; docs/hardware/amd.md section
// 4a): `period=N` sets INT (PERF_CTL bit 20), the amd driver presets -N and its simulated PMI
// handler reloads it, on a PerfMonV2 part (Zen 4: its global status cleared by the handler) and
// a legacy one (K8). Expected numbers are worked out by hand from
// tests/data/workloads/hand-worked-sampling.toml (see its comments).
#define BOOST_TEST_MODULE amd_sampling
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/sampling.hpp"

namespace {

using u64 = std::uint64_t;
using pmc_test::Buckets;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// The workload: A 10,000 user cycles x 3 instructions over pc [0x400000, 0x400400); B 5,000
// kernel cycles x 2; C 2,000 user cycles x 1, no pc: 42,000 instructions, 17,000 cycles.
// Instructions every 7,000: 6 samples (four in A at buckets 14, 29, 44, 59; one in B; one in C).
// Cycles every 4,000: 4 samples (cycles 3,999 and 7,999 of A at buckets 25 and 51; one in B;
// one in C). User 5 + 3, kernel 1 + 1.
BOOST_AUTO_TEST_CASE(instructions_and_cycles_sample_exactly) {
  for (const char* dump : {"amd-zen4-genoa.txt", "amd-k8-revf.txt"}) {
    BOOST_TEST_CONTEXT(dump) {
      const auto p = pmc_test::profile_hand_worked(dump, {"instructions:period=7000", "cycles:period=4000"},
                                                   pmc_test::kHandWorkedUser);
      BOOST_TEST(p.counts == (std::vector<u64>{42'000, 17'000}), boost::test_tools::per_element());
      BOOST_TEST(pmc_test::level_samples(p.levels, "user") == 8u);
      BOOST_TEST(pmc_test::level_samples(p.levels, "kernel") == 2u);
      BOOST_TEST(pmc_test::filled_buckets(p.profile) ==
                     (Buckets{{14, 1}, {25, 1}, {29, 1}, {44, 1}, {51, 1}, {59, 1}}),
                 boost::test_tools::per_element());
    }
  }
}

// The preset of -N must keep bit 47 set (the driver sees the overflow as bit 47 clearing).
BOOST_AUTO_TEST_CASE(a_period_of_2_to_the_47_is_refused) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/amd-zen4-genoa.txt";
  pmc::Session s = pmc::Hal::open(cfg).session();
  std::string why;
  try {
    s.add("instructions:period=140737488355328");
  } catch (const pmc::Error& e) {
    why = e.what();
  }
  BOOST_TEST(contains(why, "above 140737488355327"));
  BOOST_TEST(contains(why, "bit 47"));
}
