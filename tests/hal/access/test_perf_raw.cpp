#define BOOST_TEST_MODULE perf_raw
#include <boost/test/unit_test.hpp>

// Access "perf" for PMU events: the raw encoding handed to perf_event_open and the messages for
// each failure. The rdpmc self-monitoring read and the real outcome on this machine are in
// test_perf_raw_counting.cpp.

#include "access.hpp"
#include "perf_event.hpp"
#include "perf_raw_test_support.hpp"
#include "support/messages.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cerrno>
#include <string>

namespace {

using pmc::detail::PerfEventSpec;
using pmc::detail::PerfFacts;
using pmc::detail::perf_open_error;
using pmc::detail::perf_raw_event;
using pmc_test::contains;
using perf_raw_test::p6_native;

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
