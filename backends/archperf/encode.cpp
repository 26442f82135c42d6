// The archperf backend: event strings to register values. `config` is the IA32_PERFEVTSELx value
// the driver writes, EN included; `fixed_control` the 4-bit IA32_FIXED_CTR_CTRL field of the
// event's fixed counter (archperf.cpp, "The encoding"). Facts: docs/hardware/archperf.md
// sections 3 and 7.
#include "archperf.hpp"
#include "x86_sampling.hpp"

#include <pmc/error.hpp>
#include <pmc/sdk/raw_event.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>

namespace pmc::archperf {

namespace {

// IA32_FIXED_CTR_CTRL field bits (per counter, at 4i; fact sheet section 3). The data schema
// has no layout for this register: archperf.toml's [format] is IA32_PERFEVTSELx's.
constexpr std::uint64_t kFixedOs = 1;
constexpr std::uint64_t kFixedUsr = 2;
constexpr std::uint64_t kFixedAny = 4;
constexpr std::uint64_t kFixedPmi = 8;  // IA32_FIXED_CTR_CTRL bit 4i+3: a PMI at overflow

// The architectural events: EBX bit i is event i (fact sheet 7a; Linux union cpuid10_ebx), with
// the names archperf.toml gives them. Only those events are checked against EBX: a model's
// catalog event with the same code and unit mask under its own name (CPU_CLK_UNHALTED.THREAD_P,
// LONGEST_LAT_CACHE.MISS in a cpu/ file) is that model's event, which its list says it has.
struct ArchEvent {
  unsigned bit;
  unsigned code;
  unsigned umask;
  const char* sdm_name;
  const char* name;  // in archperf.toml
};
constexpr ArchEvent kArchEvents[] = {
    {0, 0x3C, 0x00, "UnHalted Core Cycles", "UNHALTED_CORE_CYCLES"},
    {1, 0xC0, 0x00, "Instruction Retired", "INSTRUCTION_RETIRED"},
    {2, 0x3C, 0x01, "UnHalted Reference Cycles", "UNHALTED_REFERENCE_CYCLES"},
    {3, 0x2E, 0x4F, "LLC Reference", "LLC_REFERENCES"},
    {4, 0x2E, 0x41, "LLC Misses", "LLC_MISSES"},
    {5, 0xC4, 0x00, "Branch Instruction Retired", "BRANCH_INSTRUCTIONS_RETIRED"},
    {6, 0xC5, 0x00, "Branch Misses Retired", "MISPREDICTED_BRANCH_RETIRED"},
    {7, 0xA4, 0x01, "Topdown Slots", "TOPDOWN_SLOTS"},
};

// The architectural event a catalog definition is, or nullptr.
const ArchEvent* arch_event(const EventDef& def) {
  if (def.unit_masks) return nullptr;
  for (const auto& a : kArchEvents)
    if (a.code == def.code && a.umask == def.fixed_umask.value_or(0) && def.name == a.name) return &a;
  return nullptr;
}

void check_available(const EventSpec& spec, const EventDef& def, const Facts& f) {
  const ArchEvent* found = arch_event(def);
  if (!found) return;
  const ArchEvent& a = *found;
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

// UMASK2 (47:40) and EQ (36) exist where CPUID.23H.0:EBX bits 0 and 1 say so (Linux
// update_pmu_cap). A CPU without leaf 23H enumerates neither: its encodings are accepted, since
// every part whose event list uses them has the leaf (docs/hardware/archperf.md policy 10.22).
void check_extensions(const EventSpec& given, const Encoding& e, const SelectBits& bits, const Facts& f) {
  if (!f.ext_leaf) return;
  auto refuse = [&](std::uint64_t mask, const char* field, const char* where, unsigned ebx_bit) {
    throw Error(errc::not_supported,
                fmt::format("event '{}' sets {} (IA32_PERFEVTSELx {} = 0x{:X}), which this CPU does not have: "
                            "CPUID.23H.0:EBX[{}] = 0 ({})",
                            given.text, field, where, e.config & mask, ebx_bit, f.cpu));
  };
  if ((e.config & bits.umask2) && !f.umask2) refuse(bits.umask2, "UMASK2", "bits 47:40", 0);
  if ((e.config & bits.eq) && !f.eq) refuse(bits.eq, "EQ", "bit 36", 1);
}

// The PERF_METRICS events by byte (docs/hardware/archperf.md section 12), as cpu/topdown-l1.toml
// and topdown-l2.toml name them, with perf's names: only for the refusal below, which says why a
// CPU whose catalogs lack them cannot count them.
constexpr std::pair<const char*, const char*> kMetricNames[kMetricBytes] = {
    {"PERF_METRICS.RETIRING", "topdown-retiring"},
    {"PERF_METRICS.BAD_SPECULATION", "topdown-bad-spec"},
    {"PERF_METRICS.FRONTEND_BOUND", "topdown-fe-bound"},
    {"PERF_METRICS.BACKEND_BOUND", "topdown-be-bound"},
    {"PERF_METRICS.HEAVY_OPERATIONS", "topdown-heavy-ops"},
    {"PERF_METRICS.BRANCH_MISPREDICTS", "topdown-br-mispredict"},
    {"PERF_METRICS.FETCH_LATENCY", "topdown-fetch-lat"},
    {"PERF_METRICS.MEMORY_BOUND", "topdown-mem-bound"},
};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A PERF_METRICS event the CPU's catalog does not hold: refused naming the byte and the CPU.
void refuse_missing_metric(const EventSpec& spec, const EventCatalog& catalog, const Facts& f) {
  for (unsigned k = 0; k < kMetricBytes; ++k) {
    const auto& [name, perf] = kMetricNames[k];
    if (!iequal(spec.name, name) && !iequal(spec.name, perf)) continue;
    const std::size_t column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
    if (catalog.find(kMetricNames[0].first))
      throw Error(errc::not_supported,
                  event_error(spec, column,
                              fmt::format("{} is byte {} of the PERF_METRICS MSR (329H), a top-down level-2 metric; "
                                          "this CPU fills level 1 only, bytes 0-3 ({})",
                                          name, k, f.cpu)));
    throw Error(errc::not_supported,
                event_error(spec, column,
                            fmt::format("{} is byte {} of the PERF_METRICS MSR (329H), top-down level {} in hardware, "
                                        "which this CPU does not have: only Ice Lake and later P-cores report it beside "
                                        "fixed counter 3 ({})",
                                        name, k, k < 4 ? 1 : 2, f.cpu)));
  }
}

}  // namespace

SelectBits select_bits(const EventCatalog& catalog) {
  const RegisterFormat& format = catalog.format();
  auto mask = [&](std::string_view field) {
    const auto f = format.field(field);
    if (!f)
      throw Error(errc::not_supported,
                  fmt::format("archperf.toml's [format] has no field '{}' (an IA32_PERFEVTSELx field)", field));
    return f->mask();
  };
  SelectBits b;
  b.usr = mask("usr");
  b.os = mask("os");
  b.edge = mask("edge");
  b.pc = mask("pc");
  b.intr = mask("int");
  b.any = mask("any");
  b.en = mask("en");
  b.inv = mask("inv");
  b.cmask = mask("cmask");
  // The extensions of perfmon version 6 parts (CPUID leaf 23H): optional in the data.
  if (const auto f = format.field("umask2")) b.umask2 = f->mask();
  if (const auto f = format.field("eq")) b.eq = f->mask();
  return b;
}

Encoding encode_event_for_cpu(const EventSpec& given, const PmuContext& ctx) {
  const SelectBits bits = select_bits(ctx.catalog);
  const EventCatalog& catalog = ctx.catalog;
  const PmuInfo& pmu = ctx.pmu;
  const Facts f = facts_of(ctx.cpu);
  EventSpec scratch;
  const EventSpec& spec = x86_sampling::without_period(given, scratch);  // step 5 reads period=
  const std::size_t name_column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;

  // 1. Architectural events CPUID does not offer (checked before the catalog's CPU tags, so
  //    the message names the EBX bit; again after encoding, for another spelling of the name).
  const EventDef* def = catalog.find(spec.name);
  if (!def) def = catalog.find_generic(spec.name, {}, nullptr);
  if (def) check_available(spec, *def, f);
  if (!def) refuse_missing_metric(spec, catalog, f);

  // 2. Encode: a catalog event, or a raw one (perf's rNNN or cpu/term=value,.../, read through
  //    IA32_PERFEVTSELx's fields: pmc/sdk/raw_event.hpp). A raw event never uses a fixed counter.
  Encoding e;
  if (const std::optional<RawEvent> raw = def ? std::nullopt : raw_event(spec, catalog, pmu))
    e = encode_raw(spec, *raw, catalog, pmu);
  else
    e = encode_with_catalog(spec, catalog, pmu);
  e.event = given.text;
  if (e.def && e.def != def) check_available(spec, *e.def, f);

  // 3. Bits an event may not set, the extensions CPUID leaf 23H enumerates, and AnyThread.
  if (const std::uint64_t bad = e.config & (bits.pc | bits.intr | bits.en | pmu.reserved))
    throw Error(errc::invalid_argument,
                fmt::format("event '{}' encodes to 0x{:X}, which sets bits an event select may not set: 0x{:X} (PC, "
                            "INT and EN are the driver's; reserved: 0x{:X})",
                            given.text, e.config, bad, pmu.reserved));
  check_extensions(given, e, bits, f);
  if (e.config & bits.any) {
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
  if (e.fixed && (e.config & (bits.edge | bits.inv | bits.cmask))) {
    e.fixed.reset();
    if (e.counters.empty())
      throw Error(errc::no_counter,
                  event_error(given, name_column,
                              "e, i and c need a general counter, and this event can use only a fixed counter"));
  }
  if (e.fixed)
    e.fixed_control = ((e.config & bits.os) ? kFixedOs : 0) | ((e.config & bits.usr) ? kFixedUsr : 0) |
                      ((e.config & bits.any) ? kFixedAny : 0);
  e.config |= bits.en;
  e.interrupt = false;

  // 5. Sampling (docs/hardware/archperf.md section 4a): period=N sets INT on a general counter
  //    and the PMI bit of a fixed counter's field; the driver presets -N, which IA32_PMCx takes
  //    as 32 bits sign-extended, so N is at most 2^31 - 1 whatever counter the event gets.
  const std::uint64_t period = x86_sampling::period_of(
      given, (1ull << 31) - 1, "a general counter can be preset for (IA32_PMCx takes EAX[31:0] sign-extended)");
  x86_sampling::set_sampling(e, given, period, x86_sampling::frequency_of(given));
  if (e.interrupt) {  // period= or freq= (docs/profiling.md)
    e.config |= bits.intr;
    e.fixed_control |= kFixedPmi;
  }
  return e;
}

}  // namespace pmc::archperf
