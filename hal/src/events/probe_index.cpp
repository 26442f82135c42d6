#include "probe_index.hpp"
#include "catalog_cache.hpp"

#include <pmc/event.hpp>

#include <exception>

namespace pmc::detail {

namespace {

constexpr std::string_view kLayout = "pmc-probe-index 1";

std::string encode(const std::vector<std::optional<ProbeSummary>>& all) {
  Writer w;
  w.u32(static_cast<std::uint32_t>(all.size()));
  for (const auto& s : all) {
    w.b(s.has_value());
    if (!s) continue;
    w.str(s->backend);
    put_pmu(w, s->pmu);
  }
  return std::move(w.out);
}

std::optional<std::vector<std::optional<ProbeSummary>>> decode(const std::string& bytes, std::size_t expected) {
  try {
    Reader r{bytes.data(), bytes.data() + bytes.size()};
    std::vector<std::optional<ProbeSummary>> all(r.count());
    if (all.size() != expected) return std::nullopt;
    for (auto& s : all) {
      if (!r.b()) continue;
      s.emplace();
      s->backend = r.str();
      s->pmu = read_pmu(r);
    }
    if (r.p != r.end) return std::nullopt;
    return all;
  } catch (const std::exception&) {  // a damaged record: parse again
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::optional<ProbeSummary>> probe_summaries(
    const std::vector<std::pair<std::filesystem::path, std::string>>& files) {
  std::vector<std::filesystem::path> paths;
  std::string what(kLayout);
  for (const auto& [path, name] : files) {
    paths.push_back(path);
    what += ' ';
    what += name;
  }
  const std::string key = ParseCache::key(what, paths);
  if (!key.empty())
    if (auto bytes = ParseCache::load(key))
      if (auto all = decode(*bytes, files.size())) return std::move(*all);
  std::vector<std::optional<ProbeSummary>> all;
  for (const auto& [path, name] : files) {
    std::optional<ProbeSummary> s;
    try {
      EventCatalog c;
      c.load(path, name);
      if (!c.files().empty()) {
        // What probing reads: the table, its score and its reason for no match.
        s = ProbeSummary{c.backend(), {}};
        s->pmu.score = c.pmu().score;
        s->pmu.unmatched = c.pmu().unmatched;
        s->pmu.probe = c.pmu().probe;
        for (ProbeRule& r : s->pmu.probe) r.source = {};
      }
    } catch (const std::exception&) {  // reported when the backend is loaded
    }
    all.push_back(std::move(s));
  }
  ParseCache::store(key, encode(all));
  return all;
}

}  // namespace pmc::detail
