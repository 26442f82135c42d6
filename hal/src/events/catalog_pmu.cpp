// The PMU's shape as an events file declares it (docs/event-format.md): [pmu] with its
// [[pmu.counters]] and [[pmu.registers]], and the [[probe]] rules that tell which CPUs it is.
#include "catalog_loader.hpp"
#include "toml_util.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace pmc::detail {

// "5", "0-8" or [5, "7-8"]: a list of inclusive ranges (probe rules' family, model, stepping).
std::vector<ValueRange> read_ranges(const toml::table& t, std::string_view key) {
  std::vector<ValueRange> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  auto one = [&](const toml::node& item) {
    if (const auto* i = item.as_integer()) {
      if (i->get() < 0 || i->get() > 0xFFFF)
        fail_at(item, errc::attribute_value, fmt::format("'{}' {} is out of range 0-65535", key, i->get()));
      const auto v = static_cast<unsigned>(i->get());
      out.push_back({v, v});
      return;
    }
    if (const auto* str = item.as_string()) {
      const std::string& text = str->get();
      auto number = [&](std::string_view part) {
        unsigned v = 0;
        int base = 10;
        if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
          part.remove_prefix(2);
          base = 16;
        }
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
        if (part.empty() || ec != std::errc() || p != part.data() + part.size())
          fail_at(item, errc::invalid_argument,
                          fmt::format("'{}' \"{}\" must be a number or \"LOW-HIGH\"", key, text));
        return v;
      };
      const auto dash = text.find('-');
      const unsigned low = number(std::string_view(text).substr(0, dash));
      const unsigned high = dash == std::string::npos ? low : number(std::string_view(text).substr(dash + 1));
      if (high < low) fail_at(item, errc::invalid_argument, fmt::format("'{}' \"{}\" is an empty range", key, text));
      out.push_back({low, high});
      return;
    }
    fail_at(item, errc::invalid_argument,
                    fmt::format("'{}' must be an integer, a \"LOW-HIGH\" string or an array of them", key));
  };
  if (const auto* arr = n->as_array()) {
    if (arr->empty()) fail_at(*n, errc::invalid_argument, fmt::format("'{}' must not be empty", key));
    for (const auto& item : *arr) one(item);
  } else {
    one(*n);
  }
  return out;
}

namespace {

// "LEAF[:SUBLEAF].REG.BITS": "1.edx.23", "0xa.eax.0-7", "0x80000001.ecx.23", "7:1.eax.8".
CpuidField parse_cpuid_field(const toml::node& item) {
  auto bad = [&]() {
    fail_at(item, errc::invalid_argument,
                    "a CPUID field is \"LEAF[:SUBLEAF].REG.BITS\" such as \"1.edx.23\" or \"0xa.eax.0-7\"");
  };
  if (!item.is_string()) bad();
  const std::string text = item.as_string()->get();
  CpuidField f;
  f.text = text;
  const auto dot1 = text.find('.');
  const auto dot2 = dot1 == std::string::npos ? std::string::npos : text.find('.', dot1 + 1);
  if (dot2 == std::string::npos) bad();
  auto number = [&](std::string_view part) {
    std::uint32_t v = 0;
    int base = 10;
    if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
      part.remove_prefix(2);
      base = 16;
    }
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size()) bad();
    return v;
  };
  std::string_view leaf = std::string_view(text).substr(0, dot1);
  if (auto colon = leaf.find(':'); colon != std::string_view::npos) {
    f.subleaf = number(leaf.substr(colon + 1));
    leaf = leaf.substr(0, colon);
  }
  f.leaf = number(leaf);
  const std::string reg = text.substr(dot1 + 1, dot2 - dot1 - 1);
  static constexpr const char* kRegs[] = {"eax", "ebx", "ecx", "edx"};
  bool found = false;
  for (unsigned r = 0; r < 4; ++r)
    if (reg == kRegs[r]) {
      f.reg = r;
      found = true;
    }
  if (!found) bad();
  BitField bits;
  try {
    bits = parse_bit_range(std::string_view(text).substr(dot2 + 1));
  } catch (const Error&) {
    bad();
  }
  if (bits.count != 1 || bits.ranges[0].low + bits.ranges[0].width > 32) bad();
  f.low = bits.ranges[0].low;
  f.width = bits.ranges[0].width;
  return f;
}

