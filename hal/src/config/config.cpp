#include "config.hpp"

#include "access_kind.hpp"
#include "bundled.hpp"
#include "nearest.hpp"
#include "root_safety.hpp"
#include "toml_util.hpp"
#include "environment.hpp"

#include <pmc/error.hpp>
#include <pmc/config.hpp>
#include <pmc/input_file.hpp>
#include <pmc/paths.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

namespace pmc {

namespace fs = std::filesystem;

namespace {

fs::path relative_to(const fs::path& base, const std::string& p) {
  fs::path path(p);
  if (path.is_absolute()) return path;
  return base / path;
}

}  // namespace

Config load_config(const fs::path& file) {
  // As root, a config others can write would let them choose the plugins root loads.
  if (auto why = detail::unsafe_for_root(file))
    throw Error(errc::permission, fmt::format("{}: not read: {}", file.string(), *why));
  return detail::parse_config(read_input_file(file, InputKind::config), file);
}

Config detail::parse_config(std::string_view text, const fs::path& file) {
  Config cfg;
  toml::table doc = detail::parse_toml_string(text, file.string());
  detail::check_keys(doc, {"backend", "access", "plugin_path", "events_path", "cpu", "regions"}, "the config file");
  fs::path base = fs::absolute(file).lexically_normal().parent_path();
  cfg.file = file;
  auto mark = [&](std::string_view key) { cfg.origin[std::string(key)].where = detail::where(detail::node_of(doc, key)); };

  if (auto backend = detail::get_string(doc, "backend")) {
    if (backend->empty()) detail::fail_at(detail::node_of(doc, "backend"), errc::invalid_argument,
                                          "'backend' must be \"auto\" or a backend name");
    cfg.backend = *backend;
    mark("backend");
  }
  if (auto access = detail::get_string(doc, "access")) {
    if (*access != "auto" && !parse_access(*access))
      detail::fail_at(detail::node_of(doc, "access"), errc::invalid_argument,
                      fmt::format("unknown access '{}' (expected auto, sim, perf or msr)", *access));
    cfg.access = *access;
    mark("access");
  }
  if (auto dirs = detail::get_strings(doc, "plugin_path")) {
    for (const auto& d : *dirs) cfg.plugin_path.push_back(relative_to(base, d));
    mark("plugin_path");
  }
  if (auto paths = detail::get_strings(doc, "events_path")) {
    const toml::array& items = *detail::node_of(doc, "events_path").as_array();
    for (std::size_t i = 0; i < paths->size(); ++i) {
      const fs::path p = relative_to(base, (*paths)[i]);
      std::error_code ec;
      if (!fs::exists(p, ec))
        detail::fail_at(items[i], errc::not_found,
                        fmt::format("'events_path' entry \"{}\": no such events file or directory ({})", (*paths)[i],
                                    p.string()));
      cfg.events_path.push_back(p);
    }
    mark("events_path");
  }
  if (auto cpu = detail::get_string(doc, "cpu")) {
    if (cpu->empty()) detail::fail_at(detail::node_of(doc, "cpu"), errc::invalid_argument,
                                      "'cpu' must be \"native\" or a CPUID dump file");
    // "native", a path (relative to this file), or a bare name of a bundled dump ("pentium-iii").
    std::error_code ec;
    bool bare_name = cpu->find('/') == std::string::npos && !fs::exists(base / *cpu, ec);
    cfg.cpu = *cpu == "native" || bare_name ? *cpu : relative_to(base, *cpu).string();
    const fs::path bundled = default_paths().data / "cpuid" / (*cpu + ".txt");
    if (*cpu != "native" && !fs::exists(bare_name ? bundled : fs::path(cfg.cpu), ec)) {
      const std::vector<std::string> near =
          bare_name ? detail::nearest_names(*cpu, detail::bundled_names(DataKind::cpuid_dump)) : std::vector<std::string>{};
      detail::fail_at(detail::node_of(doc, "cpu"), errc::not_found,
                      !bare_name ? fmt::format("'cpu' = \"{}\": no such CPUID dump file ({})", *cpu, cfg.cpu)
                      : near.empty()
                          ? fmt::format("'cpu' = \"{}\" is neither a CPUID dump file ({}) nor the name of a bundled one ({})",
                                        *cpu, (base / *cpu).string(), bundled.string())
                          : fmt::format("'cpu' = \"{}\" is neither a CPUID dump file ({}) nor the name of a bundled one; "
                                        "did you mean '{}'?",
                                        *cpu, (base / *cpu).string(), fmt::join(near, "', '")));
    }
    mark("cpu");
  }
  // [regions] (docs/regions.md): what region instrumentation counts, and where it writes.
  if (doc.contains("regions")) {
    const toml::table* regions = doc["regions"].as_table();
    if (!regions) detail::fail_at(detail::node_of(doc, "regions"), errc::invalid_argument, "'regions' must be a table");
    detail::check_keys(*regions, {"events", "output"}, "[regions]");
    if (auto events = detail::get_strings(*regions, "events")) {
      const toml::array& items = *detail::node_of(*regions, "events").as_array();
      for (std::size_t i = 0; i < events->size(); ++i)
        if ((*events)[i].empty())
          detail::fail_at(items[i], errc::invalid_argument, "[regions] events: an event string is empty");
      cfg.region_events = std::move(*events);
      cfg.origin["regions.events"].where = detail::where(detail::node_of(*regions, "events"));
    }
    if (auto output = detail::get_string(*regions, "output")) {
      if (output->empty())
        detail::fail_at(detail::node_of(*regions, "output"), errc::invalid_argument, "[regions] output: the file name is empty");
      cfg.region_output = relative_to(base, *output);
      cfg.origin["regions.output"].where = detail::where(detail::node_of(*regions, "output"));
    }
  }
  return cfg;
}

Config find_config(const std::optional<fs::path>& explicit_file) {
  // A name that exists but is no regular file (a named pipe, a directory) is load_config's error,
  // which says what it is.
  auto use = [](const fs::path& file, std::string found_by) {
    std::error_code ec;
    if (!fs::exists(file, ec))
      throw Error(errc::io, fmt::format("{}: config file not found (named by {})", file.string(), found_by));
    Config cfg = load_config(file);
    cfg.found_by = std::move(found_by);
    return cfg;
  };
  if (explicit_file) return use(*explicit_file, "--config");
  if (const char* env = detail::environment_nonempty("PMC_CONFIG")) return use(env, "$PMC_CONFIG");

  std::error_code ec;
  fs::path user;
  std::string user_name;
  if (const char* xdg = detail::environment_nonempty("XDG_CONFIG_HOME")) {
    user = fs::path(xdg) / "pmc" / "config.toml";
    user_name = "$XDG_CONFIG_HOME/pmc/config.toml";
  } else if (const char* home = detail::environment_nonempty("HOME")) {
    user = fs::path(home) / ".config" / "pmc" / "config.toml";
    user_name = "~/.config/pmc/config.toml";
  }
  if (!user.empty() && fs::exists(user, ec)) return use(user, user_name);
  const fs::path system("/etc/pmc/config.toml");
  if (fs::exists(system, ec)) return use(system, system.string());
  Config cfg;
  cfg.found_by = "built-in defaults";
  return cfg;
}

}  // namespace pmc
