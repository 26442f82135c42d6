// The Intel P6 PMU (Pentium Pro, Pentium II, Celeron, Pentium III, Pentium M) as hardware:
// PerfEvtSel0/1 and two 40-bit PerfCtr0/1, register-exact, written from
// docs/hardware/p6.md (the fact sheet), not from any driver.
//
// What the model does (fact sheet section in brackets):
//  - MSRs 0xC1/0xC2 PerfCtr0/1, 0x186/0x187 PerfEvtSel0/1 [2]; any other address is a #GP.
//  - PerfEvtSel: bits 63:32 and 21 reserved, bit 22 (EN) reserved in PerfEvtSel1; a write with a
//    reserved bit set is a #GP and leaves the register unchanged [3]. Bit 19 (PC, pin control)
//    is stored: the pins are invisible to software.
//  - PerfCtr writes keep bits 31:0 and copy bit 31 into bits 39:32 [4].
//  - RDPMC ECX = 0 or 1 returns 40 bits; other indices, and CPL > 0 with CR4.PCE = 0, are a
//    #GP [4].
//  - Counter i counts iff PerfEvtSel0.EN and PerfEvtSel_i's USR/OS bit matches the CPL [3, enable
//    rule]; CMASK/INV/E and the 40-bit wrap with INT are applied per segment in closed form [3, 4].
//  - Pentium M (family 6 models 9 and 13) only: MSR 0x1A0 IA32_MISC_ENABLE, whose bit 7
//    "performance monitoring available" is read-only [1]; on the other P6 CPUs 0x1A0 is a #GP.
//    The policies the sheet leaves open ([U]) are in p6_model.cpp, at the constructor.
//  - Pentium M only: L2 events 24H, 26H, 27H, 29H filter hardware-prefetched lines by UMASK
//    bits 5:4 [5a; SDM table A-17], counting the ".prefetch" signals (p6_model.cpp, EventSignal).
//  - The local APIC's LVTPC (FEE00340H) and the simulated PMI handler a driver installs to
//    sample (sim/models/common/x86_pmi.hpp, docs/hardware/p6.md section 4a): with INT, each
//    wrap raises a PMI (interrupts() counts them all); delivered when LVTPC is unmasked, which
//    masks it again unless the handler runs; the handler records the sample at the PC of the
//    cycle of the overflow and reloads the counter.
// Not modelled: PPro erratum 26 (RDPMC on stepping < 9), the PM0/PM1 pins, IA32_MISC_ENABLE
// bits other than 7.
#pragma once

#include "x86_pmu.hpp"

#include <pmc/cpu.hpp>
#include <pmc/export.hpp>
#include <pmc/sdk/model.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pmc::sim {

// Built into the p6 model plugin (plugin.cpp) and, for the tests, a static library.
class P6Device final : public X86Device {
 public:
  static constexpr std::uint32_t kPerfCtr0 = 0xC1;
  static constexpr std::uint32_t kPerfCtr1 = 0xC2;
  static constexpr std::uint32_t kPerfEvtSel0 = 0x186;
  static constexpr std::uint32_t kPerfEvtSel1 = 0x187;
  static constexpr std::uint32_t kMiscEnable = 0x1A0;     // IA32_MISC_ENABLE, Pentium M only [1]
  static constexpr std::uint64_t kPerfmonAvailable = 1ULL << 7;
  static constexpr unsigned kWidth = 40;

  // Every P6 model has the same PMU registers and counting rules, and events are not filtered
  // by model (an MMX event counts its signal on a Pentium Pro too). The CPU decides two things
  // only, both for the Pentium M (family 6, model 9 or 13): IA32_MISC_ENABLE exists, and the
  // L2 events 24H, 26H, 27H, 29H take the hardware-prefetch filter in UMASK bits 5:4.
  // `perfmon_available` is the firmware's setting of IA32_MISC_ENABLE bit 7 (a BIOS may report
  // performance monitoring unavailable); it must be true on the other P6 CPUs.
  explicit P6Device(const CpuInfo& cpu, bool perfmon_available = true);

  [[nodiscard]] bool pentium_m() const { return pentium_m_; }
  // Models the firmware choosing IA32_MISC_ENABLE bit 7 on a device already built (a session's,
  // reached through Session::device()): software cannot change the bit, only firmware sets it
  // at reset. Throws invalid_argument on a CPU other than the Pentium M (it has no such MSR).
  void set_firmware_perfmon_available(bool available);
  // Device::configure: "perfmon_available" (0 or 1) is set_firmware_perfmon_available.
  void configure(std::string_view setting, std::uint64_t value) override;

  [[nodiscard]] std::string_view name() const override { return "p6"; }
  std::uint64_t read(std::uint32_t msr) override;
  void write(std::uint32_t msr, std::uint64_t value) override;
  std::uint64_t rdpmc(std::uint32_t index) override;
  void run(const Segment& segment) override;

 private:
  counting::u128 count(unsigned i, const Segment& segment);
  [[noreturn]] void misc_enable_fault(std::string_view op) const;

  std::array<std::uint64_t, 2> evtsel_{};   // as written (bits 31:0 only can be non-zero)
  std::array<std::uint64_t, 2> ctr_{};      // 40-bit values
  // Edge detector state per counter: did the condition hold in the last cycle the counter was
  // counting? See count().
  std::array<bool, 2> asserted_{};
  bool pentium_m_ = false;          // family 6, model 9 or 13
  bool perfmon_available_ = true;   // IA32_MISC_ENABLE bit 7 (Pentium M)
  std::string cpu_;                 // "family 6 model 8", for #GP messages
};

}  // namespace pmc::sim
