// Cachegrind's output file (Valgrind manual, "Cachegrind Output File Format"; the parser is
// pmchal's own): its quantities, per function and source line, checked against its summary.
#include "cachegrind.hpp"

#include <pmc/error.hpp>
#include <pmc/input_file.hpp>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace pmc {

namespace {

struct QuantityInfo {
  std::string_view name;
  std::string_view description;
};
constexpr std::array<QuantityInfo, kQuantities> kQuantityInfo{{
    {"Ir", "instructions executed"},
    {"Dr", "data reads"},
    {"Dw", "data writes"},
    {"I1mr", "L1 instruction-cache misses"},
    {"D1mr", "L1 data-cache read misses"},
    {"D1mw", "L1 data-cache write misses"},
    {"ILmr", "last-level misses of instruction fetches"},
    {"DLmr", "last-level misses of data reads"},
    {"DLmw", "last-level misses of data writes"},
    {"Bc", "conditional branches"},
    {"Bcm", "conditional branches mispredicted"},
    {"Bi", "indirect jumps and calls"},
    {"Bim", "indirect jumps and calls mispredicted"},
}};

[[noreturn]] void bad_line(const std::string& source, std::size_t line, std::string_view message) {
  throw Error(errc::parse, fmt::format("{}:{}: {}", source, line, message));
}

// The numbers of a count or summary line.
std::vector<std::uint64_t> numbers(std::string_view text, const std::string& source, std::size_t line) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i == text.size()) break;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r') ++j;
    std::uint64_t v = 0;
    if (j == i + 1 && text[i] == '.') {  // "." is a zero
      out.push_back(0);
      i = j;
      continue;
    }
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, v);
    if (ec == std::errc::result_out_of_range)
      bad_line(source, line, fmt::format("count '{}' does not fit in 64 bits", text.substr(i, j - i)));
    if (ec != std::errc() || end != text.data() + j)
      bad_line(source, line, fmt::format("'{}' is not a count (a decimal number or '.')", text.substr(i, j - i)));
    out.push_back(v);
    i = j;
  }
  return out;
}

}  // namespace

