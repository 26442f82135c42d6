// The device model behind a session of access "sim" (not public API: the tests reach it through
// the static core).
#pragma once

#include "session_impl.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>

namespace pmc_test {

inline pmc::Device& device(pmc::Session& s) {
  pmc::Device* d = pmc::detail::SessionAccess::device(s);
  if (!d) throw pmc::Error(pmc::errc::not_supported, "the session has no simulated device (yet)");
  return *d;
}

}  // namespace pmc_test
