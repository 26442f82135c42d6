// pmc: probe the CPU, list and encode events, count events of a command or a simulated workload,
// profile a command (Linux perf sampling) or a simulated workload.
// Errors are one line on stderr; exit 2 for usage errors, 1 for everything else.
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sim/device.hpp>
#include <pmc/sim/workload.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <functional>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Options {
  std::optional<fs::path> config;
  std::string backend;
  std::string cpuid_dump;
  std::string access;                // --access METHOD: overrides the config key `access`
  bool json = false;
  std::vector<std::string> events;
  std::vector<std::string> filters;  // list WORD...: events whose name or an alias contains a word
  std::string workload;
  std::vector<std::string> command;  // stat: the command to run and its arguments
  std::optional<std::string> separator;  // stat -x: CSV
  std::string output;                // stat -o: the report goes to this file
  std::string pc_range;              // profile --pc START:END
  bool kernel = false;               // profile --kernel: the range is kernel addresses
  std::size_t top = 10;              // profile --top N
};

// A bare name ("pentium-iii", "p6-demo") names a file bundled in share/pmchal/<dir>.
std::string resolve_data(const std::string& given, const char* dir, const char* ext) {
  std::error_code ec;
  if (given.empty() || fs::exists(given, ec)) return given;
  fs::path bundled = pmc::default_paths().data / dir / (given + ext);
  if (fs::exists(bundled, ec)) return bundled.string();
  return given;  // let the loader report the missing file by the name the user gave
}

pmc::Config make_config(const Options& o) {
  pmc::Config cfg = pmc::find_config(o.config);
  if (!o.backend.empty()) {
    cfg.backend = o.backend;
    cfg.origin["backend"].where = "command line (--backend)";
  }
  if (!o.cpuid_dump.empty()) {
    cfg.cpu = resolve_data(o.cpuid_dump, "cpuid", ".txt");
    cfg.origin["cpu"].where = "command line (--cpuid-dump)";
  }
  if (!o.access.empty()) {
    cfg.access = o.access;
    cfg.origin["access"].where = "command line (--access)";
  }
  return cfg;
}

std::string group_digits(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string hex(std::uint64_t v) { return fmt::format("0x{:X}", v); }

const char* kind_name(pmc::CounterKind k) { return k == pmc::CounterKind::fixed ? "fixed" : "general"; }

json config_json(const pmc::Config& cfg) {
  json origin = json::object();
  for (const auto& [key, o] : cfg.origin) origin[key] = o.where;
  return json{{"file", cfg.file ? json(cfg.file->string()) : json(nullptr)},
              {"found_by", cfg.found_by},
              {"backend", cfg.backend},
              {"access", cfg.access},
              {"cpu", cfg.cpu},
              {"origin", origin}};
}

int cmd_probe(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  const pmc::CpuInfo& cpu = hal.cpu();
  const pmc::Backend* backend = hal.backend();
  if (o.json) {
    json counters = json::array();
    if (backend)
      for (const auto& c : hal.pmu().counters)
        counters.push_back({{"kind", kind_name(c.kind)}, {"index", c.index}, {"width", c.width}});
    json candidates = json::array();
    for (const auto& c : hal.candidates())
      candidates.push_back({{"backend", c.backend}, {"score", c.match.score}, {"reason", c.match.reason}});
    json plugins = json::array();
    for (const auto& p : hal.plugins())
      plugins.push_back({{"file", p.file.string()},
                         {"backend", p.backend.empty() ? json(nullptr) : json(p.backend)},
                         {"error", p.error.empty() ? json(nullptr) : json(p.error)}});
    json out{{"cpu",
              {{"vendor", cpu.vendor},
               {"family", cpu.family},
               {"model", cpu.model},
               {"stepping", cpu.stepping},
               {"brand", cpu.brand},
               {"source", cpu.source},
               {"arch_perfmon_version", cpu.arch.version}}},
             {"backend", backend ? json(std::string(backend->name())) : json(nullptr)},
             {"reason", hal.why()},
             {"access", backend ? json(hal.access()) : json(nullptr)},
             {"access_reason", hal.access_reason()},
             {"pmu", backend ? json{{"description", hal.pmu().description},
                                    {"counters", counters},
                                    {"profiling", dynamic_cast<const pmc::ProfilingDriver*>(backend) != nullptr}}
                             : json(nullptr)},
             {"candidates", candidates},
             {"plugins", plugins},
             {"config", config_json(hal.config())}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  fmt::print("CPU:        {}\n", pmc::describe(cpu));
  fmt::print("            from {}; CPUID.0AH version {}\n", cpu.source, cpu.arch.version);
  fmt::print("Backend:    {}\n", backend ? std::string(backend->name()) : std::string("none"));
  fmt::print("            {}\n", hal.why());
  if (backend) {
    const auto& pmu = hal.pmu();
    fmt::print("PMU:        {}\n", pmu.description);
    std::string counters;
    for (const auto& c : pmu.counters)
      counters += fmt::format("{}{} {} ({} bits)", counters.empty() ? "" : ", ", kind_name(c.kind), c.index, c.width);
    fmt::print("Counters:   {}\n", counters);
    fmt::print("Profiling:  {}\n", dynamic_cast<const pmc::ProfilingDriver*>(backend)
                                      ? "yes: samples execution levels and PCs at counter interrupts (pmc profile)"
                                      : "no: its driver does not sample at counter interrupts");
  }
  fmt::print("Access:     {}\n", backend ? hal.access() : std::string("none"));
  fmt::print("            {}\n", hal.access_reason());
  fmt::print("Candidates:\n");
  for (const auto& c : hal.candidates())
    fmt::print("  {:<16} score {:>3}  {}\n", c.backend, c.match.score, c.match.reason);
  fmt::print("Plugins:\n");
  for (const auto& p : hal.plugins()) {
    if (p.error.empty()) fmt::print("  {:<16} {}\n", p.backend, p.file.string());
    else fmt::print("  {:<16} {}\n", "(failed)", p.error);
  }
  const auto& cfg = hal.config();
  fmt::print("Config:     {}{}\n", cfg.found_by, cfg.file ? " " + cfg.file->string() : std::string());
  for (const auto& key : {"backend", "access", "cpu"}) {
    auto it = cfg.origin.find(key);
    fmt::print("  {:<10} {:<24} from {}\n", key,
               std::string(key) == "backend" ? cfg.backend : std::string(key) == "access" ? cfg.access : cfg.cpu,
               it == cfg.origin.end() ? "default" : it->second.where);
  }
  return 0;
}

// ASCII case-insensitive "text contains word".
bool icontains(std::string_view text, std::string_view word) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  return std::search(text.begin(), text.end(), word.begin(), word.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

// `pmc list WORD...`: an event is shown when its name or one of its aliases contains any of the
// words, ignoring case.
bool matches_filter(const pmc::EventDef& e, const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return icontains(e.name, w) ||
           std::any_of(e.aliases.begin(), e.aliases.end(), [&](const std::string& a) { return icontains(a, w); });
  });
}

std::string quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == words.size() ? " or " : ", ", words[i]);
  return out;
}

