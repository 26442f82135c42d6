// Building a simulated device: the model registry's lookup of a model by name, then the model
// plugin's factory (Context::make_device, hal/src/access/context.hpp, asks for the model its
// backend's PMU names).
#include "plugins.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <array>

namespace pmc::detail {

DeviceHandle ModelRegistry::make_device(const std::string& name, const std::string& pmu_name,
                                        const CpuInfo& cpu) const {
  if (name.empty())
    throw Error(errc::not_supported, fmt::format("backend '{}' names no device model ([pmu] model in its data file), so "
                                                 "its PMU cannot be simulated",
                                                 pmu_name));
  std::shared_ptr<LoadedModel> model;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    model = find_model(name);
    const std::string conventional = "lib" + name + "-model.so";
    for (std::size_t i = 0; !model && i < deferred.size(); ++i)
      if (deferred[i].filename() == conventional) {
        load_deferred_at(i);
        model = find_model(name);
        break;
      }
  }
  if (!model) {
    load_deferred();
    std::lock_guard<std::mutex> lock(mutex_);
    model = find_model(name);
  }
  if (!model) {
    std::string where;
    for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d.string();
    std::string installed;
    for (const auto& m : models) installed += (installed.empty() ? "" : ", ") + m->name;
    std::string why_broken;
    for (const auto& b : broken) why_broken += "; " + b.error;
    throw Error(errc::not_found,
                fmt::format("device model '{}' (the simulated {} PMU) is not installed: no model plugin in {} "
                            "provides it (models installed: {}){}",
                            name, pmu_name, where.empty() ? std::string("the plugin directories") : where,
                            installed.empty() ? std::string("none") : installed, why_broken));
  }
  std::array<char, 512> error{};
  DeviceHandle h;
  h.model = model;
  try {
    h.device.reset(model->descriptor->create(&cpu, error.data(), error.size()));
  } catch (...) {  // a factory must not throw
    throw Error(errc::plugin, fmt::format("{}: the factory of device model '{}' threw", model->file, name));
  }
  error.back() = '\0';
  if (!h.device)
    throw Error(errc::not_supported, fmt::format("device model '{}' cannot simulate {}: {}", name, describe(cpu),
                                                 error[0] ? error.data() : "its factory gave no reason"));
  return h;
}

}  // namespace pmc::detail
