// pmc stat --emulate and pmc profile --emulate (docs/emulation.md): the command runs under
// Valgrind's cachegrind with the chosen CPU's caches, and the backend's device model counts its
// activity. Every report says the counts are emulated, what they are made of, and how they
// differ from the real PMU's.
#include "emulate.hpp"

#include <pmc/emulate.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace pmc_cli {

namespace {

// Options that count real activity, or do not apply to an emulated run.
std::optional<std::string> conflict(const Options& o, const char* command) {
  if (!o.workload.empty()) return fmt::format("{} --emulate runs a command, not --workload", command);
  if (o.command.empty())
    return fmt::format("{} --emulate needs a command: pmc {} --emulate [-e EVENTS] -- COMMAND [ARGS...]", command,
                       command);
  if (!o.access.empty() && o.access != "sim")
    return fmt::format("--emulate counts on the simulated PMU: --access {} does not go with it", o.access);
  if (o.all_cpus || !o.cpu_list.empty() || !o.pids.empty() || o.tid || o.no_aggr)
    return "-a, -C, -p, -t and -A count running CPUs or processes; --emulate counts the command it runs";
  if (o.interval_ms || o.timeout_ms) return "-I and --timeout do not go with --emulate: it has no time";
  if (o.repeat > 1) return "-r does not go with --emulate: its counts are the same on every run";
  if (!o.metrics.empty()) return "-M does not go with --emulate yet: ask for the metrics' events with -e";
  if (o.separator && o.json) return "-x (CSV) and --json do not go together";
  if (o.separator && o.separator->empty()) return "-x needs a separator";
  if (!o.pc_range.empty())
    return "--pc does not go with --emulate: cachegrind's output has no addresses; the profile is by function and "
           "source line";
  if (o.kernel) return "--kernel does not go with --emulate: the emulation sees the command's user mode only";
  return std::nullopt;
}

// The emulation's setup: the Hal on access "sim", the caches and the signals.
struct Setup {
  pmc::Hal hal;
  pmc::CacheHierarchy caches;
  pmc::SignalMap map;
  std::vector<std::string> events;
};

Setup setup(const Options& o) {
  pmc::Config cfg = make_config(o);
  cfg.access = "sim";
  cfg.origin["access"].where = "command line (--emulate)";
  Setup s{pmc::Hal::open(cfg), {}, {}, {}};
  (void)s.hal.require_backend();
  s.caches = pmc::cache_hierarchy(s.hal.cpu());
  s.map = pmc::emulated_signals(s.hal, s.caches);
  for (std::string e : split_events(o.events)) {
    // {a,b} groups count together; emulated events are all counted over the same activity.
    e.erase(std::remove_if(e.begin(), e.end(), [](char c) { return c == '{' || c == '}'; }), e.end());
    if (e.empty()) throw pmc::Error(pmc::errc::parse, "an empty event in the event list");
    s.events.push_back(e);
  }
  if (s.events.empty()) {
    // The defaults: what perf stat shows that can be emulated here.
    for (const char* e : {"instructions", "branches", "branch-misses", "cache-references", "cache-misses"}) {
      try {
        if (pmc::check_emulated_event(s.hal, s.map, e).producible) s.events.emplace_back(e);
      } catch (const pmc::Error&) {  // not in this backend's catalog: not a default here
      }
    }
  }
  if (s.events.empty())
    throw pmc::Error(pmc::errc::not_supported,
                     fmt::format("none of the default events can be emulated on the {} backend: give events with -e",
                                 s.hal.require_backend().name));
  pmc::require_emulated_events(s.hal, s.map, s.events);  // before the (slow) run
  return s;
}

std::string terms_of(const pmc::SignalMap& map, const std::string& signal) {
  for (const auto& s : map.signals) {
    if (s.signal != signal) continue;
    std::string out;
    for (pmc::Quantity q : s.terms) out += (out.empty() ? "" : " + ") + std::string(pmc::quantity_name(q));
    return out;
  }
  return {};
}

const pmc::EmulatedSignal* signal_of(const pmc::SignalMap& map, const std::string& name) {
  for (const auto& s : map.signals)
    if (s.signal == name) return &s;
  return nullptr;
}

// "branches (Bc + Bi)", "2 x instructions (Ir)" for what an event counts.
std::string reads_text(const pmc::SignalMap& map, const pmc::EmulatedEvent& e) {
  std::string out;
  for (const auto& [signal, per] : e.reads) {
    // A catalog event's own signal bears the event's name: say what it stands for instead.
    const pmc::EmulatedSignal* sig = signal_of(map, signal);
    out += fmt::format("{}{}{} ({})", out.empty() ? "" : " + ", per == 1 ? std::string() : fmt::format("{} x ", per),
                       sig && sig->event_signal ? sig->meaning : signal, terms_of(map, signal));
  }
  return out;
}

std::string event_label(const pmc::EmulatedEvent& e) {
  return e.reading.name.empty() || e.reading.name == e.event ? e.event : fmt::format("{} ({})", e.event, e.reading.name);
}

// The paragraph every text report ends with: what the counts are.
void print_provenance(std::FILE* out, const Setup& s, const pmc::EmulatedRun& run,
                      const std::vector<pmc::EmulatedEvent>& events) {
  const pmc::CacheHierarchy& c = run.caches;
  print_to(out, " Emulated counts: the command's user-mode activity under Valgrind's cachegrind ({}), counted by the {} "
                "device model for {}.\n",
           run.valgrind.empty() ? "valgrind" : run.valgrind, s.map.model, pmc::describe(s.hal.cpu()));
  print_to(out, " Simulated caches ({}): L1I {}; L1D {}; L{} {}.\n", c.source, pmc::describe(c.l1i), pmc::describe(c.l1d),
           c.ll_level, pmc::describe(c.ll));
  for (const auto& n : c.notes) print_to(out, " Note: {}.\n", n);
  std::set<std::string> noted;
  for (const auto& e : events)
    for (const auto& [signal, per] : e.reads) {
      const pmc::EmulatedSignal* sig = signal_of(s.map, signal);
      if (sig && !sig->note.empty() && noted.insert(signal).second)
        print_to(out, " {}: {}.\n", signal, sig->note);
    }
  print_to(out, " Not the CPU's timing or microarchitecture: see docs/emulation.md.\n\n");
}

json caches_json(const pmc::CacheHierarchy& c) {
  auto one = [](const pmc::CacheGeometry& g) { return json{{"size", g.size}, {"ways", g.ways}, {"line", g.line}}; };
  json ll = one(c.ll);
  ll["level"] = c.ll_level;
  return json{{"source", c.source}, {"l1i", one(c.l1i)}, {"l1d", one(c.l1d)}, {"ll", ll}, {"notes", c.notes}};
}

json activity_json(const pmc::ProgramActivity& a, const pmc::Activity& counts) {
  json out = json::object();
  for (std::size_t i = 0; i < pmc::kQuantities; ++i)
    if (a.present[i]) out[std::string(pmc::quantity_name(static_cast<pmc::Quantity>(i)))] = counts.counts[i];
  return out;
}

json counter_json(const pmc::SignalMap& map, const pmc::EmulatedEvent& e) {
  json reads = json::array();
  for (const auto& [signal, per] : e.reads) {
    json terms = json::array();
    if (const pmc::EmulatedSignal* s = signal_of(map, signal))
      for (pmc::Quantity q : s->terms) terms.push_back(std::string(pmc::quantity_name(q)));
    reads.push_back({{"signal", signal}, {"per_occurrence", per}, {"terms", terms}});
  }
  return json{{"event", e.event},
              {"canonical", e.reading.canonical},
              {"name", e.reading.name},
              {"generic", e.reading.generic.empty() ? json(nullptr) : json(e.reading.generic)},
              {"value", e.reading.value},
              {"reads", reads},
              {"interrupts", e.interrupts}};
}

json run_json(const Options& o, const Setup& s, const pmc::EmulatedRun& run) {
  return json{{"emulated", true},
              {"command", o.command},
              {"exit_status", run.child.exit_status},
              {"interrupted", run.child.interrupted},
              {"elapsed_ns", run.child.elapsed_ns},
              {"backend", s.hal.require_backend().name},
              {"model", s.map.model},
              {"cpu", pmc::describe(s.hal.cpu())},
              {"valgrind", {{"version", run.valgrind}, {"tool", "cachegrind"}, {"command", run.command}}},
              {"caches", caches_json(run.caches)},
              {"activity", activity_json(run.activity, run.activity.total)}};
}

// Every event's total, one row each, then what the counts are.
void print_event_rows(std::FILE* out, const Setup& s, const pmc::EmulatedRun& run, const pmc::EmulatedCounts& counts) {
  std::size_t width = 0;
  for (const auto& e : counts.events) width = std::max(width, event_label(e).size());
  for (const auto& e : counts.events)
    print_to(out, "  {:>18}      {:<{}}   {}\n", group_digits(e.reading.value), event_label(e), width,
             reads_text(s.map, e));
  print_to(out, "\n");
  print_provenance(out, s, run, counts.events);
}

// The profile's last part: every event's total and what the counts are.
void print_totals(std::FILE* out, const Setup& s, const pmc::EmulatedRun& run, const pmc::EmulatedCounts& counts) {
  print_to(out, " Totals:\n");
  print_event_rows(out, s, run, counts);
}

std::string seconds(std::uint64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e9); }

}  // namespace

