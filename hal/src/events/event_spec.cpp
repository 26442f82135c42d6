#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include "event_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace pmc {

const EventModifier* EventSpec::modifier(std::string_view n) const {
  for (const auto& m : modifiers)
    if (m.name == n) return &m;
  return nullptr;
}

namespace {
// Echoed input is cut to this many bytes: a 100 KB event string would make a 100 KB message.
constexpr std::size_t kEchoLimit = 80;
}  // namespace

std::string event_error(const EventSpec& spec, std::size_t column, std::string_view what) {
  std::string shown = spec.text;
  std::string detail(what);
  if (spec.text.size() > kEchoLimit) {
    shown = fmt::format("{}... ({} bytes)", std::string_view(spec.text).substr(0, kEchoLimit), spec.text.size());
    // The message echoes the string once: a long name quoted again in `what` becomes a pointer
    // to the text above.
    for (const std::string& part : {spec.name, spec.pmu}) {
      if (part.size() <= kEchoLimit) continue;
      const std::string quoted = "'" + part + "'";
      for (std::size_t at = detail.find(quoted); at != std::string::npos; at = detail.find(quoted, at))
        detail.replace(at, quoted.size(), "(the name above)");
      for (std::size_t at = detail.find(part); at != std::string::npos; at = detail.find(part, at))
        detail.replace(at, part.size(), "(the name above)");
    }
  }
  if (column == 0) return fmt::format("event '{}': {}", shown, detail);
  return fmt::format("event '{}', column {}: {}", shown, column, detail);
}

namespace {

// Bare lower-case flags that are modifiers rather than unit masks (libpfm4 reads ":u" as
// "u=1"). Unit masks are matched case-insensitively, so a MESI "I" must be written in upper case
// to be told apart from the invert flag "i". perf's letters u, k and p are read by add_letters.
bool is_flag_modifier(std::string_view part) { return part == "e" || part == "i" || part == "t"; }

bool is_name_char(char c) {  // ASCII, whatever the locale
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

[[noreturn]] void fail(const EventSpec& spec, std::size_t column, std::string_view what) {
  throw Error(errc::parse, event_error(spec, column, what));
}

std::uint64_t parse_number(const EventSpec& spec, std::string_view text, std::size_t column,
                           std::string_view modifier, std::string_view kind = "modifier") {
  if (text.empty()) fail(spec, column, fmt::format("{} '{}' needs a value after '='", kind, modifier));
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec == std::errc::result_out_of_range)
    fail(spec, column, fmt::format("value '{}' of {} '{}' is too large", text, kind, modifier));
  if (ec != std::errc() || ptr != digits.data() + digits.size())
    fail(spec, column, fmt::format("value '{}' of {} '{}' is not a number", text, kind, modifier));
  return value;
}

// perf's modifier letters, alone or combined as perf writes them: "u", "uk", "ppp", "ukpp". u is
// user, k kernel, and the number of p's the precision (p, pp, ppp: one modifier). A letter
// repeated in one word counts once for u and k (perf's "uu" is "u"). False when the word has
// another character (then it is a unit mask, or another modifier); with `strict` (after perf's
// "PMU/.../"), any other letter is refused naming it.
bool add_letters(EventSpec& spec, std::string_view word, std::size_t column, bool strict) {
  for (std::size_t i = 0; i < word.size(); ++i)
    if (word[i] != 'u' && word[i] != 'k' && word[i] != 'p') {
      if (!strict) return false;
      fail(spec, column + i,
           fmt::format("unknown modifier '{}' after the PMU's terms (perf's letters here: u, k, p, pp, ppp)", word[i]));
    }
  const std::size_t p = static_cast<std::size_t>(std::count(word.begin(), word.end(), 'p'));
  const std::size_t first_p = word.find('p');
  if (p > 3) fail(spec, column + first_p, fmt::format("precision '{}' has {} p's: at most 3 (p, pp, ppp)", word, p));
  for (const char level : {'u', 'k'})
    if (const std::size_t at = word.find(level); at != std::string_view::npos)
      spec.modifiers.push_back(EventModifier{std::string(1, level), std::nullopt, column + at});
  if (p) {
    for (const EventModifier& m : spec.modifiers)
      if (m.name == "p" || m.name == "pp" || m.name == "ppp")
        fail(spec, column + first_p,
             fmt::format("precision ':{}' conflicts with ':{}' at column {}: give one of p, pp, ppp", std::string(p, 'p'),
                         m.name, m.column));
    spec.modifiers.push_back(EventModifier{std::string(p, 'p'), std::nullopt, column + first_p});
  }
  return true;
}

// perf's "PMU/term[=value],.../[modifiers]": the terms in order (perf's period= term is the
// period modifier), then u, k and p letters.
EventSpec parse_perf_form(EventSpec spec, std::string_view text, std::size_t slash) {
  const std::string_view pmu = text.substr(0, slash);
  if (pmu.empty()) fail(spec, 1, "missing PMU name before '/' (perf's PMU/term=value,.../)");
  for (std::size_t i = 0; i < pmu.size(); ++i)
    if (!is_name_char(pmu[i])) fail(spec, i + 1, fmt::format("unexpected character '{}' in PMU name", pmu[i]));
  const std::size_t close = text.find('/', slash + 1);
  if (close == std::string_view::npos)
    fail(spec, slash + 1, "a '/' without its closing '/' (perf's PMU/term=value,.../)");
  spec.pmu = std::string(pmu);
  spec.name = std::string(text.substr(0, close + 1));
  const std::string_view body = text.substr(slash + 1, close - slash - 1);
  if (body.empty()) fail(spec, slash + 2, "no terms between the '/'s (write PMU/event=0xNN,umask=0xNN/)");
  for (std::size_t pos = 0;;) {
    const std::size_t comma = std::min(body.find(',', pos), body.size());
    const std::string_view term = body.substr(pos, comma - pos);
    const std::size_t column = slash + 2 + pos;
    if (term.empty()) fail(spec, column, "empty term between ',' separators");
    const std::size_t eq = term.find('=');
    const std::string_view name = term.substr(0, eq);
    if (name.empty()) fail(spec, column, "missing term name before '='");
    for (std::size_t i = 0; i < name.size(); ++i)
      if (!is_name_char(name[i]))
        fail(spec, column + i, fmt::format("unexpected character '{}' in term name", name[i]));
    EventModifier t{std::string(name), std::nullopt, column};
    if (eq != std::string_view::npos) t.value = parse_number(spec, term.substr(eq + 1), column + eq + 1, name, "term");
    if (name == "period" && !t.value) fail(spec, column, "term 'period' needs a value (period=N)");
    for (const auto& list : {&spec.terms, &spec.modifiers})
      for (const EventModifier& other : *list)
        if (other.name == name)
          fail(spec, column, fmt::format("term '{}' given twice (first at column {})", name, other.column));
    (name == "period" ? spec.modifiers : spec.terms).push_back(std::move(t));
    if (comma == body.size()) break;
    pos = comma + 1;
  }
  if (spec.terms.empty())
    fail(spec, slash + 2, "no event terms (only period=): give the event's terms, e.g. event=0xNN, or config=0xNN");
  const std::string_view mods = text.substr(close + 1);
  if (!mods.empty()) add_letters(spec, mods, close + 2, true);
  return spec;
}

}  // namespace

