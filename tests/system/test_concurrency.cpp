#define BOOST_TEST_MODULE concurrency
#include <boost/test/unit_test.hpp>

// One Hal shared by many threads, each with sessions of its own (issue 13): HAL events (the TSC,
// a perf software event) and simulated PMU events run on each thread's own device model, event
// encoding and catalog lookups on the shared Hal, signal-name interning, the TSC frequency;
// and Hal::open (plugin loading, the events loader and its cache) in several threads at once.
// Each thread's results are checked against values worked out by hand, in the main thread
// (Boost.Test's assertions are not thread-safe). CI runs this test under ThreadSanitizer
// (scripts/ci-sanitizers.sh), which reports any data race among them.

#include "plugins.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/cpu.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using u64 = std::uint64_t;

namespace {

const fs::path kDumps = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";
constexpr unsigned kThreads = 8;

pmc::Config config_for(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = (kDumps / dump).string();
  return cfg;
}

// Runs body(i) in kThreads threads that start together; the first exception text of each
// thread (or "") in its slot.
std::vector<std::string> in_threads(const std::function<void(unsigned)>& body) {
  std::vector<std::string> errors(kThreads);
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        body(i);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      } catch (...) {
        errors[i] = "unknown exception";
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

void expect_no_errors(const std::vector<std::string>& errors) {
  for (unsigned i = 0; i < errors.size(); ++i) BOOST_TEST(errors[i].empty(), "thread " << i << ": " << errors[i]);
}

// One user-mode segment: `cycles` cycles of `per_cycle` instructions and a signal of the
// thread's own (interned concurrently by the threads).
pmc::Workload workload(u64 cycles, u64 per_cycle, const std::string& own_signal) {
  pmc::OwnedSegment s(cycles, pmc::Mode::user);
  s.signal("instructions", per_cycle);
  s.signal(own_signal, 1);
  pmc::Workload w;
  w.name = "thread";
  w.add(s);
  return w;
}

}  // namespace

// Every thread counts its own workload on its own simulated P6 of the one Hal: thread i runs
// (i + 1) * 100,000 cycles of (i + 1) instructions, so INST_RETIRED:u = (i + 1)^2 * 100,000 and
// CPU_CLK_UNHALTED:u = (i + 1) * 100,000; then 2^40 + i cycles of one instruction (wrapping the
// 40-bit counters; the session folds them): 2^40 + i of each on top. Meanwhile each reads the
// TSC and a perf software event in a second session.
BOOST_AUTO_TEST_CASE(sessions_of_one_hal_in_many_threads) {
  const pmc::Hal hal = pmc::Hal::open(config_for("pentium-iii.txt"));
  BOOST_REQUIRE(hal.backend());
  std::vector<std::vector<u64>> counts(kThreads);
  std::vector<u64> tsc(kThreads), task_clock(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    const u64 k = i + 1;
    const std::string own = "concurrency.thread" + std::to_string(i);
    for (int round = 0; round < 20; ++round) {
      pmc::Session pmu = hal.session();
      pmu.add("INST_RETIRED:u");
      pmu.add("CPU_CLK_UNHALTED:u");
      (void)pmu.run(workload(k * 100'000, k, own));
      (void)pmu.run(workload((u64{1} << 40) + i, 1, own));
      counts[i].clear();
      for (const auto& r : pmu.read()) counts[i].push_back(r.value);
    }
    pmc::Session hal_events = hal.session();
    hal_events.add("tsc");
    hal_events.add("task-clock:u");
    hal_events.start();
    volatile u64 spin = 0;
    for (u64 n = 0; n < 2'000'000; ++n) spin = spin + n;
    hal_events.stop();
    const auto r = hal_events.read();
    tsc[i] = r.at(0).value;
    task_clock[i] = r.at(1).value;
  });
  expect_no_errors(errors);
  for (unsigned i = 0; i < kThreads; ++i) {
    const u64 k = i + 1;
    BOOST_TEST_CONTEXT("thread " << i) {
      BOOST_REQUIRE(counts[i].size() == 2u);
      BOOST_TEST(counts[i][0] == k * k * 100'000 + (u64{1} << 40) + i);
      BOOST_TEST(counts[i][1] == k * 100'000 + (u64{1} << 40) + i);
      BOOST_TEST(tsc[i] > 0u);
      BOOST_TEST(task_clock[i] > 0u);
    }
  }
}

// Encoding and catalog lookups on the shared Hal from every thread, the same answers as one
// thread gets; every thread interns the same new signal names and gets the same numbers.
BOOST_AUTO_TEST_CASE(encoding_catalog_and_signals_from_many_threads) {
  const pmc::Hal hal = pmc::Hal::open(config_for("intel-icelake.txt"));
  BOOST_REQUIRE(hal.backend());
  const std::vector<std::string> events{"instructions", "cycles:u", "branch-misses", "INST_RETIRED.ANY_P:u:c=1"};
  std::vector<u64> alone;
  for (const auto& e : events) alone.push_back(hal.encode(e).config);
  const std::size_t catalog_size = hal.events().for_cpu(hal.pmu().cpu_tag).size();
  std::vector<std::vector<u64>> configs(kThreads);
  std::vector<std::size_t> sizes(kThreads);
  std::vector<std::vector<std::uint32_t>> ids(kThreads);
  std::vector<double> hz(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    for (int round = 0; round < 50; ++round) {
      configs[i].clear();
      for (const auto& e : events) configs[i].push_back(hal.encode(e).config);
      const auto all = hal.events().for_cpu(hal.pmu().cpu_tag);
      sizes[i] = all.size();
      for (const pmc::EventDef* e : all)
        if (hal.events().find(e->name, hal.pmu().cpu_tag) == nullptr) throw std::runtime_error("lost " + e->name);
    }
    ids[i].clear();
    for (int n = 0; n < 200; ++n) {
      const pmc::Signal s = pmc::signal("concurrency.shared" + std::to_string(n));
      if (pmc::signal_name(s) != "concurrency.shared" + std::to_string(n)) throw std::runtime_error("signal name");
      ids[i].push_back(s.id);
    }
    hz[i] = pmc::tsc_frequency().hz;
  });
  expect_no_errors(errors);
  for (unsigned i = 0; i < kThreads; ++i) {
    BOOST_TEST_CONTEXT("thread " << i) {
      BOOST_TEST(configs[i] == alone, boost::test_tools::per_element());
      BOOST_TEST(sizes[i] == catalog_size);
      BOOST_TEST(ids[i] == ids[0], boost::test_tools::per_element());
      BOOST_TEST(hz[i] == hz[0]);
    }
  }
}

// A backend chosen by the probe an earlier open kept is loaded at its first use (Context::backend,
// hal/src/session/preselection.hpp): that first use in every thread at once loads it once, and
// each thread encodes as an open that loaded it does.
BOOST_AUTO_TEST_CASE(a_backend_loaded_at_its_first_use_in_many_threads_at_once) {
  std::vector<u64> alone;
  const std::vector<std::string> events{"INST_RETIRED:u", "CPU_CLK_UNHALTED", "DATA_MEM_REFS:k"};
  {
    const pmc::Hal first = pmc::Hal::open(config_for("pentium-iii.txt"));  // keeps the probe
    BOOST_REQUIRE(first.backend());
    for (const auto& e : events) alone.push_back(first.encode(e).config);
  }
  const pmc::Hal hal = pmc::Hal::open(config_for("pentium-iii.txt"));
  BOOST_REQUIRE(hal.backend());
  std::vector<std::vector<u64>> configs(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    for (const auto& e : events) configs[i].push_back(hal.encode(e).config);
  });
  expect_no_errors(errors);
  for (unsigned i = 0; i < kThreads; ++i)
    BOOST_TEST_CONTEXT("thread " << i) { BOOST_TEST(configs[i] == alone, boost::test_tools::per_element()); }
}

// Hal::open in every thread at once, each on a different CPU (so a different backend chosen
// from the same plugins, data files parsed or found in the cache): each gets what a Hal opened
// alone gets, and its sessions count.
BOOST_AUTO_TEST_CASE(hal_open_in_many_threads_at_once) {
  const std::vector<std::string> dumps{"pentium-mmx.txt", "pentium-iii.txt", "core2.txt", "intel-icelake.txt",
                                       "amd-k8-revf.txt", "amd-zen3.txt", "pentium-pro.txt", "amd-zen4-genoa.txt"};
  std::vector<std::string> alone;
  for (const auto& d : dumps) alone.push_back(pmc::Hal::open(config_for(d)).backend()->name);
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::vector<u64>> instructions(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    for (int round = 0; round < 4; ++round)
      for (std::size_t n = 0; n < dumps.size(); ++n) {
        const std::string& d = dumps[(n + i) % dumps.size()];  // each thread in its own order
        const pmc::Hal hal = pmc::Hal::open(config_for(d));
        if (round == 0) got[i].push_back(d + " " + hal.backend()->name);
        pmc::Session s = hal.session();
        s.add("instructions");
        (void)s.run(workload(1000 + i, 3, "concurrency.open"));
        if (round == 0) instructions[i].push_back(s.read().at(0).value);
      }
  });
  expect_no_errors(errors);
  for (unsigned i = 0; i < kThreads; ++i) {
    BOOST_TEST_CONTEXT("thread " << i) {
      BOOST_REQUIRE(got[i].size() == dumps.size());
      for (std::size_t n = 0; n < dumps.size(); ++n) {
        const std::size_t d = (n + i) % dumps.size();
        BOOST_TEST(got[i][n] == dumps[d] + " " + alone[d]);
        BOOST_TEST(instructions[i][n] == 3 * (1000 + u64{i}));
      }
    }
  }
}

// Hal::open leaves the native CPU's brand to its first reader (tests/hal/session/
// test_brand_at_first_use.cpp): half the threads ask Hal::cpu(), the others the PMU (the
// backend's code describes the CPU) or, without a backend, a session; the brand is added once,
// and every thread sees it.
BOOST_AUTO_TEST_CASE(the_brand_added_once_whichever_thread_asks_first) {
  const std::string brand = pmc::read_native_cpu().brand;
  const pmc::Hal hal = pmc::Hal::open(pmc::Config{});
  std::vector<std::string> seen(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    if (i % 2 == 0) {
      seen[i] = hal.cpu().brand;
    } else if (hal.backend()) {
      seen[i] = hal.pmu().cpu;
    } else {
      pmc::Session s = hal.session();
      seen[i] = hal.cpu().brand;
    }
  });
  expect_no_errors(errors);
  for (unsigned i = 0; i < kThreads; ++i)
    BOOST_TEST(seen[i].find(brand) != std::string::npos, "thread " << i << ": '" << seen[i] << "' lacks '" << brand << "'");
  BOOST_TEST(hal.cpu().brand == brand);
}

// The plugin loader itself from many threads: every thread loads the build's plugin directory
// and gets every backend and model, each library once per load.
BOOST_AUTO_TEST_CASE(plugin_loading_in_many_threads) {
  std::vector<std::string> alone;
  for (const auto& p : pmc::detail::load_plugins({fs::path(PMC_PLUGIN_DIR)}))
    alone.push_back(p.status.name + (p.status.error.empty() ? "" : " " + p.status.error));
  std::vector<std::vector<std::string>> got(kThreads);
  const auto errors = in_threads([&](unsigned i) {
    for (int round = 0; round < 10; ++round) {
      got[i].clear();
      for (const auto& p : pmc::detail::load_plugins({fs::path(PMC_PLUGIN_DIR)}))
        got[i].push_back(p.status.name + (p.status.error.empty() ? "" : " " + p.status.error));
    }
  });
  expect_no_errors(errors);
  BOOST_TEST(alone.size() >= 10u);  // five backends and five models
  for (unsigned i = 0; i < kThreads; ++i) BOOST_TEST(got[i] == alone, boost::test_tools::per_element());
}
