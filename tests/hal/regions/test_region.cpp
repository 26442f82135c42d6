// Regions (pmc/region.hpp, docs/regions.md): nesting, aggregation over calls and threads, the
// errors, the JSON report and its table, and a hot path that allocates nothing.
//
// The regions of this process count on the simulated Pentium III PMU (the bundled CPUID dump),
// where counts change only when a workload runs, so every total is worked out by hand: the bundled
// workload p6-demo retires 7,900,000 instructions, 7,550,000 of them in user mode
// (examples/CMakeLists.txt has the arithmetic).
#define BOOST_TEST_MODULE region
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/pmc.hpp>
#include <pmc/region.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Every allocation of the process, counted, so a test can see that a stretch of code made none.
std::atomic<std::size_t> allocations{0};

constexpr std::uint64_t kDemo = 7'900'000;       // instructions in p6-demo
constexpr std::uint64_t kDemoUser = 7'550'000;   // of them in user mode

const pmc::Workload& demo() {
  static const pmc::Workload w = pmc::load_workload(fs::path(PMC_SOURCE_DIR) / "examples" / "workloads" / "p6-demo.toml");
  return w;
}

void run_demo() { (void)pmc::regions::thread_session().run(demo()); }

// The regions of this test process: set up once, before any test runs.
struct SetUp {
  SetUp() {
    pmc::Config cfg;
    cfg.cpu = (fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-iii.txt").string();
    pmc::regions::init(cfg, {"instructions", "INST_RETIRED:u"});
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SetUp);

const pmc::RegionStats* find(const pmc::RegionReport& r, const std::string& name) {
  for (const auto& s : r.regions)
    if (s.name == name) return &s;
  return nullptr;
}

template <class F>
std::string error_of(F&& f, pmc::errc code) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == code), e.what());
    return e.what();
  }
  BOOST_ERROR("no error thrown");
  return {};
}

}  // namespace

// The replaced operator new takes its memory from malloc, so the replaced deletes give it back
// with free (GCC cannot see that they pair up).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

BOOST_AUTO_TEST_CASE(the_setup_is_what_init_was_given) {
  const pmc::RegionReport r = pmc::regions::report();
  BOOST_TEST(r.error == "");
  BOOST_TEST(r.backend == "p6");
  BOOST_TEST(r.access == "sim");
  BOOST_TEST(r.cpu == "GenuineIntel family 6 model 8 stepping 3");
  BOOST_TEST((r.events == std::vector<std::string>{"instructions", "INST_RETIRED:u"}));
  BOOST_TEST(r.pid > 0);
  // Only once per process.
  error_of([] { pmc::regions::init(pmc::Config{}, {"instructions"}); }, pmc::errc::invalid_argument);
}

BOOST_AUTO_TEST_CASE(nested_regions_count_inclusively_and_aggregate_over_calls) {
  pmc::regions::reset();
  // a { demo; b { demo; demo } }  then  b { demo }:
  //   a: 1 call of 3 demos;   b: 2 calls, of 2 demos and of 1.
  {
    pmc::ScopedRegion a("a");
    run_demo();
    pmc::ScopedRegion b("b");
    run_demo();
    run_demo();
  }
  {
    pmc::ScopedRegion b("b");
    run_demo();
  }
  const pmc::RegionReport r = pmc::regions::report();
  const pmc::RegionStats* a = find(r, "a");
  const pmc::RegionStats* b = find(r, "b");
  BOOST_TEST_REQUIRE(a);
  BOOST_TEST_REQUIRE(b);
  BOOST_TEST(a->calls == 1u);
  BOOST_TEST(a->threads == 1u);
  BOOST_TEST_REQUIRE(a->events.size() == 2u);
  BOOST_TEST(a->events[0].event == "instructions");
  BOOST_TEST(a->events[0].sum == 3 * kDemo);
  BOOST_TEST(a->events[0].min == 3 * kDemo);
  BOOST_TEST(a->events[0].max == 3 * kDemo);
  BOOST_TEST(a->events[1].sum == 3 * kDemoUser);
  BOOST_TEST(b->calls == 2u);
  BOOST_TEST(b->events[0].sum == 3 * kDemo);
  BOOST_TEST(b->events[0].min == 1 * kDemo);
  BOOST_TEST(b->events[0].max == 2 * kDemo);
  BOOST_TEST(b->events[1].sum == 3 * kDemoUser);
  BOOST_TEST(a->min_time_ns <= a->max_time_ns);
  BOOST_TEST(b->time_ns >= b->max_time_ns);
}

