// Regions: instrumenting a program once and measuring it many ways, as LIKWID's marker API
// (LIKWID_MARKER_START/STOP) and PAPI's high-level API (PAPI_hl_region_begin/end) do.
// docs/regions.md is the guide.
//
//   pmc::ScopedRegion r("solve");                          // or regions::begin / regions::end
//   static const auto id = pmc::regions::id("inner");      // a number: no lookup per call
//   pmc::regions::begin(id); ... pmc::regions::end(id);
//
// A region is named; regions nest (an inner region's counts are also its outer region's), and
// each thread counts its own with a session of its own (Scope::this_thread). Each call's counts
// are folded into the region's totals: calls, and per event the sum, the smallest and the largest
// count of one call, over every call on every thread. Which events: $PMC_REGION_EVENTS
// ("cycles,instructions"), else the config file's [regions] events, else task-clock; the HAL is
// opened from the config file found as pmc finds it. The results are written as JSON at exit to
// $PMC_REGION_OUTPUT (else the config's [regions] output, else nowhere), or on demand (write()).
//
// The calls between begin and end cost one read of the session's counters each and allocate
// nothing once a thread has seen a region (bench/bench_regions.cpp measures them).
#pragma once
#if __cplusplus < 202002L
#error "<pmc/region.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pmc {

// One event over a region's calls: the counts of single calls summed, and the smallest and the
// largest of them.
struct RegionEventStats {
  std::string event;
  std::uint64_t sum = 0;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};

struct RegionStats {
  std::string name;
  std::uint64_t calls = 0;        // begin/end pairs completed, on every thread
  unsigned threads = 0;           // threads that completed at least one
  std::uint64_t time_ns = 0;      // wall-clock time inside the region (CLOCK_MONOTONIC), summed
  std::uint64_t min_time_ns = 0;  // of one call
  std::uint64_t max_time_ns = 0;
  std::vector<RegionEventStats> events;  // in the order of RegionReport::events
};

// Everything the regions counted: what region_report_json() writes and pmc stat --regions reads.
struct RegionReport {
  std::string backend;              // the backend the sessions counted with; "" without one
  std::string access;               // its access method ("sim", "perf", "msr"), "" without one
  std::string cpu;                  // describe() of the CPU
  std::vector<std::string> events;  // the event strings counted
  std::vector<RegionStats> regions; // in the order their names were first seen; regions never
                                    // completed are left out
  std::string error;                // non-empty: regions could not be set up (a bad event in
                                    // $PMC_REGION_EVENTS, ...) and nothing was counted; this says why
  long pid = 0;                     // the process that wrote it
};

namespace regions {

using Id = std::uint32_t;

// Sets the regions up explicitly: counts `events` with a HAL opened from `config`. Only before
// the first region of the process (throws invalid_argument after), and instead of the
// environment. Throws what Hal::open and Session::add throw for a bad config or event.
PMC_API void init(const Config& config, std::vector<std::string> events);

// A region's number, registering the name the first time (any thread). Names are never
// forgotten. The first call sets the regions up from the environment when init() was not called;
// a failure there is thrown by this and every later region call (and written into the report).
PMC_API Id id(std::string_view name);

// Begins / ends a region on the calling thread. begin throws invalid_argument when the region is
// already open on this thread (regions do not recurse); end when it is not the innermost open one.
PMC_API void begin(Id id);
PMC_API void end(Id id);
PMC_API void begin(std::string_view name);
PMC_API void end(std::string_view name);

// The totals so far, over every thread (threads still inside a region add only their completed
// calls).
[[nodiscard]] PMC_API RegionReport report();
// Writes report() as JSON to a file ("-": stdout). Throws io when the file cannot be written.
PMC_API void write(const std::filesystem::path& path);
// Zeroes the totals of every region on every thread.
PMC_API void reset();

// The calling thread's session (created on first use): for running a simulated workload inside
// a region (Session::run), or reading its counters directly.
PMC_API Session& thread_session();

}  // namespace regions

// Begins a region on construction and ends it on destruction (an error while ending is dropped:
// a destructor cannot report it).
class PMC_API ScopedRegion {
 public:
  explicit ScopedRegion(regions::Id id);
  explicit ScopedRegion(std::string_view name);
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
  ~ScopedRegion();

 private:
  regions::Id id_;
};

// The JSON form (docs/regions.md, "Output"), its reader (pmc stat --regions), and the table pmc
// prints from it. The reader throws parse with the file name for malformed JSON.
[[nodiscard]] PMC_API std::string region_report_json(const RegionReport& report);
[[nodiscard]] PMC_API RegionReport parse_region_report(std::string_view json, const std::string& name);
[[nodiscard]] PMC_API RegionReport load_region_report(const std::filesystem::path& path);
[[nodiscard]] PMC_API std::string format_region_table(const RegionReport& report);

}  // namespace pmc

#endif  // C++20
