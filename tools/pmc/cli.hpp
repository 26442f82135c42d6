// pmc: what the subcommands share (options, output that cannot kill the program, formatting).
// Each subcommand is a file of its own (probe.cpp, list.cpp, encode.cpp, stat*.cpp, profile.cpp,
// export.cpp); main.cpp and options.cpp parse the command line. The library does the work;
// these present it.
#pragma once

#include <pmc/pmc.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc_cli {

using nlohmann::json;

// pmc catalog import (catalog_import.cpp): the vendor tree read and the catalogs written.
struct ImportOptions {
  std::string layout;                // "intel" or "perf"
  std::filesystem::path from;        // the vendor tree (mapfile.csv at its top)
  std::filesystem::path out;         // where the catalogs go
  std::string backend;               // archperf (intel) or amd (perf); empty: the layout's
  std::filesystem::path cpuid_out;   // intel: where the synthesized CPUID dumps go (empty: none)
  std::filesystem::path metrics_out; // where the metric files go (empty: none)
  std::filesystem::path tables;      // intel: the importer's tables (empty: the installed ones)
  bool vendor_descriptions = false;  // desc = the vendor's sentence, for the user's own use
};

struct Options {
  std::optional<std::filesystem::path> config;
  std::string backend;
  std::string cpuid_dump;
  std::string access;                // --access METHOD: overrides the config key `access`
  bool json = false;
  std::vector<std::string> events;
  std::vector<std::string> filters;  // list WORD...: events whose name or an alias contains a word
  bool deprecated = false;           // list --deprecated: deprecated events too (marked)
  std::vector<std::string> topics;   // list --topic T: events of these topics
  std::string counter;               // list --counter N|fixed: events that can use that counter
  std::string workload;
  std::vector<std::string> command;  // stat, profile: the command to run and its arguments
  std::optional<std::string> separator;  // stat -x: CSV
  std::string output;                // stat, profile -o: the report goes to this file
  // stat (perf stat's options) and export
  bool all_cpus = false;             // -a
  std::string cpu_list;              // -C LIST
  std::vector<int> pids;             // -p PID[,PID...]
  int tid = 0;                       // -t TID
  bool json_lines = false;           // stat -j: perf's JSON, one object per row and line
  bool verbose = false;              // stat -v: each count's raw value, enabled and running times
  bool per_thread = false;           // stat --per-thread: a row per thread of -p/-t
  bool per_core = false;             // stat --per-core: -a/-C summed per core (S0-D0-C0)
  bool per_socket = false;           // stat --per-socket: -a/-C summed per socket (S0)
  bool big_num = true;               // stat -B/--no-big-num: thousands separators in the table
  std::uint64_t delay_ms = 0;        // stat -D MS: counting starts MS after the command does
  std::uint64_t interval_count = 0;  // stat --interval-count N: with -I, N intervals only
  bool all_user = false;             // stat --all-user: every event :u
  bool all_kernel = false;           // stat --all-kernel: every event :k
  unsigned detailed = 0;             // stat -d (-dd, -ddd): perf's detailed events added
  bool append = false;               // stat --append: -o appends
  bool no_aggr = false;              // -A
  std::uint64_t interval_ms = 0;     // -I MS
  unsigned repeat = 1;               // -r N
  std::uint64_t timeout_ms = 0;      // --timeout MS
  std::vector<std::string> metrics;  // -M NAME[,NAME]; list --metrics
  bool list_metrics = false;         // list --metrics
  bool topdown = false;              // stat --topdown: the top-down tree (TopdownL1 .. L<td_level>)
  unsigned td_level = 1;             // stat --td-level N
  bool metric_only = false;          // stat --metric-only: the metrics without the counts
  std::string listen;                // export --listen ADDR:PORT
  std::string textfile;              // export --textfile FILE
  double export_interval = 1.0;      // export --interval S
  bool aggregate = false;            // export --aggregate
  std::string pc_range;              // profile --pc START:END
  bool kernel = false;               // profile --kernel: the range is kernel addresses
  std::size_t top = 10;              // profile --top N
  bool callchain = false;            // profile -g: call chains (frame pointers)
  std::string call_graph;            // profile --call-graph fp|dwarf
  std::optional<std::string> sort;   // profile --sort KEYS (dso,sym,srcline)
  std::string folded;                // profile --folded FILE
  std::string flamegraph;            // profile --flamegraph FILE.svg
  bool emulate = false;              // stat, profile --emulate: the command under cachegrind (docs/emulation.md)
  bool regions = false;              // stat --regions: the program's own marked regions (docs/regions.md)
  ImportOptions import;              // catalog import
};

