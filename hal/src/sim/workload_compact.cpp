// The compact form of the workload format (docs/workload-format.md, "Compact form"): a header,
// then one segment per line, values in the order of the `columns` line. WorkloadReader streams
// it a line at a time (a TOML file it reads whole); save_compact_workload writes it.
#include "workload_format.hpp"

#include "input_file.hpp"
#include "toml_util.hpp"
#include "workload_toml_stream.hpp"

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace pmc {

namespace {

using detail::checked_add;
using detail::checked_mul;
using detail::kCycles;
using detail::kMax64;

constexpr std::string_view kCompactMagic = "pmc-workload";

enum class Column : std::uint8_t { cycles, mode, halted, repeat, cpu, pid, parent, pc_begin, pc_end, signal };

struct ColumnDef {
  Column kind = Column::signal;
  Signal signal;
  std::string name;
};

Column column_kind(std::string_view name) {
  static constexpr std::pair<std::string_view, Column> kKeys[] = {
      {"cycles", Column::cycles}, {"mode", Column::mode}, {"halted", Column::halted}, {"repeat", Column::repeat},
      {"cpu", Column::cpu},   {"pid", Column::pid},       {"parent", Column::parent},
      {"pc_begin", Column::pc_begin}, {"pc_end", Column::pc_end}};
  for (const auto& [key, kind] : kKeys)
    if (key == name) return kind;
  return Column::signal;
}

// A line's words, with their 1-based columns; '#' starts a comment.
struct Word {
  std::string_view text;
  std::size_t column = 0;
};
std::size_t split_words(std::string_view line, Word* out, std::size_t max, std::size_t* count) {
  std::size_t n = 0, total = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == '#' ) break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '\n' && line[i] != '#')
      ++i;
    if (n < max) out[n++] = Word{line.substr(begin, i - begin), begin + 1};
    ++total;
  }
  *count = total;
  return n;
}

