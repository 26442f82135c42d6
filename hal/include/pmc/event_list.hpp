// Event lists: what perf stat's -e takes ("cycles,instructions", "{cycles,instructions},page-faults"),
// split into the events and the groups that must be counted together.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/event_list.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// One entry of an event list: an event alone, or the events of a "{a,b}" group, which
// Session::add_group counts at the same time.
struct EventGroup {
  std::vector<std::string> events;  // the event strings as written (not parsed here)
  bool braces = false;              // written as a "{...}" group
};

// Splits an event list at its top-level commas, in perf's syntax: "a,{b,c},d" is a, the group
// {b,c}, and d. Commas inside perf's "PMU/term=value,.../" belong to the event. A group's perf
// modifiers apply to each member, as in perf: "{a,b}:u" gives "a:u" and "b:u" (a member already
// holding a letter keeps it; u=0 or another precision in a member is refused as a conflict).
// Only the list's syntax is checked (each event string is parsed once, where it is
// added to a session). Throws pmc::Error(parse) naming the list for an empty entry, a '{' without
// its '}', a nested group, and a brace inside an event name.
PMC_API std::vector<EventGroup> parse_event_list(std::string_view list);
// Several lists (-e given more than once), one after the other.
PMC_API std::vector<EventGroup> parse_event_list(const std::vector<std::string>& lists);

}  // namespace pmc

#endif  // C++20
