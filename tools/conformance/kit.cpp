// pmc-conformance: what the checks share (kit.hpp).
#include "kit.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <exception>

namespace kit {

Options g;

pmc::Config config_for(const fs::path& dump, const std::string& backend) {
  pmc::Config cfg;
  cfg.cpu = dump.string();
  cfg.backend = backend;
  cfg.access = "sim";
  cfg.plugin_path = g.plugin_dirs;
  cfg.events_path = g.events;
  return cfg;
}

bool in_dirs(const fs::path& file) {
  if (g.plugin_dirs.empty()) return true;
  for (const auto& d : g.plugin_dirs)
    if (fs::weakly_canonical(file.parent_path()) == fs::weakly_canonical(d)) return true;
  return false;
}

std::map<std::string, std::vector<fs::path>> targets() {
  std::map<std::string, std::vector<fs::path>> out;
  for (const auto& dump : g.dumps) {
    pmc::Hal hal = pmc::Hal::open(config_for(dump));
    for (const auto& p : hal.plugins())
      if (p.error.empty() && p.kind == pmc::PluginKind::backend && in_dirs(p.file) &&
          (g.backend.empty() || p.name == g.backend))
        out[p.name];
    for (const auto& c : hal.candidates())
      if (c.match.matched() && out.count(c.backend)) out[c.backend].push_back(dump);
  }
  for (auto& [name, dumps] : out)
    if (dumps.empty() && !g.dumps.empty()) dumps.push_back(g.dumps.front());
  return out;
}

std::string default_string(const pmc::EventDef& e) {
  if (e.unit_masks && e.unit_masks->default_masks.empty() && !e.unit_masks->masks.empty())
    return e.name + ":" + e.unit_masks->masks.front().name;
  return e.name;
}

bool step(const std::string& what, const std::function<void()>& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    BOOST_ERROR(what << " threw: " << e.what());
  } catch (...) {
    BOOST_ERROR(what << " threw an exception that is not a std::exception");
  }
  return false;
}

std::vector<KnownEvent> known_events(const pmc::Hal& hal) {
  std::vector<KnownEvent> out;
  for (const char* generic : {"cycles", "instructions"}) {
    if (!hal.events().find_generic(generic, hal.pmu().cpu_tag, nullptr)) continue;
    KnownEvent e;
    e.generic = generic;
    e.string = generic;  // the generic name: its event with the unit masks it implies
    try {
      e.encoding = hal.encode(e.string);
    } catch (const pmc::Error& error) {
      BOOST_ERROR("the generic event " << generic << " does not encode: " << error.what());
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::uint64_t expected(const KnownEvent& e, std::uint64_t cycles, std::uint64_t instructions) {
  return e.generic == "cycles" ? cycles : cycles * instructions;
}

std::vector<CounterPlan> plan_every_counter(const pmc::Hal& hal) {
  const std::vector<KnownEvent> known = known_events(hal);
  std::vector<std::size_t> uses(known.size(), 0);  // the events alternate where they can
  std::vector<CounterPlan> out;
  for (const pmc::CounterInfo& c : hal.pmu().counters) {
    CounterPlan p;
    p.counter = &c;
    std::size_t best = known.size();
    for (std::size_t i = 0; i < known.size(); ++i) {
      const pmc::Encoding& e = known[i].encoding;
      const bool fits = c.kind == pmc::CounterKind::fixed
                            ? e.fixed == c.index
                            : std::find(e.counters.begin(), e.counters.end(), c.index) != e.counters.end();
      if (fits && !e.exclusive && (best == known.size() || uses[i] < uses[best])) best = i;
    }
    if (best < known.size()) {
      p.event = known[best];
      ++uses[best];
    }
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const CounterPlan& a, const CounterPlan& b) {
    return a.counter->kind == pmc::CounterKind::general && b.counter->kind != pmc::CounterKind::general;
  });
  return out;
}

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

}  // namespace kit
