#define BOOST_TEST_MODULE perf_software
#include <boost/test/unit_test.hpp>

// The OS software events through perf_event_open (real on every Linux machine, PMU or not):
// one group read at once, enable/disable through the leader, reset, attaching to another
// process by pid, inheritance by a forked child, the scopes, mixing them with backend events,
// and the multiplexing arithmetic with hand-made times.
// No assertion depends on timing: page faults are caused by touching fresh pages, and the
// checks are lower bounds (the kernel may add faults of its own) or exact equalities of counts
// taken while the counters are off.

#include "access.hpp"
#include "perf_event.hpp"
#include "support/child_process.hpp"
#include "support/no_backend.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string>

namespace {

using pmc::detail::Count;
using pmc::detail::scale_count;

using pmc_test::no_backend_hal;

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Touches `pages` fresh anonymous pages (no huge pages): one page fault each, at least.
void touch_pages(std::size_t pages) {
  const std::size_t len = pages * kPage;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
  madvise(p, len, MADV_NOHUGEPAGE);
  auto* bytes = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < len; i += kPage) bytes[i] = 1;
  munmap(p, len);
}

const pmc::Reading& find(const std::vector<pmc::Reading>& rs, const std::string& event) {
  for (const auto& r : rs)
    if (r.event == event) return r;
  throw std::runtime_error("no reading for " + event);
}

int paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int v = 99;
  in >> v;
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(arithmetic)

BOOST_AUTO_TEST_CASE(full_time_is_not_scaled) {
  Count c = scale_count(1000, 500, 500);
  BOOST_TEST(c.value == 1000u);
  BOOST_TEST(!c.extrapolated);
  BOOST_TEST(c.time_enabled == 500u);
  BOOST_TEST(c.time_running == 500u);
}

BOOST_AUTO_TEST_CASE(half_time_doubles_and_is_flagged) {
  Count c = scale_count(1000, 200, 100);
  BOOST_TEST(c.value == 2000u);
  BOOST_TEST(c.extrapolated);
}

BOOST_AUTO_TEST_CASE(rounds_to_nearest) {
  BOOST_TEST(scale_count(10, 3, 2).value == 15u);   // 10 * 3 / 2
  BOOST_TEST(scale_count(1, 3, 2).value == 2u);     // 1.5 rounds up
  BOOST_TEST(scale_count(1, 4, 3).value == 1u);     // 1.33 rounds down
}

BOOST_AUTO_TEST_CASE(never_ran_is_zero_with_zero_running) {
  Count c = scale_count(12345, 1000, 0);
  BOOST_TEST(c.value == 0u);
  BOOST_TEST(c.time_running == 0u);
  BOOST_TEST(c.time_enabled == 1000u);
  BOOST_TEST(!c.extrapolated);
}

BOOST_AUTO_TEST_CASE(large_values_do_not_overflow) {
  // 2^62 * 2^40 needs 102 bits.
  BOOST_TEST(scale_count(1ull << 62, 1ull << 40, 1ull << 39).value == (1ull << 63));
  BOOST_TEST(scale_count(1ull << 63, 4, 1).value == ~0ull);  // saturates
}

BOOST_AUTO_TEST_CASE(cpu_lists) {
  BOOST_TEST(pmc::detail::parse_sysfs_cpu_list("0-3,6,8-9\n") == (std::vector<int>{0, 1, 2, 3, 6, 8, 9}));
  BOOST_TEST(pmc::detail::parse_sysfs_cpu_list("0") == (std::vector<int>{0}));
  BOOST_CHECK_THROW(pmc::detail::parse_sysfs_cpu_list("3-1"), pmc::Error);
  BOOST_CHECK_THROW(pmc::detail::parse_sysfs_cpu_list("a"), pmc::Error);
  BOOST_TEST(!pmc::detail::online_cpus().empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(events)

BOOST_AUTO_TEST_CASE(names_units_and_modifiers) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  for (const char* e : {"task-clock", "cpu-clock", "context-switches", "cs", "cpu-migrations", "migrations",
                        "page-faults", "faults", "minor-faults", "major-faults:u", "hal::task-clock:k"})
    s.add(e);
  const auto& enc = s.encodings();
  BOOST_TEST(enc[0].canonical == "hal::task-clock:u=1:k=1");
  BOOST_TEST(enc[3].canonical == "hal::context-switches:u=1:k=1");  // cs
  BOOST_TEST(enc[9].canonical == "hal::major-faults:u=1:k=0");
  BOOST_TEST(enc[10].canonical == "hal::task-clock:u=0:k=1");
  auto r = s.read();
  BOOST_REQUIRE_EQUAL(r.size(), 11u);
  BOOST_TEST(r[0].unit == "ns");
  BOOST_TEST(r[1].unit == "ns");
  BOOST_TEST(r[2].unit == "");
  BOOST_CHECK_THROW(s.add("task-clock:c=1"), pmc::Error);
  BOOST_CHECK_THROW(s.add("page-faults:u=0:k=0"), pmc::Error);
  BOOST_CHECK_THROW(s.add("page-faults:M"), pmc::Error);
  BOOST_TEST(s.encodings().size() == 11u);
}

BOOST_AUTO_TEST_CASE(no_backend_pmu_events_are_refused) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  BOOST_CHECK_NO_THROW((void)hal.session());  // a session of any scope: HAL events need no backend
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  try {
    s.add("instructions");
    BOOST_ERROR("instructions without a backend");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::not_supported);
    BOOST_TEST(std::string(e.what()).find("needs a PMU backend, and none was chosen") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("no loaded backend matches GenuineTMx86") != std::string::npos,
               e.what());  // names the CPU
    BOOST_TEST(std::string(e.what()).find("events available here") != std::string::npos, e.what());  // what to do
    BOOST_TEST(std::string(e.what()).find("task-clock") != std::string::npos, e.what());
  }
  BOOST_TEST(s.encodings().empty());
}

