// The TOML form of a workload, one [[segment]] at a time (workload_toml_stream.hpp).
//
// The cutter follows just enough of TOML's lexical rules to know where a line starts a table:
// outside strings (one-line and multi-line, basic and literal) and outside the brackets of a
// value (an array may span lines), a line whose first non-blank character is '[' is a table
// header. A [[segment]] header starts a piece; [segment.x] and [[segment.x]] headers belong to
// the piece they are in; any other header, or text the cutter cannot place, sends the caller
// to the whole-file reader.
#include "workload_toml_stream.hpp"

#include "workload_format.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pmc::detail {

namespace {

bool bare_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

}  // namespace

std::unique_ptr<TomlSegmentStream> TomlSegmentStream::open(const std::filesystem::path& file, InputFile& in) {
  std::unique_ptr<TomlSegmentStream> s(new TomlSegmentStream());
  s->file_ = file;
  s->f_ = in.release_stream();  // streamed: no size limit, as the compact form
  s->buf_ = std::make_unique<char[]>(kBuffer);
  std::string preamble;
  bool found = false;
  try {
    found = s->read_preamble(preamble);
  } catch (const NeedWholeFile&) {
    return nullptr;
  }
  if (!found) return nullptr;  // no [[segment]] (an error the whole-file reader words)
  s->have_line_ = true;
  s->first_offset_ = s->base_ + static_cast<long>(s->pos_);
  s->first_line_ = s->line_no_;
  try {
    const toml::table root = toml::parse(preamble, file.string());
    for (const auto& [key, value] : root)
      if (key.str() != "name" && key.str() != "description") return nullptr;
    const toml::node* name = root.get("name");
    const toml::node* description = root.get("description");
    if ((name && !name->is_string()) || (description && !description->is_string())) return nullptr;
    s->name_ = name ? name->as_string()->get() : file.stem().string();
    s->description_ = description ? description->as_string()->get() : std::string();
  } catch (const toml::parse_error&) {
    return nullptr;
  }
  return s;
}

// The lines before the first [[segment]] into `preamble`; true when that header was found.
bool TomlSegmentStream::read_preamble(std::string& preamble) {
  while (read_line()) {
    if (ml_ == InString::none && depth_ == 0) {
      const Header h = header_kind();
      if (h == Header::segment) return true;
      if (h != Header::none) return false;  // a table before the first segment: read whole
    }
    scan(line_);
    preamble += line_;
    preamble += '\n';
    if (preamble.size() > kMaxPiece) return false;
  }
  return false;
}

TomlSegmentStream::~TomlSegmentStream() {
  if (f_) std::fclose(f_);
}

bool TomlSegmentStream::read_line() {
  for (;;) {
    const char* from = buf_.get() + pos_;
    if (const void* nl = std::memchr(from, '\n', end_ - pos_)) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - from);
      line_ = std::string_view(from, len);
      pos_ += len + 1;
      ++line_no_;
      return true;
    }
    if (eof_) {
      if (pos_ == end_) return false;
      line_ = std::string_view(from, end_ - pos_);  // the last line, without a newline
      pos_ = end_;
      ++line_no_;
      return true;
    }
    if (pos_ == 0 && end_ == kBuffer) throw NeedWholeFile{};  // a line longer than the buffer
    std::memmove(buf_.get(), from, end_ - pos_);
    base_ += static_cast<long>(pos_);
    end_ -= pos_;
    pos_ = 0;
    const std::size_t got = std::fread(buf_.get() + end_, 1, kBuffer - end_, f_);
    if (got == 0) {
      if (std::ferror(f_))
        throw Error(errc::io, fmt::format("{}: cannot read workload: {}", file_.string(), std::strerror(errno)));
      eof_ = true;
    }
    end_ += got;
  }
}

TomlSegmentStream::Header TomlSegmentStream::header_kind() const {
  const std::string_view s = line_;
  std::size_t i = skip_blanks(s, 0);
  if (i == s.size() || s[i] != '[') return Header::none;
  const bool array = i + 1 < s.size() && s[i + 1] == '[';
  i = skip_blanks(s, i + (array ? 2 : 1));
  // The first key: bare, or quoted without escapes.
  std::string_view key;
  if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
    const std::size_t close = s.find(s[i], i + 1);
    if (close == std::string_view::npos) return Header::other;
    key = s.substr(i + 1, close - i - 1);
    if (key.find('\\') != std::string_view::npos) return Header::other;
    i = close + 1;
  } else {
    const std::size_t start = i;
    while (i < s.size() && bare_key_char(s[i])) ++i;
    key = s.substr(start, i - start);
  }
  if (key != "segment") return Header::other;
  i = skip_blanks(s, i);
  if (i < s.size() && s[i] == '.') return Header::segment_part;
  if (!array || s.substr(i, 2) != "]]") return Header::other;
  i = skip_blanks(s, i + 2);
  return i == s.size() || s[i] == '#' || s[i] == '\r' ? Header::segment : Header::other;
}

namespace {

// The bytes scan() stops at, by state: outside strings the comment, quotes and brackets; in a
// multi-line basic string the backslash and quote; in a multi-line literal string the quote.
// Every other byte is skipped with one table lookup (most of a workload's bytes).
struct StopBytes {
  bool none[256] = {}, basic[256] = {}, literal[256] = {};
  constexpr StopBytes() {
    for (const char c : std::string_view("#\"'[]{}")) none[static_cast<unsigned char>(c)] = true;
    basic[static_cast<unsigned char>('\\')] = basic[static_cast<unsigned char>('"')] = true;
    literal[static_cast<unsigned char>('\'')] = true;
  }
};
constexpr StopBytes kStop;

}  // namespace

