// Emulated counting: the hardware events of a chosen PMU, counted for a real program on a machine
// without one (docs/emulation.md). The program runs under Valgrind's cachegrind, which simulates
// caches configured from the chosen CPU's CPUID and a branch predictor; its per-line counts
// (instructions, loads, stores, conditional and indirect branches and their mispredictions, L1
// and last-level misses: user mode only) become the activity signals of the backend's device
// model, which counts them with its own rules. The same program and input give the same counts on
// every run. Events the emulation cannot produce (cycles, stalls, anything timing-based) and
// modifiers whose result depends on how events spread over cycles are refused, never estimated.
//
//   pmc::Hal hal = pmc::Hal::open(cfg);                  // access "sim", a CPUID dump
//   pmc::CacheHierarchy caches = pmc::cache_hierarchy(hal.cpu());
//   pmc::EmulatedRun run = pmc::run_under_valgrind({"./prog", "arg"}, caches);
//   pmc::SignalMap map = pmc::emulated_signals(hal, caches);
//   pmc::EmulatedCounts c = pmc::count_emulated(hal, map, {"INST_RETIRED"}, run.activity);
#pragma once
#if __cplusplus < 202002L
#error "<pmc/emulate.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>
#include <pmc/process.hpp>
#include <pmc/session.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc {

class Hal;
struct CpuInfo;

// ---------------------------------------------------------------------------------------------
// The simulated caches. Valgrind simulates three: the L1 instruction and data caches and one last
// level (LL), each set-associative with LRU replacement, write-allocate, a power-of-two number of
// sets and lines of at least 16 bytes.
struct CacheGeometry {
  std::uint64_t size = 0;  // bytes
  unsigned ways = 0;       // associativity (size / line: fully associative)
  unsigned line = 0;       // bytes
  friend bool operator==(const CacheGeometry&, const CacheGeometry&) = default;
};
// "32 KiB, 8-way, 64-byte lines"
PMC_API std::string describe(const CacheGeometry& cache);

struct CacheHierarchy {
  CacheGeometry l1i, l1d, ll;
  unsigned ll_level = 2;         // the CPU's level the LL stands for: 2 (no mid-level cache) or 3
  std::string source;            // where the geometry came from ("CPUID leaf 4", ..., "default")
  std::vector<std::string> notes;  // what was changed to fit Valgrind ("L3: 24,576 sets rounded ...")
};

// The chosen CPU's caches from its CPUID (docs/emulation.md, "Cache geometry"): Intel leaf 4,
// AMD leaf 8000001DH, the leaf 2 descriptors, AMD leaves 80000005H/80000006H, in that order of
// preference; default_cache_hierarchy() when the CPU description has none of them. Geometry
// Valgrind cannot simulate is adjusted (the sets rounded down to a power of two) and the change
// noted. Throws invalid_argument for a line below 16 bytes.
PMC_API CacheHierarchy cache_hierarchy(const CpuInfo& cpu);
// The documented default: L1I and L1D 32 KiB, 8-way, 64-byte lines; LL (an L2) 1 MiB, 16-way.
PMC_API CacheHierarchy default_cache_hierarchy();

// ---------------------------------------------------------------------------------------------
// What the program did, as cachegrind counted it. The quantities are cachegrind's events.
enum class Quantity : std::uint8_t {
  Ir,    // instructions executed
  Dr,    // data reads (a read-modify-write instruction counts once, here)
  Dw,    // data writes
  I1mr,  // L1 instruction-cache misses
  D1mr,  // L1 data-cache read misses
  D1mw,  // L1 data-cache write misses
  ILmr,  // last-level misses of instruction fetches
  DLmr,  // last-level misses of data reads
  DLmw,  // last-level misses of data writes
  Bc,    // conditional branches
  Bcm,   // conditional branches mispredicted
  Bi,    // indirect jumps and calls (returns are not included)
  Bim,   // indirect jumps and calls mispredicted
};
inline constexpr std::size_t kQuantities = 13;
PMC_API std::string_view quantity_name(Quantity q);         // "Ir"
PMC_API std::string_view quantity_description(Quantity q);  // "instructions executed"

struct PMC_API Activity {
  std::array<std::uint64_t, kQuantities> counts{};
  [[nodiscard]] std::uint64_t operator[](Quantity q) const { return counts[static_cast<std::size_t>(q)]; }
  std::uint64_t& operator[](Quantity q) { return counts[static_cast<std::size_t>(q)]; }
  Activity& operator+=(const Activity& other);  // throws invalid_argument past 2^64 - 1
  friend bool operator==(const Activity&, const Activity&) = default;
};

// One source line of one function (a cachegrind record): the unit of emulation.
struct SourceLine {
  std::size_t function = 0;  // index into ProgramActivity::functions
  std::string file;          // "???" when the code has no line information
  std::uint64_t line = 0;    // 0 when unknown
  Activity activity;
};

struct FunctionActivity {
  std::string name;   // the symbol cachegrind names ("main", "???" when it has none)
  std::string file;   // the file most of its instructions come from
  Activity activity;  // its lines added up
};

struct PMC_API ProgramActivity {
  std::string source;                     // the cachegrind file
  std::string command;                    // its "cmd:" line
  std::vector<std::string> description;   // its "desc:" lines (the simulated caches)
  std::array<bool, kQuantities> present{};  // which quantities the file has
  std::vector<FunctionActivity> functions;  // in order of first appearance
  std::vector<SourceLine> lines;            // in the file's order, one per (file, function, line)
  Activity total;                           // the "summary:" line (the lines add up to it)
  // The function of that name, or nullptr (the first when several files define one).
  [[nodiscard]] const FunctionActivity* function(std::string_view name) const;
};