namespace detail {

std::optional<Quantity> quantity_of(std::string_view name) {
  for (std::size_t i = 0; i < kQuantities; ++i)
    if (kQuantityInfo[i].name == name) return static_cast<Quantity>(i);
  return std::nullopt;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace detail

std::string_view quantity_name(Quantity q) { return kQuantityInfo.at(static_cast<std::size_t>(q)).name; }
std::string_view quantity_description(Quantity q) { return kQuantityInfo.at(static_cast<std::size_t>(q)).description; }

Activity& Activity::operator+=(const Activity& other) {
  for (std::size_t i = 0; i < kQuantities; ++i) {
    if (other.counts[i] > std::numeric_limits<std::uint64_t>::max() - counts[i])
      throw Error(errc::invalid_argument,
                  fmt::format("the total of {} exceeds 2^64 - 1", kQuantityInfo[i].name));
    counts[i] += other.counts[i];
  }
  return *this;
}

const FunctionActivity* ProgramActivity::function(std::string_view name) const {
  for (const FunctionActivity& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

ProgramActivity parse_cachegrind(std::string_view text, const std::string& source) {
  ProgramActivity out;
  out.source = source;
  std::vector<std::optional<Quantity>> columns;  // per event of the file: its quantity, if known
  bool have_events = false, have_summary = false;
  std::string file;
  constexpr std::size_t kNoFunction = std::numeric_limits<std::size_t>::max();
  std::size_t function = kNoFunction;  // the current fn= (an index into out.functions)
  std::unordered_map<std::string, std::size_t> function_index;
  std::map<std::tuple<std::size_t, std::string, std::uint64_t>, std::size_t> line_index;
  // Instructions per (function, file): the file a function is named after.
  std::map<std::pair<std::size_t, std::string>, std::uint64_t> ir_by_file;
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (detail::trim_blanks(line).empty()) continue;
    if (have_summary) bad_line(source, number, "text after the summary: line");
    auto starts = [&](std::string_view prefix) { return line.substr(0, prefix.size()) == prefix; };
    if (starts("desc:")) {
      out.description.emplace_back(detail::trim_blanks(line.substr(5)));
    } else if (starts("cmd:")) {
      out.command = std::string(detail::trim_blanks(line.substr(4)));
    } else if (starts("events:")) {
      if (have_events) bad_line(source, number, "a second events: line");
      have_events = true;
      std::string_view rest = line.substr(7);
      std::size_t i = 0;
      while (i < rest.size()) {
        while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
        if (i == rest.size()) break;
        std::size_t j = i;
        while (j < rest.size() && rest[j] != ' ' && rest[j] != '\t') ++j;
        const auto q = detail::quantity_of(rest.substr(i, j - i));
        if (q && out.present[static_cast<std::size_t>(*q)])
          bad_line(source, number, fmt::format("event '{}' is named twice", rest.substr(i, j - i)));
        if (q) out.present[static_cast<std::size_t>(*q)] = true;
        columns.push_back(q);
        i = j;
      }
      if (columns.empty()) bad_line(source, number, "the events: line names no event");
    } else if (starts("fl=")) {
      file = std::string(line.substr(3));
      function = kNoFunction;
    } else if (starts("fn=")) {
      const std::string name(line.substr(3));
      auto [it, added] = function_index.emplace(name, out.functions.size());
      if (added) out.functions.push_back({name, {}, {}});
      function = it->second;
    } else if (starts("summary:")) {
      if (!have_events) bad_line(source, number, "summary: before the events: line");
      const auto v = numbers(line.substr(8), source, number);
      if (v.size() > columns.size())
        bad_line(source, number,
                 fmt::format("the summary has {} counts for {} events", v.size(), columns.size()));
      for (std::size_t i = 0; i < v.size(); ++i)  // missing trailing counts are 0
        if (columns[i]) out.total[*columns[i]] = v[i];
      have_summary = true;
    } else if (line.front() >= '0' && line.front() <= '9') {
      if (!have_events) bad_line(source, number, "a count line before the events: line");
      if (function == kNoFunction) bad_line(source, number, "a count line outside a function (no fn= line before it)");
      auto v = numbers(line, source, number);
      const std::uint64_t line_number = v.front();
      v.erase(v.begin());
      if (v.size() > columns.size())
        bad_line(source, number, fmt::format("{} counts for {} events", v.size(), columns.size()));
      Activity a;
      for (std::size_t i = 0; i < v.size(); ++i)  // missing trailing counts are 0
        if (columns[i]) a[*columns[i]] = v[i];
      const std::string& name = file.empty() ? std::string("???") : file;
      auto [it, added] = line_index.emplace(std::tuple{function, name, line_number}, out.lines.size());
      if (added) out.lines.push_back({function, name, line_number, {}});
      out.lines[it->second].activity += a;
      out.functions[function].activity += a;
      ir_by_file[{function, name}] += a[Quantity::Ir];
    } else {
      bad_line(source, number, fmt::format("unexpected line '{}' (expected desc:, cmd:, events:, fl=, fn=, a count "
                                           "line or summary:)",
                                           line.substr(0, 60)));
    }
  }
  if (!have_events) throw Error(errc::parse, fmt::format("{}: no events: line (not a cachegrind output file?)", source));
  if (!have_summary)
    throw Error(errc::parse, fmt::format("{}: no summary: line (the file is incomplete: did Valgrind finish?)", source));
  Activity sum;
  for (const SourceLine& l : out.lines) sum += l.activity;
  for (std::size_t i = 0; i < kQuantities; ++i) {
    if (out.present[i] && sum.counts[i] != out.total.counts[i])
      throw Error(errc::parse, fmt::format("{}: the lines add up to {} {}, the summary says {}", source,
                                           sum.counts[i], kQuantityInfo[i].name, out.total.counts[i]));
  }
  std::vector<std::uint64_t> best(out.functions.size(), 0);
  for (const auto& [key, ir] : ir_by_file) {
    FunctionActivity& f = out.functions[key.first];
    if (f.file.empty() || ir > best[key.first]) {
      f.file = key.second;
      best[key.first] = ir;
    }
  }
  return out;
}

ProgramActivity load_cachegrind(const std::filesystem::path& file) {
  return parse_cachegrind(read_input_file(file, InputKind::cachegrind_output), file.string());
}

}  // namespace pmc
