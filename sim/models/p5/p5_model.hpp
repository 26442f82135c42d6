// The Intel Pentium (P5) PMU as hardware: CESR (MSR 0x11) with a 10-bit half per counter and two
// 40-bit counters CTR0/CTR1 (0x12/0x13), register-exact, written from docs/hardware/p5.md (cited
// by section), not from the p5 backend.
//
// What the model does:
//  - MSRs [2, 7.4]: 0x10 TSC (counts every cycle run, halted or not; writable), 0x11 CESR, 0x12
//    and 0x13 CTR0/CTR1. 0x03, 0x0F and anything above 0x13 are a #GP; 0x00-0x02 and 0x04-0x0E
//    (machine-check and test registers, not the PMU's) read 0 and refuse writes as not modelled.
//  - CESR [3]: ES 5:0, CC 8:6, PC 9 per half, CTR1's half 16 bits above CTR0's; a write with a
//    bit of 15:10, 31:26 or 63:32 set is a #GP and changes nothing; reset value 0.
//  - CTR0/CTR1 [4, 7.4]: 40 bits; a write with a bit of 63:40 set is a #GP; all 40 bits are
//    writable; they wrap to 0 past 2^40 - 1, with no interrupt.
//  - RDPMC [4, 7.4]: only on a Pentium with MMX (CPUID.1:EDX[23]); #UD otherwise; ECX >= 2 and
//    CPL > 0 with CR4.PCE = 0 are a #GP.
//  - Counting [3.1, 7.3]: a half counts in segments whose mode its CC enables (bit 0: kernel,
//    CPL 0-2; bit 1: user, CPL 3). With CC bit 2 clear it adds the occurrences of its event's
//    signal (no cap at 2 per clock); with it set, 1 per clock with at least one occurrence.
//    Reserved codes, 39H on CTR1, and the MMX codes on a Pentium without MMX count nothing.
//  - PC [3.2]: the PMn pin of a counter is asserted on each carry out of bit 39 (PC = 1) or in
//    each clock the counter is incremented (PC = 0); pin_assertions() counts them. Never an
//    interrupt.
// Signals: each event counts the signal named after it in lower case ("data_read",
// "bus_ownership_latency"); INSTRUCTIONS_EXECUTED also counts "instructions", BRANCHES
// "branches", PIPELINE_FLUSHES_DUE_TO_WRONG_BRANCH_PREDICTIONS "branch-misses", and
// NUMBER_OF_CYCLES_NOT_IN_HALT_STATE the implicit "cycles" (docs/workload-format.md).
#pragma once

#include "x86_pmu.hpp"

#include <pmc/cpu.hpp>
#include <pmc/sdk/model.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pmc::sim {

class P5Device final : public X86Device {
 public:
  static constexpr std::uint32_t kTsc = 0x10;
  static constexpr std::uint32_t kCesr = 0x11;
  static constexpr std::uint32_t kCtr0 = 0x12;
  static constexpr std::uint32_t kCtr1 = 0x13;
  static constexpr unsigned kWidth = 40;
  // Bits of CESR that are not in either half [3].
  static constexpr std::uint64_t kCesrReserved = 0xFFFFFFFF00000000ull | (0x3Full << 10) | (0x3Full << 26);

  // The CPU decides one thing: whether it has MMX (CPUID.1:EDX[23]), hence RDPMC and the MMX
  // events. Throws not_supported for a CPU that is not GenuineIntel family 5.
  explicit P5Device(const CpuInfo& cpu);

  [[nodiscard]] std::string_view name() const override { return "p5"; }
  std::uint64_t read(std::uint32_t msr) override;
  void write(std::uint32_t msr, std::uint64_t value) override;
  std::uint64_t rdpmc(std::uint32_t index) override;
  void run(const Segment& segment) override;
  [[nodiscard]] std::uint64_t interrupts() const override { return 0; }  // the P5 has none [4]

  [[nodiscard]] bool mmx() const { return mmx_; }
  // How often counter i's PMn pin was asserted [3.2].
  [[nodiscard]] std::uint64_t pin_assertions(unsigned counter) const { return pins_.at(counter); }

 private:
  void count(unsigned i, const Segment& segment);

  std::uint64_t cesr_ = 0;
  std::array<std::uint64_t, 2> ctr_{};
  std::array<std::uint64_t, 2> pins_{};
  std::uint64_t tsc_ = 0;
  bool mmx_ = false;
  std::string cpu_;
};

}  // namespace pmc::sim
