// Event lists in perf's -e syntax (pmc/event_list.hpp): the commas and braces only; the event
// strings are parsed by parse_event (event_spec.cpp) when a session adds them.
#include <pmc/error.hpp>
#include <pmc/event_list.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>

namespace pmc {

namespace {

// The letters of a perf modifier word ("uk", "ppp") that it holds, as u, k and a p count; false
// when the word is not one.
struct Letters {
  bool u = false, k = false;
  std::size_t p = 0;
};
bool letters_of(std::string_view word, Letters& out) {
  if (word.empty()) return false;
  Letters seen = out;
  for (char c : word) {
    if (c == 'u') seen.u = true;
    else if (c == 'k') seen.k = true;
    else if (c == 'p') ++seen.p;
    else return false;
  }
  out = seen;
  return true;
}

// A group's modifiers applied to one member, as perf does ({a,b}:u counts a:u and b:u): the
// letters the member lacks are appended, to its PMU/.../ form directly, else after a ':'. A
// member that says otherwise (u=0 against the group's u, another precision) is a conflict.
std::string with_group_modifiers(std::string member, const Letters& group, std::string_view group_text,
                                 const std::function<Error(std::string_view)>& bad) {
  Letters have;
  std::size_t explicit_u = 2, explicit_k = 2;  // u=N / k=N in the member: N, 2 when absent
  const std::size_t slash = member.find('/');
  const bool perf_form = slash != std::string::npos;
  if (perf_form) {
    const std::size_t close = member.find('/', slash + 1);
    if (close != std::string::npos) (void)letters_of(std::string_view(member).substr(close + 1), have);
  } else {
    std::string_view rest = member;
    if (const std::size_t pmu = rest.find("::"); pmu != std::string_view::npos) rest.remove_prefix(pmu + 2);
    for (std::size_t pos = rest.find(':'); pos != std::string_view::npos;) {
      const std::size_t next = rest.find(':', pos + 1);
      const std::string_view part = rest.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1);
      if (part.size() == 3 && part[1] == '=' && (part[0] == 'u' || part[0] == 'k') && (part[2] == '0' || part[2] == '1'))
        (part[0] == 'u' ? explicit_u : explicit_k) = static_cast<std::size_t>(part[2] - '0');
      else
        (void)letters_of(part, have);
      pos = next;
    }
  }
  auto conflict = [&](std::string_view what) {
    return bad(fmt::format("the group's ':{}' conflicts with {} in its member '{}'", group_text, what, member));
  };
  if (group.u && explicit_u == 0) throw conflict("u=0");
  if (group.k && explicit_k == 0) throw conflict("k=0");
  if (group.p && have.p && group.p != have.p) throw conflict(fmt::format("':{}'", std::string(have.p, 'p')));
  std::string add;
  if (group.u && !have.u && explicit_u == 2) add += 'u';
  if (group.k && !have.k && explicit_k == 2) add += 'k';
  if (group.p && !have.p) add += std::string(group.p, 'p');
  if (add.empty()) return member;
  if (perf_form && member.find('/', slash + 1) != std::string::npos) return member + add;
  return member + ":" + add;
}

}  // namespace

std::vector<EventGroup> parse_event_list(std::string_view list) {
  auto bad = [&](std::string_view what) { return Error(errc::parse, fmt::format("event list '{}': {}", list, what)); };
  // One event of the list or of a group: not empty, no brace.
  auto event = [&](std::string_view e) {
    if (e.empty()) throw bad("an empty entry");
    if (e.find('{') != std::string_view::npos) throw bad("groups do not nest");
    if (e.find('}') != std::string_view::npos) throw bad("a brace inside an event name");
    return std::string(e);
  };
  // Where the entry starting at `from` ends: at the first of `stops` outside perf's "PMU/.../"
  // terms, whose commas belong to the event (cpu/event=0x3c,umask=0/).
  auto entry_end = [&](std::size_t from, std::size_t limit, std::string_view stops) {
    bool terms = false;
    for (std::size_t i = from; i < limit; ++i) {
      if (list[i] == '/') terms = !terms;
      else if (!terms && stops.find(list[i]) != std::string_view::npos) return i;
    }
    return limit;
  };
  if (list.empty()) throw bad("an empty entry");
  std::vector<EventGroup> out;
  std::size_t pos = 0;
  while (pos < list.size()) {
    if (list[pos] == '{') {
      const std::size_t close = entry_end(pos + 1, list.size(), "}");
      if (close == list.size()) throw bad("a '{' without its '}'");
      EventGroup group;
      group.braces = true;
      for (std::size_t from = pos + 1;;) {
        const std::size_t comma = entry_end(from, close, ",");
        group.events.push_back(event(list.substr(from, comma - from)));
        if (comma == close) break;
        from = comma + 1;
      }
      pos = close + 1;
      if (pos < list.size() && list[pos] == ':') {  // perf's group modifiers: {a,b}:u
        const std::size_t end = std::min(list.find(',', pos), list.size());
        const std::string_view mods = list.substr(pos + 1, end - pos - 1);
        Letters group_letters;
        if (!letters_of(mods, group_letters))
          throw bad(fmt::format("group modifier ':{}': a group takes perf's letters u, k, p, pp, ppp (as ':uk')", mods));
        if (group_letters.p > 3) throw bad(fmt::format("group modifier ':{}' has {} p's: at most 3", mods, group_letters.p));
        for (std::string& member : group.events) member = with_group_modifiers(std::move(member), group_letters, mods, bad);
        pos = end;
      }
      out.push_back(std::move(group));
      if (pos < list.size() && list[pos] != ',')
        throw bad("a group ends with '}' (or '}:' and modifiers) and is followed by ',' or nothing");
    } else {
      const std::size_t comma = entry_end(pos, list.size(), ",");
      const std::string_view e = list.substr(pos, comma - pos);
      if (e.find('{') != std::string_view::npos) throw bad("a brace inside an event name");
      out.push_back({{event(e)}, false});
      pos = comma;
    }
    if (pos < list.size()) {
      ++pos;  // the comma
      if (pos == list.size()) throw bad("an empty entry");
    }
  }
  return out;
}

std::vector<EventGroup> parse_event_list(const std::vector<std::string>& lists) {
  std::vector<EventGroup> out;
  for (const std::string& list : lists) {
    std::vector<EventGroup> groups = parse_event_list(list);
    out.insert(out.end(), std::make_move_iterator(groups.begin()), std::make_move_iterator(groups.end()));
  }
  return out;
}

}  // namespace pmc
