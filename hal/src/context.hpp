// What a Hal shares with the sessions it creates: the loaded backend (which keeps its library
// loaded), the CPU, the PMU geometry and the catalog. Sessions hold a shared_ptr to it, so a
// session may outlive the Hal object that created it.
#pragma once

#include <pmc/backend.hpp>
#include <pmc/cpu.hpp>
#include <pmc/event.hpp>

#include <boost/dll/shared_library.hpp>

#include <memory>
#include <string>

namespace pmc::detail {

struct LoadedBackend {
  // Declared first so it is destroyed last: the backend's code lives in the library.
  std::shared_ptr<boost::dll::shared_library> library;
  std::unique_ptr<Backend> backend;
  std::string file;
  LoadedBackend() = default;
  LoadedBackend(const LoadedBackend&) = delete;
  LoadedBackend& operator=(const LoadedBackend&) = delete;
  ~LoadedBackend() { backend.reset(); }
};

struct Context {
  std::shared_ptr<LoadedBackend> loaded;
  CpuInfo cpu;
  PmuInfo pmu;
  EventCatalog catalog;
  std::string access;  // "sim" (perf and msr: see issue 5)
  [[nodiscard]] const Backend& backend() const { return *loaded->backend; }
};

}  // namespace pmc::detail
