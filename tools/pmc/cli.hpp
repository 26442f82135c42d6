// pmc: what the subcommands share (options, output that cannot kill the program, formatting).
// Each subcommand is a file of its own (probe.cpp, list.cpp, encode.cpp, stat.cpp,
// profile.cpp); main.cpp parses the command line. The library does the work; these present it.
#pragma once

#include <pmc/pmc.hpp>

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

struct Options {
  std::optional<std::filesystem::path> config;
  std::string backend;
  std::string cpuid_dump;
  std::string access;                // --access METHOD: overrides the config key `access`
  bool json = false;
  std::vector<std::string> events;
  std::vector<std::string> filters;  // list WORD...: events whose name or an alias contains a word
  std::string workload;
  std::vector<std::string> command;  // stat, profile: the command to run and its arguments
  std::optional<std::string> separator;  // stat -x: CSV
  std::string output;                // stat, profile -o: the report goes to this file
  std::string pc_range;              // profile --pc START:END
  bool kernel = false;               // profile --kernel: the range is kernel addresses
  std::size_t top = 10;              // profile --top N
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

// The config the options select (find_config, then --backend, --cpuid-dump, --access).
pmc::Config make_config(const Options& o);
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
// Instructions per cycle, when the readings count both (by their generic names).
std::optional<double> insn_per_cycle(const std::vector<pmc::Reading>& readings);

// Where a report goes: stdout, stderr or the file of -o.
class Report {
 public:
  Report(const std::string& path, std::FILE* fallback);
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  [[nodiscard]] std::FILE* out() const { return out_; }

 private:
  std::FILE* out_;
  bool owned_ = false;
};

int cmd_probe(const Options& o);
int cmd_list(const Options& o);
int cmd_encode(const Options& o);
int cmd_stat(const Options& o);
int cmd_profile(const Options& o);

// profile.cpp: "0x120000000:0x120001000" (hex or decimal bounds, end exclusive).
pmc::PcRange parse_pc_range(const std::string& text, bool kernel);

}  // namespace pmc_cli
