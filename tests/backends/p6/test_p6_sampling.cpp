// Sampling on the simulated P6 end to end: `period=N` on an event, the p6 driver presetting
// -N with INT (PerfEvtSel bit 20), the P6 model raising a PMI at each overflow through LVTPC and
// its simulated handler reloading the counter and recording the interrupted PC and mode
// (docs/profiling.md; docs/hardware/p6.md section 4a). Every expected number is worked out by
// hand below from the workload, the period and the rule the docs state: the m-th interrupt
// falls on the m x period-th event, in the cycle that event happens in; cycle j of a segment of
// N cycles over pc = [b, e) runs at b + floor(j (e - b) / N); buckets are 16 bytes.
#define BOOST_TEST_MODULE p6_sampling
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/messages.hpp"
#include "support/sampling.hpp"

namespace {

using pmc_test::contains;
using pmc_test::message_of;

using u64 = std::uint64_t;

pmc::Hal open(const std::string& dump = "pentium-iii.txt", const std::string& access = "") {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  if (!access.empty()) cfg.access = access;
  return pmc::Hal::open(cfg);
}

using pmc_test::Buckets;
using pmc_test::Profiled;
const pmc::PcRange& kUserCode = pmc_test::kHandWorkedUser;
const pmc::PcRange& kKernelCode = pmc_test::kHandWorkedKernel;

Profiled profile(const std::vector<std::string>& events, const pmc::PcRange& range) {
  return pmc_test::profile_hand_worked("pentium-iii.txt", events, range);
}
u64 level(const pmc::LevelHistogram& h, const std::string& prefix) { return pmc_test::level_samples(h, prefix); }
Buckets filled(const pmc::PcProfile& p) { return pmc_test::filled_buckets(p); }
pmc::Workload hand_worked() { return pmc_test::hand_worked_sampling(); }

}  // namespace

