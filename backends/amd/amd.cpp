// AMD core performance counters, K7 to Zen 5 (and Hygon Dhyana).
//
// The backend is its data (amd.toml: the probe table, the two counter groups, the registers, the
// PERF_CTL format with the 12-bit event select, the h/g modifiers; events/<tag>.toml: the events)
// plus the quirks below. Facts and decisions: docs/hardware/amd.md, cited by section.
//
// Quirks:
//  - Counter group by CPUID, not by family (amd.md 2.2, 5.3 item 6, 9.4): PerfCtrExtCore
//    (0x80000001:ECX[23]) selects the six interleaved counters PERF_CTL/PERF_CTR at
//    0xC0010200 + 2i, else the four legacy PerfEvtSel/PerfCtr at 0xC0010000/0xC0010004. The data
//    declares both groups; pmu() keeps exactly one. With PerfMonV2 (0x80000022:EAX[0], which Linux
//    amd_core_pmu_init only considers with PerfCtrExtCore) the count is 0x80000022:EBX[3:0] (0:
//    six, the default the KVM PMU selftest promises, amd.md 2.2). A Zen or family 15h CPU whose
//    CPUID reports neither extension (a KVM guest, data/cpuid/amd-zen4-kvm.txt) still matches,
//    with the legacy layout, and the probe's reason says the CPUID hides the PMU extensions
//    (amd.md 1.5); which parts have them by design is amd.toml's (the `cpus` of the
//    PerfCtrExtCore counter group and of the PerfMonV2 registers).
//  - The msr allowlist (PmuInfo::registers): the chosen group's MSRs, the legacy MSRs that mirror
//    PERF_CTL/CTR 0-3 with PerfCtrExtCore (amd.md 2.2), and the PerfMonV2 global registers
//    0xC0000300-0xC0000303 only when the CPUID bit says so (amd.md 2.3), whatever the tag.
//  - Reserved bits per family (amd.md 3.2, 9.3): amd.toml holds the common set (21, 36-39,
//    42-63); pmu() adds EventSelect[11:8] (32-35) and GuestOnly/HostOnly (40-41) on K7 and K8
//    (family 0Fh and below), and 40-41 on family 11h.
//  - Family 15h umask-dependent constraints (amd.md 5.3 items 1-3; Linux
//    amd_get_event_constraints_f15h): 0x000 with unit-mask bits in both nibbles, and 0x004 with
//    more than one unit-mask bit, only on PERF_CTL3; 0x031 with more than one unit-mask bit is
//    unschedulable (refused, no_counter). The per-code rules are data (events/fam15h.toml).
//  - Zen large-increment events (`merge = true`, amd.md 5.3 item 5): encode() limits them to even
//    counters N whose odd neighbour N+1 exists (the scheduler keeps N+1 free). The driver
//    programs N+1 with the merge event PMCxFFF (0xF_0000_00FF, [pmu] merge_event) and zeroes it
//    in program(), sets its EN just before N's in start(), clears it just after N's in stop();
//    it keeps the merge event (without EN) in N+1 while stopped so the pair stays recognisable
//    from the registers. A pair is read as N + 2^48 * (N+1) and written the same way, on a Zen
//    family (0x17 and later) only, when N+1's event select holds the merge event.
//  - PerfMonV2 global control (amd.md 2.3, 3.4; Linux amd/core.c): a counter counts only when its
//    EN and PerfCntrGlobalCtl[i] are both set, and GlobalCtl's reset value is not relied upon
//    (amd.md 8.3). program() clears GlobalCtl before it writes the event selects and clears
//    stale overflow bits through PerfCntrGlobalStatusClr; start() sets the EN bits (SDK order,
//    counter by counter), then the used counters' GlobalCtl bits (merge partners included) in
//    one write; stop() clears GlobalCtl first (every counter stops at once), then the EN bits.
//    Without PerfMonV2 there is no global enable: the SDK's per-counter EN driver.
//  - Northbridge events on K8 to family 14h (codes 0xE0-0xFF, amd.md 5.1, 5.3 item 4): one
//    counter index per node across its cores. Not applied here: a session of the register path
//    programs one CPU (the rule is moot), and through perf the kernel enforces it.
//  - `h` and `g` written as bare words (":h") on a CPU without HostOnly/GuestOnly (K7, K8,
//    family 11h: their event files declare no h/g, amd.md 1.5, 3.2): the parser keeps a bare word
//    as a unit mask, which the encoder would report as a unit-mask error; encode() refuses them as
//    the modifiers they are (errc::attribute, as libpfm4's PFM_ERR_ATTR), naming the bits.
//  - Raw events: perf's rNNN and cpu/term=value,.../ (pmc/sdk/raw_event.hpp, amd.toml's
//    [perf_format]); catalog events are encoded with encode_with_catalog, unchanged apart from
//    their counters.
//  - K7 model 1 has no local APIC, so INT raises nothing (amd.md 4): noted in the probe's reason.
#include "x86_sampling.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/raw_event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <string>
#include <vector>

