// The cpu/ index of a backend's events directory (cpu_catalogs.hpp): its rows read (or restored
// from the parse cache) and matched against the CPU.
#include "cpu_catalogs.hpp"

#include "bundled.hpp"
#include "catalog_cache.hpp"
#include "catalog_loader.hpp"
#include "probe_rule.hpp"
#include "root_safety.hpp"
#include "toml_util.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <stdexcept>

namespace pmc::detail {

namespace fs = std::filesystem;

namespace {

// The layout of the cached rows: a change of it changes the cache key.
constexpr std::string_view kLayout = "pmc-cpu-index 1";

std::vector<CpuCatalogRow> read_rows(const toml::table& doc, std::string_view backend) {
  check_keys(doc, {"backend", "catalog"}, "a cpu/ index file");
  if (*get_string(doc, "backend", true) != backend) return {};
  std::vector<CpuCatalogRow> rows;
  const toml::node* c = doc.get("catalog");
  if (!c) return rows;
  const toml::array* arr = c->as_array();
  if (!arr || !arr->is_array_of_tables())
    fail_at(*c, errc::invalid_argument, "'catalog' must be an array of tables ([[catalog]])");
  for (const auto& item : *arr) {
    const auto& t = *item.as_table();
    check_keys(t, {"vendor", "family", "model", "stepping", "core_type", "native_model", "file", "name"}, "[[catalog]]");
    CpuCatalogRow row;
    row.source = ref_of(item);
    if (const toml::node* v = t.get("vendor")) {
      if (v->is_string()) row.rule.vendors.push_back(v->as_string()->get());
      else if (auto list = get_strings(t, "vendor")) row.rule.vendors = *list;
    }
    row.rule.families = read_ranges(t, "family");
    row.rule.models = read_ranges(t, "model");
    row.rule.steppings = read_ranges(t, "stepping");
    if (auto v = get_int(t, "core_type")) {
      if (*v < 1 || *v > 0xFF)
        fail_at(node_of(t, "core_type"), errc::attribute_value, fmt::format("'core_type' {} is out of range 1-0xFF", *v));
      row.core_type = static_cast<unsigned>(*v);
    }
    if (auto v = get_int(t, "native_model")) {
      if (*v < 0 || *v > 0xFFFFFF)
        fail_at(node_of(t, "native_model"), errc::attribute_value,
                fmt::format("'native_model' {} is out of range 0-0xFFFFFF", *v));
      row.native_model = static_cast<std::uint32_t>(*v);
    }
    row.file = *get_string(t, "file", true);
    const fs::path file(row.file);
    const bool escapes = std::any_of(file.begin(), file.end(), [](const fs::path& part) { return part == ".."; });
    if (row.file.empty() || file.is_absolute() || escapes || file.extension() != ".toml")
      fail_at(node_of(t, "file"), errc::invalid_argument,
              fmt::format("'file' \"{}\" must name a .toml file inside cpu/ (a relative path without '..')", row.file));
    row.name = *get_string(t, "name", true);
    rows.push_back(std::move(row));
  }
  return rows;
}

void put_ranges(Writer& w, const std::vector<ValueRange>& v) {
  w.u32(static_cast<std::uint32_t>(v.size()));
  for (const auto& r : v) {
    w.u32(r.low);
    w.u32(r.high);
  }
}

std::vector<ValueRange> get_ranges(Reader& r) {
  std::vector<ValueRange> v(r.count());
  for (auto& x : v) {
    x.low = r.u32();
    x.high = r.u32();
  }
  return v;
}

std::string encode_rows(const std::vector<CpuCatalogRow>& rows) {
  Writer w;
  w.u32(static_cast<std::uint32_t>(rows.size()));
  for (const auto& row : rows) {
    w.strs(row.rule.vendors);
    put_ranges(w, row.rule.families);
    put_ranges(w, row.rule.models);
    put_ranges(w, row.rule.steppings);
    w.opt(row.core_type);
    w.opt(row.native_model ? std::optional<unsigned>(*row.native_model) : std::nullopt);
    w.str(row.file);
    w.str(row.name);
    put(w, row.source);
  }
  return w.out;
}

std::optional<std::vector<CpuCatalogRow>> decode_rows(const std::string& bytes) {
  try {
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<CpuCatalogRow> rows(r.count());
    for (auto& row : rows) {
      row.rule.vendors = r.strs();
      row.rule.families = get_ranges(r);
      row.rule.models = get_ranges(r);
      row.rule.steppings = get_ranges(r);
      row.core_type = r.opt32();
      if (auto m = r.opt32()) row.native_model = *m;
      row.file = r.str();
      row.name = r.str();
      row.source = get_source(r);
    }
    if (r.p != r.end) return std::nullopt;
    return rows;
  } catch (const std::exception&) {  // a damaged cache file: parse the TOML instead
    return std::nullopt;
  }
}

}  // namespace

std::vector<CpuCatalogRow> read_cpu_index_string(std::string_view toml, const std::string& name,
                                                 std::string_view backend) {
  return read_rows(parse_toml_string(toml, name), backend);
}

std::vector<CpuCatalogRow> read_cpu_index(const fs::path& index, std::string_view backend) {
  if (auto why = unsafe_for_root(index))
    throw Error(errc::permission, fmt::format("{}: cpu/ index not read: {}", index.string(), *why));
  const std::string key = ParseCache::key(fmt::format("{} {}", kLayout, backend), {index});
  if (!key.empty())
    if (auto payload = ParseCache::load(key))
      if (auto rows = decode_rows(*payload)) return std::move(*rows);
  std::vector<CpuCatalogRow> rows = read_rows(parse_toml_file(index, InputKind::events), backend);
  ParseCache::store(key, encode_rows(rows));
  return rows;
}

bool row_matches(const CpuCatalogRow& row, const CpuInfo& cpu) {
  return probe_rule_matches(row.rule, cpu, row.core_type, row.native_model);
}

namespace {

constexpr std::string_view kMatchLayout = "pmc-cpu-match 1";

// The index files of cpu_dir (index*.toml), in name order: from list_directory's names, since a
// cpu/ directory holds some fifty catalogs and std::filesystem builds a path per entry.
std::vector<fs::path> index_files(const fs::path& cpu_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  const auto names = list_directory(cpu_dir.native(), ec);  // sorted
  if (!names) return out;
  for (const std::string& name : *names)
    if (name.size() >= 10 && name.starts_with("index") && name.ends_with(".toml"))
      out.emplace_back(joined_path(cpu_dir.native(), name));
  return out;
}

// The matching of a CPU against the index files, as the parse cache keeps it: the index files
// with their stamps (a changed one, or a new one, which changes the directory's stamp, misses),
// then the files chosen.
std::string encode_match(const std::vector<fs::path>& indexes, const std::string& stamps,
                         const std::vector<CpuCatalogFile>& files) {
  Writer w;
  w.u32(static_cast<std::uint32_t>(indexes.size()));
  for (const auto& i : indexes) w.str(i.native());
  w.str(stamps);
  w.u32(static_cast<std::uint32_t>(files.size()));
  for (const auto& f : files) {
    w.str(f.path.native());
    w.str(f.shown);
  }
  return w.out;
}

std::optional<std::vector<CpuCatalogFile>> decode_match(const std::string& bytes) {
  try {
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<std::string> indexes(r.count());  // (text: no path split into components)
    for (auto& i : indexes) i = r.str();
    const std::string stamps = r.str();
    std::vector<CpuCatalogFile> files(r.count());
    for (auto& f : files) {
      f.path = r.str();
      f.shown = r.str();
    }
    if (r.p != r.end) return std::nullopt;
    // (No walk up from the index files as root: the stamps say they are what was read when the
    // walk found them safe, and the chosen files are checked when the catalog reads them.)
    if (ParseCache::key_of_texts("", indexes) != stamps) return std::nullopt;
    struct stat st{};
    for (const auto& f : files)
      if (scoped_stat(f.path, st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return files;
  } catch (const std::exception&) {  // a damaged cache file: match again
    return std::nullopt;
  }
}

// (scoped_stat: Hal::open asks of the same directory more than once.)
bool a_directory(const fs::path& dir) {
  struct stat st {};
  return scoped_stat(dir, st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::vector<CpuCatalogFile> cpu_catalogs(const fs::path& cpu_dir, std::string_view backend, const CpuInfo& cpu) {
  if (!a_directory(cpu_dir)) return {};
  // (Joined, not formatted: Hal::open asks this of every CPU whose backend has a cpu/ directory.)
  std::string what(kMatchLayout);
  what.append(" ").append(backend).append(" ").append(cpu.vendor);
  for (const std::uint64_t v : {std::uint64_t{cpu.family}, std::uint64_t{cpu.model}, std::uint64_t{cpu.stepping},
                                std::uint64_t{cpu.core_type}, std::uint64_t{cpu.native_model}})
    what.append("|").append(std::to_string(v));
  const std::string key = ParseCache::key(what, {cpu_dir});
  if (!key.empty())
    if (auto payload = ParseCache::load(key))
      if (auto files = decode_match(*payload)) return std::move(*files);
  std::vector<CpuCatalogFile> out;
  std::error_code ec;
  const std::vector<fs::path> indexes = index_files(cpu_dir);
  for (const auto& index : indexes)
    for (const auto& row : read_cpu_index(index, backend)) {
      if (!row_matches(row, cpu)) continue;
      const fs::path path = cpu_dir / row.file;
      if (std::any_of(out.begin(), out.end(), [&](const CpuCatalogFile& f) { return f.path == path; })) continue;
      if (!fs::is_regular_file(path, ec))
        throw Error(errc::not_found, fmt::format("{}: the events file '{}' of {} is not in {}", row.source.str(), row.file,
                                                 row.name, cpu_dir.string()));
      out.push_back({path, fmt::format("cpu/{} ({})", row.file, row.name)});
    }
  if (!key.empty()) ParseCache::store(key, encode_match(indexes, ParseCache::key("", indexes), out));
  return out;
}

std::vector<HybridPartFile> hybrid_parts(const fs::path& cpu_dir, std::string_view backend, const CpuInfo& cpu) {
  std::vector<HybridPartFile> out;
  if (cpu.core_type == 0 || !a_directory(cpu_dir)) return out;
  for (const auto& index : index_files(cpu_dir))
    for (const auto& row : read_cpu_index(index, backend)) {
      if (!row.core_type || !probe_rule_matches(row.rule, cpu)) continue;
      const std::uint32_t native = row.native_model.value_or(0);
      if (std::any_of(out.begin(), out.end(),
                      [&](const HybridPartFile& p) { return p.core_type == *row.core_type && p.native_model == native; }))
        continue;
      HybridPartFile part;
      part.name = fs::path(row.file).stem().string();
      std::replace(part.name.begin(), part.name.end(), '-', '_');
      part.core_type = *row.core_type;
      part.native_model = native;
      part.own = row_matches(row, cpu);
      part.shown = fmt::format("cpu/{} ({})", row.file, row.name);
      out.push_back(std::move(part));
    }
  // Linux perf's names, where one part has the core type: cpu_core (40H), cpu_atom (20H).
  for (auto& p : out) {
    const auto same = std::count_if(out.begin(), out.end(), [&](const HybridPartFile& q) { return q.core_type == p.core_type; });
    if (same == 1 && p.core_type == 0x40) p.perf_pmu = "cpu_core";
    if (same == 1 && p.core_type == 0x20) p.perf_pmu = "cpu_atom";
  }
  return out;
}

}  // namespace pmc::detail
