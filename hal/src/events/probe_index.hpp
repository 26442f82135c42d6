// The probe tables of several backends' data files at once, so that Hal::open can tell which
// backends may match a CPU before it loads any of them (hal/src/session/hal.cpp, Preselection):
// one parse-cache record for the whole set, keyed by every file (path, size, times, inode), holds
// each file's backend name and [pmu] section; when it is missing or stale, each file is loaded
// (EventCatalog::load, itself cached per file) and the record is written again.
#pragma once

#include <pmc/catalog.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pmc::detail {

struct ProbeSummary {
  std::string backend;  // the data file's 'backend'
  PmuDescription pmu;   // its [[probe]] table, [pmu] score and unmatched (nothing else)
};

// For each (data file, backend name) in order: the summary, or nullopt when the file cannot be
// loaded or is another backend's (the caller then loads the backend and lets it report).
std::vector<std::optional<ProbeSummary>> probe_summaries(
    const std::vector<std::pair<std::filesystem::path, std::string>>& files);

}  // namespace pmc::detail
