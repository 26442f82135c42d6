// pmc_bench_calls OP N: runs one operation N times inside pmcb_loop(), for callgrind:
//   valgrind --tool=callgrind --toggle-collect='*pmcb_loop_measured*' --callgrind-out-file=F pmc_bench_calls OP N
// counts the user-space instructions of the N calls only (setup and a first call excluded); bench/ratios.py
// divides by N. Instruction counts repeat from run to run where times do not.
//   pmc_bench_calls workload-rss stream|load|stream-toml|load-toml  counts the generated
// one-million-segment workload (compact form, or -toml: the same segments as TOML) once and
// prints the wall time and the peak resident memory it added.
//   pmc_bench_calls cpuid-dump FILE  the native CPUID reading (the leaves pmchal reads) written
// as `cpuid -r` prints it: under valgrind, whose CPUID is a synthetic CPU's, `pmc stat
// --cpuid-dump FILE` takes the decisions it takes natively (ratios.py's command instructions).
//   pmc_bench_calls swevents N  the kernel's side of `pmc stat -- true`'s default events: the
// median wall time of opening and closing, on this process, task-clock alone and the group of
// perf's default software events (task-clock, context-switches, cpu-migrations, page-faults),
// alternately, N times each. Raw perf_event_open, no pmchal: what any tool pays.
// OPs: empty read1_hal read1_raw read1_papi read4_hal read4_raw read4_papi startstop_hal
// startstop_raw startstop_papi encode_hal encode_pfm open_hal open_hal_warm open_papi
#include "bench_common.hpp"

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace pmc_bench;

// The measured region: callgrind collects inside pmcb_loop_measured only.
__attribute__((noinline)) void pmcb_loop_measured(const std::function<void()>& op, long n) {
  for (long i = 0; i < n; ++i) op();
}

// One call first, outside the measured region: the dynamic linker binds each library function at
// its first call (about 2,000 instructions), and first uses build what later calls reuse.
void pmcb_loop(const std::function<void()>& op, long n) {
  op();
  pmcb_loop_measured(op, n);
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int write_cpuid_dump(const char* path) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "pmc_bench_calls: cannot write %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  std::fprintf(f, "# the native CPUID leaves pmchal reads (pmc_bench_calls cpuid-dump)\nCPU:\n");
  const pmc::CpuInfo cpu = pmc::read_native_cpu();
  for (const auto& [key, r] : cpu.raw.all())
    std::fprintf(f, "   0x%08x 0x%02x: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n", key.first, key.second,
                 r.eax, r.ebx, r.ecx, r.edx);
  return std::fclose(f) == 0 ? 0 : 1;
}

int workload_rss(const std::string& how) {
  const bool toml = how.size() > 5 && how.compare(how.size() - 5, 5, "-toml") == 0;
  const GeneratedWorkload& w = toml ? million_segments_toml() : million_segments();
  (void)p6_hal();
  (void)workload_session();  // the plugins loaded before the baseline
  const long before = peak_rss_kb();
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const pmc::WorkloadRun run = how.rfind("load", 0) == 0 ? count_loaded(w.path) : count_streamed(w.path);
  const auto t1 = std::chrono::steady_clock::now();
  std::printf("segments %zu cycles %llu seconds %.4f cpu_seconds %.4f peak_rss_added_kb %ld peak_rss_kb %ld\n",
              w.segments, static_cast<unsigned long long>(run.cycles), std::chrono::duration<double>(t1 - t0).count(),
              cpu_seconds() - cpu0, peak_rss_kb() - before, peak_rss_kb());
  return 0;
}

// Opens the software events `configs` as one group on this thread, disabled, then closes them.
void open_close(const std::vector<std::uint64_t>& configs) {
  std::vector<int> fds;
  for (std::uint64_t config : configs) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = config;
    attr.disabled = fds.empty() ? 1 : 0;
    attr.inherit = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, fds.empty() ? -1 : fds[0], PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) throw std::runtime_error(std::string("perf_event_open: ") + std::strerror(errno));
    fds.push_back(static_cast<int>(fd));
  }
  for (auto it = fds.rbegin(); it != fds.rend(); ++it) ::close(*it);
}

