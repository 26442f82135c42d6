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
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/sim/device.hpp>
#include <pmc/sim/workload.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// "pentium-iii" -> <prefix>/share/pmchal/cpuid/pentium-iii.txt; a path that exists stays as given.
fs::path data_file(const std::string& given, const char* dir, const char* ext) {
  std::error_code ec;
  if (given.find('/') != std::string::npos || fs::exists(given, ec)) return given;
  return pmc::default_paths().data / dir / (given + ext);
}

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
    config.cpu = data_file(cpuid, "cpuid", ".txt").string();
    config.origin["cpu"].where = "count_workload --cpuid-dump";

    // 2. The Hal reads the CPU, loads every backend plugin, probes each and picks one.
    //    require_backend() throws pmc::Error(not_supported) with hal.why() when none matches.
    pmc::Hal hal = pmc::Hal::open(config);
    const pmc::Backend& backend = hal.require_backend();
    std::printf("backend %s: %s\n", std::string(backend.name()).c_str(), hal.why().c_str());

    // 3. A Session: each add() parses, encodes and schedules one event, or throws and leaves
    //    the session as it was (an unknown event, a bad modifier, no free counter).
    pmc::Session session = hal.session();
    for (const auto& e : events) session.add(e);

    // 4. Count. With access "sim" (the only access today) the session programs a simulated
    //    device model; the workload runner advances it in chunks short enough that no counter
    //    can wrap twice, and poll() folds the hardware counts into 64-bit totals in between.
    pmc::sim::Device* device = session.device();
    if (!device)
      throw pmc::Error(pmc::errc::not_supported,
                       "access '" + hal.access() + "' has no simulated device; set access = \"sim\"");
    const pmc::sim::Workload workload = pmc::sim::load_workload(data_file(workload_name, "workloads", ".toml"));
    unsigned width = 64;
    for (const auto& c : hal.pmu().counters) width = std::min(width, c.width);
    session.start();
    pmc::sim::run_workload(*device, workload, width, [&] { session.poll(); });
    session.stop();

    // 5. Read: 64-bit, wrap-corrected values.
    std::printf("workload %s: %llu cycles on the simulated %s\n", workload.name.c_str(),
                static_cast<unsigned long long>(workload.total_cycles()), hal.pmu().description.c_str());
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
