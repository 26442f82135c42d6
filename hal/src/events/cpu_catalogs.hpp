// Per-CPU catalogs (docs/event-format.md, "Events of one model"): a backend's events directory
// may hold cpu/, whose index*.toml files list which events file of cpu/ describes which CPUs.
// Hal::open loads the files whose rows match the CPU after the backend's own files.
#pragma once

#include <pmc/catalog.hpp>
#include <pmc/cpu.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// One [[catalog]] row of an index.
struct CpuCatalogRow {
  ProbeRule rule;                          // vendor, family, model, stepping (no tag or name)
  std::optional<unsigned> core_type;       // CPUID.1AH:EAX[31:24]
  std::optional<std::uint32_t> native_model;  // CPUID.1AH:EAX[23:0]
  std::string file;                        // the events file, relative to cpu/
  std::string name;                        // what the CPU is ("Skylake client")
  SourceRef source;                        // where the row is
};

// The rows of one index file for `backend` (none when the file is for another backend). Throws
// pmc::Error with file:line:column for unknown keys, wrong types, values out of range, a file
// name that leaves cpu/. Kept in the parse cache (ParseCache) like the catalogs.
std::vector<CpuCatalogRow> read_cpu_index(const std::filesystem::path& index, std::string_view backend);
std::vector<CpuCatalogRow> read_cpu_index_string(std::string_view toml, const std::string& name,
                                                 std::string_view backend);

// Whether the CPU is one the row describes.
bool row_matches(const CpuCatalogRow& row, const CpuInfo& cpu);

struct CpuCatalogFile {
  std::filesystem::path path;  // cpu_dir / row.file
  std::string shown;           // "cpu/skl.toml (Skylake client)"
};

// The files of cpu_dir (a backend's events/<name>/cpu) whose rows match the CPU: the index files
// index*.toml in name order, their rows in order, each file once. Nothing when cpu_dir does not
// exist. Throws for a broken index and for a matching row whose file is missing.
std::vector<CpuCatalogFile> cpu_catalogs(const std::filesystem::path& cpu_dir, std::string_view backend,
                                         const CpuInfo& cpu);

// The core types of a hybrid part (docs/event-format.md, "Hybrid parts"): every row of cpu_dir
// with a core type whose vendor, family, model and stepping match the CPU, one part per core
// type and native model, in index order. `own` marks the part of the core the CPU was read on.
// Nothing for a CPU without a core type (CPUID leaf 1AH). A part's files are cpu_catalogs' for
// the CPU with the part's core type and native model. Throws for a broken index.
struct HybridPartFile {
  std::string name;        // the file's stem, '-' written '_' ("adl_grt"), as libpfm4 names PMUs
  std::string perf_pmu;    // Linux perf's PMU of the core type ("cpu_core", "cpu_atom"); "" when
                           // two parts share a core type (then only `name` selects one)
  unsigned core_type = 0;  // CPUID.1AH:EAX[31:24]
  std::uint32_t native_model = 0;
  bool own = false;
  std::string shown;       // "cpu/adl-grt.toml (Alder Lake, Gracemont E-core)"
};
std::vector<HybridPartFile> hybrid_parts(const std::filesystem::path& cpu_dir, std::string_view backend,
                                         const CpuInfo& cpu);

}  // namespace pmc::detail
