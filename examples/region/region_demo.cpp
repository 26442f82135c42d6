// region_demo: a program instrumented once with pmchal's regions (docs/regions.md) and measured
// many ways without recompiling: which events, and where the results go, are the environment's
// ($PMC_REGION_EVENTS, $PMC_REGION_OUTPUT) or the config file's ([regions] in it).
//
//   PMC_REGION_EVENTS=task-clock,page-faults PMC_REGION_OUTPUT=r.json region_demo 4
//   pmc stat --regions -e task-clock -- region_demo 4
//
// The structure: region "setup" once on the main thread; then THREADS threads (default 2), each
// running region "work" 5 times, each "work" holding region "kernel" twice. So "work" completes
// 5 x THREADS calls and "kernel" 10 x THREADS, and "work" counts at least what its "kernels" do.
// With --workload FILE each "kernel" also runs that simulated workload on the thread's session
// (a config whose cpu is a CPUID dump counts on that CPU's simulated PMU, exactly).
#include <pmc/pmc.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

double compute(std::vector<double>& data) {
  double sum = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = std::sqrt(data[i] + static_cast<double>(i));
    sum += data[i];
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 2;
  std::optional<pmc::Workload> workload;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--workload" && i + 1 < argc) workload = pmc::load_workload(pmc::resolve_data(argv[++i], pmc::DataKind::workload));
      else threads = static_cast<unsigned>(std::stoul(a));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "usage: region_demo [THREADS] [--workload FILE] (%s)\n", e.what());
    return 2;
  }

  try {
    std::vector<double> data;
    {
      pmc::ScopedRegion setup("setup");
      data.assign(1 << 18, 1.0);
    }
    // Numbers, looked up once: no lookup by name in the loops.
    const pmc::regions::Id work = pmc::regions::id("work");
    const pmc::regions::Id kernel = pmc::regions::id("kernel");
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          std::vector<double> mine(data);
          for (int i = 0; i < 5; ++i) {
            pmc::regions::begin(work);
            for (int k = 0; k < 2; ++k) {
              pmc::regions::begin(kernel);
              (void)compute(mine);
              if (workload) (void)pmc::regions::thread_session().run(*workload);
              pmc::regions::end(kernel);
            }
            pmc::regions::end(work);
          }
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& th : pool) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  } catch (const pmc::Error& e) {
    std::fprintf(stderr, "region_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
