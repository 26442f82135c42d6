// pmc encode EVENT...: the register value each event string would be programmed with, its
// counters and its canonical form; one line (or JSON object) per event, errors included.
#include "cli.hpp"

namespace pmc_cli {

int cmd_encode(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  (void)hal.require_backend();
  int status = 0;
  json out = json::array();
  for (const auto& ev : o.events) {
    try {
      pmc::Encoding e = hal.encode(ev);
      if (o.json) {
        out.push_back({{"event", ev},
                       {"canonical", e.canonical},
                       {"config", hex(e.config)},
                       {"counters", e.counters},
                       {"fixed", e.fixed ? json(*e.fixed) : json(nullptr)},
                       {"name", e.name},
                       {"generic", e.generic.empty() ? json(nullptr) : json(e.generic)},
                       {"granularity", e.granularity}});
      } else {
        std::string counters;
        for (unsigned c : e.counters) counters += (counters.empty() ? "" : ",") + std::to_string(c);
        print("{:<28} config={:<12} counters={}{}  {}\n", ev, hex(e.config), counters,
                   e.fixed ? fmt::format(" fixed={}", *e.fixed) : "", e.canonical);
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