std::uint32_t read_u32(const toml::table& t, std::string_view key, std::uint32_t fallback, bool required = false) {
  auto v = get_int(t, key, required);
  if (!v) return fallback;
  if (*v < 0 || *v > 0xFFFFFFFFll)
    fail_at(node_of(t, key), errc::attribute_value,
                    fmt::format("'{}' {} is out of range 0-0xFFFFFFFF", key, *v));
  return static_cast<std::uint32_t>(*v);
}

unsigned read_small(const toml::table& t, std::string_view key, unsigned fallback, unsigned max, bool required = false) {
  auto v = get_int(t, key, required);
  if (!v) return fallback;
  if (*v < 0 || *v > max)
    fail_at(node_of(t, key), errc::attribute_value,
                    fmt::format("'{}' {} is out of range 0-{}", key, *v, max));
  return static_cast<unsigned>(*v);
}

}  // namespace

// [pmu], [[pmu.counters]], [[pmu.registers]]: a later file's keys replace the earlier ones.
void CatalogLoader::read_pmu(EventCatalog& cat, const toml::node& node) {
  if (!node.is_table()) fail_at(node, errc::invalid_argument, "'pmu' must be a table");
  const auto& t = *node.as_table();
  check_keys(t, {"description", "model", "score", "reserved", "driver_fields", "merge_event", "unmatched", "counters",
                 "registers"},
             "[pmu]");
  PmuDescription& p = cat.pmu_;
  if (auto d = get_string(t, "description")) p.description = *d;
  if (auto m = get_string(t, "model")) p.model = *m;
  if (auto u = get_string(t, "unmatched")) p.unmatched = *u;
  if (t.get("score")) p.score = static_cast<int>(read_small(t, "score", 1, 1000));
  if (auto reserved = get_strings(t, "reserved")) {
    const auto& arr = *t.get("reserved")->as_array();
    p.reserved = 0;
    for (std::size_t i = 0; i < reserved->size(); ++i) {
      try {
        p.reserved |= parse_bit_range((*reserved)[i]).mask();
      } catch (const Error& e) {
        fail_at(arr[i], errc::invalid_argument, e.what());
      }
    }
  }
  if (auto fields = get_strings(t, "driver_fields")) {
    const auto& arr = *t.get("driver_fields")->as_array();
    for (std::size_t i = 0; i < fields->size(); ++i)
      if (!cat.format_.field((*fields)[i]))
        fail_at(arr[i], errc::not_found, fmt::format("driver field '{}' is not in [format]", (*fields)[i]));
    p.driver_fields = *fields;
  }
  if (t.get("merge_event")) p.merge_event = read_unsigned(t, "merge_event", cat.format_.field("event"), "merge event");
  if (const toml::node* c = t.get("counters")) {
    const toml::array* arr = c->as_array();
    if (!arr || !arr->is_array_of_tables() || arr->empty())
      fail_at(*c, errc::invalid_argument, "'pmu.counters' must be an array of tables ([[pmu.counters]])");
    p.counters.clear();
    for (const auto& item : *arr) {
      const auto& g = *item.as_table();
      check_keys(g, {"kind", "first", "count", "width", "control", "control_stride", "counter", "counter_stride",
                     "control_shift", "control_shift_stride", "control_bits", "rdpmc", "cpus"},
                 "[[pmu.counters]]");
      CounterGroup group;
      const std::string kind = get_string(g, "kind").value_or("general");
      if (kind == "general") group.kind = CounterKind::general;
      else if (kind == "fixed") group.kind = CounterKind::fixed;
      else fail_at(node_of(g, "kind"), errc::invalid_argument,
                   fmt::format("counter kind must be \"general\" or \"fixed\", not \"{}\"", kind));
      group.first = read_small(g, "first", 0, 63);
      group.count = read_small(g, "count", 0, 64, true);
      if (group.count == 0 || group.first + group.count > 64)
        fail_at(node_of(g, "count"), errc::attribute_value, "a counter group holds 1 to 64 counters, indices below 64");
      group.width = read_small(g, "width", 0, 64, true);
      if (group.width == 0) fail_at(node_of(g, "width"), errc::attribute_value, "counter width must be 1 to 64");
      group.control = read_u32(g, "control", 0, true);
      group.control_stride = read_u32(g, "control_stride", 1);
      group.counter = read_u32(g, "counter", 0, true);
      group.counter_stride = read_u32(g, "counter_stride", 1);
      group.control_shift = read_small(g, "control_shift", 0, 63);
      group.control_shift_stride = read_small(g, "control_shift_stride", 0, 63);
      group.control_bits = read_small(g, "control_bits", 0, 64);
      if (group.control_bits != 0 &&
          group.control_shift + (group.count - 1) * group.control_shift_stride + group.control_bits > 64)
        fail_at(g, errc::attribute_value, "the counters' parts of the control register do not fit in 64 bits");
      if (g.get("rdpmc")) group.rdpmc = read_small(g, "rdpmc", 0, 0xFFFF);
      group.cpus = cpu_list(cat, g);
      p.counters.push_back(std::move(group));
    }
  }
  if (const toml::node* r = t.get("registers")) {
    const toml::array* arr = r->as_array();
    if (!arr || !arr->is_array_of_tables())
      fail_at(*r, errc::invalid_argument, "'pmu.registers' must be an array of tables ([[pmu.registers]])");
    p.registers.clear();
    for (const auto& item : *arr) {
      const auto& g = *item.as_table();
      check_keys(g, {"address", "name", "cpus"}, "[[pmu.registers]]");
      RegisterDecl d;
      d.address = read_u32(g, "address", 0, true);
      d.name = get_string(g, "name").value_or("");
      d.cpus = cpu_list(cat, g);
      p.registers.push_back(std::move(d));
    }
  }
}

