// The P6 PMU device model. Facts cite docs/hardware/p6.md by section; policies the fact sheet
// leaves open are marked [U] and explained where they are applied.
#include "p6_model.hpp"

#include <pmc/sdk/counting.hpp>

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

namespace pmc::sim {

namespace {

// PerfEvtSel fields [3]: EventSelect, UMASK and EN (PerfEvtSel0 only) are x86_pmu.hpp's; USR,
// OS, E, INT, INV and CMASK, which IA32_PERFEVTSELx shares, are counting::evtsel's.
// Reserved: 63:32 and 21 in both; 22 (EN) too in PerfEvtSel1 [3].
constexpr std::uint64_t kReservedSel0 = 0xFFFFFFFF00000000ULL | (1ULL << 21);
constexpr std::uint64_t kReservedSel1 = kReservedSel0 | x86::kEn;

using counting::u128;  // exact products of 64-bit cycles and counts

// ---------------------------------------------------------------------------------------------
// The signal table: which activity signal each event code counts [5a, 5b, 5c]. The signal is the
// lowercase event name; a few events also take a generic alias so that workloads written for
// any PMU ("instructions", "branches", ...) count here too (the two are added).
enum class Kind {
  plain,     // k("<name>") (+ k(alias)); the unit mask is ignored
  cycles,    // the implicit "cycles" signal: 1 per unhalted cycle
  mesi,      // sum of k("<name>.m"/".e"/".s"/".i") over the states UMASK selects (0x08 M, 0x04 E,
             // 0x02 S, 0x01 I); UMASK 0 selects none, so counts nothing (Linux's NOP event 0x2E)
  self_any,  // bus events: k("<name>.self"), plus k("<name>.other") when UMASK bit 5 (0x20,
             // "any agent") is set
};

struct EventSignal {
  std::uint8_t code;
  std::string_view name;
  Kind kind = Kind::plain;
  std::uint8_t counters = 0x3;     // bit i set: the event exists on counter i
  std::string_view alias = {};
  // Pentium M only: UMASK bits 5:4 filter hardware-prefetched lines (SDM table A-17; sheet 5a
  // rows 24H, 26H, 27H, 29H): 00 demand lines only (the signals above), 01 hardware-prefetched
  // lines only (the same signals with ".prefetch" after the event name: "l2_lines_in.prefetch",
  // "l2_ld.prefetch.m"), 10 and 11 both. On the other P6 CPUs bits 5:4 are ignored [U] and the
  // ".prefetch" signals are never read (the filter, and in the model the prefetcher, is the
  // Pentium M's).
  bool prefetch_filter = false;
};

constexpr bool kPrefetchFilter = true;

constexpr std::uint8_t kCtr0 = 0x1, kCtr1 = 0x2;

// clang-format off
constexpr EventSignal kEvents[] = {
    // 5a: core P6 events.
    {0x03, "ld_blocks"},
    {0x04, "sb_drains"},
    {0x05, "misalign_mem_ref"},
    {0x06, "segment_reg_loads"},
    {0x10, "fp_comp_ops_exe", Kind::plain, kCtr0},
    {0x11, "fp_assist", Kind::plain, kCtr1},
    {0x12, "mul", Kind::plain, kCtr1},
    {0x13, "div", Kind::plain, kCtr1},
    {0x14, "cycles_div_busy", Kind::plain, kCtr0},
    {0x21, "l2_ads"},
    {0x22, "l2_dbus_busy"},
    {0x23, "l2_dbus_busy_rd"},
    // 24H, 26H, 27H: SDM UMASK 0 (FreeBSD allows MESI): plain here; Pentium M filter 5:4.
    {0x24, "l2_lines_in", Kind::plain, 0x3, {}, kPrefetchFilter},
    {0x25, "l2_m_lines_inm"},
    {0x26, "l2_lines_out", Kind::plain, 0x3, {}, kPrefetchFilter},
    {0x27, "l2_m_lines_outm", Kind::plain, 0x3, {}, kPrefetchFilter},
    {0x28, "l2_ifetch", Kind::mesi},
    {0x29, "l2_ld", Kind::mesi, 0x3, {}, kPrefetchFilter},
    {0x2A, "l2_st", Kind::mesi},
    {0x2E, "l2_rqsts", Kind::mesi, 0x3, "l2-requests"},
    {0x43, "data_mem_refs"},
    {0x45, "dcu_lines_in"},
    {0x46, "dcu_m_lines_in"},
    {0x47, "dcu_m_lines_out"},
    {0x48, "dcu_miss_outstanding"},
    {0x60, "bus_req_outstanding", Kind::self_any},  // SDM lists only 0x00 (self); 0x20 [U]
    {0x61, "bus_bnr_drv"},
    {0x62, "bus_drdy_clocks", Kind::self_any},
    {0x63, "bus_lock_clocks", Kind::self_any},
    {0x64, "bus_data_rcv"},
    {0x65, "bus_tran_brd", Kind::self_any},
    {0x66, "bus_tran_rfo", Kind::self_any},
    {0x67, "bus_trans_wb", Kind::self_any},
    {0x68, "bus_tran_ifetch", Kind::self_any},
    {0x69, "bus_tran_inval", Kind::self_any},
    {0x6A, "bus_tran_pwr", Kind::self_any},
    {0x6B, "bus_trans_p", Kind::self_any},
    {0x6C, "bus_trans_io", Kind::self_any},
    {0x6D, "bus_tran_def", Kind::self_any},
    {0x6E, "bus_tran_burst", Kind::self_any},
    {0x6F, "bus_tran_mem", Kind::self_any},
    {0x70, "bus_tran_any", Kind::self_any},
    {0x79, "cpu_clk_unhalted", Kind::cycles},
    {0x7A, "bus_hit_drv"},
    {0x7B, "bus_hitm_drv"},
    {0x7E, "bus_snoop_stall"},
    {0x80, "ifu_ifetch"},
    {0x81, "ifu_ifetch_miss"},
    {0x85, "itlb_miss"},
    {0x86, "ifu_mem_stall"},
    {0x87, "ild_stall"},
    {0xA2, "resource_stalls"},
    {0xC0, "inst_retired", Kind::plain, 0x3, "instructions"},
    {0xC1, "flops", Kind::plain, kCtr0},  // the generic alias "flops" is the event name itself
    {0xC2, "uops_retired", Kind::plain, 0x3, "uops"},
    {0xC4, "br_inst_retired", Kind::plain, 0x3, "branches"},
    {0xC5, "br_miss_pred_retired", Kind::plain, 0x3, "branch-misses"},
    {0xC6, "cycles_int_masked"},
    {0xC7, "cycles_int_pending_and_masked"},
    {0xC8, "hw_int_rx"},
    {0xC9, "br_taken_retired"},
    {0xCA, "br_miss_pred_taken_ret"},
    {0xD0, "inst_decoded"},
    {0xD2, "partial_rat_stalls"},
    {0xE0, "br_inst_decoded"},
    {0xE2, "btb_misses"},
    {0xE4, "br_bogus"},
    {0xE6, "baclears"},
    // 5b: MMX-era events (Pentium II / Celeron / Pentium III). Unit masks ignored.
    {0xB0, "mmx_instr_exec"},
    {0xB1, "mmx_sat_instr_exec"},
    {0xB2, "mmx_uops_exec"},
    {0xB3, "mmx_instr_type_exec"},
    {0xCC, "fp_mmx_trans"},
    {0xCD, "mmx_assist"},
    {0xCE, "mmx_instr_ret"},
    {0xD4, "seg_rename_stalls"},
    {0xD5, "seg_reg_renames"},
    {0xD6, "ret_seg_renames"},
    // 5c: SSE (KNI) events, Pentium III. Unit masks ignored.
    {0x07, "emon_kni_pref_dispatched"},
    {0x4B, "emon_kni_pref_miss"},
    {0xD8, "emon_kni_inst_retired"},
    {0xD9, "emon_kni_comp_inst_ret"},
};
// clang-format on

constexpr bool codes_unique() {
  for (const auto& a : kEvents)
    for (const auto& b : kEvents)
      if (&a != &b && a.code == b.code) return false;
  return true;
}
static_assert(codes_unique(), "the P6 signal table lists an event code twice");

const EventSignal* find_event(std::uint64_t code) {
  const auto* it = std::find_if(std::begin(kEvents), std::end(kEvents),
                                [code](const EventSignal& e) { return e.code == code; });
  return it == std::end(kEvents) ? nullptr : it;
}

// k(name) + k(alias), optionally with a suffix (".m", ".self", ...).
u128 signal(const Segment& s, const EventSignal& e, std::string_view suffix = {}) {
  u128 k = s.per_cycle(std::string(e.name) + std::string(suffix));
  if (!e.alias.empty()) k += s.per_cycle(std::string(e.alias) + std::string(suffix));
  return k;
}

// The sum of the MESI states UMASK selects: the signals "<name><prefix>.m/.e/.s/.i".
u128 mesi_signal(const Segment& s, const EventSignal& e, unsigned umask, std::string_view prefix) {
  const std::string p(prefix);
  u128 k = 0;
  if (umask & 0x08) k += signal(s, e, p + ".m");
  if (umask & 0x04) k += signal(s, e, p + ".e");
  if (umask & 0x02) k += signal(s, e, p + ".s");
  if (umask & 0x01) k += signal(s, e, p + ".i");
  return k;
}

// The number of events per cycle of this segment that the event select `sel` on counter
// `counter` sees. At most 8 * (2^64 - 1): exact in 128 bits. `pentium_m`: the CPU has the
// hardware-prefetch filter of EventSignal::prefetch_filter.
u128 events_per_cycle(unsigned counter, std::uint64_t sel, const Segment& s, bool pentium_m) {
  const EventSignal* e = find_event(x86::event_select(sel));
  // An event code the table does not know counts nothing [U]. So does an event programmed on
  // a counter it does not exist on (FLOPS on counter 1, MUL on counter 0) [U]: the datasheet
  // leaves the result undefined, and zero makes a driver's misplacement visible.
  if (e == nullptr || (e->counters & (1U << counter)) == 0) return 0;
  const unsigned umask = x86::unit_mask(sel);
  // What the filter lets through: demand lines (00), prefetched lines (01), or both (10, 11).
  const unsigned filter = (umask >> 4) & 0x3;
  const bool filtered = pentium_m && e->prefetch_filter;
  const bool demand = !filtered || filter != 0x1;
  const bool prefetched = filtered && filter != 0x0;
  switch (e->kind) {
    case Kind::plain:
      return (demand ? signal(s, *e) : u128{0}) + (prefetched ? signal(s, *e, ".prefetch") : u128{0});
    case Kind::cycles: return s.per_cycle("cycles");
    case Kind::mesi:
      return (demand ? mesi_signal(s, *e, umask, "") : u128{0}) +
             (prefetched ? mesi_signal(s, *e, umask, ".prefetch") : u128{0});
    case Kind::self_any: {
      u128 k = signal(s, *e, ".self");
      if (umask & 0x20) k += signal(s, *e, ".other");
      return k;
    }
  }
  return 0;
}

std::string_view evtsel_name(unsigned i) { return i == 0 ? "PerfEvtSel0" : "PerfEvtSel1"; }

[[noreturn]] void no_such_msr(std::string_view op, std::uint32_t msr) {
  throw Error(errc::register_fault,
              fmt::format("#GP: {} of MSR {:#x} not implemented by the P6 PMU model", op, msr));
}

// Pentium M: family 6, model 9 (Banias) or 13 (Dothan) [1].
bool is_pentium_m(const CpuInfo& cpu) { return cpu.family == 6 && (cpu.model == 9 || cpu.model == 13); }

}  // namespace

// IA32_MISC_ENABLE (MSR 0x1A0) exists on the Pentium M only, and its bit 7 "performance
// monitoring available" is read-only and must be 1 for the PMU to be used [1] (perfctr
// intel_p6_init). On the other P6 CPUs the address is a #GP like any unknown MSR. Policies the
// sheet leaves open [U]:
//  - A read gives bit 7 as the firmware set it (1 unless a test models a BIOS that cleared it,
//    set_firmware_perfmon_available) and 0 in every other bit: the model has none of the
//    features the other bits control (automatic thermal control, FERR# multiplexing, Enhanced
//    SpeedStep, ...), so it claims none.
//  - A write never faults and changes nothing. Bit 7 is read-only (writing 0 leaves a 1, writing
//    1 does not make an unavailable PMU available), and the other bits are not writable either:
//    a bit that stuck would claim a feature the model does not have. A driver's
//    read-modify-write of the register thus succeeds and is a no-op.
//  - With bit 7 = 0 the PMU registers read and write as usual, but no counter counts: the
//    model's reading of "performance monitoring unavailable". A driver checks bit 7 before it
//    programs anything (perfctr refuses the CPU; so does the p6 backend).
P6Device::P6Device(const CpuInfo& cpu, bool perfmon_available)
    : pentium_m_(is_pentium_m(cpu)), cpu_(describe(cpu)) {
  set_firmware_perfmon_available(perfmon_available);
  pmi().set_clock(x86::nominal_clock_hz(cpu));  // freq= (x86_pmi.hpp, CLOCK)
}

void P6Device::set_firmware_perfmon_available(bool available) {
  if (!pentium_m_ && !available) {
    throw Error(errc::invalid_argument,
                fmt::format("{} is not a Pentium M: it has no IA32_MISC_ENABLE (0x1A0) whose bit 7 "
                            "firmware could clear",
                            cpu_));
  }
  perfmon_available_ = available;
}

void P6Device::configure(std::string_view setting, std::uint64_t value) {
  if (setting != "perfmon_available") return X86Device::configure(setting, value);
  if (value > 1)
    throw Error(errc::invalid_argument, fmt::format("setting perfmon_available takes 0 or 1, not {}", value));
  set_firmware_perfmon_available(value == 1);
}

std::uint64_t P6Device::read(std::uint32_t msr) {
  if (std::uint64_t v = 0; pmi().read(msr, v)) return v;  // LVTPC, the PMI handler [4]
  switch (msr) {
    case kPerfCtr0: return ctr_[0];
    case kPerfCtr1: return ctr_[1];
    case kPerfEvtSel0: return evtsel_[0];
    case kPerfEvtSel1: return evtsel_[1];
    case kMiscEnable:
      if (!pentium_m_) misc_enable_fault("rdmsr");
      return perfmon_available_ ? kPerfmonAvailable : 0;
    default: no_such_msr("rdmsr", msr);
  }
}

void P6Device::misc_enable_fault(std::string_view op) const {
  throw Error(errc::register_fault,
              fmt::format("#GP: {} of MSR {:#x} (IA32_MISC_ENABLE) not implemented by the P6 PMU model on {}: "
                          "only the Pentium M (family 6 model 9 or 13) has it",
                          op, kMiscEnable, cpu_));
}

void P6Device::write(std::uint32_t msr, std::uint64_t value) {
  if (pmi().write(msr, value)) return;  // LVTPC, the PMI handler [4]
  switch (msr) {
    case kMiscEnable:
      if (!pentium_m_) misc_enable_fault("wrmsr");
      return;  // bit 7 is read-only, the others are not modelled: see the constructor [U]
    case kPerfCtr0:
    case kPerfCtr1: {
      // Only EAX is stored; bits 39:32 become copies of bit 31 [4]: 0x80000000 -> 0xFF80000000.
      ctr_[msr - kPerfCtr0] = x86::sign_extended_write(value, kWidth);
      return;
    }
    case kPerfEvtSel0:
    case kPerfEvtSel1: {
      const unsigned i = msr - kPerfEvtSel0;
      const std::uint64_t bad = value & (i == 0 ? kReservedSel0 : kReservedSel1);
      if (bad != 0) {
        const int bit = std::countr_zero(bad);
        const char* why = bit >= 32   ? " (bits 63:32 are reserved)"
                          : bit == 22 ? " (EN exists only in PerfEvtSel0)"
                                      : "";
        x86::wrmsr_fault(evtsel_name(i), msr, value, fmt::format("reserved bit {} set{}", bit, why));
      }
      evtsel_[i] = value;
      // [U] policy: writing the event select starts a new measurement, so the edge detector
      // forgets the previous condition (the next asserted cycle is an edge).
      asserted_[i] = false;
      return;
    }
    default: no_such_msr("wrmsr", msr);
  }
}

std::uint64_t P6Device::rdpmc(std::uint32_t index) {
  if (index >= 2) x86::rdpmc_fault(index, "the P6 has counters 0 and 1 only");
  check_rdpmc_privilege();
  return ctr_[index];  // EDX = bits 39:32, EAX = bits 31:0 [4]
}

void P6Device::run(const Segment& segment) {
  if (segment.cycles == 0) return;
  counting::u128 pmis = 0;
  for (unsigned i = 0; i < 2; ++i) pmis += count(i, segment);
  pmi().ran(pmis, segment.cycles);  // one PMI line: the first delivered without the handler masks LVTPC [4]
}

// Counter i through one segment of N identical cycles, in closed form; the PMIs it raised.
counting::u128 P6Device::count(unsigned i, const Segment& segment) {
  const std::uint64_t sel = evtsel_[i];
  // Enable rule [3]: the global EN in PerfEvtSel0, and this counter's USR (CPL 1-3; the workload's
  // user mode is CPL 3) or OS (CPL 0) bit for the segment's mode.
  if (!x86::enabled(evtsel_[0])) return 0;
  // Pentium M with IA32_MISC_ENABLE bit 7 clear: nothing counts [1; U, see the constructor].
  if (!perfmon_available_) return 0;
  if (!counting::evtsel::counts_at(sel, segment.mode == Mode::user)) return 0;

  // CMASK / INV / E and the 40-bit wrap [3, 4], in closed form (counting.hpp, shared with the
  // architectural PMU model). [U] policy for E: the edge detector's state is kept per counter,
  // updated only in cycles the counter counts (a cycle filtered out by USR/OS or EN neither
  // asserts nor deasserts), and cleared when the event select is written.
  // Each wrap past 2^40 with INT = 1 raises one PMI through the local APIC [4]; with the PMI
  // handler installed and LVTPC unmasked, each is a sample and the counter is reloaded
  // (x86_pmi.hpp).
  const bool interrupt = counting::evtsel::interrupts(sel);
  const x86::Increments inc = x86::increments(segment.cycles, events_per_cycle(i, sel, segment, pentium_m_),
                                              counting::evtsel::filter(sel), asserted_[i]);
  const x86::CounterStep step = pmi().advance(i, ctr_[i], kWidth, segment, inc, interrupt);
  ctr_[i] = step.value;
  if (!interrupt) return 0;
  raise_pmis(step.wraps);
  return step.wraps;
}

}  // namespace pmc::sim
