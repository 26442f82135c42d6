// The AMD core PMU, K7 to Zen 5 (and Hygon Dhyana), as hardware: PerfEvtSel/PerfCtr, the
// PerfCtrExtCore PERF_CTL/PERF_CTR pairs and the PerfMonV2 global registers, register-exact,
// written from docs/hardware/amd.md (cited by section; "item N" is section 7, "Behaviours worth a
// test"; [U] marks the model's own policy where the docs leave a choice), not from the amd backend.
//
// Geometry, from the CpuInfo (amd.md 1.5, 2.2, 2.3):
//  - AuthenticAMD family 6 and later, or HygonGenuine; a family 5 part (K5, K6) has no counters
//    and another vendor no AMD PMU: the constructor throws not_supported.
//  - Without PerfCtrExtCore (CPUID 0x80000001:ECX[23]): four counters, PerfEvtSel0-3 at
//    0xC0010000-3 and PerfCtr0-3 at 0xC0010004-7; 0xC0010200-0xC001020B are a #GP (item 5).
//  - With it: PERF_CTLi at 0xC0010200 + 2i and PERF_CTRi at 0xC0010201 + 2i, i < N, N = 6, or
//    with PerfMonV2 CPUID 0x80000022:EBX[3:0] when not 0; the legacy MSRs stay and are the same
//    registers as PERF_CTL/PERF_CTR 0-3 (a write through one reads back through the other,
//    item 4). Counters 4 and 5 exist only at 0xC0010208-B.
//  - PerfMonV2 (0x80000022:EAX[0]): PerfCntrGlobalStatus 0xC0000300 (read-only: a WRMSR is a #GP),
//    PerfCntrGlobalCtl 0xC0000301 (bit i enables counter i), PerfCntrGlobalStatusClr 0xC0000302
//    and StatusSet 0xC0000303 (write 1 to clear / set a status bit). Without the bit all four are
//    a #GP. [U] Their valid bits are the counters' (i < N), plus bit 58 (LBRs frozen) in the status
//    registers when 0x80000022:EAX[1] (LbrExtV2) is set; any other bit in a write is a #GP.
//    GlobalCtl resets to all counters enabled, GlobalStatus to 0 (amd.md 8.3). StatusClr and
//    StatusSet read as 0 [U].
//  - Every other MSR is a #GP naming the address.
//
// PERF_CTL (amd.md 3.1, 3.2): event select 7:0 and 35:32 (12 bits), unit mask 15:8, USR 16, OS 17,
// E 18, PC 19 (storage without effect, amd.md 8.6), INT 20, EN 22, INV 23, CntMask 31:24,
// GuestOnly 40, HostOnly 41. A write that sets a reserved bit is a #GP and changes nothing:
// 21 and 32-63 on K7 and K8 (family 0Fh and below: EventSelect[11:8] and host/guest reserved,
// item 9), 21, 36-39 and 40-63 on family 11h, 21, 36-39 and 42-63 from family 10h on otherwise.
// Writing PERF_CTL clears the counter's edge-detector memory [U, as the P6 and archperf models].
//
// PerfCtr / PERF_CTR (amd.md 4, 8.1, 8.2): 48 bits. A write keeps bits 47:0 when bits 63:48 are
// all 0 or all 1 with bit 47 set (zero- or sign-extended, items 2 and 3); any other value of
// bits 63:48 is a #GP and changes nothing. Reads return bits 63:48 as 0.
//
// RDPMC (amd.md 2.1, 4): ECX is the counter index, 0..N-1 (0-3 legacy, 0-5 with PerfCtrExtCore,
// item 6), never an MSR number (item 5); any other ECX is a #GP, and so is CPL > 0 with CR4.PCE = 0.
//
// Counting (amd.md 3.3, 3.4, 4): counter i counts a segment when its EN is set (every counter has
// its own: no global enable on the legacy layout, item 1), with PerfMonV2 also GlobalCtl[i]
// (item 7), and USR (user segments, CPL 3) or OS (kernel, CPL 0) matches the mode. CntMask, INV
// and E filter as on the P6 (pmc/sdk/counting.hpp, item 13). HostOnly/GuestOnly [U]: the model's
// processor is a host with SVM enabled and no guest ever running, so HostOnly alone counts,
// GuestOnly alone counts nothing, and both set count as neither set does (amd.md 3.3, item 8).
// Family 15h (amd.md 5.2, 5.3 items 1-3): an event programmed on a PERF_CTL that its code (and,
// for 0x000, 0x004 and 0x031, its unit mask) does not allow counts nothing [I: Linux's
// constraints describe the hardware]; codes the table does not list count on any counter [U].
// The counter wraps from 2^48 - 1 to 0; each wrap with INT raises one interrupt (interrupts()),
// except on K7 model 1, which has no local APIC (item 14); with PerfMonV2 each wrap sets
// GlobalStatus[i], INT or not [I from amd.md 4: "set on overflow of counter i"]. The PMI goes
// through LVTPC (FEE00340H) to the simulated PMI handler a driver installs to sample
// (sim/models/common/x86_pmi.hpp; amd.md 4a): delivered when LVTPC is unmasked, which masks it
// again unless the handler runs; the handler records the sample, reloads the counter and clears
// its GlobalStatus bit (PerfCntrGlobalStatusClr).
//
// Merged pairs (amd.md 5.3 item 5, Zen: family 17h and later, Hygon included): an odd counter
// N+1 whose PERF_CTL holds the merge event PMCxFFF (0xF_0000_00FF) with EN (and, with PerfMonV2,
// GlobalCtl[N+1]) counts no signal; it counts the wraps of the even counter N, so N + 2^48 (N+1)
// is the pair's count [I: the docs' reading rule]. Its USR/OS/host/guest/filter bits are ignored
// (the merge event is written without them) [I]. Counter N keeps its own wrap behaviour (INT,
// status bit) [U]. No per-cycle increment limit is modelled [U]: the docs give none.
//
// Signals (the workload names of docs/workload-format.md): a counter whose event select is code
// EEE (12 bits) with unit mask UU counts the workload signal "amd.0xEEE.0xUU" (code as three
// upper-case hex digits, unit mask as two: RETIRED_SSE_AVX_FLOPS:ANY on Zen 4 is
// "amd.0x003.0x1F"), plus, for the encodings the perf generic names stand for on the CPU's family
// (amd.md 6.1 and 6.3, by the generation of amd.md 1.3), the generic signal:
//   every family   0x076/0x00 cycles (implicit: 1 per unhalted cycle), 0x0C0/0x00 instructions,
//                  0x0C2/0x00 branches, 0x0C3/0x00 branch-misses
//   K8, 10h, 11h, 12h, 15h   0x07D/0x07 cache-references, 0x07E/0x07 cache-misses,
//                            0x0D0/0x00 stalled-cycles-frontend, 0x0D1/0x00 stalled-cycles-backend
//   14h            0x07D/0x03 cache-references, 0x07E/0x03 cache-misses
//   Zen 1 (Hygon)  0x060/0xFF cache-references, 0x064/0x09 cache-misses,
//                  0x087/0x02 stalled-cycles-frontend, 0x087/0x01 stalled-cycles-backend
//   Zen 2, 3, 4    0x060/0xFF cache-references, 0x064/0x09 cache-misses, 0x0A9/0x00
//                  stalled-cycles-frontend
//   Zen 5          0x060/0xF7 cache-references, otherwise as Zen 4
//   Zen 4, 5       0x120/0x01 ref-cycles (a signal like the others: no default)
// (K7 and family 16h: the four of every family only.) The generic and the raw signal add up.
// signal_of() names the raw signal of an encoding, so a workload signal named after a catalog
// event (a Zen name such as "ls_dispatch.ld_dispatch") feeds "amd.0xEEE.0xUU" of its select.
// Families after 1Ah count as Zen 5, families without AMD parts (7-0Eh, 13h) with the generics of
// every family only [U].
#pragma once

