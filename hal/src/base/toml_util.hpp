// Shared TOML helpers for every loader in libpmchal (events, config, workloads): parsing with
// file:line:column errors, unknown-key checks and typed getters. TOML++ never leaves the
// library: loaders turn what they read into plain value types.
#pragma once

#include <pmc/error.hpp>
#include <pmc/input_file.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// "file:line:column" of a node or key (just "file" when the position is unknown).
std::string where(const toml::source_region& region);
std::string where(const toml::node& node);

[[noreturn]] void fail_at(const toml::source_region& region, errc code, std::string_view message);
[[noreturn]] void fail_at(const toml::node& node, errc code, std::string_view message);

// Parse errors become pmc::Error(parse) "file:line:column: description"; the file is read as
// read_input_file reads a file of that kind (a regular file within the kind's size limit).
toml::table parse_toml_file(const std::filesystem::path& file, InputKind kind);
toml::table parse_toml_string(std::string_view text, const std::string& name);

// Throws attribute "file:line:column: unknown key 'x' in <context> (expected one of: a, b)".
void check_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                std::string_view context);

// Typed getters: absent -> nullopt (or an error when required); present with the wrong type ->
// invalid_argument at the value's position ("'code' must be an integer, not a string").
std::optional<std::string> get_string(const toml::table& t, std::string_view key, bool required = false);
std::optional<std::int64_t> get_int(const toml::table& t, std::string_view key, bool required = false);
std::optional<bool> get_bool(const toml::table& t, std::string_view key, bool required = false);
std::optional<std::vector<std::string>> get_strings(const toml::table& t, std::string_view key,
                                                    bool required = false);
std::optional<std::vector<std::int64_t>> get_ints(const toml::table& t, std::string_view key,
                                                  bool required = false);
// Position of the value for key (for range errors after reading it); a missing key is the
// "missing required key" error at the table.
const toml::node& node_of(const toml::table& t, std::string_view key);
// Where the table itself starts (for "missing key" errors).
std::string where_table(const toml::table& t);

std::string_view type_name(toml::node_type type);

}  // namespace pmc::detail
