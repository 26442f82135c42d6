// pmc-conformance: the driver on its device model, through sessions of access "sim": every
// event programs without a register fault; every counter counts at once; the user and kernel
// filters count apart; counts stay exact across several wraps (docs/writing-a-backend.md, "The
// conformance kit").
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include "kit.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace kit;

namespace {

std::string counter_name(const pmc::CounterInfo& c) {
  return (c.kind == pmc::CounterKind::fixed ? "fixed counter " : "general counter ") + std::to_string(c.index);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The count a reading of an interrupt-counting PMU shows: whole multiples of its granularity.
std::uint64_t in_steps(std::uint64_t count, const pmc::Reading& r) {
  const std::uint64_t step = r.granularity ? r.granularity : 1;
  return count / step * step;
}

}  // namespace

// The driver programs every event on the device model without a register fault.
BOOST_AUTO_TEST_CASE(the_driver_programs_every_event_on_the_model) {
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << pmu.device_model) {
        for (const pmc::EventDef* e : hal.events().for_cpu(pmu.cpu_tag)) {
          const std::string event = default_string(*e);
          pmc::Session s = hal.session();
          if (!step("add(" + event + ")", [&] { s.add(event); })) continue;
          if (!step("start() with " + event, [&] { s.start(); })) continue;
          step("stop() with " + event, [&] { s.stop(); });
          step("read() of " + event, [&] { (void)s.read(); });
        }
      }
    }
}

// One event of known count on every counter the PMU declares, all enabled together (one
// group, so no multiplexing): every counter counts, and each count is the workload's. A driver
// that enables only some of the counters, or a model that counts on only some, fails here.
BOOST_AUTO_TEST_CASE(every_counter_counts_at_once) {
  constexpr std::uint64_t kCycles = 150'000, kInstructions = 3;
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << pmu.device_model) {
        std::vector<CounterPlan> plan = plan_every_counter(hal);
        std::vector<std::string> group;
        std::vector<KnownEvent> events;
        std::set<std::pair<int, unsigned>> planned;
        for (const CounterPlan& p : plan) {
          if (!p.event) {
            BOOST_TEST_MESSAGE(name << ": no event of known count may use " << counter_name(*p.counter)
                                    << " (cycles, instructions): not checked");
            continue;
          }
          group.push_back(p.event->string);
          events.push_back(*p.event);
          planned.insert({static_cast<int>(p.counter->kind), p.counter->index});
        }
        if (group.empty()) continue;
        pmc::Session s = hal.session();
        if (!step("add_group({" + join(group) + "}), one event per counter", [&] { s.add_group(group); })) continue;
        const pmc::Workload w = pmc::parse_workload("[[segment]]\ncycles = " + std::to_string(kCycles) +
                                                        "\nsignals = { instructions = " +
                                                        std::to_string(kInstructions) + " }\n",
                                                    "every-counter.toml");
        if (!step("run() with every counter on", [&] { (void)s.run(w); })) continue;
        const auto& readings = s.read();
        BOOST_TEST_REQUIRE(readings.size() == events.size());
        std::set<std::pair<int, unsigned>> used;
        for (std::size_t i = 0; i < readings.size(); ++i) {
          const pmc::Reading& r = readings[i];
          const pmc::CounterInfo* c = r.counter_kind == pmc::CounterKind::fixed ? pmu.fixed(r.counter)
                                                                                : pmu.general(r.counter);
          BOOST_TEST_REQUIRE(c != nullptr, r.event << " reads from a counter the PMU does not have");
          used.insert({static_cast<int>(r.counter_kind), r.counter});
          const std::uint64_t expect = in_steps(expected(events[i], kCycles, kInstructions), r);
          BOOST_TEST(r.value == expect, counter_name(*c) << " (" << r.event << ") counted " << r.value << ", expected "
                                                         << expect << ", with all " << readings.size()
                                                         << " counters enabled together");
        }
        for (const auto& [kind, index] : planned)
          BOOST_TEST(used.count({kind, index}) == 1u,
                     (kind == static_cast<int>(pmc::CounterKind::fixed) ? "fixed" : "general")
                         << " counter " << index << " was given none of {" << join(group) << "}");
      }
    }
}