bool matches_filter(const pmc::HalEventDescription& e, const std::vector<std::string>& words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const std::string& w) { return icontains(e.name, w) || (!e.alias.empty() && icontains(e.alias, w)); });
}

// The backend's events for this CPU, then the HAL events (tsc, the OS software events), which
// count with any backend or none: without a backend, only those, and a note on stderr.
int cmd_list(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  const pmc::Backend* backend = hal.backend();
  std::vector<const pmc::EventDef*> events;
  if (backend) events = hal.events().for_cpu(hal.pmu().cpu_tag);
  const std::size_t all = events.size();
  std::vector<pmc::HalEventDescription> builtin = pmc::hal_events();
  const std::size_t all_builtin = builtin.size();
  if (!o.filters.empty()) {
    std::erase_if(events, [&](const pmc::EventDef* e) { return !matches_filter(*e, o.filters); });
    std::erase_if(builtin, [&](const pmc::HalEventDescription& e) { return !matches_filter(e, o.filters); });
    if (events.empty() && builtin.empty())
      throw pmc::Error(pmc::errc::not_found,
                       backend ? fmt::format("no event of backend {} matches {}", backend->name(), quoted_words(o.filters))
                               : fmt::format("no HAL event matches {} (and no backend matches this CPU)",
                                             quoted_words(o.filters)));
  }
  if (!backend)
    fmt::print(stderr, "pmc: no PMU events: {}; a simulated PMU's events: --cpuid-dump (pentium-iii, core2, ...) or "
                       "--backend\n",
               hal.why());
  static const pmc::PmuInfo kNoPmu;
  const pmc::PmuInfo& pmu = backend ? hal.pmu() : kNoPmu;
  auto counters_of = [&](const pmc::EventDef& e) {
    std::vector<unsigned> c = e.counters;
    if (c.empty())
      for (const auto& ci : pmu.counters)
        if (ci.kind == pmc::CounterKind::general) c.push_back(ci.index);
    return c;
  };
  if (o.json) {
    json out = json::array();
    for (const auto* e : events) {
      json masks = json::array();
      if (e->unit_masks)
        for (const auto& m : e->unit_masks->masks) {
          bool is_default = std::find(e->unit_masks->default_masks.begin(), e->unit_masks->default_masks.end(),
                                      m.name) != e->unit_masks->default_masks.end();
          masks.push_back({{"name", m.name}, {"value", hex(m.value)}, {"desc", m.description}, {"default", is_default}});
        }
      out.push_back({{"name", e->name},
                     {"code", hex(e->code)},
                     {"desc", e->description},
                     {"counters", counters_of(*e)},
                     {"fixed", e->fixed ? json(*e->fixed) : json(nullptr)},
                     {"generic", e->generic.empty() ? json(nullptr) : json(e->generic)},
                     {"unit_masks", masks},
                     {"combinable", e->unit_masks ? e->unit_masks->combinable : false},
                     {"modifiers", e->modifiers},
                     {"cpus", e->cpus},
                     {"aliases", e->aliases},
                     {"pmu", pmu.name},
                     {"source", e->source.str()}});
    }
    for (const auto& e : builtin)
      out.push_back({{"name", e.name},
                     {"pmu", "hal"},
                     {"desc", e.description},
                     {"unit", e.unit},
                     {"aliases", e.alias.empty() ? json::array() : json::array({e.alias})}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  auto print_builtin = [&] {
    if (o.filters.empty())
      fmt::print("{} HAL events, counted by pmchal with any backend or none:\n\n", builtin.size());
    else
      fmt::print("{} of {} HAL events, counted by pmchal with any backend or none, match {}:\n\n", builtin.size(),
                 all_builtin, quoted_words(o.filters));
    for (const auto& e : builtin)
      fmt::print("{:<32} {:<6} {}{}\n", e.name, e.unit, e.description,
                 e.alias.empty() ? "" : fmt::format(" [also {}]", e.alias));
  };
  if (!backend) {
    print_builtin();
    return 0;
  }
  const std::string cpu_tag = pmu.cpu_tag.empty() ? "" : fmt::format(" [cpu tag {}]", pmu.cpu_tag);
  if (o.filters.empty())
    fmt::print("{} events for {}{}\n\n", events.size(), pmu.description, cpu_tag);
  else
    fmt::print("{} of {} events for {}{} match {}\n\n", events.size(), all, pmu.description, cpu_tag,
               quoted_words(o.filters));
  for (const auto* e : events) {
    std::string counters;
    for (unsigned c : counters_of(*e)) counters += (counters.empty() ? "" : ",") + std::to_string(c);
    fmt::print("{:<32} 0x{:02X}  counters {:<4} {}{}\n", e->name, e->code, counters, e->description,
               e->generic.empty() ? "" : fmt::format(" [{}]", e->generic));
    if (!e->aliases.empty()) {
      std::string aliases;
      for (const auto& a : e->aliases) aliases += (aliases.empty() ? "" : ", ") + a;
      fmt::print("    aliases: {}\n", aliases);
    }
    if (e->unit_masks) {
      const auto& g = *e->unit_masks;
      for (const auto& m : g.masks) {
        bool is_default = std::find(g.default_masks.begin(), g.default_masks.end(), m.name) != g.default_masks.end();
        fmt::print("    :{:<24} 0x{:02X}{} {}{}\n", m.name, m.value, is_default ? " (default)" : "          ",
                   m.description, m.generic.empty() ? "" : fmt::format(" [{}]", m.generic));
      }
      fmt::print("    ({})\n", g.combinable ? "unit masks combine" : "choose one unit mask");
    }
    // Without a CPU tag (a backend forced onto a CPU it has no tag for) every definition is
    // listed, the per-CPU ones of one name too: say which CPUs each is for.
    if (pmu.cpu_tag.empty() && !e->cpus.empty()) fmt::print("    for CPUs: {}\n", fmt::join(e->cpus, ", "));
    fmt::print("    from {}\n", e->source.str());
  }
  if (!builtin.empty()) {
    fmt::print("\n");
    print_builtin();
  }
  return 0;
}

int cmd_encode(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
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
                       {"granularity", e.granularity}});
      } else {
        std::string counters;
        for (unsigned c : e.counters) counters += (counters.empty() ? "" : ",") + std::to_string(c);
        fmt::print("{:<28} config={:<12} counters={}{}  {}\n", ev, hex(e.config), counters,
                   e.fixed ? fmt::format(" fixed={}", *e.fixed) : "", e.canonical);
      }
    } catch (const pmc::Error& err) {
      status = 1;
      if (o.json) out.push_back({{"event", ev}, {"error", err.what()}});
      else fmt::print(stderr, "pmc: {}\n", err.what());
    }
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  return status;
}

