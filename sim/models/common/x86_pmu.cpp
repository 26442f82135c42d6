// The x86 device models' shared parts (x86_pmu.hpp).
#include "x86_pmu.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

namespace pmc::sim {

void X86Device::set_reader_cpl(unsigned cpl) {
  if (cpl > 3) throw Error(errc::invalid_argument, fmt::format("CPL {} does not exist (0..3)", cpl));
  reader_cpl_ = cpl;
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

}  // namespace x86

}  // namespace pmc::sim
