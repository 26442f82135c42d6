#define BOOST_TEST_MODULE perf_freq
#include <boost/test/unit_test.hpp>

// Sampling at a frequency under Linux perf: `freq=N` on the HAL clock events (and on a backend's
// raw events, through the same PerfEventSpec) asks the kernel for perf_event_attr.freq = 1 and
// sample_freq = N, which perf record -F N asks for. Checked: the attribute built for the kernel;
// task-clock:freq=1000 on a child that spins 0.3 s of CPU time gives about 300 samples (a count,
// with a wide margin: 150 to 450; the kernel turns a clock event's frequency into the period
// 10^9 / N ns, so 300 is what the kernel's own rule gives, and a period of 1,000 ns taken for
// the frequency would give ~300,000); the refusals (freq=0, above
// /proc/sys/kernel/perf_event_max_sample_rate, with period=); and `pmc profile -e task-clock`
// sampling at perf record's default, 4,000 a second. Real on every Linux machine (software
// events): no PMU needed. No assertion is a time.

#include "access.hpp"
#include "perf_event.hpp"
#include "perf_kernel.hpp"

#include "support/json_report.hpp"
#include "support/messages.hpp"
#include "support/no_backend.hpp"
#include "support/pmc_command.hpp"

#include <pmc/encoding.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

using pmc_test::contains;
using pmc_test::message_of;
using pmc_test::own_arguments;

namespace fs = std::filesystem;
using u64 = std::uint64_t;
using pmc_test::no_backend_hal;

volatile u64 g_sink = 0;

u64 thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<u64>(ts.tv_sec) * 1000000000ull + static_cast<u64>(ts.tv_nsec);
}

// Spins in user mode until this thread has run for `ms` ms of CPU time (whatever the load).
void spin(unsigned ms) {
  const u64 until = thread_cpu_ns() + u64{ms} * 1000000ull;
  do {
    for (int i = 0; i < 100000; ++i) g_sink = g_sink + static_cast<u64>(i);
  } while (thread_cpu_ns() < until);
}

// Helper mode: `test_perf_freq -- pmc-helper spin MS` spins MS ms of CPU time and exits.
const bool kHelperMode = [] {
  auto args = own_arguments();
  if (args.size() >= 5 && args[1] == "--" && args[2] == "pmc-helper" && args[3] == "spin") {
    spin(static_cast<unsigned>(std::stoul(args[4])));
    _exit(0);
  }
  return false;
}();

u64 max_sample_rate() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  u64 rate = 0;
  in >> rate;
  return rate;
}

}  // namespace

// The attribute: freq = 1 and sample_freq, no sample_period; with a period, the reverse.
BOOST_AUTO_TEST_CASE(the_attribute_asks_the_kernel_for_a_frequency) {
  pmc::detail::PerfEventSpec e;
  e.type = PERF_TYPE_SOFTWARE;
  e.config = PERF_COUNT_SW_TASK_CLOCK;
  e.sample_freq = 1000;
  const perf_event_attr a = pmc::detail::perf_sampling_attr(e);
  BOOST_TEST(a.freq == 1u);
  BOOST_TEST(a.sample_freq == 1000u);
  e.sample_freq = 0;
  e.sample_period = 250000;
  const perf_event_attr p = pmc::detail::perf_sampling_attr(e);
  BOOST_TEST(p.freq == 0u);
  BOOST_TEST(p.sample_period == 250000u);
  // A backend event's freq= (Encoding::frequency) reaches the raw event's spec.
  pmc::Encoding raw;
  raw.config = 0x5300c0;
  raw.frequency = 4000;
  raw.precise = 1;
  pmc::RegisterFormat format;
  const pmc::detail::PerfEventSpec r = pmc::detail::perf_raw_event(raw, format);
  BOOST_TEST(r.sample_freq == 4000u);
  BOOST_TEST(r.sample_period == 0u);
  const perf_event_attr ra = pmc::detail::perf_sampling_attr(r);
  BOOST_TEST(ra.freq == 1u);
  BOOST_TEST(ra.sample_freq == 4000u);
  BOOST_TEST(ra.precise_ip == 1u);
}

