// The access seam: how a session reaches counters. A session holds up to three access methods
// and routes each event to one of them:
//   RegisterAccess  the backend's driver programs a RegisterFile: the simulated device model
//                   (access "sim") or /dev/cpu/N/msr (access "msr"); 64-bit totals are folded
//                   from the width-bit hardware counters by poll().
//   PerfAccess      Linux perf_event_open (perf_access.hpp): the backend's raw encodings
//                   (access "perf") and, whatever the backend's access, the OS software events.
//   TscAccess       rdtsc (tsc.hpp): the `tsc` event.
// The session owns scheduling (which counter each backend event uses), the event order and the
// readings; an access method owns its handles and the lifecycle below.
#pragma once

#include "context.hpp"

#include <pmc/sdk/backend.hpp>
#include <pmc/event.hpp>
#include <pmc/export.hpp>
#include <pmc/profile.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/sdk/profiling.hpp>
#include <pmc/sdk/register_file.hpp>
#include <pmc/session.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmc::detail {

// Where the access methods find the system (tests point these at a fake tree).
struct AccessOptions {
  std::filesystem::path msr_root = "/dev/cpu";  // <root>/<cpu>/msr
  std::filesystem::path proc_root = "/proc";    // <root>/sys/kernel/nmi_watchdog, perf_event_paranoid
  std::filesystem::path sysfs_root = "/sys";    // <root>/bus/event_source/devices/cpu
  // A hybrid part's PMU ("cpu_atom"): access "perf" opens CPU-wide events only on the CPUs of
  // <root>/bus/event_source/devices/<perf_pmu>/cpus; "" for every CPU.
  std::string perf_pmu;
  bool load_msr_module = true;                  // run `modprobe msr` when the device is missing (root only)
  // Multiplexing on the register path (more event sets than one): how long each set stays on
  // the counters before the next one is programmed. Access "sim": cycles of the workload
  // Session::run drives through the device; access "msr": ns of wall-clock time, checked by
  // poll() (4 ms, the kernel's default perf_event_mux_interval_ms).
  static constexpr std::uint64_t kRotationCycles = 100'000;
  std::uint64_t rotation_cycles = kRotationCycles;
  std::uint64_t rotation_ns = 4'000'000;
};

// One event's count as an access method reports it.
struct Count {
  std::uint64_t value = 0;         // 64-bit total; scaled to time_enabled when extrapolated
  std::uint64_t time_enabled = 0;  // ns
  std::uint64_t time_running = 0;  // ns
  bool extrapolated = false;
  int cpu = -1;                    // Scope each_cpu: the CPU; -1 otherwise
};

class Access {
 public:
  virtual ~Access();
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Counting on and off for every event of this access at once. start() after stop() resumes
  // (counts accumulate until reset()).
  virtual void start() = 0;
  virtual void stop() = 0;
  // Zeroes the counts and the times.
  virtual void reset() = 0;
  // Folds hardware counters into 64-bit totals where the access needs it.
  virtual void poll() {}
  // Per event in the order added: one Count, or one per CPU (Scope each_cpu).
  [[nodiscard]] virtual std::vector<std::vector<Count>> read() = 0;
  // The hot path: the same counts, event-major, into out (events x counts_per_event() of
  // them), allocating nothing. The default copies read(); the access methods override it.
  virtual void read_counts(std::span<Count> out);
  // Counts per event: one, or one per CPU counted separately (Scope each_cpu).
  [[nodiscard]] virtual std::size_t counts_per_event() const { return 1; }
};

// ---------------------------------------------------------------------------------------------
// Access selection (Hal::open): what access = "auto" means, and the reason probe prints.
struct AccessChoice {
  AccessKind access = AccessKind::sim;
  std::string reason;
};
struct PerfPmuFacts {
  bool exposed = false;        // a core PMU directory exists under bus/event_source/devices
  std::string directory;       // the one found (or the one looked for)
  std::string type;            // its perf type number, when readable
};
// Looks for the core PMU Linux perf exposes: devices/cpu (x86), cpu_core/cpu_atom (hybrid).
PerfPmuFacts find_perf_pmu(const std::filesystem::path& sysfs_root = "/sys");
// The perf_event_attr type of a PMU Linux perf exposes (<root>/bus/event_source/devices/NAME/type),
// nullopt when there is none or it does not read as a number.
std::optional<std::uint32_t> perf_pmu_type(const std::filesystem::path& sysfs_root, std::string_view name);
// The rules of access = "auto" (docs/user-guide.md "Access methods"); `configured` is the
// config's value and `origin` where it came from; `backend_matches` is the backend's probe
// verdict on this CPU; `native` whether the CPU is this machine's.
AccessChoice choose_access(const std::string& configured, const std::string& origin, bool native,
                                   bool backend_matches, const std::string& backend, const PerfPmuFacts& pmu);

