// Costs of the HAL next to the raw alternative, in one run. bench/ratios.py turns the output
// into ratios (HAL time / raw time); nothing here asserts a time.
//
//   encode:  Hal::encode("L2_LD:M:E:u")  vs  packing the same PerfEvtSel bits by hand
//   read:    Session::read() of two counters  vs  two RDMSRs on the same device model
//   poll:    Session::poll() (fold hardware counts into 64-bit totals)  vs  the same RDMSRs
//   profile: Session::level_histograms() + pc_profiles() of a 4 KiB range (256 buckets), read
//            through the backend's ProfilingDriver and the RegisterFile  vs  copying the
//            Alpha 21064 model's IPL histogram and buckets directly
// The HAL side uses only the public API (the session's device is the model plugin's); the raw
// side drives its own instance of the same device model, from the model's static library
// (pmcmodel_p6, pmcmodel_alpha21064), programmed as the session programs its device.
#include <pmc/pmc.hpp>

#include "alpha21064.hpp"  // pmcmodel_alpha21064
#include "p6_model.hpp"    // pmcmodel_p6

#include <benchmark/benchmark.h>

namespace {

// The segment both profiling sides run: 2^20 user cycles over [0x120000000, 0x120001000).
pmc::OwnedSegment profiled_segment() {
  pmc::OwnedSegment s(1 << 20);
  s->pc_begin = 0x120000000;
  s->pc_end = 0x120001000;
  return s;
}

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
  // A P6 model like the session's, its PerfEvtSel0/1 as the session programmed them (EN set).
  pmc::sim::P6Device d(hal().cpu());
  d.write(0x186, c.session.encodings()[0].config | (1ull << 22));
  d.write(0x187, c.session.encodings()[1].config);
  for (auto _ : state) {
    benchmark::DoNotOptimize(d.read(0xC1));
    benchmark::DoNotOptimize(d.read(0xC2));
  }
}
BENCHMARK(read_raw);

}  // namespace

struct Profiling {
  pmc::Hal alpha = [] {
    pmc::Config cfg;
    cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
    cfg.backend = "alpha21064_sim";
    return pmc::Hal::open(cfg);
  }();
  pmc::Session session = alpha.session();
  Profiling() {
    session.add("PF_CYCLES:period=4096");
    pmc::ProfileRequest request;
    request.levels = true;
    request.pc = pmc::PcRange{pmc::AddressSpace::user, 0x120000000, 0x120001000};
    session.profile(request);
    session.start();
    pmc::Workload w;
    w.add(profiled_segment());
    session.run(w);  // a running session keeps running
  }
};

// The raw side: an Alpha 21064 model as the session's driver programs its own for
// PF_CYCLES:period=4096 (ICCSR MUX0 0xA with PC0, 0xA08), every item, the same profile range.
struct RawProfiling {
  pmc::sim::Alpha21064Device chip;
  RawProfiling() {
    namespace a = pmc::sim::alpha21064;
    chip.write(a::kRegIccsr, 0xA08);
    chip.write(a::kRegItems, 7);  // counters, IPL histogram, PC profiling
    chip.set_profile(a::ProfileMode::user, 0x120000000, 0x120001000);
    chip.write(a::kRegPerfmon, 1);
    chip.run(profiled_segment());
  }
};

void profile_hal(benchmark::State& state) {
  Profiling p;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.session.level_histograms());
    benchmark::DoNotOptimize(p.session.pc_profiles());
  }
}
BENCHMARK(profile_hal);

void profile_raw(benchmark::State& state) {
  RawProfiling p;
  const pmc::sim::Alpha21064Device& chip = p.chip;
  for (auto _ : state) {
    pmc::sim::alpha21064::IplHistogram h = chip.ipl_histogram();
    std::vector<std::uint64_t> buckets = chip.profile().buckets;
    benchmark::DoNotOptimize(h);
    benchmark::DoNotOptimize(buckets);
  }
}
BENCHMARK(profile_raw);

BENCHMARK_MAIN();