BOOST_AUTO_TEST_CASE(group_read_enable_disable_reset) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("page-faults");
  s.add("minor-faults");
  s.add("task-clock");
  s.add("context-switches");
  auto before = s.read();
  BOOST_TEST(find(before, "page-faults").value == 0u);  // never enabled
  BOOST_TEST(find(before, "page-faults").time_enabled == 0u);

  s.start();
  touch_pages(1000);
  s.stop();
  auto r1 = s.read();
  BOOST_TEST(find(r1, "page-faults").value >= 1000u);
  BOOST_TEST(find(r1, "minor-faults").value >= 1000u);
  BOOST_TEST(find(r1, "task-clock").value > 0u);
  for (const auto& r : r1) {
    BOOST_TEST(r.time_enabled > 0u);
    BOOST_TEST(r.time_running == r.time_enabled);  // software events are never multiplexed
    BOOST_TEST(!r.extrapolated);
  }
  // Disabled: activity is not counted.
  touch_pages(500);
  auto r2 = s.read();
  BOOST_TEST(find(r2, "page-faults").value == find(r1, "page-faults").value);
  BOOST_TEST(find(r2, "task-clock").value == find(r1, "task-clock").value);
  // Enabled again: counts accumulate.
  s.start();
  touch_pages(500);
  s.stop();
  auto r3 = s.read();
  BOOST_TEST(find(r3, "page-faults").value >= find(r1, "page-faults").value + 500);
  // Reset zeroes counts and times.
  s.reset();
  auto r4 = s.read();
  for (const auto& r : r4) {
    BOOST_TEST(r.value == 0u, r.event);
    BOOST_TEST(r.time_enabled == 0u, r.event);
  }
}

BOOST_AUTO_TEST_CASE(one_group_one_read) {
  pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
  pmc::detail::PerfEventSpec e;
  for (auto config : {PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES}) {
    e.event = std::to_string(config);
    e.config = config;
    perf.add(e);
  }
  perf.start();
  touch_pages(100);
  perf.stop();
  // The leader's read returns the whole group: nr, enabled, running, then {value, id} x 3.
  std::uint64_t buf[16] = {};
  const ssize_t got = ::read(perf.leader_fd(), buf, sizeof buf);
  BOOST_TEST(got == static_cast<ssize_t>(9 * sizeof(std::uint64_t)));
  BOOST_TEST(buf[0] == 3u);
  BOOST_TEST(buf[3] >= 100u);  // page faults
  auto counts = perf.read();
  BOOST_REQUIRE_EQUAL(counts.size(), 3u);
  BOOST_TEST(counts[0].at(0).value == buf[3]);
  BOOST_TEST(perf.last_read_path() == "read");  // software events have no rdpmc fast path
}

BOOST_AUTO_TEST_CASE(attach_to_a_child_by_pid) {
  int go[2], done[2];
  BOOST_REQUIRE(pipe(go) == 0 && pipe(done) == 0);
  pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) _exit(2);
    touch_pages(2000);
    if (::write(done[1], "d", 1) != 1) _exit(3);
    if (::read(go[0], &c, 1) != 1) _exit(4);  // stay alive until the parent has read
    _exit(0);
  }
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  {
    pmc::Session s = hal.session(pmc::Scope::process(child));
    s.add("page-faults");
    s.add("task-clock");
    s.start();
    BOOST_REQUIRE(::write(go[1], "g", 1) == 1);
    char c;
    BOOST_REQUIRE(::read(done[0], &c, 1) == 1);
    auto r = s.read();
    BOOST_TEST(find(r, "page-faults").value >= 2000u);
    BOOST_TEST(find(r, "task-clock").value > 0u);
    BOOST_TEST(s.scope().pid == child);
  }
  BOOST_REQUIRE(::write(go[1], "g", 1) == 1);
  int status = 0;
  waitpid(child, &status, 0);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0);
}

