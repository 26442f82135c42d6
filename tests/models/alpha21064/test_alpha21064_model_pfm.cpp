#define BOOST_TEST_MODULE alpha21064_model_pfm
#include <boost/test/unit_test.hpp>

// The emulated Alpha 21064's pfm(7) driver (<pmc/sim/alpha21064.hpp>) against
// docs/hardware/alpha21064.md ("sheet", by section; "5.N" is item N of section 5, "Behaviours worth
// a test") and the OSF/1 pfm(7) page: item 5.11 (EACH, ALL and ONE), the open modes and errors,
// items and ranges, segments reaching their CPU, and the workload keys cpu, pid and parent.
// Expected values are worked out by hand from those and from the [U] policies listed at the top of
// sim/models/alpha21064/alpha21064_model.cpp, never from a run.

#include "alpha21064_model_support.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

using namespace alpha21064_model_test;

BOOST_AUTO_TEST_CASE(s5_11_each_and_all) {
  // Three CPUs; CPU i runs (i + 1) x 4096 cycles. EACH: per CPU; ALL: one sum; ONE: one CPU.
  PfmDriver pfm(3);
  int each = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenEach, {}, each) == 0);
  BOOST_TEST(pfm.set_mux(each, mux0(CYCLES) | PC0) == 0);
  BOOST_TEST(pfm.set_items(each, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING) == 0);
  BOOST_TEST(pfm.set_range(each, a::ProfileMode::user, 0x1000, 0x1100) == 0);
  BOOST_TEST(pfm.enable(each) == 0);
  for (unsigned i = 0; i < 3; ++i) {
    pmc::OwnedSegment s = seg((i + 1) * 4096);
    s->cpu = i;
    s->pc_begin = 0x1000;
    s->pc_end = 0x1100;
    pfm.run(s);
  }
  std::size_t n = 0;
  BOOST_TEST(pfm.entries(each, n) == 0);
  BOOST_TEST(n == 3u);
  std::vector<PfmDriver::Counts> counts;
  BOOST_TEST(pfm.get_counts(each, counts) == 0);
  BOOST_REQUIRE(counts.size() == 3u);
  for (unsigned i = 0; i < 3; ++i) {
    BOOST_TEST(counts[i].cntr0 == i + 1);
    BOOST_TEST(counts[i].cycles == (i + 1) * 4096u);
  }
  std::vector<a::IplHistogram> hist;
  BOOST_TEST(pfm.get_ipl_histograms(each, hist) == 0);
  BOOST_REQUIRE(hist.size() == 3u);
  BOOST_TEST(hist[2][8] == 3u);
  u64 rsize = 0;
  BOOST_TEST(pfm.get_rsize(each, rsize) == 0);
  BOOST_TEST(rsize == 3u * 64);  // 16 buckets x 4 bytes, per CPU
  std::vector<std::uint32_t> profile;
  BOOST_TEST(pfm.read_profile(each, profile) == 0);
  BOOST_TEST(profile.size() == 48u);
  BOOST_TEST(pfm.close(each) == 0);

  int all = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, all) == 0);
  BOOST_TEST(pfm.entries(all, n) == 0);
  BOOST_TEST(n == 1u);
  BOOST_TEST(pfm.get_counts(all, counts) == 0);  // opening keeps the counts
  BOOST_REQUIRE(counts.size() == 1u);
  BOOST_TEST(counts[0].cntr0 == 1u + 2 + 3);
  BOOST_TEST(counts[0].cycles == 6u * 4096);
  BOOST_TEST(pfm.get_rsize(all, rsize) == 0);
  BOOST_TEST(rsize == 0u);  // closing freed the profile, opening selects counters only
  BOOST_TEST(pfm.close(all) == 0);

  int one = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenOne, {1u, 1}, one) == 0);
  BOOST_TEST(pfm.get_counts(one, counts) == 0);
  BOOST_REQUIRE(counts.size() == 1u);
  BOOST_TEST(counts[0].cntr0 == 2u);
}

// ---------------------------------------------------------------------------------------------
// The pfm(7) driver's open modes and errors.

