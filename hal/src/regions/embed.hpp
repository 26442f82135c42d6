// What the C API (capi.cpp) and the regions (region.cpp) share: reading a session's counts into
// a caller's buffer, and the regions' setup from a C config.
#pragma once

#include <pmc/hal.hpp>
#include <pmc/session.hpp>

#include <cstdint>
#include <span>

namespace pmc::detail {

// The values of one read of s, in Session::read() order, into values (exactly that many), and
// when not null the times enabled / running. Values only is Session's hot-loop read (no
// allocation, no string); with the times it is Session::read(), which builds the readings.
void read_values(Session& s, std::span<std::uint64_t> values, std::uint64_t* time_enabled, std::uint64_t* time_running);

}  // namespace pmc::detail
