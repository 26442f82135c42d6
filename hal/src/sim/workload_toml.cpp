// The TOML form of the Activity workload format (docs/workload-format.md): run-length
// segments of simulated CPU activity, read into plain value types. Every error names
// file:line:column.
#include "workload_format.hpp"

#include "toml_util.hpp"

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace pmc {

namespace detail {

namespace {

// A required-or-optional integer key that must lie in [min, max].
std::optional<std::int64_t> get_ranged(const toml::table& t, std::string_view key, std::int64_t min,
                                       std::int64_t max, bool required, std::string_view range) {
  auto v = detail::get_int(t, key, required);
  if (v && (*v < min || *v > max)) {
    fail_at(node_of(t, key), errc::invalid_argument,
            fmt::format("'{}' must be {}, not {}", key, range, *v));
  }
  return v;
}

// The text of a 'pc' string: an unsigned 64-bit number in hex ("0x" prefix) or decimal, '_'
// allowed between two digits as in a TOML integer ("0xffff_fc00_0031_0000"). {} on success;
// invalid_argument when it is not such a number; result_out_of_range when it is 2^64 or more.
std::errc parse_u64(std::string_view text, std::uint64_t& out) {
  int base = 10;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::string digits;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      digits += text[i];
    } else if (i == 0 || i + 1 == text.size() || text[i + 1] == '_') {
      return std::errc::invalid_argument;  // '_' first, last or doubled: not between digits
    }
  }
  // from_chars takes no sign, prefix or blank for an unsigned type: anything but digits of the
  // base stops it before the end.
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, out, base);
  if (digits.empty() || ptr != end || ec == std::errc::invalid_argument) {
    return std::errc::invalid_argument;
  }
  return ec;
}

// One value of 'pc = [begin, end]' (`which` is "begin" or "end"): an integer >= 0, or a string
// holding an unsigned 64-bit number, for addresses of 2^63 and above (kernel segments) that a TOML
// integer, signed 64-bit, cannot hold.
std::uint64_t pc_value(const toml::node& item, std::string_view which) {
  if (const auto* i = item.as_integer()) {
    const std::int64_t v = i->get();
    if (v < 0) {
      fail_at(item, errc::invalid_argument,
              fmt::format("'pc' {} must be >= 0, not {} (write an address of 2^63 or more as a "
                          "string: {} as a 64-bit address is \"{:#x}\")",
                          which, v, v, static_cast<std::uint64_t>(v)));
    }
    return static_cast<std::uint64_t>(v);
  }
  if (const auto* s = item.as_string()) {
    std::uint64_t v = 0;
    const std::errc ec = parse_u64(s->get(), v);
    if (ec == std::errc::result_out_of_range) {
      fail_at(item, errc::invalid_argument,
              fmt::format("'pc' {} {:?} does not fit in 64 bits (at most 0xffffffffffffffff)",
                          which, s->get()));
    }
    if (ec != std::errc{}) {
      fail_at(item, errc::invalid_argument,
              fmt::format("'pc' {} {:?} is not an unsigned 64-bit number (write hex such as "
                          "\"0xfffffc0000310000\" or decimal, '_' allowed between digits)",
                          which, s->get()));
    }
    return v;
  }
  fail_at(item, errc::invalid_argument,
          fmt::format("'pc' {} must be an integer >= 0 or a string holding a number, not {}", which,
                      detail::type_name(item.type())));
}

Mode parse_mode(const toml::table& seg) {
  auto mode = detail::get_string(seg, "mode");
  if (!mode || *mode == "user") return Mode::user;
  if (*mode == "kernel") return Mode::kernel;
  fail_at(node_of(seg, "mode"), errc::invalid_argument,
          fmt::format("unknown mode '{}' (expected \"user\" or \"kernel\")", *mode));
}

