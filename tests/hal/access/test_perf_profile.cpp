#define BOOST_TEST_MODULE perf_profile
#include <boost/test/unit_test.hpp>

// Profiling without a PMU: Linux perf samples the HAL clock events given `period=N` (ns), real
// on every Linux machine (a KVM guest without a virtual PMU included). Checked: the modifier and
// its refusals, a session without a backend sampling this thread (levels and a PC profile over
// a function of this binary), the samples of a forked child reaching the parent's ring buffer
// (inherit), reset, the start() refusal without a sampling event, and `pmc profile -- COMMAND`
// (a kernel-heavy command, a command's child, exit status, errors).
// No assertion depends on timing: the spinning code spins until its own CPU clock has advanced
// by the time asked, and the checks are "some samples" where the code ran (and, where the
// code never ran, none).

#include "support/json_report.hpp"
#include "support/messages.hpp"
#include "support/no_backend.hpp"
#include "support/pmc_command.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>

#include <nlohmann/json.hpp>

#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace {

using pmc_test::contains;
using pmc_test::own_arguments;

namespace fs = std::filesystem;
using nlohmann::json;
using u64 = std::uint64_t;

volatile u64 g_sink = 0;

u64 cpu_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<u64>(ts.tv_sec) * 1000000000ull + static_cast<u64>(ts.tv_nsec);
}

// Spins in user mode until this thread has run for `ms` ms of CPU time.
__attribute__((noinline)) void spin(unsigned ms) {
  const u64 until = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + u64{ms} * 1000000ull;
  do {
    for (int i = 0; i < 200000; ++i) g_sink = g_sink + static_cast<u64>(i);
  } while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < until);
}

u64 spin_address() { return reinterpret_cast<std::uintptr_t>(&spin); }

// Helper mode: `test_perf_profile -- pmc-helper spin MS FILE` writes the address of spin() (this
// process's: ASLR moves it at each exec) to FILE, then spins MS ms of CPU time in it.
const bool kHelperMode = [] {
  auto args = own_arguments();
  if (args.size() >= 6 && args[1] == "--" && args[2] == "pmc-helper" && args[3] == "spin") {
    if (std::FILE* f = std::fopen(args[5].c_str(), "w")) {
      std::fprintf(f, "%llx\n", static_cast<unsigned long long>(spin_address()));
      std::fclose(f);
    }
    spin(static_cast<unsigned>(std::stoul(args[4])));
    _exit(0);
  }
  return false;
}();

using pmc_test::no_backend_hal;

template <class F>
pmc::errc error_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const pmc::Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return pmc::errc::ok;
}

pmc::ProfileRequest levels_and_spin() {
  pmc::ProfileRequest r;
  r.levels = true;
  r.pc = pmc::PcRange{pmc::AddressSpace::user, spin_address(), spin_address() + 4096};
  return r;
}

u64 bin(const pmc::LevelHistogram& h, const std::string& label) {
  for (const auto& b : h.bins)
    if (b.label == label) return b.samples;
  BOOST_ERROR("no bin " << label);
  return 0;
}

u64 sum_of_bins(const pmc::LevelHistogram& h) {
  u64 n = 0;
  for (const auto& b : h.bins) n += b.samples;
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(modifier)

BOOST_AUTO_TEST_CASE(period_on_the_clock_events) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("cpu-clock:period=100000");
  s.add("task-clock:u:period=0x10000");
  s.add("hal::cpu-clock");
  BOOST_TEST(s.encodings()[0].canonical == "hal::cpu-clock:u=1:k=1:period=100000");
  BOOST_TEST(s.encodings()[1].canonical == "hal::task-clock:u=1:k=0:period=65536");
  BOOST_TEST(s.encodings()[2].canonical == "hal::cpu-clock:u=1:k=1");
}

