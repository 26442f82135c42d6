// pmc encode EVENT...: the register value each event string would be programmed with, its
// counters and its canonical form; one line (or JSON object) per event, errors included. An
// event that needs an extra register shows its value as perf's config1 (the MSR holding it is
// chosen when the event is scheduled: `extra.msrs` lists the candidates).
#include "cli.hpp"

namespace pmc_cli {

namespace {

// The value of a [format] field in the encoding (0 when the format has no such field).
std::uint64_t field_value(const pmc::Hal& hal, const pmc::Encoding& e, std::string_view field) {
  const auto f = hal.events().format().field(field);
  return f ? f->extract(e.config) : 0;
}

json encoding_json(const pmc::Hal& hal, const std::string& ev, const pmc::Encoding& e) {
  json extra = nullptr;
  if (!e.extra.empty()) {
    json msrs = json::array();
    for (std::uint32_t m : e.extra_msrs) msrs.push_back(hex(m));
    extra = {{"name", e.extra}, {"value", hex(e.extra_value)}, {"msrs", msrs}};
  }
  return {{"event", ev},
          {"canonical", e.canonical},
          {"config", hex(e.config)},
          {"config1", e.extra.empty() ? json(nullptr) : json(hex(e.extra_value))},
          {"counters", e.counters},
          {"fixed", e.fixed ? json(*e.fixed) : json(nullptr)},
          {"name", e.name},
          {"generic", e.generic.empty() ? json(nullptr) : json(e.generic)},
          {"granularity", e.granularity},
          {"umask2", hex(field_value(hal, e, "umask2"))},
          {"extra", extra},
          {"exclusive", e.exclusive},
          {"precise", e.def ? e.def->precise : 0u},
          {"period", e.def && e.def->period ? json(e.def->period) : json(nullptr)}};
}

}  // namespace

int cmd_encode(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  (void)hal.require_backend();
  int status = 0;
  json out = json::array();
  for (const auto& ev : o.events) {
    try {
      pmc::Encoding e = hal.encode(ev);
      if (o.json) {
        out.push_back(encoding_json(hal, ev, e));
      } else {
        std::string counters;
        for (unsigned c : e.counters) counters += (counters.empty() ? "" : ",") + std::to_string(c);
        print("{:<28} config={:<12}{} counters={}{}{}  {}\n", ev, hex(e.config),
              e.extra.empty() ? "" : fmt::format(" config1={}", hex(e.extra_value)), counters,
              e.fixed ? fmt::format(" fixed={}", *e.fixed) : "", e.exclusive ? " exclusive" : "", e.canonical);
      }
    } catch (const pmc::Error& err) {
      status = 1;
      if (o.json) out.push_back({{"event", ev}, {"error", err.what()}});
      else error_line(err.what());
    }
  }
  if (o.json) print("{}\n", out.dump(2));
  return status;
}

}  // namespace pmc_cli