#include "x86_pmu.hpp"

#include <pmc/cpu.hpp>
#include <pmc/sdk/counting.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pmc::sim {

class AmdDevice final : public X86Device {
 public:
  static constexpr std::uint32_t kPerfEvtSel0 = 0xC0010000;  // legacy, + i (i < 4)
  static constexpr std::uint32_t kPerfCtr0 = 0xC0010004;     // legacy, + i (i < 4)
  static constexpr std::uint32_t kPerfCtl0 = 0xC0010200;     // PerfCtrExtCore, + 2i
  static constexpr std::uint32_t kPerfCtrExt0 = 0xC0010201;  // PerfCtrExtCore, + 2i
  static constexpr std::uint32_t kGlobalStatus = 0xC0000300;
  static constexpr std::uint32_t kGlobalCtl = 0xC0000301;
  static constexpr std::uint32_t kGlobalStatusClr = 0xC0000302;
  static constexpr std::uint32_t kGlobalStatusSet = 0xC0000303;
  static constexpr unsigned kWidth = 48;
  static constexpr unsigned kMaxCounters = 16;  // EBX[3:0] can say at most 15
  static constexpr std::uint64_t kMergeEvent = 0xFFF;

  explicit AmdDevice(const CpuInfo& cpu);

  [[nodiscard]] std::string_view name() const override { return "amd"; }
  std::uint64_t read(std::uint32_t msr) override;
  void write(std::uint32_t msr, std::uint64_t value) override;
  std::uint64_t rdpmc(std::uint32_t index) override;
  void run(const Segment& segment) override;
  // The workload signal an encoding's event select reads: "amd.0xEEE.0xUU" (the generic signal
  // the same select may also read adds to it); "" for the merge event, which counts no signal.
  // The model descriptor's signal_of (pmc/sdk/model.hpp).
  [[nodiscard]] std::string signal_of(const Encoding& encoding) const;

