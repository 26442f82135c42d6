// pmc list --cpuid-dumps: the bundled CPUID dumps (share/pmchal/cpuid), by the names
// --cpuid-dump and the config key cpu take, with the CPU each one describes.
#include "cli.hpp"

#include <algorithm>

namespace pmc_cli {

int list_cpuid_dumps(const Options& o) {
  json rows = json::array();
  std::size_t width = 4;
  std::vector<std::pair<std::string, std::string>> table;
  for (const auto& file : pmc::bundled_data(pmc::DataKind::cpuid_dump)) {
    const std::string name = file.stem().string();
    std::string cpu;
    try {
      cpu = pmc::describe(pmc::load_cpu_file(file));
    } catch (const pmc::Error& e) {
      cpu = fmt::format("(unreadable: {})", e.what());
    }
    width = std::max(width, name.size());
    rows.push_back({{"name", name}, {"file", file.string()}, {"cpu", cpu}});
    table.emplace_back(name, std::move(cpu));
  }
  if (table.empty())
    throw pmc::Error(pmc::errc::not_found, fmt::format("no bundled CPUID dumps in {}", (pmc::default_paths().data / "cpuid").string()));
  if (o.json) return print("{}\n", json{{"cpuid_dumps", rows}}.dump(2)) ? 0 : 1;
  bool ok = print("{:<{}}  {}\n", "NAME", width, "CPU");
  for (const auto& [name, cpu] : table) ok = print("{:<{}}  {}\n", name, width, cpu) && ok;
  ok = print("\n{} bundled CPUID dumps: pmc probe --cpuid-dump NAME, or cpu = \"NAME\" in the config file.\n",
             table.size()) && ok;
  return ok ? 0 : 1;
}

}  // namespace pmc_cli