// [[probe]] rules, in file order.
void CatalogLoader::read_probe(EventCatalog& cat, const toml::node& node) {
  const toml::array* arr = node.as_array();
  if (!arr || !arr->is_array_of_tables())
    fail_at(node, errc::invalid_argument, "'probe' must be an array of tables ([[probe]])");
  for (const auto& item : *arr) {
    const auto& t = *item.as_table();
    check_keys(t, {"vendor", "family", "model", "stepping", "cpuid_set", "cpuid_clear", "tag", "name", "refuse"},
               "[[probe]]");
    ProbeRule r;
    r.source = ref_of(item);
    if (const toml::node* v = t.get("vendor")) {
      if (v->is_string()) r.vendors.push_back(v->as_string()->get());
      else if (auto list = get_strings(t, "vendor")) r.vendors = *list;
    }
    r.families = read_ranges(t, "family");
    r.models = read_ranges(t, "model");
    r.steppings = read_ranges(t, "stepping");
    for (const char* key : {"cpuid_set", "cpuid_clear"}) {
      const toml::node* n = t.get(key);
      if (!n) continue;
      if (!n->is_array()) fail_at(*n, errc::invalid_argument, fmt::format("'{}' must be an array of strings", key));
      for (const auto& f : *n->as_array())
        (std::string_view(key) == "cpuid_set" ? r.cpuid_set : r.cpuid_clear).push_back(parse_cpuid_field(f));
    }
    r.refusal = get_string(t, "refuse").value_or("");
    r.tag = get_string(t, "tag").value_or("");
    r.name = get_string(t, "name").value_or("");
    if (r.refusal.empty()) {
      if (r.tag.empty() || r.name.empty())
        fail_at(t, errc::invalid_argument, "a [[probe]] rule needs a 'tag' and a 'name', or 'refuse'");
      bool known = std::any_of(cat.cpus_.begin(), cat.cpus_.end(), [&](const CpuTag& c) { return c.name == r.tag; });
      if (!known) fail_at(node_of(t, "tag"), errc::not_found, fmt::format("cpu tag '{}' is not declared in [cpus]", r.tag));
    } else if (!r.tag.empty()) {
      fail_at(node_of(t, "tag"), errc::invalid_argument, "a refusing [[probe]] rule has no 'tag'");
    }
    cat.pmu_.probe.push_back(std::move(r));
  }
}

}  // namespace pmc::detail
