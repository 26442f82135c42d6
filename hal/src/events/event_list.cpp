// Event lists in perf's -e syntax (pmc/event_list.hpp): the commas and braces only; the event
// strings are parsed by parse_event (event_spec.cpp) when a session adds them.
#include <pmc/error.hpp>
#include <pmc/event_list.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace pmc {

std::vector<EventGroup> parse_event_list(std::string_view list) {
  auto bad = [&](std::string_view what) { return Error(errc::parse, fmt::format("event list '{}': {}", list, what)); };
  // One event of the list or of a group: not empty, no brace.
  auto event = [&](std::string_view e) {
    if (e.empty()) throw bad("an empty entry");
    if (e.find('{') != std::string_view::npos) throw bad("groups do not nest");
    if (e.find('}') != std::string_view::npos) throw bad("a brace inside an event name");
    return std::string(e);
  };
  if (list.empty()) throw bad("an empty entry");
  std::vector<EventGroup> out;
  std::size_t pos = 0;
  while (pos < list.size()) {
    if (list[pos] == '{') {
      const std::size_t close = list.find('}', pos);
      if (close == std::string_view::npos) throw bad("a '{' without its '}'");
      EventGroup group;
      group.braces = true;
      const std::string_view inner = list.substr(pos + 1, close - pos - 1);
      for (std::size_t from = 0;;) {
        const std::size_t comma = inner.find(',', from);
        group.events.push_back(event(inner.substr(from, comma == std::string_view::npos ? comma : comma - from)));
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
      out.push_back(std::move(group));
      pos = close + 1;
      if (pos < list.size() && list[pos] != ',') throw bad("a group ends with '}' and is followed by ',' or nothing");
    } else {
      const std::size_t comma = std::min(list.find(',', pos), list.size());
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