// Signals of a table, flattening nested tables into dotted names: an unquoted dotted key
// (l2_ld.m = 1, which TOML reads as a table l2_ld holding m) means the same as "l2_ld.m" = 1.
void add_signals(const toml::table& table, const std::string& prefix, std::vector<SignalCount>& out) {
  for (const auto& [key, value] : table) {
    if (key.str().empty()) fail_at(key.source(), errc::invalid_argument, "empty signal name");
    std::string name = prefix.empty() ? std::string() : prefix + ".";
    name += key.str();
    if (value.is_table()) {
      add_signals(*value.as_table(), name, out);
      continue;
    }
    if (name == kCycles) {
      fail_at(key.source(), errc::invalid_argument,
              "signal 'cycles' is implicit (1 per unhalted cycle) and cannot be set");
    }
    if (!value.is_integer()) {
      fail_at(value, errc::invalid_argument,
              fmt::format("signal '{}' must be an integer (occurrences per cycle), not {}", name,
                          detail::type_name(value.type())));
    }
    const std::int64_t k = value.as_integer()->get();
    if (k < 0) {
      fail_at(value, errc::invalid_argument,
              fmt::format("signal '{}' must be >= 0 occurrences per cycle, not {}", name, k));
    }
    const Signal id = signal(name);
    if (std::any_of(out.begin(), out.end(), [&](const SignalCount& c) { return c.signal == id; })) {
      fail_at(key.source(), errc::invalid_argument,
              fmt::format("signal '{}' is given twice (a quoted and a dotted key)", name));
    }
    out.push_back({id, static_cast<std::uint64_t>(k)});
  }
}

void parse_signals(const toml::table& seg, std::vector<SignalCount>& out) {
  const toml::node* node = seg.get("signals");
  if (!node) return;
  if (!node->is_table()) {
    fail_at(*node, errc::invalid_argument,
            fmt::format("'signals' must be a table, not {}", detail::type_name(node->type())));
  }
  add_signals(*node->as_table(), "", out);
}

// One [[segment]] table; appends it (repeat times) to `out`.
void parse_segment(const toml::table& seg, Workload& out) {
  detail::check_keys(seg,
                     {"cycles", "mode", "repeat", "halted", "pc", "cpu", "pid", "parent", "signals"},
                     "[[segment]]");
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  Segment s;
  s.cycles = static_cast<std::uint64_t>(*get_ranged(seg, "cycles", 1, kInt64Max, true, "> 0"));
  s.mode = parse_mode(seg);
  s.halted = detail::get_bool(seg, "halted").value_or(false);
  if (const toml::node* pc = seg.get("pc")) {
    const toml::array* arr = pc->as_array();
    if (!arr) {
      fail_at(*pc, errc::invalid_argument,
              fmt::format("'pc' must be [begin, end], integers or number strings, not {}",
                          detail::type_name(pc->type())));
    }
    if (arr->size() != 2) {
      fail_at(*pc, errc::invalid_argument,
              fmt::format("'pc' must be [begin, end], not an array of {} values", arr->size()));
    }
    s.pc_begin = pc_value(*arr->get(0), "begin");
    s.pc_end = pc_value(*arr->get(1), "end");
    if (s.pc_begin >= s.pc_end) {
      fail_at(*pc, errc::invalid_argument,
              fmt::format("'pc' must be [begin, end) with 0 <= begin < end, not [{:#x}, {:#x}]",
                          s.pc_begin, s.pc_end));
    }
  }
  // The CPU and the process (models that select by process or CPU read them).
  s.cpu = static_cast<unsigned>(get_ranged(seg, "cpu", 0, 63, false, "0..63").value_or(0));
  s.pid = static_cast<std::uint64_t>(get_ranged(seg, "pid", 0, kInt64Max, false, ">= 0").value_or(0));
  s.parent =
      static_cast<std::uint64_t>(get_ranged(seg, "parent", 1, kInt64Max, false, ">= 1").value_or(0));
  if (s.parent != 0 && (s.pid == 0 || s.parent == s.pid)) {
    fail_at(node_of(seg, "parent"), errc::invalid_argument,
            fmt::format("'parent' {} needs a 'pid' of the child, other than 0 and the parent",
                        s.parent));
  }
  std::vector<SignalCount> signals;
  parse_signals(seg, signals);
  s.signals = signals;

  const auto repeat = static_cast<std::uint64_t>(
      get_ranged(seg, "repeat", 1, kInt64Max, false, ">= 1").value_or(1));
  const auto total = checked_mul(s.cycles, repeat);
  if (!total) {
    fail_at(node_of(seg, "repeat"), errc::invalid_argument,
            fmt::format("repeat {} x cycles {} overflows 64 bits", repeat, s.cycles));
  }
  if (s.pc_begin == s.pc_end) {
    // Identical segments back to back are indistinguishable from one long segment under every
    // counting rule (per-cycle conditions are constant, an edge detector sees no new edge at the
    // joins), so a repeat is stored as one segment of repeat * cycles: a repeat of 10^12 costs
    // nothing.
    s.cycles = *total;
    out.add(s);
    return;
  }
  // With a PC range each occurrence walks the range again, so keep the occurrences apart.
  if (repeat > kMaxExpandedPcRepeat) {
    fail_at(node_of(seg, "repeat"), errc::invalid_argument,
            fmt::format("repeat {} of a segment with a 'pc' range is more than {} (raise 'cycles' "
                        "instead)",
                        repeat, kMaxExpandedPcRepeat));
  }
  for (std::uint64_t i = 0; i < repeat; ++i) out.add(s);
}

