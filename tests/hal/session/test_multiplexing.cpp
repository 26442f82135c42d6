#define BOOST_TEST_MODULE multiplexing
#include <boost/test/unit_test.hpp>

// Multiplexing on the register path (access "sim" and "msr"): more events than counters is not
// an error; the session splits them into event sets the PMU holds at once, rotates the sets over
// the counters (every 100,000 cycles of the simulated workload; at poll() after 4 ms on "msr"),
// keeps time enabled and running per event, and scales like a multiplexed perf event
// (value = raw x enabled / running, extrapolated). On the simulated Pentium III the exact counts
// are known from the workload, so the scaling error is checked against the error the rotation
// implies, and is zero when the events fit.

#include "session_impl.hpp"
#include "support/backend.hpp"
#include "support/child_process.hpp"

#include <pmc/pmc.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kSlice = pmc::detail::AccessOptions::kRotationCycles;  // 100,000 cycles

pmc::Hal pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  return pmc::Hal::open(cfg);
}

const pmc::Reading& find(const std::vector<pmc::Reading>& rs, const std::string& event) {
  for (const auto& r : rs)
    if (r.event == event) return r;
  BOOST_FAIL("no reading for " << event);
  return rs.front();
}

std::uint64_t scaled(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) {
  return (raw * enabled + running / 2) / running;  // perf's rounding
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_set_that_fits_is_exact_and_not_scaled) {
  // 300,000 cycles at 2 instructions a cycle: P6's two counters hold cycles and instructions.
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  s.add("cycles");
  s.add("instructions");
  s.run(pmc::parse_workload("[[segment]]\ncycles = 300000\nsignals = { instructions = 2 }\n", "inline.toml"));
  const auto r = s.read();
  for (const auto& x : r) {
    BOOST_TEST(!x.extrapolated, x.event);
    BOOST_TEST(x.time_enabled == 300'000u, x.event);  // cycles of the workload
    BOOST_TEST(x.time_running == x.time_enabled, x.event);
  }
  BOOST_TEST(r[0].value == 300'000u);
  BOOST_TEST(r[1].value == 600'000u);
}

BOOST_AUTO_TEST_CASE(scaling_worked_out_by_hand) {
  // FLOPS and CYCLES_DIV_BUSY both need P6 counter 0: two sets, {FLOPS on 0, INST_RETIRED on 1}
  // (first fit in the order added) and {CYCLES_DIV_BUSY on 0}. The workload: 250,000 cycles at 1
  // instruction and 1 divider-busy cycle a cycle, then 150,000 cycles at 3 instructions and 1 FLOP.
  // Slices of 100,000 cycles: set 0 runs [0, 100k) and [200k, 300k), set 1 [100k, 200k) and
  // [300k, 400k); enabled 400,000, running 200,000 each.
  //   INST_RETIRED     raw 100,000 + (50,000 + 50,000 x 3) = 300,000 -> scaled 600,000 (exact 700,000)
  //   FLOPS            raw 50,000                          -> scaled 100,000 (exact 150,000)
  //   CYCLES_DIV_BUSY  raw 100,000 + 0                     -> scaled 200,000 (exact 250,000)
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  s.add("FLOPS");
  s.add("CYCLES_DIV_BUSY");
  s.add("INST_RETIRED");
  s.run(pmc::parse_workload(R"([[segment]]
cycles = 250000
signals = { instructions = 1, cycles_div_busy = 1 }
[[segment]]
cycles = 150000
signals = { instructions = 3, flops = 1 }
)",
                            "inline.toml"));
  const auto r = s.read();
  BOOST_TEST(find(r, "INST_RETIRED").value == 600'000u);
  BOOST_TEST(find(r, "FLOPS").value == 100'000u);
  BOOST_TEST(find(r, "CYCLES_DIV_BUSY").value == 200'000u);
  for (const auto& x : r) {
    BOOST_TEST(x.extrapolated, x.event);
    BOOST_TEST(x.time_enabled == 400'000u, x.event);
    BOOST_TEST(x.time_running == 200'000u, x.event);
  }
  BOOST_TEST(find(r, "FLOPS").counter == 0u);
  BOOST_TEST(find(r, "INST_RETIRED").counter == 1u);
  BOOST_TEST(find(r, "CYCLES_DIV_BUSY").counter == 0u);
}

BOOST_AUTO_TEST_CASE(six_p6_events_on_p6_demo_within_the_rotation_error) {
  // Six events on two counters: {cycles, instructions}, {FLOPS on 0, MUL on 1}, {DIV on 1,
  // branches on 0}: k = 3 sets. p6-demo runs 6,290,000 cycles = 62 slices of 100,000 and one of
  // 90,000: sets 0 and 1 get 21 slices (2,100,000 cycles), set 2 20 and the partial one
  // (2,090,000).
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  for (const char* e : {"cycles", "instructions", "FLOPS", "MUL", "DIV", "branches"}) s.add(e);
  const pmc::Workload w = pmc::load_workload(std::string(PMC_SOURCE_DIR) + "/examples/workloads/p6-demo.toml");
  s.run(w);
  const auto r = s.read();
  BOOST_REQUIRE_EQUAL(r.size(), 6u);
  // The exact counts, from the workload file (its segments, by hand), the per-cycle rate's
  // largest value and its changes along the run:
  struct Exact {
    const char* event;
    std::uint64_t count;
    double rmax, delta;   // the largest rate per cycle; the largest change of it
    unsigned changes;     // boundaries where the rate changes
    std::uint64_t running;
  };
  const Exact exact[] = {
      // unhalted: 6,290,000 - 1,000,000 halted; 1 per cycle, 0 while halted
      {"cycles", 5'290'000, 1, 1, 1, 2'100'000},
      // 200k + 750k x 4 x 2 + 1M + 20k + 400k + 10k + 100k + 20k + 150k; rates 1 2 1 1 1 1 0 1 1 1 0
      {"instructions", 7'900'000, 2, 2, 5, 2'100'000},
      {"FLOPS", 3'000'000, 1, 1, 2, 2'100'000},   // the FP kernel, 1 a cycle
      {"MUL", 400'000, 1, 1, 2, 2'100'000},       // 400,000 cycles of multiplies
      {"DIV", 10'000, 1, 1, 2, 2'090'000},        // 10,000 cycles of divides
      // 200k kernel + 1M + 20k + 150k kernel; rates 1 0 1 1 0 0 0 0 0 1 0
      {"branches", 1'370'000, 1, 1, 5, 2'090'000},
  };
  // The error the rotation implies (k sets, slices of S cycles; periods of kS): in a period where
  // the rate is constant the event's slice holds exactly 1/k of the period's count, so only the
  // periods with a rate change (at most `changes` of them) err, each by at most kS x delta; the
  // last, partial period and the ratio enabled / running add at most 3 x kS x rmax:
  //   |scaled - exact| <= kS x (changes x delta + 3 x rmax).
  const double kS = 3.0 * static_cast<double>(kSlice);
  for (const Exact& e : exact) {
    const pmc::Reading& x = find(r, e.event);
    BOOST_TEST_CONTEXT(e.event) {
      BOOST_TEST(x.extrapolated);
      BOOST_TEST(x.time_enabled == 6'290'000u);
      BOOST_TEST(x.time_running == e.running);
      const double error = std::abs(static_cast<double>(x.value) - static_cast<double>(e.count));
      const double bound = kS * (e.changes * e.delta + 3 * e.rmax);
      BOOST_TEST(error <= bound, "scaled " << x.value << ", exact " << e.count << ", bound " << bound);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_group_stays_in_one_set) {
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  s.add_group({"FLOPS", "MUL"});
  s.add("CYCLES_DIV_BUSY");  // counter 0: a set of its own
  // MUL and DIV both need counter 1: as a group they cannot count at all, and nothing changes.
  try {
    s.add_group({"INST_RETIRED", "MUL", "DIV"});
    BOOST_ERROR("MUL and DIV were grouped on a P6");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::no_counter), e.what());
    BOOST_TEST(std::string(e.what()).find("MUL, DIV") != std::string::npos, e.what());
  }
  BOOST_TEST(s.encodings().size() == 3u);
  s.run(pmc::parse_workload("[[segment]]\ncycles = 200000\nsignals = { flops = 1, mul = 1 }\n", "inline.toml"));
  const auto r = s.read();
  // The group ran in the first slice, together: the same running time and counts.
  BOOST_TEST(find(r, "FLOPS").time_running == 100'000u);
  BOOST_TEST(find(r, "MUL").time_running == 100'000u);
  BOOST_TEST(find(r, "FLOPS").value == 200'000u);  // 100,000 scaled by 2
  BOOST_TEST(find(r, "CYCLES_DIV_BUSY").value == 0u);
}

BOOST_AUTO_TEST_CASE(unknown_events_name_the_nearest) {
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  try {
    s.add("INST_RETIRD");
    BOOST_ERROR("a misspelt event was added");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::not_found));
    BOOST_TEST(std::string(e.what()).find("nearest names: INST_RETIRED") != std::string::npos, e.what());
  }
  try {
    s.add("tsk-clock");
    BOOST_ERROR("a misspelt event was added");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("nearest names: task-clock") != std::string::npos, e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Access "msr" over a file-backed /dev/cpu tree (as tests/hal/access/test_msr.cpp builds it): the sets
// rotate at poll() once their slice (here 1 ns) is over, the event selects change with them, and
// the running times add up to the enabled time.
namespace {

struct FakeTree {
  pmc_test::TempDir tmp{"pmc-test-mux"};
  pmc::detail::AccessOptions options;
  FakeTree() {
    options.msr_root = tmp.path() / "dev" / "cpu";
    options.proc_root = tmp.path() / "proc";
    options.sysfs_root = tmp.path() / "sys";
    options.load_msr_module = false;
    options.rotation_ns = 1;
    pmc_test::spit(options.proc_root / "sys" / "kernel" / "nmi_watchdog", "0\n");
    const fs::path dev = options.msr_root / "0" / "msr";
    fs::create_directories(dev.parent_path());
    const int fd = ::open(dev.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(ftruncate(fd, 0x1000) == 0);
    ::close(fd);
  }
  // A file's 8-byte records at neighbouring offsets overlap: PERFEVTSEL0 (0x186) keeps its low
  // byte, the event code, whatever 0x187 gets.
  std::uint8_t event_code() const {
    const int fd = ::open((options.msr_root / "0" / "msr").c_str(), O_RDONLY);
    std::uint8_t v = 0;
    BOOST_REQUIRE(pread(fd, &v, 1, 0x186) == 1);
    ::close(fd);
    return v;
  }
  void poke_counter0(std::uint64_t v) const {
    const int fd = ::open((options.msr_root / "0" / "msr").c_str(), O_RDWR);
    BOOST_REQUIRE(pwrite(fd, &v, 8, 0xC1) == 8);
    ::close(fd);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(msr_rotates_at_poll, FakeTree) {
  const pmc_test::LoadedForTest p6("p6");
  auto ctx = std::make_shared<pmc::detail::Context>();
  ctx->loaded = p6.b;
  ctx->cpu = pmc::read_native_cpu();
  ctx->catalog = p6.data;
  ctx->pmu = p6.pmu(ctx->cpu);
  ctx->access = pmc::detail::AccessKind::msr;
  pmc::detail::SessionImpl s(ctx, pmc::Scope::on_cpu(0), options);
  s.add("FLOPS");            // 0xC1, counter 0
  s.add("CYCLES_DIV_BUSY");  // 0x14, counter 0: the second set
  s.add("INST_RETIRED");     // counter 1, with FLOPS
  BOOST_TEST(s.event_sets() == 2u);
  s.start();
  BOOST_TEST(event_code() == 0xC1);
  poke_counter0(5);  // FLOPS counts 5
  s.poll();          // the slice (1 ns) is over: CYCLES_DIV_BUSY goes on counter 0, zeroed
  BOOST_TEST(event_code() == 0x14);
  poke_counter0(7);  // CYCLES_DIV_BUSY counts 7
  s.poll();          // back to the first set
  BOOST_TEST(event_code() == 0xC1);
  s.stop();
  const auto r = s.read();
  const pmc::Reading& flops = r.at(0);
  const pmc::Reading& div = r.at(1);
  BOOST_TEST(flops.time_enabled == div.time_enabled);
  BOOST_TEST(flops.time_running + div.time_running == flops.time_enabled);  // one set at a time
  BOOST_TEST(r.at(2).time_running == flops.time_running);                  // same set
  BOOST_TEST(flops.extrapolated);
  BOOST_TEST(flops.value == scaled(5, flops.time_enabled, flops.time_running));
  BOOST_TEST(div.value == scaled(7, div.time_enabled, div.time_running));
}
