// The emulated DEC Alpha 21064 (EV4) behind OSF/1 pfm(7): a backend no CPUID can select (probe
// never matches), chosen by name: `backend = "alpha21064_sim"` or `--backend alpha21064_sim`.
//
// The PMU as software sees it (docs/hardware/alpha21064.md, "sheet"; the OSF/1 pfm(7) page):
//  - Two counters. Counter 0 takes a MUX0 select (9 defined values, 4-bit field at ICCSR bits
//    11:8) and interrupts every 65536 events (PC0 = 0) or 4096 (PC0 = 1); counter 1 takes a
//    MUX1 select (3 bits at 34:32) and interrupts every 4096 (PC1 = 0) or 256 (PC1 = 1). The
//    two muxes feed different counters, so every event has one counter (events.toml).
//  - The counters themselves cannot be read: the driver counts their interrupts ("the driver's
//    counts of interrupts, not the chip's count of events", sheet 4b). An event count is
//    interrupts x interval, a multiple of the interval; a partial interval is never seen.
//  - ICCSR bits 35 and 36 disable counter 0 and 1 ([I] sheet 2); both at once is refused.
//
// Driver choices:
//  - encode(): `config` is the event's ICCSR image in write format (its MUX field, and its PC
//    bit for the shorter interval); `period=` chooses the interval, default the longer one.
//  - program(): disables monitoring, logs all processes, collects counters only (what opening
//    pfm(7) does), then writes the ICCSR: the OR of the events' images, with the disable bit of
//    a counter no event uses (its interrupts are then dismissed, pfm(7) NOTES).
//  - start()/stop(): enable/disable monitoring (PCNTRENABLE / PCNTRDISABLE).
//  - read_counter(): the interrupt count times the counter's interval, read back from the
//    ICCSR's PC bit. So CounterInfo::width is 64, the width of that count (the driver's counts
//    are 64-bit longs), not the chip's 16 and 12 bits, which software never sees: a session
//    folds the value over 64 bits and must not multiply it again.
//  - write_counter(): only 0, which clears the interrupt count (the partial interval carries
//    on, sheet 5.8); the driver cannot preset anything else.
//
// Profiling (pmc/profile.hpp): at each counter interrupt the pfm driver's handler records, as
// its items say, the IPL the CPU was at (a 9-slot histogram: IPL 0-5, 6 unused since counter
// interrupts arrive at IPL 6, 7 the idle thread, 8 user mode) and the interrupted PC (one
// bucket per 4 instructions, 16 bytes, over one user or kernel range). program_profile() sets
// the items (PFM_COUNTERS, plus PFM_IPL and PFM_PROFILING as asked) and the range
// (PCNTSETUADDR / PCNTSETKADDR); the driver's buffer covers less than 2^24 bytes.
//
// The device model's register map (sim/models/alpha21064/alpha21064.hpp; the RegisterFile is the
// driver's path to PALcode and the interrupt handler): 0 ICCSR, 1 and 2 the interrupt counts of
// counter 0 and 1, 4 PERFMON (1 enable, 0 disable), 5 LOG (1 all, 2 selected processes),
// 6 ITEMS (1 counters, 2 IPL, 4 profiling), 7 PROFILE (0 off, 1 user, 2 kernel) over
// [8 PSTART, 9 PEND), 0x10-0x18 the IPL histogram, 0x100000 + b profile bucket b.
#include <pmc/error.hpp>
#include <pmc/profile.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/profiling.hpp>
#include <pmc/sdk/raw_event.hpp>

#include <fmt/format.h>