BOOST_AUTO_TEST_CASE(no_such_process) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::process(999999999));
  try {
    s.add("page-faults");
    BOOST_ERROR("counted a process that does not exist");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("process 999999999") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(inheritance_by_a_forked_child) {
  constexpr std::size_t kPages = 4000;
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  for (bool inherit : {true, false}) {
    pmc::Scope scope = pmc::Scope::this_thread();
    scope.inherit = inherit;
    pmc::Session s = hal.session(scope);
    s.add("page-faults");
    s.start();
    pid_t child = fork();
    BOOST_REQUIRE(child >= 0);
    if (child == 0) {
      touch_pages(kPages);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    s.stop();
    const std::uint64_t faults = s.read().at(0).value;
    BOOST_TEST_MESSAGE("inherit " << inherit << ": " << faults << " page faults");
    if (inherit)
      BOOST_TEST(faults >= kPages);
    else
      BOOST_TEST(faults < kPages);  // only the parent's own (copy-on-write after fork)
  }
}

BOOST_AUTO_TEST_CASE(mixed_with_backend_events_on_the_simulated_pmu) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_TEST(hal.access() == "sim");
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("instructions");
  s.add("task-clock");
  s.add("tsc");
  s.add("cycles");
  s.start();
  auto w = pmc::parse_workload("[[segment]]\ncycles = 1000\nsignals = { instructions = 2 }\n", "inline.toml");
  s.run(w);
  touch_pages(10);
  s.stop();
  auto r = s.read();
  BOOST_REQUIRE_EQUAL(r.size(), 4u);
  BOOST_TEST(r[0].value == 2000u);
  BOOST_TEST(r[3].value == 1000u);
  BOOST_TEST(r[3].counter == 1u);  // scheduled beside instructions
  BOOST_TEST(r[1].value > 0u);
  BOOST_TEST(r[1].unit == "ns");
  BOOST_TEST(r[2].canonical == "hal::tsc");
  // The simulated device counts what run_workload drives, not another scope.
  pmc::Session other = hal.session(pmc::Scope::on_cpu(0));
  other.add("task-clock");  // HAL events: fine
  BOOST_CHECK_THROW(other.add("instructions"), pmc::Error);
}

BOOST_AUTO_TEST_CASE(cpu_scopes) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  const auto cpus = pmc::detail::online_cpus();
  for (auto scope : {pmc::Scope::on_cpu(cpus.front()), pmc::Scope::each_cpu(), pmc::Scope::all_cpus()}) {
    BOOST_TEST_CONTEXT(scope.describe()) {
      pmc::Session s = hal.session(scope);
      try {
        s.add("cpu-clock");
      } catch (const pmc::Error& e) {
        // Counting a whole CPU needs root or CAP_PERFMON when perf_event_paranoid >= 1.
        BOOST_TEST(geteuid() != 0u, e.what());
        BOOST_TEST(paranoid() >= 1, e.what());
        BOOST_TEST(std::string(e.what()).find("/proc/sys/kernel/perf_event_paranoid is") != std::string::npos, e.what());
        continue;
      }
      s.add("tsc");
      s.start();
      touch_pages(10);
      s.stop();
      auto r = s.read();
      if (scope.kind == pmc::Scope::Kind::each_cpu) {
        BOOST_REQUIRE_EQUAL(r.size(), 2 * cpus.size());
        for (std::size_t i = 0; i < cpus.size(); ++i) {
          BOOST_TEST(r[i].event == "cpu-clock");
          BOOST_TEST(r[i].cpu == cpus[i]);
          BOOST_TEST(r[cpus.size() + i].event == "tsc");
          BOOST_TEST(r[cpus.size() + i].cpu == cpus[i]);
        }
      } else {
        BOOST_REQUIRE_EQUAL(r.size(), 2u);
        BOOST_TEST(r[0].cpu == -1);
        BOOST_TEST(r[0].value > 0u);  // the CPU clock ran while enabled
      }
    }
  }
}