// ---------------------------------------------------------------------------------------------
// HAL events: counted by pmchal itself whatever the backend (and with none).
enum class HalEventKind { tsc, software };
struct HalEventInfo {
  const char* name;        // canonical name
  const char* alias;       // perf's other spelling, or nullptr
  HalEventKind kind;
  std::uint64_t config;    // PERF_COUNT_SW_* for software events
  const char* unit;        // Reading::unit
  const char* description;
  bool samples;            // takes period=N (ns) or freq=N (Hz): perf samples the IP every N ns of it
};
const std::vector<HalEventInfo>& hal_events();
struct HalEvent {
  const HalEventInfo* info = nullptr;
  Encoding encoding;            // canonical "hal::NAME" (software: ":u=U:k=K"), config, no counters
  bool exclude_user = false;    // software events: the u and k modifiers
  bool exclude_kernel = false;
  std::uint64_t period = 0;     // cpu-clock, task-clock: `period=N` samples every N ns; 0: counts only
  std::uint64_t frequency = 0;  // cpu-clock, task-clock: `freq=N` samples about N times a second
};
// The HAL event an event string names ("task-clock", "cs:u", "hal::tsc"), or nullopt when it
// is not one (then it is the backend's). Throws for a HAL event with bad modifiers, and for an
// unknown name with the "hal::" prefix.
std::optional<HalEvent> find_hal_event(const EventSpec& spec);
// Whether an encoding is a HAL event's (its canonical name starts with "hal::").
[[nodiscard]] bool is_hal_encoding(const Encoding& e);

// ---------------------------------------------------------------------------------------------
// The register path: the backend's driver on a RegisterFile.
//
// Multiplexing: the session splits its backend events into event sets, each of which the PMU
// holds at once (a user's group stays in one set). With one set every event has its counter all
// the time. With several, the sets take turns on the counters, as the kernel rotates perf
// groups: each set runs for one slice (AccessOptions::rotation_cycles of the simulated workload
// on access "sim", rotation_ns of wall-clock time on access "msr"), then the counters are stopped,
// folded, reprogrammed with the next set and started again. Each event keeps the time it was
// enabled (the session's) and the time its set was on the counters, and its count is scaled to
// the enabled time (scale_count, extrapolated) like a multiplexed perf event. Times are cycles of
// the simulated workload on "sim" (the device has no clock) and ns on "msr".
// An event that needs an extra register (Encoding::extra) names the MSR its placement chose
// (pmc::place); the access writes the event's value there before the set counts and clears it
// after (0), so a set's values never leak into the next set's counts.
struct EventSet {
  std::vector<std::size_t> events;             // indexes into the access's encodings
  std::vector<const CounterInfo*> counters;    // parallel: where each one counts in this set
  std::vector<std::uint32_t> extra_msrs;       // parallel, or empty: its extra MSR, 0 for none
};

