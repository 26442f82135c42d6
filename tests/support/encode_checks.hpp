// What the encoding tests of the backends share: a Hal on a bundled CPUID dump's simulated PMU,
// and the message an event string is refused with (a test error when it encodes instead).
#pragma once

#include <boost/test/unit_test.hpp>

#include <pmc/pmc.hpp>

#include <string>

namespace pmc_test {

inline pmc::Hal open_dump(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = pmc::resolve_data(dump, pmc::DataKind::cpuid_dump).string();
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

inline std::string encode_error(const pmc::Hal& hal, const std::string& event, pmc::errc* kind = nullptr) {
  try {
    (void)hal.encode(event);
  } catch (const pmc::Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  BOOST_ERROR("'" << event << "' encoded but should not");
  return {};
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace pmc_test