// An unsigned number: decimal, or hex with 0x.
bool parse_number(std::string_view text, std::uint64_t& out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

// The text after a header keyword ("name   the demo  # x" -> "the demo").
std::string rest_of(std::string_view line, std::size_t from) {
  std::string_view rest = line.substr(std::min(from, line.size()));
  if (auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r' || rest.back() == '\n'))
    rest.remove_suffix(1);
  return std::string(rest);
}

// Whether the (open) workload file is in the compact form: its first line names it.
bool is_compact(const detail::InputFile& in) { return in.peek(kCompactMagic.size()) == kCompactMagic; }

}  // namespace

struct WorkloadReader::Impl {
  std::string source, name, description;
  bool compact = false;
  // TOML: a [[segment]] at a time (workload_toml_stream.hpp), else read whole.
  std::unique_ptr<detail::TomlSegmentStream> toml;
  std::size_t given = 0;  // segments the stream gave since the start or rewind
  Workload whole;
  std::size_t next_index = 0;
  Segment current;
  // Compact: one line at a time.
  std::FILE* file = nullptr;
  char* line = nullptr;
  std::size_t capacity = 0;
  long data_offset = 0;         // where the first row starts
  std::size_t data_line = 0;    // the line before it
  std::size_t line_no = 0;
  std::size_t segment_line = 0;
  std::vector<ColumnDef> columns;
  std::vector<Word> words;
  std::vector<SignalCount> signals;
  std::uint64_t repeat_left = 0;  // more copies of `current` to give (a repeat with a PC range)
  // Totals so far, which must fit 64 bits (the counts of a 64-bit counter).
  std::uint64_t total_cycles = 0;
  std::vector<std::uint64_t> totals;  // per column (signals)

  ~Impl() {
    if (file) std::fclose(file);
    std::free(line);
  }

  [[noreturn]] void fail(std::size_t column, errc code, std::string_view what) const {
    throw Error(code, column ? fmt::format("{}:{}:{}: {}", source, line_no, column, what)
                             : fmt::format("{}:{}: {}", source, line_no, what));
  }

  // The next line, without its end; false at the end of the file.
  bool read_line(std::string_view& out) {
    const ssize_t got = ::getline(&line, &capacity, file);
    if (got < 0) {
      if (std::ferror(file)) throw Error(errc::io, fmt::format("{}: read error after line {}", source, line_no));
      return false;
    }
    ++line_no;
    out = std::string_view(line, static_cast<std::size_t>(got));
    return true;
  }

  // Streamed from `in` (a regular file: no size limit, a line at a time).
  void open_compact(const std::filesystem::path& path, detail::InputFile& in) {
    file = in.release_stream();
    std::string_view text;
    if (!read_line(text) || rest_of(text, 0) != fmt::format("{} 1", kCompactMagic))
      fail(1, errc::parse, fmt::format("a compact workload starts with the line '{} 1'", kCompactMagic));
    name = path.stem().string();
    for (;;) {
      if (!read_line(text)) fail(0, errc::parse, "no 'columns' line: the header ends with one");
      Word w[1];
      std::size_t count = 0;
      if (split_words(text, w, 1, &count) == 0) continue;  // blank or comment
      const std::size_t after = w[0].column - 1 + w[0].text.size();
      if (w[0].text == "name") {
        name = rest_of(text, after);
      } else if (w[0].text == "description") {
        description = rest_of(text, after);
      } else if (w[0].text == "columns") {
        read_columns(text);
        break;
      } else {
        fail(w[0].column, errc::parse,
             fmt::format("unknown header line '{}' (expected name, description or columns)", w[0].text));
      }
    }
    data_offset = std::ftell(file);
    data_line = line_no;
  }

  void read_columns(std::string_view text) {
    std::size_t count = 0;
    std::vector<Word> all(64);
    while (split_words(text, all.data(), all.size(), &count), count > all.size()) all.resize(count);
    all.resize(count);
    bool cycles = false, pc_begin = false, pc_end = false;
    for (std::size_t i = 1; i < all.size(); ++i) {
      ColumnDef c;
      c.name = std::string(all[i].text);
      c.kind = column_kind(c.name);
      for (const auto& other : columns)
        if (other.name == c.name) fail(all[i].column, errc::parse, fmt::format("column '{}' given twice", c.name));
      if (c.kind == Column::signal) {
        if (c.name == kCycles) fail(all[i].column, errc::parse, "column 'cycles' is the segment's length");
        c.signal = signal(c.name);
      }
      cycles = cycles || c.kind == Column::cycles;
      pc_begin = pc_begin || c.kind == Column::pc_begin;
      pc_end = pc_end || c.kind == Column::pc_end;
      columns.push_back(std::move(c));
    }
    if (!cycles) fail(all[0].column, errc::parse, "the columns need 'cycles'");
    if (pc_begin != pc_end) fail(all[0].column, errc::parse, "the columns have 'pc_begin' and 'pc_end' together or neither");
    words.resize(columns.size() + 1);  // one more: where a line has too many
    totals.assign(columns.size(), 0);
  }

  // Adds cycles * per_cycle to a total; `signal` names it in the error ("": the cycles).
  void add_total(std::uint64_t& total, std::uint64_t cycles, std::uint64_t per_cycle, std::string_view signal) {
    auto add = checked_mul(cycles, per_cycle);
    auto sum = add ? checked_add(total, *add) : std::nullopt;
    if (!sum) [[unlikely]]
      fail(0, errc::invalid_argument,
           signal.empty() ? std::string("the total of cycles over the workload so far exceeds 2^64 - 1")
                          : fmt::format("the total of signal '{}' over the workload so far exceeds 2^64 - 1", signal));
    total = *sum;
  }

  // One row into `current`; false at the end of the file.
  bool read_row() {
    std::string_view text;
    std::size_t count = 0;
    for (;;) {
      if (!read_line(text)) return false;
      if (split_words(text, words.data(), words.size(), &count) > 0) break;
    }
    if (count != columns.size()) {
      // Point at the first value too many, or at the end of the line.
      std::string_view body = text.substr(0, std::min(text.find('#'), text.size()));
      while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ' || body.back() == '\t'))
        body.remove_suffix(1);
      const std::size_t column = count > columns.size() ? words[columns.size()].column : body.size() + 1;
      fail(column, errc::invalid_argument,
           fmt::format("{} values, but the columns name {}", count, columns.size()));
    }
    Segment s;
    std::uint64_t repeat = 1;
    signals.clear();
    bool has_parent = false;
    std::size_t parent_column = 0, pc_column = 0, cycles_column = 0;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const ColumnDef& c = columns[i];
      const Word& w = words[i];
      if (c.kind == Column::mode) {
        if (w.text == "u" || w.text == "user") s.mode = Mode::user;
        else if (w.text == "k" || w.text == "kernel") s.mode = Mode::kernel;
        else fail(w.column, errc::invalid_argument, fmt::format("mode '{}' is not u, user, k or kernel", w.text));
        continue;
      }
      std::uint64_t v = 0;
      if (!parse_number(w.text, v))
        fail(w.column, errc::invalid_argument,
             fmt::format("'{}' {} is not an unsigned 64-bit number (decimal, or hex with 0x)", c.name, w.text));
      auto range = [&](std::uint64_t lo, std::uint64_t hi) {
        if (v < lo || v > hi)
          fail(w.column, errc::invalid_argument, fmt::format("'{}' must be {}..{}, not {}", c.name, lo, hi, v));
      };
      switch (c.kind) {
        case Column::cycles:
          range(1, kMax64);
          s.cycles = v;
          cycles_column = w.column;
          break;
        case Column::halted: range(0, 1); s.halted = v == 1; break;
        case Column::repeat: range(1, kMax64); repeat = v; break;
        case Column::cpu: range(0, 63); s.cpu = static_cast<unsigned>(v); break;
        case Column::pid: s.pid = v; break;
        case Column::parent:
          s.parent = v;
          has_parent = v != 0;
          parent_column = w.column;
          break;
        case Column::pc_begin: s.pc_begin = v; pc_column = w.column; break;  // 0 0: no range
        case Column::pc_end: s.pc_end = v; break;
        case Column::signal:
          if (v != 0) signals.push_back({c.signal, v});
          break;
        case Column::mode: break;
      }
    }
    if (has_parent && (s.pid == 0 || s.parent == s.pid))
      fail(parent_column, errc::invalid_argument,
           fmt::format("'parent' {} needs a 'pid' of the child, other than 0 and the parent", s.parent));
    if (pc_column && (s.pc_begin || s.pc_end) && s.pc_begin >= s.pc_end)
      fail(pc_column, errc::invalid_argument,
           fmt::format("the PC range must be [begin, end) with begin < end, not [{:#x}, {:#x}]", s.pc_begin, s.pc_end));
    repeat_left = 0;
    if (s.pc_begin == s.pc_end) {
      // Identical segments back to back count as one of their total length (as in the TOML form).
      auto total = checked_mul(s.cycles, repeat);
      if (!total) fail(cycles_column, errc::invalid_argument, fmt::format("repeat {} x cycles {} overflows 64 bits", repeat, s.cycles));
      s.cycles = *total;
    } else {
      if (repeat > detail::kMaxExpandedPcRepeat)
        fail(cycles_column, errc::invalid_argument,
             fmt::format("repeat {} of a segment with a PC range is more than {} (raise 'cycles' instead)", repeat,
                         detail::kMaxExpandedPcRepeat));
      repeat_left = repeat - 1;
    }
    s.signals = signals;
    // The totals the whole repeat adds.
    add_total(total_cycles, s.cycles, repeat_left + 1, {});
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i].kind == Column::signal) {
        const std::uint64_t k = s.per_cycle(columns[i].signal);
        if (k) {
          auto cycles = checked_mul(s.cycles, repeat_left + 1);
          if (!cycles) fail(0, errc::invalid_argument, "the total of cycles over the workload so far exceeds 2^64 - 1");
          add_total(totals[i], *cycles, k, columns[i].name);
        }
      }
    current = s;
    segment_line = line_no;
    return true;
  }
};