namespace pmc::amd {

namespace {

// Registers (amd.md section 2).
constexpr std::uint32_t kLegacyCtl0 = 0xC0010000;  // PerfEvtSel0-3, PerfCtr0-3 at 0xC0010004
constexpr std::uint32_t kLegacyCtr0 = 0xC0010004;
constexpr std::uint32_t kCtl0 = 0xC0010200;        // PERF_CTLi = 0xC0010200 + 2i, PERF_CTRi + 1
constexpr std::uint32_t kGlobalStatus = 0xC0000300;     // read-only
constexpr std::uint32_t kGlobalCtl = 0xC0000301;
constexpr std::uint32_t kGlobalStatusClr = 0xC0000302;
constexpr std::uint32_t kGlobalStatusSet = 0xC0000303;

constexpr unsigned kLegacyCounters = 4;
constexpr unsigned kExtCoreCounters = 6;
constexpr unsigned kWidth = 48;
constexpr unsigned kFirstZenFamily = 0x17;  // PMU_FL_PAIR from family 17h (amd.md 5.3 item 5)

// PERF_CTL bits the code needs beyond the data's format (amd.md 3.1).
constexpr std::uint64_t kEventHigh = 0xFull << 32;   // EventSelect[11:8]
constexpr std::uint64_t kHostGuest = 0x3ull << 40;   // GuestOnly 40, HostOnly 41
constexpr std::uint64_t kMergeFallback = 0xFFF;      // PMCxFFF, when the data has no merge_event

bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

bool names(const std::vector<std::string>& cpus, std::string_view tag) {
  return !tag.empty() && std::find(cpus.begin(), cpus.end(), tag) != cpus.end();
}

// Whether the parts of this tag have PerfCtrExtCore by design (amd.md 1.3: family 15h and every
// Zen): amd.toml's PerfCtrExtCore counter group (control register 0xC0010200) names the tag.
bool has_ext_core_by_design(const EventCatalog& data, std::string_view tag) {
  return std::any_of(data.pmu().counters.begin(), data.pmu().counters.end(), [&](const CounterGroup& g) {
    return g.kind == CounterKind::general && g.control == kCtl0 && names(g.cpus, tag);
  });
}

// Whether the parts of this tag have PerfMonV2 by design (amd.md 2.3: Zen 4 and later): amd.toml
// declares PerfCntrGlobalCtl (0xC0000301) for the tag.
bool has_perfmon_v2_by_design(const EventCatalog& data, std::string_view tag) {
  return std::any_of(data.pmu().registers.begin(), data.pmu().registers.end(),
                     [&](const RegisterDecl& r) { return r.address == kGlobalCtl && names(r.cpus, tag); });
}

// ---------------------------------------------------------------------------------------------
// The geometry, from CPUID alone (amd.md 1.5, 2.2, 2.3).
struct Geometry {
  bool ext_core = false;          // PerfCtrExtCore: the six-counter group
  bool v2 = false;                // PerfMonV2 used: global registers, count from EBX[3:0]
  unsigned counters = kLegacyCounters;
  std::vector<std::string> notes;
};

Geometry geometry(const CpuInfo& cpu, const EventCatalog& data, std::string_view tag) {
  Geometry g;
  const AmdPerfmon& a = cpu.amd;
  g.ext_core = a.perfctr_core;
  g.counters = g.ext_core ? kExtCoreCounters : kLegacyCounters;
  if (a.perfmon_v2 && !g.ext_core) {
    g.notes.push_back("CPUID reports PerfMonV2 (0x80000022:EAX[0]) without PerfCtrExtCore: ignored, as Linux "
                      "amd_core_pmu_init does");
  } else if (a.perfmon_v2) {
    g.v2 = true;
    if (a.v2_core_counters != 0) {
      g.counters = a.v2_core_counters;
    } else {
      g.notes.push_back(
          "0x80000022:EBX[3:0] (NumPerfCtrCore) is 0: six counters assumed (the PerfCtrExtCore default, "
          "docs/hardware/amd.md 2.2)");
    }
  }
  const auto leaf1 = cpu.raw.get(1);
  const bool hypervisor = leaf1 && bit(leaf1->ecx, 31);
  const bool v2_by_design = has_perfmon_v2_by_design(data, tag);
  if (!g.ext_core && has_ext_core_by_design(data, tag)) {
    g.notes.push_back(fmt::format("CPUID hides the PMU extensions: PerfCtrExtCore (0x80000001:ECX[23]) is clear and "
                                  "there is no PerfMonV2 (0x80000022:EAX[0]), though this part has {}{}",
                                  v2_by_design ? "both" : "PerfCtrExtCore",
                                  hypervisor ? " (CPUID.1:ECX[31]: a hypervisor's guest, whose CPUID the hypervisor "
                                               "emulates)"
                                             : ""));
  } else if (g.ext_core && !g.v2 && v2_by_design) {
    g.notes.push_back(fmt::format("CPUID does not report PerfMonV2 (0x80000022:EAX[0]), which Zen 4 and later "
                                  "have{}: no global control registers",
                                  hypervisor ? " (a hypervisor's guest)" : ""));
  }
  return g;
}

std::string summary(const Geometry& g) {
  std::string s;
  if (g.ext_core)
    s = fmt::format("{} {}-bit counters, PerfCtrExtCore layout (CPUID 0x80000001:ECX[23]): PERF_CTL/PERF_CTR at "
                    "0x{:X} + 2i, RDPMC 0-{}, the legacy MSRs 0x{:X}-0x{:X} mirror counters 0-3",
                    g.counters, kWidth, kCtl0, g.counters - 1, kLegacyCtl0, kLegacyCtr0 + 3);
  else
    s = fmt::format("{} {}-bit counters, legacy layout: PerfEvtSel0-3 at 0x{:X}, PerfCtr0-3 at 0x{:X}, RDPMC 0-3, "
                    "an enable bit per counter",
                    g.counters, kWidth, kLegacyCtl0, kLegacyCtr0);
  if (g.v2)
    s += fmt::format("; PerfMonV2 (CPUID 0x80000022:EAX[0]): {} counters by EBX[3:0], global control, status and "
                     "status clear/set at 0x{:X}-0x{:X}",
                     g.counters, kGlobalStatus, kGlobalStatusSet);
  return s;
}

// One line for PmuInfo::description ("6 48-bit counters (PerfCtrExtCore), PerfMonV2").
std::string short_summary(const Geometry& g) {
  return fmt::format("{} {}-bit counters ({}){}", g.counters, kWidth, g.ext_core ? "PerfCtrExtCore" : "legacy layout",
                     g.v2 ? ", PerfMonV2 global control" : "");
}

// Bits the family reserves beyond amd.toml's common set (amd.md 3.2).
std::uint64_t family_reserved(const CpuInfo& cpu) {
  if (cpu.family <= 0xF) return kEventHigh | kHostGuest;  // K7, K8: 32-bit layout
  if (cpu.family == 0x11) return kHostGuest;              // 12-bit codes, no host/guest
  return 0;
}

bool contains(const std::vector<std::uint32_t>& v, std::uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool applies(const std::vector<std::string>& cpus, std::string_view tag) {
  return tag.empty() || cpus.empty() || std::find(cpus.begin(), cpus.end(), tag) != cpus.end();
}

bool is_v2_register(std::uint32_t msr) { return msr >= kGlobalStatus && msr <= kGlobalStatusSet; }

// ---------------------------------------------------------------------------------------------
// Driver helpers.

// Whether the PMU a context carries has the PerfMonV2 global registers (pmu() put them there).
bool has_global(const PmuContext& ctx) { return contains(ctx.pmu.registers, kGlobalCtl); }

// GlobalCtl / status bits of every general counter.
std::uint64_t all_counters_mask(const PmuInfo& pmu) {
  std::uint64_t m = 0;
  for (const auto& c : pmu.counters)
    if (c.kind == CounterKind::general && c.index < 64) m |= 1ull << c.index;
  return m;
}

std::uint64_t enable_bits(const EventCatalog& catalog) {
  const auto en = catalog.format().field("en");
  return en ? en->mask() : (1ull << 22);
}

// The merge event's PERF_CTL value (event select only): PMCxFFF = 0xF_0000_00FF (amd.md 3.1).
std::uint64_t merge_select(const EventCatalog& catalog) {
  const std::uint64_t code = catalog.pmu().merge_event.value_or(kMergeFallback);
  const auto event = catalog.format().field("event");
  return event ? event->place(code) : ((code & 0xF00) << 24) | (code & 0xFF);
}

bool holds_merge_event(const EventCatalog& catalog, std::uint64_t select) {
  const std::uint64_t code = catalog.pmu().merge_event.value_or(kMergeFallback);
  const auto event = catalog.format().field("event");
  return event ? event->extract(select) == code : false;
}

// The odd partner of an even counter, or nullptr.
const CounterInfo* partner(const PmuInfo& pmu, const CounterInfo& c) {
  if (c.kind != CounterKind::general || c.index % 2 != 0) return nullptr;
  return pmu.general(c.index + 1);
}

// The partner of an even counter when the registers say it is merged into it (Zen only).
const CounterInfo* merged_partner(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c) {
  if (ctx.cpu.family < kFirstZenFamily) return nullptr;
  const CounterInfo* odd = partner(ctx.pmu, c);
  if (!odd) return nullptr;
  return holds_merge_event(ctx.catalog, regs.read(odd->control_msr)) ? odd : nullptr;
}

std::vector<Assignment> by_index(std::span<const Assignment> set) {
  std::vector<Assignment> out(set.begin(), set.end());
  std::sort(out.begin(), out.end(),
            [](const Assignment& a, const Assignment& b) { return a.counter->index < b.counter->index; });
  return out;
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// ":h" / ":g" on an event that does not take them (no HostOnly/GuestOnly on this CPU) and has no
// unit mask of that name: an attribute error, not a unit-mask one.
void refuse_host_guest(const EventSpec& spec, const PmuContext& ctx) {
  for (std::size_t i = 0; i < spec.unit_masks.size(); ++i) {
    const std::string& word = spec.unit_masks[i];
    if (!iequal(word, "h") && !iequal(word, "g")) continue;
    const EventDef* def = ctx.catalog.find(spec.name, ctx.pmu.cpu_tag);
    if (!def) def = ctx.catalog.find_generic(spec.name, ctx.pmu.cpu_tag, nullptr);
    if (!def) return;  // the encoder reports the unknown event
    const bool accepted = std::any_of(def->modifiers.begin(), def->modifiers.end(),
                                      [&](const std::string& m) { return iequal(m, word); });
    const bool is_mask = def->unit_masks && std::any_of(def->unit_masks->masks.begin(), def->unit_masks->masks.end(),
                                                        [&](const UnitMask& m) { return iequal(m.name, word); });
    if (accepted || is_mask) continue;
    throw Error(errc::attribute,
                event_error(spec, i < spec.unit_mask_columns.size() ? spec.unit_mask_columns[i] : 0,
                            fmt::format("modifier '{}' refused: this CPU ({}) has no {} bit (HostOnly/GuestOnly, "
                                        "PERF_CTL bits 41:40, exist from family 10h, not on family 11h)",
                                        word, ctx.pmu.cpu_tag.empty() ? ctx.pmu.cpu : ctx.pmu.cpu_tag,
                                        iequal(word, "h") ? "HostOnly" : "GuestOnly")));
  }
}

// ---------------------------------------------------------------------------------------------
class AmdBackend final : public Backend {
 public:
  Match probe(const CpuInfo& cpu, const EventCatalog& data) const override {
    Match m = probe_table(cpu, data);
    if (!m.matched()) return m;
    try {
      const Geometry g = geometry(cpu, data, m.cpu_tag);
      m.reason += "; " + summary(g);
      for (const auto& n : g.notes) m.reason += "; " + n;
      if (m.cpu_tag == "k7" && cpu.model == 1)
        m.reason += "; K7 model 1 has no local APIC: the overflow interrupt (INT) raises nothing";
    } catch (const std::exception& e) {  // probe must not throw
      m = Match{0, fmt::format("{}: {}", describe(cpu), e.what()), {}, {}};
    }
    return m;
  }

  PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match& verdict) const override {
    const PmuDescription& d = data.pmu();
    const std::string& tag = verdict.cpu_tag;
    const Geometry g = geometry(cpu, data, tag);
    PmuInfo p;
    p.name = data.backend();
    p.cpu_tag = tag;
    p.device_model = d.model;
    p.reserved = d.reserved | family_reserved(cpu);
    p.cpu = describe(cpu);
    p.description = fmt::format("AMD {}: {}", verdict.matched() ? verdict.part : std::string("(CPU not matched)"),
                                short_summary(g));

    // Exactly one general group: the one at the layout's first control register.
    const std::uint32_t control = g.ext_core ? kCtl0 : kLegacyCtl0;
    const CounterGroup* group = nullptr;
    for (const CounterGroup& cg : d.counters)
      if (cg.kind == CounterKind::general && cg.control == control) group = &cg;
    if (!group)
      throw Error(errc::not_supported,
                  fmt::format("amd.toml declares no counter group with its control register at 0x{:X}", control));
    for (unsigned i = 0; i < g.counters; ++i) {
      CounterInfo c;
      c.kind = CounterKind::general;
      c.index = group->first + i;
      c.width = group->width;
      c.control_msr = group->control + i * group->control_stride;
      c.counter_msr = group->counter + i * group->counter_stride;
      if (group->rdpmc) c.rdpmc = *group->rdpmc + i;
      p.counters.push_back(c);
      for (std::uint32_t r : {c.control_msr, c.counter_msr})
        if (!contains(p.registers, r)) p.registers.push_back(r);
    }
    // The declared registers: the legacy aliases (with PerfCtrExtCore), the PerfMonV2 ones only
    // when CPUID says so; those the code drives are added whatever the data's `cpus` say.
    for (const RegisterDecl& r : d.registers) {
      if (!applies(r.cpus, tag) || contains(p.registers, r.address)) continue;
      if (is_v2_register(r.address) && !g.v2) continue;
      if (r.address >= kLegacyCtl0 && r.address <= kLegacyCtr0 + 3 && !g.ext_core) continue;
      p.registers.push_back(r.address);
    }
    if (g.ext_core)
      for (std::uint32_t i = 0; i < kLegacyCounters; ++i)
        for (std::uint32_t r : {kLegacyCtl0 + i, kLegacyCtr0 + i})
          if (!contains(p.registers, r)) p.registers.push_back(r);
    if (g.v2)
      for (std::uint32_t r : {kGlobalStatus, kGlobalCtl, kGlobalStatusClr, kGlobalStatusSet})
        if (!contains(p.registers, r)) p.registers.push_back(r);
    std::sort(p.registers.begin(), p.registers.end());
    return p;
  }

  Encoding encode(const EventSpec& spec, const PmuContext& ctx) const override {
    refuse_host_guest(spec, ctx);
    // A catalog event, or a raw one: perf's rNNN (the PERF_CTL value: r1000000C0 is event 0x1C0,
    // its bits 11:8 in 35:32) or cpu/event=0x1C0,umask=../ with amd.toml's [perf_format] terms,
    // read by the SDK's one parser (pmc/sdk/raw_event.hpp).
    EventSpec scratch;
    const EventSpec& counted = x86_sampling::without_period(spec, scratch);
    const std::optional<RawEvent> raw = raw_event(counted, ctx.catalog, ctx.pmu);
    Encoding e = raw ? encode_raw(spec, *raw, ctx.catalog, ctx.pmu) : encode_with_catalog(counted, ctx.catalog, ctx.pmu);
    e.event = spec.text;
    const std::size_t column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
    const RegisterFormat& format = ctx.catalog.format();
    const std::uint64_t code = format.get(e.config, "event");
    const std::uint64_t umask = format.field("umask") ? format.get(e.config, "umask") : 0;

    // Family 15h: the constraints that depend on the unit mask (amd.md 5.3 items 1-3).
    if (ctx.cpu.family == 0x15) {
      const int bits = std::popcount(umask);
      auto only_counter_3 = [&](const char* why) {
        e.counters.clear();
        if (ctx.pmu.general(3)) e.counters.push_back(3);
        if (e.counters.empty())
          throw Error(errc::no_counter,
                      event_error(spec, column, fmt::format("{}: only PERF_CTL3 can count it, and this PMU has no "
                                                            "counter 3",
                                                            why)));
      };
      if (code == 0x000 && (umask & 0x0F) != 0 && (umask & 0xF0) != 0)
        only_counter_3("family 15h event 0x000 with unit-mask bits in both nibbles");
      else if (code == 0x004 && bits > 1)
        only_counter_3("family 15h event 0x004 with more than one unit-mask bit");
      else if (code == 0x031 && bits > 1)
        throw Error(errc::no_counter,
                    event_error(spec, column,
                                fmt::format("family 15h event 0x031 with more than one unit-mask bit (0x{:02X}) "
                                            "cannot be scheduled on any counter (Linux "
                                            "amd_get_event_constraints_f15h); choose one unit mask",
                                            umask)));
    }

    // Zen large-increment events: an even counter whose odd neighbour exists (amd.md 5.3 item 5).
    if (e.merge) {
      std::vector<unsigned> even;
      for (unsigned c : e.counters)
        if (c % 2 == 0 && ctx.pmu.general(c + 1)) even.push_back(c);
      if (even.empty())
        throw Error(errc::no_counter,
                    event_error(spec, column,
                                fmt::format("{} is a large-increment event: it needs an even counter and the odd "
                                            "counter after it for the merge event, and this PMU has no such pair",
                                            e.name)));
      e.counters = std::move(even);
    }

    // Sampling (docs/hardware/amd.md section 4a): period=N sets INT (bit 20) and presets the
    // 48-bit counter to -N; the driver tells an overflow by bit 47 clearing, so -N must have it
    // set: N is at most 2^47 - 1.
    const std::uint64_t period = x86_sampling::period_of(
        spec, (1ull << 47) - 1, "a 48-bit counter can be preset for with bit 47 set (its overflow is bit 47 clearing)");
    const std::uint64_t frequency = x86_sampling::frequency_of(spec);
    if (e.merge && (period != 0 || frequency != 0)) {
      const EventModifier* m = spec.modifier(period ? "period" : "freq");
      throw Error(errc::attribute_value,
                  event_error(spec, m->column,
                              fmt::format("{} is a large-increment event counted on a merged pair of counters; "
                                          "sampling it ({}=) is not supported",
                                          e.name, m->name)));
    }
    x86_sampling::set_sampling(e, spec, period, frequency);
    if (e.interrupt) format.set(e.config, "int", 1);
    return e;
  }

  const ProfilingDriver* profiling() const noexcept override { return &sampling_; }

  void program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (has_global(ctx)) {
      regs.write(kGlobalCtl, 0);                                  // nothing counts while programmed
      regs.write(kGlobalStatusClr, all_counters_mask(ctx.pmu));  // stale overflow bits
    }
    Backend::program(regs, ctx, set);  // each counter's selection without EN; unused ones 0
    x86_sampling::program_reloads(regs, set);  // the PMI handler's reloads (period=)
    const std::uint64_t merge = merge_select(ctx.catalog);
    for (const auto& a : set) {
      if (!a.encoding->merge) continue;
      const CounterInfo* odd = partner(ctx.pmu, *a.counter);
      if (!odd) continue;  // the scheduler never does this
      write_control(regs, *odd, merge);
      regs.write(odd->counter_msr, 0);
    }
  }

  void start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    const std::uint64_t en = enable_bits(ctx.catalog);
    const std::uint64_t merge = merge_select(ctx.catalog);
    std::uint64_t used = 0;
    for (const auto& a : by_index(set)) {
      if (a.encoding->merge)
        if (const CounterInfo* odd = partner(ctx.pmu, *a.counter)) {
          write_control(regs, *odd, merge | en);  // the partner first: no carry is lost
          used |= 1ull << odd->index;
        }
      write_control(regs, *a.counter, a.encoding->config | en);
      used |= 1ull << a.counter->index;
    }
    if (has_global(ctx)) regs.write(kGlobalCtl, used);
  }

