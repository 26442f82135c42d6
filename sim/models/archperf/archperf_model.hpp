// Intel architectural performance monitoring, versions 1 to 5, as hardware: general-purpose
// counters with per-counter enables, fixed counters, global control and status, register-exact,
// written from docs/hardware/archperf.md (the fact sheet), not from any driver.
//
// Geometry comes from the CpuInfo (CPUID.0AH and CPUID.1:ECX [1]; CPUID.23H on hybrid parts [U]):
//  - N = EAX[15:8] general-purpose counters of EAX[23:16] bits; version = EAX[7:0] (0: the
//    constructor throws not_supported naming the CPU). Versions above 5 are modelled as 5 [U].
//  - Fixed counters (version 2 and later): counter i exists iff i < EDX[4:0], or (version 5+)
//    ECX bit i [1]; all of them EDX[12:5] bits wide.
//  - Core 2 quirk [U]: "early Core-microarchitecture parts may report version 2 with wrong
//    version-2 data" [1]. A version-2 CPUID with EDX[4:0] = 0 gets the three fixed counters
//    version 2 defines (FIXED_CTR0..2 [2, 6]); their width is EDX[12:5] when non-zero, else the
//    general-purpose width (40 on Core 2). More generally, fixed counters whose CPUID width is 0
//    take the general-purpose width [U].
//  - IA32_PERF_CAPABILITIES (0x345, read-only) exists iff CPUID.1:ECX[15] (PDCM) [1, 2]. The
//    model's value has bit 13 (FW_WRITE) set from version 2 up [U], bit 15 (PERF_METRICS) on the
//    top-down parts (archperf_topdown.hpp) that have fixed counter 3, every other bit clear: no
//    LBR or PEBS. Without bit 15 there is no MSR 0x329 and GLOBAL_CTRL/STATUS bit 48 is reserved.
//  - PERF_METRICS (0x329) [12]: byte k is the fraction of the slots counted since the last
//    reset that the workload's signal kTopdownSignals[k] gave, floor(255 x signal / slots) [U
//    rounding], bytes 4-7 only on level-2 parts (reserved, read 0, elsewhere). It advances while
//    GLOBAL_CTRL bit 48 is set and fixed counter 3 counts the segment [I]. Any write of
//    FIXED_CTR3 clears it [S for 0, I otherwise]; a write of 0x329 sets its bytes, taken as
//    fractions of FIXED_CTR3's value at that moment (so Linux's save / restore, FIXED_CTR3 then
//    PERF_METRICS, restores both) [I]. RDPMC ECX = 1 << 29 reads it [5, 12].
//  - Fixed counter 3 counts the workload's `slots` when a segment gives it, else width x the
//    unhalted cycles on the top-down parts (archperf_topdown.hpp), else nothing [U].
//  - Limits of the register layouts [U]: at most 32 general-purpose counters (GLOBAL_CTRL bits
//    31:0), fixed counter indices below 16 (FIXED_CTR_CTRL has 16 blocks; GLOBAL_CTRL bit 48 is
//    EN_PERF_METRICS), widths 1..64. A CPUID outside them throws not_supported.
//  - CPUID leaf 23H (hybrid parts: each core type's own counters) [U, whole block]: the fact
//    sheet does not mention leaf 23H at all, so everything here is policy. It is the reading the
//    archperf backend documents (backends/archperf/archperf.cpp, "Hybrid parts"), chosen so that
//    the model and the driver agree on which counters exist; it is not an independent check.
//    * 23H is consulted iff CPUID.0:EAX >= 23H, CPUID.(7,1):EAX[8] = 1, CPUID.23H.0:EAX[1] = 1
//      (sub-leaf 1 exists) and the CpuInfo holds sub-leaf 1. Otherwise leaf 0AH alone decides.
//    * Then sub-leaf 1 EAX is the general-purpose bitmap (IA32_PMCi / PERFEVTSELi / A_PMCi exist
//      iff bit i) and EBX the fixed bitmap (IA32_FIXED_CTRi exists iff bit i, from version 2 on;
//      version 1 has no fixed counters whatever EBX says). They replace EAX[15:8], EDX[4:0] and
//      the v5 ECX bitmap entirely (no union) and the Core 2 quirk does not apply. Bitmaps may
//      have holes: an absent counter's MSRs, GLOBAL_CTRL/STATUS bits and RDPMC index #GP like
//      those beyond N, the message saying CPUID.23H marks the counter absent. As without 23H,
//      counter MSRs are named only up to index max(7, highest present); above that an address
//      is "not implemented" (0xCE, for one, is not IA32_PMC13).
//    * Widths stay leaf 0AH's (EAX[23:16], EDX[12:5]; a fixed width of 0 is the GP width).
//    * "N" in the sheet's rules becomes "the set of present counters": GLOBAL_CTRL resets to the
//      general-purpose bitmap, INUSE and the status bits cover the present counters only.
//
// Registers [2, 3, 4]; any other address, and a register whose existence rule fails, is a #GP
// (register_fault) naming the address:
//  - IA32_PMCi 0xC1+i: writes keep EAX[31:0] sign-extended to the width (EDX ignored).
//  - IA32_A_PMCi 0x4C1+i (PERF_CAPABILITIES[13] = 1): full-width writes; a bit above the width is
//    a #GP [U, design rule]. Reads return the same counter as 0xC1+i.
//  - IA32_PERFEVTSELi 0x186+i: bits 63:32 reserved (the model has no TSX or PEBS bits) [U]; bit 21
//    (AnyThread) reserved before version 3 and when CPUID.0AH:EDX[15] = 1 [3].
//  - IA32_FIXED_CTRi 0x309+i: a bit above the fixed width is a #GP [4, design policy].
//  - IA32_FIXED_CTR_CTRL 0x38D (v2+): the 4-bit block of each present fixed counter is
//    writable, bit 4i+2 (AnyThread) only under the PERFEVTSEL rule; every other bit, blocks of
//    absent counters included, is reserved (no adaptive PEBS bit 32).
//  - IA32_PERF_GLOBAL_CTRL 0x38F (v2+): bits i < N and 32+i (fixed i present); reset (1<<N)-1
//    (with CPUID 23H: bit i for each present GP counter i; reset = that bitmap [U]).
//  - IA32_PERF_GLOBAL_STATUS 0x38E (v2+): read-only, every write is a #GP.
//  - IA32_PERF_GLOBAL_OVF_CTRL / STATUS_RESET 0x390 (v2+): write 1 clears the status bit, 0
//    does nothing; reads return 0 [U]. STATUS_SET 0x391 (v4+): write 1 sets the bit; reads
//    return 0 [U]. Both accept the status bits the version defines: i < N, 32+i for present
//    fixed i, 62 OvfBuf, 63 CondChgd; 61 Ovf_Uncore from v3; 55 TraceToPAPMI, 58 LBR_Frz,
//    59 CTR_Frz from v4 [3, 6]. Others (48, 60 ASCI: no PERF_METRICS, no SGX) are reserved [U].
//  - IA32_PERF_GLOBAL_INUSE 0x392 (v4+, read-only): bit n = PERFEVTSELn[7:0] != 0, bit 32+i =
//    fixed enable field i != 0, bit 63 = PMI_InUse (any PERFEVTSEL.INT or fixed PMI bit) [U: the
//    sheet's "bit 32" is a typo].
//  - Version 1 has no global MSRs at all (the sheet's recommendation for the [S-conflict]).
//
// Signals (docs/workload-format.md, "Signals of the archperf model"): a GP counter reads the
// generic signal of an enumerated, available architectural event, else "raw.0xUUEE" (with
// UMASK2 V != 0: "raw.0xVVUUEE"); the offcore-response selects B7H and 2AH (MSR 0x1A6), BBH and
// 2BH (MSR 0x1A7), unit mask 01H, from version 3 on, read "raw.0x01B7.rsp.0xR" / "raw.0x012A.
// rsp.0xR", R the MSR's value in upper-case hex, the pair's second select counting its first's
// signal [U]. Load latency (0x3F6), frontend (0x3F7) and 0x3E0-0x3E3 are held, never read [U].
// The signal is worked out when the event select or an extra MSR is written, not per segment.
//
// Counting [4]: GP counter i counts iff PERFEVTSELi.EN, its USR (user segments, CPL 3) or OS
// (kernel, CPL 0) bit, GLOBAL_CTRL[i] (v2+) and not CTR_Frz (v4+); CMASK/INV/E as in the P6 model
// (counting.hpp). Fixed counter i counts iff its enable field matches the mode (1 OS, 2 USR,
// 3 both), GLOBAL_CTRL[32+i] and not CTR_Frz. On a wrap, v2+ sets GLOBAL_STATUS bit i / 32+i
// whether or not INT/PMI is set [U, the sheet's recommendation]; each wrap with INT / the fixed
// PMI bit raises one PMI (interrupts()). AnyThread counts like a plain event (the model is one
// logical processor) [U].
//
// RDPMC [5]: ECX[31:16] = 0 reads IA32_PMC(ECX[15:0]); ECX[31:16] = 0x4000 (bit 30) reads
// IA32_FIXED_CTR(ECX[15:0]); anything else (bit 31 "fast", bit 29 metrics, an absent counter) is
// a #GP, as is CPL > 0 with CR4.PCE = 0.
//
// Overflow interrupts and freeze on PMI [4a]: LVTPC (FEE00340H) and the simulated PMI handler
// a driver installs to sample (sim/models/common/x86_pmi.hpp): each PMI raised is delivered
// when LVTPC is unmasked, which masks it again unless the handler runs; the handler records the
// sample, reloads the counter and clears its GLOBAL_STATUS bit (STATUS_RESET). IA32_DEBUGCTL
// (0x1D9) holds bit 12, FREEZE_PERFMON_ON_PMI (writable from version 2; every other bit is
// reserved in the model: no LBRs, BTF or SMM freeze [U]). With it, the first PMI a segment
// raises without the handler taking it freezes the PMU at the end of its cycle: versions 2 and 3
// clear GLOBAL_CTRL, version 4 on sets CTR_Frz (GLOBAL_STATUS bit 59) instead.
//
// Not modelled: PEBS/DS, the PERF_METRICS overflow (status bit 48 changes only through
// STATUS_SET/RESET), LBR_Frz (changes only through STATUS_SET/RESET), the uncore,
// IA32_MISC_ENABLE.
#pragma once