int stat_emulated(const Options& o) {
  if (auto why = conflict(o, "stat")) {
    error_line(fmt::format("{} (see 'pmc stat --help')", *why));
    return 2;
  }
  const Setup s = setup(o);
  Report report(o.output, o.json ? stdout : stderr);
  std::FILE* out = report.out();
  const pmc::EmulatedRun run = pmc::run_under_valgrind(o.command, s.caches);
  const pmc::EmulatedCounts counts = pmc::count_emulated(s.hal, s.map, s.events, run.activity);
  if (o.json) {
    json doc = run_json(o, s, run);
    json counters = json::array();
    for (const auto& e : counts.events) counters.push_back(counter_json(s.map, e));
    doc["counters"] = counters;
    print_to(out, "{}\n", doc.dump(2));
  } else if (o.separator) {
    const std::string& x = *o.separator;
    for (const auto& e : counts.events)
      print_to(out, "{0}{1}{1}{2}{1}{1}100.00{1}{1}\n", e.reading.value, x, e.event);  // perf stat -x's fields
  } else {
    print_to(out, "\n Performance counter stats for '{}' (emulated):\n\n", quote_command(o.command));
    print_event_rows(out, s, run, counts);
    print_to(out, " {:>18} seconds time elapsed (under Valgrind)\n", seconds(run.child.elapsed_ns));
    if (run.child.interrupted) print_to(out, " The command was interrupted: the counts are of the part it ran.\n");
    print_to(out, "\n");
  }
  return run.child.exit_status;
}