  [[nodiscard]] unsigned counters() const { return n_; }
  [[nodiscard]] bool ext_core() const { return ext_core_; }
  [[nodiscard]] bool perfmon_v2() const { return v2_; }

 private:
  enum class Reg { none, ctl, ctr, global_status, global_ctl, status_clr, status_set };
  struct Decoded {
    Reg reg = Reg::none;
    unsigned index = 0;
  };
  [[nodiscard]] Decoded decode(std::uint32_t msr) const;
  [[nodiscard]] std::string missing_reason(std::uint32_t msr) const;
  [[noreturn]] void no_such_msr(std::string_view op, std::uint32_t msr) const;
  [[nodiscard]] bool enabled(unsigned i) const;
  [[nodiscard]] bool merge_partner(unsigned i) const;
  void select(unsigned i, std::uint64_t value);
  // A counter through a segment, and its overflows: the PMIs raised (`handled`: the simulated
  // PMI handler takes them, x86_pmi.hpp).
  counting::u128 count(unsigned i, const Segment& segment, bool handled);
  counting::u128 overflow(unsigned i, counting::u128 wraps, bool handled);
  [[nodiscard]] bool raises_pmi(unsigned i) const;

  // Geometry.
  unsigned family_ = 0;
  unsigned n_ = 4;
  bool ext_core_ = false;
  bool v2_ = false;
  bool lbr_v2_ = false;        // 0x80000022:EAX[1]: status bit 58 exists
  bool apic_ = true;           // false on K7 model 1: INT raises nothing
  bool pairs_ = false;         // Zen: the merge event pairs counters
  std::uint64_t reserved_ = 0; // PERF_CTL bits a write may not set
  std::string cpu_;            // for messages
  struct Generic {
    std::uint16_t code;
    std::uint8_t umask;
    std::string_view signal;
  };
  std::array<Generic, 16> generics_{};
  unsigned generic_count_ = 0;

  // State.
  std::array<std::uint64_t, kMaxCounters> ctl_{};
  std::array<std::uint64_t, kMaxCounters> ctr_{};
  std::array<bool, kMaxCounters> asserted_{};
  std::array<Signal, kMaxCounters> raw_{};                    // "amd.0xEEE.0xUU" of ctl_[i]
  std::array<std::optional<Signal>, kMaxCounters> generic_{};  // its generic signal, if any
  std::uint64_t global_ctl_ = 0;
  std::uint64_t global_status_ = 0;
};

}  // namespace pmc::sim
