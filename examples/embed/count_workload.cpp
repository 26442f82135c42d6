// count_workload: a program that embeds libpmchal. It opens a Hal on a CPUID dump (the bundled
// Pentium III unless told otherwise), adds the events named on its command line to a Session,
// counts them over a bundled simulated workload and prints the readings.
//
//   count_workload [--cpuid-dump NAME|FILE] [--workload NAME|FILE] [EVENT...]
//   count_workload instructions INST_RETIRED:u FLOPS
//
// A bare NAME is a file pmchal ships: share/pmchal/cpuid/NAME.txt, share/pmchal/workloads/NAME.toml.
// Build it against an installed pmchal with find_package(pmchal) and target pmc::pmchal; in the
// pmchal tree it is examples/CMakeLists.txt's target count_workload.
#include <pmc/pmc.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

void usage(std::FILE* to) {
  std::fputs("usage: count_workload [--cpuid-dump NAME|FILE] [--workload NAME|FILE] [EVENT...]\n"
             "  counts EVENTs (default: cycles instructions) over a simulated workload\n"
             "  (default: p6-demo) on the simulated PMU of a CPU (default: pentium-iii)\n",
             to);
}

}  // namespace

int main(int argc, char** argv) {
  std::string cpuid = "pentium-iii";
  std::string workload_name = "p6-demo";
  std::vector<std::string> events;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if ((arg == "--cpuid-dump" || arg == "--workload") && i + 1 < argc) {
      (arg == "--cpuid-dump" ? cpuid : workload_name) = argv[++i];
    } else if (arg.rfind("--", 0) == 0) {
      usage(stderr);
      return 2;
    } else {
      events.push_back(arg);
    }
  }
  if (events.empty()) events = {"cycles", "instructions"};

  try {
    // 1. Configuration: the operator's config file if there is one ($PMC_CONFIG,
    //    $XDG_CONFIG_HOME/pmc/config.toml or ~/.config/pmc/config.toml, /etc/pmc/config.toml),
    //    else the built-in defaults; then what this program decides itself, with its origin.
    pmc::Config config = pmc::find_config(std::nullopt);
    config.cpu = pmc::resolve_data(cpuid, pmc::DataKind::cpuid_dump).string();  // "pentium-iii": the bundled dump
    config.origin["cpu"].where = "count_workload --cpuid-dump";

    // 2. The Hal reads the CPU, loads every backend plugin, probes each and picks one.
    //    require_backend() throws pmc::Error(not_supported) with hal.why() when none matches.
    pmc::Hal hal = pmc::Hal::open(config);
    const pmc::BackendInfo& backend = hal.require_backend();
    std::printf("backend %s: %s\n", backend.name.c_str(), hal.why().c_str());

    // 3. A Session: each add() parses, encodes and schedules one event, or throws and leaves
    //    the session as it was (an unknown event, a bad modifier, no free counter).
    pmc::Session session = hal.session();
    for (const auto& e : events) session.add(e);

    // 4. Count. With access "sim" the session counts on the backend's simulated PMU (its device
    //    model); Session::run() drives it through the workload in chunks short enough that no
    //    counter can wrap twice, folding the hardware counts into 64-bit totals in between. It
    //    throws not_supported when the session counts through another access method.
    const pmc::Workload workload = pmc::load_workload(pmc::resolve_data(workload_name, pmc::DataKind::workload));
    session.start();
    const pmc::WorkloadRun run = session.run(workload);
    session.stop();

    // 5. Read: 64-bit, wrap-corrected values.
    std::printf("workload %s: %llu cycles on the simulated %s\n", workload.name.c_str(),
                static_cast<unsigned long long>(run.cycles), hal.pmu().description.c_str());
    if (run.cycles_not_counted)
      std::printf("(%llu of them ran on CPUs the simulated PMU does not count)\n",
                  static_cast<unsigned long long>(run.cycles_not_counted));
    for (const pmc::Reading& r : session.read())
      std::printf("%-24s = %llu  (%s, counter %u)\n", r.event.c_str(), static_cast<unsigned long long>(r.value),
                  r.canonical.c_str(), r.counter);
    return 0;
  } catch (const pmc::Error& e) {
    // One line that names the thing at fault; kind() lets a program react to the category.
    std::fprintf(stderr, "count_workload: %s\n", e.what());
    if (e.kind() == pmc::errc::no_counter)
      std::fputs("count_workload: hint: count fewer events at once, or ones that fit other counters\n", stderr);
    else if (e.kind() == pmc::errc::not_found)
      std::fputs("count_workload: hint: `pmc list --cpuid-dump NAME` shows the events of a CPU\n", stderr);
    return 1;
  }
}
