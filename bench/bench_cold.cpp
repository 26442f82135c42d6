// What a tool pays to start: Hal::open in a fresh process, beside PAPI_library_init in a fresh
// process, in one run. Each sample is a child forked from this program before it has touched
// pmchal or PAPI (their libraries are mapped, as in any program linked with them; the page cache
// is warm after the first sample); the child times the call with CLOCK_MONOTONIC and
// CLOCK_PROCESS_CPUTIME_ID and reports through a pipe. The kinds of sample alternate, each round
// starting at the next one, so drift of the machine and what the previous child left in the
// caches spread over all of them. The *_exec kinds time the same calls in this program exec'd
// afresh in the child (the dynamic loader's mapping and relocation done, as in a started tool).
//   pmc_bench_cold [SAMPLES]     default 200 of each kind
// Prints one line per kind: median and quartiles of wall and CPU time in microseconds, and the
// ratios to PAPI's median (bench/ratios.py reads the lines that start with "cold ").
#include <pmc/pmc.hpp>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#if PMC_BENCH_HAVE_PAPI
#include <papi.h>
#endif

namespace {

double now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Kind {
  const char* name;
  std::function<void()> work;
  const char* exec_of = nullptr;  // set: a fresh program (this one, exec'd) runs that kind's work
  std::vector<double> wall, cpu;
  std::string skipped;  // why the kind could not run (empty: it ran)
};

// Times work() and writes its wall and CPU microseconds to fd (or its exception's text); the
// process's exit status.
int timed(const std::function<void()>& work, int fd) {
  double out[2] = {0, 0};
  try {
    const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    work();
    out[0] = now(CLOCK_MONOTONIC) - w0;
    out[1] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
  } catch (const std::exception& e) {
    const std::string text = e.what();
    if (write(fd, text.data(), text.size()) < 0) return 3;
    return 2;
  }
  return write(fd, out, sizeof out) == static_cast<ssize_t>(sizeof out) ? 0 : 1;
}

// One sample of a kind in a child: its wall and CPU microseconds, or false when the child failed.
// A kind with exec_of runs in this program exec'd afresh (`--child NAME`, the pipe as fd 3): a
// process whose dynamic loader has just mapped and relocated the libraries, as a tool's has.
bool sample(const Kind& k, double& wall, double& cpu, std::string& why) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    if (k.exec_of) {
      if (dup2(fds[1], 3) != 3) _exit(4);
      execl("/proc/self/exe", "pmc_bench_cold", "--child", k.exec_of, static_cast<char*>(nullptr));
      _exit(4);
    }
    _exit(timed(k.work, fds[1]));
  }
  close(fds[1]);
  char buf[512];
  const ssize_t n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("the child failed");
    return false;
  }
  if (n != static_cast<ssize_t>(2 * sizeof(double))) return false;
  double v[2];
  std::copy_n(buf, sizeof v, reinterpret_cast<char*>(v));
  wall = v[0];
  cpu = v[1];
  return true;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const bool child = argc > 2 && std::string(argv[1]) == "--child";
  const int samples = argc > 1 && !child ? std::atoi(argv[1]) : 200;
  std::vector<Kind> kinds;
  // Hal::open alone, as papi_library_init is PAPI's init alone: the Hal outlives the timing and
  // goes with the child (~Hal is timed in hal_open_plugins_close, beside PAPI's shutdown).
  kinds.push_back({"hal_open",
                   [] {
                     static std::optional<pmc::Hal> kept;
                     kept.emplace(pmc::Hal::open(pmc::Config{}));
                     (void)kept->backend();
                   },
                   nullptr, {}, {}, {}});
  kinds.push_back({"hal_open_plugins_close",
                   [] {
                     pmc::Hal h = pmc::Hal::open(pmc::Config{});
                     (void)h.plugins();
                   },
                   nullptr, {}, {}, {}});
  // Hal::open leaves the backend's catalog and PMU to their first use: what a tool that counts
  // pays before its first event (PAPI_library_init has read its event tables by then).
  kinds.push_back({"hal_open_first_event",
                   [] {
                     pmc::Hal h = pmc::Hal::open(pmc::Config{});
                     if (h.backend()) (void)h.encode("cycles");
                   },
                   nullptr, {}, {}, {}});
#if PMC_BENCH_HAVE_PAPI
  kinds.push_back({"papi_library_init",
                   [] {
                     if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
                       throw std::runtime_error("PAPI_library_init failed");
                   },
                   nullptr, {}, {}, {}});
  kinds.push_back({"papi_library_init_shutdown",
                   [] {
                     if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
                       throw std::runtime_error("PAPI_library_init failed");
                     PAPI_shutdown();
                   },
                   nullptr, {}, {}, {}});
#endif
  if (child) {  // an exec'd sample: the named kind's work, timed, to fd 3
    for (const Kind& k : kinds)
      if (std::string(k.name) == argv[2]) return timed(k.work, 3);
    return 5;
  }
  // The same in a fresh program: what a tool started from a shell pays.
  kinds.push_back({"hal_open_exec", {}, "hal_open", {}, {}, {}});
#if PMC_BENCH_HAVE_PAPI
  kinds.push_back({"papi_library_init_exec", {}, "papi_library_init", {}, {}, {}});
#endif
  // Each round starts at the next kind: a kind run just after PAPI's (which leaves the caches to
  // its own data) is each kind in turn, not always the first.
  for (int i = 0; i < samples; ++i)
    for (std::size_t j = 0; j < kinds.size(); ++j) {
      Kind& k = kinds[(j + static_cast<std::size_t>(i)) % kinds.size()];
      if (!k.skipped.empty()) continue;
      double wall = 0, cpu = 0;
      if (sample(k, wall, cpu, k.skipped)) {
        k.wall.push_back(wall);
        k.cpu.push_back(cpu);
      } else if (k.skipped.empty()) {
        k.skipped = "the sample's child failed";
      }
    }
  double papi = 0;
  for (const Kind& k : kinds)
    if (std::string(k.name) == "papi_library_init" && !k.wall.empty()) papi = quantile(k.wall, 0.5);
  for (const Kind& k : kinds) {
    if (!k.skipped.empty() && k.wall.empty()) {
      std::printf("cold %s skipped: %s\n", k.name, k.skipped.c_str());
      continue;
    }
    const double median = quantile(k.wall, 0.5);
    std::printf("cold %s wall_us %.1f q1 %.1f q3 %.1f cpu_us %.1f samples %zu", k.name, median, quantile(k.wall, 0.25),
                quantile(k.wall, 0.75), quantile(k.cpu, 0.5), k.wall.size());
    if (papi > 0) std::printf(" vs_papi_init %.2fx", median / papi);
    std::printf("\n");
  }
  return 0;
}
