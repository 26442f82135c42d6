// What both benchmark programs set up: sessions counting perf software events and their raw
// perf_event_open twins, PAPI and libpfm4 where installed, the Hals of the encode and
// simulation benchmarks, and the generated one-million-segment workload.
#pragma once

#include <pmc/pmc.hpp>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "p6_model.hpp"  // pmcmodel_p6: the raw side of the workload benchmark

#if PMC_BENCH_HAVE_PAPI
#include <papi.h>
#endif
#if PMC_BENCH_HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

namespace pmc_bench {

// The four software events of the group benchmarks, as the HAL, raw perf and PAPI name them.
inline constexpr const char* kHalEvents[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations"};
inline constexpr std::uint64_t kPerfConfigs[] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
                                                 PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS};
inline constexpr const char* kPapiEvents[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES",
                                              "perf::CPU-MIGRATIONS"};

// The encode benchmark's event: a Zen 4 event with two unit masks and a privilege modifier,
// which libpfm4 (amd64_fam19h_zen4) knows by the same name.
inline constexpr const char* kZen4Event = "LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:u";

inline pmc::Hal& native_hal() {
  static pmc::Hal h = pmc::Hal::open(pmc::Config{});
  return h;
}

inline pmc::Hal open_with_cpu(const char* dump) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  return pmc::Hal::open(cfg);
}

// The encode benchmarks measure a process that encodes many events: its catalog decoded (a few
// lookups after a cached Hal::open decode one event each instead: catalog_cache.hpp).
inline pmc::Hal& decoded(pmc::Hal& h) {
  (void)h.events().events();
  return h;
}

inline pmc::Hal& zen4_hal() {
  static pmc::Hal h = open_with_cpu("amd-zen4-genoa.txt");
  return decoded(h);
}

inline pmc::Hal& p6_hal() {
  static pmc::Hal h = open_with_cpu("pentium-iii.txt");
  return decoded(h);
}

// A session of this thread counting the first n of kHalEvents, running.
struct HalCounting {
  pmc::Session session = native_hal().session(pmc::Scope::this_thread());
  explicit HalCounting(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) session.add(kHalEvents[i]);
    session.start();
  }
};

// The same events opened by hand as the session opens them: one group of this thread, read
// with PERF_FORMAT_GROUP, the times and the ids, switched through the leader (the members
// stay enabled).
class RawGroup {
 public:
  explicit RawGroup(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = kPerfConfigs[i];
      attr.read_format =
          PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
      attr.disabled = fds_.empty();
      const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, fds_.empty() ? -1 : fds_[0], PERF_FLAG_FD_CLOEXEC);
      if (fd < 0) throw std::runtime_error(std::string("perf_event_open: ") + std::strerror(errno));
      fds_.push_back(static_cast<int>(fd));
    }
    enable();
  }
  ~RawGroup() {
    for (int fd : fds_) ::close(fd);
  }
  RawGroup(const RawGroup&) = delete;
  RawGroup& operator=(const RawGroup&) = delete;
  // nr, time_enabled, time_running, then {value, id} per event: 3 + 2n words.
  void read(std::uint64_t* buf, std::size_t words) const {
    if (::read(fds_[0], buf, words * sizeof *buf) < 0) throw std::runtime_error("read");
  }
  // The leader alone, as the session does (hal/src/access/perf_event.cpp says why not PERF_IOC_FLAG_GROUP).
  void enable() const { ioctl(fds_[0], PERF_EVENT_IOC_ENABLE, 0); }
  void disable() const { ioctl(fds_[0], PERF_EVENT_IOC_DISABLE, 0); }

 private:
  std::vector<int> fds_;
};

#if PMC_BENCH_HAVE_PAPI
inline void papi_init() {
  if (PAPI_is_initialized() == PAPI_NOT_INITED && PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
    throw std::runtime_error("PAPI_library_init failed");
}

inline void papi_init_shutdown() {
  if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) throw std::runtime_error("PAPI_library_init failed");
  PAPI_shutdown();
}

// PAPI counting the first n of kPapiEvents (perf_event component), running.
class PapiCounting {
 public:
  explicit PapiCounting(std::size_t n) {
    papi_init();
    if (PAPI_create_eventset(&set_) != PAPI_OK) throw std::runtime_error("PAPI_create_eventset failed");
    for (std::size_t i = 0; i < n; ++i)
      if (int r = PAPI_add_named_event(set_, kPapiEvents[i]); r != PAPI_OK)
        throw std::runtime_error(std::string("PAPI_add_named_event: ") + PAPI_strerror(r));
    start();
  }
  ~PapiCounting() {
    long long v[4];
    if (running_) PAPI_stop(set_, v);
    PAPI_cleanup_eventset(set_);
    PAPI_destroy_eventset(&set_);
  }
  PapiCounting(const PapiCounting&) = delete;
  PapiCounting& operator=(const PapiCounting&) = delete;
  void read(long long* v) const { PAPI_read(set_, v); }
  void start() {
    PAPI_start(set_);
    running_ = true;
  }
  void stop(long long* v) {
    PAPI_stop(set_, v);
    running_ = false;
  }

 private:
  int set_ = PAPI_NULL;
  bool running_ = false;
};
#endif