// The user and kernel filters against the model: a workload of user and kernel segments, each
// event of known count with :u, with :k and with neither. A model that ignores the filter (or
// a driver that drops it) counts all the activity under :u and :k.
BOOST_AUTO_TEST_CASE(user_and_kernel_filters_count_apart) {
  // user 100,000 cycles x 3 instructions, kernel 70,000 x 2, user 30,000 x 1.
  const pmc::Workload w = pmc::parse_workload(
      "[[segment]]\ncycles = 100000\nsignals = { instructions = 3 }\n"
      "[[segment]]\nmode = \"kernel\"\ncycles = 70000\nsignals = { instructions = 2 }\n"
      "[[segment]]\ncycles = 30000\nsignals = { instructions = 1 }\n",
      "user-kernel.toml");
  struct Expect {
    std::uint64_t user, kernel;
  };
  const Expect cycles{130'000, 70'000}, instructions{330'000, 140'000};
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << hal.pmu().device_model) {
        for (const KnownEvent& e : known_events(hal)) {
          const Expect& x = e.generic == "cycles" ? cycles : instructions;
          try {
            (void)hal.encode(e.string + ":u");
            (void)hal.encode(e.string + ":k");
          } catch (const pmc::Error& error) {
            BOOST_TEST_MESSAGE(name << ": " << e.string << ":u or :k does not encode (" << error.what()
                                    << "): the user/kernel filter is not checked");
            continue;
          }
          for (const auto& [suffix, expect, what] :
               {std::tuple{":u", x.user, "the user-mode activity only"},
                std::tuple{":k", x.kernel, "the kernel-mode activity only"},
                std::tuple{"", x.user + x.kernel, "user and kernel activity"}}) {
            const std::string event = e.string + suffix;
            pmc::Session s = hal.session();
            if (!step("add(" + event + ")", [&] { s.add(event); })) continue;
            if (!step("run() with " + event, [&] { (void)s.run(w); })) continue;
            const auto& readings = s.read();
            BOOST_TEST_REQUIRE(readings.size() == 1u);
            const std::uint64_t want = in_steps(expect, readings[0]);
            BOOST_TEST(readings[0].value == want, event << " counted " << readings[0].value << ", expected " << want
                                                        << " (" << what << ")");
          }
        }
      }
    }
}

// The generic events count a workload exactly across several wraps of the narrowest counter:
// the model wraps, and the session folds the wraps into the 64-bit count. (That the counter
// register itself wraps is checked on the driver directly, in registers.cpp.)
BOOST_AUTO_TEST_CASE(counts_are_exact_across_several_wraps) {
  constexpr std::uint64_t kWraps = 3;
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename() << " with model " << pmu.device_model) {
        unsigned width = 64;
        for (const auto& c : pmu.counters) width = std::min(width, c.width);
        for (const KnownEvent& e : known_events(hal)) {
          BOOST_TEST_CONTEXT(e.generic) {
            // 3 instructions a cycle (or 1 cycle a cycle) for 1000 cycles, then enough to pass
            // 2^width kWraps times (2^40 events for 64-bit counts, which cannot wrap).
            const std::uint64_t k = e.generic == "instructions" ? 3 : 1;
            const std::uint64_t wrap = std::uint64_t{1} << (width < 63 ? width : 40);
            const std::uint64_t long_run = (width < 63 ? kWraps : 1) * wrap / k + 7;
            const std::string signals = "signals = { instructions = 3 }";
            const pmc::Workload w = pmc::parse_workload("[[segment]]\ncycles = 1000\n" + signals +
                                                            "\n[[segment]]\ncycles = " + std::to_string(long_run) +
                                                            "\n" + signals + "\n",
                                                        "wraps.toml");
            pmc::Session s = hal.session();
            if (!step("add(" + e.string + ")", [&] { s.add(e.string); })) continue;
            pmc::WorkloadRun run;
            if (!step("run() of " + std::to_string(1000 + long_run) + " cycles", [&] { run = s.run(w); })) continue;
            const auto& readings = s.read();
            BOOST_TEST_REQUIRE(readings.size() == 1u);
            const std::uint64_t expect = in_steps(expected(e, 1000 + long_run, 3), readings[0]);
            BOOST_TEST(run.cycles == 1000 + long_run);
            BOOST_TEST(readings[0].generic == e.generic);
            BOOST_TEST(readings[0].value == expect, e.string << " counted " << readings[0].value << ", expected "
                                                             << expect << " (past 2^" << width << " "
                                                             << (width < 63 ? kWraps : 0) << " times)");
          }
        }
      }
    }
}
