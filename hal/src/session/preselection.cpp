#include "preselection.hpp"

#include "bundled.hpp"
#include "catalog_cache.hpp"
#include "cpu_native.hpp"
#include "plugins.hpp"
#include "probe_index.hpp"
#include "root_safety.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <exception>

namespace pmc::detail {

std::filesystem::path data_file(const std::string& name, const std::filesystem::path& plugin,
                                const std::vector<std::string>* listing) {
  return data_file_text(name, plugin.native(), listing);
}

std::string data_file_text(const std::string& name, const std::string& lib, const std::vector<std::string>* listing) {
  struct stat st {};
  const std::size_t slash = lib.rfind('/');
  const std::string file = name + ".toml";
  const std::string beside = slash == std::string::npos ? file : joined_path(std::string_view(lib).substr(0, slash + 1), file);
  if ((!listing || std::binary_search(listing->begin(), listing->end(), file)) && scoped_stat(beside, st) == 0 &&
      S_ISREG(st.st_mode))
    return beside;
  const std::string installed = joined_path(paths().events.native(), file);
  if (scoped_stat(installed, st) == 0 && S_ISREG(st.st_mode)) return installed;
  throw Error(errc::not_found,
              fmt::format("backend '{}' has no data file: neither {} nor {} exists", name, beside, installed));
}

std::string library_name(std::string_view p) {
  // The file name's stem, as std::filesystem::path::stem() gives it.
  const std::size_t slash = p.rfind('/');
  std::string name(slash == std::string_view::npos ? p : p.substr(slash + 1));
  if (const std::size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0) name.erase(dot);
  if (name.starts_with("lib")) name.erase(0, 3);
  return name;
}

namespace {

// A CPUID answer as the record keys and keeps it: leaf 1's EBX[31:24] is the initial APIC ID of
// the CPU the reading ran on, which no probe looks at; with it, each CPU of a machine would have
// a key of its own, or (in the compared leaves) rewrite the record the others wrote.
CpuidRegs record_regs(std::uint32_t leaf, std::uint32_t subleaf, CpuidRegs r) {
  if (leaf == 1 && subleaf == 0) r.ebx &= 0x00FFFFFFu;
  return r;
}

// What of the CPU a probe table can look at (probe_rule_matches, probe_subject), as text for
// the record's key: the identification and every raw CPUID answer read so far. A native reading
// has no brand here (complete_brand adds it when something asks for it): a kept verdict is the
// CPU's whatever its brand, as docs/writing-a-backend.md asks of probe().
void append_cpu(std::string& key, const CpuInfo& cpu) {
  auto number = [&key](std::uint64_t v) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v, 16);
    (void)ec;
    key.append(digits, static_cast<std::size_t>(end - digits));
    key += ' ';
  };
  key.append("cpu\t").append(cpu.vendor).append("\t").append(cpu.brand).append("\t");
  for (std::uint64_t v : {std::uint64_t{static_cast<std::uint8_t>(cpu.isa)}, std::uint64_t{cpu.family},
                          std::uint64_t{cpu.model}, std::uint64_t{cpu.stepping}, std::uint64_t{cpu.arm.part},
                          std::uint64_t{cpu.arm.variant}, std::uint64_t{cpu.arm.revision}})
    number(v);
  key += '\n';
  for (const auto& [at, r] : cpu.raw.all()) {
    const CpuidRegs k = record_regs(at.first, at.second, r);
    for (std::uint64_t v : {at.first, at.second, k.eax, k.ebx, k.ecx, k.edx}) number(v);
    key += '\n';
  }
}

}  // namespace