// Reads cachegrind's output format (Valgrind manual, "Cachegrind Output File Format"). Every
// error names source:line; lines that do not add up to the summary are an error.
PMC_API ProgramActivity parse_cachegrind(std::string_view text, const std::string& source);
PMC_API ProgramActivity load_cachegrind(const std::filesystem::path& file);

// ---------------------------------------------------------------------------------------------
// Running a program under cachegrind.
struct ValgrindOptions {
  std::string valgrind = "valgrind";  // the executable (a name is looked up in $PATH)
  std::filesystem::path keep;         // copy cachegrind's output file here (empty: not kept)
};

struct EmulatedRun {
  ChildResult child;          // how the program ended (Valgrind exits as it did)
  ProgramActivity activity;
  CacheHierarchy caches;
  std::string valgrind;       // "valgrind-3.19.0" (from its log), "" when not found there
  std::vector<std::string> command;  // the Valgrind command line that ran
};

// Runs argv under `valgrind --tool=cachegrind` with cache and branch simulation and the given
// caches (no option file or $VALGRIND_OPTS is read), Valgrind's own messages kept apart from the
// program's output, and parses its output. The program's stdin, stdout and stderr are this
// process's. Throws not_found when Valgrind or the program is missing, and io with Valgrind's
// last message when it wrote no output.
PMC_API EmulatedRun run_under_valgrind(const std::vector<std::string>& argv, const CacheHierarchy& caches,
                                       const ValgrindOptions& options = {});

// ---------------------------------------------------------------------------------------------
// The device model's signals the activity becomes (docs/emulation.md has the table per model).
struct EmulatedSignal {
  std::string signal;              // the model's name ("data_mem_refs")
  std::vector<Quantity> terms;     // added up (Dr + Dw)
  std::string meaning;             // "loads and stores"
  std::string note;                // how it differs from the real PMU's, when it does
  // Named after a catalog event of this CPU ("MEM_INST_RETIRED.ALL_LOADS", "LS_DISPATCH:LD_DISPATCH"):
  // the model counts it for that event only, and that event counts it alone.
  bool event_signal = false;
};
// A signal the model counts that the emulation could produce on another CPU, not this one.
struct WithheldSignal {
  std::string signal;
  std::string reason;
};
// A catalog event of this CPU that the rules say cannot be emulated, and why.
struct RefusedEvent {
  std::string event;               // as the rules name it ("BR_INST_RETIRED.NEAR_TAKEN")
  std::string reason;
};
struct PMC_API SignalMap {
  std::string model;               // the device model ("p6")
  std::vector<EmulatedSignal> signals;
  std::vector<WithheldSignal> withheld;
  std::vector<RefusedEvent> refused;
  // "instructions (Ir), branches (Bc + Bi), ..." for messages (the signals of catalog events counted).
  [[nodiscard]] std::string describe() const;
};
// The signals of the Hal's device model, for these caches. Throws not_supported without a backend.
PMC_API SignalMap emulated_signals(const Hal& hal, const CacheHierarchy& caches);

// Whether an event can be emulated, found by running it on the device model (one session per
// probe): on a segment without activity (it must count nothing: else it counts cycles), and on
// each signal alone at one and two occurrences per cycle over one and two cycles (it must count
// each in proportion: else its count depends on how the activity spreads over cycles).
struct EmulationVerdict {
  bool producible = false;
  std::string reason;                                        // why not (empty when producible)
  std::vector<std::pair<std::string, std::uint64_t>> reads;  // signal, counts per occurrence
};
PMC_API EmulationVerdict check_emulated_event(const Hal& hal, const SignalMap& map, std::string_view event);
// The catalog events (with their default unit masks) that can be emulated on this CPU.
PMC_API std::vector<std::string> emulated_events(const Hal& hal, const SignalMap& map);
// Checks each event; throws not_supported naming every refused one and why, and what the
// emulation provides (the model's signals and the catalog events that count them), as
// count_emulated() does, so that a caller can refuse before running the program.
PMC_API void require_emulated_events(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events);

// ---------------------------------------------------------------------------------------------
// Counting. Each event is counted alone, over the whole activity (so no multiplexing and no
// scaling): the model's session runs the activity of each source line in turn, as segments in
// which each signal occurs at most once per cycle until its total is reached, and the count after
// each line is read. Those segments' cycles are bookkeeping, not time: events that count cycles
// are refused.
struct EmulatedEvent {
  std::string event;                // as given
  Reading reading;                  // identity and the total (time fields 0: no time is emulated)
  std::vector<std::pair<std::string, std::uint64_t>> reads;  // what it counts (check_emulated_event)
  std::uint64_t interrupts = 0;     // overflow interrupts the model raised for it
};
struct EmulatedCounts {
  std::vector<EmulatedEvent> events;
  std::vector<std::vector<std::uint64_t>> per_line;      // [event][ProgramActivity::lines index]
  std::vector<std::vector<std::uint64_t>> per_function;  // [event][ProgramActivity::functions index]
};
// Throws not_supported naming the event and what the emulation provides when one cannot be
// emulated (nothing is counted then), and for a Hal whose access is not "sim".
PMC_API EmulatedCounts count_emulated(const Hal& hal, const SignalMap& map, const std::vector<std::string>& events,
                                      const ProgramActivity& activity);

}  // namespace pmc

#endif  // C++20
