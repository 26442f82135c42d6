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
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// Where the access methods find the system (tests point these at a fake tree).
struct AccessOptions {
  std::filesystem::path msr_root = "/dev/cpu";  // <root>/<cpu>/msr
  std::filesystem::path proc_root = "/proc";    // <root>/sys/kernel/nmi_watchdog, perf_event_paranoid
  std::filesystem::path sysfs_root = "/sys";    // <root>/bus/event_source/devices/cpu
  bool load_msr_module = true;                  // run `modprobe msr` when the device is missing (root only)
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
};

// ---------------------------------------------------------------------------------------------
// Access selection (Hal::open): what access = "auto" means, and the reason probe prints.
struct AccessChoice {
  std::string access;  // "sim" | "perf" | "msr"
  std::string reason;
};
struct PerfPmuFacts {
  bool exposed = false;        // a core PMU directory exists under bus/event_source/devices
  std::string directory;       // the one found (or the one looked for)
  std::string type;            // its perf type number, when readable
};
// Looks for the core PMU Linux perf exposes: devices/cpu (x86), cpu_core/cpu_atom (hybrid).
PerfPmuFacts find_perf_pmu(const std::filesystem::path& sysfs_root = "/sys");
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
  bool samples;            // takes period=N (ns): perf samples the IP every N ns of it
};
const std::vector<HalEventInfo>& hal_events();
struct HalEvent {
  const HalEventInfo* info = nullptr;
  Encoding encoding;            // canonical "hal::NAME" (software: ":u=U:k=K"), config, no counters
  bool exclude_user = false;    // software events: the u and k modifiers
  bool exclude_kernel = false;
  std::uint64_t period = 0;     // cpu-clock, task-clock: `period=N` samples every N ns; 0: counts only
};
// The HAL event an event string names ("task-clock", "cs:u", "hal::tsc"), or nullopt when it
// is not one (then it is the backend's). Throws for a HAL event with bad modifiers, and for an
// unknown name with the "hal::" prefix.
std::optional<HalEvent> find_hal_event(const EventSpec& spec);
// Whether an encoding is a HAL event's (its canonical name starts with "hal::").
[[nodiscard]] bool is_hal_encoding(const Encoding& e);

// ---------------------------------------------------------------------------------------------
// The register path: the backend's driver on a RegisterFile.
class RegisterAccess final : public Access {
 public:
  // Access "sim": the device a model plugin built.
  RegisterAccess(std::shared_ptr<const Context> ctx, DeviceHandle device);
  // Access "msr": the MSR device.
  RegisterAccess(std::shared_ptr<const Context> ctx, std::unique_ptr<RegisterFile> msr);
  ~RegisterAccess() override;
  [[nodiscard]] std::string_view name() const override { return name_; }
  // Replaces the event set (the session reschedules all backend events on each add); only
  // while stopped. The counts restart from zero.
  void assign(std::vector<Encoding> encodings, std::vector<const CounterInfo*> counters);
  void start() override;
  void stop() override;
  void reset() override;
  void poll() override;
  [[nodiscard]] std::vector<std::vector<Count>> read() override;
  // Profiling through the backend's ProfilingDriver; only while stopped. The request is
  // programmed with the events at the next start.
  void set_profile(const ProfilingDriver* driver, ProfileRequest request);
  // The simulated device (access "sim"), or nullptr.
  [[nodiscard]] Device* device() const { return device_.device.get(); }
  [[nodiscard]] std::optional<LevelHistogram> levels();    // nullopt: not asked or not yet programmed
  [[nodiscard]] std::optional<PcProfile> pc_profile();
  [[nodiscard]] RegisterFile& registers() { return *regs_; }

 private:
  void program();
  [[nodiscard]] std::vector<Assignment> assignments() const;

  std::string name_;
  std::shared_ptr<const Context> ctx_;
  DeviceHandle device_;                 // access "sim"
  std::unique_ptr<RegisterFile> msr_;   // access "msr"
  RegisterFile* regs_ = nullptr;        // the one in use
  std::vector<Encoding> encodings_;
  std::vector<const CounterInfo*> counters_;
  const ProfilingDriver* profiler_ = nullptr;
  ProfileRequest profile_;
  std::vector<std::uint64_t> totals_;    // 64-bit counts
  std::vector<std::uint64_t> last_raw_;  // hardware value at the last poll
  bool running_ = false;
  bool programmed_ = false;
  std::uint64_t started_ns_ = 0;
  std::uint64_t enabled_ns_ = 0;
};

// Monotonic nanoseconds (the session's wall clock for time_enabled).
std::uint64_t monotonic_ns();

}  // namespace pmc::detail