// task-clock:freq=1000 on a forked child spinning 300 ms of CPU time: about 300 samples.
BOOST_AUTO_TEST_CASE(task_clock_at_1000_a_second_on_a_busy_child) {
  if (max_sample_rate() != 0 && max_sample_rate() < 1000) {
    BOOST_TEST_MESSAGE("skipped: the kernel's perf_event_max_sample_rate is " << max_sample_rate()
                                                                                << ", below the 1000 asked for");
    return;
  }
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Scope scope = pmc::Scope::this_thread();
  scope.inherit = true;
  pmc::Session s = hal.session(scope);
  s.add("task-clock:freq=1000");
  BOOST_TEST(s.read().at(0).canonical == "hal::task-clock:u=1:k=1:freq=1000");
  pmc::ProfileRequest r;
  r.levels = true;
  s.profile(r);
  s.start();
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    spin(300);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  s.stop();
  BOOST_TEST(WIFEXITED(status));
  const u64 samples = s.level_histograms().at(0).total();
  BOOST_TEST_MESSAGE("task-clock:freq=1000, a child spinning 300 ms of CPU time: " << samples << " samples, "
                                                                                  << s.lost_samples() << " lost");
  BOOST_TEST(samples >= 150u, samples);
  BOOST_TEST(samples <= 450u, samples);
}

BOOST_AUTO_TEST_CASE(bad_frequencies_are_refused_with_the_number) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  const std::string zero = message_of([&] { s.add("task-clock:freq=0"); });
  BOOST_TEST(contains(zero, "task-clock:freq=0"), zero);
  BOOST_TEST(contains(zero, "freq=0 is no frequency"), zero);
  const std::string both = message_of([&] { s.add("cpu-clock:period=100000:freq=1000"); });
  BOOST_TEST(contains(both, "cpu-clock:period=100000:freq=1000"), both);
  BOOST_TEST(contains(both, "freq= and period= together"), both);
  const std::string other = message_of([&] { s.add("page-faults:freq=1000"); });
  BOOST_TEST(contains(other, "samples the clock events cpu-clock and task-clock only"), other);
  const u64 max = max_sample_rate();
  if (max == 0) {
    BOOST_TEST_MESSAGE("skipped the limit: /proc/sys/kernel/perf_event_max_sample_rate is unreadable");
    return;
  }
  const std::string event = "cpu-clock:freq=" + std::to_string(max + 1);
  const std::string above = message_of([&] { s.add(event); });
  BOOST_TEST(contains(above, event), above);
  BOOST_TEST(contains(above, "freq=" + std::to_string(max + 1) + " is above the kernel's limit of " +
                                 std::to_string(max) + " samples a second"),
             above);
  BOOST_TEST(s.read().empty());  // nothing was added
}

// pmc profile -e task-clock (neither period= nor freq=): perf record's default, 4,000 a second.
BOOST_FIXTURE_TEST_CASE(pmc_profile_samples_an_event_without_a_period_at_4000_a_second, pmc_test::PmcCommand) {
  if (max_sample_rate() != 0 && max_sample_rate() < 4000) {
    BOOST_TEST_MESSAGE("skipped: the kernel's perf_event_max_sample_rate is " << max_sample_rate());
    return;
  }
  const fs::path report = tmp.path() / "report.json";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  auto r = pmc({"profile", "--json", "-o", report.string(), "-e", "task-clock", "--", self, "--", "pmc-helper",
                "spin", "300"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const nlohmann::json doc = pmc_test::read_json_report(report);
  BOOST_TEST(doc.at("counters").at(0).at("event") == "task-clock:freq=4000");
  const u64 samples = doc.at("levels").at("total").get<u64>();
  BOOST_TEST_MESSAGE("pmc profile -e task-clock, 300 ms of CPU time: " << samples << " samples");
  BOOST_TEST(samples >= 600u, samples);
  BOOST_TEST(samples <= 1800u, samples);
}