EventSpec parse_event(std::string_view text) {
  detail::count_parse();
  EventSpec spec;
  spec.text = std::string(text);
  if (text.empty()) fail(spec, 0, "empty event name");
  if (const std::size_t slash = text.find('/'); slash != std::string_view::npos)
    return parse_perf_form(std::move(spec), text, slash);
  std::size_t pos = 0;
  // "PMU::" is a prefix only where the first ':' of the string is doubled.
  if (auto sep = text.find(':'); sep != std::string_view::npos && text.substr(sep, 2) == "::") {
    spec.pmu = std::string(text.substr(0, sep));
    if (spec.pmu.empty()) fail(spec, 1, "missing PMU name before '::'");
    for (std::size_t i = 0; i < spec.pmu.size(); ++i)
      if (!is_name_char(spec.pmu[i]))
        fail(spec, i + 1, fmt::format("unexpected character '{}' in PMU name", spec.pmu[i]));
    pos = sep + 2;
  }
  // One allocation per list: as many parts as separators, at most.
  const auto parts = static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end(), ':'));
  spec.unit_masks.reserve(parts);
  spec.unit_mask_columns.reserve(parts);
  spec.modifiers.reserve(parts);
  bool first = true;
  while (true) {
    std::size_t end = text.find(':', pos);
    std::string_view part = text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
    std::size_t column = pos + 1;
    if (part.empty()) {
      fail(spec, column, first ? "missing event name" : "empty field between ':' separators");
    }
    if (first) {
      for (std::size_t i = 0; i < part.size(); ++i)
        if (!is_name_char(part[i]))
          fail(spec, column + i, fmt::format("unexpected character '{}' in event name", part[i]));
      spec.name = std::string(part);
      first = false;
    } else if (auto eq = part.find('='); eq != std::string_view::npos) {
      std::string_view name = part.substr(0, eq);
      if (name.empty()) fail(spec, column, "missing modifier name before '='");
      for (std::size_t i = 0; i < name.size(); ++i)
        if (!is_name_char(name[i]))
          fail(spec, column + i, fmt::format("unexpected character '{}' in modifier name", name[i]));
      EventModifier m;
      m.name = std::string(name);
      m.column = column;
      m.value = parse_number(spec, part.substr(eq + 1), column + eq + 1, name);
      spec.modifiers.push_back(std::move(m));
    } else if (is_flag_modifier(part)) {
      spec.modifiers.push_back(EventModifier{std::string(part), std::nullopt, column});
    } else if (add_letters(spec, part, column, false)) {
      // u, k, p and their combinations ("uk", "ppp")
    } else {
      for (std::size_t i = 0; i < part.size(); ++i)
        if (!is_name_char(part[i]))
          fail(spec, column + i, fmt::format("unexpected character '{}' in unit mask", part[i]));
      spec.unit_masks.emplace_back(part);
      spec.unit_mask_columns.push_back(column);
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
    if (pos == text.size()) fail(spec, pos + 1, "nothing after the last ':'");
  }
  return spec;
}

}  // namespace pmc
