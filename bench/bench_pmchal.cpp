// Costs of the HAL next to the raw alternative, in one run. bench/ratios.py turns the output
// into ratios (HAL time / raw time) and adds the user-space instructions per call that
// pmc_bench_calls gives under callgrind; nothing here asserts a time. docs/performance.md
// records the method and the numbers.
//
// Each pair counts the same thing the same way on both sides:
//   read1:     Session::read(span) of task-clock (this thread)  vs  one read() of the same
//              perf group format (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING |
//              ID), vs PAPI_read of perf::TASK-CLOCK; Session::read() (the Readings, with their
//              strings) beside them
//   read4:     the same with task-clock, page-faults, context-switches, cpu-migrations in one
//              group  vs  one raw group read, vs PAPI_read of the four
//   startstop: Session::start() + stop() of the four  vs  PERF_EVENT_IOC_ENABLE + DISABLE on the
//              group leader, vs PAPI_start + PAPI_stop
//   encode:    Hal::encode("LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:u") on a Zen 4 (CPUID dump)
//              vs libpfm4's pfm_get_os_event_encoding of the same string for amd64_fam19h_zen4;
//              Hal::encode("L2_LD:M:E:u") on a Pentium III  vs  packing its PerfEvtSel by hand
//   sim:       Session::read() / poll() of two counters on the P6 device model  vs  two RDMSRs
//              on the same model; profile reads of the Alpha 21064 model  vs  copying them
//   open:      Hal::open with every plugin and data file (this machine's CPU)  vs
//              PAPI_library_init + PAPI_shutdown
//   workload:  a generated one-million-segment workload (the compact form of
//              docs/workload-format.md) counted by a session, streamed and loaded whole  vs  the
//              P6 device model run directly over the same segments, already in memory
// libpfm4 (libpfm4-dev) and PAPI (libpapi-dev) sides are built when those are installed.
#include "bench_common.hpp"

#include "alpha21064.hpp"  // pmcmodel_alpha21064
#include "p6_model.hpp"    // pmcmodel_p6

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <memory>

