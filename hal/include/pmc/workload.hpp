// Activity: what a simulated CPU does, as run-length segments. A segment says "for N cycles,
// each cycle has k occurrences of each signal, in user or kernel mode". Device models apply
// their counting rules to a whole segment in closed form, so its length costs nothing.
// docs/workload-format.md is the TOML form and the compact form for large generated workloads;
// Session::run() drives a session's simulated PMU through a workload, or through a
// WorkloadReader that streams one from its file.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/workload.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
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
  // PCs executed, evenly spread over [begin, end): where a model that samples (the Alpha, P6,
  // archperf and AMD models) takes an interrupt in this segment.
  std::uint64_t pc_begin = 0, pc_end = 0;
  unsigned cpu = 0;                  // the CPU that runs the segment
  std::uint64_t pid = 0;             // the process running (0: none, the kernel's own)
  std::uint64_t parent = 0;          // pid was forked from this process (0: not said)
  // Occurrences per cycle by signal, each signal at most once; a view into the storage of the
  // Workload (or OwnedSegment) the segment came from. A model may also read a signal as a
  // level held through the segment (the Alpha 21064 model's `ipl`, docs/workload-format.md).
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
  // Room for `segments` segments with `signals` signal counts in all (no reallocation below).
  void reserve(std::size_t segments, std::size_t signals);
  void clear();  // no segments (the storage is kept)
  [[nodiscard]] std::size_t size() const { return records_.size(); }
  [[nodiscard]] bool empty() const { return records_.empty(); }
  // Segment i; its signals stay valid while the workload lives and is not added to.
  [[nodiscard]] Segment segment(std::size_t i) const;
  // Totals over the whole workload: cycles and each signal (throw when over 2^64 - 1).
  [[nodiscard]] std::uint64_t total_cycles() const;
  [[nodiscard]] std::uint64_t total(std::string_view signal) const;

 private:
  // 24 bytes a segment, plus 16 a signal; the PC range and the process, which only the models
  // that sample read, live apart (32 bytes) and only for the segments that have them.
  struct Record {
    std::uint64_t cycles;
    std::uint32_t first;             // into signals_
    std::uint32_t extra;             // into extras_, kNoExtra when the segment has none
    std::uint16_t count;             // signals
    std::uint16_t cpu;
    Mode mode;
    bool halted;
  };
  struct Extra {
    std::uint64_t pc_begin, pc_end;
    std::uint64_t pid, parent;
  };
  static constexpr std::uint32_t kNoExtra = ~std::uint32_t{0};
  std::vector<Record> records_;
  std::vector<SignalCount> signals_;
  std::vector<Extra> extras_;
};

namespace detail {
struct ReaderAccess;
}

// A workload file read one segment at a time: the compact form (docs/workload-format.md,
// "Compact form": a line per segment, for large generated workloads) is streamed, holding one
// line; a TOML workload is streamed one [[segment]] table at a time. Either is recognized by its
// content. Every error names file:line:column. Session::run(WorkloadReader&) counts one without
// the memory growing with the number of segments.
class PMC_API WorkloadReader {
 public:
  explicit WorkloadReader(const std::filesystem::path& file);  // throws io, or the header's error
  ~WorkloadReader();
  WorkloadReader(WorkloadReader&&) noexcept;
  WorkloadReader& operator=(WorkloadReader&&) noexcept;
  WorkloadReader(const WorkloadReader&) = delete;
  WorkloadReader& operator=(const WorkloadReader&) = delete;

  [[nodiscard]] const std::string& name() const;
  [[nodiscard]] const std::string& description() const;
  [[nodiscard]] const std::string& source() const;  // the file
  [[nodiscard]] bool compact() const;               // the compact form (else TOML)
  // The next segment, or nullptr after the last; it stays valid until the next call. Throws
  // with file:line:column for a malformed line, and when the totals so far (cycles, or a
  // signal over the whole workload) exceed 2^64 - 1.
  const Segment* next();
  // Where the segment next() returned was written: "file:line" (TOML: the file).
  [[nodiscard]] std::string where() const;
  void rewind();  // back before the first segment

 private:
  friend struct detail::ReaderAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The TOML workload format (docs/workload-format.md). Errors carry file:line:column.
PMC_API Workload parse_workload(std::string_view toml, const std::string& name);
// A workload file whole, TOML or the compact form (recognized by its content).
PMC_API Workload load_workload(const std::filesystem::path& file);
// Writes a workload in the compact form (docs/workload-format.md), for instance to convert a
// TOML one: its rows give the same segments, so it counts the same.
PMC_API void save_compact_workload(const Workload& workload, const std::filesystem::path& file);

// What Session::run() did.
struct WorkloadRun {
  std::uint64_t cycles = 0;              // cycles of the workload
  std::uint64_t cycles_not_counted = 0;  // cycles of segments on CPUs the simulated PMU is not
  std::uint64_t interrupts = 0;          // overflow interrupts the device raised (its total)
};

}  // namespace pmc

#endif  // C++20
