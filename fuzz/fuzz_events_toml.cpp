// libFuzzer: events TOML (pmc::EventCatalog::load_string, docs/event-format.md), then the
// catalog's own checks and lookups on what loaded. Anything but pmc::Error escaping, and any
// sanitizer report, is a finding.
#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  pmc::EventCatalog catalog;
  try {
    catalog.load_string(text, "fuzz.toml", "fuzz");
  } catch (const pmc::Error&) {
    return 0;
  }
  try {
    (void)catalog.validate(4);
    for (const pmc::EventDef* e : catalog.for_cpu("")) {
      (void)catalog.find(e->name);
      for (const auto& a : e->aliases) (void)catalog.find(a);
    }
    std::vector<std::string> masks;
    (void)catalog.find_generic("instructions", "", &masks);
  } catch (const pmc::Error&) {
  }
  return 0;
}
