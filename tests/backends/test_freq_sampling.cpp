// Sampling at a frequency on the simulated x86 PMUs: `freq=N` on an event of the p6, archperf
// (general and fixed counters) and amd backends, the simulated PMI handler adjusting each
// counter's period so that about N interrupts come a second of simulated time, the model's
// cycles over its clock (docs/profiling.md, "Sampling at a frequency"). The workload
// (tests/data/workloads/freq-sampling.toml, written for this test) runs 900,000,000 cycles, so
// F x 900e6 / clock samples are expected. The stated tolerance: 2% of that plus 12 samples. The
// handler starts at period 1 as the kernel's freq mode does and moves an eighth of the way to
// the wanted period at each interrupt: the ramp adds about 8 samples, and each change of the
// event's rate between segments a few more (the docs work this out); a handler that ignored
// freq= (period 1 throughout) gives ~10^9 samples, one that never adjusted ~10^5.
// The counts themselves are exact whatever the period does: 900,000,000 cycles and
// 1,900,000,000 instructions. And where freq= cannot be had (no clock, the P5, the Alpha, access
// "msr", freq=0, freq= with period=) it is refused with the reason.
#define BOOST_TEST_MODULE freq_sampling
#include <boost/test/unit_test.hpp>

#include "support/device.hpp"
#include "support/messages.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>
#include <pmc/workload.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using pmc_test::contains;
using pmc_test::message_of;

using u64 = std::uint64_t;

constexpr double kCycles = 900e6;
constexpr u64 kInstructions = 1'900'000'000;
const pmc::PcRange kUserCode{pmc::AddressSpace::user, 0x400000, 0x401000};

pmc::Workload workload() {
  return pmc::load_workload(std::string(PMC_TEST_DATA) + "/workloads/freq-sampling.toml");
}

pmc::Hal open(const std::string& dump, const std::string& access = "", const std::string& backend = "") {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  if (!access.empty()) cfg.access = access;
  if (!backend.empty()) cfg.backend = backend;
  return pmc::Hal::open(cfg);
}

struct Sampled {
  u64 count = 0;    // the event's reading
  u64 samples = 0;  // the level histogram's total
  u64 profiled = 0; // samples in kUserCode (segment A)
};

// One event sampled through the workload; `clock_hz` (when not 0) is given to the model first.
Sampled sample(const std::string& dump, const std::string& event, u64 clock_hz = 0) {
  pmc::Session s = open(dump).session();
  s.add(event);
  if (clock_hz) pmc_test::device(s).configure("clock_hz", clock_hz);
  s.profile({true, kUserCode});
  s.run(workload());
  Sampled out;
  out.count = s.read().at(0).value;
  out.samples = s.level_histograms().at(0).total();
  out.profiled = s.pc_profiles().at(0).total();
  BOOST_TEST_MESSAGE(dump << " " << event << ": " << out.samples << " samples, " << out.profiled << " in A");
  return out;
}

// F x simulated seconds, within 2% + 12.
void near_rate(u64 samples, double freq, double clock_hz) {
  const double expected = freq * kCycles / clock_hz;
  BOOST_TEST(std::fabs(static_cast<double>(samples) - expected) <= 0.02 * expected + 12,
             samples << " samples, expected " << expected << " (freq " << freq << " x " << kCycles / clock_hz
                     << " s)");
}

}  // namespace

// Pentium M 1.80GHz (its brand string): 900e6 cycles are 0.5 s; 1,000 a second gives ~500.
// Segment A is 5/9 of the cycles: ~278 samples of the cycles event land in its code.
BOOST_AUTO_TEST_CASE(p6_cycles_and_instructions_at_1000_a_second) {
  const Sampled cycles = sample("pentium-m.txt", "CPU_CLK_UNHALTED:freq=1000");
  BOOST_TEST(cycles.count == 900'000'000u);
  near_rate(cycles.samples, 1000, 1.8e9);
  near_rate(cycles.profiled, 1000 * 5.0 / 9.0, 1.8e9);
  // Instructions change rate at each segment (2, 1, 3 a cycle): the period follows.
  const Sampled inst = sample("pentium-m.txt", "INST_RETIRED:freq=1000");
  BOOST_TEST(inst.count == kInstructions);
  near_rate(inst.samples, 1000, 1.8e9);
}

// Core i7-6700K @ 4.00GHz: 0.225 s; 4,000 a second gives ~900, on a general counter
// (CPU_CLK_UNHALTED.THREAD_P) and on fixed counter 1 (CPU_CLK_UNHALTED.THREAD) alike.
BOOST_AUTO_TEST_CASE(archperf_general_and_fixed_counters_at_4000_a_second) {
  const Sampled gp = sample("skylake.txt", "CPU_CLK_UNHALTED.THREAD_P:freq=4000");
  BOOST_TEST(gp.count == 900'000'000u);
  near_rate(gp.samples, 4000, 4e9);
  const Sampled fixed = sample("skylake.txt", "CPU_CLK_UNHALTED.THREAD:freq=4000");
  BOOST_TEST(fixed.count == 900'000'000u);
  near_rate(fixed.samples, 4000, 4e9);
  const Sampled inst = sample("skylake.txt", "INST_RETIRED.ANY:freq=500");  // fixed counter 0
  BOOST_TEST(inst.count == kInstructions);
  near_rate(inst.samples, 500, 4e9);
}

