#include <pmc/hal.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

namespace pmc {

// The library finds its plugins and data relative to its own file, so an installed tree can
// be moved anywhere, and the build tree (laid out the same way) works before installing.
Paths default_paths() {
  namespace fs = std::filesystem;
  fs::path libdir = boost::dll::this_line_location().lexically_normal().parent_path();
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
