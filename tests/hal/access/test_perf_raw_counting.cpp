#define BOOST_TEST_MODULE perf_raw_counting
#include <boost/test/unit_test.hpp>

// Access "perf" for PMU events, counting: the rdpmc self-monitoring read driven with a hand-made
// mmap page, and the real outcome on this machine: a counted event where Linux perf exposes a
// PMU, otherwise the error that names the missing PMU (never a zero). The raw encoding and the
// messages for each failure are in test_perf_raw.cpp.

#include "access.hpp"
#include "perf_event.hpp"
#include "perf_raw_test_support.hpp"
#include "support/messages.hpp"
#include "support/preconditions.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace {

using pmc::detail::PerfEventSpec;
using pmc_test::contains;
using perf_raw_test::p6_native;

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(user_page)

namespace {
perf_event_mmap_page page_with(std::uint32_t index, std::int64_t offset, std::uint16_t width) {
  perf_event_mmap_page p{};
  p.lock = 4;
  p.index = index;
  p.offset = offset;
  p.pmc_width = width;
  p.cap_user_rdpmc = 1;
  p.time_enabled = 1000;
  p.time_running = 500;
  return p;
}
auto no_tsc = [] { return std::uint64_t{0}; };
}  // namespace

BOOST_AUTO_TEST_CASE(rdpmc_value_is_sign_extended_from_pmc_width) {
  auto p = page_with(2, 1000, 48);
  std::uint32_t asked = 99;
  auto r = pmc::detail::read_user_page(p, [&](std::uint32_t i) { asked = i; return std::uint64_t{0xFFFFFFFFFFF0}; }, no_tsc);
  BOOST_REQUIRE(r);
  BOOST_TEST(asked == 1u);          // rdpmc(index - 1)
  BOOST_TEST(r->count == 984u);     // 1000 + (-16 in 48 bits)
  BOOST_TEST(r->time_enabled == 1000u);  // no cap_user_time: the page's times as they are
  auto positive = pmc::detail::read_user_page(p, [](std::uint32_t) { return std::uint64_t{0x10}; }, no_tsc);
  BOOST_TEST(positive->count == 1016u);
  // Bits above the width are ignored (the counter is width bits wide).
  auto high = pmc::detail::read_user_page(p, [](std::uint32_t) { return std::uint64_t{0xABCD000000000010}; }, no_tsc);
  BOOST_TEST(high->count == 1016u);
}

BOOST_AUTO_TEST_CASE(no_fast_path_without_a_counter_or_permission) {
  auto idle = page_with(0, 1000, 48);  // not on a counter now
  BOOST_TEST(!pmc::detail::read_user_page(idle, [](std::uint32_t) { return std::uint64_t{0}; }, no_tsc));
  auto denied = page_with(1, 1000, 48);
  denied.cap_user_rdpmc = 0;
  int calls = 0;
  BOOST_TEST(!pmc::detail::read_user_page(denied, [&](std::uint32_t) { ++calls; return std::uint64_t{0}; }, no_tsc));
  BOOST_TEST(calls == 0);  // never executes rdpmc when the kernel does not allow it
}

BOOST_AUTO_TEST_CASE(seqlock_retries_when_the_kernel_updates_the_page) {
  auto p = page_with(1, 1000, 40);
  int calls = 0;
  auto r = pmc::detail::read_user_page(
      p,
      [&](std::uint32_t) {
        if (++calls == 1) {  // the kernel rewrites the page under us: lock moves, offset changes
          p.lock = p.lock + 2;
          p.offset = 5000;
        }
        return std::uint64_t{7};
      },
      no_tsc);
  BOOST_REQUIRE(r);
  BOOST_TEST(calls == 2);
  BOOST_TEST(r->count == 5007u);
}