// AMD's brand strings name no clock: given one (clock_hz 3 GHz), 0.3 s; 1,000 a second, ~300.
BOOST_AUTO_TEST_CASE(amd_at_1000_a_second_with_a_clock_given) {
  const Sampled cycles = sample("amd-zen4-genoa.txt", "cycles:freq=1000", 3'000'000'000);
  BOOST_TEST(cycles.count == 900'000'000u);
  near_rate(cycles.samples, 1000, 3e9);
  const Sampled k8 = sample("amd-k8-revf.txt", "instructions:freq=2000", 2'000'000'000);
  BOOST_TEST(k8.count == kInstructions);
  near_rate(k8.samples, 2000, 2e9);
}

// The canonical form carries the frequency; a precision alone samples at perf record's 4,000.
BOOST_AUTO_TEST_CASE(canonical_forms_and_the_default_frequency_of_a_precision) {
  pmc::Session s = open("skylake.txt").session();
  s.add("CPU_CLK_UNHALTED.THREAD_P:freq=4000");
  s.add("INST_RETIRED.ANY_P:pp");
  const auto r = s.read();
  BOOST_TEST(contains(r.at(0).canonical, ":freq=4000"), r.at(0).canonical);
  BOOST_TEST(contains(r.at(1).canonical, ":freq=4000:pp"), r.at(1).canonical);
  const Sampled precise = sample("skylake.txt", "INST_RETIRED.ANY_P:p");
  near_rate(precise.samples, 4000, 4e9);
}

// No clock, no frequency: the Pentium III's CPUID has no brand string, no leaf 15H or 16H.
BOOST_AUTO_TEST_CASE(a_cpu_without_a_clock_refuses_freq_with_the_reason) {
  pmc::Session s = open("pentium-iii.txt").session();
  s.add("INST_RETIRED:freq=1000");
  const std::string why = message_of([&] { s.run(workload()); });
  BOOST_TEST(contains(why, "INST_RETIRED:freq=1000"), why);
  BOOST_TEST(contains(why, "gives none (no CPUID 15H or 16H, no frequency in its brand string)"), why);
  // The AMD model without clock_hz: the same.
  pmc::Session amd = open("amd-zen4-genoa.txt").session();
  amd.add("cycles:freq=1000");
  BOOST_TEST(contains(message_of([&] { amd.run(workload()); }), "gives none"));
}

BOOST_AUTO_TEST_CASE(bad_frequencies_are_refused_naming_the_event) {
  pmc::Session s = open("pentium-m.txt").session();
  const std::string zero = message_of([&] { s.add("INST_RETIRED:freq=0"); });
  BOOST_TEST(contains(zero, "INST_RETIRED:freq=0"), zero);
  BOOST_TEST(contains(zero, "freq=0 is not a sampling frequency"), zero);
  const std::string both = message_of([&] { s.add("INST_RETIRED:period=1000:freq=100"); });
  BOOST_TEST(contains(both, "INST_RETIRED:period=1000:freq=100"), both);
  BOOST_TEST(contains(both, "freq= and period= together"), both);
  pmc::Session amd = open("amd-zen4-genoa.txt").session();
  const std::string both_amd = message_of([&] { amd.add("cycles:freq=100:period=1000"); });
  BOOST_TEST(contains(both_amd, "freq= and period= together"), both_amd);
}

// The P5 cannot interrupt on overflow, as for period=.
BOOST_AUTO_TEST_CASE(the_p5_refuses_freq_with_its_reason) {
  pmc::Session s = open("pentium-mmx.txt").session();
  const std::string why = message_of([&] { s.add("INSTRUCTIONS_EXECUTED:freq=1000"); });
  BOOST_TEST(contains(why, "cannot be sampled (freq=)"), why);
  BOOST_TEST(contains(why, "cannot interrupt on overflow"), why);
}

// The Alpha 21064's counters interrupt at fixed 2^N intervals: nothing to adjust.
BOOST_AUTO_TEST_CASE(the_alpha_refuses_freq_with_its_reason) {
  pmc::Session s = open("pentium-iii.txt", "", "alpha21064_sim").session();
  const std::string why = message_of([&] { s.add("PF_CYCLES:freq=1000"); });
  BOOST_TEST(contains(why, "PF_CYCLES:freq=1000"), why);
  BOOST_TEST(contains(why, "fixed intervals of 2^N events"), why);
}

// Access "msr" cannot take the interrupt in user space, as for period=.
BOOST_AUTO_TEST_CASE(msr_access_refuses_freq) {
  pmc::Session s = open("pentium-m.txt", "msr").session();
  const std::string why = message_of([&] { s.add("INST_RETIRED:freq=1000"); });
  BOOST_TEST(contains(why, "INST_RETIRED:freq=1000"), why);
  BOOST_TEST(contains(why, "freq= samples at the counter's overflow interrupt"), why);
  BOOST_TEST(contains(why, "access 'msr' cannot receive"), why);
}
