#define BOOST_TEST_MODULE profile
#include <boost/test/unit_test.hpp>

// Profiling through the HAL (pmc/profile.hpp): Session::profile() on the alpha21064_sim backend,
// whose driver samples at counter interrupts (pfm(7) PFM_IPL and PFM_PROFILING), and the
// refusals of every backend and access method that cannot. Expected histograms are worked out
// by hand from docs/hardware/alpha21064.md and the model's documented rules (an interrupt
// every `period` events, in the cycle the counter reaches it; cycle j of N over pc [b, e) runs
// at b + floor(j (e - b) / N); slots 0-5 IPL, 7 idle, 8 user), as the example workloads'
// comments do.
//
// pmc profile and pmc probe are run in test_profile_cli.cpp.

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/messages.hpp"
#include "support/no_backend.hpp"

namespace {

namespace fs = std::filesystem;
using pmc::errc;
using u64 = std::uint64_t;

const fs::path kDumps = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";
const fs::path kWorkloads = fs::path(PMC_SOURCE_DIR) / "examples" / "workloads";

pmc::Hal open(const std::string& backend, const std::string& dump = "pentium-iii.txt") {
  pmc::Config cfg;
  cfg.cpu = (kDumps / dump).string();
  cfg.backend = backend;
  return pmc::Hal::open(cfg);
}

void run(pmc::Session& s, const pmc::Workload& w) {
  s.run(w);
}
void run(pmc::Session& s, const std::string& toml) { run(s, pmc::parse_workload(toml, "inline.toml")); }

std::vector<u64> samples_of(const pmc::LevelHistogram& h) {
  std::vector<u64> out;
  for (const auto& b : h.bins) out.push_back(b.samples);
  return out;
}

using pmc_test::contains;

// The error a call throws, or errc::ok.
template <class F>
errc error_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const pmc::Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return errc::ok;
}

// An alpha21064_sim session that counts `events` and profiles as `request` says, after one run
// of the workload (TOML text, or a file).
pmc::Session profiled(std::initializer_list<const char*> events, const pmc::ProfileRequest& request,
                      const pmc::Workload& workload) {
  pmc::Session s = open("alpha21064_sim").session();  // the session keeps what it needs of the Hal
  for (const char* e : events) s.add(e);
  s.profile(request);
  s.start();
  run(s, workload);
  s.stop();
  return s;
}
pmc::Session profiled(std::initializer_list<const char*> events, const pmc::ProfileRequest& request,
                      const std::string& toml) {
  return profiled(events, request, pmc::parse_workload(toml, "inline.toml"));
}

pmc::ProfileRequest levels_only() {
  pmc::ProfileRequest r;
  r.levels = true;
  return r;
}

pmc::ProfileRequest pc_only(pmc::AddressSpace space, u64 start, u64 end) {
  pmc::ProfileRequest r;
  r.pc = pmc::PcRange{space, start, end};
  return r;
}

// 16 KiB of user code, 8 KiB of kernel code, both walked once per segment.
const char* kUserThenKernel = R"(
[[segment]]
cycles = 16384
pc = [0x10000, 0x14000]
signals = { issues = 1 }

[[segment]]
cycles = 8192
mode = "kernel"
pc = [0x200000, 0x202000]
signals = { issues = 1 }
)";

}  // namespace

// ---------------------------------------------------------------------------------------------
// The level histogram.