namespace {

using namespace pmc_bench;

// ---------------------------------------------------------------------------------------------
// The perf read path (software events: real on every Linux machine)

void read1_hal(benchmark::State& state) {
  HalCounting c(1);
  std::array<std::uint64_t, 1> v{};
  for (auto _ : state) {
    c.session.read(v);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(read1_hal);

// Session::read() returning the readings (names built once, numbers filled in per read), for
// 1 and 3 events; the raw alternative is the same group read (read1_raw, read3_raw).
void read1_hal_readings(benchmark::State& state) {
  HalCounting c(1);
  for (auto _ : state) benchmark::DoNotOptimize(c.session.read().data());
}
BENCHMARK(read1_hal_readings);

void read3_hal_readings(benchmark::State& state) {
  HalCounting c(3);
  for (auto _ : state) benchmark::DoNotOptimize(c.session.read().data());
}
BENCHMARK(read3_hal_readings);

void read3_raw(benchmark::State& state) {
  RawGroup g(3);
  std::array<std::uint64_t, 9> buf{};
  for (auto _ : state) {
    g.read(buf.data(), buf.size());
    benchmark::DoNotOptimize(buf);
  }
}
BENCHMARK(read3_raw);

void read1_raw(benchmark::State& state) {
  RawGroup g(1);
  std::array<std::uint64_t, 5> buf{};
  for (auto _ : state) {
    g.read(buf.data(), buf.size());
    benchmark::DoNotOptimize(buf);
  }
}
BENCHMARK(read1_raw);

void read4_hal(benchmark::State& state) {
  HalCounting c(4);
  std::array<std::uint64_t, 4> v{};
  for (auto _ : state) {
    c.session.read(v);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(read4_hal);

void read4_raw(benchmark::State& state) {
  RawGroup g(4);
  std::array<std::uint64_t, 11> buf{};
  for (auto _ : state) {
    g.read(buf.data(), buf.size());
    benchmark::DoNotOptimize(buf);
  }
}
BENCHMARK(read4_raw);

void startstop_hal(benchmark::State& state) {
  HalCounting c(4);
  c.session.stop();
  for (auto _ : state) {
    c.session.start();
    c.session.stop();
  }
}
BENCHMARK(startstop_hal);

void startstop_raw(benchmark::State& state) {
  RawGroup g(4);
  g.disable();
  for (auto _ : state) {
    g.enable();
    g.disable();
  }
}
BENCHMARK(startstop_raw);

#if PMC_BENCH_HAVE_PAPI
// PAPI counting the first n events, or the benchmark skipped with PAPI's reason (a PAPI whose
// perf_event component knows no PMU of this CPU has none of its events; ratios.py then leaves
// the PAPI rows out).
std::unique_ptr<PapiCounting> papi_or_skip(benchmark::State& state, std::size_t n) {
  try {
    return std::make_unique<PapiCounting>(n);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}

void read1_papi(benchmark::State& state) {
  auto counting = papi_or_skip(state, 1);
  if (!counting) return;
  PapiCounting& p = *counting;
  std::array<long long, 1> v{};
  for (auto _ : state) {
    p.read(v.data());
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(read1_papi);

void read4_papi(benchmark::State& state) {
  auto counting = papi_or_skip(state, 4);
  if (!counting) return;
  PapiCounting& p = *counting;
  std::array<long long, 4> v{};
  for (auto _ : state) {
    p.read(v.data());
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(read4_papi);

void startstop_papi(benchmark::State& state) {
  auto counting = papi_or_skip(state, 4);
  if (!counting) return;
  PapiCounting& p = *counting;
  std::array<long long, 4> v{};
  p.stop(v.data());
  for (auto _ : state) {
    p.start();
    p.stop(v.data());
  }
}
BENCHMARK(startstop_papi);

void open_papi(benchmark::State& state) {
  for (auto _ : state) papi_init_shutdown();
}
BENCHMARK(open_papi)->Unit(benchmark::kMicrosecond);
#endif

void open_hal(benchmark::State& state) {
  for (auto _ : state) {
    pmc::Hal h = pmc::Hal::open(pmc::Config{});
    benchmark::DoNotOptimize(h.backend());
  }
}
BENCHMARK(open_hal)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// Encoding

void encode_hal(benchmark::State& state) {
  const pmc::Hal& h = zen4_hal();
  for (auto _ : state) benchmark::DoNotOptimize(h.encode(kZen4Event).config);
}
BENCHMARK(encode_hal);

#if PMC_BENCH_HAVE_PFM
void encode_pfm(benchmark::State& state) {
  PfmEncoder e;
  for (auto _ : state) benchmark::DoNotOptimize(e.encode(kZen4Event));
}
BENCHMARK(encode_pfm);
#endif

void encode_p6_hal(benchmark::State& state) {
  const pmc::Hal& h = p6_hal();
  for (auto _ : state) benchmark::DoNotOptimize(h.encode("L2_LD:M:E:u").config);
}
BENCHMARK(encode_p6_hal);

void encode_p6_raw(benchmark::State& state) {
  std::uint64_t event = 0x29, umask = 0x0C;
  for (auto _ : state) {
    benchmark::DoNotOptimize(event);
    benchmark::DoNotOptimize(umask);
    std::uint64_t config = event | (umask << 8) | (1ull << 16);
    benchmark::DoNotOptimize(config);
  }
}
BENCHMARK(encode_p6_raw);

// ---------------------------------------------------------------------------------------------
// The simulated PMU: the session's register path against the device model itself

struct SimCounting {
  pmc::Session session = p6_hal().session();
  SimCounting() {
    session.add("instructions");
    session.add("cycles");
    session.start();
  }
};

void sim_read_hal(benchmark::State& state) {
  SimCounting c;
  std::array<std::uint64_t, 2> v{};
  for (auto _ : state) {
    c.session.read(v);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(sim_read_hal);

void sim_readings_hal(benchmark::State& state) {
  SimCounting c;
  for (auto _ : state) benchmark::DoNotOptimize(c.session.read().data());
}
BENCHMARK(sim_readings_hal);

void sim_poll_hal(benchmark::State& state) {
  SimCounting c;
  for (auto _ : state) c.session.poll();
}
BENCHMARK(sim_poll_hal);

void sim_read_raw(benchmark::State& state) {
  SimCounting c;
  // A P6 model like the session's, its PerfEvtSel0/1 as the session programmed them (EN set).
  pmc::sim::P6Device d(p6_hal().cpu());
  d.write(0x186, c.session.encodings()[0].config | (1ull << 22));
  d.write(0x187, c.session.encodings()[1].config);
  for (auto _ : state) {
    benchmark::DoNotOptimize(d.read(0xC1));
    benchmark::DoNotOptimize(d.read(0xC2));
  }
}
BENCHMARK(sim_read_raw);

// The segment both profiling sides run: 2^20 user cycles over [0x120000000, 0x120001000).
pmc::OwnedSegment profiled_segment() {
  pmc::OwnedSegment s(1 << 20);
  s->pc_begin = 0x120000000;
  s->pc_end = 0x120001000;
  return s;
}

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

// ---------------------------------------------------------------------------------------------
// Workloads of a million segments

void workload_stream_hal(benchmark::State& state) {
  const GeneratedWorkload& w = million_segments();
  for (auto _ : state) benchmark::DoNotOptimize(count_streamed(w.path).cycles);
}
BENCHMARK(workload_stream_hal)->Unit(benchmark::kMillisecond)->Iterations(3);

void workload_load_hal(benchmark::State& state) {
  const GeneratedWorkload& w = million_segments();
  for (auto _ : state) benchmark::DoNotOptimize(count_loaded(w.path).cycles);
}
BENCHMARK(workload_load_hal)->Unit(benchmark::kMillisecond)->Iterations(3);

void workload_raw(benchmark::State& state) {
  const GeneratedWorkload& w = million_segments();
  for (auto _ : state) benchmark::DoNotOptimize(count_on_the_model(w));
}
BENCHMARK(workload_raw)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