WorkloadReader::WorkloadReader(const std::filesystem::path& file) : impl_(std::make_unique<Impl>()) {
  impl_->source = file.string();
  detail::InputFile in(file, InputKind::workload);
  if (is_compact(in)) {
    impl_->compact = true;
    impl_->open_compact(file, in);
    return;
  }
  impl_->toml = detail::TomlSegmentStream::open(file, in);
  if (impl_->toml) {
    impl_->name = impl_->toml->name();
    impl_->description = impl_->toml->description();
    return;
  }
  impl_->whole = detail::workload_from_table(detail::parse_toml_file(file, InputKind::workload), file.string());
  impl_->name = impl_->whole.name;
  impl_->description = impl_->whole.description;
}

WorkloadReader::~WorkloadReader() = default;
WorkloadReader::WorkloadReader(WorkloadReader&&) noexcept = default;
WorkloadReader& WorkloadReader::operator=(WorkloadReader&&) noexcept = default;

const std::string& WorkloadReader::name() const { return impl_->name; }
const std::string& WorkloadReader::description() const { return impl_->description; }
const std::string& WorkloadReader::source() const { return impl_->source; }
bool WorkloadReader::compact() const { return impl_->compact; }

const Segment* WorkloadReader::next() {
  Impl& m = *impl_;
  if (m.toml) {
    try {
      const Segment* s = m.toml->next();
      if (s) ++m.given;
      return s;
    } catch (const detail::NeedWholeFile&) {
      // The whole-file reader words the error; or, if the file is valid after all, goes on
      // from the same segment.
      m.whole = detail::workload_from_table(detail::parse_toml_file(m.source, InputKind::workload), m.source);
      m.toml.reset();
      m.next_index = m.given;
    }
  }
  if (!m.compact) {
    if (m.next_index >= m.whole.size()) return nullptr;
    m.current = m.whole.segment(m.next_index++);
    return &m.current;
  }
  if (m.repeat_left > 0) {
    --m.repeat_left;
    return &m.current;
  }
  return m.read_row() ? &m.current : nullptr;
}

