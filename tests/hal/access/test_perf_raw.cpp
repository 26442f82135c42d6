#define BOOST_TEST_MODULE perf_raw
#include <boost/test/unit_test.hpp>

// Access "perf" for PMU events: the raw encoding handed to perf_event_open, the messages for
// each failure, the rdpmc self-monitoring read driven with a hand-made mmap page, and the real
// outcome on this machine: a counted event where Linux perf exposes a PMU, otherwise the error
// that names the missing PMU (never a zero).

#include "access.hpp"
#include "perf_event.hpp"
#include "support/preconditions.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cerrno>
#include <fstream>
#include <string>

namespace {

using pmc::detail::PerfEventSpec;
using pmc::detail::PerfFacts;
using pmc::detail::perf_open_error;
using pmc::detail::perf_raw_event;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

pmc::Hal p6_native(const std::string& access) {
  pmc::Config cfg;
  cfg.backend = "p6";  // forced onto this machine's CPU, whatever it is
  cfg.access = access;
  return pmc::Hal::open(cfg);
}

// PerfEvtSel0/1 as p6.toml's [format] declares them.
pmc::RegisterFormat p6_format() {
  pmc::RegisterFormat f;
  f.add("event", pmc::parse_bit_range("0-7"));
  f.add("umask", pmc::parse_bit_range("8-15"));
  f.add("usr", pmc::parse_bit_range("16"));
  f.add("os", pmc::parse_bit_range("17"));
  f.add("edge", pmc::parse_bit_range("18"));
  f.add("pc", pmc::parse_bit_range("19"));
  f.add("int", pmc::parse_bit_range("20"));
  f.add("en", pmc::parse_bit_range("22"));
  f.add("inv", pmc::parse_bit_range("23"));
  f.add("cmask", pmc::parse_bit_range("24-31"));
  return f;
}

PerfFacts no_pmu_facts() {
  PerfFacts f;
  f.paranoid = 2;
  f.paranoid_file = "/proc/sys/kernel/perf_event_paranoid";
  f.pmu.exposed = false;
  f.pmu.directory = "/sys/bus/event_source/devices/cpu";
  f.arch_perfmon_version = 0;
  return f;
}

PerfEventSpec raw(const std::string& event, std::uint64_t config, bool exclude_kernel = false) {
  PerfEventSpec e;
  e.event = event;
  e.type = PERF_TYPE_RAW;
  e.config = config;
  e.hardware = true;
  e.exclude_kernel = exclude_kernel;
  return e;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(encoding)

BOOST_AUTO_TEST_CASE(en_and_int_dropped_usr_os_become_excludes) {
  pmc::Encoding e;
  e.event = "INST_RETIRED";
  e.config = 0x5300C0;  // EN | INT | OS | USR | event 0xC0
  e.counters = {0, 1};
  PerfEventSpec p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.type == static_cast<std::uint32_t>(PERF_TYPE_RAW));
  BOOST_TEST(p.config == 0xC0u);
  BOOST_TEST(!p.exclude_user);
  BOOST_TEST(!p.exclude_kernel);
  BOOST_TEST(p.hardware);
  BOOST_TEST(p.describe() == "INST_RETIRED, raw 0xc0");
}

BOOST_AUTO_TEST_CASE(user_only_and_kernel_only) {
  pmc::Encoding u;
  u.config = 0x100C0;  // INST_RETIRED:u
  PerfEventSpec pu = perf_raw_event(u, p6_format());
  BOOST_TEST(pu.config == 0xC0u);
  BOOST_TEST(!pu.exclude_user);
  BOOST_TEST(pu.exclude_kernel);
  pmc::Encoding k;
  k.config = 0x20079;  // CPU_CLK_UNHALTED:k
  PerfEventSpec pk = perf_raw_event(k, p6_format());
  BOOST_TEST(pk.config == 0x79u);
  BOOST_TEST(pk.exclude_user);
  BOOST_TEST(!pk.exclude_kernel);
}

BOOST_AUTO_TEST_CASE(counter_mask_invert_edge_and_unit_mask_are_kept) {
  pmc::Encoding e;
  e.config = 0x02870F29;  // cmask 2, inv, edge, os, usr, unit mask 0x0F, event 0x29
  BOOST_TEST(perf_raw_event(e, p6_format()).config == 0x02840F29u);
}

BOOST_AUTO_TEST_CASE(default_bits_without_a_format) {
  pmc::Encoding e;
  e.config = 0x4300C0;
  PerfEventSpec p = perf_raw_event(e, pmc::RegisterFormat{});
  BOOST_TEST(p.config == 0xC0u);
  BOOST_TEST(!p.exclude_user);
}

BOOST_AUTO_TEST_CASE(fixed_only_events_use_the_linux_pseudo_encodings) {
  pmc::Encoding e;
  e.fixed = 2;  // reference cycles: no general-counter encoding
  e.fixed_control = 0x2 << 8;  // USR only, shifted into counter 2's nibble
  PerfEventSpec p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.config == 0x0300u);
  BOOST_TEST(p.exclude_kernel);
  BOOST_TEST(!p.exclude_user);
  e.fixed = 1;
  e.fixed_control = 0x3;  // OS | USR, not shifted
  p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.config == 0x3Cu);
  BOOST_TEST(!p.exclude_kernel);
  BOOST_TEST(!p.exclude_user);
}