BOOST_AUTO_TEST_CASE(period_refusals) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  std::string message;
  BOOST_TEST(error_of([&] { s.add("tsc:period=1000"); }, &message) == pmc::errc::attribute);
  BOOST_TEST(message == "event 'tsc:period=1000', column 5: modifier 'period' samples the clock events cpu-clock "
                        "and task-clock only, not HAL event tsc",
             message);
  BOOST_TEST(error_of([&] { s.add("page-faults:u:period=1000"); }, &message) == pmc::errc::attribute);
  BOOST_TEST(contains(message, "column 15: modifier 'period'"), message);
  BOOST_TEST(error_of([&] { s.add("cpu-clock:period=0"); }, &message) == pmc::errc::attribute_value);
  BOOST_TEST(message == "event 'cpu-clock:period=0', column 11: modifier 'period' takes a sampling period in ns above 0",
             message);
  BOOST_TEST(error_of([&] { s.add("cpu-clock:period=10:period=20"); }, &message) == pmc::errc::attribute);
  BOOST_TEST(contains(message, "column 21: modifier 'period' given twice"), message);
  BOOST_TEST(error_of([&] { s.add("cpu-clock:c=1"); }, &message) == pmc::errc::attribute);
  BOOST_TEST(contains(message, "(accepted: u, k, period, freq)"), message);
  BOOST_TEST(s.encodings().empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(session)

BOOST_AUTO_TEST_CASE(a_spinning_thread_without_a_backend) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  BOOST_TEST_REQUIRE(hal.backend() == nullptr);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("cpu-clock:period=100000");
  s.add("task-clock");
  s.profile(levels_and_spin());
  BOOST_TEST(s.level_histograms().empty());  // before the first start
  s.start();
  spin(200);
  s.stop();
  const auto levels = s.level_histograms();
  BOOST_TEST_REQUIRE(levels.size() == 1u);
  const pmc::LevelHistogram& h = levels.front();
  BOOST_TEST(h.cpu == -1);
  std::vector<std::string> labels;
  for (const auto& b : h.bins) labels.push_back(b.label);
  BOOST_TEST(labels == (std::vector<std::string>{"user", "kernel", "hypervisor", "guest kernel", "guest user"}),
             boost::test_tools::per_element());
  BOOST_TEST(bin(h, "user") > 0u);
  BOOST_TEST(h.total() == sum_of_bins(h));
  const auto profiles = s.pc_profiles();
  BOOST_TEST_REQUIRE(profiles.size() == 1u);
  const pmc::PcProfile& p = profiles.front();
  BOOST_TEST(p.bucket_bytes == 16u);
  BOOST_TEST(p.samples.size() == 256u);
  BOOST_TEST(p.range.start == spin_address());
  BOOST_TEST(p.total() > 0u);
  BOOST_TEST(p.total() <= bin(h, "user"));
  const auto pcs = s.sampled_pcs(pmc::AddressSpace::user);
  u64 user = 0;
  for (const auto& c : pcs) user += c.samples;
  BOOST_TEST(user == bin(h, "user"));
  BOOST_TEST(std::is_sorted(pcs.begin(), pcs.end(), [](const pmc::PcCount& a, const pmc::PcCount& b) { return a.pc < b.pc; }));
  const auto readings = s.read();
  BOOST_TEST(readings.at(0).canonical == "hal::cpu-clock:u=1:k=1:period=100000");
  BOOST_TEST(readings.at(0).value > 0u);
  BOOST_TEST(readings.at(0).unit == "ns");
  BOOST_TEST_MESSAGE("200 ms spin, cpu-clock every 100 us: " << h.total() << " samples (user " << bin(h, "user")
                     << ", kernel " << bin(h, "kernel") << "), " << p.total() << " in spin(), "
                     << s.lost_samples() << " lost; cpu-clock " << readings.at(0).value << " ns");

  // A range elsewhere: none of those samples.
  s.profile({true, pmc::PcRange{pmc::AddressSpace::user, 0x1000, 0x2000}});
  BOOST_TEST(s.pc_profiles().at(0).total() == 0u);
  // Kernel addresses: the user samples are not in a kernel profile.
  s.profile({true, pmc::PcRange{pmc::AddressSpace::kernel, spin_address(), spin_address() + 4096}});
  BOOST_TEST(s.pc_profiles().at(0).total() == 0u);

  // reset() empties the histograms; they accumulate across stop and start otherwise.
  s.reset();
  BOOST_TEST(s.level_histograms().at(0).total() == 0u);
  BOOST_TEST(s.sampled_pcs(pmc::AddressSpace::user).empty());
}

