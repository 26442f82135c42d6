// What the plugin tests (test_plugins.cpp, test_plugins_hostile.cpp) share: the test plugins
// tests/plugins/CMakeLists.txt builds, one per directory under PMC_TEST_PLUGIN_DIR, the P6 CPUID
// dump the Hals open on, and how the loader names an ABI version.
#pragma once

#include <filesystem>
#include <string>

namespace plugins_test {

namespace fs = std::filesystem;

inline const fs::path kPlugins = PMC_TEST_PLUGIN_DIR;

inline fs::path case_file(const std::string& name) { return kPlugins / name / ("lib" + name + ".so"); }

// The P6 CPUID dump: data/cpuid/pentium-iii.txt, else any dump of the tests.
inline fs::path p3_dump() {
  fs::path p = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-iii.txt";
  if (fs::exists(p)) return p;
  for (const auto& e : fs::directory_iterator(fs::path(PMC_TEST_DATA) / "cpuid")) return e.path();
  return p;
}

// "ABI 2.0", "ABI 3.0": how the loader names an ABI version.
inline std::string abi_text(unsigned major, unsigned minor) {
  return "ABI " + std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace plugins_test