int profile_emulated(const Options& o, const EmulatedViews& views) {
  if (auto why = conflict(o, "profile")) {
    error_line(fmt::format("{} (see 'pmc profile --help')", *why));
    return 2;
  }
  const Setup s = setup(o);
  Report report(o.output, o.json ? stdout : stderr);
  std::FILE* out = report.out();
  const pmc::EmulatedRun run = pmc::run_under_valgrind(o.command, s.caches);
  const pmc::EmulatedCounts counts = pmc::count_emulated(s.hal, s.map, s.events, run.activity);
  const pmc::ProgramActivity& a = run.activity;
  // Busiest first by the first event, then by the others; ties in the file's order.
  auto order = [&](const std::vector<std::vector<std::uint64_t>>& per, std::size_t n) {
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
      for (const auto& v : per)
        if (v[x] != v[y]) return v[x] > v[y];
      return false;
    });
    return idx;
  };
  const std::vector<std::size_t> functions = order(counts.per_function, a.functions.size());
  const std::vector<std::size_t> lines = order(counts.per_line, a.lines.size());

  if (o.json) {
    json doc = run_json(o, s, run);
    json counters = json::array();
    for (const auto& e : counts.events) counters.push_back(counter_json(s.map, e));
    doc["counters"] = counters;
    auto values = [&](const std::vector<std::vector<std::uint64_t>>& per, std::size_t i) {
      json v = json::object();
      for (std::size_t e = 0; e < counts.events.size(); ++e) v[counts.events[e].event] = per[e][i];
      return v;
    };
    json fs = json::array();
    for (std::size_t i : functions) {
      const pmc::FunctionActivity& f = a.functions[i];
      fs.push_back({{"function", f.name}, {"file", f.file}, {"counts", values(counts.per_function, i)},
                    {"activity", activity_json(a, f.activity)}});
    }
    json ls = json::array();
    for (std::size_t i : lines) {
      const pmc::SourceLine& l = a.lines[i];
      ls.push_back({{"file", l.file}, {"line", l.line}, {"function", a.functions[l.function].name},
                    {"counts", values(counts.per_line, i)}});
    }
    doc["functions"] = fs;
    doc["lines"] = ls;
    if (views) (void)views(a, counts, &doc, nullptr);
    print_to(out, "{}\n", doc.dump(2));
    return run.child.exit_status;
  }

  print_to(out, "\n Emulated profile of '{}': {} functions, {} source lines\n\n", quote_command(o.command),
           group_digits(a.functions.size()), group_digits(a.lines.size()));
  if (views && views(a, counts, nullptr, out)) {  // the table by --sort's keys instead of the two below
    print_totals(out, s, run, counts);
    return run.child.exit_status;
  }
  std::string header;
  for (const auto& e : counts.events) header += fmt::format("  {:>18}", e.event.size() > 18 ? e.event.substr(0, 18) : e.event);
  const std::uint64_t total = counts.events.front().reading.value;
  auto row = [&](const std::vector<std::vector<std::uint64_t>>& per, std::size_t i) {
    std::string r;
    for (const auto& v : per) r += fmt::format("  {:>18}", group_digits(v[i]));
    const double pct = total ? 100.0 * static_cast<double>(per.front()[i]) / static_cast<double>(total) : 0.0;
    return r + fmt::format("  {:>6.1f}%", pct);
  };
  const std::size_t nf = std::min(o.top, functions.size());
  print_to(out, " Functions by {} (the {} busiest of {}):\n\n{}  {:>7}  function (file)\n", counts.events.front().event,
           nf, group_digits(functions.size()), header, "");
  for (std::size_t k = 0; k < nf; ++k) {
    const pmc::FunctionActivity& f = a.functions[functions[k]];
    print_to(out, "{}  {} ({})\n", row(counts.per_function, functions[k]), f.name, f.file);
  }
  const std::size_t nl = std::min(o.top, lines.size());
  print_to(out, "\n Source lines by {} (the {} busiest of {}):\n\n{}  {:>7}  file:line (function)\n",
           counts.events.front().event, nl, group_digits(lines.size()), header, "");
  for (std::size_t k = 0; k < nl; ++k) {
    const pmc::SourceLine& l = a.lines[lines[k]];
    print_to(out, "{}  {}:{} ({})\n", row(counts.per_line, lines[k]), l.file, l.line, a.functions[l.function].name);
  }
  print_to(out, "\n");
  print_totals(out, s, run, counts);
  return run.child.exit_status;
}

}  // namespace pmc_cli
