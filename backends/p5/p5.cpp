// Intel Pentium (P5) backend: Pentium, Pentium OverDrive, Pentium with MMX.
//
// The backend is its data file (p5.toml: the probe table, the two counters sharing CESR, the
// CESR half's fields, the modifiers u, k, d, pc and the refused e, i, c, t, the events) plus
// raw events. Quirks (docs/hardware/p5.md), all handled by the data and the SDK's defaults:
//  - One control register for both counters: CESR (MSR 0x11) holds a 10-bit half per counter,
//    CTR1's sixteen bits above CTR0's ([[pmu.counters]] control_shift_stride = 16). An encoding
//    is the counter's half; the SDK's driver writes each half by read-modify-write of that half
//    only (program() gives a counter the session does not use 000, which stops it).
//  - No enable bit: a half counts as soon as its CC field is non-zero. The driver programs 000
//    (stopped), presets the counter, then writes the half in start(); stop() writes 000 again.
//    Counters are started and stopped in numerical order (seed 000, FreeBSD perfmon(4): "on
//    the Pentium, counters must be started and stopped in numerical order"), which the SDK's
//    driver does for every PMU.
//  - No interrupt on overflow; counters are 40 bits, read with RDMSR, or RDPMC on MMX parts
//    that erratum 74 does not affect (the p5mmx tag's counter group has an RDPMC index). So no
//    sampling: `period=` is refused naming the event and that reason (docs/profiling.md).
//  - The MMX events mean different things on CTR0 and CTR1: two catalog entries per code, each
//    bound to its counter.
// Raw events, perf's rNNN with NNN a CESR half (ES in bits 5:0; the CC and PC bits are the
// modifiers u, k, d, pc), take the same modifiers; the reserved codes and, on a Pentium without
// MMX, the MMX codes are refused (docs/hardware/p5.md 7.5). Linux perf has no Pentium PMU, so
// p5.toml declares no perf format terms and "cpu/.../" is refused with that reason.
#include <pmc/error.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/raw_event.hpp>

#include <fmt/format.h>


namespace pmc::p5 {

namespace {

constexpr std::uint64_t kMmxFirst = 0x2A, kMmxLast = 0x3B;

class P5Backend final : public Backend {
 public:
  Encoding encode(const EventSpec& spec, const PmuContext& ctx) const override {
    // Sampling needs an interrupt at overflow, which the P5 does not have (p5.md sections 2,
    // 3.2 and 4): refused before anything else, naming the event and why.
    const EventModifier* m = spec.modifier("period");
    if (!m) m = spec.modifier("freq");
    if (m)
      throw Error(errc::not_supported,
                  event_error(spec, m->column,
                              fmt::format("{} cannot be sampled ({}=): the Pentium's counters cannot interrupt on "
                                          "overflow, CESR's PC bit only makes the PM0/PM1 pin signal it; count the "
                                          "event without {}=, or sample cpu-clock:period=N under access \"perf\"",
                                          spec.name, m->name, m->name)));
    // Raw events (pmc/sdk/raw_event.hpp): rNNN is a CESR half, ES in bits 5:0, and the duration
    // (d) and pin (pc) bits as modifiers; CC's privilege bits are :u and :k.
    const std::optional<RawEvent> raw = raw_event(spec, ctx.catalog, ctx.pmu);
    if (!raw) return encode_with_catalog(spec, ctx.catalog, ctx.pmu);
    const std::uint64_t code = raw->def.code;
    const std::size_t column = spec.pmu.empty() ? 1 : spec.pmu.size() + 3;
    auto refuse = [&](const std::string& why) {
      throw Error(errc::invalid_argument, event_error(spec, column, why));
    };
    if (code == 0x10 || code == 0x11 || code == 0x20 || code == 0x21 || code >= 0x3C)
      refuse(fmt::format("raw event code 0x{:02X} is reserved on the Pentium (SDM Pentium event table)", code));
    const bool mmx = ctx.pmu.cpu_tag == "p5mmx" || ctx.pmu.cpu_tag == "p5mmx_e74";
    if (code >= kMmxFirst && code <= kMmxLast && !mmx)
      refuse(fmt::format("raw event code 0x{:02X} exists on the Pentium with MMX only, and this CPU ({}) has no MMX",
                         code, ctx.pmu.cpu_tag.empty() ? ctx.pmu.cpu : ctx.pmu.cpu_tag));
    RawEvent counted = *raw;
    if (code == 0x39) counted.def.counters = {0};  // 39H on CTR1 is reserved
    Encoding e = encode_raw(spec, counted, ctx.catalog, ctx.pmu);
    return e;
  }
};

}  // namespace

const pmc_backend_descriptor descriptor{kAbiVersion, sizeof(pmc_backend_descriptor), "p5", 0,
                                        &make_backend<P5Backend>};

}  // namespace pmc::p5

PMC_EXPORT_BACKEND(pmc::p5::descriptor);
