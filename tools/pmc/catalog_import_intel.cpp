// pmc catalog import --layout intel: Intel's perfmon tree (mapfile.csv, */events/*_core.json) to
// cpu/<tag>.toml per events file, cpu/index.toml and, on request, a synthesized CPUID dump per
// catalog. What each JSON key becomes is listed in docs/hardware/intel-catalogs.md.
#include "catalog_import.hpp"

#include <pmc/error.hpp>
#include <pmc/input_file.hpp>
#include <pmc/paths.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace pmc_cli::catalog_import {

namespace {

[[noreturn]] void fail(const std::string& message) { throw pmc::Error(pmc::errc::parse, message); }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Intel spells some deprecated offcore events the way perf's old parser read them
// ("OFFCORE_RESPONSE:request=ALL_READS:response=L3_HIT.ANY_SNOOP"); catalog names hold letters,
// digits, '_' and '.', so ":WORD=" becomes '.' (OFFCORE_RESPONSE.ALL_READS.L3_HIT.ANY_SNOOP) and
// anything else '_'.
std::string catalog_name(std::string_view intel) {
  std::string out;
  for (std::size_t i = 0; i < intel.size(); ++i) {
    const char c = intel[i];
    if (c == ':') {
      const std::size_t eq = intel.find('=', i);
      const std::size_t next = intel.find(':', i + 1);
      if (eq != std::string_view::npos && (next == std::string_view::npos || eq < next)) i = eq;
      out += '.';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

// The extra register an MSR list names: the three the base catalog declares, else one this file
// declares under a name derived from its first MSR.
struct ExtraReg {
  std::string name;
  std::vector<std::uint64_t> msrs;  // the whole set, in order
  bool declared_here = false;
};

ExtraReg extra_for(const std::vector<std::uint64_t>& msrs) {
  const auto in = [&](std::initializer_list<std::uint64_t> set) {
    return std::all_of(msrs.begin(), msrs.end(),
                       [&](std::uint64_t m) { return std::find(set.begin(), set.end(), m) != set.end(); });
  };
  if (in({0x1A6, 0x1A7})) return {"offcore_rsp", {0x1A6, 0x1A7}, false};
  if (in({0x3F6})) return {"ldlat", {0x3F6}, false};
  if (in({0x3F7})) return {"frontend", {0x3F7}, false};
  return {fmt::format("msr_{:x}", msrs.front()), msrs, true};
}

std::string hex_list(const std::vector<std::uint64_t>& v, int digits) {
  std::string out = "[";
  for (std::uint64_t x : v) out += (out.size() > 1 ? ", " : "") + toml_hex(x, digits);
  return out + "]";
}

bool flag(const nlohmann::json& e, const char* key, const std::string& where) {
  const std::string v = member(e, key);
  return !v.empty() && parse_number(v, where) != 0;
}

}  // namespace

IntelTables read_tables(const fs::path& dir) {
  IntelTables t;
  for (const char* name : {"intel-platforms.toml", "intel-topics.toml"}) {
    const fs::path file = dir / name;
    toml::table doc;
    try {
      doc = toml::parse(pmc::read_input_file(file, pmc::InputKind::vendor_data), file.string());
    } catch (const toml::parse_error& e) {
      fail(fmt::format("{}:{}:{}: {}", file.string(), e.source().begin.line, e.source().begin.column, e.description()));
    }
    if (const auto* platforms = doc["platform"].as_table())
      for (const auto& [folder, v] : *platforms) {
        IntelTables::Platform p;
        p.name = v.at_path("name").value_or(std::string(folder.str()));
        p.version = v.at_path("version").value_or(5u);
        t.platforms.emplace(std::string(folder.str()), p);
      }
    if (const auto* cores = doc["core"].as_table())
      for (const auto& [word, v] : *cores)
        t.cores.emplace(std::string(word.str()),
                        IntelTables::Core{v.at_path("suffix").value_or(std::string(word.str())),
                                          v.at_path("name").value_or(std::string(word.str()))});
    if (const auto* topics = doc["topics"].as_table())
      for (const auto& [topic, list] : *topics)
        if (const auto* arr = list.as_array())
          for (const auto& prefix : *arr)
            t.topics.emplace_back(upper(prefix.value_or(std::string())), std::string(topic.str()));
    if (auto d = doc["default"].value<std::string>()) t.default_topic = *d;
  }
  std::stable_sort(t.topics.begin(), t.topics.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return t;
}

std::string convert_intel(const fs::path& json_file, const IntelTables& tables, const ImportOptions& o,
                          IntelCatalog& cat) {
  const nlohmann::json doc = read_json(json_file);
  const std::string base = json_file.filename().string();
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    const auto it = doc.find("Events");
    events = it == doc.end() ? nullptr : &*it;
  }
  if (!events || !events->is_array()) fail(fmt::format("{}: no \"Events\" array", json_file.string()));
  cat.json_file = base;
  cat.vendor_events = events->size();

  // Some lists number the fixed counters from 1 (Nehalem, Westmere, Bonnell, Silvermont):
  // INST_RETIRED.ANY is IA32_FIXED_CTR0 on every part, so its number is the offset.
  unsigned offset = 0;
  for (const auto& e : *events) {
    const std::string counter = member(e, "Counter");
    if (member(e, "EventName") == "INST_RETIRED.ANY" && counter.rfind("Fixed counter ", 0) == 0)
      offset = static_cast<unsigned>(parse_number(counter.substr(14), base));
  }
  if (offset != 0)
    cat.notes.push_back(fmt::format("Intel's list numbers the fixed counters from {}: renumbered from 0", offset));

  struct Record {
    std::string name, intel_name, sel, rest;
    bool deprecated = false;
  };
  std::vector<Record> records;
  std::set<std::string> seen;
  std::map<std::string, ExtraReg> declared;
  std::size_t renamed = 0, one_msr = 0;
  std::string body;
  for (const auto& e : *events) {
    const std::string intel_name = member(e, "EventName");
    const std::string where = fmt::format("{} event '{}'", json_file.string(), intel_name);
    if (intel_name.empty()) fail(fmt::format("{}: an event without EventName", json_file.string()));
    const std::string name = catalog_name(intel_name);
    if (name != intel_name) ++renamed;
    if (!seen.insert(upper(name)).second) {
      cat.notes.push_back(fmt::format("{} is listed twice: the first entry is kept", intel_name));
      continue;
    }
    const auto codes = parse_numbers(member(e, "EventCode"), where, false);
    auto umasks = parse_numbers(member(e, "UMask"), where, false);
    if (codes.empty()) fail(fmt::format("{}: no EventCode", where));
    if (umasks.empty()) umasks.push_back(0);

    // Extra register. A list of unit masks pairs with the MSRs in order (Atom offcore events:
    // 0x01 with 0x1A6, 0x02 with 0x1A7): one unit mask is written, so the event keeps its MSR.
    const auto msrs = parse_numbers(member(e, "MSRIndex"), where, true);
    ExtraReg extra;
    std::vector<std::uint64_t> restrict_to;
    std::size_t umask_index = 0;
    if (!msrs.empty()) {
      extra = extra_for(msrs);
      if (extra.declared_here) {
        auto [it, fresh] = declared.emplace(extra.name, extra);
        if (!fresh && it->second.msrs != extra.msrs)
          fail(fmt::format("{}: MSRs {} and {} would share the derived name {}", where, hex_list(it->second.msrs, 1),
                           hex_list(extra.msrs, 1), extra.name));
      }
      if (umasks.size() > 1 && codes.size() == 1) {
        umask_index = static_cast<std::size_t>(
            std::find(extra.msrs.begin(), extra.msrs.end(), msrs.front()) - extra.msrs.begin());
        restrict_to = {msrs.front()};
        ++one_msr;
      } else if (msrs.size() < extra.msrs.size()) {
        restrict_to = msrs;
      }
    }
    const std::uint64_t umask = umasks[umask_index < umasks.size() ? umask_index : 0];

    // Counters: general ones by number, "Fixed counter N" (renumbered); Intel's fixed-counter
    // pseudo events (code 0) carry N + 1 as their unit mask, which settles a misnumbered entry.
    std::vector<unsigned> counters;
    std::optional<unsigned> fixed;
    std::string list = member(e, "Counter");
    std::size_t pos = 0;
    while (pos <= list.size()) {
      std::size_t comma = list.find(',', pos);
      std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (item.rfind("Fixed counter ", 0) == 0) {
        const auto n = static_cast<unsigned>(parse_number(item.substr(14), where));
        if (n < offset) fail(fmt::format("{}: fixed counter {} below the list's first ({})", where, n, offset));
        fixed = n - offset;
      } else if (!item.empty()) {
        counters.push_back(static_cast<unsigned>(parse_number(item, where)));
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    if (fixed && codes.front() == 0 && umask != 0 && umask - 1 != *fixed) {
      cat.notes.push_back(fmt::format("{}: Intel lists fixed counter {}, its unit mask 0x{:02X} says {}: {} used",
                                      intel_name, *fixed + offset, umask, umask - 1, umask - 1));
      fixed = static_cast<unsigned>(umask - 1);
    }
    for (unsigned c : counters) cat.max_general = std::max(cat.max_general, c + 1);
    if (fixed) cat.fixed.insert(*fixed);

    const std::uint64_t cmask = member(e, "CounterMask").empty() ? 0 : parse_number(member(e, "CounterMask"), where);
    const bool inv = flag(e, "Invert", where), edge = flag(e, "EdgeDetect", where);
    const bool any = flag(e, "AnyThread", where), equal = flag(e, "Equal", where);
    const std::uint64_t umask2 = member(e, "UMaskExt").empty() ? 0 : parse_number(member(e, "UMaskExt"), where);
    const std::string pebs = member(e, "PEBS").empty() ? member(e, "Precise") : member(e, "PEBS");
    const std::uint64_t precise = pebs.empty() ? 0 : std::min<std::uint64_t>(parse_number(pebs, where), 3);
    const std::uint64_t period =
        member(e, "SampleAfterValue").empty() ? 0 : parse_number(member(e, "SampleAfterValue"), where);
    const bool deprecated = flag(e, "Deprecated", where);
    std::string errata = member(e, "Errata");
    if (errata == "null" || errata == "NA" || errata == "0") errata.clear();
    const std::uint64_t extra_value = msrs.empty() ? 0 : parse_number(member(e, "MSRValue"), where);

    std::string topic = tables.default_topic;
    const std::string uname = upper(name);
    for (const auto& [prefix, t] : tables.topics)
      if (uname.rfind(prefix, 0) == 0) {
        topic = t;
        break;
      }

    // The description: the facts in words, or (on request) Intel's own sentence.
    std::string desc;
    if (o.vendor_descriptions) desc = member(e, "BriefDescription");
    if (desc.empty()) {
      std::vector<std::string> facts;
      if (fixed && counters.empty()) {
        facts.push_back(fmt::format("fixed counter {} only", *fixed));
      } else {
        facts.push_back(codes.size() > 1 ? fmt::format("event 0x{:02X} (0x{:02X} on its second MSR)", codes[0], codes[1])
                                         : fmt::format("event 0x{:02X}", codes[0]));
        facts.push_back(fmt::format("unit mask 0x{:02X}", umask));
      }
      if (umask2) facts.push_back(fmt::format("unit mask extension 0x{:02X}", umask2));
      if (cmask) facts.push_back(fmt::format("cmask {}", cmask));
      if (inv) facts.push_back("inverted");
      if (edge) facts.push_back("edge");
      if (any) facts.push_back("any thread");
      if (equal) facts.push_back("equal");
      if (!msrs.empty()) facts.push_back(fmt::format("{} 0x{:X}", extra.name, extra_value));
      if (fixed && !counters.empty()) facts.push_back(fmt::format("also fixed counter {}", *fixed));
      std::string joined;
      for (const auto& f : facts) joined += (joined.empty() ? "" : ", ") + f;
      desc = fmt::format("{}: {}.", name_words(name), joined);
    }

    // What selects the event (validate() compares these) and the rest: two entries that select
    // the same are one event under two names (section 3.2 of the fact sheet).
    std::string sel = fmt::format("code = {}\n", toml_hex(codes[0]));
    if (codes.size() > 1) sel += fmt::format("code2 = {}\n", toml_hex(codes[1]));
    sel += fmt::format("umask = {}\n", toml_hex(umask));
    if (umask2) sel += fmt::format("umask2 = {}\n", toml_hex(umask2));
    std::string defaults;
    auto def = [&](const char* key, std::uint64_t v) {
      if (v) defaults += fmt::format("{}{} = {}", defaults.empty() ? "" : ", ", key, v);
    };
    def("c", cmask);
    def("i", inv);
    def("e", edge);
    def("t", any);
    if (!defaults.empty()) sel += fmt::format("defaults = {{ {} }}\n", defaults);
    if (equal) sel += "set = { eq = 1 }\n";
    std::string cl = "[";
    for (unsigned c : counters) cl += (cl.size() > 1 ? ", " : "") + std::to_string(c);
    sel += fmt::format("counters = {}]\n", cl);
    if (fixed) sel += fmt::format("fixed = {}\n", *fixed);
    // TOML integers are signed 64-bit: a value with bit 63 set (Tremont's "outstanding" offcore
    // requests) is written as a hex string.
    if (!msrs.empty())
      sel += fmt::format("extra = {{ {} = {} }}\n", extra.name,
                         extra_value > 0x7FFFFFFFFFFFFFFFull ? toml_string(toml_hex(extra_value, 1)) : toml_hex(extra_value, 1));
    if (!restrict_to.empty()) sel += fmt::format("extra_msrs = {}\n", hex_list(restrict_to, 1));
    std::string rest;
    if (flag(e, "TakenAlone", where)) rest += "exclusive = true\n";
    if (precise) rest += fmt::format("precise = {}\n", precise);
    if (period) rest += fmt::format("period = {}\n", period);
    if (deprecated) rest += "deprecated = true\n";
    if (!errata.empty()) rest += fmt::format("errata = {}\n", toml_string(errata));
    rest += fmt::format("topic = {}\ndesc = {}\n", toml_string(topic), toml_string(desc));
    records.push_back({name, intel_name, std::move(sel), std::move(rest), deprecated});
  }

  // One [[event]] per selection, at the place of its first live entry (else its first); the
  // other names become its aliases: Intel's deprecated names for a live event, and synonyms.
  std::map<std::string, std::vector<std::size_t>> by_sel;
  for (std::size_t i = 0; i < records.size(); ++i) by_sel[records[i].sel].push_back(i);
  std::vector<std::size_t> main_of(records.size());
  for (const auto& [sel, members] : by_sel) {
    std::size_t main = members.front();
    for (std::size_t m : members)
      if (!records[m].deprecated) {
        main = m;
        break;
      }
    for (std::size_t m : members) main_of[m] = main;
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (main_of[i] != i) {
      ++cat.aliases;
      if (r.deprecated) ++cat.deprecated;
      continue;
    }
    std::string aliases, also;
    for (std::size_t m : by_sel[r.sel])
      if (m != i) {
        aliases += (aliases.empty() ? "" : ", ") + toml_string(records[m].name);
        also += fmt::format("{}{}{}", also.empty() ? "; also " : ", ", records[m].intel_name,
                            records[m].deprecated ? " (deprecated)" : "");
      }
    body += fmt::format("\n[[event]]\nname = {}\n", toml_string(r.name));
    if (!aliases.empty()) body += fmt::format("aliases = [{}]\n", aliases);
    body += r.sel + r.rest;
    body += fmt::format("reference = {}\n", toml_string(fmt::format("Intel perfmon {} {}{}", base, r.intel_name, also)));
    ++cat.written;
    if (r.deprecated) ++cat.deprecated;
  }
  if (renamed)
    cat.notes.push_back(fmt::format("names with ':' and '=' (perf's old offcore spelling) written with '.': {}", renamed));
  if (one_msr)
    cat.notes.push_back(fmt::format("events that list one unit mask per extra MSR, written with the first pair "
                                    "(extra_msrs names its MSR): {}", one_msr));

  const auto header = doc.is_object() && doc.contains("Header") ? doc["Header"] : nlohmann::json::object();
  std::string out = comment(fmt::format(
      "Generated by `pmc catalog import --layout intel` from Intel's perfmon {} (version {}, published {}); do not "
      "edit: rerun scripts/regen-catalogs.sh. Intel {}: the core PMU's events (cpu/{}.toml; cpu/index.toml says "
      "which CPUs load it). Facts only: names, codes, unit masks, counters, flags, MSR values. {} "
      "(docs/hardware/intel-catalogs.md). Intel's list has {} events: {} written, {} more as aliases of an "
      "event that selects the same; {} of those names deprecated.",
      base, member(header, "Version"), member(header, "DatePublished"), cat.name, cat.tag,
      o.vendor_descriptions ? "The descriptions are Intel's, under Intel's licence (its LICENSE file)"
                            : "The descriptions are generated from the facts",
      cat.vendor_events, cat.written, cat.aliases, cat.deprecated));
  for (const auto& n : cat.notes) out += comment(fmt::format("Note: {}.", n));
  out += "\nbackend = \"archperf\"\n";
  out += fmt::format("description = {}\n", toml_string(fmt::format("Intel {} core events ({})", cat.name, base)));
  for (const auto& [n, x] : declared)
    out += fmt::format("\n[extra.{}]\nmsrs = {}\ndesc = {}\n", n, hex_list(x.msrs, 1),
                       toml_string(fmt::format("Extra register of {} (MSR {}): the value Intel lists with the event",
                                               cat.name, hex_list(x.msrs, 1))));
  return out + body;
}

int import_intel(const ImportOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const auto rows = read_mapfile(o.from);
  const IntelTables tables = read_tables(o.tables.empty() ? pmc::default_paths().data / "catalog-import" : o.tables);

  // The core PMU's files, in mapfile order, and how many a folder has (more than one: hybrid).
  std::vector<const MapRow*> core;
  std::vector<std::string> files;
  std::map<std::string, std::set<std::string>> per_folder;
  for (const auto& r : rows) {
    if (r.type != "core" && r.type != "hybridcore") continue;
    core.push_back(&r);
    if (std::find(files.begin(), files.end(), r.file) == files.end()) files.push_back(r.file);
    const fs::path rel = fs::path(r.file).relative_path();
    per_folder[rel.begin()->string()].insert(r.file);
  }
  if (core.empty()) fail(fmt::format("{}: no core event lists (EventType core or hybridcore)", (o.from / "mapfile.csv").string()));

  std::map<std::string, IntelCatalog> by_file;
  std::set<std::string> tags;
  std::vector<std::pair<std::string, std::string>> written;  // file name, text
  for (const auto& f : files) {
    const fs::path rel = fs::path(f).relative_path();
    IntelCatalog cat;
    cat.folder = rel.begin()->string();
    const auto p = tables.platforms.find(cat.folder);
    cat.name = p == tables.platforms.end() ? cat.folder : p->second.name;
    cat.version = p == tables.platforms.end() ? 5 : p->second.version;
    cat.tag = lower_case(cat.folder);
    if (per_folder[cat.folder].size() > 1) {
      // alderlake_goldencove_core.json: the core kind is the word before "_core".
      std::string stem = rel.stem().string();
      if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, "_core") == 0) stem.resize(stem.size() - 5);
      const std::string word = stem.substr(stem.find('_') == std::string::npos ? 0 : stem.find('_') + 1);
      const auto c = tables.cores.find(word);
      cat.tag += "-" + (c == tables.cores.end() ? lower_case(word) : c->second.suffix);
      cat.name += ", " + (c == tables.cores.end() ? word : c->second.name);
    }
    if (!tags.insert(cat.tag).second) fail(fmt::format("{}: a second events file would be cpu/{}.toml", f, cat.tag));
    const std::string text = convert_intel(o.from / rel, tables, o, cat);
    written.emplace_back(cat.tag + ".toml", text);
    by_file.emplace(f, std::move(cat));
  }
  std::vector<MapRow> core_rows;
  for (const MapRow* r : core) core_rows.push_back(*r);
  for (const auto& [name, text] : written) write_text(o.out / name, text);
  write_text(o.out / "index.toml", index_toml(core_rows, by_file));
  if (!o.cpuid_out.empty())
    for (const auto& [list_file, cat] : by_file) {
      const std::string& file = list_file;  // a lambda may not capture a structured binding (Clang 14)
      const auto row = std::find_if(core.begin(), core.end(), [&](const MapRow* r) { return r->file == file; });
      write_text(o.cpuid_out / fmt::format("intel-{}.txt", cat.tag), cpuid_dump(**row, cat));
    }

  std::vector<MetricFile> metric_files;
  if (!o.metrics_out.empty())
    for (const auto& f : files)
      if (auto m = import_intel_metrics(o.from / by_file.at(f).folder, by_file.at(f), o)) metric_files.push_back(*m);

  std::size_t vendor = 0, total = 0, aliases = 0, deprecated = 0;
  print("{:<14} {:<36} {:>6} {:>7} {:>7} {:>10}\n", "catalog", "Intel's file", "listed", "events", "aliases",
        "deprecated");
  for (const auto& f : files) {
    const IntelCatalog& c = by_file.at(f);
    print("{:<14} {:<36} {:>6} {:>7} {:>7} {:>10}\n", c.tag, c.json_file, c.vendor_events, c.written, c.aliases,
          c.deprecated);
    vendor += c.vendor_events;
    total += c.written;
    aliases += c.aliases;
    deprecated += c.deprecated;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print("{} catalogs, {} index rows: of {} listed events, {} written and {} as aliases ({} names deprecated), in "
        "{:.2f} s\n",
        files.size(), core_rows.size(), vendor, total, aliases, deprecated, secs);
  print_metric_files(metric_files);
  return 0;
}

}  // namespace pmc_cli::catalog_import
