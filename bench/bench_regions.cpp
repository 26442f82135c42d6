// The cost of a region (pmc/region.hpp, docs/regions.md) next to what it is made of, in one run:
//   region_by_id:    regions::begin(id) + regions::end(id) of one region, counting task-clock
//   region_by_name:  the same by name (a hash lookup on each call)
//   scoped_region:   pmc::ScopedRegion (by id) constructed and destroyed
//   session_read_x2: two Session::read(span) of task-clock on this thread's own session: the bare
//                    reads a begin + end pair makes
//   clock_x2:        two clock_gettime(CLOCK_MONOTONIC): the time a pair also takes
// task-clock is a perf software event, real on every Linux machine. Nothing here asserts a time;
// the difference between region_by_id and session_read_x2 + clock_x2 is the regions' own cost.
#include <pmc/pmc.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <ctime>

namespace {

void region_by_id(benchmark::State& state) {
  const pmc::regions::Id id = pmc::regions::id("bench");
  for (auto _ : state) {
    pmc::regions::begin(id);
    pmc::regions::end(id);
  }
}
BENCHMARK(region_by_id);

void region_by_name(benchmark::State& state) {
  for (auto _ : state) {
    pmc::regions::begin("bench");
    pmc::regions::end("bench");
  }
}
BENCHMARK(region_by_name);

void scoped_region(benchmark::State& state) {
  const pmc::regions::Id id = pmc::regions::id("bench");
  for (auto _ : state) pmc::ScopedRegion r(id);
}
BENCHMARK(scoped_region);

void session_read_x2(benchmark::State& state) {
  pmc::Session& s = pmc::regions::thread_session();  // a session of this thread counting task-clock
  std::array<std::uint64_t, 1> a{}, b{};
  for (auto _ : state) {
    s.read(a);
    s.read(b);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(session_read_x2);

void clock_x2(benchmark::State& state) {
  timespec a{}, b{};
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(clock_x2);

}  // namespace

int main(int argc, char** argv) {
  // The regions of this process count task-clock on this machine, whatever the environment says.
  pmc::Config config;
  pmc::regions::init(config, {"task-clock"});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
