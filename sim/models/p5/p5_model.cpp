// The P5 PMU device model. Facts cite docs/hardware/p5.md by section; the policies it leaves to
// us ([U]) are its section 7, applied where marked.
#include "p5_model.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/counting.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <string>

namespace pmc::sim {

namespace {

using counting::u128;

// The event each ES code counts, per counter [5.1, 5.2]; nullptr: reserved or undefined.
struct EventName {
  std::uint8_t code;
  const char* ctr0;   // nullptr: not an event on CTR0
  const char* ctr1;
  bool mmx = false;   // Pentium with MMX only
  const char* alias = nullptr;  // a generic signal it also counts (on CTR0, or both for non-MMX)
};

// clang-format off
constexpr EventName kEvents[] = {
    {0x00, "DATA_READ", "DATA_READ"},
    {0x01, "DATA_WRITE", "DATA_WRITE"},
    {0x02, "DATA_TLB_MISS", "DATA_TLB_MISS"},
    {0x03, "DATA_READ_MISS", "DATA_READ_MISS"},
    {0x04, "DATA_WRITE_MISS", "DATA_WRITE_MISS"},
    {0x05, "WRITE_HIT_TO_M_OR_E_STATE_LINES", "WRITE_HIT_TO_M_OR_E_STATE_LINES"},
    {0x06, "DATA_CACHE_LINES_WRITTEN_BACK", "DATA_CACHE_LINES_WRITTEN_BACK"},
    {0x07, "EXTERNAL_SNOOPS", "EXTERNAL_SNOOPS"},
    {0x08, "EXTERNAL_DATA_CACHE_SNOOP_HITS", "EXTERNAL_DATA_CACHE_SNOOP_HITS"},
    {0x09, "MEMORY_ACCESSES_IN_BOTH_PIPES", "MEMORY_ACCESSES_IN_BOTH_PIPES"},
    {0x0A, "BANK_CONFLICTS", "BANK_CONFLICTS"},
    {0x0B, "MISALIGNED_DATA_MEMORY_OR_IO_REFERENCES", "MISALIGNED_DATA_MEMORY_OR_IO_REFERENCES"},
    {0x0C, "CODE_READ", "CODE_READ"},
    {0x0D, "CODE_TLB_MISS", "CODE_TLB_MISS"},
    {0x0E, "CODE_CACHE_MISS", "CODE_CACHE_MISS"},
    {0x0F, "ANY_SEGMENT_REGISTER_LOADED", "ANY_SEGMENT_REGISTER_LOADED"},
    {0x12, "BRANCHES", "BRANCHES", false, "branches"},
    {0x13, "BTB_HITS", "BTB_HITS"},
    {0x14, "TAKEN_BRANCH_OR_BTB_HIT", "TAKEN_BRANCH_OR_BTB_HIT"},
    {0x15, "PIPELINE_FLUSHES", "PIPELINE_FLUSHES"},
    {0x16, "INSTRUCTIONS_EXECUTED", "INSTRUCTIONS_EXECUTED", false, "instructions"},
    {0x17, "INSTRUCTIONS_EXECUTED_V_PIPE", "INSTRUCTIONS_EXECUTED_V_PIPE"},
    {0x18, "BUS_CYCLE_DURATION", "BUS_CYCLE_DURATION"},
    {0x19, "WRITE_BUFFER_FULL_STALL_DURATION", "WRITE_BUFFER_FULL_STALL_DURATION"},
    {0x1A, "WAITING_FOR_DATA_MEMORY_READ_STALL_DURATION", "WAITING_FOR_DATA_MEMORY_READ_STALL_DURATION"},
    {0x1B, "STALL_ON_WRITE_TO_AN_E_OR_M_STATE_LINE", "STALL_ON_WRITE_TO_AN_E_OR_M_STATE_LINE"},
    {0x1C, "LOCKED_BUS_CYCLE", "LOCKED_BUS_CYCLE"},
    {0x1D, "IO_READ_OR_WRITE_CYCLE", "IO_READ_OR_WRITE_CYCLE"},
    {0x1E, "NONCACHEABLE_MEMORY_READS", "NONCACHEABLE_MEMORY_READS"},
    {0x1F, "PIPELINE_AGI_STALLS", "PIPELINE_AGI_STALLS"},
    {0x22, "FLOPS", "FLOPS"},
    {0x23, "BREAKPOINT_MATCH_ON_DR0_REGISTER", "BREAKPOINT_MATCH_ON_DR0_REGISTER"},
    {0x24, "BREAKPOINT_MATCH_ON_DR1_REGISTER", "BREAKPOINT_MATCH_ON_DR1_REGISTER"},
    {0x25, "BREAKPOINT_MATCH_ON_DR2_REGISTER", "BREAKPOINT_MATCH_ON_DR2_REGISTER"},
    {0x26, "BREAKPOINT_MATCH_ON_DR3_REGISTER", "BREAKPOINT_MATCH_ON_DR3_REGISTER"},
    {0x27, "HARDWARE_INTERRUPTS", "HARDWARE_INTERRUPTS"},
    {0x28, "DATA_READ_OR_WRITE", "DATA_READ_OR_WRITE"},
    {0x29, "DATA_READ_MISS_OR_WRITE_MISS", "DATA_READ_MISS_OR_WRITE_MISS"},
    {0x2A, "BUS_OWNERSHIP_LATENCY", "BUS_OWNERSHIP_TRANSFERS", true},
    {0x2B, "MMX_INSTRUCTIONS_EXECUTED_U_PIPE", "MMX_INSTRUCTIONS_EXECUTED_V_PIPE", true},
    {0x2C, "CACHE_M_STATE_LINE_SHARING", "CACHE_LINE_SHARING", true},
    {0x2D, "EMMS_INSTRUCTIONS_EXECUTED", "TRANSITIONS_BETWEEN_MMX_AND_FP_INSTRUCTIONS", true},
    {0x2E, "BUS_UTILIZATION_DUE_TO_PROCESSOR_ACTIVITY", "WRITES_TO_NONCACHEABLE_MEMORY", true},
    {0x2F, "SATURATING_MMX_INSTRUCTIONS_EXECUTED", "SATURATIONS_PERFORMED", true},
    {0x30, "NUMBER_OF_CYCLES_NOT_IN_HALT_STATE", "DATA_CACHE_TLB_MISS_STALL_DURATION", true, "cycles"},
    {0x31, "MMX_INSTRUCTION_DATA_READS", "MMX_INSTRUCTION_DATA_READ_MISSES", true},
    {0x32, "FLOATING_POINT_STALLS_DURATION", "TAKEN_BRANCHES", true},
    {0x33, "D1_STARVATION_AND_FIFO_IS_EMPTY", "D1_STARVATION_AND_ONLY_ONE_INSTRUCTION_IN_FIFO", true},
    {0x34, "MMX_INSTRUCTION_DATA_WRITES", "MMX_INSTRUCTION_DATA_WRITE_MISSES", true},
    {0x35, "PIPELINE_FLUSHES_DUE_TO_WRONG_BRANCH_PREDICTIONS",
           "PIPELINE_FLUSHES_DUE_TO_WRONG_BRANCH_PREDICTIONS_RESOLVED_IN_WB_STAGE", true, "branch-misses"},
    {0x36, "MISALIGNED_DATA_MEMORY_REFERENCE_ON_MMX_INSTRUCTIONS",
           "PIPELINE_ISTALL_FOR_MMX_INSTRUCTION_DATA_MEMORY_READS", true},
    {0x37, "MISPREDICTED_OR_UNPREDICTED_RETURNS", "PREDICTED_RETURNS", true},
    {0x38, "MMX_MULTIPLY_UNIT_INTERLOCK", "MOVD_MOVQ_STORE_STALL_DUE_TO_PREVIOUS_MMX_OPERATION", true},
    {0x39, "RETURNS", nullptr, true},
    {0x3A, "BTB_FALSE_ENTRIES", "BTB_MISS_PREDICTION_ON_NOT_TAKEN_BRANCH", true},
    {0x3B, "FULL_WRITE_BUFFER_STALL_DURATION_WHILE_EXECUTING_MMX_INSTRUCTIONS",
           "STALL_ON_MMX_INSTRUCTION_WRITE_TO_E_OR_M_STATE_LINE", true},
};
// clang-format on

// The signal numbers of every (code, counter), resolved once.
struct SignalTable {
  std::array<std::array<Signal, 2>, 64> own{};      // the event's own signal
  std::array<std::array<Signal, 2>, 64> generic{};  // its generic alias, when has_generic
  std::array<std::array<bool, 2>, 64> has_generic{};
  std::array<std::array<bool, 2>, 64> exists{};
  std::array<bool, 64> mmx{};
  SignalTable() {
    for (const EventName& e : kEvents) {
      const char* names[2] = {e.ctr0, e.ctr1};
      for (unsigned c = 0; c < 2; ++c) {
        if (!names[c]) continue;
        std::string lower(names[c]);
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        exists[e.code][c] = true;
        own[e.code][c] = signal(lower);
        // MMX codes: the alias belongs to the CTR0 event; base events: to both counters.
        // (BRANCHES's own signal is "branches" already: not counted twice.)
        if (e.alias && (!e.mmx || c == 0) && signal(e.alias) != own[e.code][c]) {
          generic[e.code][c] = signal(e.alias);
          has_generic[e.code][c] = true;
        }
      }
      mmx[e.code] = e.mmx;
    }
  }
};

const SignalTable& signals() {
  static const SignalTable table;
  return table;
}

}  // namespace

P5Device::P5Device(const CpuInfo& cpu) : cpu_(describe(cpu)) {
  if (cpu.vendor != "GenuineIntel" || cpu.family != 5)
    throw Error(errc::not_supported, fmt::format("the P5 PMU model simulates GenuineIntel family 5 parts, not {}", cpu_));
  const auto leaf1 = cpu.raw.get(1);
  mmx_ = leaf1 && ((leaf1->edx >> 23) & 1u);
  (void)signals();
}

std::uint64_t P5Device::read(std::uint32_t msr) {
  switch (msr) {
    case kTsc: return tsc_;
    case kCesr: return cesr_;
    case kCtr0: return ctr_[0];
    case kCtr1: return ctr_[1];
    case 0x03:
    case 0x0F: x86::msr_fault("rdmsr", msr, "reserved on the Pentium");
    default:
      if (msr < kTsc) return 0;  // machine-check and test registers: not the PMU's [7.4]
      x86::msr_fault("rdmsr", msr, "the Pentium has no MSR above 0x13");
  }
}

void P5Device::write(std::uint32_t msr, std::uint64_t value) {
  switch (msr) {
    case kTsc: tsc_ = value; return;
    case kCesr: {
      if (const std::uint64_t bad = value & kCesrReserved)
        x86::wrmsr_fault("CESR", msr, value,
                         fmt::format("reserved bit {} set (bits 15:10, 31:26 and 63:32 are reserved)",
                                     std::countr_zero(bad)));
      cesr_ = value;
      return;
    }
    case kCtr0:
    case kCtr1:
      if (value >> kWidth)
        x86::wrmsr_fault(fmt::format("CTR{}", msr - kCtr0), msr, value, "the counter has 40 bits");
      ctr_[msr - kCtr0] = value;
      return;
    case 0x03:
    case 0x0F: x86::msr_fault("wrmsr", msr, "reserved on the Pentium");
    default:
      if (msr < kTsc)
        throw Error(errc::register_fault,
                    fmt::format("wrmsr of MSR {:#x}: a machine-check or test register, not modelled by the P5 PMU "
                                "model",
                                msr));
      x86::msr_fault("wrmsr", msr, "the Pentium has no MSR above 0x13");
  }
}

std::uint64_t P5Device::rdpmc(std::uint32_t index) {
  if (!mmx_)
    throw Error(errc::register_fault,
                fmt::format("#UD: RDPMC does not exist on {} (a Pentium without MMX: read the counters with RDMSR)", cpu_));
  if (index >= 2) x86::rdpmc_fault(index, "the Pentium has counters 0 and 1 only");
  check_rdpmc_privilege();
  return ctr_[index];
}

void P5Device::run(const Segment& segment) {
  if (segment.cycles == 0) return;
  tsc_ += segment.cycles;  // the TSC counts every clock, halted or not
  for (unsigned i = 0; i < 2; ++i) count(i, segment);
}

void P5Device::count(unsigned i, const Segment& segment) {
  const unsigned half = static_cast<unsigned>(cesr_ >> (16 * i)) & 0x3FF;
  const unsigned es = half & 0x3F, cc = (half >> 6) & 0x7;
  const bool pc = (half >> 9) & 1;
  // CC bit 0: CPL 0-2 (the workloads' kernel mode), bit 1: CPL 3 (user mode) [3.1].
  if (!(cc & (segment.mode == Mode::user ? 0x2 : 0x1))) return;
  const SignalTable& t = signals();
  if (!t.exists[es][i] || (t.mmx[es] && !mmx_)) return;  // reserved, undefined, or no MMX [7.3]
  u128 k = segment.per_cycle(t.own[es][i]);
  if (t.has_generic[es][i]) k += segment.per_cycle(t.generic[es][i]);
  if (k == 0) return;
  // Occurrences (CC bit 2 clear) add k per clock; clocks (bit 2 set) add 1 per clock in which the
  // event occurred [7.3]: the counting helper's counter-mask 1 is exactly that.
  counting::Filter filter;
  if (cc & 0x4) filter.cmask = 1;
  bool asserted = false;  // the P5 has no edge detect
  const counting::Advance step = counting::advance(ctr_[i], kWidth, segment.cycles, k, filter, asserted);
  ctr_[i] = step.value;
  // The pin [3.2]: on each overflow with PC = 1; in each clock with an increment with PC = 0.
  pins_[i] = counting::saturating_add(pins_[i], pc ? step.wraps : u128{segment.cycles});
}

}  // namespace pmc::sim
