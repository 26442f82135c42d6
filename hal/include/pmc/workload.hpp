// Activity: what a simulated CPU does, as run-length segments. A segment says "for N cycles,
// each cycle has k occurrences of each signal, in user or kernel mode". Device models apply
// their counting rules to a whole segment in closed form, so its length costs nothing.
// docs/workload-format.md is the TOML form; Session::run() drives a session's simulated PMU
// through a workload.
#pragma once

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

enum class Mode : std::uint8_t { user, kernel };

// A signal name's number: the same in every library of the process, so a device model resolves
// the names it counts once and compares numbers per segment. Signal 0 is "cycles", the implicit
// signal: one per unhalted cycle.
struct Signal {
  std::uint32_t id = 0;
  friend bool operator==(Signal, Signal) = default;
};
inline constexpr Signal kCyclesSignal{0};
// Interns a name (thread-safe; names are never forgotten).
PMC_API Signal signal(std::string_view name);
PMC_API std::string_view signal_name(Signal s);

struct SignalCount {
  Signal signal;
  std::uint64_t per_cycle = 0;  // occurrences in each cycle of the segment
};

struct PMC_API Segment {
  std::uint64_t cycles = 0;
  Mode mode = Mode::user;
  bool halted = false;               // unhalted-cycle events do not advance
  // Alpha 21064 extras (x86 models ignore them).
  unsigned ipl = 0;
  std::uint64_t pc_begin = 0, pc_end = 0;  // PCs executed, evenly spread over [begin, end)
  unsigned cpu = 0;                  // the CPU that runs the segment
  std::uint64_t pid = 0;             // the process running (0: none, the kernel's own)
  std::uint64_t parent = 0;          // pid was forked from this process (0: not said)
  // Occurrences per cycle by signal, each signal at most once; a view into the storage of the
  // Workload (or OwnedSegment) the segment came from.
  std::span<const SignalCount> signals;

  [[nodiscard]] std::uint64_t per_cycle(Signal s) const {
    if (s == kCyclesSignal) return halted ? 0 : 1;
    for (const SignalCount& c : signals)
      if (c.signal == s) return c.per_cycle;
    return 0;
  }
  [[nodiscard]] std::uint64_t per_cycle(std::string_view name) const;
};

// A segment that owns its signals: for building activity by hand.
//   OwnedSegment s(1000); s.signal("instructions", 2); device.run(s);
class PMC_API OwnedSegment {
 public:
  explicit OwnedSegment(std::uint64_t cycles = 0, Mode mode = Mode::user);
  OwnedSegment(const OwnedSegment& other);
  OwnedSegment& operator=(const OwnedSegment& other);
  // Sets a signal's occurrences per cycle (replacing an earlier value). Throws
  // invalid_argument for "cycles", which is implicit.
  OwnedSegment& signal(std::string_view name, std::uint64_t per_cycle);
  Segment& operator*() { return segment_; }
  Segment* operator->() { return &segment_; }
  [[nodiscard]] const Segment& get() const { return segment_; }
  operator const Segment&() const { return segment_; }  // NOLINT: a segment is what it is

 private:
  Segment segment_;
  std::vector<SignalCount> storage_;
};

class PMC_API Workload {
 public:
  std::string name;
  std::string description;
  std::string source;   // file it came from

  // Appends a segment, copying its signals into the workload's storage.
  void add(const Segment& segment);
  [[nodiscard]] std::size_t size() const { return records_.size(); }
  [[nodiscard]] bool empty() const { return records_.empty(); }
  // Segment i; its signals stay valid while the workload lives and is not added to.
  [[nodiscard]] Segment segment(std::size_t i) const;
  // Totals over the whole workload: cycles and each signal (throw when over 2^64 - 1).
  [[nodiscard]] std::uint64_t total_cycles() const;
  [[nodiscard]] std::uint64_t total(std::string_view signal) const;

 private:
  struct Record {
    std::uint64_t cycles;
    std::uint64_t pc_begin, pc_end;
    std::uint64_t pid, parent;
    std::uint32_t first, count;      // into signals_
    std::uint16_t cpu;
    std::uint8_t ipl;
    Mode mode;
    bool halted;
  };
  std::vector<Record> records_;
  std::vector<SignalCount> signals_;
};

// The TOML workload format (docs/workload-format.md). Errors carry file:line:column.
PMC_API Workload parse_workload(std::string_view toml, const std::string& name);
PMC_API Workload load_workload(const std::filesystem::path& file);

// What Session::run() did.
struct WorkloadRun {
  std::uint64_t cycles = 0;              // cycles of the workload
  std::uint64_t cycles_not_counted = 0;  // cycles of segments on CPUs the simulated PMU is not
  std::uint64_t interrupts = 0;          // overflow interrupts the device raised (its total)
};

}  // namespace pmc