  void stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (has_global(ctx)) regs.write(kGlobalCtl, 0);  // every counter stops in the same instant
    const std::uint64_t en = enable_bits(ctx.catalog);
    const std::uint64_t merge = merge_select(ctx.catalog);
    for (const auto& a : by_index(set)) {
      write_control(regs, *a.counter, a.encoding->config & ~en);
      if (a.encoding->merge)
        if (const CounterInfo* odd = partner(ctx.pmu, *a.counter)) write_control(regs, *odd, merge);
    }
  }

  std::uint64_t read_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c) const override {
    const std::uint64_t low = regs.read(c.counter_msr) & c.width_mask();
    if (const CounterInfo* odd = merged_partner(regs, ctx, c))
      return low + ((regs.read(odd->counter_msr) & odd->width_mask()) << c.width);  // N + 2^48 (N+1), mod 2^64
    return x86_sampling::events(regs, c, low);
  }

  void write_counter(RegisterFile& regs, const PmuContext& ctx, const CounterInfo& c,
                     std::uint64_t value) const override {
    if (const CounterInfo* odd = merged_partner(regs, ctx, c)) {
      regs.write(c.counter_msr, value & c.width_mask());
      regs.write(odd->counter_msr, (value >> c.width) & odd->width_mask());
      return;
    }
    regs.write(c.counter_msr, x86_sampling::preset(regs, c, value) & c.width_mask());  // sampling: -period
  }

 private:
  x86_sampling::Driver sampling_;
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "amd", kBackendProfiles,
                                        &make_backend<AmdBackend>};

}  // namespace pmc::amd

PMC_EXPORT_BACKEND(pmc::amd::descriptor);
