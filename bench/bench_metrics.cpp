// What evaluating vendor metrics costs per reading (docs/metrics.md, "Figures"), next to the
// raw alternative in one run; nothing here asserts a time.
//   l1:  the four top-down level-1 metrics of Intel's Skylake list (slots from the events,
//        without SMT) by pmc::evaluate_metric  vs  the same four formulas written in C++
//   all: every metric of Intel's Sapphire Rapids list whose events the CPU has, evaluated over
//        one reading of each event (what `pmc stat -I` does each interval with -M over the
//        whole list)
// `pmc_bench_metrics --calls N` runs N evaluations of `all` without the benchmark framework,
// for callgrind's user-space instructions per call.
#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

pmc::Reading reading(const std::string& event, std::uint64_t value) {
  pmc::Reading r;
  r.event = r.name = event;
  r.value = value;
  r.time_enabled = r.time_running = 1000000;
  return r;
}

// A model's metrics, their constants and one reading of every event they read (each a distinct
// nonzero count, so that no formula divides by zero by accident).
struct ModelMetrics {
  pmc::Hal hal;
  pmc::MetricCatalog catalog;
  pmc::MetricConstants constants;
  std::vector<const pmc::MetricDef*> metrics;
  std::vector<pmc::Reading> readings;
  ModelMetrics(const char* dump, const char* group)
      : hal(pmc_bench::open_with_cpu(dump)), catalog(pmc::builtin_metrics(hal)), constants(pmc::metric_constants(hal)) {
    if (group)
      metrics = catalog.select(group);
    else
      for (const auto& m : catalog.metrics())
        if (!m.backend.empty() && pmc::metric_unavailable(hal, m, constants).empty()) metrics.push_back(&m);
    std::uint64_t v = 1000003;
    for (const auto* m : metrics)
      for (const auto* in : pmc::metric_inputs(*m, constants)) {
        bool have = false;
        for (const auto& r : readings) have = have || r.event == in->event;
        if (!have) readings.push_back(reading(in->event, v += 7919));
      }
  }
};

std::uint64_t value_of(const std::vector<pmc::Reading>& rs, const char* event) {
  for (const auto& r : rs)
    if (r.event == event) return r.value;
  std::fprintf(stderr, "no reading of %s\n", event);
  std::abort();
}

void l1_hal(benchmark::State& state) {
  static ModelMetrics mm("intel-skl.txt", "TopdownL1");
  for (auto _ : state)
    for (const auto* m : mm.metrics) benchmark::DoNotOptimize(pmc::evaluate_metric(*m, mm.readings, std::nullopt, &mm.constants));
  state.counters["metrics"] = static_cast<double>(mm.metrics.size());
}
BENCHMARK(l1_hal);

void l1_raw(benchmark::State& state) {
  static ModelMetrics mm("intel-skl.txt", "TopdownL1");
  for (auto _ : state) {
    // Intel's Skylake level 1 without SMT: slots = 4 x core cycles.
    const double clk = static_cast<double>(value_of(mm.readings, "CPU_CLK_UNHALTED.THREAD"));
    const double slots = 4 * clk;
    const double fe = static_cast<double>(value_of(mm.readings, "IDQ_UOPS_NOT_DELIVERED.CORE")) / slots;
    const double issued = static_cast<double>(value_of(mm.readings, "UOPS_ISSUED.ANY"));
    const double retired = static_cast<double>(value_of(mm.readings, "UOPS_RETIRED.RETIRE_SLOTS"));
    const double recovery = static_cast<double>(value_of(mm.readings, "INT_MISC.RECOVERY_CYCLES"));
    const double bad = (issued - retired + 4 * recovery) / slots;
    const double ret = retired / slots;
    const double be = 1 - fe - (issued + 4 * recovery) / slots;
    benchmark::DoNotOptimize(100 * fe);
    benchmark::DoNotOptimize(100 * bad);
    benchmark::DoNotOptimize(100 * ret);
    benchmark::DoNotOptimize(100 * be);
  }
}
BENCHMARK(l1_raw);

void all_spr(benchmark::State& state) {
  static ModelMetrics mm("intel-spr.txt", nullptr);
  for (auto _ : state)
    for (const auto* m : mm.metrics) benchmark::DoNotOptimize(pmc::evaluate_metric(*m, mm.readings, std::nullopt, &mm.constants));
  state.counters["metrics"] = static_cast<double>(mm.metrics.size());
  state.counters["events"] = static_cast<double>(mm.readings.size());
}
BENCHMARK(all_spr);

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--calls") == 0) {
    ModelMetrics mm("intel-spr.txt", nullptr);
    const long n = std::atol(argv[2]);
    std::size_t values = 0;
    for (long i = 0; i < n; ++i)
      for (const auto* m : mm.metrics) values += pmc::evaluate_metric(*m, mm.readings, std::nullopt, &mm.constants).value.has_value();
    std::printf("%ld evaluations of %zu metrics (%zu events): %zu values\n", n, mm.metrics.size(), mm.readings.size(), values);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
