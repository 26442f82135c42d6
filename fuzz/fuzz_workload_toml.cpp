// libFuzzer: workload TOML (pmc::parse_workload, docs/workload-format.md), then the workload's
// totals. Anything but pmc::Error escaping, and any sanitizer report, is a finding.
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const pmc::Workload w = pmc::parse_workload(text, "fuzz.toml");
    for (std::size_t i = 0; i < w.size(); ++i) {
      const pmc::Segment s = w.segment(i);
      for (const pmc::SignalCount& c : s.signals) (void)pmc::signal_name(c.signal);
    }
    (void)w.total_cycles();
    (void)w.total("instructions");
  } catch (const pmc::Error&) {
  }
  return 0;
}