BOOST_AUTO_TEST_CASE(top_down_metrics_keep_their_own_linux_pseudo_encoding) {
  // A PERF_METRICS byte as the archperf catalogs give it: event 00H, unit mask 80H + byte, on the
  // pseudo fixed counter 16 + byte (docs/hardware/archperf.md section 12). Linux's encoding is the
  // same value (topdown-be-bound = 0x8300), not the fixed-counter rule's (16 + 3 + 1) << 8.
  pmc::Encoding e;
  e.fixed = 19;
  e.config = (0x83u << 8) | (1u << 16) | (1u << 22);  // umask 83H, USR, EN
  e.fixed_control = 0x2;
  PerfEventSpec p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.config == 0x8300u);
  BOOST_TEST(p.exclude_kernel);
  BOOST_TEST(pmc::detail::perf_topdown_metric(p));
  // TOPDOWN.SLOTS, fixed counter 3: the fixed-counter rule gives 0x0400.
  e.fixed = 3;
  e.config = 0;
  p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.config == 0x0400u);
  BOOST_TEST(pmc::detail::perf_topdown_slots(p));
}

BOOST_AUTO_TEST_CASE(through_the_p6_catalog) {
  pmc::Hal hal = p6_native("sim");
  pmc::Encoding e = hal.encode("INST_RETIRED:c=2:i=1");
  PerfEventSpec p = perf_raw_event(e, hal.events().format());
  BOOST_TEST(p.config == ((2ull << 24) | (1ull << 23) | 0xC0));
  pmc::Encoding m = hal.encode("L2_LD:M:E:k");
  PerfEventSpec pm = perf_raw_event(m, hal.events().format());
  BOOST_TEST(pm.config == 0x0C29u);
  BOOST_TEST(pm.exclude_user);
}

// A backend event given period=N samples under perf: sample_period N, precise_ip from :p/:pp/
// :ppp, and the INT bit left to the kernel (docs/profiling.md).
BOOST_AUTO_TEST_CASE(a_sampling_event_gets_its_period_and_precision) {
  pmc::Encoding e;
  e.event = "INST_RETIRED:period=10000:pp";
  e.config = 0x5300C0;  // EN | INT | OS | USR | event 0xC0
  e.period = 10000;
  e.precise = 2;
  PerfEventSpec p = perf_raw_event(e, p6_format());
  BOOST_TEST(p.config == 0xC0u);
  BOOST_TEST(p.sample_period == 10000u);
  BOOST_TEST(p.precise_ip == 2u);
  pmc::Encoding counting;
  counting.config = 0x4300C0;
  BOOST_TEST(perf_raw_event(counting, p6_format()).sample_period == 0u);
}

