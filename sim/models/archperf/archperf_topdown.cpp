// The archperf model's top-down part table (archperf_topdown.hpp), read once from topdown.toml as
// sim/CMakeLists.txt builds it into the model (kTopdownToml).
#include "archperf_topdown.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <string>
#include <string_view>
#include <vector>

namespace pmc::sim::archperf {

extern const std::string_view kTopdownToml;

namespace {

struct Row {
  unsigned family = 0, model = 0, core_type = 0;  // core_type 0: any
  TopdownPart part;
};

[[noreturn]] void bad(const toml::node& at, std::string_view what) {
  const toml::source_region& r = at.source();
  throw Error(errc::invalid_argument,
              fmt::format("topdown.toml:{}:{}: {}", r.begin.line, r.begin.column, what));
}

unsigned number(const toml::table& t, std::string_view key, bool required, unsigned fallback, unsigned max) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) bad(t, fmt::format("[[part]] needs '{}'", key));
    return fallback;
  }
  const auto v = n->value<std::int64_t>();
  if (!v || *v < 0 || *v > static_cast<std::int64_t>(max)) bad(*n, fmt::format("'{}' must be an integer 0-{}", key, max));
  return static_cast<unsigned>(*v);
}

std::vector<Row> read_rows() {
  toml::table doc;
  try {
    doc = toml::parse(kTopdownToml, std::string_view("topdown.toml"));
  } catch (const toml::parse_error& e) {
    throw Error(errc::invalid_argument, fmt::format("topdown.toml: {}", e.description()));
  }
  std::vector<Row> rows;
  const toml::array* parts = doc["part"].as_array();
  if (!parts) bad(doc, "no [[part]]");
  for (const toml::node& item : *parts) {
    const toml::table* t = item.as_table();
    if (!t) bad(item, "each part must be a table");
    Row base;
    base.family = number(*t, "family", true, 0, 0xFFFF);
    base.core_type = number(*t, "core_type", false, 0, 0xFF);
    base.part.level = number(*t, "level", true, 0, 2);
    base.part.width = number(*t, "width", true, 0, 64);
    if (base.part.level == 0 || base.part.width == 0) bad(*t, "'level' is 1 or 2 and 'width' at least 1");
    const toml::array* models = (*t)["models"].as_array();
    if (!models || models->empty()) bad(*t, "[[part]] needs 'models', a non-empty array");
    for (const toml::node& m : *models) {
      const auto v = m.value<std::int64_t>();
      if (!v || *v < 0 || *v > 0xFFFF) bad(m, "a model is an integer 0-0xFFFF");
      Row r = base;
      r.model = static_cast<unsigned>(*v);
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace

const TopdownPart* topdown_part(unsigned family, unsigned model, unsigned core_type) {
  static const std::vector<Row> rows = read_rows();
  for (const Row& r : rows)
    if (r.family == family && r.model == model && (r.core_type == 0 || r.core_type == core_type)) return &r.part;
  return nullptr;
}

}  // namespace pmc::sim::archperf