Preselection::Preselection(const Config& config, CpuInfo& cpu, const std::vector<std::filesystem::path>& dirs)
    : config_(config), cpu_(cpu) {
  if (config.backend != "auto") return;
  namespace fs = std::filesystem;
  // (Paths as text throughout: a std::filesystem::path splits itself into components when made.)
  std::vector<std::pair<std::string, std::string>> files;  // data file, backend name
  std::vector<std::string> paths;  // the record depends on: the data files, the libraries, this one
  std::string what = "pmc-probe-verdicts 3 ";
  what.append(std::to_string(sizeof(ProbeRule))).append(" ").append(std::to_string(sizeof(Match)));
  for (const auto& dir : dirs) {
    std::error_code ec;
    const auto names = list_directory(dir.native(), ec);  // sorted
    if (!names) continue;
    for (const std::string& n : *names) {
      if (n.size() <= 6 || !n.starts_with("lib") || !n.ends_with(".so")) continue;
      std::string lib = joined_path(dir.native(), n);
      std::string name = library_name(n);
      if (name.ends_with("-model")) continue;        // a device model's library
      for (const auto& f : files)
        if (f.second == name) names_unique_ = false;
      try {
        files.emplace_back(data_file_text(name, lib, &*names), name);
        paths.push_back(files.back().first);
        paths.push_back(lib);
        libs_.push_back(std::move(lib));
        what.append(" ").append(name);
      } catch (const std::exception&) {  // no data file: the library is loaded and says so
      }
    }
  }
  // No backend library with its data: no verdict to keep (and no record to read).
  if (libs_.empty()) return;
  if (!library_file().empty()) paths.push_back(library_file());  // the verdicts are its code's
  what += '\n';
  append_cpu(what, cpu_);
  key_ = ParseCache::key_of_texts(what, paths);
  asked_.assign(libs_.size(), false);
  if (!key_.empty() && restore(libs_.size())) return;
  std::vector<std::pair<fs::path, std::string>> tables;
  for (auto& [file, name] : files) tables.emplace_back(std::move(file), std::move(name));
  evaluate(tables);
}

Preselection::~Preselection() = default;

void Preselection::evaluate(const std::vector<std::pair<std::filesystem::path, std::string>>& files) {
  const std::vector<std::optional<ProbeSummary>> tables = probe_summaries(files);
  verdicts_.assign(libs_.size(), {});
  for (std::size_t i = 0; i < libs_.size(); ++i) {
    const auto& table = tables[i];
    if (!table || table->backend != files[i].second || (table->pmu.probe.empty() && table->pmu.unmatched.empty()))
      continue;
    read_leaves(table->pmu);
    Match m = probe_with_table(cpu_, table->pmu, files[i].second);
    verdicts_[i].refused = !m.matched();
    verdicts_[i].match = std::move(m);
  }
  dirty_ = !key_.empty();
}

namespace {

void put_match(Writer& w, const Match& m) {
  w.u32(static_cast<std::uint32_t>(m.score));
  w.str(m.reason);
  w.str(m.cpu_tag);
  w.str(m.part);
}

Match get_match(Reader& r) {
  Match m;
  m.score = static_cast<int>(r.u32());
  m.reason = r.str();
  m.cpu_tag = r.str();
  m.part = r.str();
  return m;
}

}  // namespace

void Preselection::store() {
  if (!dirty_) return;
  dirty_ = false;
  std::sort(leaves_.begin(), leaves_.end());
  leaves_.erase(std::unique(leaves_.begin(), leaves_.end()), leaves_.end());
  Writer w;
  w.u32(static_cast<std::uint32_t>(leaves_.size()));
  for (const auto& [leaf, subleaf] : leaves_) {
    const std::optional<CpuidRegs> r = cpu_.raw.get(leaf, subleaf);
    w.u32(leaf);
    w.u32(subleaf);
    w.b(r.has_value());
    const CpuidRegs v = record_regs(leaf, subleaf, r.value_or(CpuidRegs{}));
    for (std::uint32_t x : {v.eax, v.ebx, v.ecx, v.edx}) w.u32(x);
  }
  w.u32(static_cast<std::uint32_t>(verdicts_.size()));
  for (const Verdict& v : verdicts_) {
    w.b(v.refused);
    put_match(w, v.match);
    w.b(v.probe.has_value());
    if (v.probe) {
      put_match(w, v.probe->match);
      w.str(v.probe->description);
      w.str(v.probe->name);
      w.b(v.probe->profiles);
      w.b(v.probe->alone);
    }
  }
  ParseCache::store(key_, w.out);
}

