// pmc probe: what this CPU is, which backend drives it and why, its PMU, the plugins and models
// loaded, and where each setting came from.
#include "cli.hpp"

namespace pmc_cli {

namespace {

json config_json(const pmc::Config& cfg) {
  json origin = json::object();
  for (const auto& [key, o] : cfg.origin) origin[key] = o.where;
  return json{{"file", cfg.file ? json(cfg.file->string()) : json(nullptr)},
              {"found_by", cfg.found_by},
              {"backend", cfg.backend},
              {"access", cfg.access},
              {"cpu", cfg.cpu},
              {"origin", origin}};
}

}  // namespace

int cmd_probe(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  const pmc::CpuInfo& cpu = hal.cpu();
  const pmc::BackendInfo* backend = hal.backend();
  if (o.json) {
    json counters = json::array();
    if (backend)
      for (const auto& c : hal.pmu().counters)
        counters.push_back({{"kind", kind_name(c.kind)}, {"index", c.index}, {"width", c.width}});
    json candidates = json::array();
    for (const auto& c : hal.candidates())
      candidates.push_back({{"backend", c.backend}, {"score", c.match.score}, {"reason", c.match.reason}});
    json plugins = json::array();
    for (const auto& p : hal.plugins())
      plugins.push_back({{"file", p.file.string()},
                         {"kind", p.kind == pmc::PluginKind::backend ? "backend"
                                  : p.kind == pmc::PluginKind::model ? "model"
                                                                      : "unknown"},
                         {"name", p.name.empty() ? json(nullptr) : json(p.name)},
                         {"error", p.error.empty() ? json(nullptr) : json(p.error)}});
    json out{{"cpu",
              {{"vendor", cpu.vendor},
               {"family", cpu.family},
               {"model", cpu.model},
               {"stepping", cpu.stepping},
               {"brand", cpu.brand},
               {"source", cpu.source},
               {"isa", cpu.isa == pmc::Isa::x86 ? "x86" : cpu.isa == pmc::Isa::aarch64 ? "aarch64" : "other"},
               {"arch_perfmon_version", cpu.isa == pmc::Isa::x86 ? json(cpu.arch.version) : json(nullptr)},
               {"midr_el1", cpu.isa == pmc::Isa::aarch64 ? json(cpu.arm.midr) : json(nullptr)},
               {"arm_pmu_version", cpu.isa == pmc::Isa::aarch64 ? json(cpu.arm.pmu_version) : json(nullptr)},
               {"arm_pmu_counters", cpu.isa == pmc::Isa::aarch64 ? json(cpu.arm.pmu_counters) : json(nullptr)}}},
             {"backend", backend ? json(backend->name) : json(nullptr)},
             {"reason", hal.why()},
             {"access", backend ? json(hal.access()) : json(nullptr)},
             {"access_reason", hal.access_reason()},
             {"pmu", backend ? json{{"description", hal.pmu().description},
                                    {"counters", counters},
                                    {"device_model", hal.pmu().device_model},
                                    {"data", backend->data.string()},
                                    {"cpu_catalogs", backend->cpu_catalogs},
                                    {"profiling", backend->profiles}}
                             : json(nullptr)},
             {"candidates", candidates},
             {"plugins", plugins},
             {"config", config_json(hal.config())}};
    print("{}\n", out.dump(2));
    return 0;
  }
  print("CPU:        {}\n", pmc::describe(cpu));
  if (cpu.isa == pmc::Isa::x86)
    print("            from {}; CPUID.0AH version {}\n", cpu.source, cpu.arch.version);
  else if (cpu.isa == pmc::Isa::aarch64)
    print("            from {}; MIDR_EL1 {:#010x}, PMUv3 version {}, {} event counters{}\n", cpu.source, cpu.arm.midr,
          cpu.arm.pmu_version, cpu.arm.pmu_counters, cpu.arm.pmu_inferred ? " (inferred: Linux hides the registers)" : "");
  else
    print("            from {}\n", cpu.source);
  print("Backend:    {}\n", backend ? backend->name : std::string("none"));
  print("            {}\n", hal.why());
  if (backend) {
    const auto& pmu = hal.pmu();
    print("PMU:        {}\n", pmu.description);
    std::string counters;
    for (const auto& c : pmu.counters)
      counters += fmt::format("{}{} {} ({} bits)", counters.empty() ? "" : ", ", kind_name(c.kind), c.index, c.width);
    print("Counters:   {}\n", counters);
    print("Model:      {} (the simulated PMU, a model plugin); data {}\n",
          pmu.device_model.empty() ? std::string("none") : pmu.device_model, backend->data.string());
    if (!backend->cpu_catalogs.empty()) print("CPU events: {}\n", fmt::format("{}", fmt::join(backend->cpu_catalogs, "; ")));
    print("Profiling:  {}\n", backend->profiles
                                  ? "yes: samples execution levels and PCs at counter interrupts (pmc profile)"
                                  : "no: its driver does not sample at counter interrupts");
  }
  print("Access:     {}\n", backend ? hal.access() : std::string("none"));
  print("            {}\n", hal.access_reason());
  print("Candidates:\n");
  for (const auto& c : hal.candidates())
    print("  {:<16} score {:>3}  {}\n", c.backend, c.match.score, c.match.reason);
  print("Plugins:\n");
  for (const auto& p : hal.plugins()) {
    if (!p.error.empty()) print("  {:<24} {}\n", "(failed)", p.error);
    else if (p.kind == pmc::PluginKind::backend) print("  backend {:<16} {}\n", p.name, p.file.string());
  }
  print("Models:\n");
  for (const auto& p : hal.plugins())
    if (p.error.empty() && p.kind == pmc::PluginKind::model) print("  model   {:<16} {}\n", p.name, p.file.string());
  const auto& cfg = hal.config();
  print("Config:     {}{}\n", cfg.found_by, cfg.file ? " " + cfg.file->string() : std::string());
  for (const auto& key : {"backend", "access", "cpu"}) {
    auto it = cfg.origin.find(key);
    print("  {:<10} {:<24} from {}\n", key,
               std::string(key) == "backend" ? cfg.backend : std::string(key) == "access" ? cfg.access : cfg.cpu,
               it == cfg.origin.end() ? "default" : it->second.where);
  }
  return 0;
}

}  // namespace pmc_cli