#include "x86_pmu.hpp"

#include <pmc/cpu.hpp>
#include <pmc/sdk/model.hpp>

#include <pmc/sdk/counting.hpp>

#include <array>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pmc::sim {

class ArchPerfDevice final : public X86Device {
 public:
  static constexpr std::uint32_t kPmc0 = 0xC1;
  static constexpr std::uint32_t kPerfEvtSel0 = 0x186;
  static constexpr std::uint32_t kAPmc0 = 0x4C1;
  static constexpr std::uint32_t kFixedCtr0 = 0x309;
  static constexpr std::uint32_t kPerfCapabilities = 0x345;
  static constexpr std::uint32_t kFixedCtrCtrl = 0x38D;
  static constexpr std::uint32_t kGlobalStatus = 0x38E;
  static constexpr std::uint32_t kGlobalCtrl = 0x38F;
  static constexpr std::uint32_t kGlobalOvfCtrl = 0x390;  // STATUS_RESET from version 4
  static constexpr std::uint32_t kGlobalStatusSet = 0x391;
  static constexpr std::uint32_t kGlobalInuse = 0x392;
  static constexpr unsigned kMaxGp = 32;
  static constexpr unsigned kMaxFixed = 16;

  // Throws not_supported when the CPU has no architectural PMU (CPUID.0AH:EAX[7:0] = 0) or
  // reports a geometry the register layouts cannot hold.
  explicit ArchPerfDevice(const CpuInfo& cpu);

