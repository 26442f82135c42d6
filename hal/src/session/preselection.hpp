// Which backend libraries Hal::open loads (hal/src/session/hal.cpp). A backend's data file
// (<name>.toml for lib<name>.so) holds its probe table, so whether it can match this CPU is known
// before its library is loaded (docs/writing-a-backend.md "Probing"): with backend = "auto", a
// library is loaded when its table has a rule that matches the CPU and does not refuse it, or
// when its data has no table to say (probed by code alone); with a backend named, only the
// library of that name. The others stay unloaded, and a backend that was not loaded gets its
// table's verdict. Whatever this cannot tell (no data file by that name, a name seen twice) is
// loaded, as before.
//
// The verdicts of every table on one CPU are one parse-cache record, keyed by the data files and
// by everything of the CPU a table can look at (its identification and raw CPUID answers); the
// leaves the tables name beyond the native reading are read and compared with the record's. Only
// when that record is missing or stale are the tables themselves read (probe_index.hpp) and
// evaluated.
#pragma once

#include <pmc/config.hpp>
#include <pmc/cpu.hpp>
#include <pmc/plugin.hpp>
#include <pmc/pmu.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

struct ProbeSummary;

// A backend's data file, <name>.toml: next to its plugin, else in the installed events directory.
// Throws not_found naming both places. `listing`: the plugin's directory's names, sorted, when
// known (a name not there is not looked for there).
std::filesystem::path data_file(const std::string& name, const std::filesystem::path& plugin,
                                const std::vector<std::string>* listing = nullptr);
std::string data_file_text(const std::string& name, const std::string& plugin,
                           const std::vector<std::string>* listing = nullptr);

// The backend a library is named for: "NAME" for libNAME.so (the file name a backend's data file
// <name>.toml goes with).
std::string library_name(std::string_view lib);

class Preselection {
 public:
  Preselection(const Config& config, CpuInfo& cpu, const std::vector<std::filesystem::path>& dirs);
  ~Preselection();
  Preselection(const Preselection&) = delete;
  Preselection& operator=(const Preselection&) = delete;

  // Whether load_plugins opens this library.
  bool load(const std::string& lib);

  // What Hal::open knows of a library without opening it: one named lib<name>-model.so is a
  // device model's, loaded when a model is needed; a backend's whose probe table refuses this
  // CPU is not loaded (plugins() loads it), nor one whose probe the record keeps (see Probe).
  // Their checks run when they are loaded.
  std::optional<PluginKind> pass_over(const std::string& lib);

  // The native reading has the leaves the library reads; a probe table may name others (read
  // here, and kept with the record).
  void read_leaves(const PmuDescription& pmu);

  struct Skipped {
    std::string lib;  // (text: a std::filesystem::path splits itself into components when made)
    std::string name;
    Match verdict;
  };
  // The table's verdict on a library that was not loaded, or null.
  const Skipped* skipped(const std::filesystem::path& lib) const;

  // A loaded backend's own probe (Backend::probe) and its data file's description, as the record
  // keeps them from an earlier open of the same library, data file and CPU; null when unknown.
  // With them, what Hal::open says of the backend (BackendInfo) needs no loading: a library that
  // holds only a backend and whose probe is kept is passed over (pass_over) and loaded at the
  // backend's first use (Context::backend).
  struct Probe {
    Match match;
    std::string description;
    std::string name;       // the backend's (its descriptor's) name
    bool profiles = false;  // its driver samples at counter interrupts
    bool alone = false;     // the library holds a backend and no device model
  };
  const Probe* probed(std::string_view lib) const;
  // What a loaded backend's probe said, for the record (written by store()).
  void remember(const std::filesystem::path& lib, Probe probe);
  // Writes the record when it was missing, stale, or lacks a probe remembered since.
  void store();
  const CpuInfo& cpu() const { return cpu_; }
  const Config& config() const { return config_; }

 private:
  // A table's verdict: refused (with the reason), or not (matched, or no table to tell); and the
  // backend's own probe once it has been loaded and asked.
  struct Verdict {
    bool refused = false;
    Match match;
    std::optional<Probe> probe;
  };

  const Config& config_;
  CpuInfo& cpu_;
  std::vector<std::string> libs_;  // the backend libraries with a data file, in order
  std::vector<Verdict> verdicts_;            // per entry of libs_
  std::vector<std::string> seen_;
  bool names_unique_ = true;  // no backend name is that of two libraries (so none is passed over as kept)
  std::vector<Skipped> skipped_;
  std::vector<bool> asked_;  // per entry of libs_: its verdict has been taken
  std::string key_;          // the record's ("": no parse cache)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> leaves_;  // the leaves the tables named
  bool dirty_ = false;       // the record is to be written

  std::optional<std::size_t> index_of(std::string_view lib) const;

  // The verdicts from the tables themselves (and the record written for the next open).
  void evaluate(const std::vector<std::pair<std::filesystem::path, std::string>>& files);
  // The verdicts from the record, when it is there and the CPU answers as it says.
  bool restore(std::size_t expected);
  // Whether the table of a library in libs_ refuses this CPU (recorded in skipped_); false for a
  // library it cannot tell about.
  bool refused(const std::string& lib, const std::string& name);
};

}  // namespace pmc::detail