BOOST_AUTO_TEST_CASE(large_ranges_get_larger_buckets) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("cpu-clock:period=100000");
  s.profile({false, pmc::PcRange{pmc::AddressSpace::user, 0, u64{1} << 26}});  // 64 MiB
  s.start();
  s.stop();
  const auto p = s.pc_profiles().at(0);
  BOOST_TEST(p.bucket_bytes == 64u);
  BOOST_TEST(p.samples.size() == (std::size_t{1} << 20));
  BOOST_TEST(s.level_histograms().empty());  // not asked for
  std::string message;
  BOOST_TEST(error_of([&] { s.profile({true, pmc::PcRange{pmc::AddressSpace::user, 0x20, 0x20}}); }, &message) ==
             pmc::errc::invalid_argument);
  BOOST_TEST(contains(message, "[0x20, 0x20) is empty"), message);
}

// Scope this_thread with inherit: the sampling event is opened per CPU (the kernel maps no ring
// buffer of an inherited per-task event), and the samples of a forked child land in the
// parent's buffers. The parent only waits: every sample in spin() is the child's.
BOOST_AUTO_TEST_CASE(a_forked_childs_samples_reach_the_parent) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Scope scope = pmc::Scope::this_thread();
  scope.inherit = true;
  pmc::Session s = hal.session(scope);
  s.add("cpu-clock:period=100000");
  s.profile(levels_and_spin());
  s.start();
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    spin(200);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  s.stop();
  BOOST_TEST(WIFEXITED(status));
  const auto h = s.level_histograms().at(0);
  const auto p = s.pc_profiles().at(0);
  BOOST_TEST_MESSAGE("inherited: " << h.total() << " samples, " << p.total() << " in the child's spin(), "
                     << s.lost_samples() << " lost");
  BOOST_TEST(p.total() > 0u);
  BOOST_TEST(h.total() == sum_of_bins(h));
}

// The kernel's limit on samples per second (kernel.perf_event_max_sample_rate); it lowers the
// limit itself when sampling interrupts take long, as they do in a loaded guest. 0 if unreadable.
u64 kernel_max_sample_rate() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  u64 rate = 0;
  in >> rate;
  return rate;
}

// Nobody reads the ring buffer while this thread spins: cpu-clock:u every 20 us writes samples
// of 16 bytes, and the 256 KiB buffer holds 16,384. A KVM guest here delivers about 16,000
// such samples per second of CPU time, not 50,000, and the kernel throttles sampling to
// perf_event_max_sample_rate per second: the spin is at least 2 s, longer when the kernel's limit
// is low, and tried again twice as long if nothing was lost (the limit can drop meanwhile). The
// kernel counts what it dropped (PERF_FORMAT_LOST; this test needs Linux 6.0, since the older
// PERF_RECORD_LOST is only written once the buffer has room again) and the session reports it.
BOOST_AUTO_TEST_CASE(a_full_ring_buffer_reports_lost_samples) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  utsname u{};
  uname(&u);
  const bool format_lost = std::atoi(u.release) >= 6;
  u64 lost = 0;
  for (int attempt = 0; attempt < 3 && (attempt == 0 || (format_lost && lost == 0)); ++attempt) {
    pmc::Session s = hal.session(pmc::Scope::this_thread());
    s.add("cpu-clock:u:period=20000");
    pmc::ProfileRequest r;
    r.levels = true;
    s.profile(r);
    const u64 rate = std::clamp<u64>(kernel_max_sample_rate(), 1000, 50000);
    const u64 ms = std::clamp<u64>(2 * 16384 * 1000 / rate, 2000, 10000) << attempt;
    s.start();
    spin(static_cast<unsigned>(ms));
    s.stop();
    const auto h = s.level_histograms().at(0);
    lost = s.lost_samples();
    BOOST_TEST_MESSAGE(ms << " ms spin, cpu-clock:u every 20 us, kernel limit " << kernel_max_sample_rate()
                          << "/s, nobody polling: " << h.total() << " samples kept, " << lost << " lost");
    BOOST_TEST(h.total() <= 16384u);
    BOOST_TEST(h.total() > 0u);
    s.reset();
    BOOST_TEST(s.lost_samples() == 0u);
  }
  if (format_lost) BOOST_TEST(lost > 0u);  // PERF_FORMAT_LOST
}

