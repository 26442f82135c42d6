// libFuzzer: CPUID dumps (pmc::parse_cpuid_dump: `cpuid -r` and AIDA64/InstLatx64 formats),
// then decoding the table into a CpuInfo as load_cpuid_dump does. Anything but pmc::Error
// escaping, and any sanitizer report, is a finding.
#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    pmc::CpuidTable table = pmc::parse_cpuid_dump(text, "fuzz.txt");
    (void)pmc::decode_cpuid(std::move(table), "fuzz.txt");
  } catch (const pmc::Error&) {
  }
  return 0;
}