// A 10,000 user cycles x 3 instructions, pc [0x400000, 0x400400); B 5,000 kernel cycles x 2, pc
// [0xC0100000, 0xC0100100); C 2,000 user cycles x 1, no pc.
// 42,000 instructions / 7,000 = 6 interrupts, at instructions 7,000, 14,000, 21,000, 28,000
// (segment A), 35,000 (B: its 5,000th) and 42,000 (C: its 2,000th, its last). User 5, kernel 1.
// In A, instruction E is in cycle ceil(E / 3) - 1, at 0x400000 + floor(cycle x 1024 / 10000):
//   7,000: cycle 2,333, + 238 (0xEE), bucket 14     14,000: cycle 4,666, + 477, bucket 29
//  21,000: cycle 6,999, + 716, bucket 44            28,000: cycle 9,333, + 955, bucket 59
// C has no pc, so the user profile holds 4 of the 5 user samples.
BOOST_AUTO_TEST_CASE(instructions_every_7000_sample_at_the_hand_worked_pcs) {
  const Profiled p = profile({"INST_RETIRED:period=7000"}, kUserCode);
  BOOST_TEST(p.counts == std::vector<u64>{42'000}, boost::test_tools::per_element());  // the count is unchanged
  BOOST_TEST(p.levels.total() == 6u);
  BOOST_TEST(level(p.levels, "user") == 5u);
  BOOST_TEST(level(p.levels, "kernel") == 1u);
  BOOST_TEST(p.profile.bucket_bytes == 16u);
  BOOST_TEST(p.profile.samples.size() == 64u);  // 1,024 bytes
  BOOST_TEST(filled(p.profile) == (Buckets{{14, 1}, {29, 1}, {44, 1}, {59, 1}}), boost::test_tools::per_element());
  BOOST_TEST(p.profile.bucket(14).start == 0x4000E0u);
}

// The kernel sample: B's 5,000th instruction, in cycle ceil(5000 / 2) - 1 = 2,499, at
// 0xC0100000 + floor(2499 x 256 / 5000) = + 127: bucket 7 of 16.
BOOST_AUTO_TEST_CASE(the_kernel_sample_lands_in_the_kernel_profile) {
  const Profiled p = profile({"INST_RETIRED:period=7000"}, kKernelCode);
  BOOST_TEST(p.profile.samples.size() == 16u);
  BOOST_TEST(filled(p.profile) == (Buckets{{7, 1}}), boost::test_tools::per_element());
}

// Both counters sample: CPU_CLK_UNHALTED every 4,000 of the 17,000 cycles gives 4 more, at
// cycles 4,000 and 8,000 (A: cycles 3,999 and 7,999 at + 409 and + 819, buckets 25 and 51),
// 12,000 (B, kernel) and 16,000 (C, user, no pc). Levels: user 5 + 3, kernel 1 + 1.
BOOST_AUTO_TEST_CASE(two_sampling_counters_add_their_samples) {
  const Profiled p = profile({"INST_RETIRED:period=7000", "CPU_CLK_UNHALTED:period=4000"}, kUserCode);
  BOOST_TEST(p.counts == (std::vector<u64>{42'000, 17'000}), boost::test_tools::per_element());
  BOOST_TEST(level(p.levels, "user") == 8u);
  BOOST_TEST(level(p.levels, "kernel") == 2u);
  BOOST_TEST(filled(p.profile) == (Buckets{{14, 1}, {25, 1}, {29, 1}, {44, 1}, {51, 1}, {59, 1}}),
             boost::test_tools::per_element());
}

// A period longer than the count: no interrupt; user-mode only: B's instructions are neither
// counted nor sampled, so 32,000 / 7,000 = 4 samples, all in A and C (at 7,000 ... 28,000: A).
BOOST_AUTO_TEST_CASE(the_period_and_the_privilege_filter_decide_the_samples) {
  const Profiled none = profile({"INST_RETIRED:period=50000"}, kUserCode);
  BOOST_TEST(none.counts == std::vector<u64>{42'000}, boost::test_tools::per_element());
  BOOST_TEST(none.levels.total() == 0u);
  const Profiled user = profile({"INST_RETIRED:u:period=7000"}, kUserCode);
  BOOST_TEST(user.counts == std::vector<u64>{32'000}, boost::test_tools::per_element());
  BOOST_TEST(level(user.levels, "user") == 4u);
  BOOST_TEST(level(user.levels, "kernel") == 0u);
}

// Reset empties the histograms and restarts the period: a second run gives the same samples.
BOOST_AUTO_TEST_CASE(reset_starts_again) {
  pmc::Session s = open().session();
  s.add("INST_RETIRED:period=7000");
  s.profile({true, kUserCode});
  const pmc::Workload w = hand_worked();
  s.run(w);
  s.reset();
  s.run(w);
  BOOST_TEST(s.read().at(0).value == 42'000u);
  BOOST_TEST(s.level_histograms().at(0).total() == 6u);
  BOOST_TEST(filled(s.pc_profiles().at(0)) == (Buckets{{14, 1}, {29, 1}, {44, 1}, {59, 1}}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_canonical_form_carries_the_period) {
  pmc::Session s = open().session();
  s.add("INST_RETIRED:period=7000");
  BOOST_TEST(contains(s.read().at(0).canonical, ":period=7000"));
}

// Bad periods are refused naming the event and the reason.
BOOST_AUTO_TEST_CASE(bad_periods_are_refused_with_the_reason) {
  pmc::Session s = open().session();
  const std::string zero = message_of([&] { s.add("INST_RETIRED:period=0"); });
  BOOST_TEST(contains(zero, "INST_RETIRED:period=0"));
  BOOST_TEST(contains(zero, "not a sampling period"));
  const std::string big = message_of([&] { s.add("INST_RETIRED:period=2147483648"); });
  BOOST_TEST(contains(big, "period=2147483648 is above 2147483647"));
  BOOST_TEST(contains(big, "sign-extends bit 31"));
  // A profile needs an event that samples.
  s.add("INST_RETIRED");
  s.profile({true, kUserCode});
  const std::string none = message_of([&] { s.start(); });
  BOOST_TEST(contains(none, "add period=N"));
}

// Access "msr" cannot take the interrupt in user space: refused before anything is opened.
BOOST_AUTO_TEST_CASE(msr_access_refuses_sampling) {
  pmc::Session s = open("pentium-iii.txt", "msr").session();
  const std::string why = message_of([&] { s.add("INST_RETIRED:period=7000"); });
  BOOST_TEST(contains(why, "INST_RETIRED:period=7000"));
  BOOST_TEST(contains(why, "access 'msr' cannot receive"));
}