BOOST_AUTO_TEST_CASE(open_modes_and_busy) {
  PfmDriver pfm(2);
  int fd = -1;
  BOOST_TEST(pfm.open(0, {}, fd) == EINVAL);                          // no mode
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {}, fd) == EINVAL);        // not bound
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {2u, 1}, fd) == ENODEV);   // no CPU 2
  int one = -1;
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne | 0 /* O_RDONLY */, {0u, 1}, one) == 0);
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {0u, 1}, fd) == EBUSY);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == EBUSY);
  BOOST_TEST(pfm.open(PfmDriver::kOpenEach, {}, fd) == EBUSY);
  int other = -1;
  BOOST_TEST(pfm.open(PfmDriver::kOpenOne, {1u, 1}, other) == 0);
  BOOST_TEST(other != one);
  BOOST_TEST(pfm.close(one) == 0);
  BOOST_TEST(pfm.close(one) == EBADF);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == EBUSY);  // CPU 1 still open
  BOOST_TEST(pfm.close(other) == 0);
  BOOST_TEST(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.enable(fd + 1) == EBADF);
  BOOST_TEST_MESSAGE("open disables, logs all and collects counters only");
  BOOST_TEST(pfm.set_items(fd, ITEM_IPL) == 0);
  BOOST_TEST(pfm.log_select(fd, {}) == 0);
  BOOST_TEST(pfm.enable(fd) == 0);
  BOOST_TEST(pfm.cpu(1).monitoring());
  BOOST_TEST(pfm.close(fd) == 0);
  BOOST_TEST(!pfm.cpu(1).monitoring());
  BOOST_TEST(pfm.open(PfmDriver::kOpenEach, {}, fd) == 0);
  BOOST_TEST(pfm.cpu(0).items() == ITEM_COUNTERS);
  BOOST_TEST(pfm.cpu(0).log_option() == 1u);
  BOOST_TEST(!pfm.cpu(0).monitoring());
  BOOST_TEST(faults([&] { PfmDriver none(0); }, errc::invalid_argument));
  BOOST_TEST(faults([&] { (void)pfm.cpu(2); }, errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(items_ranges_and_their_errors) {
  PfmDriver pfm(1);
  int fd = -1;
  BOOST_REQUIRE(pfm.open(PfmDriver::kOpenAll, {}, fd) == 0);
  BOOST_TEST(pfm.set_items(fd, 0) == EINVAL);   // pfm(7): no items
  BOOST_TEST(pfm.set_items(fd, 8) == EINVAL);
  BOOST_TEST(pfm.set_items(fd, -1) == EINVAL);
  std::vector<a::IplHistogram> hist;
  BOOST_TEST(pfm.get_ipl_histograms(fd, hist) == EINVAL);  // PFM_IPL not selected
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 0, 16) == EINVAL);  // not open for profiling
  u64 rsize = 99;
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);
  BOOST_TEST(pfm.set_items(fd, ITEM_PROFILING) == 0);
  std::vector<PfmDriver::Counts> counts;
  BOOST_TEST(pfm.get_counts(fd, counts) == EINVAL);  // PFM_COUNTERS not selected
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);                           // no range yet
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 32, 32) == EINVAL);
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::kernel, 0, 1ULL << 24) == ENOMEM);  // 2^20 buckets
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::kernel, 0, (1ULL << 24) - 1) == 0);
  BOOST_TEST(pfm.set_range(fd, a::ProfileMode::user, 0x100, 0x121) == 0);  // 33 bytes: 3 buckets
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 12u);
  BOOST_TEST((pfm.cpu(0).profile().mode == a::ProfileMode::user));
  std::vector<std::uint32_t> buckets;
  BOOST_TEST(pfm.read_profile(fd, buckets) == 0);
  BOOST_TEST(buckets.size() == 3u);
  BOOST_TEST(pfm.set_items(fd, ITEM_COUNTERS) == 0);
  BOOST_TEST(pfm.get_rsize(fd, rsize) == 0);
  BOOST_TEST(rsize == 0u);                           // profiling not selected
}

BOOST_AUTO_TEST_CASE(segments_reach_their_cpu) {
  PfmDriver pfm(2);
  auto w = pmc::parse_workload("[[segment]]\ncycles = 5\ncpu = 1\n[[segment]]\ncycles = 5\ncpu = 2\n",
                                    "w.toml");
  BOOST_TEST(faults([&] { pfm.run(w); }, errc::invalid_argument));
  BOOST_TEST(pfm.cpu(1).cycle_count() == 0u);  // checked before anything ran
  // A lone device is CPU 0 and ignores the other CPUs' segments.
  Chip c(mux0(CYCLES) | PC0);
  pmc::OwnedSegment s = seg(4096);
  s->cpu = 1;
  c.d.run(s);
  BOOST_TEST(c.d.cycle_count() == 0u);
}

// (Moved from tests/backends/alpha21064_sim/test_alpha_backend.cpp, which reaches the chip only through a session now.)
BOOST_AUTO_TEST_CASE(the_device_executes_its_own_cpus_segments) {
  pmc::sim::Alpha21064Device cpu1(1);
  pmc::Segment s;
  s.cycles = 1;
  s.cpu = 1;
  BOOST_TEST(cpu1.executes(s));
  s.cpu = 0;
  BOOST_TEST(!cpu1.executes(s));
}

BOOST_AUTO_TEST_CASE(workload_keys_cpu_pid_parent) {
  auto w = pmc::parse_workload(
      "[[segment]]\ncycles = 5\ncpu = 3\npid = 100\n[[segment]]\ncycles = 5\npid = 200\nparent = 100\n", "w.toml");
  BOOST_TEST_REQUIRE(w.size() == 2u);
  BOOST_TEST(w.segment(0).cpu == 3u);
  BOOST_TEST(w.segment(0).pid == 100u);
  BOOST_TEST(w.segment(0).parent == 0u);
  BOOST_TEST(w.segment(1).parent == 100u);
  const char* bad[] = {
      "[[segment]]\ncycles = 5\ncpu = 64\n",
      "[[segment]]\ncycles = 5\npid = -1\n",
      "[[segment]]\ncycles = 5\nparent = 7\n",
      "[[segment]]\ncycles = 5\npid = 7\nparent = 7\n",
      "[[segment]]\ncycles = 5\npid = 7\nparent = 0\n",
  };
  for (const char* text : bad) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(faults([&] { (void)pmc::parse_workload(text, "bad.toml"); }, errc::invalid_argument));
    }
  }
}
