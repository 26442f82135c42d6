// The machine constants of vendor metric formulas (pmc/metrics.hpp metric_constants,
// docs/metrics.md "Constants"): SMT, threads per core, sockets, cores, CPUs, the TSC's rate.
#include <pmc/hal.hpp>
#include <pmc/hal_events.hpp>
#include <pmc/metrics.hpp>

#include "cpu_list.hpp"
#include "tsc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace pmc {

namespace {

// Every constant a formula may name, in the order docs/metrics.md lists them.
constexpr const char* kNames[] = {"smt_on",      "threads_per_core", "tsc_freq",       "num_cpus",
                                  "num_sockets", "cores_per_socket", "chas_per_socket"};

struct Topology {
  std::optional<double> threads_per_core, num_cpus, num_sockets, cores_per_socket;
  std::optional<double> smt_on;
  std::string source;
};

// A CPUID dump: leaf 0BH (or 1FH) level types 1 (SMT) and 2 (core) give the logical processors
// per core and per package [SDM vol. 2A, CPUID leaf 0BH: EBX[15:0] at each level, ECX[15:8] the
// level type]; without them leaf 1 EBX[23:16] (logical processors per package, with EDX[28]
// HTT) over leaf 4 EAX[31:26] + 1 (cores per package). AMD: 8000001EH EBX[15:8] + 1 threads per
// compute unit. A dump is one package.
Topology from_cpuid(const CpuInfo& cpu) {
  Topology t;
  t.num_sockets = 1;
  std::optional<unsigned> per_core, per_package;
  for (std::uint32_t leaf : {0x1Fu, 0x0Bu}) {
    if (per_core) break;
    for (std::uint32_t sub = 0; sub < 8; ++sub) {
      const auto r = cpu.raw.get(leaf, sub);
      if (!r) break;
      const unsigned type = (r->ecx >> 8) & 0xFF;
      if (type == 0) break;
      if (type == 1) per_core = r->ebx & 0xFFFF;
      per_package = r->ebx & 0xFFFF;  // the last level reached: the package
    }
    if (per_core) t.source = fmt::format("CPUID {:02X}H", leaf);
  }
  if (!per_core && cpu.is_amd()) {
    if (const auto r = cpu.raw.get(0x8000001E)) {
      per_core = ((r->ebx >> 8) & 0xFF) + 1;
      t.source = "CPUID 8000001EH EBX[15:8]";
    }
  }
  if (!per_core) {
    const auto l1 = cpu.raw.get(1);
    const auto l4 = cpu.raw.get(4, 0);
    const unsigned logical = l1 && (l1->edx >> 28 & 1) ? std::max(1u, (l1->ebx >> 16) & 0xFF) : 1;
    const unsigned cores = l4 && (l4->eax & 0x1F) ? ((l4->eax >> 26) & 0x3F) + 1 : 0;
    per_package = logical;
    per_core = cores && logical >= cores ? logical / cores : 1;
    t.source = cores ? "CPUID 1 EBX[23:16] over CPUID 4 EAX[31:26]" : "CPUID 1 EBX[23:16]";
  }
  t.threads_per_core = *per_core ? *per_core : 1;
  t.smt_on = *t.threads_per_core > 1 ? 1.0 : 0.0;
  if (per_package && *per_package >= *t.threads_per_core) {
    t.num_cpus = *per_package;
    t.cores_per_socket = *per_package / *t.threads_per_core;
  }
  return t;
}

// This machine: the kernel's topology in sysfs (which knows what the BIOS and the OS turned off).
Topology from_sysfs() {
  Topology t;
  const std::filesystem::path cpu_dir = "/sys/devices/system/cpu";
  const std::vector<int> online = detail::online_cpus();
  t.num_cpus = static_cast<double>(online.size());
  std::set<std::string> packages;
  std::set<std::pair<std::string, std::string>> cores;
  for (int c : online) {
    const auto topo = cpu_dir / fmt::format("cpu{}", c) / "topology";
    const auto pkg = detail::read_first_line(topo / "physical_package_id");
    const auto core = detail::read_first_line(topo / "core_id");
    if (!pkg || !core) continue;
    packages.insert(*pkg);
    cores.insert({*pkg, *core});
  }
  t.source = "sysfs topology";
  if (!packages.empty()) {
    t.num_sockets = static_cast<double>(packages.size());
    t.cores_per_socket = static_cast<double>(cores.size()) / static_cast<double>(packages.size());
    t.threads_per_core = static_cast<double>(online.size()) / static_cast<double>(cores.size());
  }
  if (const auto active = detail::read_first_line(cpu_dir / "smt" / "active"))
    t.smt_on = *active == "1" ? 1.0 : 0.0;
  else if (t.threads_per_core)
    t.smt_on = *t.threads_per_core > 1 ? 1.0 : 0.0;
  return t;
}

}  // namespace

const MetricConstant* MetricConstants::find(std::string_view name) const {
  for (const auto& c : values)
    if (c.name == name) return &c;
  return nullptr;
}

const std::vector<std::string>& metric_builtin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"duration_time"};
    n.insert(n.end(), std::begin(kNames), std::end(kNames));
    return n;
  }();
  return names;
}

MetricConstants metric_constants(const Hal& hal) {
  const CpuInfo& cpu = hal.cpu();
  const Topology t = cpu.native() ? from_sysfs() : from_cpuid(cpu);
  const std::string where = cpu.native() ? t.source : fmt::format("{} of {}", t.source, cpu.source);
  MetricConstants out;
  auto put = [&](const char* name, std::optional<double> v, const std::string& source, const std::string& missing) {
    out.values.push_back({name, v, v ? source : missing});
  };
  put("smt_on", t.smt_on, where, "the SMT state is not known");
  put("threads_per_core", t.threads_per_core, where, "the threads per core are not known");
  std::optional<double> tsc;
  std::string tsc_source = "the TSC's rate is not known";
  if (cpu.native()) {
    const TscFrequency f = tsc_frequency();
    if (f.hz > 0) tsc = f.hz, tsc_source = f.method;
    else tsc_source = "this machine has no usable TSC";
  } else if (const auto f = detail::tsc_frequency_from_cpuid(cpu.raw)) {
    tsc = f->hz, tsc_source = fmt::format("{} of {}", f->method, cpu.source);
  } else {
    tsc_source = fmt::format("{} does not state the TSC's rate (CPUID 15H, 16H)", cpu.source);
  }
  put("tsc_freq", tsc, tsc_source, tsc_source);
  put("num_cpus", t.num_cpus, where, "the number of CPUs is not known");
  put("num_sockets", t.num_sockets, where, "the number of sockets is not known");
  put("cores_per_socket", t.cores_per_socket, where, "the cores per socket are not known");
  put("chas_per_socket", std::nullopt, "",
      "the uncore's CHA count, which pmchal does not read (it counts core PMUs only)");
  return out;
}

}  // namespace pmc