bool Preselection::restore(std::size_t expected) {
  const std::optional<std::string> bytes = ParseCache::load(key_);
  if (!bytes) return false;
  try {
    Reader r{bytes->data(), bytes->data() + bytes->size()};
    std::vector<std::pair<std::uint32_t, std::uint32_t>> leaves(r.count());
    for (auto& [leaf, subleaf] : leaves) {
      leaf = r.u32();
      subleaf = r.u32();
      const bool present = r.b();
      CpuidRegs v;
      for (std::uint32_t* x : {&v.eax, &v.ebx, &v.ecx, &v.edx}) *x = r.u32();
      read_native_leaf(cpu_, leaf, subleaf);
      const std::optional<CpuidRegs> now = cpu_.raw.get(leaf, subleaf);
      if (now.has_value() != present || (present && !(record_regs(leaf, subleaf, *now) == v)))
        return false;  // another CPU answers
    }
    std::vector<Verdict> verdicts(r.count());
    if (verdicts.size() != expected) return false;
    for (Verdict& v : verdicts) {
      v.refused = r.b();
      v.match = get_match(r);
      if (r.b()) {
        Probe p;
        p.match = get_match(r);
        p.description = r.str();
        p.name = r.str();
        p.profiles = r.b();
        p.alone = r.b();
        v.probe = std::move(p);
      }
    }
    if (r.p != r.end) return false;
    verdicts_ = std::move(verdicts);
    leaves_ = std::move(leaves);
  } catch (const std::exception&) {  // a damaged record: evaluate the tables
    return false;
  }
  return true;
}

std::optional<std::size_t> Preselection::index_of(std::string_view lib) const {
  const auto at = std::find(libs_.begin(), libs_.end(), lib);
  if (at == libs_.end() || verdicts_.empty()) return std::nullopt;
  return static_cast<std::size_t>(at - libs_.begin());
}

const Preselection::Probe* Preselection::probed(std::string_view lib) const {
  const auto i = index_of(lib);
  return i && verdicts_[*i].probe ? &*verdicts_[*i].probe : nullptr;
}

void Preselection::remember(const std::filesystem::path& lib, Probe probe) {
  const auto i = index_of(lib.native());
  if (!i || key_.empty()) return;
  verdicts_[*i].probe = std::move(probe);
  dirty_ = true;
}

bool Preselection::load(const std::string& lib) {
  const std::string name = library_name(lib);
  if (std::find(seen_.begin(), seen_.end(), name) != seen_.end()) return true;  // shadowing as before
  seen_.push_back(name);
  if (config_.backend != "auto") return name == config_.backend;
  return !refused(lib, name);
}

std::optional<PluginKind> Preselection::pass_over(const std::string& lib) {
  const std::string name = library_name(lib);
  if (name.ends_with("-model")) return PluginKind::model;
  if (config_.backend != "auto" || std::find(seen_.begin(), seen_.end(), name) != seen_.end()) return std::nullopt;
  if (!refused(lib, name)) {
    const Probe* kept = names_unique_ ? probed(lib) : nullptr;
    if (!kept || !kept->alone) return std::nullopt;
  }
  seen_.push_back(name);
  return PluginKind::backend;
}

void Preselection::read_leaves(const PmuDescription& pmu) {
  for (const ProbeRule& r : pmu.probe)
    for (const auto* fields : {&r.cpuid_set, &r.cpuid_clear})
      for (const CpuidField& f : *fields) {
        read_native_leaf(cpu_, f.leaf, f.subleaf);
        leaves_.emplace_back(f.leaf, f.subleaf);  // the record compares them at the next open
      }
}

const Preselection::Skipped* Preselection::skipped(const std::filesystem::path& lib) const {
  for (const Skipped& s : skipped_)
    if (s.lib == lib.native()) return &s;
  return nullptr;
}

bool Preselection::refused(const std::string& lib, const std::string& name) {
  const auto i = index_of(lib);
  if (!i || !verdicts_[*i].refused) return false;
  if (!asked_[*i]) {
    asked_[*i] = true;
    skipped_.push_back({lib, name, verdicts_[*i].match});
  }
  return true;
}

}  // namespace pmc::detail
