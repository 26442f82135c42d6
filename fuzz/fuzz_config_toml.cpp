// libFuzzer: the config file (docs/user-guide.md "Config file"), through the loader's text entry
// point, as if read from a file in the current directory (so relative paths resolve there).
// Anything but pmc::Error escaping, and any sanitizer report, is a finding.
#include "config.hpp"

#include <pmc/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)pmc::detail::parse_config(text, "fuzz-config.toml");
  } catch (const pmc::Error&) {
  }
  return 0;
}
