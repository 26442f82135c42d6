#define BOOST_TEST_MODULE multiplex_closed_form
#include <boost/test/unit_test.hpp>

// Issue 26, item 1: a multiplexed simulated workload (more events than counters) once ran in
// time proportional to its cycles, the runner looping slice by slice: 2^63 - 1 cycles took
// months. Now a long uniform segment rotates its event sets in closed form (hal/src/sim/
// runner.cpp). The slice-by-slice loop stays as the reference (detail::set_closed_form_rotation
// (false)): on the simulated Pentium III (2 counters), workloads of many shapes give the same
// counts, time enabled and time running both ways, and a 2^62-cycle segment finishes.

#include "runner.hpp"

#include <pmc/pmc.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

pmc::Hal pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  return pmc::Hal::open(cfg);
}

// Restores the closed form whatever a test does.
struct ClosedForm {
  ~ClosedForm() { pmc::detail::set_closed_form_rotation(true); }
};

struct Counted {
  std::vector<std::string> events;
  std::vector<std::uint64_t> value, enabled, running;
  std::vector<bool> extrapolated;
};

Counted count(const std::vector<std::string>& events, const std::string& workload, bool closed_form) {
  ClosedForm restore;
  pmc::detail::set_closed_form_rotation(closed_form);
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  for (const auto& e : events) s.add(e);
  s.run(pmc::parse_workload(workload, "inline.toml"));
  Counted out;
  for (const auto& r : s.read()) {
    out.events.push_back(r.event);
    out.value.push_back(r.value);
    out.enabled.push_back(r.time_enabled);
    out.running.push_back(r.time_running);
    out.extrapolated.push_back(r.extrapolated);
  }
  return out;
}

std::string segment(std::uint64_t cycles, const std::string& signals) {
  return "[[segment]]\ncycles = " + std::to_string(cycles) + "\nsignals = { " + signals + " }\n";
}

}  // namespace

// Two sets ({FLOPS, INST_RETIRED} and {CYCLES_DIV_BUSY}: both of the first and third need
// counter 0) and three sets (six events), segment lengths around and far above the slice
// (100,000 cycles) and the closed form's threshold, one after another so that segments start
// anywhere in a slice.
BOOST_AUTO_TEST_CASE(the_closed_form_counts_what_the_slice_loop_counts) {
  const std::vector<std::vector<std::string>> event_lists = {
      {"FLOPS", "CYCLES_DIV_BUSY", "INST_RETIRED"},
      {"FLOPS", "CYCLES_DIV_BUSY", "INST_RETIRED", "cycles", "MUL", "DIV"},
  };
  const std::vector<std::string> rates = {
      "instructions = 1, cycles_div_busy = 1",
      "instructions = 3, flops = 1",
      "instructions = 2, flops = 2, cycles_div_busy = 1",
  };
  const std::vector<std::uint64_t> lengths = {1,       99'999,    100'000,   100'001,   450'000,
                                              900'001, 1'000'000, 1'234'567, 3'000'001, 12'345'678};
  int shapes = 0;
  for (const auto& events : event_lists) {
    for (std::size_t first = 0; first < lengths.size(); ++first) {
      // A lead-in of lengths[first] cycles, then a long segment, then a short one.
      const std::uint64_t lead = lengths[first];
      const std::uint64_t body = lengths[(first + 7) % lengths.size()] + 2'000'000;
      const std::uint64_t tail = lengths[(first + 3) % lengths.size()];
      const std::string workload = segment(lead, rates[first % 3]) + segment(body, rates[(first + 1) % 3]) +
                                   segment(tail, rates[(first + 2) % 3]);
      BOOST_TEST_CONTEXT(events.size() << " events, segments " << lead << ", " << body << ", " << tail) {
        const Counted loop = count(events, workload, false);
        const Counted closed = count(events, workload, true);
        BOOST_TEST_REQUIRE(loop.events == closed.events);
        for (std::size_t i = 0; i < loop.events.size(); ++i) {
          BOOST_TEST_CONTEXT(loop.events[i]) {
            BOOST_TEST(closed.value[i] == loop.value[i]);
            BOOST_TEST(closed.enabled[i] == loop.enabled[i]);
            BOOST_TEST(closed.running[i] == loop.running[i]);
            BOOST_TEST(closed.extrapolated[i] == loop.extrapolated[i]);
          }
        }
        BOOST_TEST(loop.enabled[0] == lead + body + tail);
        BOOST_TEST(loop.extrapolated[0]);  // multiplexed indeed
        ++shapes;
      }
    }
  }
  BOOST_TEST(shapes == 20);
}

// 2^62 cycles, multiplexed: it finishes (slice by slice it would take months), every event
// enabled the whole time, the sets' running times adding up to it, and INST_RETIRED (2 a cycle,
// in the first set) counting exactly 2 per cycle it ran.
BOOST_AUTO_TEST_CASE(a_2_to_the_62_cycle_multiplexed_segment_finishes) {
  constexpr std::uint64_t kCycles = std::uint64_t{1} << 62;
  const Counted c = count({"FLOPS", "CYCLES_DIV_BUSY", "INST_RETIRED"},
                          segment(kCycles, "instructions = 2, flops = 1, cycles_div_busy = 1"), true);
  BOOST_TEST_REQUIRE(c.events.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(c.enabled[i] == kCycles);
  BOOST_TEST(c.running[0] == c.running[2]);                // FLOPS and INST_RETIRED share a set
  BOOST_TEST(c.running[0] + c.running[1] == kCycles);      // the two sets took turns all along
  const std::uint64_t slices0 = c.running[0] / 100'000, slices1 = c.running[1] / 100'000;
  BOOST_TEST((slices0 > slices1 ? slices0 - slices1 : slices1 - slices0) <= 1u);  // alternating slices
  BOOST_TEST(c.value[2] == 2 * kCycles);  // scaled from 2 x running: exact for a uniform segment
  BOOST_TEST(c.value[0] == kCycles);
  BOOST_TEST(c.value[1] == kCycles);
}
