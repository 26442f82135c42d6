#include <pmc/paths.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

namespace pmc {

namespace {

// This code's file, absolute. The dynamic loader's name for it is relative when the program was
// started by a relative path (a program linking the core statically) or the library was found
// through a relative LD_LIBRARY_PATH; made absolute after a chdir(), it would point into the new
// current directory, and plugins would load from wherever the caller went. So it is resolved
// once, when the library (or the program) is loaded.
std::filesystem::path self_file() {
  std::error_code ec;
  std::filesystem::path self = boost::dll::this_line_location(ec);
  std::filesystem::path absolute = std::filesystem::absolute(self, ec);
  return (ec ? self : absolute).lexically_normal();
}
const std::filesystem::path g_self_at_load = self_file();

}  // namespace

// The library finds its plugins and data relative to its own file, so an installed tree can
// be moved anywhere, and the build tree (laid out the same way) works before installing.
Paths default_paths() {
  namespace fs = std::filesystem;
  // Empty only when called by another library's static initializer before this one's ran.
  const fs::path self = g_self_at_load.empty() ? self_file() : g_self_at_load;
  fs::path libdir = self.parent_path();
  fs::path prefix = libdir;
  const fs::path lib_subdir(PMC_LIB_SUBDIR);  // "lib" or "lib/x86_64-linux-gnu"
  for (auto it = lib_subdir.begin(); it != lib_subdir.end(); ++it) prefix = prefix.parent_path();
  Paths p;
  p.plugins = prefix / PMC_PLUGIN_SUBDIR;
  p.data = prefix / PMC_DATA_SUBDIR;
  p.events = p.data / "events";
  return p;
}

}  // namespace pmc

namespace pmc {

std::filesystem::path resolve_data(std::string_view given, DataKind kind) {
  namespace fs = std::filesystem;
  const fs::path as_given{std::string(given)};
  std::error_code ec;
  if (given.empty() || given.find('/') != std::string_view::npos || fs::exists(as_given, ec)) return as_given;
  const char* dir = kind == DataKind::cpuid_dump ? "cpuid" : "workloads";
  const char* ext = kind == DataKind::cpuid_dump ? ".txt" : ".toml";
  fs::path bundled = default_paths().data / dir / (std::string(given) + ext);
  if (fs::exists(bundled, ec)) return bundled;
  return as_given;  // the loader reports the missing file by the name the user gave
}

}  // namespace pmc
