// profile_workload: a program that embeds libpmchal to profile, not only count. It opens a Hal
// with the backend named on the command line (default: the emulated Alpha 21064, whose pfm(7)
// driver samples at every counter interrupt), asks the Session for the execution-level
// histogram and a PC profile of one address range, runs a bundled simulated workload, and
// prints the histogram and the hottest PC buckets.
//
//   profile_workload [--backend NAME] [--workload NAME|FILE] [--event EVENT] [--kernel] START END
//   profile_workload --workload alpha-profile --event PF_CYCLES:period=4096 0x120000000 0x120001000
//
// A bare NAME is a file pmchal ships (share/pmchal/workloads/NAME.toml). Build it against an
// installed pmchal with find_package(pmchal) and target pmc::pmchal; in the pmchal tree it is
// examples/CMakeLists.txt's target profile_workload.
#include <pmc/pmc.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

void usage(std::FILE* to) {
  std::fputs("usage: profile_workload [--backend NAME] [--workload NAME|FILE] [--event EVENT] [--kernel] START END\n"
             "  samples the execution level and the PC at each counter interrupt of EVENT (default: cycles)\n"
             "  over a simulated workload (default: alpha-profile) and profiles PCs in [START, END)\n",
             to);
}

// strtoull with base 0 (0x... hex, decimal), the whole string.
std::optional<std::uint64_t> address(const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "alpha21064_sim", workload_name = "alpha-profile", event = "cycles";
  pmc::AddressSpace space = pmc::AddressSpace::user;
  std::vector<std::uint64_t> bounds;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if ((arg == "--backend" || arg == "--workload" || arg == "--event") && i + 1 < argc) {
      (arg == "--backend" ? backend : arg == "--workload" ? workload_name : event) = argv[++i];
    } else if (arg == "--kernel") {
      space = pmc::AddressSpace::kernel;
    } else if (auto a = address(argv[i])) {
      bounds.push_back(*a);
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (bounds.size() != 2) {
    usage(stderr);
    return 2;
  }

  try {
    // 1. A Hal with the backend chosen by name (the emulated Alpha matches no CPUID).
    pmc::Config config = pmc::find_config(std::nullopt);
    config.backend = backend;
    config.origin["backend"].where = "profile_workload --backend";
    pmc::Hal hal = pmc::Hal::open(config);
    pmc::Session session = hal.session();
    session.add(event);

    // 2. Ask for profiling before start: the level histogram and a PC profile of one range.
    //    profile() throws not_supported when the backend's driver cannot sample (it is no
    //    pmc::ProfilingDriver) or the access method cannot take counter interrupts, and the
    //    backend's refusal of a range its driver cannot hold.
    pmc::ProfileRequest request;
    request.levels = true;
    request.pc = pmc::PcRange{space, bounds[0], bounds[1]};
    session.profile(request);

    // 3. Run the workload on the session's simulated PMU (Session::run starts a stopped session
    //    for the run and stops it after).
    const pmc::Workload workload = pmc::load_workload(pmc::resolve_data(workload_name, pmc::DataKind::workload));
    const pmc::WorkloadRun run = session.run(workload);
    std::printf("workload %s: %llu cycles, %llu counter interrupts\n", workload.name.c_str(),
                static_cast<unsigned long long>(run.cycles), static_cast<unsigned long long>(run.interrupts));

    // 4. The count, and what each counter interrupt saw.
    for (const pmc::Reading& r : session.read())
      std::printf("%s = %llu (in steps of %llu)\n", r.event.c_str(), static_cast<unsigned long long>(r.value),
                  static_cast<unsigned long long>(r.granularity));
    for (const pmc::LevelHistogram& h : session.level_histograms()) {
      std::printf("levels (%llu samples):", static_cast<unsigned long long>(h.total()));
      for (const pmc::LevelBin& b : h.bins)
        std::printf(" %s=%llu", b.label.c_str(), static_cast<unsigned long long>(b.samples));
      std::printf("\n");
    }
    for (const pmc::PcProfile& p : session.pc_profiles()) {
      std::printf("pc profile [0x%llx, 0x%llx): %zu buckets of %llu bytes, %llu samples\n",
                  static_cast<unsigned long long>(p.range.start), static_cast<unsigned long long>(p.range.end),
                  p.samples.size(), static_cast<unsigned long long>(p.bucket_bytes),
                  static_cast<unsigned long long>(p.total()));
      for (const pmc::PcBucket& b : p.hottest(5))
        std::printf("  0x%llx-0x%llx %llu\n", static_cast<unsigned long long>(b.start),
                    static_cast<unsigned long long>(b.end - 1), static_cast<unsigned long long>(b.samples));
    }
    return 0;
  } catch (const pmc::Error& e) {
    std::fprintf(stderr, "profile_workload: %s\n", e.what());
    return 1;
  }
}
