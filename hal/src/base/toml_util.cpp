#include "toml_util.hpp"

#include <fmt/format.h>


namespace pmc::detail {

std::string where(const toml::source_region& region) {
  std::string file = region.path ? std::string(*region.path) : std::string("<input>");
  if (region.begin.line == 0) return file;
  return fmt::format("{}:{}:{}", file, region.begin.line, region.begin.column);
}

std::string where(const toml::node& node) { return where(node.source()); }

void fail_at(const toml::source_region& region, errc code, std::string_view message) {
  throw Error(code, fmt::format("{}: {}", where(region), message));
}

void fail_at(const toml::node& node, errc code, std::string_view message) {
  fail_at(node.source(), code, message);
}

toml::table parse_toml_string(std::string_view text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    fail_at(e.source(), errc::parse, e.description());
  }
}

toml::table parse_toml_file(const std::filesystem::path& file, InputKind kind) {
  return parse_toml_string(read_input_file(file, kind), file.string());
}

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

void check_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                std::string_view context) {
  for (const auto& [key, value] : table) {
    bool known = false;
    for (auto a : allowed) known = known || key.str() == a;
    if (known) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail_at(key.source(), errc::attribute,
            fmt::format("unknown key '{}' in {} (expected one of: {})", key.str(), context, list));
  }
}

std::string where_table(const toml::table& t) { return where(t.source()); }

namespace {
[[noreturn]] void missing(const toml::table& t, std::string_view key) {
  fail_at(t.source(), errc::invalid_argument, fmt::format("missing required key '{}'", key));
}
[[noreturn]] void wrong_type(const toml::node& n, std::string_view key, std::string_view want) {
  fail_at(n, errc::invalid_argument,
          fmt::format("'{}' must be {}, not {}", key, want, type_name(n.type())));
}
}  // namespace

const toml::node& node_of(const toml::table& t, std::string_view key) {
  const toml::node* n = t.get(key);
  if (!n) missing(t, key);
  return *n;
}

std::optional<std::string> get_string(const toml::table& t, std::string_view key, bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) missing(t, key);
    return std::nullopt;
  }
  if (!n->is_string()) wrong_type(*n, key, "a string");
  return n->as_string()->get();
}

std::optional<std::int64_t> get_int(const toml::table& t, std::string_view key, bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) missing(t, key);
    return std::nullopt;
  }
  if (!n->is_integer()) wrong_type(*n, key, "an integer");
  return n->as_integer()->get();
}

std::optional<bool> get_bool(const toml::table& t, std::string_view key, bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) missing(t, key);
    return std::nullopt;
  }
  if (!n->is_boolean()) wrong_type(*n, key, "true or false");
  return n->as_boolean()->get();
}

std::optional<std::vector<std::string>> get_strings(const toml::table& t, std::string_view key,
                                                    bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) missing(t, key);
    return std::nullopt;
  }
  if (!n->is_array()) wrong_type(*n, key, "an array of strings");
  std::vector<std::string> out;
  for (const auto& item : *n->as_array()) {
    if (!item.is_string()) wrong_type(item, key, "an array of strings");
    out.push_back(item.as_string()->get());
  }
  return out;
}

std::optional<std::vector<std::int64_t>> get_ints(const toml::table& t, std::string_view key,
                                                  bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) missing(t, key);
    return std::nullopt;
  }
  if (!n->is_array()) wrong_type(*n, key, "an array of integers");
  std::vector<std::int64_t> out;
  for (const auto& item : *n->as_array()) {
    if (!item.is_integer()) wrong_type(item, key, "an array of integers");
    out.push_back(item.as_integer()->get());
  }
  return out;
}

}  // namespace pmc::detail
