// libFuzzer: event strings (pmc::parse_event, docs/event-format.md), then, for the strings that
// parse, encoding by real backends (p5 on a Pentium MMX, p6 on a Pentium III, archperf on an Ice
// Lake, amd on a Zen 3: their data files and plugin code). Anything but pmc::Error escaping, and
// any sanitizer report, is a finding.
#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace {

std::vector<pmc::Hal>& hals() {
  static std::vector<pmc::Hal> all = [] {
    std::vector<pmc::Hal> out;
    for (const char* dump : {"pentium-mmx.txt", "pentium-iii.txt", "intel-icelake.txt", "amd-zen3.txt"}) {
      pmc::Config cfg;
      cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
      try {
        pmc::Hal hal = pmc::Hal::open(cfg);
        if (hal.backend()) out.push_back(std::move(hal));
      } catch (const pmc::Error&) {  // no plugins built: parsing is still fuzzed
      }
    }
    return out;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::fprintf(stderr, "fuzz_event_string: parsing, and encoding with %zu backends\n", hals().size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)pmc::parse_event(text);
  } catch (const pmc::Error&) {
    return 0;
  }
  for (const pmc::Hal& hal : hals()) {
    try {
      (void)hal.encode(text);
    } catch (const pmc::Error&) {
    }
  }
  return 0;
}
