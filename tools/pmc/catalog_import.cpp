// pmc catalog import: the subcommand's options, and what both layouts read and write (mapfile.csv,
// JSON, CPU patterns, TOML spellings). catalog_import.hpp says how the files divide the work.
#include "catalog_import.hpp"

#include <pmc/error.hpp>
#include <pmc/input_file.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace pmc_cli {

CLI::App* add_catalog(CLI::App& app, Options& o, bool options) {
  CLI::App* catalog = app.add_subcommand("catalog", "event catalogs: import the vendors' published event lists");
  catalog->require_subcommand(1);
  CLI::App* import = catalog->add_subcommand(
      "import", "write catalog TOML from Intel's perfmon tree (--layout intel) or Linux perf's AMD lists "
                "(--layout perf); docs/hardware/intel-catalogs.md");
  if (!options) return import;
  ImportOptions& i = o.import;
  import->add_option("--layout", i.layout, "intel (Intel's perfmon: mapfile.csv, */events/*_core.json) or perf "
                                           "(perf's pmu-events: mapfile.csv, amdzenN/*.json)")
      ->required()
      ->check(CLI::IsMember({"intel", "perf"}));
  import->add_option("--from", i.from, "the vendor tree (mapfile.csv at its top)")->required();
  import->add_option("--out", i.out, "the directory the catalogs are written to")->required();
  import->add_option("--backend", i.backend, "the backend the catalogs are for (archperf for intel, amd for perf)")
      ->check(CLI::IsMember({"archperf", "amd"}));
  import->add_option("--cpuid-out", i.cpuid_out,
                     "intel: also write a synthesized CPUID dump intel-<tag>.txt per catalog into this directory");
  import->add_option("--metrics-out", i.metrics_out,
                     "also write the vendors' metrics, one <tag>.toml per catalog (intel: <FOLDER>/metrics/*.json; "
                     "perf: the MetricName entries), into this directory");
  import->add_option("--tables", i.tables,
                     "intel: the importer's tables (intel-platforms.toml, intel-topics.toml); default: the installed "
                     "share/pmchal/catalog-import");
  import->add_flag("--vendor-descriptions", i.vendor_descriptions,
                   "give each event the vendor's own description instead of the generated one (for your own use: "
                   "the vendors' sentences are under their licences)");
  return import;
}

int cmd_catalog_import(const Options& o) {
  const ImportOptions& i = o.import;
  if (i.layout == "intel") {
    if (!i.backend.empty() && i.backend != "archperf")
      throw pmc::Error(pmc::errc::invalid_argument, "--layout intel writes archperf catalogs (--backend archperf)");
    return catalog_import::import_intel(i);
  }
  if (!i.backend.empty() && i.backend != "amd")
    throw pmc::Error(pmc::errc::invalid_argument, "--layout perf writes amd catalogs (--backend amd)");
  return catalog_import::import_perf(i);
}

}  // namespace pmc_cli

namespace pmc_cli::catalog_import {

namespace {

[[noreturn]] void fail(const std::string& message) { throw pmc::Error(pmc::errc::parse, message); }

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// A CSV line of Intel's and perf's mapfiles: no quoting is used in either.
std::vector<std::string> split(std::string_view line, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t next = line.find(sep, pos);
    out.push_back(trim(line.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos)));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

// The strings a pattern stands for: literals, [class] (ranges, [:xdigit:]) and (a|b) groups.
std::vector<std::string> expand(std::string_view p, const std::string& where) {
  std::vector<std::string> out{""};
  auto append = [&](const std::vector<std::string>& choices) {
    std::vector<std::string> next;
    for (const auto& head : out)
      for (const auto& c : choices) next.push_back(head + c);
    if (next.size() > 4096) fail(fmt::format("{}: pattern '{}' stands for too many values", where, p));
    out = std::move(next);
  };
  std::size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '[') {
      const std::size_t end = p.find(']', p.compare(i, 10, "[[:xdigit:") == 0 ? i + 10 : i + 1);
      if (end == std::string_view::npos) fail(fmt::format("{}: unclosed '[' in '{}'", where, p));
      std::string_view body = p.substr(i + 1, end - i - 1);
      std::vector<std::string> choices;
      if (body == "[:xdigit:") {
        for (char d : std::string_view("0123456789ABCDEF")) choices.emplace_back(1, d);
        i = end + 2;  // "]]"
      } else {
        for (std::size_t k = 0; k < body.size(); ++k) {
          if (k + 2 < body.size() && body[k + 1] == '-') {
            for (char d = body[k]; d <= body[k + 2]; ++d) choices.emplace_back(1, d);
            k += 2;
          } else {
            choices.emplace_back(1, body[k]);
          }
        }
        i = end + 1;
      }
      if (i < p.size() && (p[i] == '+' || p[i] == '*'))
        fail(fmt::format("{}: '{}' repeats a class: such a pattern names no fixed set of CPUs", where, p));
      append(choices);
    } else if (c == '(') {
      const std::size_t end = p.find(')', i);
      if (end == std::string_view::npos) fail(fmt::format("{}: unclosed '(' in '{}'", where, p));
      std::vector<std::string> choices;
      for (const auto& alt : split(p.substr(i + 1, end - i - 1), '|'))
        for (auto& s : expand(alt, where)) choices.push_back(std::move(s));
      append(choices);
      i = end + 1;
    } else if (std::isalnum(static_cast<unsigned char>(c))) {
      append({std::string(1, c)});
      ++i;
    } else {
      fail(fmt::format("{}: unsupported character '{}' in the pattern '{}'", where, c, p));
    }
  }
  return out;
}

