// The region report (pmc/region.hpp, docs/regions.md): its JSON, written and read back, and the
// table pmc stat --regions prints. The counting that makes a report is region.cpp's.
#include <pmc/error.hpp>
#include <pmc/input_file.hpp>
#include <pmc/region.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <system_error>

namespace pmc {


namespace {

using nlohmann::json;

std::string group(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string region_report_json(const RegionReport& report) {
  using ordered = nlohmann::ordered_json;  // the keys in the order docs/regions.md shows
  ordered regions = ordered::array();
  for (const auto& r : report.regions) {
    ordered events = ordered::array();
    for (const auto& e : r.events) events.push_back(ordered{{"event", e.event}, {"sum", e.sum}, {"min", e.min}, {"max", e.max}});
    regions.push_back(ordered{{"name", r.name},
                              {"calls", r.calls},
                              {"threads", r.threads},
                              {"time_ns", ordered{{"sum", r.time_ns}, {"min", r.min_time_ns}, {"max", r.max_time_ns}}},
                              {"events", std::move(events)}});
  }
  ordered doc{{"format", "pmchal-regions"}, {"version", 1},         {"pid", report.pid},
              {"backend", report.backend},  {"access", report.access}, {"cpu", report.cpu},
              {"events", report.events}};
  if (!report.error.empty()) doc["error"] = report.error;
  doc["regions"] = std::move(regions);
  // Names are stored as the program gave them; bytes that are not UTF-8 are written as U+FFFD
  // (docs/regions.md), so such a name cannot lose the report.
  return doc.dump(2, ' ', false, ordered::error_handler_t::replace);
}

RegionReport parse_region_report(std::string_view text, const std::string& name) {
  RegionReport out;
  try {
    const json doc = json::parse(text);
    if (!doc.is_object() || doc.value("format", "") != "pmchal-regions")
      throw Error(errc::parse, fmt::format("{}: not a pmchal region report (no \"format\": \"pmchal-regions\")", name));
    if (doc.value("version", 0) != 1)
      throw Error(errc::parse, fmt::format("{}: region report version {} (this library reads version 1)", name,
                                           doc.value("version", 0)));
    out.pid = doc.value("pid", 0L);
    out.backend = doc.value("backend", "");
    out.access = doc.value("access", "");
    out.cpu = doc.value("cpu", "");
    out.error = doc.value("error", "");
    out.events = doc.at("events").get<std::vector<std::string>>();
    for (const json& r : doc.at("regions")) {
      RegionStats s;
      s.name = r.at("name").get<std::string>();
      s.calls = r.at("calls").get<std::uint64_t>();
      s.threads = r.at("threads").get<unsigned>();
      s.time_ns = r.at("time_ns").at("sum").get<std::uint64_t>();
      s.min_time_ns = r.at("time_ns").at("min").get<std::uint64_t>();
      s.max_time_ns = r.at("time_ns").at("max").get<std::uint64_t>();
      for (const json& e : r.at("events"))
        s.events.push_back({e.at("event").get<std::string>(), e.at("sum").get<std::uint64_t>(),
                            e.at("min").get<std::uint64_t>(), e.at("max").get<std::uint64_t>()});
      if (s.events.size() != out.events.size())
        throw Error(errc::parse, fmt::format("{}: region '{}' has {} event totals for {} events", name, s.name,
                                             s.events.size(), out.events.size()));
      out.regions.push_back(std::move(s));
    }
  } catch (const json::exception& e) {
    throw Error(errc::parse, fmt::format("{}: malformed region report: {}", name, e.what()));
  }
  return out;
}

RegionReport load_region_report(const std::filesystem::path& path) {
  return parse_region_report(read_input_file(path, InputKind::region_report), path.string());
}

std::string format_region_table(const RegionReport& report) {
  std::string out;
  if (!report.error.empty()) out += fmt::format(" regions not counted: {}\n", report.error);
  if (report.regions.empty()) {
    if (report.error.empty()) out += " no region completed\n";
    return out;
  }
  const auto ms = [](std::uint64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); };
  for (const auto& r : report.regions) {
    out += fmt::format("\n Region '{}': {} call{} on {} thread{}, {} ms (per call {} to {} ms)\n\n", r.name, group(r.calls),
                       r.calls == 1 ? "" : "s", r.threads, r.threads == 1 ? "" : "s", ms(r.time_ns), ms(r.min_time_ns),
                       ms(r.max_time_ns));
    out += fmt::format("{:>20} {:>16} {:>16} {:>16}  {}\n", "sum", "min", "max", "mean", "event");
    for (const auto& e : r.events)
      out += fmt::format("{:>20} {:>16} {:>16} {:>16}  {}\n", group(e.sum), group(e.min), group(e.max),
                         group(r.calls ? e.sum / r.calls : 0), e.event);
  }
  return out;
}

}  // namespace pmc
