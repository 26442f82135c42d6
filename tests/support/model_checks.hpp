// What the device-model tests (tests/models/<model>/) share: a workload segment written inline,
// and the check that a call throws a pmc::Error of a kind whose message holds given parts.
#pragma once

#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace pmc_test {

// A segment of `cycles` with the signals given (per cycle), in `mode`, halted or not.
inline pmc::OwnedSegment seg(std::uint64_t cycles, std::initializer_list<std::pair<const char*, std::uint64_t>> signals,
                             pmc::Mode mode = pmc::Mode::user, bool halted = false) {
  pmc::OwnedSegment s(cycles, mode);
  s->halted = halted;
  for (const auto& [name, k] : signals) s.signal(name, k);
  return s;
}

// True when f() throws pmc::Error of `code` whose message contains every fragment.
template <class F>
bool throws(F&& f, pmc::errc code, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST_MESSAGE("error: " << e.what());
    if (e.kind() != code) return false;
    const std::string what = e.what();
    for (const auto& fragment : fragments)
      if (what.find(fragment) == std::string::npos) return false;
    return true;
  }
  return false;
}

}  // namespace pmc_test