namespace pmc::alpha21064_sim {

namespace {

constexpr std::uint32_t kIccsr = 0;
// Register 1 and 2 are the two counters (COUNT0, COUNT1), reached through the register file by
// index; nothing here names them.
constexpr std::uint32_t kPerfmon = 4;
constexpr std::uint32_t kLog = 5;
constexpr std::uint32_t kItems = 6;
constexpr std::uint32_t kProfile = 7;
constexpr std::uint32_t kProfileStart = 8;
constexpr std::uint32_t kProfileEnd = 9;
constexpr std::uint32_t kIplSlot0 = 0x10;
constexpr std::uint32_t kBucket0 = 0x100000;
constexpr std::uint64_t kLogAll = 1;
constexpr std::uint64_t kItemCounters = 1;  // PFM_COUNTERS
constexpr std::uint64_t kItemIpl = 2;       // PFM_IPL
constexpr std::uint64_t kItemProfiling = 4; // PFM_PROFILING
constexpr std::uint64_t kBucketBytes = 16;  // 4 instructions
constexpr std::uint64_t kMaxRangeBytes = 1ull << 24;  // 2^20 buckets: ENOMEM beyond

// The IPL histogram's slots (pfm(7) PCNTGETIPLHIS).
constexpr const char* kIplLabels[] = {"IPL 0", "IPL 1", "IPL 2", "IPL 3", "IPL 4",
                                      "IPL 5", "IPL 6 (unused)", "idle", "user"};

constexpr std::uint64_t kPc1 = 1ull << 0;
constexpr std::uint64_t kPc0 = 1ull << 3;
constexpr std::uint64_t kDisable0 = 1ull << 35;
constexpr std::uint64_t kDisable1 = 1ull << 36;
constexpr unsigned kMux1Code = 0x10;    // events.toml: code = 0x10 + MUX1

// Interrupt intervals, longer first (the default): sheet 2, PF_C0_INT_EVERY_* / PF_C1_INT_EVERY_*.
struct Periods {
  std::uint64_t longer;   // PC bit 0
  std::uint64_t shorter;  // PC bit 1
};
constexpr Periods kPeriods[2] = {{65536, 4096}, {4096, 256}};

bool mux0_defined(std::uint64_t v) {
  return v == 0x0 || v == 0x2 || v == 0x4 || v == 0x6 || v == 0x8 || v == 0xA || v == 0xB || v == 0xC || v == 0xE;
}

class Alpha21064SimBackend final : public Backend, public ProfilingDriver {
 public:
  // The probe is the data file's: no [[probe]] rule, so never a match, with its `unmatched`
  // reason. The PMU is the data file's too, tagged ev4 whatever the CPU.
  PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match&) const override {
    return pmu_from_data(cpu, data, "ev4");
  }

  const ProfilingDriver* profiling() const noexcept override { return this; }

  Encoding encode(const EventSpec& spec, const PmuContext& ctx) const override {
    const EventCatalog& catalog = ctx.catalog;
    const PmuInfo& pmu = ctx.pmu;
    // freq=N asks a driver to change the period as it goes; the 21064's counters interrupt at
    // one of two fixed intervals, 2^N events each (kPeriods), so there is nothing to adjust.
    if (const EventModifier* m = spec.modifier("freq"))
      throw Error(errc::not_supported,
                  event_error(spec, m->column,
                              fmt::format("{} cannot be sampled at a frequency (freq=): the Alpha 21064's counters "
                                          "interrupt at fixed intervals of 2^N events (counter 0: 65536 or 4096, "
                                          "counter 1: 4096 or 256), chosen with period=",
                                          spec.name)));
    // perf's raw forms have no meaning here: a raw value would be an ICCSR image, which selects
    // both counters' events at once (MUX0 = 0 is PF_ISSUES, MUX1 = 0 PF_DCACHE), so it cannot
    // name one event; and Linux perf has no 21064 PMU, so no PMU/term=value/ form.
    if (spec.perf_terms() || (!catalog.find(spec.name) && raw_config(spec)))
      throw Error(errc::not_supported,
                  event_error(spec, 1,
                              "the Alpha 21064 takes no raw events: an ICCSR image selects the events of both "
                              "counters at once (MUX0 = 0 is PF_ISSUES and MUX1 = 0 PF_DCACHE), so a raw value "
                              "cannot name one event, and Linux perf has no PMU/term=value/ form for it; use the "
                              "event names (pmc list)"));
    Encoding e = encode_with_catalog(spec, catalog, pmu);
    const EventDef& def = *e.def;
    const unsigned counter = def.code >= kMux1Code ? 1 : 0;
    const std::uint64_t mux = counter == 0 ? def.code : def.code - kMux1Code;
    if (counter == 0 ? !mux0_defined(mux) : mux > 7) {
      throw Error(errc::invalid_argument,
                  fmt::format("event {} ({}) has code 0x{:X}, which is neither a defined MUX0 select (0x0, 0x2, "
                              "0x4, 0x6, 0x8, 0xA, 0xB, 0xC, 0xE) nor 0x10 + a MUX1 select (0x10-0x17)",
                              def.name, def.source.str(), def.code));
    }
    if (e.counters != std::vector<unsigned>{counter}) {
      throw Error(errc::invalid_argument,
                  fmt::format("event {} ({}) is a MUX{} select, so it counts on counter {} only; its 'counters' "
                              "must be [{}]",
                              def.name, def.source.str(), counter, counter, counter));
    }

    const Periods& periods = kPeriods[counter];
    std::uint64_t period = periods.longer;
    if (const EventModifier* m = spec.modifier("period")) {
      if (!m->value || (*m->value != periods.longer && *m->value != periods.shorter)) {
        throw Error(errc::attribute_value,
                    event_error(spec, m->column,
                                fmt::format("period{} is not an interrupt interval of counter {} (allowed: {}, {})",
                                            m->value ? fmt::format("={}", *m->value) : std::string(), counter,
                                            periods.longer, periods.shorter)));
      }
      period = *m->value;
    }

    const RegisterFormat& f = catalog.format();
    std::uint64_t config = 0;
    f.set(config, counter == 0 ? "mux0" : "mux1", mux);
    if (period == periods.shorter) f.set(config, counter == 0 ? "pc0" : "pc1", 1);
    e.config = config;
    e.canonical = fmt::format("{}::{}:period={}", pmu.name, def.name, period);
    e.interrupt = true;  // the only way this PMU counts
    e.granularity = period;  // counts are interrupts x interval
    return e;
  }