// Writes text and never throws: a report or an error message to an unwritable stream (stderr
// on /dev/full, a closed pipe) is lost, not fatal. Returns whether all of it was written.
bool write(std::FILE* out, std::string_view text) noexcept;
template <class... T>
bool print_to(std::FILE* out, fmt::format_string<T...> format, T&&... args) noexcept {
  try {
    return write(out, fmt::format(format, std::forward<T>(args)...));
  } catch (...) {
    return false;
  }
}
template <class... T>
bool print(fmt::format_string<T...> format, T&&... args) noexcept {
  return print_to(stdout, format, std::forward<T>(args)...);
}
// "pmc: MESSAGE" on stderr.
void error_line(std::string_view message) noexcept;
// At the end of a command: stdout flushed, and each output stream a write to which failed (stdout,
// a file of -o) said on stderr, "pmc: writing FILE: REASON" ("writing standard output: No space
// left on device"); returns status, or 1 for 0 when a write failed. EPIPE on stdout (the reader
// left) is not a failure.
int finish_output(int status) noexcept;

// The config the options select (find_config, then --backend, --cpuid-dump, --access).
pmc::Config make_config(const Options& o);
// The Hal of this command (Hal::open with make_config), kept until the process exits: pmc runs
// one command, and unloading the plugins at its end (dlclose, munmap, TLB flushes) cost every
// command 0.2 ms the kernel's own exit does not (docs/performance.md). Sessions made from it are
// closed as usual when they go.
const pmc::Hal& open_hal(const Options& o);
// "a,b" "c" -> a, b, c; an empty entry is an error.
std::vector<std::string> split_events(const std::vector<std::string>& given);

std::string group_digits(std::uint64_t v);
std::string hex(std::uint64_t v);
const char* kind_name(pmc::CounterKind k);
// "1,234.56" for ns shown as msec.
std::string msec(std::uint64_t ns);
std::string per_second(double rate);
std::string quote_command(const std::vector<std::string>& cmd);

// The readings as every --json report gives them.
json counters_json(const std::vector<pmc::Reading>& readings);

// Where a report goes: stdout, stderr or the file of -o.
class Report {
 public:
  Report(const std::string& path, std::FILE* fallback, bool append = false);
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  [[nodiscard]] std::FILE* out() const { return out_; }

 private:
  std::FILE* out_;
  std::string path_;
  bool owned_ = false;
};

int cmd_probe(const Options& o);
int cmd_list(const Options& o);
int cmd_encode(const Options& o);
int cmd_stat(const Options& o);
int cmd_profile(const Options& o);
int cmd_export(const Options& o);
int cmd_catalog_import(const Options& o);

// options.cpp: the stat, profile and export subcommands, with their options unless `options` is
// false (another subcommand runs: the name and description are enough for 'pmc --help').
CLI::App* add_stat(CLI::App& app, Options& o, bool options = true);
CLI::App* add_profile(CLI::App& app, Options& o, bool options = true);
CLI::App* add_export(CLI::App& app, Options& o, bool options = true);
// catalog_import.cpp: `catalog` and its subcommand `import` (returned), with its options unless
// `options` is false.
CLI::App* add_catalog(CLI::App& app, Options& o, bool options = true);
// The common options of a subcommand that opens a Hal (--cpuid-dump, --backend, --access, --json).
void add_cpu_options(CLI::App* sub, Options& o);
// Where a command begins in argv (stat, profile): at the first word after the subcommand that is
// neither an option nor an option's value, or after "--". Returns the number of arguments CLI11
// should parse (the command and a "--" before it left out) and fills o.command.
int split_command(int argc, char** argv, const CLI::App& app, Options& o);

// profile.cpp: "0x120000000:0x120001000" (hex or decimal bounds, end exclusive).
pmc::PcRange parse_pc_range(const std::string& text, bool kernel);

}  // namespace pmc_cli
