// What Hal::plugins() reports, kept in the parse cache: listing the plugins loads every library
// (dlopen runs its constructors, a backend's factory runs), which a program that only lists them
// (pmc probe, pmc list) pays at each start. A record keyed by every library's file (path, size,
// times, inode, device) and this pmchal's plugin ABI holds the statuses the last listing gave
// when none failed; while no library has changed, they are reported without loading any.
#include "plugins.hpp"

#include "catalog_cache.hpp"
#include "environment.hpp"

#include <fmt/format.h>

#include <exception>

namespace pmc::detail {

namespace {

std::string encode(const std::vector<PluginStatus>& statuses) {
  Writer w;
  w.u32(static_cast<std::uint32_t>(statuses.size()));
  for (const PluginStatus& s : statuses) {
    w.str(s.file.native());
    w.u32(static_cast<std::uint32_t>(s.kind));
    w.str(s.name);
    w.str(s.description);
  }
  return std::move(w.out);
}

std::optional<std::vector<PluginStatus>> decode(const std::string& bytes) {
  try {
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<PluginStatus> out(r.count());
    for (PluginStatus& s : out) {
      s.file = r.str();
      const std::uint32_t kind = r.u32();
      if (kind > static_cast<std::uint32_t>(PluginKind::unknown)) return std::nullopt;
      s.kind = static_cast<PluginKind>(kind);
      s.name = r.str();
      s.description = r.str();
    }
    if (r.p != r.end) return std::nullopt;
    return out;
  } catch (const std::exception&) {  // a damaged record: load the libraries
    return std::nullopt;
  }
}

}  // namespace

std::string plugin_statuses_key(const std::vector<PluginLoad>& loads) {
  std::vector<std::filesystem::path> files;
  for (const PluginLoad& p : loads) {
    // A directory that could not be listed is reported each time, from the listing.
    if (!p.deferred && !p.deferred_backend && !p.backend && !p.model) return {};
    files.push_back(p.status.file);
  }
  if (debug_topic("plugins")) return {};  // PMC_DEBUG=plugins: the libraries are loaded, and traced
  return ParseCache::key(fmt::format("pmc-plugin-statuses 1 abi {}.{}", kAbiMajor, kAbiMinor), files);
}

std::optional<std::vector<PluginStatus>> cached_plugin_statuses(const std::string& key) {
  if (key.empty()) return std::nullopt;
  const auto bytes = ParseCache::load(key);
  return bytes ? decode(*bytes) : std::nullopt;
}

void store_plugin_statuses(const std::string& key, const std::vector<PluginStatus>& statuses) {
  if (key.empty()) return;
  for (const PluginStatus& s : statuses)
    if (!s.error.empty()) return;  // a failure is reported afresh each time
  ParseCache::store(key, encode(statuses));
}

}  // namespace pmc::detail