class RegisterAccess final : public Access {
 public:
  // Access "sim": the device a model plugin built.
  RegisterAccess(std::shared_ptr<const Context> ctx, DeviceHandle device, AccessOptions options = {});
  // Access "msr": the MSR device.
  RegisterAccess(std::shared_ptr<const Context> ctx, std::unique_ptr<RegisterFile> msr, AccessOptions options = {});
  ~RegisterAccess() override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  // Replaces the event set(s) (the session regroups all backend events on each add); only while
  // stopped. Every event is in exactly one set. The counts restart from zero.
  void assign(std::vector<Encoding> encodings, std::vector<EventSet> sets);
  void start() override;
  void stop() override;
  void reset() override;
  // Folds the active set's counters; on "msr", rotates to the next set once its slice is over.
  void poll() override;
  [[nodiscard]] std::vector<std::vector<Count>> read() override;
  void read_counts(std::span<Count> out) override;  // allocates nothing
  // Access "sim": the device ran `cycles` cycles (Session::run calls it after each chunk): the
  // session's time advances, and the next set is programmed when the active one's slice is over.
  void advance(std::uint64_t cycles);
  // Access "sim": cycles until the active set's slice ends (the most Session::run may run in one
  // chunk); no limit with one set or while stopped.
  [[nodiscard]] std::uint64_t cycles_to_rotation() const;
  [[nodiscard]] std::size_t set_count() const { return sets_.size(); }
  [[nodiscard]] std::size_t active_set() const { return active_; }
  [[nodiscard]] std::uint64_t rotations() const { return rotations_; }
  // The counter an event uses (in its set).
  [[nodiscard]] const CounterInfo* counter(std::size_t event) const { return counter_of_.at(event); }
  // Session::run's fast forward (internal; one event set): an event's 64-bit total as folded so
  // far, and an amount added to it: the whole wraps of its counter when the device went through
  // a long segment in one run() call (a fold sees the difference modulo 2^width only).
  [[nodiscard]] std::size_t events() const { return encodings_.size(); }
  [[nodiscard]] std::uint64_t total(std::size_t event) const { return totals_.at(event); }
  void add_to_total(std::size_t event, std::uint64_t amount) { totals_.at(event) += amount; }
  // Profiling through the backend's ProfilingDriver; only while stopped. The request is
  // programmed with the events at the next start.
  void set_profile(const ProfilingDriver* driver, ProfileRequest request);
  // The simulated device (access "sim"), or nullptr.
  [[nodiscard]] Device* device() const { return device_.device.get(); }
  // The descriptor of the model plugin that built it (access "sim"), or nullptr.
  [[nodiscard]] const pmc_model_descriptor* model_descriptor() const {
    return device_.model ? device_.model->descriptor : nullptr;
  }
  [[nodiscard]] std::optional<LevelHistogram> levels();    // nullopt: not asked or not yet programmed
  [[nodiscard]] std::optional<PcProfile> pc_profile();
  [[nodiscard]] RegisterFile& registers() { return *regs_; }

 private:
  void program();
  void rotate();
  void write_extras(bool on);  // the active set's extra MSRs: their values, or 0
  void fold();               // the active set's counters into the 64-bit totals
  void close_slice(std::uint64_t t);  // the active set's running time up to t
  [[nodiscard]] std::uint64_t now() const;  // cycles (sim) or ns (msr)
  [[nodiscard]] const std::vector<Assignment>& assignments() const;  // of the active set

  std::string name_;
  std::shared_ptr<const Context> ctx_;
  AccessOptions options_;
  DeviceHandle device_;                 // access "sim"
  std::unique_ptr<RegisterFile> msr_;   // access "msr"
  RegisterFile* regs_ = nullptr;        // the one in use
  std::vector<Encoding> encodings_;
  std::vector<EventSet> sets_;
  std::vector<std::vector<Assignment>> assignments_;  // per set
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> extras_;  // per set: MSR, value
  std::vector<std::size_t> set_of_;               // per event
  std::vector<const CounterInfo*> counter_of_;    // per event
  std::size_t active_ = 0;
  std::uint64_t rotations_ = 0;
  const ProfilingDriver* profiler_ = nullptr;
  ProfileRequest profile_;
  std::vector<std::uint64_t> totals_;    // 64-bit counts while on a counter (unscaled)
  std::vector<std::uint64_t> last_raw_;  // hardware value at the last fold
  std::vector<std::uint64_t> running_;   // per event: time its set was on the counters
  bool running_now_ = false;
  bool programmed_ = false;
  std::uint64_t sim_clock_ = 0;         // access "sim": cycles advanced while counting
  std::uint64_t started_ = 0;           // now() at the last start
  std::uint64_t enabled_ = 0;           // time counted before the last start
  std::uint64_t slice_start_ = 0;       // now() when the active set went on the counters
};

}  // namespace pmc::detail