#if PMC_BENCH_HAVE_PFM
// libpfm4 encoding for a Zen 4 whatever this machine is (LIBPFM_FORCE_PMU), into a perf
// attribute, without the fully qualified string (the cheaper way to call it).
class PfmEncoder {
 public:
  PfmEncoder() {
    static const int ok = [] {
      setenv("LIBPFM_FORCE_PMU", "amd64_fam19h_zen4", 1);
      return pfm_initialize();
    }();
    if (ok != PFM_SUCCESS) throw std::runtime_error("pfm_initialize failed");
  }
  std::uint64_t encode(const char* event) {
    perf_event_attr attr{};
    pfm_perf_encode_arg_t arg{};
    arg.attr = &attr;
    arg.size = sizeof arg;
    if (pfm_get_os_event_encoding(event, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg) != PFM_SUCCESS)
      throw std::runtime_error(std::string("libpfm4 cannot encode ") + event);
    return attr.config;
  }
};
#endif

// ---------------------------------------------------------------------------------------------
// The one-million-segment workload: generated once per process in the compact form, in the
// temporary directory ($TMPDIR), with P6 signals (a pseudo-random mix of user and kernel
// segments).
struct GeneratedWorkload {
  std::filesystem::path path;
  std::size_t segments = 0;
  ~GeneratedWorkload() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

// The same segments in the compact form or, with toml, as [[segment]] tables.
inline void write_generated(const std::filesystem::path& path, std::size_t segments, bool toml = false) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path.string());
  if (toml)
    std::fprintf(f, "name = \"million\"\n");
  else
    std::fprintf(f, "pmc-workload 1\nname million\ncolumns cycles mode instructions branches branch-misses l2_ld.m\n");
  std::uint64_t x = 88172645463325252ull;  // xorshift64
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (std::size_t i = 0; i < segments; ++i) {
    const std::uint64_t r = next();
    if (toml) {
      std::fprintf(f,
                   "[[segment]]\ncycles = %llu\nmode = \"%s\"\nsignals = { instructions = %llu, branches = %llu, "
                   "branch-misses = %llu, \"l2_ld.m\" = %llu }\n",
                   static_cast<unsigned long long>(1000 + r % 99000), (r >> 20) % 10 ? "user" : "kernel",
                   static_cast<unsigned long long>(1 + (r >> 24) % 4), static_cast<unsigned long long>((r >> 28) % 2),
                   static_cast<unsigned long long>((r >> 30) % 2), static_cast<unsigned long long>((r >> 32) % 2));
      continue;
    }
    std::fprintf(f, "%llu %c %llu %llu %llu %llu\n", static_cast<unsigned long long>(1000 + r % 99000),
                 (r >> 20) % 10 ? 'u' : 'k', static_cast<unsigned long long>(1 + (r >> 24) % 4),
                 static_cast<unsigned long long>((r >> 28) % 2), static_cast<unsigned long long>((r >> 30) % 2),
                 static_cast<unsigned long long>((r >> 32) % 2));
  }
  if (std::fclose(f) != 0) throw std::runtime_error("write error on " + path.string());
}

inline const GeneratedWorkload& million_segments() {
  static GeneratedWorkload w = [] {
    GeneratedWorkload g;
    g.path = std::filesystem::temp_directory_path() / ("pmc_bench_million_" + std::to_string(getpid()) + ".pmcw");
    g.segments = 1000000;
    write_generated(g.path, g.segments);
    return g;
  }();
  return w;
}

// The same million segments as TOML (about 110 MB).
inline const GeneratedWorkload& million_segments_toml() {
  static GeneratedWorkload w = [] {
    GeneratedWorkload g;
    g.path = std::filesystem::temp_directory_path() / ("pmc_bench_million_" + std::to_string(getpid()) + ".toml");
    g.segments = 1000000;
    write_generated(g.path, g.segments, true);
    return g;
  }();
  return w;
}

// The events both sides count on the P6: instructions on PerfCtr0, cycles on PerfCtr1.
inline pmc::Session workload_session() {
  pmc::Session s = p6_hal().session();
  s.add("instructions");
  s.add("cycles");
  return s;
}

inline pmc::WorkloadRun count_streamed(const std::filesystem::path& file) {
  pmc::Session s = workload_session();
  pmc::WorkloadReader reader(file);
  return s.run(reader);
}

inline pmc::WorkloadRun count_loaded(const std::filesystem::path& file) {
  pmc::Session s = workload_session();
  const pmc::Workload w = pmc::load_workload(file);
  return s.run(w);
}

// The raw side: the P6 model itself over the workload already in memory, its PerfEvtSel0/1
// programmed as the session programs them, both counters read after each segment (as the
// session folds them).
inline std::uint64_t count_on_the_model(const pmc::Workload& w, const pmc::Session& programmed) {
  pmc::sim::P6Device d(p6_hal().cpu());
  d.write(0x186, programmed.encodings()[0].config | (1ull << 22));
  d.write(0x187, programmed.encodings()[1].config);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    d.run(w.segment(i));
    sum += d.read(0xC1) + d.read(0xC2);
  }
  return sum;
}

inline std::uint64_t count_on_the_model(const GeneratedWorkload& g) {
  static const pmc::Workload w = pmc::load_workload(g.path);
  static const pmc::Session programmed = workload_session();
  return count_on_the_model(w, programmed);
}

}  // namespace pmc_bench