std::vector<std::string> split_events(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& g : given) {
    std::size_t pos = 0;
    while (pos <= g.size()) {
      std::size_t comma = g.find(',', pos);
      std::string part = g.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (part.empty()) throw pmc::Error(pmc::errc::parse, fmt::format("event list '{}' has an empty entry", g));
      out.push_back(part);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

// A session over a simulated workload: the events added, `prepare` (profiling) applied, the
// workload run through the device model, the counts read.
struct SimulatedRun {
  pmc::sim::Workload workload;
  std::vector<pmc::Reading> readings;
  std::uint64_t interrupts = 0;
  std::uint64_t elsewhere = 0;  // cycles of segments on CPUs the simulated device is not
  std::vector<pmc::LevelHistogram> levels;
  std::vector<pmc::PcProfile> profiles;
};

SimulatedRun run_simulated(const pmc::Hal& hal, const Options& o, std::vector<std::string> events,
                           const std::function<void(pmc::Session&, const pmc::sim::Workload&)>& prepare = {}) {
  SimulatedRun run;
  run.workload = pmc::sim::load_workload(resolve_data(o.workload, "workloads", ".toml"));
  pmc::Session session = hal.session();
  for (const auto& e : events) session.add(e);
  pmc::sim::Device* device = session.device();
  if (!device)
    throw pmc::Error(pmc::errc::not_supported,
                     fmt::format("--workload needs the simulated access; the config selects '{}'", hal.access()));
  if (prepare) prepare(session, run.workload);
  unsigned width = 64;
  for (const auto& c : hal.pmu().counters) width = std::min(width, c.width);
  session.start();
  pmc::sim::run_workload(*device, run.workload, width, [&] { session.poll(); });
  session.stop();
  run.readings = session.read();
  run.interrupts = device->interrupts();
  for (const auto& seg : run.workload.segments)
    if (!device->executes(seg)) run.elsewhere += seg.cycles;
  run.levels = session.level_histograms();
  run.profiles = session.pc_profiles();
  return run;
}

// The readings as every --json report gives them (a workload's or a command's).
json counters_json(const std::vector<pmc::Reading>& readings) {
  json counters = json::array();
  for (const auto& r : readings) {
    json c{{"event", r.event},
           {"canonical", r.canonical},
           {"value", r.value},
           {"unit", r.unit},
           {"counter", r.counter},
           {"granularity", r.granularity},
           {"time_enabled", r.time_enabled},
           {"time_running", r.time_running},
           {"extrapolated", r.extrapolated}};
    if (r.cpu >= 0) c["cpu"] = r.cpu;
    counters.push_back(std::move(c));
  }
  return counters;
}

json run_json(const pmc::Hal& hal, const SimulatedRun& run) {
  return json{{"workload", run.workload.name},
              {"file", run.workload.source},
              {"backend", hal.pmu().name},
              {"pmu", hal.pmu().description},
              {"access", hal.access()},
              {"cycles", run.workload.total_cycles()},
              {"interrupts", run.interrupts},
              {"cycles_not_counted", run.elsewhere},
              {"counters", counters_json(run.readings)}};
}

// The perf generic name a reading's event implements ("cycles", "instructions"), from the
// backend's catalog: the generic name itself, or a catalog event whose `generic` it is
// (p6's INST_RETIRED, archperf's INSTRUCTION_RETIRED); "" otherwise.
std::string generic_of(const pmc::Hal& hal, const pmc::Reading& r) {
  if (r.event == "cycles" || r.event == "instructions") return r.event;
  if (!hal.backend()) return {};
  const std::string prefix = hal.pmu().name + "::";
  if (r.canonical.rfind(prefix, 0) != 0) return {};
  const std::string name = r.canonical.substr(prefix.size(), r.canonical.find(':', prefix.size()) - prefix.size());
  const pmc::EventDef* def = hal.events().find(name, hal.pmu().cpu_tag);
  return def ? def->generic : std::string();
}

// Instructions per cycle, when the readings hold both (the first of each).
std::optional<double> insn_per_cycle(const pmc::Hal& hal, const std::vector<pmc::Reading>& readings) {
  std::optional<std::uint64_t> cycles, instructions;
  for (const auto& r : readings) {
    const std::string g = generic_of(hal, r);
    if (g == "cycles" && !cycles) cycles = r.value;
    if (g == "instructions" && !instructions) instructions = r.value;
  }
  if (!cycles || !instructions || *cycles == 0) return std::nullopt;
  return static_cast<double>(*instructions) / static_cast<double>(*cycles);
}

void print_counts(const pmc::Hal& hal, const SimulatedRun& run, const char* what) {
  fmt::print("\n {} for workload '{}' ({})\n", what, run.workload.name, run.workload.source);
  fmt::print(" on the simulated {}:\n\n", hal.pmu().description);
  const std::optional<double> ipc = insn_per_cycle(hal, run.readings);
  for (const auto& r : run.readings) {
    std::string note = fmt::format("# {} (counter {})", r.canonical, r.counter);
    if (ipc && generic_of(hal, r) == "instructions") note = fmt::format("# {:6.2f} insn per cycle", *ipc);
    fmt::print("{:>20}      {:<28} {}\n", group_digits(r.value), r.event, note);
  }
  fmt::print("\n{:>20}      cycles simulated\n", group_digits(run.workload.total_cycles()));
  if (run.interrupts) fmt::print("{:>20}      overflow interrupts\n", group_digits(run.interrupts));
  if (run.elsewhere)
    fmt::print("{:>20}      cycles not counted: they ran on other CPUs of the workload, and the session counts the\n"
               "{:>20}      simulated CPU 0 (the pfm(7) shim, <pmc/pfm.h>, counts each CPU: PCNTOPENEACH)\n",
               group_digits(run.elsewhere), "");
  fmt::print("\n");
}

int cmd_stat_workload(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  (void)hal.require_backend();
  std::vector<std::string> events = split_events(o.events);
  if (events.empty()) events = {"cycles", "instructions"};
  const SimulatedRun run = run_simulated(hal, o, events);
  if (o.json) {
    std::cout << run_json(hal, run).dump(2) << "\n";
    return 0;
  }
  print_counts(hal, run, "Performance counter stats");
  return 0;
}

// ---------------------------------------------------------------------------------------------
// pmc profile --workload W: where the counter interrupts fell, by execution level and by PC.

// "0x120000000:0x120001000" (hex or decimal bounds, end exclusive).
pmc::PcRange parse_pc_range(const std::string& text, bool kernel) {
  auto number = [&](std::string part) {
    part.erase(std::remove(part.begin(), part.end(), '_'), part.end());
    int base = 10;
    if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
      part.erase(0, 2);
      base = 16;
    }
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("'{}' is not START:END, two addresses such as 0x120000000:0x120001000", text));
    return v;
  };
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("'{}' is not START:END, two addresses such as 0x120000000:0x120001000", text));
  pmc::PcRange r;
  r.space = kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user;
  r.start = number(text.substr(0, colon));
  r.end = number(text.substr(colon + 1));
  if (r.start >= r.end)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("'{}' is an empty range: START must be below END (END is exclusive)", text));
  return r;
}

