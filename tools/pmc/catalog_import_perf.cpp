// pmc catalog import --layout perf: Linux perf's AMD lists (mapfile.csv, amdzenN/*.json) complete
// the hand-written AMD catalogs. For each Zen generation the amd backend has a CPU tag and a
// bundled CPUID dump for, every core event of perf's list is tried on the library (a Hal on that
// dump): perf's name, spelled as the hand-written catalogs would resolve it, must encode to perf's
// bits. The events that do not are written to perf-zenN.toml under perf's names; the hand-written
// catalogs keep theirs. The generated files themselves are left out of the test, so a rerun gives
// the same output.
#include "catalog_import.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/paths.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>

namespace pmc_cli::catalog_import {

namespace {

struct PerfEvent {
  std::string name;
  std::uint64_t code = 0;
  std::optional<std::uint64_t> umask;
  bool deprecated = false;
  std::string topic;   // perf's file name: "load-store"
  std::string file;    // "amdzen5/load-store.json"
  std::string vendor_desc;
};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The events of one perf folder: core events only. The uncore files, perf's uncore entries in
// the core files (a "Unit": the L3 events of Zen 1-4's cache.json) and metrics are left out.
std::vector<PerfEvent> perf_events(const fs::path& dir, std::vector<std::string>& notes) {
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().extension() == ".json") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  std::vector<PerfEvent> out;
  for (const auto& file : files) {
    const std::string topic = file.stem().string();
    if (topic == "data-fabric" || topic == "l3-cache" || topic == "memory-controller") continue;
    const nlohmann::json doc = read_json(file);
    if (!doc.is_array()) throw pmc::Error(pmc::errc::parse, fmt::format("{}: not a JSON array", file.string()));
    const std::string rel = fmt::format("{}/{}", dir.filename().string(), file.filename().string());
    for (const auto& e : doc) {
      if (!e.is_object() || !e.contains("EventName") || !e.contains("EventCode") || e.contains("MetricName") ||
          e.contains("Unit"))
        continue;
      PerfEvent p;
      p.name = member(e, "EventName");
      const std::string where = fmt::format("{} event '{}'", file.string(), p.name);
      p.code = parse_number(member(e, "EventCode"), where);
      if (!member(e, "UMask").empty()) p.umask = parse_number(member(e, "UMask"), where);
      p.deprecated = !member(e, "Deprecated").empty() && parse_number(member(e, "Deprecated"), where) != 0;
      p.topic = topic;
      p.file = rel;
      p.vendor_desc = member(e, "BriefDescription");
      if (std::any_of(out.begin(), out.end(), [&](const PerfEvent& q) { return iequal(q.name, p.name); })) {
        notes.push_back(fmt::format("{} {} is listed twice: the first entry is kept", rel, p.name));
        continue;
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

bool generated(const pmc::EventDef& d) {
  return fs::path(d.source.file).filename().string().rfind("perf-", 0) == 0;
}

// How the hand-written catalogs resolve perf's name, as an event string: the event of that name,
// else of that alias, else (a dotted name) the event before the last dot with the unit mask after
// it, as the library's name lookup does (*split says so). Empty when none.
std::string spelling(const pmc::EventCatalog& cat, const std::string& tag, const std::string& name, bool* split) {
  *split = false;
  const auto defs = cat.for_cpu(tag);
  for (const pmc::EventDef* d : defs)
    if (!generated(*d) && iequal(d->name, name)) return d->name;
  for (const pmc::EventDef* d : defs)
    if (!generated(*d))
      for (const auto& a : d->aliases)
        if (iequal(a, name)) return d->name;
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {};
  const std::string_view event = std::string_view(name).substr(0, dot), mask = std::string_view(name).substr(dot + 1);
  for (const pmc::EventDef* d : defs) {
    if (generated(*d) || !d->unit_masks) continue;
    bool named = iequal(d->name, event);
    for (const auto& a : d->aliases) named = named || iequal(a, event);
    if (!named) continue;
    for (const auto& m : d->unit_masks->masks)
      if (iequal(m.name, mask)) {
        *split = true;
        return d->name + ":" + m.name;
      }
  }
  return {};
}

struct Bits {
  std::uint64_t value = 0;
  std::uint64_t mask = 0;  // the fields perf's event sets: event, umask, edge, inv, cmask
};

Bits perf_bits(const pmc::RegisterFormat& format, const PerfEvent& e) {
  Bits b;
  for (const char* f : {"event", "umask", "edge", "inv", "cmask"})
    if (auto field = format.field(f)) b.mask |= field->mask();
  b.value = format.field("event")->place(e.code);
  if (e.umask) b.value |= format.field("umask")->place(*e.umask);
  return b;
}

bool encodes_to(const pmc::Hal& hal, const std::string& text, const Bits& bits, bool hand_written) {
  if (text.empty()) return false;
  try {
    const pmc::Encoding enc = hal.encode(text);
    if (hand_written && (!enc.def || generated(*enc.def))) return false;
    return (enc.config & bits.mask) == bits.value;
  } catch (const pmc::Error&) {
    return false;
  }
}

std::string code_hex(std::uint64_t code) { return code > 0xFF ? fmt::format("0x{:03X}", code) : toml_hex(code); }

std::string perf_toml(const std::string& folder, const std::string& tag, const std::vector<const PerfEvent*>& events,
                      std::size_t listed, const std::vector<std::string>& modifiers, const ImportOptions& o) {
  std::string out = comment(fmt::format(
      "Generated by `pmc catalog import --layout perf` from Linux perf's {} list; do not edit: rerun "
      "scripts/regen-catalogs.sh. AMD {}: the core events of that list that the other AMD catalogs do not give "
      "under perf's name with perf's bits ({} of {}). Facts only: names, codes, unit masks. {} "
      "(docs/hardware/intel-catalogs.md, section \"AMD\").",
      folder, tag, events.size(), listed,
      o.vendor_descriptions ? "The descriptions are perf's (GPL-2.0 text)." : "The descriptions are generated from the facts."));
  out += "\nbackend = \"amd\"\n";
  // The modifiers of the hand-written events of this CPU (a file's list holds for the files after
  // it until one sets its own: the file before this one in name order may be another family's).
  if (!modifiers.empty()) out += fmt::format("modifiers = {}\n", toml_list(modifiers));
  // perf lists some encodings under two names (ls_l1_d_tlb_miss.all and l1_dtlb_misses): one
  // event, the other names its aliases (the first live name is the event).
  const auto key = [](const PerfEvent* e) { return std::pair(e->code, e->umask.value_or(0)); };
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<const PerfEvent*>> same;
  for (const PerfEvent* e : events) same[key(e)].push_back(e);
  for (const PerfEvent* e : events) {
    const auto& group = same[key(e)];
    const auto live = std::find_if(group.begin(), group.end(), [](const PerfEvent* g) { return !g->deprecated; });
    if (e != (live == group.end() ? group.front() : *live)) continue;
    std::string aliases, also;
    for (const PerfEvent* g : group)
      if (g != e) {
        aliases += (aliases.empty() ? "" : ", ") + toml_string(g->name);
        also += fmt::format("{}{}", also.empty() ? "; also " : ", ", g->name);
      }
    const std::uint64_t umask = e->umask.value_or(0);
    std::string desc = o.vendor_descriptions ? e->vendor_desc : std::string();
    if (desc.empty()) desc = fmt::format("{}: event {}, unit mask 0x{:02X}.", name_words(e->name), code_hex(e->code), umask);
    out += fmt::format("\n[[event]]\nname = {}\n", toml_string(e->name));
    if (!aliases.empty()) out += fmt::format("aliases = [{}]\n", aliases);
    // perf's encoding has unit mask 0 where it names none: written, so the event is not taken
    // for one without a unit mask of its own.
    out += fmt::format("code = {}\numask = {}\ncpus = [{}]\n", code_hex(e->code), toml_hex(umask), toml_string(tag));
    if (e->deprecated) out += "deprecated = true\n";
    out += fmt::format("topic = {}\ndesc = {}\nreference = {}\n", toml_string(e->topic), toml_string(desc),
                       toml_string(fmt::format("Linux perf {} {}{}", e->file, e->name, also)));
  }
  return out;
}

// The bundled dump of a tag: data/cpuid/amd-<tag>.txt or amd-<tag>-*.txt, the first by name.
std::optional<fs::path> dump_for(const std::string& tag) {
  const fs::path dir = pmc::default_paths().data / "cpuid";
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string n = f.path().filename().string();
    if (n == "amd-" + tag + ".txt" || (n.rfind("amd-" + tag + "-", 0) == 0 && f.path().extension() == ".txt"))
      found.push_back(f.path());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) return std::nullopt;
  return found.front();
}

}  // namespace

int import_perf(const ImportOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const auto rows = read_mapfile(o.from);
  std::vector<std::string> folders;
  for (const auto& r : rows) {
    std::error_code ec;
    if (r.pattern.rfind("AuthenticAMD-", 0) == 0 && fs::is_directory(o.from / r.file, ec) &&
        std::find(folders.begin(), folders.end(), r.file) == folders.end())
      folders.push_back(r.file);
  }
  if (folders.empty())
    throw pmc::Error(pmc::errc::not_found, fmt::format("{}: no AuthenticAMD row names a folder of {}",
                                                       (o.from / "mapfile.csv").string(), o.from.string()));
  pmc::EventCatalog base;
  base.load(pmc::default_paths().events / "amd.toml", "amd");

  print("{:<8} {:>6} {:>14} {:>10} {:>12}\n", "list", "events", "by catalogs", "supplied", "not encoded");
  std::size_t all = 0, supplied = 0;
  std::vector<std::string> all_notes;
  std::vector<MetricFile> metric_files;
  for (const auto& folder : folders) {
    const std::string tag = folder.rfind("amd", 0) == 0 ? folder.substr(3) : folder;
    const auto& tags = base.cpu_tags();
    if (std::none_of(tags.begin(), tags.end(), [&](const pmc::CpuTag& t) { return t.name == tag; })) {
      print("{:<8} skipped: the amd backend declares no CPU tag {} (backends/amd/amd.toml [cpus])\n", folder, tag);
      continue;
    }
    if (!o.metrics_out.empty()) metric_files.push_back(import_perf_metrics(o.from / folder, tag, o));
    const auto dump = dump_for(tag);
    if (!dump) {
      print("{:<8} skipped: no bundled CPUID dump amd-{}*.txt to open the amd backend on\n", folder, tag);
      continue;
    }
    std::vector<std::string> notes;
    const auto events = perf_events(o.from / folder, notes);
    for (const auto& n : notes) error_line(n);

    pmc::Config cfg;  // not the user's config: their events_path must not change the output
    cfg.backend = "amd";
    cfg.cpu = dump->string();
    const pmc::Hal hal = pmc::Hal::open(cfg);
    const auto& cands = hal.candidates();
    const auto amd = std::find_if(cands.begin(), cands.end(), [](const pmc::Candidate& c) { return c.backend == "amd"; });
    if (amd == cands.end() || amd->match.cpu_tag != tag)
      throw pmc::Error(pmc::errc::not_supported, fmt::format("{}: the amd backend does not tag this CPU {}",
                                                             dump->string(), tag));
    // A plain perf name written here hides a hand-written alias of that spelling (names are found
    // before aliases), and with it the dotted names the alias and a unit mask resolved: those are
    // written too.
    std::vector<bool> supply(events.size()), split(events.size());
    std::vector<std::string> plain;
    for (std::size_t i = 0; i < events.size(); ++i) {
      bool via_mask = false;
      const std::string text = spelling(hal.events(), tag, events[i].name, &via_mask);
      split[i] = via_mask;
      supply[i] = !encodes_to(hal, text, perf_bits(hal.events().format(), events[i]), true);
      if (supply[i] && events[i].name.find('.') == std::string::npos) plain.push_back(events[i].name);
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
      const std::string& n = events[i].name;
      const std::size_t dot = n.rfind('.');
      if (split[i] && !supply[i] && std::any_of(plain.begin(), plain.end(), [&](const std::string& p) {
            return iequal(p, std::string_view(n).substr(0, dot));
          }))
        supply[i] = true;
    }
    std::vector<const PerfEvent*> missing;
    for (std::size_t i = 0; i < events.size(); ++i)
      if (supply[i]) missing.push_back(&events[i]);
    // Written events that are a hand-written event under another name: an alias there would do.
    std::vector<std::string> synonyms;
    for (const PerfEvent* e : missing)
      for (const pmc::EventDef* d : hal.events().for_cpu(tag))
        if (!generated(*d) && d->code == e->code && !d->unit_masks &&
            encodes_to(hal, d->name, perf_bits(hal.events().format(), *e), true)) {
          synonyms.push_back(fmt::format("{} ({})", e->name, d->name));
          break;
        }
    const fs::path file = o.out / fmt::format("perf-{}.toml", tag);
    std::vector<std::string> modifiers;
    for (const pmc::EventDef* d : hal.events().for_cpu(tag))
      if (!generated(*d) && std::find(d->cpus.begin(), d->cpus.end(), tag) != d->cpus.end()) {
        modifiers = d->modifiers;
        break;
      }
    std::string text = perf_toml(folder, tag, missing, events.size(), modifiers, o);
    if (!synonyms.empty()) {
      std::string list;
      for (const auto& n : synonyms) list += (list.empty() ? "" : ", ") + n;
      const std::string note = fmt::format(
          "Note: events written here that encode exactly as a hand-written event under another name (an alias "
          "there would do): {}.", list);
      text.insert(text.find("\nbackend = "), comment(note));
      notes.push_back(fmt::format("{}: {}", folder, note));
    }
    write_text(file, text);

    // The result as the library sees it with the new file: every perf name to perf's bits.
    cfg.events_path = {file};
    const pmc::Hal check = pmc::Hal::open(cfg);
    std::size_t bad = 0;
    for (const auto& e : events)
      if (!encodes_to(check, e.name, perf_bits(check.events().format(), e), false)) {
        ++bad;
        error_line(fmt::format("{} {}: does not encode to perf's bits with {}", folder, e.name, file.string()));
      }
    print("{:<8} {:>6} {:>14} {:>10} {:>12}\n", folder, events.size(), events.size() - missing.size(), missing.size(),
          bad);
    for (const auto& n : notes) all_notes.push_back(n);
    all += events.size();
    supplied += missing.size();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print("{} perf core events, {} supplied by the generated files, in {:.2f} s\n", all, supplied, secs);
  for (const auto& n : all_notes) print("{}\n", n);
  print_metric_files(metric_files);
  return 0;
}

}  // namespace pmc_cli::catalog_import