BOOST_AUTO_TEST_CASE(the_p6_backend_encodes_period_and_precision) {
  pmc::Hal hal = p6_native("sim");
  pmc::Encoding e = hal.encode("INST_RETIRED:u:period=10000:pp");
  BOOST_TEST(e.period == 10000u);
  BOOST_TEST(e.precise == 2u);
  BOOST_TEST(e.interrupt);
  BOOST_TEST((e.config & (1ull << 20)) != 0u);  // INT (PerfEvtSel bit 20)
  BOOST_TEST(contains(e.canonical, ":period=10000:pp"), e.canonical);
  PerfEventSpec p = perf_raw_event(e, hal.events().format());
  BOOST_TEST(p.config == 0xC0u);
  BOOST_TEST(p.exclude_kernel);
  BOOST_TEST(p.sample_period == 10000u);
  BOOST_TEST(p.precise_ip == 2u);
  // A precision alone samples at perf record's default frequency (perf record -e cycles:pp:
  // sample_freq 4000, freq 1), as perf record does.
  pmc::Encoding alone = hal.encode("INST_RETIRED:pp");
  BOOST_TEST(alone.period == 0u);
  BOOST_TEST(alone.frequency == 4000u);
  BOOST_TEST(alone.precise == 2u);
  BOOST_TEST((alone.config & (1ull << 20)) != 0u);
  BOOST_TEST(contains(alone.canonical, ":freq=4000:pp"), alone.canonical);
  PerfEventSpec pa = perf_raw_event(alone, hal.events().format());
  BOOST_TEST(pa.sample_freq == 4000u);
  BOOST_TEST(pa.sample_period == 0u);
  BOOST_TEST(pa.precise_ip == 2u);
  // freq=N: sample_freq N.
  pmc::Encoding f = hal.encode("INST_RETIRED:freq=1000");
  BOOST_TEST(f.frequency == 1000u);
  BOOST_TEST(perf_raw_event(f, hal.events().format()).sample_freq == 1000u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(messages)

BOOST_AUTO_TEST_CASE(no_pmu) {
  PerfFacts f = no_pmu_facts();
  for (int err : {ENOENT, ENODEV, EOPNOTSUPP}) {
    std::string m = perf_open_error(err, raw("INST_RETIRED", 0xC0), pmc::Scope::this_thread(), 0, -1, f);
    BOOST_TEST(m ==
                   "perf_event_open(INST_RETIRED, raw 0xc0): this machine exposes no hardware PMU to Linux perf "
                   "(CPUID.0AH version 0, /sys/bus/event_source/devices/cpu missing); count on real hardware or use "
                   "access = \"sim\" with a CPUID dump (the config key 'cpu')",
               m);
  }
  f.hypervisor = true;
  std::string vm = perf_open_error(ENOENT, raw("INST_RETIRED", 0xC0), pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(vm, "a virtual machine whose hypervisor gives it no virtual PMU"), vm);
}

BOOST_AUTO_TEST_CASE(top_down_metrics_need_a_group_led_by_slots) {
  const PerfEventSpec slots = raw("TOPDOWN.SLOTS", 0x0400), retiring = raw("PERF_METRICS.RETIRING", 0x8000),
                      cycles = raw("cycles", 0x3C);
  BOOST_TEST(pmc::detail::perf_topdown_refusal(retiring, {slots}).empty());
  BOOST_TEST(pmc::detail::perf_topdown_refusal(cycles, {}).empty());
  const std::string alone = pmc::detail::perf_topdown_refusal(retiring, {});
  BOOST_TEST(contains(alone, "group led by the slots event (TOPDOWN.SLOTS, 0x0400)"), alone);
  BOOST_TEST(contains(alone, "0x8000"), alone);
  const std::string behind = pmc::detail::perf_topdown_refusal(retiring, {cycles, slots});
  BOOST_TEST(contains(behind, "led by cycles"), behind);
  // Without a PMU the open fails; the message says what a top-down event needs besides.
  PerfFacts f = no_pmu_facts();
  const std::string m = perf_open_error(ENOENT, retiring, pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(m, "exposes no hardware PMU"), m);
  BOOST_TEST(contains(m, "PERF_METRICS.RETIRING is a top-down event"), m);
  BOOST_TEST(contains(m, "Ice Lake and later P-cores"), m);
}

BOOST_AUTO_TEST_CASE(a_top_down_metric_is_refused_before_the_kernel_is_asked) {
  // This machine's own PMU or none: the group rule is checked first, with its own message.
  pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
  try {
    perf.add(raw("PERF_METRICS.RETIRING", 0x8000));
    BOOST_ERROR("a top-down metric led a perf group");
  } catch (const pmc::Error& err) {
    BOOST_TEST(contains(err.what(), "add TOPDOWN.SLOTS first"), err.what());
  }
}

BOOST_AUTO_TEST_CASE(pmu_present_but_event_unknown) {
  PerfFacts f = no_pmu_facts();
  f.pmu.exposed = true;
  std::string m = perf_open_error(ENOENT, raw("X", 0x1234), pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(m, "perf_event_open(X, raw 0x1234): the PMU Linux perf exposes"), m);
  BOOST_TEST(contains(m, "ENOENT"), m);
  std::string inval = perf_open_error(EINVAL, raw("X", 0x1234), pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(inval, "EINVAL"), inval);
}

BOOST_AUTO_TEST_CASE(permission_names_perf_event_paranoid_and_its_value) {
  PerfFacts f = no_pmu_facts();
  PerfEventSpec sw;
  sw.event = "task-clock";
  sw.config = PERF_COUNT_SW_TASK_CLOCK;
  // paranoid 2, kernel counted: user-mode only is the way out.
  std::string m = perf_open_error(EACCES, sw, pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(m, "perf_event_open(task-clock, software): permission denied (EACCES); "
                         "/proc/sys/kernel/perf_event_paranoid is 2"),
             m);
  BOOST_TEST(contains(m, "'task-clock:u'"), m);
  // A whole CPU at paranoid 1.
  f.paranoid = 1;
  m = perf_open_error(EPERM, sw, pmc::Scope::on_cpu(3), -1, 3, f);
  BOOST_TEST(contains(m, "perf_event_open(task-clock, software, CPU 3): permission denied (EPERM)"), m);
  BOOST_TEST(contains(m, "perf_event_paranoid is 1"), m);
  BOOST_TEST(contains(m, "CAP_PERFMON"), m);
  // Debian's level 3.
  f.paranoid = 3;
  m = perf_open_error(EACCES, sw, pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(m, "perf_event_paranoid is 3, which forbids"), m);
  // Another user's process.
  f.paranoid = 1;
  sw.exclude_kernel = true;
  m = perf_open_error(EACCES, sw, pmc::Scope::process(1), 1, -1, f);
  BOOST_TEST(contains(m, "process 1"), m);
  BOOST_TEST(contains(m, "CAP_SYS_PTRACE"), m);
  // Unreadable file.
  f.paranoid = -100;
  m = perf_open_error(EACCES, sw, pmc::Scope::this_thread(), 0, -1, f);
  BOOST_TEST(contains(m, "perf_event_paranoid is unreadable"), m);
}

BOOST_AUTO_TEST_CASE(other_errors) {
  PerfFacts f = no_pmu_facts();
  PerfEventSpec sw;
  sw.event = "page-faults";
  BOOST_TEST(contains(perf_open_error(ESRCH, sw, pmc::Scope::process(42), 42, -1, f), "process 42): no such process"));
  BOOST_TEST(contains(perf_open_error(EMFILE, sw, pmc::Scope::all_cpus(), -1, 7, f), "ulimit -n"));
  BOOST_TEST(contains(perf_open_error(ENODEV, sw, pmc::Scope::on_cpu(9), -1, 9, f), "CPU 9 is offline"));
  BOOST_TEST(contains(perf_open_error(EBUSY, sw, pmc::Scope::this_thread(), 0, -1, f), "EBUSY"));
}

BOOST_AUTO_TEST_SUITE_END()

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