// A hybrid part's PMU (AccessOptions::perf_pmu) counts CPU-wide only on its CPUs, as sysfs's
// devices/<pmu>/cpus lists them: here a sysfs tree of this test's with CPU 0 online and in
// cpu_atom, so each_cpu opens one software event, on CPU 0; a CPU scope outside it is refused.
BOOST_AUTO_TEST_CASE(a_hybrid_parts_pmu_counts_on_its_cpus) {
  pmc_test::TempDir tmp;
  pmc::detail::AccessOptions options;
  options.sysfs_root = tmp.path();
  options.perf_pmu = "cpu_atom";
  pmc_test::spit(tmp.path() / "devices/system/cpu/online", "0\n");
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu_atom/cpus", "0\n");
  pmc::detail::PerfEventSpec e;
  e.event = "cpu-clock";
  e.config = PERF_COUNT_SW_CPU_CLOCK;
  {
    pmc::detail::PerfAccess perf(pmc::Scope::each_cpu(), options);
    try {
      perf.add(e);
    } catch (const pmc::Error& err) {
      BOOST_TEST(geteuid() != 0u, err.what());  // unprivileged at perf_event_paranoid >= 1
      return;
    }
    perf.start();
    touch_pages(10);
    perf.stop();
    const auto counts = perf.read();
    BOOST_REQUIRE_EQUAL(counts.size(), 1u);
    BOOST_REQUIRE_EQUAL(counts[0].size(), 1u);
    BOOST_TEST(counts[0][0].cpu == 0);
  }
  pmc_test::spit(tmp.path() / "devices/system/cpu/online", "0-1\n");
  pmc_test::spit(tmp.path() / "bus/event_source/devices/cpu_atom/cpus", "1\n");
  try {
    pmc::detail::PerfAccess perf(pmc::Scope::on_cpu(0), options);
    BOOST_ERROR("CPU 0 was taken for a cpu_atom CPU");
  } catch (const pmc::Error& err) {
    BOOST_TEST(std::string(err.what()) == "scope CPU 0: not a CPU of the cpu_atom PMU (its CPUs: 1)");
  }
  options.perf_pmu = "cpu_core";  // no such directory in this tree
  try {
    pmc::detail::PerfAccess perf(pmc::Scope::each_cpu(), options);
    BOOST_ERROR("a PMU without a cpus file was accepted");
  } catch (const pmc::Error& err) {
    BOOST_TEST(std::string(err.what()).find("cannot read the CPUs of the cpu_core PMU") != std::string::npos, err.what());
  }
}

BOOST_AUTO_TEST_CASE(permission_message_names_perf_event_paranoid) {
  // Unprivileged, at perf_event_paranoid >= 2, counting kernel mode is refused and ':u' is not.
  // Run in a child that drops root (when the tests run as root) so this holds on any machine.
  int msg[2];
  BOOST_REQUIRE(pipe(msg) == 0);
  pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    ::close(msg[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
    std::string out;
    try {
      pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
      pmc::detail::PerfEventSpec e;
      e.event = "task-clock";
      e.config = PERF_COUNT_SW_TASK_CLOCK;
      perf.add(e);
      out = "ok";
    } catch (const pmc::Error& err) {
      out = err.what();
    }
    try {
      pmc::detail::PerfAccess perf(pmc::Scope::this_thread(), {});
      pmc::detail::PerfEventSpec e;
      e.event = "task-clock:u";
      e.config = PERF_COUNT_SW_TASK_CLOCK;
      e.exclude_kernel = true;
      perf.add(e);
      out += "\nok";
    } catch (const pmc::Error& err) {
      out += std::string("\n") + err.what();
    }
    if (::write(msg[1], out.data(), out.size()) < 0) _exit(11);
    _exit(0);
  }
  ::close(msg[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(msg[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(msg[0]);
  int status = 0;
  waitpid(child, &status, 0);
  BOOST_REQUIRE_MESSAGE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status " << status);
  const std::string kernel = text.substr(0, text.find('\n'));
  const std::string user = text.substr(text.find('\n') + 1);
  const int level = paranoid();
  BOOST_TEST_MESSAGE("perf_event_paranoid " << level << ": '" << kernel << "' / '" << user << "'");
  if (level >= 2) {
    BOOST_TEST(kernel.find("permission denied") != std::string::npos, kernel);
    BOOST_TEST(kernel.find("/proc/sys/kernel/perf_event_paranoid is " + std::to_string(level)) != std::string::npos,
               kernel);
  } else {
    BOOST_TEST(kernel == "ok");
  }
  if (level <= 2)
    BOOST_TEST(user == "ok");
  else
    BOOST_TEST(user.find("perf_event_paranoid is " + std::to_string(level)) != std::string::npos, user);
}

BOOST_AUTO_TEST_SUITE_END()
