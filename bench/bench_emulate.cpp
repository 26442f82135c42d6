// Emulated counting's cost (docs/emulation.md, "Slowdown"): the wall time of one program
// (bench_emulate.c, N = 1,000,000) run natively, under Valgrind's cachegrind alone (cache and
// branch simulation with the P6's default caches), and emulated (cachegrind, then four P6 events
// counted on the device model, line by line), and the counting step alone on that run's activity.
// The ratios emulated / native and counting / cachegrind are the slowdown docs/emulation.md
// quotes.
#include <pmc/pmc.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

const std::vector<std::string> kEvents{"INST_RETIRED", "BR_INST_RETIRED", "BR_MISS_PRED_RETIRED", "DATA_MEM_REFS"};

std::vector<std::string> command(const benchmark::State& state) {
  return {PMC_BENCH_EMULATE_TARGET, std::to_string(state.range(0))};
}

struct P6 {
  pmc::Hal hal;
  pmc::CacheHierarchy caches;
  pmc::SignalMap map;
};

const P6& p6() {
  static const P6 p = [] {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
    cfg.access = "sim";
    P6 out{pmc::Hal::open(cfg), {}, {}};
    out.caches = pmc::cache_hierarchy(out.hal.cpu());
    out.map = pmc::emulated_signals(out.hal, out.caches);
    return out;
  }();
  return p;
}

bool have_valgrind(benchmark::State& state) {
  try {
    (void)pmc::find_executable("valgrind");
    return true;
  } catch (const pmc::Error& e) {
    state.SkipWithError(e.what());
    return false;
  }
}

// The raw alternative: the program itself.
void BM_Native(benchmark::State& state) {
  for (auto _ : state) {
    const pmc::ChildResult r = pmc::run_child(command(state));
    if (r.exit_status != 0) state.SkipWithError("the target program failed");
  }
}

// Valgrind's cachegrind with cache and branch simulation, its output parsed.
void BM_Cachegrind(benchmark::State& state) {
  if (!have_valgrind(state)) return;
  std::uint64_t ir = 0;
  for (auto _ : state) ir = pmc::run_under_valgrind(command(state), p6().caches).activity.total[pmc::Quantity::Ir];
  state.counters["instructions"] = static_cast<double>(ir);
}

// The whole emulation: cachegrind, then the events counted on the P6 model.
void BM_Emulated(benchmark::State& state) {
  if (!have_valgrind(state)) return;
  for (auto _ : state) {
    const pmc::EmulatedRun run = pmc::run_under_valgrind(command(state), p6().caches);
    const pmc::EmulatedCounts c = pmc::count_emulated(p6().hal, p6().map, kEvents, run.activity);
    benchmark::DoNotOptimize(c.events.front().reading.value);
  }
}

// The counting step alone (the probes of the four events, and each event's session running every
// source line of the activity).
void BM_CountOnly(benchmark::State& state) {
  if (!have_valgrind(state)) return;
  const pmc::EmulatedRun run = pmc::run_under_valgrind(command(state), p6().caches);
  for (auto _ : state) {
    const pmc::EmulatedCounts c = pmc::count_emulated(p6().hal, p6().map, kEvents, run.activity);
    benchmark::DoNotOptimize(c.events.front().reading.value);
  }
  state.counters["source_lines"] = static_cast<double>(run.activity.lines.size());
}

BENCHMARK(BM_Native)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Cachegrind)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_Emulated)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_CountOnly)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
