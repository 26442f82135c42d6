#include <pmc/paths.hpp>

#include "bundled.hpp"
#include "nearest.hpp"
#include "root_safety.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

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

namespace {

// The library finds its plugins and data relative to its own file, so an installed tree can
// be moved anywhere, and the build tree (laid out the same way) works before installing.
Paths paths_of(const std::filesystem::path& self) {
  namespace fs = std::filesystem;
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
const Paths g_paths_at_load = paths_of(g_self_at_load);  // worked out once: Hal::open asks often

}  // namespace

Paths default_paths() {
  // Empty only when called by another library's static initializer before this one's ran.
  return g_paths_at_load.plugins.empty() ? paths_of(g_self_at_load.empty() ? self_file() : g_self_at_load)
                                         : g_paths_at_load;
}

const std::filesystem::path& detail::library_file() {
  if (!g_self_at_load.empty()) return g_self_at_load;
  thread_local std::filesystem::path early;  // before this library's initializers ran
  early = self_file();
  return early;
}

const Paths& detail::paths() {
  if (!g_paths_at_load.plugins.empty()) return g_paths_at_load;
  thread_local Paths early;  // before this library's initializers ran
  early = default_paths();
  return early;
}

std::optional<std::vector<std::string>> detail::list_directory(const std::string& dir, std::error_code& error) {
  error.clear();
  std::optional<std::vector<std::string>>* memo = detail::scoped_listing(dir);
  if (memo && *memo) return **memo;
  // getdents64 into a buffer on the stack: opendir's 32 KiB buffer on the heap was most of what
  // listing one plugin directory cost a freshly started process (its pages faulted in).
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error.assign(errno, std::generic_category());
    return std::nullopt;
  }
  std::vector<std::string> names;
  alignas(struct dirent64) char buffer[4096];
  for (;;) {
    const ssize_t n = ::getdents64(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      error.assign(errno, std::generic_category());
      break;
    }
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buffer + at);
      const std::string_view name(e->d_name);
      if (name != "." && name != "..") names.emplace_back(name);
      at += e->d_reclen;
    }
  }
  ::close(fd);
  if (error) return std::nullopt;
  std::sort(names.begin(), names.end());
  if (memo) *memo = names;
  return names;
}

}  // namespace pmc

namespace pmc {

namespace {
const char* data_dir(DataKind kind) { return kind == DataKind::cpuid_dump ? "cpuid" : "workloads"; }
const char* data_ext(DataKind kind) { return kind == DataKind::cpuid_dump ? ".txt" : ".toml"; }
const char* data_what(DataKind kind) { return kind == DataKind::cpuid_dump ? "CPUID dump" : "workload"; }

}  // namespace

std::vector<std::filesystem::path> bundled_data(DataKind kind) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(default_paths().data / data_dir(kind), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == data_ext(kind) && it->is_regular_file(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> detail::bundled_names(DataKind kind) {
  std::vector<std::string> out;
  for (const std::filesystem::path& file : bundled_data(kind)) out.push_back(file.stem().string());
  return out;
}

std::filesystem::path resolve_data(std::string_view given, DataKind kind) {
  namespace fs = std::filesystem;
  const fs::path as_given{std::string(given)};
  std::error_code ec;
  if (given.empty() || given.find('/') != std::string_view::npos || fs::exists(as_given, ec)) return as_given;
  fs::path bundled = default_paths().data / data_dir(kind) / (std::string(given) + data_ext(kind));
  if (fs::exists(bundled, ec)) return bundled;
  // A file name ("dump.txt": bundled names have no '.'): the loader reports it missing.
  if (given.find('.') != std::string_view::npos) return as_given;
  const std::vector<std::string> near = detail::nearest_names(given, detail::bundled_names(kind));
  if (near.empty())
    throw Error(errc::not_found, fmt::format("no bundled {} '{}' and no file of that name", data_what(kind), given));
  throw Error(errc::not_found, fmt::format("no bundled {} '{}'; did you mean '{}'?", data_what(kind), given,
                                           fmt::join(near, "', '")));
}

}  // namespace pmc
