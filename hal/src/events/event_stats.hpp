// How often the core parses and encodes event strings: issue 22 found one event of
// `pmc stat -e` parsed and encoded five times. tests/hal/session/test_parse_once.cpp counts with
// these that it is once each. Relaxed atomic counters: nothing orders by them, and an increment
// costs a parse nothing it would notice (neither is on a hot path: Session::read does neither).
#pragma once

#include <cstdint>

namespace pmc::detail {

struct EventStats {
  std::uint64_t parses = 0;   // parse_event calls (hal/src/events/event_spec.cpp)
  std::uint64_t encodes = 0;  // Backend::encode calls the core made (Hal::encode, Session's adds)
};

void count_parse() noexcept;
void count_encode() noexcept;
// The counts since the process started.
EventStats event_stats() noexcept;

}  // namespace pmc::detail
