// CPUID dump files, in the two formats people actually have:
//
// 1. Linux `cpuid -r` / `cpuid -r -1` (Todd Allen's cpuid tool):
//        CPU 0:
//           0x00000001 0x00: eax=0x000306c3 ebx=0x00100800 ecx=0x7ffafbff edx=0xbfebfbff
//    One line per (leaf, subleaf). A dump of several CPUs repeats everything under "CPU n:"
//    headers; only the first CPU is read. Old versions of the tool printed no subleaf
//    ("0x00000001: eax=..."), which reads as subleaf 0.
//
// 2. AIDA64 / InstLatx64:
//        CPUID 0000000A: 07300403-00000000-00000000-00000603
//        CPUID 00000004: 1C004121-01C0003F-0000003F-00000000 [SL 00]
//    One line per leaf, registers EAX-EBX-ECX-EDX, then free text. A repeated leaf is the next
//    subleaf (0, 1, 2, ...) unless "[SL nn]" names it (hex). AIDA64 reports indent the lines and
//    may leave out the colon. A second leaf-0 line starts the next CPU's dump: reading stops.
//
// A line is a CPUID line when it starts (after blanks) with "0x" (format 1), or with "CPUID",
// blanks, and a leaf token: all hex digits, or starting with a digit and ending in ':'
// (format 2). Prose such as "CPUID Registers (CPU #0):" or "CPUID 80000002... brand" is
// skipped. A CPUID line that does not parse is an error "file:line: what is wrong"; every
// other line is ignored.
#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/input_file.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace pmc {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim_left(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits at runs of blanks.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  s = trim_left(s);
  while (!s.empty()) {
    std::size_t end = 0;
    while (end < s.size() && !is_blank(s[end])) ++end;
    out.push_back(s.substr(0, end));
    s = trim_left(s.substr(end));
  }
  return out;
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// 1 to 8 hex digits, nothing else (no prefix, no sign).
std::optional<std::uint32_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 8) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    if (!is_hex_digit(c)) return std::nullopt;
    const unsigned d = (c <= '9') ? static_cast<unsigned>(c - '0')
                                  : static_cast<unsigned>((c | 0x20) - 'a' + 10);
    v = (v << 4) | d;
  }
  return v;
}

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_hex_digit(c)) return false;
  }
  return true;
}

// "CPU:" or "CPU 3:" (the `cpuid -r` per-CPU header).
bool is_cpu_header(std::string_view s) {
  if (s.substr(0, 3) != "CPU") return false;
  std::string_view rest = trim_left(s.substr(3));
  std::size_t i = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
  return trim(rest.substr(i)) == ":";
}

std::string quoted(std::string_view s) { return fmt::format("'{}'", s); }

class DumpParser {
 public:
  explicit DumpParser(const std::string& name) : name_(name) {}

  CpuidTable run(std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM (Windows tools)
    while (!done_ && !text.empty()) {
      ++line_no_;
      const std::size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      parse_line(line);  // a CRLF file's '\r' is a blank like any other
    }
    if (table_.empty()) {
      throw Error(errc::parse,
                  fmt::format("{}: no CPUID leaves found (expected `cpuid -r` lines such as "
                              "'0x00000001 0x00: eax=... ebx=... ecx=... edx=...' or AIDA64/"
                              "InstLatx64 lines such as 'CPUID 00000001: EAX-EBX-ECX-EDX')",
                              name_));
    }
    return std::move(table_);
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(errc::parse, fmt::format("{}:{}: {}", name_, line_no_, what));
  }

  void parse_line(std::string_view line) {
    const std::string_view s = trim_left(line);
    if (s.substr(0, 2) == "0x") {
      parse_cpuid_r(trim(s));
    } else if (s.substr(0, 5) == "CPUID" && s.size() > 5 && is_blank(s[5])) {
      const std::string_view rest = trim_left(s.substr(5));
      std::size_t end = 0;
      while (end < rest.size() && !is_blank(rest[end]) && rest[end] != ':') ++end;
      const std::string_view token = rest.substr(0, end);
      const bool colon = end < rest.size() && rest[end] == ':';
      const bool leading_digit = !token.empty() && token[0] >= '0' && token[0] <= '9';
      if (all_hex(token) || (colon && leading_digit)) parse_aida(rest);
    } else if (is_cpu_header(trim(s))) {
      ++cpu_headers_;
      if (cpu_headers_ > 1 && !table_.empty()) done_ = true;
    }
  }