int software_events(long n) {
  const std::vector<std::uint64_t> alone{PERF_COUNT_SW_TASK_CLOCK};
  const std::vector<std::uint64_t> defaults{PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
                                            PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS};
  std::vector<double> a, d;
  auto us = [](const std::vector<std::uint64_t>& configs) {
    const auto t0 = std::chrono::steady_clock::now();
    open_close(configs);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  open_close(defaults);  // the first opening in a while also switches the scheduler's hooks on
  for (long i = 0; i < n; ++i) {
    a.push_back(us(alone));
    d.push_back(us(defaults));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("task_clock_us %.2f default_software_us %.2f\n", median(a), median(d));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pmc_bench_calls OP N | workload-rss stream|load\n");
    return 2;
  }
  const std::string op = argv[1];
  if (op == "workload-rss") return workload_rss(argv[2]);
  if (op == "cpuid-dump") return write_cpuid_dump(argv[2]);
  const long n = std::atol(argv[2]);
  if (op == "swevents") {
    try {
      return software_events(n > 0 ? n : 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pmc_bench_calls: swevents: %s\n", e.what());
      return 1;
    }
  }
  try {
    std::array<std::uint64_t, 11> buf{};
    std::array<long long, 4> papi{};
    (void)papi;
    if (op == "empty") {  // the loop's own cost, which ratios.py subtracts
      pmcb_loop([] {}, n);
    } else if (op == "read1_hal" || op == "read4_hal") {
      const std::size_t events = op == "read1_hal" ? 1 : 4;
      HalCounting c(events);
      const std::span<std::uint64_t> values(buf.data(), events);
      pmcb_loop([&] { c.session.read(values); }, n);
    } else if (op == "read1_hal_readings" || op == "read3_hal_readings") {
      HalCounting c(op == "read1_hal_readings" ? 1 : 3);
      pmcb_loop([&] { (void)c.session.read(); }, n);
    } else if (op == "read1_raw" || op == "read3_raw" || op == "read4_raw") {
      const std::size_t events = op == "read1_raw" ? 1 : op == "read3_raw" ? 3 : 4;
      RawGroup g(events);
      pmcb_loop([&] { g.read(buf.data(), 3 + 2 * events); }, n);
    } else if (op == "startstop_hal") {
      HalCounting c(4);
      c.session.stop();
      pmcb_loop([&] {
        c.session.start();
        c.session.stop();
      }, n);
    } else if (op == "startstop_raw") {
      RawGroup g(4);
      g.disable();
      pmcb_loop([&] {
        g.enable();
        g.disable();
      }, n);
    } else if (op == "encode_hal") {
      const pmc::Hal& h = zen4_hal();
      pmcb_loop([&] { buf[0] = h.encode(kZen4Event).config; }, n);
    } else if (op == "open_hal") {  // each open loads the plugins again (the last Hal unloaded them)
      pmcb_loop([&] { pmc::Hal::open(pmc::Config{}); }, n);
    } else if (op == "open_hal_warm") {  // another Hal keeps the plugins loaded, as in pmc_bench
      const pmc::Hal& keep = native_hal();
      (void)keep;
      pmcb_loop([&] { pmc::Hal::open(pmc::Config{}); }, n);
#if PMC_BENCH_HAVE_PFM
    } else if (op == "encode_pfm") {
      PfmEncoder e;
      pmcb_loop([&] { buf[0] = e.encode(kZen4Event); }, n);
#endif
#if PMC_BENCH_HAVE_PAPI
    } else if (op == "read1_papi" || op == "read4_papi") {
      PapiCounting p(op == "read1_papi" ? 1 : 4);
      pmcb_loop([&] { p.read(papi.data()); }, n);
    } else if (op == "startstop_papi") {
      PapiCounting p(4);
      p.stop(papi.data());
      pmcb_loop([&] {
        p.start();
        p.stop(papi.data());
      }, n);
    } else if (op == "open_papi") {
      pmcb_loop([] { papi_init_shutdown(); }, n);
#endif
    } else {
      std::fprintf(stderr, "pmc_bench_calls: unknown or unavailable operation '%s'\n", op.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmc_bench_calls: %s: %s\n", op.c_str(), e.what());
    return 1;
  }
  return 0;
}