std::set<unsigned> values(std::string_view p, int base, const std::string& where) {
  std::set<unsigned> out;
  for (const auto& s : expand(p, where)) {
    try {
      std::size_t end = 0;
      const unsigned long v = std::stoul(s, &end, base);
      if (end != s.size()) throw std::invalid_argument(s);
      out.insert(static_cast<unsigned>(v));
    } catch (const std::exception&) {
      fail(fmt::format("{}: '{}' in the pattern '{}' is not a number", where, s, p));
    }
  }
  return out;
}

}  // namespace

std::vector<MapRow> read_mapfile(const fs::path& dir) {
  const fs::path file = dir / "mapfile.csv";
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw pmc::Error(pmc::errc::io, fmt::format("{}: cannot be read (is --from the top of the tree?)", file.string()));
  std::istringstream in(pmc::read_input_file(file, pmc::InputKind::vendor_data));
  std::vector<MapRow> rows;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty() || line[0] == '#') continue;
    const auto f = split(line, ',');
    if (n == 1 && f[0] == "Family-model") continue;  // the header
    if (f.size() < 4) fail(fmt::format("{}:{}: expected at least 4 comma-separated columns, found {}", file.string(), n, f.size()));
    MapRow r;
    r.line = n;
    r.pattern = f[0];
    r.version = f[1];
    r.file = f[2];
    r.type = f[3];
    const std::string where = fmt::format("{}:{}", file.string(), n);
    if (f.size() > 4 && !f[4].empty()) r.core_type = static_cast<std::uint32_t>(parse_number(f[4], where));
    if (f.size() > 5 && !f[5].empty()) r.native_model = static_cast<std::uint32_t>(parse_number(f[5], where));
    if (f.size() > 6) r.role = f[6];
    rows.push_back(std::move(r));
  }
  if (rows.empty()) fail(fmt::format("{}: no rows", file.string()));
  return rows;
}

nlohmann::json read_json(const fs::path& file) {
  const std::string text = pmc::read_input_file(file, pmc::InputKind::vendor_data);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...".
    std::string what = e.what();
    if (auto at = what.find("parse error"); at != std::string::npos) what = what.substr(at);
    fail(fmt::format("{}: malformed JSON: {}", file.string(), what));
  }
}

CpuPattern parse_cpu_pattern(std::string_view text, const std::string& where) {
  // Split at '-' outside [] and (): "GenuineIntel-6-55-[01234]".
  std::vector<std::string> parts{""};
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == '-' && depth == 0) parts.emplace_back();
    else parts.back() += c;
  }
  if (parts.size() < 3 || parts.size() > 4)
    fail(fmt::format("{}: '{}' is not VENDOR-FAMILY-MODEL[-STEPPING]", where, text));
  CpuPattern p;
  p.vendor = parts[0];
  p.families = values(parts[1], 10, where);
  p.models = values(parts[2], 16, where);
  if (parts.size() == 4) p.steppings = values(parts[3], 16, where);
  return p;
}

std::uint64_t parse_number(std::string_view text, const std::string& where) {
  const std::string t = trim(text);
  try {
    std::size_t end = 0;
    const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    const std::uint64_t v = std::stoull(hex ? t.substr(2) : t, &end, hex ? 16 : 10);
    if (end == (hex ? t.size() - 2 : t.size())) return v;
  } catch (const std::exception&) {  // reported below
  }
  fail(fmt::format("{}: '{}' is not a number", where, text));
}

std::vector<std::uint64_t> parse_numbers(std::string_view text, const std::string& where, bool drop_zero) {
  std::vector<std::uint64_t> out;
  for (const auto& part : split(text, ',')) {
    if (part.empty()) continue;
    const std::uint64_t v = parse_number(part, where);
    if (v != 0 || !drop_zero) out.push_back(v);
  }
  return out;
}

std::string member(const nlohmann::json& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string toml_hex(std::uint64_t v, int digits) { return fmt::format("0x{:0{}X}", v, digits); }

std::string toml_list(const std::vector<std::string>& words) {
  std::string out = "[";
  for (const auto& w : words) out += (out.size() > 1 ? ", " : "") + toml_string(w);
  return out + "]";
}

std::string lower_case(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string toml_int_set(const std::set<unsigned>& values, bool hex) {
  auto one = [&](unsigned v) { return hex ? toml_hex(v) : std::to_string(v); };
  if (values.size() == 1) return one(*values.begin());
  const unsigned lo = *values.begin();
  const unsigned hi = *values.rbegin();
  if (hi - lo + 1 == values.size()) return hex ? fmt::format("\"0x{:02X}-0x{:02X}\"", lo, hi) : fmt::format("\"{}-{}\"", lo, hi);
  std::string out = "[";
  for (unsigned v : values) out += (out.size() > 1 ? ", " : "") + one(v);
  return out + "]";
}

std::string comment(std::string_view text) {
  std::string out, line = "#";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (line.size() > 1 && line.size() + 1 + word.size() > 99) {
      out += line + "\n";
      line = "#";
    }
    line += " ";
    line += word;
    pos = end + 1;
  }
  return out + line + "\n";
}

std::string name_words(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '.' || c == '_') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(out.empty() ? std::toupper(static_cast<unsigned char>(c))
                                           : std::tolower(static_cast<unsigned char>(c)));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void write_text(const fs::path& file, const std::string& text) {
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw pmc::Error(pmc::errc::io, fmt::format("{}: cannot be written", file.string()));
}

}  // namespace pmc_cli::catalog_import
