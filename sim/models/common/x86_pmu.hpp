// What the four x86 device models (p5, p6, archperf, amd) share, written once: RDPMC's privilege
// gate, the tally of performance-monitoring interrupts, the event-select fields the model SDK's
// counting::evtsel does not decode, the 32-bit counter write, and the wording of a #GP.
// Built as the static library pmcmodel_x86 (sim/CMakeLists.txt), linked by each x86 model.
//
// Sources: docs/hardware/p5.md sections 4 and 7.4, docs/hardware/p6.md sections 3 and 4,
// docs/hardware/archperf.md sections 3-5, docs/hardware/amd.md sections 2.1, 3.1 and 4.
#pragma once

#include "x86_pmi.hpp"

#include <pmc/cpu.hpp>
#include <pmc/sdk/counting.hpp>
#include <pmc/sdk/model.hpp>

#include <cstdint>
#include <string_view>

namespace pmc::sim {

// An x86 PMU device: RDPMC at CPL > 0 faults unless CR4.PCE is set (p5.md 4, p6.md 4,
// archperf.md 5, amd.md 4), and each counter wrap with the interrupt enabled raises one PMI
// through the local APIC LVTPC entry (p6.md 4, archperf.md 4, amd.md 4; the P5 raises none and
// never calls raise_pmis). The counters, their registers and what they count are the model's.
// The models that interrupt also hold LVTPC and the simulated PMI handler (x86_pmi.hpp): their
// read() / write() pass those registers to pmi(), and their counters advance through
// pmi().advance(), which samples and reloads when the handler runs.
class X86Device : public Device {
 public:
  // CPL 0..3, else invalid_argument.
  void set_reader_cpl(unsigned cpl) override;
  void set_cr4_pce(bool enabled) override { cr4_pce_ = enabled; }
  [[nodiscard]] std::uint64_t interrupts() const override { return interrupts_; }
  // Device::configure: "clock_hz", the simulated CPU's clock in Hz (the PMI handler's CLOCK,
  // which freq= needs), for a CPU whose CPUID gives none or to override it.
  void configure(std::string_view setting, std::uint64_t value) override;

 protected:
  // The privilege check of RDPMC, made after the model has checked the counter index: a #GP
  // (register_fault) at CPL > 0 with CR4.PCE = 0.
  void check_rdpmc_privilege() const;
  // `wraps` more PMIs, saturating at 2^64 - 1.
  void raise_pmis(counting::u128 wraps) { interrupts_ = counting::saturating_add(interrupts_, wraps); }
  x86::PmiUnit& pmi() { return pmi_; }
  [[nodiscard]] const x86::PmiUnit& pmi() const { return pmi_; }

 private:
  x86::PmiUnit pmi_;
  unsigned reader_cpl_ = 0;
  bool cr4_pce_ = false;
  std::uint64_t interrupts_ = 0;
};

namespace x86 {

// Event-select fields at the same bits in the P6's PerfEvtSel0/1 (p6.md 3), IA32_PERFEVTSELx
// (archperf.md 3) and AMD's PerfEvtSel / PERF_CTL (amd.md 3.1); USR, OS, E, INT, INV and CMASK
// are counting::evtsel's. What EN enables differs: both P6 counters (PerfEvtSel0 only), one
// architectural counter (with GLOBAL_CTRL), one AMD counter (with PerfMonV2's GlobalCtl).
inline constexpr std::uint64_t kEventSelect = 0xFF;          // 7:0 (AMD: EventSelect[7:0])
inline constexpr unsigned kUmaskShift = 8;                   // UMASK 15:8
inline constexpr std::uint64_t kEn = std::uint64_t{1} << 22;  // EN

constexpr unsigned event_select(std::uint64_t sel) { return static_cast<unsigned>(sel & kEventSelect); }
constexpr unsigned unit_mask(std::uint64_t sel) { return static_cast<unsigned>(sel >> kUmaskShift) & 0xFF; }
constexpr bool enabled(std::uint64_t sel) { return (sel & kEn) != 0; }

// A WRMSR of a P6 PerfCtr (p6.md 4) or an IA32_PMCx (archperf.md 4): EAX[31:0] sign-extended to
// the counter's `width` bits (1..64); EDX is ignored.
constexpr std::uint64_t sign_extended_write(std::uint64_t value, unsigned width) {
  std::uint64_t v = value & 0xFFFFFFFFULL;
  if ((v & 0x80000000ULL) != 0) v |= 0xFFFFFFFF00000000ULL;
  return v & counting::width_mask(width);
}

// The #GP (register_fault) of each kind of access, worded alike in every x86 model:
//   "#GP: wrmsr REG (MSR 0x186) = 0x...: DETAIL"
[[noreturn]] void wrmsr_fault(std::string_view reg, std::uint32_t msr, std::uint64_t value, std::string_view detail);
//   "#GP: rdmsr of MSR 0x...: WHY" (op is "rdmsr" or "wrmsr")
[[noreturn]] void msr_fault(std::string_view op, std::uint32_t msr, std::string_view why);
//   "#GP: RDPMC with ECX = 0x...: WHY"
[[noreturn]] void rdpmc_fault(std::uint32_t ecx, std::string_view why);

// The CPU's nominal clock in Hz as its CPUID gives it, 0 when it gives none: leaf 15H's TSC
// rate (crystal ECX x EBX / EAX), else leaf 16H's base frequency (EAX, MHz), else the frequency
// Intel's brand strings end with ("... @ 2.40GHz", "Pentium(R) M processor 1.80GHz", "... 800MHz").
// The models count a cycle of this clock per cycle of a workload (the TSC rate is the nominal
// clock on the parts that enumerate it).
std::uint64_t nominal_clock_hz(const CpuInfo& cpu);

}  // namespace x86

}  // namespace pmc::sim