// Without --pc: the workload's busiest code in the address space asked for, that is, of the
// overlapping `pc` ranges of its user (or kernel) segments merged, the one run for the most
// cycles. nullopt when no segment of that space has a `pc`.
std::optional<pmc::PcRange> busiest_code(const pmc::sim::Workload& w, bool kernel) {
  struct Span {
    std::uint64_t begin, end, cycles;
  };
  std::vector<Span> spans;
  for (const auto& s : w.segments)
    if ((s.mode == pmc::sim::Mode::kernel) == kernel && s.pc_begin < s.pc_end)
      spans.push_back({s.pc_begin, s.pc_end, s.cycles});
  if (spans.empty()) return std::nullopt;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, s.end);
      merged.back().cycles += s.cycles;
    } else {
      merged.push_back(s);
    }
  }
  const Span& best = *std::max_element(merged.begin(), merged.end(),
                                       [](const Span& a, const Span& b) { return a.cycles < b.cycles; });
  return pmc::PcRange{kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user, best.begin, best.end};
}

std::string bar(std::uint64_t value, std::uint64_t max, std::size_t width = 40) {
  if (max == 0 || value == 0) return {};
  const auto n = static_cast<std::size_t>((static_cast<double>(value) * static_cast<double>(width)) / static_cast<double>(max) + 0.5);
  return std::string(std::max<std::size_t>(n, 1), '#');
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

const char* space_name(pmc::AddressSpace s) { return s == pmc::AddressSpace::kernel ? "kernel" : "user"; }

// The `levels` and `pc_profile` members of a profile's JSON document; `chosen` says where the
// range came from.
void profile_json(json& out, const pmc::LevelHistogram* levels, const pmc::PcProfile* profile, std::size_t top,
                  const std::string& chosen) {
  if (levels) {
    json bins = json::array();
    for (const auto& b : levels->bins) bins.push_back({{"label", b.label}, {"samples", b.samples}});
    out["levels"] = {{"total", levels->total()}, {"bins", bins}};
  } else {
    out["levels"] = nullptr;
  }
  if (profile) {
    const std::size_t with_samples = static_cast<std::size_t>(
        std::count_if(profile->samples.begin(), profile->samples.end(), [](std::uint64_t v) { return v != 0; }));
    json hottest = json::array();
    for (const auto& b : profile->hottest(top))
      hottest.push_back({{"start", hex(b.start)}, {"end", hex(b.end)}, {"samples", b.samples}});
    out["pc_profile"] = {{"space", space_name(profile->range.space)},
                         {"start", hex(profile->range.start)},
                         {"end", hex(profile->range.end)},
                         {"chosen", chosen},
                         {"bucket_bytes", profile->bucket_bytes},
                         {"buckets", profile->samples.size()},
                         {"buckets_with_samples", with_samples},
                         {"total", profile->total()},
                         {"hottest", hottest}};
  } else {
    out["pc_profile"] = nullptr;
  }
}

// The level histogram as bars scaled to the fullest bin; `samples` names what a sample is.
void print_levels(std::FILE* out, const pmc::LevelHistogram& levels, const char* samples) {
  std::uint64_t max = 0;
  for (const auto& b : levels.bins) max = std::max(max, b.samples);
  fmt::print(out, " Execution level at each of the {} {}:\n\n", group_digits(levels.total()), samples);
  for (const auto& b : levels.bins)
    fmt::print(out, "   {:<16} {:>12} {:>6.1f}%  |{}\n", b.label, group_digits(b.samples), percent(b.samples, levels.total()),
               bar(b.samples, max));
  fmt::print(out, "\n");
}

// The PC profile's hottest buckets; `chosen_note` (when the range was not given) says how it was
// chosen.
void print_pc_profile(std::FILE* out, const pmc::PcProfile& profile, std::size_t top, const std::string& chosen_note,
                      const char* none) {
  const std::size_t with_samples = static_cast<std::size_t>(
      std::count_if(profile.samples.begin(), profile.samples.end(), [](std::uint64_t v) { return v != 0; }));
  fmt::print(out, " PC profile of {} addresses [{}, {}): {} buckets of {} bytes, {} samples\n",
             space_name(profile.range.space), hex(profile.range.start), hex(profile.range.end),
             group_digits(profile.samples.size()), profile.bucket_bytes, group_digits(profile.total()));
  if (!chosen_note.empty()) fmt::print(out, " ({}; choose a range with --pc START:END)\n", chosen_note);
  const auto hottest = profile.hottest(top);
  if (hottest.empty()) {
    fmt::print(out, " No {} fell in this range.\n\n", none);
    return;
  }
  fmt::print(out, " Hottest {} of the {} buckets with samples:\n\n", hottest.size(), with_samples);
  const std::uint64_t max = hottest.front().samples;
  for (const auto& b : hottest)
    fmt::print(out, "   {:<37} {:>12} {:>6.1f}%  |{}\n", hex(b.start) + "-" + hex(b.end - 1), group_digits(b.samples),
               percent(b.samples, profile.total()), bar(b.samples, max));
  fmt::print(out, "\n");
}

int cmd_profile(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  (void)hal.require_backend();
  std::vector<std::string> events = split_events(o.events);
  if (events.empty()) events = {"cycles"};
  std::optional<pmc::PcRange> asked;
  if (!o.pc_range.empty()) asked = parse_pc_range(o.pc_range, o.kernel);
  std::optional<pmc::PcRange> range;
  const SimulatedRun run = run_simulated(hal, o, events, [&](pmc::Session& s, const pmc::sim::Workload& w) {
    range = asked ? asked : busiest_code(w, o.kernel);
    pmc::ProfileRequest request;
    request.levels = true;
    request.pc = range;
    try {
      s.profile(request);
    } catch (const pmc::Error& e) {
      if (asked || !range || e.kind() != pmc::errc::invalid_argument) throw;
      throw pmc::Error(e.kind(), fmt::format("the workload's busiest {} code [{:#x}, {:#x}) cannot be profiled: {}; "
                                             "choose a range with --pc START:END",
                                             space_name(range->space), range->start, range->end, e.what()));
    }
  });
  const pmc::LevelHistogram* levels = run.levels.empty() ? nullptr : &run.levels.front();
  const pmc::PcProfile* profile = run.profiles.empty() ? nullptr : &run.profiles.front();

  if (o.json) {
    json out = run_json(hal, run);
    profile_json(out, levels, profile, o.top, asked ? "--pc" : "busiest code of the workload");
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  print_counts(hal, run, "Profile");
  if (levels) print_levels(stdout, *levels, "counter interrupts sampled");
  if (profile) {
    print_pc_profile(stdout, *profile, o.top,
                     asked ? std::string() : fmt::format("the workload's busiest {} code", space_name(profile->range.space)),
                     "interrupt");
  } else {
    fmt::print(" No PC profile: no {} segment of the workload has a `pc` range; give one with --pc START:END{}.\n\n",
               o.kernel ? "kernel" : "user", o.kernel ? "" : " (--kernel for kernel code)");
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// pmc stat -- COMMAND: run the command, count it (and every child it makes) from its exec to its
// exit, report like perf stat on stderr (or -o FILE), exit with its status.

// The command being counted, for the signal handler.
volatile sig_atomic_t g_child = 0;
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Forwards a signal sent to pmc (kill, a supervisor) to the command. A signal from the terminal
// (Ctrl-C, Ctrl-\, hangup: si_code SI_KERNEL) is not forwarded: it went to the whole foreground
// process group, the command included, and sending it again would deliver it twice.
void forward_signal(int sig, siginfo_t* info, void*) {
  if (info && info->si_code == SI_KERNEL) return;
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The events counted when -e is not given: what works on this machine.
std::vector<std::string> default_events(const pmc::Hal& hal) {
  std::vector<std::string> e{"task-clock", "context-switches", "cpu-migrations", "page-faults"};
  if (hal.backend() && hal.access() == "perf") {
    e.push_back("cycles");
    e.push_back("instructions");
  }
  e.push_back("tsc");
  return e;
}

// "1,234.56" for ns shown as msec, "1,234" for counts.
std::string msec(std::uint64_t ns) {
  std::string whole = group_digits(ns / 1000000);
  return fmt::format("{}.{:02}", whole, (ns % 1000000) / 10000);
}

std::string per_second(double rate) {
  if (rate >= 1e9) return fmt::format("{:.3f} G/sec", rate / 1e9);
  if (rate >= 1e6) return fmt::format("{:.3f} M/sec", rate / 1e6);
  if (rate >= 1e3) return fmt::format("{:.3f} K/sec", rate / 1e3);
  return fmt::format("{:.3f} /sec", rate);
}

std::string quote_command(const std::vector<std::string>& cmd) {
  std::string out;
  for (const auto& c : cmd) out += (out.empty() ? "" : " ") + c;
  return out;
}

void report_table(std::FILE* out, const pmc::Hal& hal, const std::vector<std::string>& command,
                  const std::vector<pmc::Reading>& readings, std::uint64_t elapsed_ns, const rusage& ru,
                  const char* title = "Performance counter stats") {
  std::optional<std::uint64_t> task_clock;
  for (const auto& r : readings)
    if (r.canonical.rfind("hal::task-clock", 0) == 0 && r.time_running) task_clock = r.value;
  const std::optional<double> ipc = insn_per_cycle(hal, readings);
  fmt::print(out, "\n {} for '{}':\n\n", title, quote_command(command));
  for (const auto& r : readings) {
    const bool counted = r.time_running > 0 || r.time_enabled == 0;
    std::string value = !counted ? "<not counted>" : r.unit == "ns" ? msec(r.value) : group_digits(r.value);
    std::string unit = r.unit == "ns" ? "msec" : r.unit;
    std::string note;
    if (counted) {
      if (r.unit == "ns" && elapsed_ns)
        note = fmt::format("# {:8.3f} CPUs utilized", static_cast<double>(r.value) / static_cast<double>(elapsed_ns));
      else if (r.unit == "ticks") {
        const pmc::TscFrequency f = pmc::tsc_frequency();
        if (f.hz > 0)
          note = fmt::format("# {:.6f} s at {:.4f} GHz +- {:.2g}% ({})", static_cast<double>(r.value) / f.hz, f.hz / 1e9,
                             100 * f.uncertainty_hz / f.hz, f.method);
      } else if (ipc && generic_of(hal, r) == "instructions")
        note = fmt::format("# {:8.2f} insn per cycle", *ipc);
      else if (r.unit.empty() && task_clock && *task_clock)
        note = fmt::format("# {:>12}", per_second(static_cast<double>(r.value) * 1e9 / static_cast<double>(*task_clock)));
      if (r.time_running < r.time_enabled)
        note += fmt::format("  ({:.2f}%)", 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled));
    }
    std::string event = r.cpu >= 0 ? fmt::format("CPU{} {}", r.cpu, r.event) : r.event;
    fmt::print(out, "{:>18} {:<6} {:<28} {}\n", value, unit, event, note);
  }
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  fmt::print(out, "\n{:>18.9f} seconds time elapsed\n\n", static_cast<double>(elapsed_ns) / 1e9);
  fmt::print(out, "{:>18.9f} seconds user\n", seconds(ru.ru_utime));
  fmt::print(out, "{:>18.9f} seconds sys\n\n", seconds(ru.ru_stime));
}

// Where a command's report goes: stderr, or the file of -o.
struct Report {
  std::FILE* out = stderr;
  explicit Report(const std::string& path) {
    if (path.empty()) return;
    out = std::fopen(path.c_str(), "w");
    if (!out) throw pmc::Error(pmc::errc::io, fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  }
  ~Report() {
    if (out != stderr) std::fclose(out);
  }
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
};

struct CommandRun {
  int exit_status = 0;        // the command's; 128 + N when signal N killed it
  std::uint64_t elapsed_ns = 0;
  rusage ru{};
};

// Runs `command` as pmc stat and pmc profile do: forks; `open(pid)` opens and starts the counters
// on the child (the child waits until it returns, then execs; if it throws, the child exits
// without running the command and the error propagates); forwards SIGINT, SIGTERM, SIGHUP and
// SIGQUIT to it; waits for it, calling `tick` about every 10 ms while it runs when given (pmc
// profile drains the sample buffers); throws `cannot run` when the exec failed.
CommandRun run_command(const std::vector<std::string>& command, const std::function<void(pid_t)>& open,
                       const std::function<void()>& tick = {}) {
  // The child waits on `go` until its counters are open, then execs; `failed` carries the errno
  // of a failed exec (close-on-exec: a successful exec closes it empty).
  int go[2], failed[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(failed, O_CLOEXEC) != 0)
    throw pmc::Error(pmc::errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &previous);  // until the handlers are in place
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw pmc::Error(pmc::errc::io, fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::close(go[1]);
    ::close(failed[0]);
    char c = 0;
    ssize_t n = 0;
    do {
      n = ::read(go[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // pmc gave up before the exec
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    if (::write(failed[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  ::close(go[0]);
  ::close(failed[1]);
  g_child = pid;
  struct sigaction forward {}, saved[std::size(kForwarded)];
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO;  // no SA_RESTART: wait4 returns EINTR, and is retried
  sigemptyset(&forward.sa_mask);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &forward, &saved[i]);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  auto restore = [&] {
    g_child = 0;
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &saved[i], nullptr);
  };
  auto reap = [&](rusage* ru, bool ticking) {
    int status = 0;
    if (ticking) {
      for (;;) {
        const pid_t got = wait4(pid, &status, WNOHANG, ru);
        if (got == pid || (got < 0 && errno != EINTR)) return status;
        tick();
        timespec ten_ms{0, 10'000'000};
        nanosleep(&ten_ms, nullptr);  // a forwarded signal ends it early: fine
      }
    }
    while (wait4(pid, &status, 0, ru) < 0 && errno == EINTR) {
    }
    return status;
  };

  try {
    open(pid);
  } catch (...) {
    ::close(go[1]);  // the child exits 127 without running the command
    ::close(failed[0]);
    rusage ru{};
    reap(&ru, false);
    restore();
    throw;
  }
  const std::uint64_t t0 = monotonic_ns();
  if (::write(go[1], "g", 1) != 1) { /* the child died already: reaped below */ }
  ::close(go[1]);
  int exec_errno = 0;
  ssize_t n = 0;
  do {
    n = ::read(failed[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  ::close(failed[0]);
  CommandRun run;
  const int status = reap(&run.ru, static_cast<bool>(tick) && n != static_cast<ssize_t>(sizeof exec_errno));
  run.elapsed_ns = monotonic_ns() - t0;
  restore();
  if (n == static_cast<ssize_t>(sizeof exec_errno))
    throw pmc::Error(exec_errno == ENOENT ? pmc::errc::not_found : pmc::errc::permission,
                     fmt::format("cannot run '{}': {}", command[0], std::strerror(exec_errno)));
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  return run;
}

// The counters on the child of run_command: its process, inherited by everything it starts,
// switched on by its exec.
pmc::Scope command_scope(pid_t pid) {
  pmc::Scope scope = pmc::Scope::process(pid);
  scope.inherit = true;
  scope.enable_on_exec = true;
  return scope;
}

int cmd_stat_command(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  const bool defaults = o.events.empty();
  const std::vector<std::string> events = defaults ? default_events(hal) : split_events(o.events);
  Report report(o.output);
  std::FILE* out = report.out;
  std::optional<pmc::Session> session;
  const CommandRun run = run_command(o.command, [&](pid_t pid) {
    session.emplace(hal.session(command_scope(pid)));
    for (const auto& e : events) {
      try {
        session->add(e);
      } catch (const pmc::Error& err) {
        if (!defaults) throw;
        // A default that this machine or this user cannot count: user mode only when perf
        // refuses kernel mode (perf_event_paranoid), otherwise left out with a note.
        if (err.kind() == pmc::errc::permission) {
          try {
            session->add(e + ":u");
            continue;
          } catch (const pmc::Error&) {  // the note below says why the plain one failed
          }
        }
        fmt::print(stderr, "pmc: not counting {}: {}\n", e, err.what());
      }
    }
    session->start();
  });
  session->stop();
  const std::vector<pmc::Reading> readings = session->read();
  const int exit_status = run.exit_status;
  const std::uint64_t elapsed = run.elapsed_ns;
  const rusage& ru = run.ru;

  if (o.json) {
    json doc{{"command", o.command},
             {"exit_status", exit_status},
             {"elapsed_ns", elapsed},
             {"counters", counters_json(readings)}};
    fmt::print(out, "{}\n", doc.dump(2));
  } else if (o.separator) {
    const std::string& sep = *o.separator;
    for (const auto& r : readings) {
      const bool counted = r.time_running > 0 || r.time_enabled == 0;
      const double percent = r.time_enabled ? 100.0 * static_cast<double>(r.time_running) / static_cast<double>(r.time_enabled) : 100.0;
      fmt::print(out, "{}{}{}{}{}{}{}{}{:.2f}\n", counted ? std::to_string(r.value) : std::string("<not counted>"), sep,
                 r.unit, sep, r.event, sep, r.time_running, sep, percent);
    }
  } else {
    report_table(out, hal, o.command, readings, elapsed, ru);
  }
  return exit_status;
}

// ---------------------------------------------------------------------------------------------
// pmc profile -- COMMAND: run the command as pmc stat does, sampling it (and every child it makes)
// with Linux perf: the HAL clock events with a period (default cpu-clock every 100 us).

// Without --pc: the 64 KiB-aligned window of 64 KiB with the most samples of the address space,
// the lowest such window on a tie; nullopt when there is no sample.
std::optional<pmc::PcRange> busiest_window(const std::vector<pmc::PcCount>& pcs, pmc::AddressSpace space) {
  constexpr std::uint64_t kWindow = 64 * 1024;
  std::optional<pmc::PcRange> best;
  std::uint64_t best_samples = 0;
  for (std::size_t i = 0; i < pcs.size();) {  // ascending: one window's PCs are adjacent
    const std::uint64_t start = pcs[i].pc & ~(kWindow - 1);
    std::uint64_t n = 0;
    for (; i < pcs.size() && (pcs[i].pc & ~(kWindow - 1)) == start; ++i) n += pcs[i].samples;
    if (n > best_samples) {
      best_samples = n;
      const std::uint64_t end = start + kWindow == 0 ? ~0ull : start + kWindow;  // the top window ends at 2^64 - 1
      best = pmc::PcRange{space, start, end};
    }
  }
  return best;
}

int cmd_profile_command(const Options& o) {
  pmc::Hal hal = pmc::Hal::open(make_config(o));
  const std::vector<std::string> events =
      o.events.empty() ? std::vector<std::string>{"cpu-clock:period=100000"} : split_events(o.events);
  std::optional<pmc::PcRange> asked;
  if (!o.pc_range.empty()) asked = parse_pc_range(o.pc_range, o.kernel);
  const pmc::AddressSpace space = o.kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user;
  Report report(o.output);
  std::FILE* out = report.out;
  std::optional<pmc::Session> session;
  const CommandRun run = run_command(
      o.command,
      [&](pid_t pid) {
        session.emplace(hal.session(command_scope(pid)));
        for (const auto& e : events) {
          try {
            session->add(e);
          } catch (const pmc::Error& err) {
            // The default when perf refuses kernel mode to this user (perf_event_paranoid 2):
            // user mode only, as pmc stat does.
            if (!o.events.empty() || err.kind() != pmc::errc::permission) throw;
            session->add("cpu-clock:u:period=100000");
          }
        }
        pmc::ProfileRequest request;
        request.levels = true;
        request.pc = asked;
        session->profile(request);
        session->start();
      },
      [&] { session->poll(); });
  session->stop();
  const std::vector<pmc::Reading> readings = session->read();
  std::optional<pmc::PcRange> range = asked;
  if (!range) {
    range = busiest_window(session->sampled_pcs(space), space);
    if (range) session->profile({true, range});  // every sampled PC is kept: only the view changes
  }
  const std::vector<pmc::LevelHistogram> levels = session->level_histograms();
  const std::vector<pmc::PcProfile> profiles = session->pc_profiles();
  const std::uint64_t lost = session->lost_samples();
  const pmc::LevelHistogram* histogram = levels.empty() ? nullptr : &levels.front();
  const pmc::PcProfile* profile = profiles.empty() ? nullptr : &profiles.front();
  const std::string chosen = asked ? "--pc" : fmt::format("64 KiB window with the most {} samples", space_name(space));

  if (o.json) {
    json doc{{"command", o.command},
             {"exit_status", run.exit_status},
             {"elapsed_ns", run.elapsed_ns},
             {"counters", counters_json(readings)},
             {"lost_samples", lost}};
    profile_json(doc, histogram, profile, o.top, chosen);
    fmt::print(out, "{}\n", doc.dump(2));
    return run.exit_status;
  }
  report_table(out, hal, o.command, readings, run.elapsed_ns, run.ru, "Profile");
  if (histogram) print_levels(out, *histogram, "samples");
  if (lost)
    fmt::print(out, " {} samples lost: a ring buffer was full; a longer period samples less often\n\n",
               group_digits(lost));
  if (profile)
    print_pc_profile(out, *profile, o.top, asked ? std::string() : "the " + chosen, "sample");
  else
    fmt::print(out, " No PC profile: no {} sample; give a range with --pc START:END{}.\n\n", space_name(space),
               o.kernel ? "" : " (--kernel for kernel code)");
  return run.exit_status;
}

int cmd_profile_dispatch(const Options& o) {
  if (!o.workload.empty() && !o.command.empty()) {
    fmt::print(stderr, "pmc: profile samples either a simulated workload (--workload) or a command, not both (see 'pmc profile --help')\n");
    return 2;
  }
  if (o.workload.empty() && o.command.empty()) {
    fmt::print(stderr, "pmc: profile needs a command (pmc profile [-e EVENTS] -- COMMAND ARGS...) or --workload FILE (see 'pmc profile --help')\n");
    return 2;
  }
  if (!o.workload.empty()) {
    if (!o.output.empty()) {
      fmt::print(stderr, "pmc: -o applies to profiling a command, not --workload (see 'pmc profile --help')\n");
      return 2;
    }
    return cmd_profile(o);
  }
  return cmd_profile_command(o);
}

int cmd_stat(const Options& o) {
  if (!o.workload.empty() && !o.command.empty()) {
    fmt::print(stderr, "pmc: stat counts either a simulated workload (--workload) or a command, not both (see 'pmc stat --help')\n");
    return 2;
  }
  if (o.workload.empty() && o.command.empty()) {
    fmt::print(stderr, "pmc: stat needs a command (pmc stat [-e EVENTS] -- COMMAND ARGS...) or --workload FILE (see 'pmc stat --help')\n");
    return 2;
  }
  if (!o.workload.empty()) {
    if (o.separator || !o.output.empty()) {
      fmt::print(stderr, "pmc: -x and -o apply to counting a command, not --workload (see 'pmc stat --help')\n");
      return 2;
    }
    return cmd_stat_workload(o);
  }
  return cmd_stat_command(o);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pmc: count CPU performance events through pmchal", "pmc"};
  app.require_subcommand(1);
  app.fallthrough();  // --config is accepted after the subcommand too
  Options o;
  std::string config;
  app.add_option("--config", config, "config file (otherwise $PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml or ~/.config/pmc/config.toml, /etc/pmc/config.toml)");

  auto add_cpu = [&](CLI::App* sub) {
    sub->add_option("--cpuid-dump", o.cpuid_dump,
                    "probe a CPUID dump file (cpuid -r or AIDA64 format, or a bundled name such as pentium-iii)");
    sub->add_option("--backend", o.backend, "use this backend instead of probing");
    sub->add_option("--access", o.access,
                    "how PMU events are counted: sim (the simulated PMU), perf (Linux perf_event_open), msr "
                    "(/dev/cpu/N/msr) or auto; overrides the config key access")
        ->type_name("METHOD")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
              if (text == "auto" || text == "sim" || text == "perf" || text == "msr") return {};
              return fmt::format("unknown access method '{}' (expected auto, sim, perf or msr)", text);
            },
            "auto|sim|perf|msr"));
    sub->add_flag("--json", o.json, "machine-readable output");
  };
  CLI::App* probe = app.add_subcommand("probe", "the CPU, the chosen backend and why");
  add_cpu(probe);
  CLI::App* list = app.add_subcommand(
      "list", "the events of the chosen backend and the HAL events (tsc, software events) (pmc list [WORD...])");
  add_cpu(list);
  list->add_option("WORD", o.filters,
                   "show only the events whose name or one of whose aliases contains WORD, ignoring case; "
                   "with several words, an event that matches any one of them is shown")
      ->type_name("");
  CLI::App* encode = app.add_subcommand("encode", "the register value each event would be programmed with");
  add_cpu(encode);
  encode->add_option("events", o.events, "event strings (EVENT[:UMASK...][:u][:k][:e=1][:i=1][:c=N])")->required();
  CLI::App* stat = app.add_subcommand(
      "stat", "count events of a command (pmc stat [-e EVENTS] -- COMMAND ARGS...) or of a simulated workload");
  add_cpu(stat);
  stat->add_option("--workload", o.workload, "workload TOML file, or a bundled name such as p6-demo (instead of a command)");
  stat->add_option("-e,--events", o.events,
                   "events to count, comma-separated (default: a command: task-clock, context-switches, "
                   "cpu-migrations, page-faults, tsc, and cycles, instructions where a PMU is counted through perf; "
                   "a workload: cycles,instructions)");
  stat->add_option("-x,--field-separator", o.separator, "a command: CSV lines value SEP unit SEP event SEP time_running SEP percent");
  stat->add_option("-o,--output", o.output, "a command: write the counts to this file instead of stderr");
  stat->add_option("command", o.command, "the command to count and its arguments (after --)");
  stat->positionals_at_end();
  CLI::App* profile = app.add_subcommand(
      "profile", "where a command (pmc profile [-e EVENTS] -- COMMAND ARGS...) or a simulated workload spends its "
                 "samples: by execution level and by PC");
  add_cpu(profile);
  profile->add_option("--workload", o.workload,
                      "workload TOML file, or a bundled name such as alpha-profile (instead of a command)");
  profile->add_option("-e,--events", o.events,
                      "events that sample, comma-separated (default: a command: cpu-clock:period=100000, a sample "
                      "every 100 us of CPU time; a workload: cycles, whose counter interrupt interval sets the rate, "
                      "PF_CYCLES:period=4096)");
  profile->add_option("-o,--output", o.output, "a command: write the report to this file instead of stderr");
  profile
      ->add_option("--pc", o.pc_range,
                   "profile the PCs in START:END (END exclusive; hex or decimal), default: the workload's busiest "
                   "code, or for a command the 64 KiB window with the most samples")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              (void)parse_pc_range(text, false);
            } catch (const pmc::Error& e) {
              return e.what();
            }
            return {};
          },
          "START:END"));
  profile->add_flag("--kernel", o.kernel, "profile kernel-mode PCs instead of user-mode ones");
  profile->add_option("--top", o.top, "how many of the hottest PC buckets to list (default 10)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  profile->add_option("command", o.command, "the command to profile and its arguments (after --)");
  profile->positionals_at_end();

  // CLI11 reports a misspelt subcommand as "a subcommand is required"; name it instead.
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--config") {
      ++i;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg.rfind("--config=", 0) == 0) continue;
    if (!arg.empty() && arg[0] == '-') {
      fmt::print(stderr, "pmc: unknown option '{}' before the subcommand (see 'pmc --help')\n", arg);
      return 2;
    }
    if (arg != "probe" && arg != "list" && arg != "encode" && arg != "stat" && arg != "profile") {
      fmt::print(stderr, "pmc: unknown subcommand '{}' (expected probe, list, encode, stat or profile; see 'pmc --help')\n", arg);
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    fmt::print(stderr, "pmc: {} (see 'pmc --help')\n", what);
    return 2;
  }
  if (!config.empty()) o.config = config;
  try {
    if (probe->parsed()) return cmd_probe(o);
    if (list->parsed()) return cmd_list(o);
    if (encode->parsed()) return cmd_encode(o);
    if (stat->parsed()) return cmd_stat(o);
    if (profile->parsed()) return cmd_profile_dispatch(o);
  } catch (const pmc::Error& e) {
    fmt::print(stderr, "pmc: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "pmc: {}\n", e.what());
    return 1;
  }
  return 2;
}