BOOST_AUTO_TEST_CASE(threads_count_their_own_and_the_totals_add_up) {
  pmc::regions::reset();
  const pmc::regions::Id worker = pmc::regions::id("worker");
  // Three threads, each with its own session (and simulated PMU): worker { demo } twice each.
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([worker] {
      for (int i = 0; i < 2; ++i) {
        pmc::regions::begin(worker);
        run_demo();
        pmc::regions::end(worker);
      }
    });
  for (auto& t : threads) t.join();
  const pmc::RegionReport r = pmc::regions::report();
  const pmc::RegionStats* w = find(r, "worker");
  BOOST_TEST_REQUIRE(w);
  BOOST_TEST(w->calls == 6u);
  BOOST_TEST(w->threads == 3u);
  BOOST_TEST(w->events[0].sum == 6 * kDemo);
  BOOST_TEST(w->events[0].min == kDemo);
  BOOST_TEST(w->events[0].max == kDemo);
  // A region no thread completed since the reset is left out.
  BOOST_TEST(find(r, "a") == nullptr);
}

BOOST_AUTO_TEST_CASE(bad_nesting_is_refused_and_changes_nothing) {
  pmc::regions::reset();
  pmc::regions::begin("outer");
  std::string what = error_of([] { pmc::regions::begin("outer"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("region 'outer' is already open on this thread") != std::string::npos, what);
  pmc::regions::begin("inner");
  what = error_of([] { pmc::regions::end("outer"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("cannot end region 'outer' on this thread: the innermost open region is 'inner'") !=
                 std::string::npos,
             what);
  pmc::regions::end("inner");
  pmc::regions::end("outer");
  what = error_of([] { pmc::regions::end("outer"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("no region is open") != std::string::npos, what);
  what = error_of([] { pmc::regions::begin(pmc::regions::Id{999999}); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("no region number 999999") != std::string::npos, what);
  error_of([] { (void)pmc::regions::id(""); }, pmc::errc::invalid_argument);
  // The refused calls counted nothing: one call each.
  const pmc::RegionReport r = pmc::regions::report();
  BOOST_TEST(find(r, "outer")->calls == 1u);
  BOOST_TEST(find(r, "inner")->calls == 1u);
}

BOOST_AUTO_TEST_CASE(begin_and_end_of_a_known_region_allocate_nothing) {
  const pmc::regions::Id id = pmc::regions::id("hot");
  pmc::regions::begin(id);  // the first call on this thread may allocate (its totals)
  pmc::regions::end(id);
  pmc::regions::begin("hot");  // and the first lookup by name
  pmc::regions::end("hot");
  const std::size_t before = allocations.load();
  for (int i = 0; i < 1000; ++i) {
    pmc::regions::begin(id);
    pmc::regions::end(id);
    pmc::regions::begin("hot");
    pmc::regions::end("hot");
  }
  BOOST_TEST(allocations.load() - before == 0u);
  BOOST_TEST(find(pmc::regions::report(), "hot")->calls >= 2002u);
}

BOOST_AUTO_TEST_CASE(the_json_report_round_trips_and_is_checked) {
  pmc::regions::reset();
  {
    pmc::ScopedRegion r("json");
    run_demo();
  }
  const pmc::RegionReport r = pmc::regions::report();
  const std::string json = pmc::region_report_json(r);
  const pmc::RegionReport back = pmc::parse_region_report(json, "mem.json");
  BOOST_TEST(back.backend == "p6");
  BOOST_TEST(back.events == r.events);
  const pmc::RegionStats* j = find(back, "json");
  BOOST_TEST_REQUIRE(j);
  BOOST_TEST(j->calls == 1u);
  BOOST_TEST(j->events[0].sum == kDemo);
  BOOST_TEST(j->time_ns == find(r, "json")->time_ns);

  // write() and load_region_report() through a file.
  const fs::path file = fs::path(PMC_BUILD_DIR) / "tests" / "test_region.json";
  pmc::regions::write(file);
  BOOST_TEST(find(pmc::load_region_report(file), "json")->events[1].sum == kDemoUser);
  const std::string missing = error_of([] { (void)pmc::load_region_report("/nonexistent/regions.json"); }, pmc::errc::io);
  BOOST_TEST(missing.find("/nonexistent/regions.json") != std::string::npos);
  error_of([&] { pmc::regions::write(fs::path(PMC_BUILD_DIR) / "no-such-dir" / "r.json"); }, pmc::errc::io);

  // Malformed reports: a parse error naming the file.
  std::string what = error_of([] { (void)pmc::parse_region_report("{\"format\": ", "cut.json"); }, pmc::errc::parse);
  BOOST_TEST(what.rfind("cut.json: ", 0) == 0u, what);
  what = error_of([] { (void)pmc::parse_region_report("{\"format\": \"other\"}", "other.json"); }, pmc::errc::parse);
  BOOST_TEST(what.find("not a pmchal region report") != std::string::npos, what);
  what = error_of([] { (void)pmc::parse_region_report(R"({"format": "pmchal-regions", "version": 2})", "v2.json"); },
                  pmc::errc::parse);
  BOOST_TEST(what.find("version 2") != std::string::npos, what);
  what = error_of(
      [] {
        (void)pmc::parse_region_report(
            R"({"format": "pmchal-regions", "version": 1, "events": ["a", "b"], "regions": [{"name": "x", "calls": 1,
               "threads": 1, "time_ns": {"sum": 1, "min": 1, "max": 1}, "events": [{"event": "a", "sum": 1, "min": 1,
               "max": 1}]}]})",
            "short.json");
      },
      pmc::errc::parse);
  BOOST_TEST(what.find("region 'x' has 1 event totals for 2 events") != std::string::npos, what);
}

BOOST_AUTO_TEST_CASE(the_table_shows_each_region_with_its_totals) {
  pmc::RegionReport r;
  r.events = {"instructions"};
  pmc::RegionStats s;
  s.name = "solve";
  s.calls = 4;
  s.threads = 2;
  s.time_ns = 12'000'000;
  s.min_time_ns = 2'500'000;
  s.max_time_ns = 3'500'000;
  s.events.push_back({"instructions", 31'600'000, 7'000'000, 8'600'000});
  r.regions.push_back(s);
  const std::string table = pmc::format_region_table(r);
  BOOST_TEST(table.find("Region 'solve': 4 calls on 2 threads, 12.000 ms (per call 2.500 to 3.500 ms)") !=
                 std::string::npos,
             table);
  // sum, min, max, mean (31,600,000 / 4 = 7,900,000), event.
  BOOST_TEST(table.find("          31,600,000        7,000,000        8,600,000        7,900,000  instructions") !=
                 std::string::npos,
             table);
  pmc::RegionReport failed;
  failed.error = "regions: unknown event 'nope'";
  BOOST_TEST(pmc::format_region_table(failed).find("regions not counted: regions: unknown event 'nope'") !=
             std::string::npos);
}

// The config file's [regions] table (docs/regions.md): events and an output relative to the file;
// mistakes name file:line:column.
BOOST_AUTO_TEST_CASE(the_config_file_has_a_regions_table) {
  const fs::path dir = fs::path(PMC_BUILD_DIR) / "tests" / "region-config";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto load = [&](const std::string& text) {
    std::ofstream(dir / "c.toml") << text;
    return pmc::load_config(dir / "c.toml");
  };
  const pmc::Config c = load("[regions]\nevents = [\"cycles\", \"INST_RETIRED:u\"]\noutput = \"out/r.json\"\n");
  BOOST_TEST((c.region_events == std::vector<std::string>{"cycles", "INST_RETIRED:u"}));
  BOOST_TEST(c.region_output.lexically_normal() == (fs::absolute(dir) / "out" / "r.json").lexically_normal());
  BOOST_TEST(c.origin.at("regions.events").where.find("c.toml:2:10") != std::string::npos);
  // Absent: nothing set.
  BOOST_TEST(load("backend = \"auto\"\n").region_events.empty());
  std::string what = error_of([&] { (void)load("[regions]\nevent = [\"cycles\"]\n"); }, pmc::errc::attribute);
  BOOST_TEST(what.find("c.toml:2:1: unknown key 'event' in [regions]") != std::string::npos, what);
  what = error_of([&] { (void)load("[regions]\nevents = [\"cycles\", \"\"]\n"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("c.toml:2:21") != std::string::npos, what);
  what = error_of([&] { (void)load("regions = 3\n"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("c.toml:1:11: 'regions' must be a table") != std::string::npos, what);
  what = error_of([&] { (void)load("[regions]\noutput = 3\n"); }, pmc::errc::invalid_argument);
  BOOST_TEST(what.find("c.toml:2:10") != std::string::npos, what);
}
