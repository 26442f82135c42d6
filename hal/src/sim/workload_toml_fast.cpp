// The streamed TOML reader's quick path (workload_toml_stream.hpp): one [[segment]] piece in
// the plain shape generators write, read without building a TOML document.
//
// It takes only what it is sure of and says no to everything else, which then goes through
// toml++ and the checks of workload_toml.cpp (and, if invalid, the whole-file reader's error):
// a `key = value` line per key, comments and blank lines; integers in decimal (no sign, leading
// zero or '_') or 0x hex, at most 2^63 - 1 as TOML's; `mode` "user" or "kernel"; `halted` true
// or false; `pc = [begin, end]` as integers; `signals = { name = n, ... }` on one line with bare,
// dotted or quoted names (no escapes). It says no to any value the TOML form's checks would
// refuse (docs/workload-format.md), so a segment it takes is the one parse_segment would make.
#include "workload_toml_stream.hpp"

#include "workload_format.hpp"

#include <limits>
#include <string>
#include <string_view>

namespace pmc::detail {

namespace {

constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
constexpr std::size_t kMaxSignals = 1024;  // more: the full path (and its limits) decides

bool blank(char c) { return c == ' ' || c == '\t'; }
bool bare_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  void skip() {
    while (i < s.size() && blank(s[i])) ++i;
  }
  bool eat(char c) {
    skip();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // The end of the line's content: blanks, then nothing or a comment.
  bool at_end() {
    skip();
    return i == s.size() || s[i] == '#';
  }
  bool integer(std::uint64_t& v) {
    skip();
    v = 0;
    const std::size_t start = i;
    if (s.substr(i, 2) == "0x") {
      i += 2;
      const std::size_t digits = i;
      for (; i < s.size(); ++i) {
        const char c = s[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) break;
        if (v > (kInt64Max >> 4)) return false;
        v = v << 4 | static_cast<unsigned>(d);
      }
      if (i == digits) return false;
    } else {
      for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        const unsigned d = static_cast<unsigned>(s[i] - '0');
        if (v > (kInt64Max - d) / 10) return false;
        v = v * 10 + d;
      }
      if (i == start || (s[start] == '0' && i - start > 1)) return false;
    }
    return v <= kInt64Max && (i == s.size() || !(bare_char(s[i]) || s[i] == '.' || s[i] == '+'));
  }
  // A bare key, or a quoted one without escapes: a view of it in the line.
  bool key(std::string_view& out) {
    skip();
    if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
      const char q = s[i];
      const std::size_t close = s.find(q, i + 1);
      if (close == std::string_view::npos) return false;
      out = s.substr(i + 1, close - i - 1);
      if (out.empty() || out.find('\\') != std::string_view::npos) return false;
      i = close + 1;
      return true;
    }
    const std::size_t start = i;
    while (i < s.size() && bare_char(s[i])) ++i;
    out = s.substr(start, i - start);
    return i > start;
  }
  bool word(std::string_view w) {
    skip();
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return i == s.size() || !bare_char(s[i]);
  }
};

bool signals_table(Cursor& c, FastSegment& out) {
  if (!c.eat('{')) return false;
  if (c.eat('}')) return true;
  std::string dotted;  // a dotted key's parts joined (l2_ld.m = 1); most names are one part
  do {
    std::string_view name;
    if (!c.key(name)) return false;
    if (c.eat('.')) {
      dotted.assign(name);
      do {
        std::string_view part;
        if (!c.key(part)) return false;
        dotted += '.';
        dotted += part;
      } while (c.eat('.'));
      name = dotted;
    }
    std::uint64_t v = 0;
    if (name == kCycles || !c.eat('=') || !c.integer(v) || out.signals.size() >= kMaxSignals) return false;
    Signal id{};
    bool known = false;
    for (const auto& [n, s] : out.names)
      if (n == name) {
        id = s;
        known = true;
        break;
      }
    if (!known) {
      id = signal(name);
      if (out.names.size() < 64) out.names.emplace_back(std::string(name), id);
    }
    for (const SignalCount& have : out.signals)
      if (have.signal == id) return false;
    out.signals.push_back({id, v});
  } while (c.eat(','));
  return c.eat('}');
}

}  // namespace

bool fast_segment(std::string_view piece, FastSegment& out) {
  out.segment = Segment{};
  out.signals.clear();
  out.repeat = 1;
  enum : unsigned { kCyclesKey = 1, kMode = 2, kRepeat = 4, kHalted = 8, kPc = 16, kCpu = 32, kPid = 64, kParent = 128, kSignals = 256 };
  unsigned seen = 0;
  Segment& s = out.segment;
  std::size_t pos = piece.find('\n');  // the header line
  std::string_view key;
  while (pos != std::string_view::npos && pos + 1 < piece.size()) {
    const std::size_t start = pos + 1;
    pos = piece.find('\n', start);
    std::string_view line = piece.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Cursor c{line};
    if (c.at_end()) continue;
    std::uint64_t v = 0;
    if (!c.key(key) || !c.eat('=')) return false;
    unsigned bit = 0;
    if (key == "cycles") {
      bit = kCyclesKey;
      if (!c.integer(s.cycles) || s.cycles == 0) return false;
    } else if (key == "mode") {
      bit = kMode;
      c.skip();
      if (c.word("\"user\"") || c.word("'user'")) s.mode = Mode::user;
      else if (c.word("\"kernel\"") || c.word("'kernel'")) s.mode = Mode::kernel;
      else return false;
    } else if (key == "repeat") {
      bit = kRepeat;
      if (!c.integer(out.repeat) || out.repeat == 0) return false;
    } else if (key == "halted") {
      bit = kHalted;
      if (c.word("true")) s.halted = true;
      else if (c.word("false")) s.halted = false;
      else return false;
    } else if (key == "pc") {
      bit = kPc;
      if (!c.eat('[') || !c.integer(s.pc_begin) || !c.eat(',') || !c.integer(s.pc_end)) return false;
      c.eat(',');  // TOML allows a trailing comma in an array
      if (!c.eat(']') || s.pc_begin >= s.pc_end) return false;
    } else if (key == "cpu") {
      bit = kCpu;
      if (!c.integer(v) || v > 63) return false;
      s.cpu = static_cast<unsigned>(v);
    } else if (key == "pid") {
      bit = kPid;
      if (!c.integer(s.pid)) return false;
    } else if (key == "parent") {
      bit = kParent;
      if (!c.integer(s.parent) || s.parent == 0) return false;
    } else if (key == "signals") {
      bit = kSignals;
      if (!signals_table(c, out)) return false;
    } else {
      return false;  // a key the form does not have, or a dotted one: the full path words it
    }
    if ((seen & bit) || !c.at_end()) return false;
    seen |= bit;
  }
  if (!(seen & kCyclesKey)) return false;
  if (s.parent != 0 && (s.pid == 0 || s.parent == s.pid)) return false;
  if (!checked_mul(s.cycles, out.repeat)) return false;
  return s.pc_begin == s.pc_end || out.repeat <= kMaxExpandedPcRepeat;
}

}  // namespace pmc::detail