// Refuses workloads whose totals (cycles, or any signal over the whole run) exceed 64 bits:
// a 64-bit count could not hold them.
void check_totals(const toml::table& root, const Workload& w) {
  std::uint64_t cycles = 0;
  std::map<std::string_view, std::uint64_t> totals;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Segment s = w.segment(i);
    auto c = checked_add(cycles, s.cycles);
    if (!c) detail::fail_at(root, errc::invalid_argument, "total cycles exceed 2^64 - 1");
    cycles = *c;
    for (const auto& [id, k] : s.signals) {
      const std::string_view name = signal_name(id);
      auto add = checked_mul(s.cycles, k);
      auto sum = add ? checked_add(totals[name], *add) : std::nullopt;
      if (!sum) {
        detail::fail_at(root, errc::invalid_argument,
                        fmt::format("total of signal '{}' exceeds 2^64 - 1", name));
      }
      totals[name] = *sum;
    }
  }
}

}  // namespace

void add_segment_table(const toml::table& seg, Workload& out) { parse_segment(seg, out); }

Workload workload_from_table(const toml::table& root, const std::string& source) {
  detail::check_keys(root, {"name", "description", "segment"}, "the workload");
  Workload w;
  w.source = source;
  w.name = detail::get_string(root, "name").value_or(std::filesystem::path(source).stem().string());
  w.description = detail::get_string(root, "description").value_or("");

  const toml::node* segs = root.get("segment");
  if (!segs) fail_at(root, errc::invalid_argument, "no [[segment]]: a workload needs at least one");
  const toml::array* arr = segs->as_array();
  if (arr && arr->empty()) {
    fail_at(*segs, errc::invalid_argument, "no [[segment]]: a workload needs at least one");
  }
  if (!arr || !arr->is_array_of_tables()) {
    fail_at(*segs, errc::invalid_argument,
            "'segment' must be an array of tables: write each one as [[segment]]");
  }
  for (const auto& seg : *arr) parse_segment(*seg.as_table(), w);
  check_totals(root, w);
  return w;
}

}  // namespace detail

Workload parse_workload(std::string_view toml, const std::string& name) {
  return detail::workload_from_table(detail::parse_toml_string(toml, name), name);
}

}  // namespace pmc
