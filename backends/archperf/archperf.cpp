// Intel architectural performance monitoring, versions 1 to 5 (CPUID leaf 0AH).
//
// Everything about the PMU comes from CPUID (fact sheet docs/hardware/archperf.md,
// sections 1, 2 and 6; Intel SDM vol 3B 18.2; Linux arch/x86/events/intel/core.c
// intel_pmu_init; KVM selftests pmu.h):
//   - general counters: EAX[15:8] of them, EAX[23:16] bits wide, IA32_PERFEVTSELx at 0x186 + x
//     and IA32_PMCx at 0xC1 + x; each has its own enable bit EN (bit 22), unlike P6;
//   - fixed counters (version 2 and later): EDX[4:0] of them, EDX[12:5] bits wide, and in
//     version 5 also every counter whose bit is set in the ECX bitmap; IA32_FIXED_CTRi at
//     0x309 + i, all controlled by IA32_FIXED_CTR_CTRL (0x38D, 4 bits per counter);
//   - the architectural events CPUID.0AH:EBX marks unavailable (bit set) or does not enumerate
//     (bit index >= EAX[31:24]) are refused by encode(), naming the bit and the CPU;
//   - AnyThread (modifier t: PERFEVTSEL bit 21, fixed control bit 4i+2) exists from version 3 on
//     and not where CPUID.0AH:EDX[15] deprecates it.
//
// Quirks:
//  - Core 2 (and other early Core parts) report version 2 with EDX = 0 although they have three
//    fixed counters (SDM note "wrong version-2 data"; fact sheet 1). Linux intel_pmu_init assumes
//    at least three fixed counters for versions 2 to 4 unless running under a hypervisor
//    (CPUID.1:ECX[31]). [U] We apply it where the note does: version 2 reporting no fixed
//    counter at all, not under a hypervisor (a guest's CPUID is what its hypervisor emulates);
//    the width is the general counters' when EDX[12:5] is 0.
//  - Version 1 has no global control: the driver starts and stops each counter with its EN bit.
//    Version 2 and later: PERF_GLOBAL_CTRL (0x38F) gates everything; its reset value enables all
//    general counters, so program() clears it before it writes event selects that include EN.
//  - Writes to IA32_PMCx keep EAX[31:0] sign-extended to the counter width (SDM 18.2.5). A value
//    that sign extension cannot produce needs the full-width alias IA32_A_PMCx (0x4C1 + x), which
//    exists when IA32_PERF_CAPABILITIES[13] (0x345, present when CPUID.1:ECX[15] PDCM) is set.
//  - Fixed counters take full-width writes at 0x309 + i; bits above the width must be zero
//    (writing them #GPs on Core 2 model 23, perfctr), so the driver never writes them.
//  - Hybrid parts (CPUID.07H:EDX[15]): each core type has its own PMU. CPUID.23H subleaf 1 (when
//    CPUID.(7,1):EAX[8] and 23H.0:EAX[1] say it exists) gives this core type's general and fixed
//    counter bitmaps, and replaces the 0AH counts; CPUID.1AH:EAX[31:24] names the core type
//    (20H Atom, 40H Core). Without 23H, leaf 0AH is all we know: the probe says so.
//  - VIA / Zhaoxin ("CentaurHauls", "  Shanghai  ") may report leaf 0AH, but their architectural
//    event encodings differ (Linux drives them with arch/x86/events/zhaoxin/core.c, cycles =
//    0x0082) and Nano parts #GP on RDPMC of fixed counters: not matched here.
//
// The encoding: `config` is the value the driver writes to IA32_PERFEVTSELx, EN (bit 22)
// included, INT and PC never set; `fixed_control` is the 4-bit IA32_FIXED_CTR_CTRL field for the
// event's fixed counter (bit 0 OS, 1 USR, 2 AnyThread; PMI, bit 3, never set), unshifted. Raw
// model-specific events are perf's syntax `rUUEE` (hex): umask UU, event select EE.
//
// encode() must know the EBX vector and the AnyThread state: it reads them from the CPU its
// context carries (facts_of). The data file (archperf.toml) holds the events, the register
// format and the modifiers; the geometry and the probe are code, because they come from CPUID.
#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace pmc::archperf {