BOOST_AUTO_TEST_CASE(ipl_histogram_of_the_bundled_workload) {
  // examples/workloads/alpha-ipl.toml: PF_CYCLES every 4096 cycles gives 10 user ticks, 2 at
  // IPL 0, 1 at IPL 3, 1 at IPL 5, none at IPL 7 (one pending and delivered to the idle thread,
  // one lost) and 5 + 1 idle ticks.
  pmc::Session s = profiled({"PF_CYCLES:period=4096"}, levels_only(),
                            pmc::load_workload(kWorkloads / "alpha-ipl.toml"));
  const auto hist = s.level_histograms();
  BOOST_TEST_REQUIRE(hist.size() == 1u);
  BOOST_TEST(samples_of(hist[0]) == (std::vector<u64>{2, 0, 0, 1, 0, 1, 0, 6, 10}), boost::test_tools::per_element());
  BOOST_TEST(hist[0].total() == 20u);
  BOOST_TEST(hist[0].bins.at(0).label == "IPL 0");
  BOOST_TEST(hist[0].bins.at(5).label == "IPL 5");
  BOOST_TEST(hist[0].bins.at(7).label == "idle");
  BOOST_TEST(hist[0].bins.at(8).label == "user");
  BOOST_TEST(hist[0].cpu == -1);
  BOOST_TEST(s.pc_profiles().empty());  // not asked for
  // The counts are unchanged by profiling: 20 interrupts x 4096.
  BOOST_TEST(s.read().at(0).value == 20u * 4096u);
}

BOOST_AUTO_TEST_CASE(both_counters_interrupts_are_sampled) {
  // 10,000 user cycles with a D-cache miss each: counter 0 (PF_CYCLES / 4096) interrupts 2
  // times, counter 1 (PF_DCACHE / 256) 39 times; all 41 land in the user slot.
  pmc::Session s = profiled({"PF_CYCLES:period=4096", "PF_DCACHE:period=256"}, levels_only(),
                            "[[segment]]\ncycles = 10000\nsignals = { l1d-misses = 1 }\n");
  const auto hist = s.level_histograms().at(0);
  BOOST_TEST(hist.bins.at(8).samples == 41u);
  BOOST_TEST(hist.total() == 41u);
}

BOOST_AUTO_TEST_CASE(an_unused_counter_is_disabled_and_not_sampled) {
  // Only PF_DCACHE is counted: the driver sets counter 0's disable bit. Counter 0 still counts
  // (MUX0 0 = ISSUES, +1 per dual-issue cycle; PC0 = 0: every 65,536) and interrupts, but the
  // handler dismisses those interrupts (pfm(7) NOTES): 65,536 dual-issue cycles give 1
  // counter-0 interrupt, not sampled; 512 misses give 2 counter-1 interrupts, sampled.
  pmc::Session s = profiled({"PF_DCACHE:period=256"}, levels_only(),
                            "[[segment]]\ncycles = 65536\nsignals = { issues = 2, l1d-misses = 0 }\n"
                            "[[segment]]\ncycles = 512\nsignals = { l1d-misses = 1 }\n");
  BOOST_TEST(pmc_test::device(s).interrupts() == 1u + 2u);  // delivered: 1 dismissed + 2 of counter 1
  BOOST_TEST(s.level_histograms().at(0).total() == 2u);
}

// ---------------------------------------------------------------------------------------------
// The PC profile.

BOOST_AUTO_TEST_CASE(pc_profile_of_the_bundled_workload) {
  // examples/workloads/alpha-profile.toml, user range [0x120000000, 0x120001000): one sample
  // in each of buckets 3, 7, ..., 255 from the whole program, 4 more in each of buckets 64-67
  // from the hot loop; the shared library and the kernel code are outside: 80 samples.
  pmc::Session s = profiled({"PF_CYCLES:period=4096"}, pc_only(pmc::AddressSpace::user, 0x120000000, 0x120001000),
                            pmc::load_workload(kWorkloads / "alpha-profile.toml"));
  BOOST_TEST(s.level_histograms().empty());  // not asked for
  const auto profiles = s.pc_profiles();
  BOOST_TEST_REQUIRE(profiles.size() == 1u);
  const pmc::PcProfile& p = profiles[0];
  BOOST_TEST(p.bucket_bytes == 16u);
  BOOST_TEST(p.samples.size() == 256u);
  BOOST_TEST(p.range.start == 0x120000000u);
  BOOST_TEST(p.range.end == 0x120001000u);
  BOOST_TEST(p.total() == 80u);
  for (std::size_t b = 0; b < 256; ++b) {
    u64 expected = (b % 4 == 3) ? 1 : 0;
    if (b >= 64 && b <= 67) expected += 4;
    BOOST_TEST(p.samples[b] == expected, "bucket " << b);
  }
  // Hottest first, ties in address order; buckets end where the next begins.
  const auto hot = p.hottest(5);
  BOOST_TEST_REQUIRE(hot.size() == 5u);
  BOOST_TEST(hot[0].start == 0x120000430u);
  BOOST_TEST(hot[0].end == 0x120000440u);
  BOOST_TEST(hot[0].samples == 5u);
  BOOST_TEST(hot[1].start == 0x120000400u);
  BOOST_TEST(hot[2].start == 0x120000410u);
  BOOST_TEST(hot[3].start == 0x120000420u);
  BOOST_TEST(hot[3].samples == 4u);
  BOOST_TEST(hot[4].start == 0x120000030u);  // the first of the single samples
  BOOST_TEST(hot[4].samples == 1u);
  // Never an empty bucket: 64 buckets from the program + 64, 65, 66.
  BOOST_TEST(p.hottest(1000).size() == 67u);
}