std::string WorkloadReader::where() const {
  if (impl_->toml) return fmt::format("{}:{}", impl_->source, impl_->toml->line());
  return impl_->compact ? fmt::format("{}:{}", impl_->source, impl_->segment_line) : impl_->source;
}

void WorkloadReader::rewind() {
  Impl& m = *impl_;
  m.next_index = 0;
  m.given = 0;
  if (m.toml) m.toml->rewind();
  if (!m.compact) return;
  if (std::fseek(m.file, m.data_offset, SEEK_SET) != 0)
    throw Error(errc::io, fmt::format("{}: cannot seek back to the first segment", m.source));
  m.line_no = m.data_line;
  m.repeat_left = 0;
  m.total_cycles = 0;
  std::fill(m.totals.begin(), m.totals.end(), 0);
}

// The bytes of the file a reader has consumed (-1: not known, a TOML file read whole).
struct detail::ReaderAccess {
  static long offset(const WorkloadReader& r) {
    const WorkloadReader::Impl& m = *r.impl_;
    if (m.toml) return m.toml->offset();
    return m.compact ? std::ftell(m.file) : -1;
  }
};

// One pass over the file. Parsing it twice to size the storage exactly cost more than the
// parse (the TOML form: 0.33 of a second per 10^6 segments); letting the storage double
// instead left the smaller blocks it outgrew in the heap, 1.4x the memory. So the storage is
// reserved once, after the first segments, for the file's size at their density (plus 1/16):
// the part never filled is address space, not memory, and a file denser further on grows
// from there.
Workload load_workload(const std::filesystem::path& file) {
  WorkloadReader reader(file);  // the TOML form streamed too: no document tree of the whole file
  Workload w;
  w.source = file.string();
  w.name = reader.name();
  w.description = reader.description();
  constexpr std::size_t kSample = 4096;
  std::size_t signals = 0;
  const Segment* s = nullptr;
  while (w.size() < kSample && (s = reader.next())) {
    w.add(*s);
    signals += s->signals.size();
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const long done = detail::ReaderAccess::offset(reader);
  if (s && !ec && done > 0 && size > static_cast<std::uintmax_t>(done)) {
    const double scale = static_cast<double>(size) / static_cast<double>(done) * (1.0 + 1.0 / 16);
    try {
      w.reserve(static_cast<std::size_t>(static_cast<double>(w.size()) * scale),
                static_cast<std::size_t>(static_cast<double>(signals) * scale));
    } catch (const std::bad_alloc&) {
      // More address space than the system grants (a file far sparser past its start): grow.
    }
  }
  if (s)
    while ((s = reader.next())) w.add(*s);
  if (w.size() == 0)
    throw Error(errc::invalid_argument, fmt::format("{}: no segment: a workload needs at least one", file.string()));
  return w;
}

void save_compact_workload(const Workload& w, const std::filesystem::path& file) {
  std::vector<Signal> names;  // signal columns, in order of first appearance
  bool cpu = false, process = false, pc = false, halted = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Segment s = w.segment(i);
    for (const SignalCount& c : s.signals)
      if (std::find(names.begin(), names.end(), c.signal) == names.end()) names.push_back(c.signal);
    cpu = cpu || s.cpu != 0;
    process = process || s.pid != 0 || s.parent != 0;
    pc = pc || s.pc_begin != s.pc_end;
    halted = halted || s.halted;
  }
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) throw Error(errc::io, fmt::format("{}: cannot write file: {}", file.string(), std::strerror(errno)));
  auto one_line = [](std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::replace(text.begin(), text.end(), '#', ' ');
    return text;
  };
  std::string out = fmt::format("{} 1\n", kCompactMagic);
  if (!w.name.empty()) out += fmt::format("name {}\n", one_line(w.name));
  if (!w.description.empty()) out += fmt::format("description {}\n", one_line(w.description));
  out += "columns cycles mode";
  if (halted) out += " halted";
  if (cpu) out += " cpu";
  if (process) out += " pid parent";
  if (pc) out += " pc_begin pc_end";
  for (Signal id : names) out += fmt::format(" {}", signal_name(id));
  out += '\n';
  bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  for (std::size_t i = 0; i < w.size() && ok; ++i) {
    const Segment s = w.segment(i);
    out = fmt::format("{} {}", s.cycles, s.mode == Mode::user ? 'u' : 'k');
    if (halted) out += s.halted ? " 1" : " 0";
    if (cpu) out += fmt::format(" {}", s.cpu);
    if (process) out += fmt::format(" {} {}", s.pid, s.parent);
    if (pc) out += fmt::format(" {:#x} {:#x}", s.pc_begin, s.pc_end);
    for (Signal id : names) out += fmt::format(" {}", s.per_cycle(id));
    out += '\n';
    ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw Error(errc::io, fmt::format("{}: write error", file.string()));
}

}  // namespace pmc
