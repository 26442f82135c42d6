// Sampling on the simulated architectural PMU end to end (docs/profiling.md; docs/hardware/
// archperf.md section 4a): `period=N` on an event of a general-purpose counter (INT, PERFEVTSEL
// bit 20) and of a fixed counter (its PMI bit in IA32_FIXED_CTR_CTRL), the archperf driver's
// preset and reload, the model's simulated PMI handler. Expected numbers are worked out by hand
// from tests/data/workloads/hand-worked-sampling.toml (see its comments).
#define BOOST_TEST_MODULE archperf_sampling
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
// kernel cycles x 2 over [0xC0100000, 0xC0100100); C 2,000 user cycles x 1, no pc: 42,000
// instructions. INST_RETIRED.ANY counts them on fixed counter 0 and INST_RETIRED.ANY_P on a
// general counter, each every 7,000: 6 samples each, at instructions 7,000 ... 42,000: four in A
// (cycles 2,333, 4,666, 6,999, 9,333: + floor(cycle x 1024 / 10000) = 238, 477, 716, 955, 16-byte
// buckets 14, 29, 44, 59), one in B (kernel), one in C (user, no pc). So user 2 x 5, kernel 2 x 1,
// and each of the four buckets holds 2.
BOOST_AUTO_TEST_CASE(a_fixed_and_a_general_counter_sample_exactly) {
  const auto p = pmc_test::profile_hand_worked("intel-skl.txt", {"INST_RETIRED.ANY:period=7000", "INST_RETIRED.ANY_P:period=7000"},
                                               pmc_test::kHandWorkedUser);
  BOOST_TEST(p.counts == (std::vector<u64>{42'000, 42'000}), boost::test_tools::per_element());
  BOOST_TEST(pmc_test::level_samples(p.levels, "user") == 10u);
  BOOST_TEST(pmc_test::level_samples(p.levels, "kernel") == 2u);
  BOOST_TEST(pmc_test::filled_buckets(p.profile) == (Buckets{{14, 2}, {29, 2}, {44, 2}, {59, 2}}),
             boost::test_tools::per_element());
}

// Unhalted cycles on fixed counter 1 every 4,000 of the 17,000: 4 samples, at cycles 4,000 and
// 8,000 of A (cycle 3,999 at + 409, bucket 25; 7,999 at + 819, bucket 51), 12,000 (B: kernel,
// its cycle 1,999 at 0xC0100000 + floor(1999 x 256 / 5000) = + 102, bucket 6 of the kernel
// profile) and 16,000 (C: user, no pc).
BOOST_AUTO_TEST_CASE(unhalted_cycles_sample_on_fixed_counter_1) {
  const auto user = pmc_test::profile_hand_worked("intel-skl.txt", {"CPU_CLK_UNHALTED.THREAD:period=4000"},
                                                  pmc_test::kHandWorkedUser);
  BOOST_TEST(user.counts == std::vector<u64>{17'000}, boost::test_tools::per_element());
  BOOST_TEST(pmc_test::level_samples(user.levels, "user") == 3u);
  BOOST_TEST(pmc_test::level_samples(user.levels, "kernel") == 1u);
  BOOST_TEST(pmc_test::filled_buckets(user.profile) == (Buckets{{25, 1}, {51, 1}}), boost::test_tools::per_element());
  const auto kernel = pmc_test::profile_hand_worked("intel-skl.txt", {"CPU_CLK_UNHALTED.THREAD:period=4000"},
                                                    pmc_test::kHandWorkedKernel);
  BOOST_TEST(pmc_test::filled_buckets(kernel.profile) == (Buckets{{6, 1}}), boost::test_tools::per_element());
}

// IA32_PMCx takes a 32-bit preset sign-extended: a period above 2^31 - 1 is refused.
BOOST_AUTO_TEST_CASE(a_period_above_the_preset_range_is_refused) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/intel-skl.txt";
  pmc::Session s = pmc::Hal::open(cfg).session();
  std::string why;
  try {
    s.add("INST_RETIRED.ANY_P:period=4294967296");
  } catch (const pmc::Error& e) {
    why = e.what();
  }
  BOOST_TEST(contains(why, "INST_RETIRED.ANY_P:period=4294967296"));
  BOOST_TEST(contains(why, "above 2147483647"));
}