// Profiling without a PMU needs a sampling event: the check is at start().
BOOST_AUTO_TEST_CASE(a_profile_needs_a_sampling_event) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("cpu-clock");
  s.add("tsc");
  pmc::ProfileRequest r;
  r.levels = true;
  s.profile(r);  // accepted: the events may come later
  std::string message;
  BOOST_TEST(error_of([&] { s.start(); }, &message) == pmc::errc::invalid_argument);
  BOOST_TEST(contains(message, "the session profiles but counts no sampling event"), message);
  BOOST_TEST(contains(message, "cpu-clock:period=100000"), message);
  BOOST_TEST(contains(message, "no backend matches this CPU (GenuineTMx86"), message);
  BOOST_TEST(!s.running());
  s.profile({});  // no profile: counts as before
  s.start();
  s.stop();
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// pmc profile -- COMMAND

namespace {

struct Cli : pmc_test::PmcCommand {
  fs::path report = tmp.path() / "report.json";
  json report_json() { return pmc_test::read_json_report(report); }
};

u64 json_bin(const json& doc, const std::string& label) {
  for (const auto& b : doc.at("levels").at("bins"))
    if (b.at("label") == label) return b.at("samples").get<u64>();
  BOOST_ERROR("no bin " << label << ": " << doc.dump());
  return 0;
}

u64 json_sum_of_bins(const json& doc) {
  u64 n = 0;
  for (const auto& b : doc.at("levels").at("bins")) n += b.at("samples").get<u64>();
  return n;
}

std::string self() { return fs::read_symlink("/proc/self/exe").string(); }

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_kernel_heavy_command, Cli) {
  // dd copying /dev/zero to /dev/null: almost all of its time is in read() and write().
  auto r = pmc({"profile", "--json", "-o", report.string(), "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=64k",
                "count=20000"});
  BOOST_TEST(r.status == 0, r);
  const json doc = report_json();
  BOOST_TEST(doc.at("exit_status") == 0);
  BOOST_TEST(doc.at("counters").at(0).at("event") == "cpu-clock:period=100000");
  BOOST_TEST(json_bin(doc, "kernel") > 0u, doc.dump());
  BOOST_TEST(doc.at("levels").at("total").get<u64>() == json_sum_of_bins(doc));
  BOOST_TEST_MESSAGE("dd: " << doc.at("levels").dump() << ", lost " << doc.at("lost_samples"));
  // --kernel: the kernel window with the most samples.
  r = pmc({"profile", "--kernel", "--json", "-o", report.string(), "--", "dd", "if=/dev/zero", "of=/dev/null",
           "bs=64k", "count=20000"});
  BOOST_TEST(r.status == 0, r);
  const json kernel = report_json();
  BOOST_TEST_REQUIRE(kernel.at("pc_profile").is_object(), kernel.dump());
  BOOST_TEST(kernel.at("pc_profile").at("space") == "kernel");
  BOOST_TEST(kernel.at("pc_profile").at("total").get<u64>() > 0u, kernel.dump());
}

// The command is sh, which starts this test binary in the background and waits: sh never runs
// the helper's code, so the samples in its spin() are the child's, written to the buffers of
// the events opened on sh (inherit).
BOOST_FIXTURE_TEST_CASE(a_child_of_the_command, Cli) {
  const fs::path where = tmp.path() / "spin-address";
  const std::string script = "'" + self() + "' -- pmc-helper spin 300 '" + where.string() + "' & wait";
  auto r = pmc({"profile", "--json", "-o", report.string(), "--", "sh", "-c", script});
  BOOST_TEST(r.status == 0, r);
  const json doc = report_json();
  const u64 address = std::stoull(pmc_test::slurp(where), nullptr, 16);
  BOOST_TEST_REQUIRE(doc.at("pc_profile").is_object(), doc.dump());
  const json& p = doc.at("pc_profile");
  BOOST_TEST(p.at("chosen") == "64 KiB window with the most user samples");
  const u64 start = std::stoull(p.at("start").get<std::string>(), nullptr, 16);
  const u64 end = std::stoull(p.at("end").get<std::string>(), nullptr, 16);
  BOOST_TEST(end - start == 65536u);
  BOOST_TEST(start % 65536 == 0u);
  BOOST_TEST((start <= address && address < end), std::hex << address << " in " << p.dump());
  BOOST_TEST(p.at("total").get<u64>() > 0u, p.dump());
  const u64 hottest = std::stoull(p.at("hottest").at(0).at("start").get<std::string>(), nullptr, 16);
  BOOST_TEST((address <= hottest && hottest < address + 4096), p.dump());
  BOOST_TEST_MESSAGE("child of sh: " << doc.at("levels").at("total") << " samples, " << p.at("total")
                     << " in the window of spin(), lost " << doc.at("lost_samples"));
  // The count and the samples agree: one sample per `period` ns of the event's count, summed
  // over the per-CPU events of the inherited task (timer slack makes the samples a little
  // fewer). A count extrapolated per CPU would be about twice the samples' time on 2 CPUs.
  const json& clock = doc.at("counters").at(0);
  BOOST_TEST(clock.at("event") == "cpu-clock:period=100000");
  const double periods = clock.at("value").get<double>() / 100000.0;
  const double samples = doc.at("levels").at("total").get<double>() + doc.at("lost_samples").get<double>();
  BOOST_TEST(samples >= 0.85 * periods, samples << " samples for " << periods << " periods");
  BOOST_TEST(samples <= 1.05 * periods + 4, samples << " samples for " << periods << " periods");
}