  // "0x00000004 0x01: eax=0x... ebx=0x... ecx=0x... edx=0x..." (s is trimmed)
  void parse_cpuid_r(std::string_view s) {
    const auto w = words(s);
    std::size_t next = 1;
    std::uint32_t leaf = 0, subleaf = 0;
    std::string_view leaf_word = w[0];
    const bool leaf_has_colon = leaf_word.back() == ':';
    if (leaf_has_colon) leaf_word.remove_suffix(1);
    const auto l = parse_hex(leaf_word.substr(2));
    if (!l) fail(fmt::format("bad leaf number {} (expected 0x and up to 8 hex digits)", quoted(leaf_word)));
    leaf = *l;
    if (!leaf_has_colon) {
      if (w.size() < 2) fail(fmt::format("expected a subleaf such as '0x00:' after leaf {}", leaf_word));
      std::string_view sub_word = w[1];
      if (sub_word.back() != ':' || sub_word.substr(0, 2) != "0x") {
        fail(fmt::format("expected a subleaf such as '0x00:' after leaf {}, found {}", leaf_word,
                         quoted(sub_word)));
      }
      sub_word.remove_suffix(1);
      const auto sl = parse_hex(sub_word.substr(2));
      if (!sl) fail(fmt::format("bad subleaf number {} (expected 0x and up to 8 hex digits)", quoted(sub_word)));
      subleaf = *sl;
      next = 2;
    }
    static constexpr std::string_view kNames[4] = {"eax=0x", "ebx=0x", "ecx=0x", "edx=0x"};
    const std::size_t found = w.size() - next;
    if (found != 4) {
      fail(fmt::format("expected 4 registers 'eax=0x... ebx=0x... ecx=0x... edx=0x...' after the "
                       "leaf, found {} field{}",
                       found, found == 1 ? "" : "s"));
    }
    std::uint32_t regs[4] = {};
    for (std::size_t i = 0; i < 4; ++i) {
      const std::string_view word = w[next + i];
      const auto v = word.substr(0, kNames[i].size()) == kNames[i]
                         ? parse_hex(word.substr(kNames[i].size()))
                         : std::nullopt;
      if (!v) {
        fail(fmt::format("expected {}<up to 8 hex digits>, found {}", kNames[i], quoted(word)));
      }
      regs[i] = *v;
    }
    add(leaf, subleaf, CpuidRegs{regs[0], regs[1], regs[2], regs[3]});
  }

  // "0000000A: 07300403-00000000-00000000-00000603 [SL 01] anything" (after "CPUID ")
  void parse_aida(std::string_view rest) {
    std::size_t end = 0;
    while (end < rest.size() && !is_blank(rest[end]) && rest[end] != ':') ++end;
    const std::string_view leaf_word = rest.substr(0, end);
    const auto leaf = parse_hex(leaf_word);
    if (!leaf) fail(fmt::format("bad leaf number {} (expected up to 8 hex digits)", quoted(leaf_word)));
    rest = rest.substr(end);
    if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
    rest = trim_left(rest);

    std::size_t regs_end = 0;
    while (regs_end < rest.size() && !is_blank(rest[regs_end])) ++regs_end;
    const std::string_view regs_word = rest.substr(0, regs_end);
    const std::string_view trailer = rest.substr(regs_end);
    if (regs_word.empty()) {
      fail(fmt::format("missing registers after leaf {} (expected EAX-EBX-ECX-EDX in hex)", leaf_word));
    }
    std::vector<std::string_view> parts;
    for (std::string_view r = regs_word;;) {
      const std::size_t dash = r.find('-');
      parts.push_back(r.substr(0, dash));
      if (dash == std::string_view::npos) break;
      r = r.substr(dash + 1);
    }
    if (parts.size() != 4) {
      fail(fmt::format("expected 4 registers EAX-EBX-ECX-EDX, found {} in {}", parts.size(), quoted(regs_word)));
    }
    static constexpr std::string_view kNames[4] = {"EAX", "EBX", "ECX", "EDX"};
    std::uint32_t regs[4] = {};
    for (std::size_t i = 0; i < 4; ++i) {
      const auto v = parse_hex(parts[i]);
      if (!v) fail(fmt::format("bad {} value {} (expected up to 8 hex digits)", kNames[i], quoted(parts[i])));
      regs[i] = *v;
    }

    std::uint32_t subleaf = 0;
    if (const std::size_t sl = trailer.find("[SL"); sl != std::string_view::npos) {
      const std::string_view after = trailer.substr(sl + 3);
      const std::size_t close = after.find(']');
      const std::string_view num = trim(after.substr(0, close));
      const auto v = close == std::string_view::npos ? std::nullopt : parse_hex(num);
      if (!v) fail(fmt::format("bad subleaf in {} (expected '[SL nn]' with nn in hex)", quoted(trim(trailer))));
      subleaf = *v;
      next_implicit_[*leaf] = subleaf + 1;
    } else if (*leaf != 0) {  // leaf 0 has no subleaves: a second one is the next CPU
      subleaf = next_implicit_[*leaf]++;
    }
    add(*leaf, subleaf, CpuidRegs{regs[0], regs[1], regs[2], regs[3]});
  }

  void add(std::uint32_t leaf, std::uint32_t subleaf, CpuidRegs regs) {
    const auto key = std::pair{leaf, subleaf};
    if (const auto it = first_line_.find(key); it != first_line_.end()) {
      if (leaf == 0 && subleaf == 0) {  // the next CPU's dump begins: keep the first CPU only
        done_ = true;
        return;
      }
      fail(fmt::format("leaf 0x{:08X} subleaf 0x{:X} already given on line {}", leaf, subleaf, it->second));
    }
    first_line_.emplace(key, line_no_);
    table_.set(leaf, subleaf, regs);
  }

  const std::string& name_;
  CpuidTable table_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> first_line_;
  std::map<std::uint32_t, std::uint32_t> next_implicit_;  // AIDA: next subleaf of a repeated leaf
  std::size_t line_no_ = 0;
  int cpu_headers_ = 0;
  bool done_ = false;
};

}  // namespace

CpuidTable parse_cpuid_dump(std::string_view text, const std::string& name) {
  return DumpParser(name).run(text);
}

CpuInfo load_cpuid_dump(const std::filesystem::path& path) {
  const std::string name = path.string();
  return decode_cpuid(parse_cpuid_dump(read_input_file(path, InputKind::cpuid_dump), name), name);
}

}  // namespace pmc