BOOST_AUTO_TEST_CASE(kernel_profile_samples_kernel_code_only) {
  // PF_CYCLES every 4096: the user segment's 4 interrupts are not sampled by a kernel profile;
  // the kernel segment's 2 fall in cycles 4095 and 8191, at offsets 4095 and 8191 of its 8 KiB:
  // buckets 255 and 511.
  pmc::ProfileRequest both = pc_only(pmc::AddressSpace::kernel, 0x200000, 0x202000);
  both.levels = true;
  pmc::Session s = profiled({"PF_CYCLES:period=4096"}, both, kUserThenKernel);
  const pmc::PcProfile p = s.pc_profiles().at(0);
  BOOST_TEST((p.range.space == pmc::AddressSpace::kernel));
  BOOST_TEST(p.samples.size() == 512u);
  BOOST_TEST(p.total() == 2u);
  BOOST_TEST(p.samples.at(255) == 1u);
  BOOST_TEST(p.samples.at(511) == 1u);
  // The level histogram sees all six: 4 user, 2 at IPL 0.
  BOOST_TEST(samples_of(s.level_histograms().at(0)) == (std::vector<u64>{2, 0, 0, 0, 0, 0, 0, 0, 4}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(last_bucket_is_cut_at_the_range_end) {
  // A range of 20 bytes: buckets [0x1000, 0x1010) and [0x1010, 0x1014).
  pmc::Session s = profiled({"PF_CYCLES:period=4096"}, pc_only(pmc::AddressSpace::user, 0x1000, 0x1014),
                            "[[segment]]\ncycles = 8192\npc = [0x1000, 0x1014]\n");
  const pmc::PcProfile p = s.pc_profiles().at(0);
  BOOST_TEST(p.samples.size() == 2u);
  BOOST_TEST(p.bucket(1).start == 0x1010u);
  BOOST_TEST(p.bucket(1).end == 0x1014u);
  // Interrupts in cycles 4095 and 8191: PCs 0x1000 + floor(4095 * 20 / 8192) = 0x1009 and
  // 0x1000 + 19 = 0x1013.
  BOOST_TEST(p.samples[0] == 1u);
  BOOST_TEST(p.samples[1] == 1u);
}

// ---------------------------------------------------------------------------------------------
// Lifecycle.

BOOST_AUTO_TEST_CASE(histograms_accumulate_across_stop_and_start_and_reset_empties_them) {
  pmc::Hal hal = open("alpha21064_sim");
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  pmc::ProfileRequest both = pc_only(pmc::AddressSpace::user, 0x10000, 0x14000);
  both.levels = true;
  s.profile(both);
  BOOST_TEST(s.level_histograms().empty());  // nothing collected before the first start
  BOOST_TEST(s.profile_request().levels);
  s.start();
  run(s, kUserThenKernel);
  s.stop();
  BOOST_TEST(s.level_histograms().at(0).total() == 6u);
  BOOST_TEST(s.pc_profiles().at(0).total() == 4u);
  s.start();
  run(s, kUserThenKernel);
  s.stop();
  BOOST_TEST(s.level_histograms().at(0).total() == 12u);
  BOOST_TEST(s.pc_profiles().at(0).total() == 8u);

  s.reset();
  BOOST_TEST(s.level_histograms().at(0).total() == 0u);
  BOOST_TEST(s.pc_profiles().at(0).total() == 0u);
  BOOST_TEST(s.pc_profiles().at(0).samples.size() == 1024u);  // same range, empty
  BOOST_TEST(s.read().at(0).value == 0u);
  s.start();
  run(s, kUserThenKernel);
  s.stop();
  BOOST_TEST(s.level_histograms().at(0).total() == 6u);
  BOOST_TEST(s.pc_profiles().at(0).total() == 4u);
}

BOOST_AUTO_TEST_CASE(profiling_changes_only_while_stopped_and_an_empty_request_stops_it) {
  pmc::Hal hal = open("alpha21064_sim");
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.profile(levels_only());
  s.start();
  std::string message;
  BOOST_TEST(error_of([&] { s.profile(pc_only(pmc::AddressSpace::user, 0, 16)); }, &message) == errc::invalid_argument);
  BOOST_TEST(contains(message, "while the session is counting"), message);
  run(s, kUserThenKernel);
  s.stop();
  BOOST_TEST(s.level_histograms().at(0).total() == 6u);

  s.profile({});
  BOOST_TEST(s.profile_request().empty());
  BOOST_TEST(s.level_histograms().empty());
  s.start();
  run(s, kUserThenKernel);
  s.stop();
  BOOST_TEST(s.level_histograms().empty());
  BOOST_TEST(s.read().at(0).value == 12u * 4096u);  // the counts carried on
}

// ---------------------------------------------------------------------------------------------
// Refusals: one message naming what cannot be done and what can.

// The P5 cannot interrupt on overflow (docs/profiling.md): its backend has no ProfilingDriver.
BOOST_AUTO_TEST_CASE(a_backend_without_a_profiling_driver_is_refused) {
  pmc::Hal hal = open("p5", "pentium-mmx.txt");
  pmc::Session s = hal.session();
  s.add("INSTRUCTIONS_EXECUTED");
  std::string message;
  BOOST_TEST(error_of([&] { s.profile(levels_only()); }, &message) == errc::not_supported);
  BOOST_TEST(contains(message, "backend 'p5' collects no profiles"), message);
  BOOST_TEST(contains(message, "alpha21064_sim"), message);
  BOOST_TEST(s.profile_request().empty());
}

// Without a backend a session profiles through Linux perf sampling (tests/hal/access/test_perf_profile.cpp):
// the request is accepted, and start() refuses a session without a sampling event, saying what
// a PMU profile would need.
BOOST_AUTO_TEST_CASE(no_backend_needs_a_sampling_event) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = pmc_test::no_backend_hal(tmp);  // a Transmeta Crusoe: no backend matches it
  BOOST_TEST_REQUIRE(hal.backend() == nullptr);
  pmc::Session s = hal.session(pmc::Scope::this_thread());  // HAL events only
  s.add("task-clock");
  s.profile(levels_only());
  std::string message;
  BOOST_TEST(error_of([&] { s.start(); }, &message) == errc::invalid_argument);
  BOOST_TEST(contains(message, "counts no sampling event"), message);
  BOOST_TEST(contains(message, "cpu-clock:period=100000"), message);
  BOOST_TEST(contains(message, "no backend matches this CPU (GenuineTMx86"), message);
  BOOST_TEST(contains(message, "backend = \"alpha21064_sim\""), message);
}

// Access "perf" samples the HAL clock events; access "msr" cannot receive interrupts.
BOOST_AUTO_TEST_CASE(access_msr_is_refused_and_perf_needs_a_sampling_event) {
  {
    pmc::Config cfg;
    cfg.cpu = (kDumps / "pentium-iii.txt").string();
    cfg.backend = "alpha21064_sim";
    cfg.access = "perf";
    pmc::Hal hal = pmc::Hal::open(cfg);
    pmc::Session s = hal.session();
    s.add("cpu-clock");
    s.profile(levels_only());
    std::string message;
    BOOST_TEST(error_of([&] { s.start(); }, &message) == errc::invalid_argument);
    BOOST_TEST(contains(message, "counts no sampling event; add cpu-clock or task-clock with a sampling period"),
               message);
  }
  for (const char* access : {"msr"}) {
    pmc::Config cfg;
    cfg.cpu = (kDumps / "pentium-iii.txt").string();
    cfg.backend = "alpha21064_sim";
    cfg.access = access;
    pmc::Hal hal = pmc::Hal::open(cfg);
    pmc::Session s = hal.session();
    std::string message;
    BOOST_TEST(error_of([&] { s.profile(levels_only()); }, &message) == errc::not_supported);
    BOOST_TEST(contains(message, std::string("access '") + access + "'"), message);
    BOOST_TEST(contains(message, "access = \"sim\""), message);
  }
}

BOOST_AUTO_TEST_CASE(ranges_the_driver_cannot_hold_are_refused) {
  pmc::Hal hal = open("alpha21064_sim");
  pmc::Session s = hal.session();
  s.add("PF_CYCLES");
  std::string message;
  BOOST_TEST(error_of([&] { s.profile(pc_only(pmc::AddressSpace::user, 0x2000, 0x2000)); }, &message) ==
             errc::invalid_argument);
  BOOST_TEST(contains(message, "[0x2000, 0x2000) is empty"), message);
  // pfm(7) ENOMEM: the buffer covers less than 2^24 bytes (2^20 buckets of 16).
  BOOST_TEST(error_of([&] { s.profile(pc_only(pmc::AddressSpace::user, 0, u64{1} << 24)); }, &message) ==
             errc::invalid_argument);
  BOOST_TEST(contains(message, "16777216 bytes"), message);
  BOOST_TEST(s.profile_request().empty());  // refused: nothing changed
  // One byte less fits: 2^20 buckets, the last one 15 bytes.
  s.profile(pc_only(pmc::AddressSpace::user, 0, (u64{1} << 24) - 1));
  s.start();
  run(s, "[[segment]]\ncycles = 4096\npc = [0xFFFFF0, 0xFFFFFF]\n");
  s.stop();
  const pmc::PcProfile p = s.pc_profiles().at(0);
  BOOST_TEST(p.samples.size() == (std::size_t{1} << 20));
  BOOST_TEST(p.samples.back() == 0u);  // PF_CYCLES every 65536: no interrupt yet
}

BOOST_AUTO_TEST_CASE(a_profile_needs_a_pmu_event) {
  pmc::Hal hal = open("alpha21064_sim");
  pmc::Session s = hal.session();
  s.add("tsc");
  s.profile(levels_only());
  std::string message;
  BOOST_TEST(error_of([&] { s.start(); }, &message) == errc::invalid_argument);
  BOOST_TEST(contains(message, "counts no PMU event"), message);
  BOOST_TEST(!s.running());
}

// ---------------------------------------------------------------------------------------------
// PcProfile arithmetic.

BOOST_AUTO_TEST_CASE(hottest_orders_by_samples_then_address) {
  pmc::PcProfile p;
  p.range = {pmc::AddressSpace::user, 0x100, 0x150};
  p.bucket_bytes = 16;
  p.samples = {3, 0, 7, 3, 1};
  BOOST_TEST(p.total() == 14u);
  const auto hot = p.hottest(3);
  BOOST_TEST_REQUIRE(hot.size() == 3u);
  BOOST_TEST(hot[0].start == 0x120u);
  BOOST_TEST(hot[1].start == 0x100u);
  BOOST_TEST(hot[2].start == 0x130u);
  BOOST_TEST(p.hottest(0).empty());
  BOOST_TEST(p.hottest(99).size() == 4u);  // bucket 1 is empty
  BOOST_TEST(p.bucket(4).end == 0x150u);
}
