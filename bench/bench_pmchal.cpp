// Costs of the HAL next to the raw alternative, in one run. bench/ratios.py turns the output
// into ratios (HAL time / raw time); nothing here asserts a time.
//
//   encode:  Hal::encode("L2_LD:M:E:u")  vs  packing the same PerfEvtSel bits by hand
//   read:    Session::read() of two counters  vs  two RDMSRs on the same device model
//   poll:    Session::poll() (fold hardware counts into 64-bit totals)  vs  the same RDMSRs
#include <pmc/hal.hpp>
#include <pmc/sim/device.hpp>

#include <benchmark/benchmark.h>

namespace {

pmc::Hal& hal() {
  static pmc::Hal h = [] {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
    return pmc::Hal::open(cfg);
  }();
  return h;
}

void encode_hal(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(hal().encode("L2_LD:M:E:u").config);
}
BENCHMARK(encode_hal);

void encode_raw(benchmark::State& state) {
  std::uint64_t event = 0x29, umask = 0x0C;
  for (auto _ : state) {
    benchmark::DoNotOptimize(event);
    benchmark::DoNotOptimize(umask);
    std::uint64_t config = event | (umask << 8) | (1ull << 16);
    benchmark::DoNotOptimize(config);
  }
}
BENCHMARK(encode_raw);

struct Counting {
  pmc::Session session = hal().session();
  Counting() {
    session.add("instructions");
    session.add("cycles");
    session.start();
  }
};

void read_hal(benchmark::State& state) {
  Counting c;
  for (auto _ : state) benchmark::DoNotOptimize(c.session.read());
}
BENCHMARK(read_hal);

void poll_hal(benchmark::State& state) {
  Counting c;
  for (auto _ : state) c.session.poll();
}
BENCHMARK(poll_hal);

void read_raw(benchmark::State& state) {
  Counting c;
  pmc::sim::Device& d = *c.session.device();
  for (auto _ : state) {
    benchmark::DoNotOptimize(d.read(0xC1));
    benchmark::DoNotOptimize(d.read(0xC2));
  }
}
BENCHMARK(read_raw);

}  // namespace

BENCHMARK_MAIN();