  [[nodiscard]] std::string_view name() const override { return "archperf"; }
  std::uint64_t read(std::uint32_t msr) override;
  void write(std::uint32_t msr, std::uint64_t value) override;
  std::uint64_t rdpmc(std::uint32_t index) override;
  void run(const Segment& segment) override;
  // The workload signal an encoding's event select reads on a general-purpose counter (or, for
  // a fixed-counter pseudo event, code 00H, on its fixed counter): the decision run() makes,
  // without the filters; "" when it counts nothing (an architectural event EBX marks
  // unavailable). The offcore-response selects are qualified by Encoding::extra_value.
  // The model descriptor's signal_of (pmc/sdk/model.hpp).
  [[nodiscard]] std::string signal_of(const Encoding& encoding) const;

 private:
  [[nodiscard]] bool has_fixed(unsigned i) const {
    return i < kMaxFixed && ((fixed_present_ >> i) & 1U) != 0;
  }
  [[nodiscard]] bool has_gp(unsigned i) const {
    return i < kMaxGp && ((gp_present_ >> i) & 1U) != 0;
  }
  // msr is base + i for a present general-purpose counter i.
  [[nodiscard]] bool gp_msr(std::uint32_t msr, std::uint32_t base) const {
    return msr >= base && has_gp(msr - base);
  }
  [[nodiscard]] bool has_global() const { return version_ >= 2; }
  [[nodiscard]] std::string gp_absent(unsigned i) const;
  [[nodiscard]] std::string fixed_absent(unsigned i) const;
  [[nodiscard]] std::uint64_t inuse() const;
  [[nodiscard]] std::string missing_reason(std::uint32_t msr) const;
  [[noreturn]] void no_such_msr(std::string_view op, std::uint32_t msr) const;
  // The signal an event select (event, unit mask, UMASK2) reads, its offcore-response MSR's
  // value given when it has one; "" for none (archperf_counting.cpp).
  [[nodiscard]] std::string select_signal(std::uint64_t sel, std::uint64_t response) const;
  // GP counter i's signal, worked out again after a write of its event select or an extra MSR.
  void refresh_signal(unsigned i);
  void init_signals();  // every counter's signal, at reset (the constructor's last step)
  // Counting (archperf_counting.cpp): a counter's events per cycle of a segment (nullopt: it
  // does not count it), its advance through it (the PMIs raised; `handled`: the simulated
  // handler takes them), and the freeze on PMI [4a].
  [[nodiscard]] std::optional<counting::u128> gp_rate(unsigned i, const Segment& segment) const;
  [[nodiscard]] std::optional<counting::u128> fixed_rate(unsigned i, const Segment& segment) const;
  counting::u128 count_gp(unsigned i, const Segment& segment, bool handled);
  counting::u128 count_fixed(unsigned i, const Segment& segment, bool handled);
  [[nodiscard]] bool freeze_on_pmi() const;
  [[nodiscard]] std::optional<std::uint64_t> first_pmi(const Segment& segment) const;
  void freeze();
  // PERF_METRICS [12] (archperf_counting.cpp): the bytes, their advance over a segment, a write.
  [[nodiscard]] std::uint64_t perf_metrics() const;
  void count_metrics(const Segment& segment);
  void write_perf_metrics(std::uint64_t value);
  void clear_metrics();
  counting::u128 overflow(unsigned status_bit, bool pmi, bool handled, counting::u128 wraps);