  void program(RegisterFile& regs, const PmuContext&, std::span<const Assignment> set) const override {
    if (set.empty()) return;
    std::uint64_t iccsr = 0;
    bool used[2] = {false, false};
    for (const auto& a : set) {
      iccsr |= a.encoding->config;
      used[a.counter->index] = true;
    }
    if (!used[0]) iccsr |= kDisable0;
    if (!used[1]) iccsr |= kDisable1;
    regs.write(kPerfmon, 0);
    regs.write(kLog, kLogAll);
    regs.write(kItems, kItemCounters);
    regs.write(kIccsr, iccsr);
  }

  void start(RegisterFile& regs, const PmuContext&, std::span<const Assignment>) const override {
    regs.write(kPerfmon, 1);
  }

  void stop(RegisterFile& regs, const PmuContext&, std::span<const Assignment>) const override {
    regs.write(kPerfmon, 0);
  }

  std::uint64_t read_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c) const override {
    const std::uint64_t interrupts = regs.read(c.counter_msr);
    const bool shorter = (regs.read(kIccsr) & (c.index == 0 ? kPc0 : kPc1)) != 0;
    const Periods& periods = kPeriods[c.index == 0 ? 0 : 1];
    return interrupts * (shorter ? periods.shorter : periods.longer);
  }

  void write_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c, std::uint64_t value) const override {
    if (value != 0) {
      throw Error(errc::invalid_argument,
                  fmt::format("alpha21064_sim counter {} cannot be preset to {}: the pfm driver counts interrupts "
                              "and can only clear its count",
                              c.index, value));
    }
    regs.write(c.counter_msr, 0);
  }

  // ProfilingDriver.
  void check_profile(const PmuContext&, const ProfileRequest& request) const override {
    if (!request.pc) return;
    const PcRange& r = *request.pc;
    if (r.start >= r.end)
      throw Error(errc::invalid_argument,
                  fmt::format("PC range [{:#x}, {:#x}) is empty: its start must be below its end", r.start, r.end));
    if (r.end - r.start >= kMaxRangeBytes)
      throw Error(errc::invalid_argument,
                  fmt::format("PC range [{:#x}, {:#x}) is {} bytes; the pfm driver's profile buffer covers less than "
                              "{} bytes ({} buckets of {}): choose a smaller range",
                              r.start, r.end, r.end - r.start, kMaxRangeBytes, kMaxRangeBytes / kBucketBytes,
                              kBucketBytes));
  }

  void program_profile(RegisterFile& regs, const PmuContext&, std::span<const Assignment>,
                       const ProfileRequest& request) const override {
    std::uint64_t items = kItemCounters;
    if (request.levels) items |= kItemIpl;
    if (request.pc) items |= kItemProfiling;
    regs.write(kItems, items);
    for (std::uint32_t slot = 0; slot < std::size(kIplLabels); ++slot) regs.write(kIplSlot0 + slot, 0);
    regs.write(kProfile, 0);
    if (request.pc) {
      regs.write(kProfileStart, request.pc->start);
      regs.write(kProfileEnd, request.pc->end);
      regs.write(kProfile, request.pc->space == AddressSpace::user ? 1 : 2);
    }
  }

  void clear_profile(RegisterFile& regs, const PmuContext&, const ProfileRequest& request) const override {
    for (std::uint32_t slot = 0; slot < std::size(kIplLabels); ++slot) regs.write(kIplSlot0 + slot, 0);
    if (request.pc) regs.write(kProfile, request.pc->space == AddressSpace::user ? 1 : 2);  // empty again
  }

  LevelHistogram read_levels(RegisterFile& regs, const PmuContext&) const override {
    LevelHistogram h;
    for (std::uint32_t slot = 0; slot < std::size(kIplLabels); ++slot)
      h.bins.push_back({kIplLabels[slot], regs.read(kIplSlot0 + slot)});
    return h;
  }

  PcProfile read_pc_profile(RegisterFile& regs, const PmuContext&, const PcRange& range) const override {
    PcProfile p;
    p.range = range;
    p.bucket_bytes = kBucketBytes;
    const std::uint64_t buckets = (range.end - range.start + kBucketBytes - 1) / kBucketBytes;
    p.samples.reserve(buckets);
    for (std::uint64_t b = 0; b < buckets; ++b) p.samples.push_back(regs.read(kBucket0 + static_cast<std::uint32_t>(b)));
    return p;
  }
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "alpha21064_sim",
                                        kBackendProfiles, &make_backend<Alpha21064SimBackend>};

}  // namespace pmc::alpha21064_sim

PMC_EXPORT_BACKEND(pmc::alpha21064_sim::descriptor);