void TomlSegmentStream::scan(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const bool* stop = ml_ == InString::basic ? kStop.basic : ml_ == InString::literal ? kStop.literal : kStop.none;
    while (i < s.size() && !stop[static_cast<unsigned char>(s[i])]) ++i;
    if (i == s.size()) return;
    if (ml_ == InString::basic) {
      if (s[i] == '\\') {
        i += 2;
      } else if (s.substr(i, 3) == "\"\"\"") {
        i += 3;
        while (i < s.size() && s[i] == '"') ++i;  // up to two quotes end the string's content
        ml_ = InString::none;
      } else {
        ++i;
      }
      continue;
    }
    if (ml_ == InString::literal) {
      if (s.substr(i, 3) == "'''") {
        i += 3;
        while (i < s.size() && s[i] == '\'') ++i;
        ml_ = InString::none;
      } else {
        ++i;
      }
      continue;
    }
    const char c = s[i];
    if (c == '#') return;
    if (c == '"' || c == '\'') {
      if (s.substr(i, 3) == (c == '"' ? std::string_view("\"\"\"") : std::string_view("'''"))) {
        ml_ = c == '"' ? InString::basic : InString::literal;
        i += 3;
        continue;
      }
      for (++i; i < s.size() && s[i] != c; ++i)
        if (c == '"' && s[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (c == '[' || c == '{') ++depth_;
    if ((c == ']' || c == '}') && depth_ > 0) --depth_;
    ++i;
  }
}

bool TomlSegmentStream::next_piece() {
  if (!have_line_) return false;
  piece_ = line_;
  piece_ += '\n';
  piece_line_ = line_no_;
  have_line_ = false;
  while (read_line()) {
    if (ml_ == InString::none && depth_ == 0) {
      const Header h = header_kind();
      if (h == Header::segment) {
        have_line_ = true;
        break;
      }
      if (h == Header::other) throw NeedWholeFile{};
      if (h == Header::segment_part) {
        piece_ += line_;
        piece_ += '\n';
        continue;
      }
    }
    scan(line_);
    piece_ += line_;
    piece_ += '\n';
    if (piece_.size() > kMaxPiece) throw NeedWholeFile{};
  }
  return true;
}

// Adds `times` x the segment's cycles and signals to the totals; NeedWholeFile when one
// exceeds 64 bits (the whole-file reader says which).
void TomlSegmentStream::add_totals(const Segment& s, std::uint64_t times) {
  const auto span = checked_mul(s.cycles, times);
  const auto cycles = span ? checked_add(total_cycles_, *span) : std::nullopt;
  if (!cycles) throw NeedWholeFile{};
  total_cycles_ = *cycles;
  for (const SignalCount& c : s.signals) {
    auto it = totals_.begin();
    while (it != totals_.end() && it->first != c.signal) ++it;
    if (it == totals_.end()) it = totals_.insert(it, {c.signal, 0});
    const auto add = checked_mul(*span, c.per_cycle);
    const auto sum = add ? checked_add(it->second, *add) : std::nullopt;
    if (!sum) throw NeedWholeFile{};
    it->second = *sum;
  }
}

const Segment* TomlSegmentStream::next() {
  if (repeat_left_ > 0) {
    --repeat_left_;
    return &current_;
  }
  while (chunk_next_ >= chunk_.size()) {
    if (!next_piece()) {
      if (ml_ != InString::none || depth_ != 0) throw NeedWholeFile{};  // an unclosed string or array
      return nullptr;
    }
    segment_line_ = piece_line_;
    if (fast_segment(piece_, fast_)) {
      // As parse_segment stores a repeat: one segment of repeat x cycles, or with a PC range
      // the segment repeat times.
      current_ = fast_.segment;
      current_.signals = fast_.signals;
      if (current_.pc_begin == current_.pc_end) {
        current_.cycles *= fast_.repeat;  // checked by fast_segment
        add_totals(current_, 1);
      } else {
        repeat_left_ = fast_.repeat - 1;
        add_totals(current_, fast_.repeat);
      }
      return &current_;
    }
    chunk_ = Workload{};
    chunk_next_ = 0;
    try {
      const toml::table root = toml::parse(piece_, file_.string());
      const toml::node* segs = root.get("segment");
      const toml::array* arr = segs ? segs->as_array() : nullptr;
      if (root.size() != 1 || !arr || arr->size() != 1 || !arr->get(0)->is_table()) throw NeedWholeFile{};
      add_segment_table(*arr->get(0)->as_table(), chunk_);
    } catch (const toml::parse_error&) {
      throw NeedWholeFile{};
    } catch (const Error&) {
      throw NeedWholeFile{};
    }
    // The totals, which must fit 64 bits as a whole-file read checks them.
    for (std::size_t i = 0; i < chunk_.size(); ++i) add_totals(chunk_.segment(i), 1);
  }
  current_ = chunk_.segment(chunk_next_++);
  return &current_;
}

void TomlSegmentStream::rewind() {
  if (std::fseek(f_, first_offset_, SEEK_SET) != 0)
    throw Error(errc::io, fmt::format("{}: cannot seek back to the first segment", file_.string()));
  base_ = first_offset_;
  pos_ = end_ = 0;
  eof_ = false;
  // The first header again, as open() left it.
  line_ = "[[segment]]";
  line_no_ = first_line_;
  have_line_ = true;
  ml_ = InString::none;
  depth_ = 0;
  chunk_ = Workload{};
  chunk_next_ = 0;
  repeat_left_ = 0;
  total_cycles_ = 0;
  totals_.clear();
}

}  // namespace pmc::detail