BOOST_AUTO_TEST_CASE(times_advance_with_the_tsc) {
  auto p = page_with(1, 0, 48);
  p.cap_user_time = 1;
  p.time_offset = 100;
  p.time_mult = 3;
  p.time_shift = 1;
  // cycles 11: quot 5, rem 1 -> 100 + 5 * 3 + (1 * 3 >> 1) = 116.
  auto r = pmc::detail::read_user_page(p, [](std::uint32_t) { return std::uint64_t{0}; }, [] { return std::uint64_t{11}; });
  BOOST_REQUIRE(r);
  BOOST_TEST(r->time_enabled == 1116u);
  BOOST_TEST(r->time_running == 616u);
  // cap_user_time_short: cycles = time_cycles + ((cycles - time_cycles) & time_mask) = 8 + (5 & 3) = 9
  // -> quot 4, rem 1 -> 100 + 12 + 1 = 113.
  p.cap_user_time_short = 1;
  p.time_cycles = 8;
  p.time_mask = 3;
  r = pmc::detail::read_user_page(p, [](std::uint32_t) { return std::uint64_t{0}; }, [] { return std::uint64_t{13}; });
  BOOST_TEST(r->time_enabled == 1113u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(this_machine)

// Without a PMU (this project's machines): the event is refused with a message naming the missing
// PMU, and the session is as it was.
BOOST_AUTO_TEST_CASE(a_hardware_event_without_a_pmu_names_it, *pmc_test::requires_no_perf_pmu()) {
  pmc::Hal hal = p6_native("perf");
  BOOST_TEST(hal.access() == "perf");
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("task-clock");  // the software events are in the same group
  try {
    s.add("INST_RETIRED");
    BOOST_ERROR("a hardware event was accepted on a machine whose Linux perf exposes no PMU");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST_MESSAGE(m);
    BOOST_TEST(m.rfind("perf_event_open(INST_RETIRED, raw 0xc0)", 0) == 0u, m);
    BOOST_TEST(contains(m, "this machine exposes no hardware PMU to Linux perf (CPUID.0AH version "), m);
    BOOST_TEST(contains(m, "/sys/bus/event_source/devices/cpu missing"), m);
    BOOST_TEST(contains(m, "count on real hardware or use access = \"sim\" with a CPUID dump (the config key 'cpu')"), m);
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
  }
  BOOST_TEST(s.encodings().size() == 1u);  // the failed add changed nothing
  s.start();
  s.stop();
  BOOST_TEST(s.read().size() == 1u);
}

// With a PMU: Linux perf accepts the raw event and counts it (0xC0 is instructions retired on
// Intel and AMD alike), unless the group never got a counter.
// A sampled PMU event goes to the kernel too (its own ring buffer): without a PMU it fails to
// open, and the message names the event and the missing PMU.
BOOST_AUTO_TEST_CASE(a_sampled_hardware_event_without_a_pmu_names_it, *pmc_test::requires_no_perf_pmu()) {
  pmc::Hal hal = p6_native("perf");
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  try {
    s.add("INST_RETIRED:period=10000:pp");
    BOOST_ERROR("a sampled hardware event was accepted on a machine whose Linux perf exposes no PMU");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.rfind("perf_event_open(INST_RETIRED:period=10000:pp, raw 0xc0)", 0) == 0u, m);
    BOOST_TEST(contains(m, "this machine exposes no hardware PMU to Linux perf"), m);
  }
  BOOST_TEST(s.read().empty());
}

BOOST_AUTO_TEST_CASE(a_hardware_event_counts_with_a_pmu, *pmc_test::requires_perf_pmu()) {
  pmc::Hal hal = p6_native("perf");
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("task-clock");
  s.add("INST_RETIRED");
  s.start();
  volatile std::uint64_t x = 0;
  for (int i = 0; i < 100000; ++i) x = x + static_cast<std::uint64_t>(i);
  s.stop();
  auto r = s.read();
  BOOST_REQUIRE_EQUAL(r.size(), 2u);
  BOOST_TEST((r[1].value > 0u || r[1].time_running == 0u), r[1].value);
  BOOST_TEST(r[1].canonical.rfind("p6::INST_RETIRED", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(a_hardware_perf_event_without_a_pmu_is_refused, *pmc_test::requires_no_perf_pmu()) {
  pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
  PerfEventSpec e;
  e.event = "instructions";
  e.type = PERF_TYPE_HARDWARE;
  e.config = PERF_COUNT_HW_INSTRUCTIONS;
  e.hardware = true;
  try {
    perf.add(e);
    BOOST_ERROR("perf_event_open of a hardware event succeeded without a PMU");
  } catch (const pmc::Error& err) {
    BOOST_TEST(contains(err.what(), "exposes no hardware PMU"), err.what());
  }
}

BOOST_AUTO_TEST_CASE(rdpmc_fast_path_when_the_kernel_allows_it, *pmc_test::requires_perf_pmu()) {
  pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
  PerfEventSpec e;
  e.event = "instructions";
  e.type = PERF_TYPE_HARDWARE;
  e.config = PERF_COUNT_HW_INSTRUCTIONS;
  e.hardware = true;
  perf.add(e);
  perf.start();
  std::uint64_t last = 0;
  for (int round = 0; round < 3; ++round) {
    volatile std::uint64_t x = 0;
    for (int i = 0; i < 10000; ++i) x = x + static_cast<std::uint64_t>(i);
    auto c = perf.read();
    BOOST_TEST(c[0][0].value >= last);  // monotonic whichever path read it
    last = c[0][0].value;
  }
  std::ifstream rdpmc_file("/sys/bus/event_source/devices/cpu/rdpmc");
  int allowed = 0;
  rdpmc_file >> allowed;
  BOOST_TEST_MESSAGE("read path: " << perf.last_read_path() << ", sysfs rdpmc " << allowed);
  if (allowed == 0) BOOST_TEST(perf.last_read_path() == "read");
  perf.stop();
  auto stopped = perf.read();
  BOOST_TEST(perf.last_read_path() == "read");  // not on a counter while stopped
  BOOST_TEST(stopped[0][0].value >= last);
}

BOOST_AUTO_TEST_CASE(a_cpuid_dump_is_not_counted_with_perf) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  cfg.access = "perf";
  pmc::Hal hal = pmc::Hal::open(cfg);
  pmc::Session s = hal.session();
  s.add("page-faults");  // HAL events count this machine: fine
  try {
    s.add("instructions");
    BOOST_ERROR("counted a CPUID dump's PMU with perf");
  } catch (const pmc::Error& e) {
    BOOST_TEST(contains(e.what(), "CPUID dump"), e.what());
    BOOST_TEST(contains(e.what(), "access = \"sim\""), e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()
