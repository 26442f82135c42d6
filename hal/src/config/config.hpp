// The config loader's text entry point (internal): load_config() reads the file (after the
// root-safety check) and parses it here; the fuzz target feeds text directly.
#pragma once

#include <pmc/config.hpp>

#include <filesystem>
#include <string_view>

namespace pmc::detail {

// Parses config text as if read from `file`: errors name file:line:column, and relative paths
// resolve against the file's directory (which is checked for the files a config names).
Config parse_config(std::string_view text, const std::filesystem::path& file);

}  // namespace pmc::detail