BOOST_FIXTURE_TEST_CASE(the_table_and_the_exit_status, Cli) {
  auto r = pmc({"profile", "--top", "3", "--", "sh", "-c", "echo hello; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3"});
  BOOST_TEST(r.status == 3, r);
  BOOST_TEST(r.out == "hello\n", r);  // the command's stdout stays its own
  BOOST_TEST(contains(r.err, " Profile for 'sh -c echo hello;"), r);
  BOOST_TEST(contains(r.err, "cpu-clock:period=100000"), r);
  BOOST_TEST(contains(r.err, " Execution level at each of the "), r);
  BOOST_TEST(contains(r.err, "   user "), r);
  BOOST_TEST(contains(r.err, "   guest user "), r);
  // The samples by function (the PC buckets only with --pc): sh's own code and libc's.
  BOOST_TEST(contains(r.err, " Samples by dso,sym ("), r);
  BOOST_TEST(contains(r.err, "Overhead     Samples  Object"), r);
  BOOST_TEST(contains(r.err, "[.] "), r);
  BOOST_TEST(!contains(r.err, "64 KiB window"), r);

  // --pc: that range, whatever fell there.
  r = pmc({"profile", "--json", "-o", report.string(), "--pc", "0x1000:0x2000", "-e", "task-clock:period=50000", "--",
           "true"});
  BOOST_TEST(r.status == 0, r);
  const json doc = report_json();
  BOOST_TEST(doc.at("pc_profile").at("chosen") == "--pc");
  BOOST_TEST(doc.at("pc_profile").at("buckets") == 256);
  BOOST_TEST(doc.at("counters").at(0).at("event") == "task-clock:period=50000");
}

BOOST_FIXTURE_TEST_CASE(pmc_profile_command_errors, Cli) {
  auto r = pmc({"profile", "--", "no-such-command-pmc-test"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: cannot run 'no-such-command-pmc-test': No such file or directory (not found in $PATH)\n", r);

  r = pmc({"profile", "--workload", "alpha-profile", "--", "true"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "either a simulated workload (--workload) or a command, not both"), r);

  r = pmc({"profile"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "pmc: profile needs a command"), r);

  const fs::path marker = tmp.path() / "ran";
  // On a CPU no backend drives (whatever this machine's is), a command is profiled by perf
  // sampling, which needs a sampling event.
  r = pmc({"profile", "--cpuid-dump", pmc_test::no_backend_dump(tmp).string(), "-e", "tsc", "--", "touch",
           marker.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "counts no sampling event"), r);
  BOOST_TEST(contains(r.err, "period"), r);
  BOOST_TEST(!fs::exists(marker));  // refused before the command runs

  r = pmc({"profile", "-e", "tsc:period=1000", "--", "touch", marker.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "pmc: event 'tsc:period=1000', column 5: modifier 'period'"), r);
  BOOST_TEST(!fs::exists(marker));

  r = pmc({"profile", "--pc", "0x20:0x10", "--", "true"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "empty range"), r);
}
