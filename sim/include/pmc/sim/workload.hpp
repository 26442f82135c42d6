// Activity: what the simulated CPU does, as run-length segments. A segment says "for N cycles,
// each cycle has k occurrences of each signal, in user or kernel mode". Device models apply
// their counting rules to a whole segment in closed form.
#pragma once

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::sim {

enum class Mode { user, kernel };

struct PMC_API Segment {
  std::uint64_t cycles = 0;
  Mode mode = Mode::user;
  bool halted = false;                              // unhalted-cycle events do not advance
  std::map<std::string, std::uint64_t, std::less<>> signals;  // signal -> occurrences per cycle
  // Alpha 21064 extras (ignored by x86 models).
  unsigned ipl = 0;
  std::uint64_t pc_begin = 0, pc_end = 0;           // PCs executed, evenly spread over [begin, end)
  unsigned cpu = 0;                                 // the CPU that runs the segment
  std::uint64_t pid = 0;                            // the process running (0: none, the kernel's own)
  std::uint64_t parent = 0;                         // pid was forked from this process (0: not said)

  [[nodiscard]] std::uint64_t per_cycle(std::string_view signal) const;
};

struct PMC_API Workload {
  std::string name;
  std::string description;
  std::vector<Segment> segments;
  std::string source;   // file it came from
  // Totals over the whole workload: cycles and each signal, for reports and tests.
  [[nodiscard]] std::uint64_t total_cycles() const;
  [[nodiscard]] std::uint64_t total(std::string_view signal) const;
};

// The TOML workload format (docs/workload-format.md). Errors carry file:line:column.
PMC_API Workload parse_workload(std::string_view toml, const std::string& name);
PMC_API Workload load_workload(const std::filesystem::path& file);

}  // namespace pmc::sim
