// The x86 device models' shared parts (x86_pmu.hpp).
#include "x86_pmu.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace pmc::sim {

void X86Device::set_reader_cpl(unsigned cpl) {
  if (cpl > 3) throw Error(errc::invalid_argument, fmt::format("CPL {} does not exist (0..3)", cpl));
  reader_cpl_ = cpl;
}

void X86Device::configure(std::string_view setting, std::uint64_t value) {
  if (setting != "clock_hz") return Device::configure(setting, value);
  if (value == 0)
    throw Error(errc::invalid_argument, "device setting clock_hz = 0: give the simulated CPU's clock in Hz (1 or more)");
  pmi_.set_clock(value);
}

void X86Device::check_rdpmc_privilege() const {
  if (reader_cpl_ > 0 && !cr4_pce_)
    throw Error(errc::register_fault, fmt::format("#GP: RDPMC at CPL {} with CR4.PCE = 0", reader_cpl_));
}

namespace x86 {

void wrmsr_fault(std::string_view reg, std::uint32_t msr, std::uint64_t value, std::string_view detail) {
  throw Error(errc::register_fault, fmt::format("#GP: wrmsr {} (MSR {:#x}) = {:#x}: {}", reg, msr, value, detail));
}

void msr_fault(std::string_view op, std::uint32_t msr, std::string_view why) {
  throw Error(errc::register_fault, fmt::format("#GP: {} of MSR {:#x}: {}", op, msr, why));
}

void rdpmc_fault(std::uint32_t ecx, std::string_view why) {
  throw Error(errc::register_fault, fmt::format("#GP: RDPMC with ECX = {:#x}: {}", ecx, why));
}

namespace {

// "2.40GHz", "1.80GHz", "800MHz" at the end of a brand string: the number before the unit, in Hz.
std::uint64_t brand_clock_hz(std::string_view brand) {
  while (!brand.empty() && brand.back() == ' ') brand.remove_suffix(1);
  double scale = 0;
  if (brand.ends_with("GHz")) scale = 1e9;
  else if (brand.ends_with("MHz")) scale = 1e6;
  else return 0;
  brand.remove_suffix(3);
  std::size_t start = brand.size();
  while (start > 0 && ((brand[start - 1] >= '0' && brand[start - 1] <= '9') || brand[start - 1] == '.')) --start;
  const std::string_view number = brand.substr(start);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || value <= 0) return 0;
  return static_cast<std::uint64_t>(std::llround(value * scale));
}

}  // namespace

std::uint64_t nominal_clock_hz(const CpuInfo& cpu) {
  const std::uint32_t max_leaf = cpu.max_leaf;
  if (max_leaf >= 0x15)
    if (const auto l = cpu.raw.get(0x15); l && l->eax && l->ebx && l->ecx)
      return static_cast<std::uint64_t>(l->ecx) * l->ebx / l->eax;
  if (max_leaf >= 0x16)
    if (const auto l = cpu.raw.get(0x16); l && (l->eax & 0xFFFF)) return std::uint64_t{l->eax & 0xFFFF} * 1000000;
  return brand_clock_hz(cpu.brand);
}

}  // namespace x86

}  // namespace pmc::sim