  // Geometry.
  unsigned version_ = 0;           // 1..5
  std::uint32_t gp_present_ = 0;   // bit i: IA32_PMCi exists ((1 << N) - 1, or CPUID.23H.1:EAX)
  unsigned gp_end_ = 0;            // highest present GP counter + 1 (N without CPUID 23H)
  unsigned gp_width_ = 0;
  std::uint32_t fixed_present_ = 0;  // bit i: IA32_FIXED_CTRi exists
  bool from_23h_ = false;          // the bitmaps come from CPUID.23H.1, not leaf 0AH [U]
  unsigned fixed_width_ = 0;
  bool anythread_ = false;         // PERFEVTSEL bit 21 / FIXED_CTR_CTRL bit 4i+2 writable
  bool perf_capabilities_ = false; // MSR 0x345 exists (PDCM)
  bool full_width_ = false;        // PERF_CAPABILITIES[13]: IA32_A_PMCi exist
  unsigned ebx_length_ = 0;        // EAX[31:24]
  std::uint32_t unavailable_ = 0;  // EBX
  std::uint64_t status_bits_ = 0;  // GLOBAL_STATUS bits this version defines
  // Top-down (archperf_topdown.hpp): slots per unhalted cycle (0: fixed counter 3 counts only a
  // given `slots`), PERF_METRICS bytes filled (0: no PERF_METRICS, 4 or 8).
  unsigned slot_width_ = 0;
  unsigned metric_bytes_ = 0;
  std::string cpu_;                // for messages

  // State.
  std::array<std::uint64_t, kMaxGp> pmc_{};
  std::array<std::uint64_t, kMaxGp> evtsel_{};
  std::array<bool, kMaxGp> asserted_{};  // edge-detector memory per GP counter
  std::array<Signal, kMaxGp> gp_signal_{};  // what each GP counter's event select reads
  std::array<bool, kMaxGp> gp_counts_{};    // false: an unavailable architectural event
  std::array<Signal, kMaxFixed> fixed_signal_{};
  // refresh_signal's memory: what gp_signal_ was worked out from (the select's signal bits, the
  // offcore value); at reset a key no select has, so the first refresh works it out.
  std::array<std::uint64_t, kMaxGp> signal_key_ = [] {
    std::array<std::uint64_t, kMaxGp> a{};
    a.fill(~std::uint64_t{0});
    return a;
  }();
  std::array<std::uint64_t, kMaxGp> signal_response_{};
  std::array<std::uint64_t, kMaxFixed> fixed_{};
  std::uint64_t fixed_ctrl_ = 0;
  std::uint64_t global_ctrl_ = 0;
  std::uint64_t global_status_ = 0;
  std::uint64_t debugctl_ = 0;  // IA32_DEBUGCTL: only FREEZE_PERFMON_ON_PMI (bit 12) is modelled
  std::map<std::uint32_t, std::uint64_t> extra_;  // extra_msr() registers written
  // PERF_METRICS: each byte's signal in 1/255 slots, and the slots they are fractions of, since
  // the last reset; the value written, read back while no slot has been counted.
  std::array<counting::u128, 8> metric_acc_{};
  counting::u128 metric_slots_ = 0;
  std::uint64_t metric_written_ = 0;
  std::array<Signal, 8> metric_signal_{};
};

}  // namespace pmc::sim