namespace {

// Registers (fact sheet section 2).
constexpr std::uint32_t kPmc0 = 0x0C1;              // IA32_PMCx = 0xC1 + x
constexpr std::uint32_t kPerfEvtSel0 = 0x186;       // IA32_PERFEVTSELx = 0x186 + x
constexpr std::uint32_t kAPmc0 = 0x4C1;             // IA32_A_PMCx, full-width writes
constexpr std::uint32_t kFixedCtr0 = 0x309;         // IA32_FIXED_CTRi = 0x309 + i
constexpr std::uint32_t kPerfCapabilities = 0x345;  // IA32_PERF_CAPABILITIES (read-only)
constexpr std::uint32_t kFixedCtrCtrl = 0x38D;      // IA32_FIXED_CTR_CTRL
constexpr std::uint32_t kGlobalStatus = 0x38E;      // IA32_PERF_GLOBAL_STATUS (read-only)
constexpr std::uint32_t kGlobalCtrl = 0x38F;        // IA32_PERF_GLOBAL_CTRL
constexpr std::uint32_t kGlobalOvfCtrl = 0x390;     // GLOBAL_OVF_CTRL (v2-3) = STATUS_RESET (v4+)
constexpr std::uint32_t kGlobalStatusSet = 0x391;   // IA32_PERF_GLOBAL_STATUS_SET (v4+)

// IA32_PERFEVTSELx bits (fact sheet section 3).
constexpr std::uint64_t kEdge = 1ull << 18;
constexpr std::uint64_t kPc = 1ull << 19;
constexpr std::uint64_t kInt = 1ull << 20;
constexpr std::uint64_t kAny = 1ull << 21;
constexpr std::uint64_t kEn = 1ull << 22;
constexpr std::uint64_t kInv = 1ull << 23;
constexpr std::uint64_t kCmask = 0xFFull << 24;
constexpr std::uint64_t kUsr = 1ull << 16;
constexpr std::uint64_t kOs = 1ull << 17;

// IA32_FIXED_CTR_CTRL field bits (per counter, at 4i).
constexpr std::uint64_t kFixedOs = 1;
constexpr std::uint64_t kFixedUsr = 2;
constexpr std::uint64_t kFixedAny = 4;

constexpr unsigned kMaxGeneral = 32;  // PERF_GLOBAL_CTRL has enable bits 31:0 for them
constexpr unsigned kMaxFixed = 4;     // the fact sheet's FIXED_CTR0..3 (0x309..0x30C)
constexpr int kScore = 20;            // above p6 (10): p6 refuses version >= 1 anyway

// The architectural events: EBX bit i is event i (fact sheet 7a; Linux union cpuid10_ebx).
struct ArchEvent {
  unsigned bit;
  unsigned code;
  unsigned umask;
  const char* sdm_name;
};
constexpr ArchEvent kArchEvents[] = {
    {0, 0x3C, 0x00, "UnHalted Core Cycles"},      {1, 0xC0, 0x00, "Instruction Retired"},
    {2, 0x3C, 0x01, "UnHalted Reference Cycles"}, {3, 0x2E, 0x4F, "LLC Reference"},
    {4, 0x2E, 0x41, "LLC Misses"},                {5, 0xC4, 0x00, "Branch Instruction Retired"},
    {6, 0xC5, 0x00, "Branch Misses Retired"},     {7, 0xA4, 0x01, "Topdown Slots"},
};

const ArchEvent* arch_event(std::uint64_t code, std::uint64_t umask) {
  for (const auto& a : kArchEvents)
    if (a.code == code && a.umask == umask) return &a;
  return nullptr;
}

bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }
std::uint64_t width_mask(unsigned width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

enum class AnyThread { reserved, supported, deprecated };

// ---------------------------------------------------------------------------------------------
// The geometry, from CPUID alone.
struct Geometry {
  unsigned version = 0;         // as reported
  std::vector<unsigned> general;
  unsigned general_width = 0;
  std::vector<unsigned> fixed;
  unsigned fixed_width = 0;
  std::uint32_t ebx = 0;
  unsigned ebx_length = 0;
  AnyThread any = AnyThread::reserved;
  bool pdcm = false;            // CPUID.1:ECX[15]: IA32_PERF_CAPABILITIES exists
  std::string hybrid;           // "", or a short label for the description
  std::vector<std::string> notes;
  std::string refusal;          // why the probe does not match; empty when it does
};

std::string core_type_name(std::uint32_t type) {
  switch (type) {
    case 0x20: return "an Atom (E-core)";
    case 0x40: return "a Core (P-core)";
    default: return fmt::format("core type 0x{:02X}", type);
  }
}

Geometry geometry(const CpuInfo& cpu) {
  Geometry g;
  const ArchPerfmon& a = cpu.arch;
  g.version = a.version;
  const auto leaf1 = cpu.raw.get(1);
  g.pdcm = leaf1 && bit(leaf1->ecx, 15);
  const bool hypervisor = leaf1 && bit(leaf1->ecx, 31);

  if (cpu.vendor == "CentaurHauls" || cpu.vendor == "Shanghai") {
    g.refusal = fmt::format(
        "vendor {} (VIA / Zhaoxin): leaf 0AH reports version {}, but these parts encode the architectural "
        "events differently (Linux drives them with its zhaoxin PMU driver: cycles = 0x0082, not 0x003C) and "
        "Nano parts fault on RDPMC of fixed counters; archperf drives GenuineIntel only",
        cpu.vendor, a.version);
  } else if (!cpu.is_intel()) {
    g.refusal = fmt::format("vendor {} is not GenuineIntel", cpu.vendor.empty() ? "unknown" : cpu.vendor);
  } else if (cpu.max_leaf < 0x0A) {
    g.refusal = fmt::format("no CPUID leaf 0AH (maximum basic leaf 0x{:X}): no architectural perfmon", cpu.max_leaf);
  } else if (a.version == 0) {
    g.refusal = hypervisor ? "CPUID.0AH:EAX[7:0] (version) is 0: no architectural perfmon in this guest "
                             "(CPUID.1:ECX[31]: a hypervisor's guest, whose CPUID the hypervisor emulates; one that "
                             "gives its guests no virtual PMU reports version 0)"
                           : "CPUID.0AH:EAX[7:0] (version) is 0: no architectural perfmon";
  }

  unsigned version = a.version;
  if (version == 0) {
    // Forced onto a CPU without leaf 0AH (backend = "archperf"): the smallest architectural PMU,
    // Core Solo / Core Duo's (version 1, two 40-bit counters, the seven events). [U]
    version = 1;
    g.general = {0, 1};
    g.general_width = 40;
    g.ebx_length = 7;
    g.notes.push_back("no leaf 0AH: assuming version 1 with two 40-bit general counters");
    return g;
  }
  if (version > 5) g.notes.push_back(fmt::format("version {} is newer than 5: driven as version 5", version));

  for (unsigned i = 0; i < a.gp_counters && i < kMaxGeneral; ++i) g.general.push_back(i);
  if (a.gp_counters > kMaxGeneral)
    g.notes.push_back(fmt::format("{} general counters reported, {} used", a.gp_counters, kMaxGeneral));
  g.general_width = a.gp_width;
  g.ebx = a.unavailable_events;
  g.ebx_length = a.ebx_length;
  g.any = version < 3 ? AnyThread::reserved : a.anythread_deprecated ? AnyThread::deprecated : AnyThread::supported;

  if (version >= 2) {
    unsigned count = a.fixed_counters;
    g.fixed_width = a.fixed_width;
    if (version == 2 && count == 0 && !hypervisor) {
      g.notes.push_back("Core 2 quirk: version 2 with CPUID.0AH:EDX[4:0] = 0 still has fixed counters 0-2 "
                        "(SDM: early parts report wrong version-2 data; Linux assumes 3)");
      count = 3;
    } else if (version == 2 && count == 0) {
      g.notes.push_back("version 2 with no fixed counters under a hypervisor (CPUID.1:ECX[31]): taken as reported");
    }
    if (g.fixed_width == 0 && count > 0) {
      g.fixed_width = a.gp_width;
      g.notes.push_back(fmt::format("fixed counter width EDX[12:5] = 0: using the general width {}", a.gp_width));
    }
    for (unsigned i = 0; i < 32; ++i) {
      const bool present = i < count || (version >= 5 && bit(a.fixed_bitmap, i));
      if (!present) continue;
      if (i < kMaxFixed) g.fixed.push_back(i);
      else g.notes.push_back(fmt::format("fixed counter {} ignored (beyond FIXED_CTR3)", i));
    }
  }

  // Hybrid parts: this core type's own counters, where CPUID 23H gives them.
  // CPUID.(7,1):EAX[8] = leaf 23H exists; 23H.0:EAX bit i = subleaf i exists (Linux
  // ARCH_PERFMON_NUM_COUNTER_LEAF, fixed in 2025 to bit 1).
  // Sub-leaf (7,1) exists only when CPUID.(7,0):EAX (leaf 7's highest sub-leaf) is >= 1.
  const bool has_71 = cpu.max_leaf >= 7 && cpu.raw.get(7, 0).value_or(CpuidRegs{}).eax >= 1;
  const CpuidRegs l71 = has_71 ? cpu.raw.get(7, 1).value_or(CpuidRegs{}) : CpuidRegs{};
  const CpuidRegs l23 = cpu.max_leaf >= 0x23 ? cpu.raw.get(0x23, 0).value_or(CpuidRegs{}) : CpuidRegs{};
  const CpuidRegs l23s1 = cpu.max_leaf >= 0x23 ? cpu.raw.get(0x23, 1).value_or(CpuidRegs{}) : CpuidRegs{};
  const bool ext = bit(l71.eax, 8) && bit(l23.eax, 1) && cpu.raw.get(0x23, 1).has_value();
  if (ext) {
    g.general.clear();
    for (unsigned i = 0; i < kMaxGeneral; ++i)
      if (bit(l23s1.eax, i)) g.general.push_back(i);
    g.fixed.clear();
    for (unsigned i = 0; i < 32; ++i)
      if (bit(l23s1.ebx, i)) {
        if (i < kMaxFixed) g.fixed.push_back(i);
        else g.notes.push_back(fmt::format("fixed counter {} ignored (beyond FIXED_CTR3)", i));
      }
    if (!g.fixed.empty() && g.fixed_width == 0) g.fixed_width = a.gp_width;
    g.notes.push_back(fmt::format("counters from CPUID.23H.1 (general bitmap 0x{:X}, fixed bitmap 0x{:X})",
                                  l23s1.eax, l23s1.ebx));
  }
  if (cpu.hybrid) {
    const bool has_1a = cpu.max_leaf >= 0x1A && cpu.raw.get(0x1A, 0).has_value();
    const std::uint32_t type = has_1a ? cpu.raw.get(0x1A, 0).value_or(CpuidRegs{}).eax >> 24 : 0;
    const std::string which = has_1a ? fmt::format("this CPU is {} (CPUID.1AH:EAX[31:24] = 0x{:02X})",
                                                   core_type_name(type), type)
                                     : std::string("CPUID.1AH (core type) is absent");
    g.hybrid = fmt::format("hybrid part, {}: {}", type == 0x40 ? "P-core" : type == 0x20 ? "E-core" : "core type unknown",
                           ext ? "this core type's counters (CPUID.23H)" : "the counters every core type has (CPUID.0AH)");
    g.notes.push_back(fmt::format("hybrid part (CPUID.07H:EDX[15]): {}; other core types have their own counters{}",
                                  which,
                                  ext ? "" : ", and without CPUID.23H only leaf 0AH's common set is known here"));
  }

  if (g.refusal.empty() && g.general.empty() && g.fixed.empty())
    g.refusal = fmt::format("architectural perfmon version {} with no counters (EAX[15:8] = 0, no fixed counters)",
                            a.version);
  if (g.refusal.empty() && !g.general.empty() && (g.general_width == 0 || g.general_width > 64))
    g.refusal = fmt::format("general counters {} bits wide (EAX[23:16]): not a usable width", g.general_width);
  if (g.general_width == 0 || g.general_width > 64) g.general_width = 40;  // forced use only [U]
  if (g.fixed_width > 64) g.fixed_width = 64;
  return g;
}

std::string summary(const Geometry& g) {
  std::string s = fmt::format("{} general counter{} x {} bits", g.general.size(), g.general.size() == 1 ? "" : "s",
                              g.general_width);
  if (!g.fixed.empty()) {
    std::string idx;
    for (unsigned i : g.fixed) idx += fmt::format("{}{}", idx.empty() ? "" : ",", i);
    s += fmt::format(", {} fixed ({}) x {} bits", g.fixed.size(), idx, g.fixed_width);
  } else if (g.version >= 2) {
    s += ", no fixed counters";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// What encode() needs from CPUID (see the file comment).
struct Facts {
  unsigned version = 3;
  std::uint32_t ebx = 0;
  unsigned ebx_length = 32;
  AnyThread any = AnyThread::supported;
  std::string cpu;  // for messages
};

// The facts of the CPU in the context (a CPU without leaf 0AH, archperf forced onto it, is the
// smallest architectural PMU: version 1, the seven events).
Facts facts_of(const CpuInfo& cpu) {
  Facts f;
  f.cpu = describe(cpu);
  const Geometry g = geometry(cpu);
  f.version = g.version == 0 ? 1 : g.version;
  f.ebx = g.ebx;
  f.ebx_length = g.ebx_length;
  f.any = g.any;
  return f;
}

// ---------------------------------------------------------------------------------------------
// Raw events: perf's rUUEE.
bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// False: not a raw event name. Throws for r + more than 4 hex digits.
bool raw_code(const EventSpec& spec, std::uint32_t& code) {
  const std::string& n = spec.name;
  if (n.size() < 2 || n[0] != 'r' || !std::all_of(n.begin() + 1, n.end(), is_hex)) return false;
  if (n.size() > 5)
    throw Error(errc::invalid_argument,
                event_error(spec, spec.pmu.empty() ? 1 : spec.pmu.size() + 3,
                            fmt::format("raw event '{}' has {} hex digits; write rUUEE (at most 4: unit mask, "
                                        "event select) and give flags as modifiers (:u :k :e=1 :i=1 :c=N :t=1)",
                                        n, n.size() - 1)));
  code = static_cast<std::uint32_t>(std::stoul(n.substr(1), nullptr, 16));
  return true;
}

// A raw event's definition: the code and unit mask, the catalog's default modifiers, so it is
// encoded by the same rules (privilege defaults, value checks, canonical string) as a catalog event.
EventDef raw_definition(const std::string& name, std::uint32_t code, const EventCatalog& catalog) {
  EventDef d;
  d.name = name;
  d.code = code & 0xFF;
  d.fixed_umask = (code >> 8) & 0xFF;
  d.description = "raw event";
  d.modifiers = catalog.default_modifiers();
  return d;
}

bool contains(const std::vector<std::uint32_t>& v, std::uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// ---------------------------------------------------------------------------------------------
class ArchPerfBackend final : public Backend {
 public:
  Match probe(const CpuInfo& cpu, const EventCatalog&) const override {
    Match m;
    const std::string who = probe_subject(cpu);
    try {
      const Geometry g = geometry(cpu);
      if (!g.refusal.empty()) {
        m.reason = fmt::format("{}: {}", who, g.refusal);
        if (cpu.is_intel() && cpu.family == 6 && cpu.arch.version == 0) m.reason += " (P6-family parts are p6's)";
        return m;
      }
      m.score = kScore;
      m.cpu_tag = fmt::format("v{}", std::min(g.version, 5u));
      m.reason = fmt::format("{}: architectural perfmon version {}: {}", who, g.version, summary(g));
      for (const auto& n : g.notes) m.reason += "; " + n;
    } catch (const std::exception& e) {  // probe must not throw
      m = Match{0, fmt::format("{}: {}", who, e.what()), {}, {}};
    }
    return m;
  }

  PmuInfo pmu(const CpuInfo& cpu, const EventCatalog& data, const Match&) const override {
    const Geometry g = geometry(cpu);
    PmuInfo p;
    p.name = "archperf";
    p.device_model = data.pmu().model;
    p.reserved = data.pmu().reserved;
    p.cpu_tag = fmt::format("v{}", std::clamp(g.version, 1u, 5u));
    const bool global = g.version >= 2;
    for (unsigned i : g.general) {
      CounterInfo c{CounterKind::general, i, g.general_width, kPerfEvtSel0 + i, kPmc0 + i, 0, 0, i};
      p.counters.push_back(c);
      p.registers.push_back(kPmc0 + i);
      p.registers.push_back(kPerfEvtSel0 + i);
      if (g.pdcm) p.registers.push_back(kAPmc0 + i);
    }
    for (unsigned i : g.fixed) {
      // RDPMC reads fixed counter i with ECX bit 30 set (docs/hardware/archperf.md section 5).
      CounterInfo c{CounterKind::fixed, i, g.fixed_width, kFixedCtrCtrl, kFixedCtr0 + i, 0, 0, (1u << 30) | i};
      p.counters.push_back(c);
      p.registers.push_back(kFixedCtr0 + i);
    }
    if (g.pdcm) p.registers.push_back(kPerfCapabilities);
    if (global) {
      for (std::uint32_t r : {kFixedCtrCtrl, kGlobalStatus, kGlobalCtrl, kGlobalOvfCtrl}) p.registers.push_back(r);
      if (g.version >= 4) p.registers.push_back(kGlobalStatusSet);
    }
    std::sort(p.registers.begin(), p.registers.end());
    // The probe's reason carries the notes (quirks applied, hybrid core type); the description
    // stays one readable line.
    p.description = fmt::format("Intel architectural perfmon v{}{} on {}: {}", g.version == 0 ? 1 : g.version,
                                g.hybrid.empty() ? "" : " (" + g.hybrid + ")", describe(cpu), summary(g));
    p.cpu = describe(cpu);
    return p;
  }

  Encoding encode(const EventSpec& given, const PmuContext& ctx) const override {
    const EventCatalog& catalog = ctx.catalog;
    const PmuInfo& pmu = ctx.pmu;
    const Facts f = facts_of(ctx.cpu);
    const EventSpec& spec = given;
    const std::size_t name_column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;

    // 1. Architectural events CPUID does not offer (checked before the catalog's CPU tags, so
    //    the message names the EBX bit).
    const EventDef* def = catalog.find(spec.name);
    if (!def) def = catalog.find_generic(spec.name, {}, nullptr);
    if (def && !def->unit_masks)
      if (const ArchEvent* a = arch_event(def->code, def->fixed_umask.value_or(0))) check_available(spec, *def, *a, f);

    // 2. Encode: a catalog event, or a raw one.
    std::uint32_t raw = 0;
    Encoding e;
    if (!def && raw_code(spec, raw)) {
      EventSpec s = spec;
      s.name = fmt::format("r{:04X}", raw);  // canonical spelling: 4 hex digits, upper case
      e = encode_event(s, raw_definition(s.name, raw, catalog), catalog, pmu);
    } else {
      e = encode_with_catalog(spec, catalog, pmu);
    }
    e.event = given.text;

    // 3. Bits an event may not set, and AnyThread.
    if (e.config & (kPc | kInt | kEn | (0xFFFFFFFFull << 32)))
      throw Error(errc::invalid_argument,
                  fmt::format("event '{}' encodes to 0x{:X}, which sets bits an event select may not set (PC, INT, "
                              "EN, or 63:32)",
                              given.text, e.config));
    if (e.config & kAny) {
      const EventModifier* t = given.modifier("t");
      const std::size_t column = t ? t->column : 0;
      if (f.any == AnyThread::reserved)
        throw Error(errc::attribute,
                    event_error(given, column,
                                fmt::format("AnyThread (t) needs architectural perfmon version 3 or later; {} has "
                                            "version {}",
                                            f.cpu, f.version)));
      if (f.any == AnyThread::deprecated)
        throw Error(errc::attribute,
                    event_error(given, column,
                                fmt::format("AnyThread (t) is deprecated on this CPU (CPUID.0AH:EDX[15] = 1): {}",
                                            f.cpu)));
    }
    if (f.any != AnyThread::supported) {
      // t=0 is accepted everywhere, but a CPU without AnyThread shows no t in the canonical form.
      if (auto pos = e.canonical.find(":t=0"); pos != std::string::npos) e.canonical.erase(pos, 4);
    }

    // 4. The fixed counter: no edge, invert or threshold logic there.
    if (e.fixed && (e.config & (kEdge | kInv | kCmask))) {
      e.fixed.reset();
      if (e.counters.empty())
        throw Error(errc::no_counter,
                    event_error(given, name_column,
                                "e, i and c need a general counter, and this event can use only a fixed counter"));
    }
    if (e.fixed)
      e.fixed_control = ((e.config & kOs) ? kFixedOs : 0) | ((e.config & kUsr) ? kFixedUsr : 0) |
                        ((e.config & kAny) ? kFixedAny : 0);
    e.config |= kEn;
    e.interrupt = false;
    return e;
  }

  void program(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    const PmuInfo& pmu = ctx.pmu;
    const bool global = contains(pmu.registers, kGlobalCtrl);
    // Version 2+: PERF_GLOBAL_CTRL resets to "all general counters on", and the selects below
    // carry EN: switch everything off first.
    if (global) regs.write(kGlobalCtrl, 0);
    std::uint64_t fixed_ctrl = 0, status = 0;
    bool any_fixed = false;
    for (const auto& c : pmu.counters) {
      if (c.kind == CounterKind::fixed) {
        any_fixed = true;
        continue;
      }
      std::uint64_t sel = 0;
      for (const auto& a : set)
        if (a.counter->kind == CounterKind::general && a.counter->index == c.index)
          sel = global ? (a.encoding->config | kEn) : (a.encoding->config & ~kEn);
      regs.write(c.control_msr, sel);
    }
    for (const auto& a : set) {
      if (a.counter->kind == CounterKind::fixed) {
        fixed_ctrl |= (a.encoding->fixed_control & 0x7) << (4 * a.counter->index);
        status |= 1ull << (32 + a.counter->index);
      } else {
        status |= 1ull << a.counter->index;
      }
    }
    if (global) {
      if (any_fixed) regs.write(kFixedCtrCtrl, fixed_ctrl);
      regs.write(kGlobalOvfCtrl, status);  // clear stale overflow bits of the counters we use
    }
  }

  void start(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (contains(ctx.pmu.registers, kGlobalCtrl)) {
      regs.write(kGlobalCtrl, enable_bits(set));
      return;
    }
    for (const auto& a : set)  // version 1: each counter's own EN
      regs.write(a.counter->control_msr, a.encoding->config | kEn);
  }

  void stop(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set) const override {
    if (contains(ctx.pmu.registers, kGlobalCtrl)) {
      regs.write(kGlobalCtrl, 0);
      return;
    }
    for (const auto& a : set) regs.write(a.counter->control_msr, a.encoding->config & ~kEn);
  }

  void write_counter(RegisterFile& regs, const PmuContext&, const CounterInfo& c, std::uint64_t value) const override {
    const std::uint64_t mask = width_mask(c.width);
    value &= mask;
    if (c.kind == CounterKind::fixed) {  // full width; bits above it must be written as zeros
      regs.write(c.counter_msr, value);
      return;
    }
    // IA32_PMCx takes EAX[31:0] sign-extended: what a 32-bit write can produce.
    const std::uint64_t low = value & 0xFFFFFFFFull;
    const std::uint64_t extended = (low & 0x80000000ull) ? (low | 0xFFFFFFFF00000000ull) : low;
    if ((extended & mask) == value) {
      regs.write(c.counter_msr, low);
      return;
    }
    std::uint64_t caps = 0;
    try {
      caps = regs.read(kPerfCapabilities);
    } catch (const Error&) {
      caps = 0;  // no IA32_PERF_CAPABILITIES (CPUID.1:ECX[15] PDCM clear): no full-width writes
    }
    if (!(caps & (1ull << 13)))
      throw Error(errc::invalid_argument,
                  fmt::format("general counter {} cannot be preset to 0x{:X}: IA32_PMC{} takes 32 bits sign-extended "
                              "and this CPU has no full-width writes (IA32_PERF_CAPABILITIES[13] clear or absent)",
                              c.index, value, c.index));
    regs.write(kAPmc0 + c.index, value);
  }

 private:
  static std::uint64_t enable_bits(std::span<const Assignment> set) {
    std::uint64_t bits = 0;
    for (const auto& a : set)
      bits |= a.counter->kind == CounterKind::fixed ? 1ull << (32 + a.counter->index) : 1ull << a.counter->index;
    return bits;
  }

  static void check_available(const EventSpec& spec, const EventDef& def, const ArchEvent& a, const Facts& f) {
    const std::size_t column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
    if (a.bit >= f.ebx_length)
      throw Error(errc::not_supported,
                  event_error(spec, column,
                              fmt::format("{} is architectural event {} ({}), which this CPU does not enumerate: "
                                          "CPUID.0AH:EAX[31:24] = {}, so the EBX vector has no bit {} ({})",
                                          def.name, a.bit, a.sdm_name, f.ebx_length, a.bit, f.cpu)));
    if (bit(f.ebx, a.bit))
      throw Error(errc::not_supported,
                  event_error(spec, column,
                              fmt::format("{} is architectural event {} ({}), which this CPU marks unavailable: "
                                          "CPUID.0AH:EBX bit {} is set (EBX = 0x{:08X}) ({})",
                                          def.name, a.bit, a.sdm_name, a.bit, f.ebx, f.cpu)));
  }
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "archperf", 0,
                                        &make_backend<ArchPerfBackend>};

}  // namespace pmc::archperf

PMC_EXPORT_BACKEND(pmc::archperf::descriptor);
