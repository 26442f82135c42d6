// The Intel architectural PMU device model (versions 1 to 5): what each counter counts, and
// overflow. Facts cite docs/hardware/archperf.md by section; policies the fact sheet leaves open
// are marked [U] and explained where they are applied (and summed up in archperf_model.hpp).
#include "archperf_model.hpp"
#include "archperf_registers.hpp"
#include "archperf_topdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace pmc::sim {

using namespace archperf;

namespace {

using counting::u128;

// ---------------------------------------------------------------------------------------------
// Signals. The architectural events [7a], by EBX bit index. An empty signal means "no generic
// signal": the event counts its raw signal like any model-specific event.
struct ArchEvent {
  std::uint8_t event;
  std::uint8_t umask;
  std::string_view signal;
};

// clang-format off
constexpr ArchEvent kArchEvents[] = {
    {0x3C, 0x00, "cycles"},          // 0 UnHalted Core Cycles (implicit: 1 per unhalted cycle)
    {0xC0, 0x00, "instructions"},    // 1 Instructions Retired
    {0x3C, 0x01, "ref-cycles"},      // 2 UnHalted Reference Cycles
    {0x2E, 0x4F, "llc-references"},  // 3 LLC Reference
    {0x2E, 0x41, "llc-misses"},      // 4 LLC Misses
    {0xC4, 0x00, "branches"},        // 5 Branch Instructions Retired
    {0xC5, 0x00, "branch-misses"},   // 6 Branch Misses Retired
    {0xA4, 0x01, "slots"},           // 7 Topdown Slots
    {0xA4, 0x02, {}},                // 8 Topdown Backend Bound
    {0x73, 0x00, {}},                // 9 Topdown Bad Speculation
    {0x9C, 0x01, {}},                // 10 Topdown Frontend Bound
    {0xC2, 0x02, {}},                // 11 Topdown Retiring
    {0xE4, 0x01, {}},                // 12 LBR Inserts
};
// clang-format on

// The fixed counters' events [7b]: 0 INST_RETIRED.ANY, 1 CPU_CLK_UNHALTED.CORE,
// 2 CPU_CLK_UNHALTED.REF, 3 TOPDOWN.SLOTS. Counters 4..15 (none in versions 1-5) count
// "fixed.<i>" [U].
constexpr std::string_view kFixedSignals[] = {"instructions", "cycles", "ref-cycles", "slots"};

// Occurrences per cycle of a signal. "ref-cycles" defaults to the unhalted cycles when the
// workload does not give it [U]: reference cycles tick at a fixed (TSC) rate, which a workload
// without frequency changes sees as equal to the core clock. Given explicitly, it counts as
// given (halted or not, like every other signal).
u128 per_cycle(const Segment& s, Signal signal) {
  static const Signal ref = pmc::signal("ref-cycles");
  if (signal == ref) {
    for (const SignalCount& c : s.signals)
      if (c.signal == ref) return c.per_cycle;
    return s.per_cycle(kCyclesSignal);
  }
  return s.per_cycle(signal);
}

// "raw.0xUUEE": the signal of event EE with unit mask UU; with UMASK2 VV != 0, "raw.0xVVUUEE".
std::string raw_signal(unsigned event, unsigned umask, unsigned umask2) {
  if (umask2 != 0) return fmt::format("raw.0x{:02X}{:02X}{:02X}", umask2, umask, event);
  return fmt::format("raw.0x{:02X}{:02X}", umask, event);
}

// The event-select bits the signal depends on: event 7:0, unit mask 15:8, UMASK2 47:40.
constexpr std::uint64_t kSignalBits = 0xFFFFULL | (0xFFULL << 40);

std::string fixed_signal(unsigned i) {
  return i < std::size(kFixedSignals) ? std::string(kFixedSignals[i]) : fmt::format("fixed.{}", i);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Signals [7a, 3.1a].

std::string ArchPerfDevice::select_signal(std::uint64_t sel, std::uint64_t response) const {
  const unsigned event = x86::event_select(sel);
  const unsigned umask = x86::unit_mask(sel);
  const unsigned umask2 = static_cast<unsigned>(sel >> 40) & 0xFF;
  // Which signal the event select reads [7a]. An architectural event (index j < EAX[31:24])
  // that EBX marks unavailable counts nothing [U]; an enumerated one counts its generic signal.
  // An encoding that is not an enumerated architectural event on this CPU (j >= EAX[31:24], or
  // any other event/umask pair) is a model-specific event: it counts "raw.0xUUEE" [U].
  if (umask2 == 0) {
    for (unsigned j = 0; j < std::size(kArchEvents) && j < ebx_length_; ++j) {
      const ArchEvent& e = kArchEvents[j];
      if (e.event != event || e.umask != umask) continue;
      if (((unavailable_ >> j) & 1U) != 0) return {};
      if (!e.signal.empty()) return std::string(e.signal);
      break;  // enumerated, but without a generic signal: its raw signal
    }
  }
  // An offcore-response select reads its MSR: its signal is qualified by the value [3.1a, U].
  if (offcore_msr(version_, event, umask) != 0)
    return fmt::format("{}.rsp.0x{:X}", raw_signal(offcore_first(event), umask, umask2), response);
  return raw_signal(event, umask, umask2);
}

std::string ArchPerfDevice::signal_of(const Encoding& encoding) const {
  const std::uint64_t sel = encoding.config;
  // A fixed-counter pseudo event (code 00H, the unit mask naming the counter) counts its fixed
  // counter's event.
  // Linux's pseudo-encodings of the PERF_METRICS bytes (code 00H, unit mask 80H + byte [12])
  // read the byte's signal.
  if (const unsigned umask = x86::unit_mask(sel); x86::event_select(sel) == 0 && umask >= 0x80 && umask < 0x88)
    return kTopdownSignals[umask - 0x80];
  if (encoding.fixed && x86::event_select(sel) == 0) return fixed_signal(*encoding.fixed);
  return select_signal(sel, encoding.extra.empty() ? 0 : encoding.extra_value);
}

void ArchPerfDevice::refresh_signal(unsigned i) {
  const std::uint64_t sel = evtsel_[i];
  const std::uint32_t msr = offcore_msr(version_, x86::event_select(sel), x86::unit_mask(sel));
  std::uint64_t response = 0;
  if (msr != 0)
    if (const auto it = extra_.find(msr); it != extra_.end()) response = it->second;
  // Starting and stopping rewrites the select with EN flipped: nothing to work out again (and
  // nothing allocated) unless the event, the unit masks or the offcore value changed.
  const std::uint64_t key = sel & kSignalBits;
  if (signal_key_[i] == key && signal_response_[i] == response) return;
  signal_key_[i] = key;
  signal_response_[i] = response;
  const std::string name = select_signal(sel, response);
  gp_counts_[i] = !name.empty();
  gp_signal_[i] = name.empty() ? kCyclesSignal : pmc::signal(name);
}

void ArchPerfDevice::init_signals() {
  for (unsigned i = 0; i < kMaxFixed; ++i) fixed_signal_[i] = pmc::signal(fixed_signal(i));
  for (unsigned k = 0; k < metric_signal_.size(); ++k) metric_signal_[k] = pmc::signal(kTopdownSignals[k]);
  for (unsigned i = 0; i < kMaxGp; ++i) refresh_signal(i);
}

// ---------------------------------------------------------------------------------------------
// Counting [4].

void ArchPerfDevice::run(const Segment& segment) {
  if (segment.cycles == 0) return;
  // v4+: CTR_Frz stops every counter until cleared through STATUS_RESET [4]. Frozen cycles are
  // not counted cycles: they leave the edge detectors alone.
  if (version_ >= 4 && (global_status_ & kCtrFrz) != 0) return pmi().ran(0, segment.cycles);  // time passes
  // Freeze on PMI [4a]: the first PMI raised freezes the PMU once its cycle is over, unless the
  // simulated handler takes it (it undoes the freeze as a driver does, in no time). The
  // segment is cut after that cycle, and the rest runs frozen.
  const bool freezes = freeze_on_pmi() && !pmi().sampling();
  if (freezes) {
    if (const auto first = first_pmi(segment); first && *first + 1 < segment.cycles) {
      Segment head = segment, tail = segment;
      head.cycles = *first + 1;
      tail.cycles = segment.cycles - head.cycles;
      if (segment.pc_begin < segment.pc_end) {  // the PCs of each part, as the whole has them
        const auto at = [&](std::uint64_t c) {
          return segment.pc_begin +
                 static_cast<std::uint64_t>(static_cast<u128>(c) * (segment.pc_end - segment.pc_begin) / segment.cycles);
        };
        head.pc_end = std::max(at(head.cycles), head.pc_begin + 1);
        tail.pc_begin = at(head.cycles);
        tail.pc_end = std::max(segment.pc_end, tail.pc_begin + 1);
      }
      run(head);  // ends with the freeze
      run(tail);
      return;
    }
  }
  const bool handled = pmi().sampling();
  u128 pmis = 0;
  for (unsigned i = 0; i < gp_end_; ++i)
    if (has_gp(i)) pmis += count_gp(i, segment, handled);
  // PERF_METRICS first: it asks whether fixed counter 3 counts the segment, not what it holds.
  if (metric_bytes_ != 0) count_metrics(segment);
  for (unsigned i = 0; i < kMaxFixed; ++i)
    if (has_fixed(i)) pmis += count_fixed(i, segment, handled);
  pmi().ran(pmis, segment.cycles);
  if (freezes && pmis != 0) freeze();
}

// DEBUGCTL.FREEZE_PERFMON_ON_PMI, version 2 on [4a].
bool ArchPerfDevice::freeze_on_pmi() const { return version_ >= 2 && (debugctl_ & kFreezePerfmonOnPmi) != 0; }

// The freeze at a PMI [4a]: versions 2 and 3 clear GLOBAL_CTRL's enables; version 4 on sets
// CTR_Frz in GLOBAL_STATUS instead (the "streamlined" freeze), which stops every counter until
// STATUS_RESET clears it.
void ArchPerfDevice::freeze() {
  if (version_ >= 4) global_status_ |= kCtrFrz;
  else global_ctrl_ = 0;
}

// The cycle of the segment in which the first PMI is raised: the earliest overflow of a counter
// with INT / PMI that counts the segment; nothing changes.
std::optional<std::uint64_t> ArchPerfDevice::first_pmi(const Segment& segment) const {
  std::optional<std::uint64_t> first;
  auto earliest = [&](std::optional<std::uint64_t> c) {
    if (c && (!first || *c < *first)) first = c;
  };
  for (unsigned i = 0; i < gp_end_; ++i) {
    if (!has_gp(i) || !counting::evtsel::interrupts(evtsel_[i])) continue;
    const auto k = gp_rate(i, segment);
    if (!k) continue;
    bool asserted = asserted_[i];
    earliest(x86::PmiUnit::first_overflow(
        pmc_[i], gp_width_, x86::increments(segment.cycles, *k, counting::evtsel::filter(evtsel_[i]), asserted)));
  }
  for (unsigned i = 0; i < kMaxFixed; ++i) {
    if (!has_fixed(i) || ((fixed_ctrl_ >> (kBlockBits * i)) & kFixedPmi) == 0) continue;
    const auto k = fixed_rate(i, segment);
    if (!k) continue;
    bool no_edge = false;
    earliest(x86::PmiUnit::first_overflow(fixed_[i], fixed_width_,
                                          x86::increments(segment.cycles, *k, counting::Filter{}, no_edge)));
  }
  return first;
}

// ---------------------------------------------------------------------------------------------
// Top-down [12].

// Fixed counter 3's slots per cycle of a segment: the workload's `slots` when it gives it, else
// width x unhalted cycles on a part with a known width [U].
static u128 slots_per_cycle(const Segment& s, Signal slots, unsigned width) {
  for (const SignalCount& c : s.signals)
    if (c.signal == slots) return c.per_cycle;
  return static_cast<u128>(width) * s.per_cycle(kCyclesSignal);
}

void ArchPerfDevice::count_metrics(const Segment& segment) {
  // EN_PERF_METRICS (GLOBAL_CTRL bit 48), and fixed counter 3 counting this segment [I].
  if (((global_ctrl_ >> kPerfMetricsBit) & 1U) == 0) return;
  const std::uint64_t block = (fixed_ctrl_ >> (kBlockBits * 3)) & 0xF;
  if ((block & (segment.mode == Mode::user ? kFixedUsr : kFixedOs)) == 0) return;
  if (((global_ctrl_ >> (kFixedBit0 + 3)) & 1U) == 0) return;
  const u128 n = segment.cycles;
  metric_slots_ += n * slots_per_cycle(segment, fixed_signal_[3], slot_width_);
  // In 1/255 slots, so that a byte is the quotient of two accumulators.
  for (unsigned k = 0; k < metric_bytes_; ++k) metric_acc_[k] += n * 255 * segment.per_cycle(metric_signal_[k]);
}

std::uint64_t ArchPerfDevice::perf_metrics() const {
  if (metric_slots_ == 0) return metric_written_;
  std::uint64_t v = 0;
  for (unsigned k = 0; k < metric_bytes_; ++k) {
    // floor(255 x signal / slots), at most 0xFF when the signals exceed the slots [U].
    const u128 byte = metric_acc_[k] / metric_slots_;
    v |= static_cast<std::uint64_t>(byte > 0xFF ? 0xFF : byte) << (8 * k);
  }
  return v;
}

void ArchPerfDevice::clear_metrics() {
  metric_acc_.fill(0);
  metric_slots_ = 0;
  metric_written_ = 0;
}

void ArchPerfDevice::write_perf_metrics(std::uint64_t value) {
  // The bytes written are fractions of FIXED_CTR3 as it stands [I]: 0 resets the metrics, and
  // a value restored after FIXED_CTR3 weighs as many slots as that counter holds.
  metric_written_ = value;
  metric_slots_ = fixed_[3];
  for (unsigned k = 0; k < metric_bytes_; ++k) metric_acc_[k] = static_cast<u128>((value >> (8 * k)) & 0xFF) * fixed_[3];
}

// GP counter i's events per cycle of the segment, or nullopt when it does not count it: EN,
// then (v2+) GLOBAL_CTRL[i], then USR (CPL 1-3; the workload's user mode is CPL 3) or OS (CPL 0) [4].
std::optional<u128> ArchPerfDevice::gp_rate(unsigned i, const Segment& segment) const {
  const std::uint64_t sel = evtsel_[i];
  if (!x86::enabled(sel)) return std::nullopt;
  if (has_global() && ((global_ctrl_ >> i) & 1U) == 0) return std::nullopt;
  if (!counting::evtsel::counts_at(sel, segment.mode == Mode::user)) return std::nullopt;
  // The signal was worked out when the event select (or its offcore MSR) was written.
  return gp_counts_[i] ? per_cycle(segment, gp_signal_[i]) : u128{0};
}

// Fixed counter i's: its enable field, 1 OS (CPL 0), 2 USR (CPL > 0), 3 both; and GLOBAL_CTRL[32+i] [3, 4].
std::optional<u128> ArchPerfDevice::fixed_rate(unsigned i, const Segment& segment) const {
  const std::uint64_t block = (fixed_ctrl_ >> (kBlockBits * i)) & 0xF;
  if ((block & (segment.mode == Mode::user ? kFixedUsr : kFixedOs)) == 0) return std::nullopt;
  if (((global_ctrl_ >> (kFixedBit0 + i)) & 1U) == 0) return std::nullopt;
  // Fixed counters have no event select and no filter; they count their event whatever EBX
  // says about its GP twin [U]. Fixed counter 3: slots_per_cycle.
  return i == 3 ? slots_per_cycle(segment, fixed_signal_[3], slot_width_) : per_cycle(segment, fixed_signal_[i]);
}

u128 ArchPerfDevice::count_gp(unsigned i, const Segment& segment, bool handled) {
  const auto k = gp_rate(i, segment);
  if (!k) return 0;
  const std::uint64_t sel = evtsel_[i];
  // AnyThread (bit 21) counts like a plain event: the model is a single logical processor [U].
  const bool interrupt = counting::evtsel::interrupts(sel);
  const x86::Increments inc = x86::increments(segment.cycles, *k, counting::evtsel::filter(sel), asserted_[i]);
  const x86::CounterStep step = pmi().advance(i, pmc_[i], gp_width_, segment, inc, interrupt);
  pmc_[i] = step.value;
  return overflow(i, interrupt, handled, step.wraps);
}

u128 ArchPerfDevice::count_fixed(unsigned i, const Segment& segment, bool handled) {
  const auto k = fixed_rate(i, segment);
  if (!k) return 0;
  const bool interrupt = ((fixed_ctrl_ >> (kBlockBits * i)) & kFixedPmi) != 0;
  bool no_edge = false;
  const x86::Increments inc = x86::increments(segment.cycles, *k, counting::Filter{}, no_edge);
  const x86::CounterStep step = pmi().advance(kFixedBit0 + i, fixed_[i], fixed_width_, segment, inc, interrupt);
  fixed_[i] = step.value;
  return overflow(kFixedBit0 + i, interrupt, handled, step.wraps);
}

// The overflows of the counter whose status bit is `status_bit`; the PMIs they raised.
u128 ArchPerfDevice::overflow(unsigned status_bit, bool pmi, bool handled, u128 wraps) {
  if (wraps == 0) return 0;
  // v2+: the overflow sets GLOBAL_STATUS whether or not a PMI is requested [4, U (recommended)];
  // the simulated handler, when it takes the PMI, clears it again through STATUS_RESET [4a].
  if (has_global() && !(pmi && handled)) global_status_ |= std::uint64_t{1} << status_bit;
  if (!pmi) return 0;
  // Each wrap with INT / the fixed PMI bit raises one PMI through the local APIC LVTPC [4].
  raise_pmis(wraps);
  return wraps;
}

}  // namespace pmc::sim
