#include "access.hpp"

#include "bundled.hpp"

#include "clock.hpp"
#include "perf_event.hpp"
#include "text.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <linux/perf_event.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <system_error>

namespace pmc::detail {

Access::~Access() = default;

void Access::read_counts(std::span<Count> out) {
  std::size_t k = 0;
  for (const auto& event : read())
    for (const Count& c : event)
      if (k < out.size()) out[k++] = c;
}

// ---------------------------------------------------------------------------------------------
// Access selection

PerfPmuFacts find_perf_pmu(const std::filesystem::path& sysfs_root) {
  // Text and system calls only: Hal::open asks this in every process that opens a HAL.
  PerfPmuFacts f;
  const std::string devices = detail::joined_path(sysfs_root.native(), "bus/event_source/devices");
  f.directory = devices + "/cpu";
  for (const char* name : {"cpu", "cpu_core", "cpu_atom"}) {
    std::string dir = detail::joined_path(devices, name);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) continue;
    f.exposed = true;
    const int fd = ::open((dir + "/type").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char text[32];
      const ssize_t n = ::read(fd, text, sizeof text);
      ::close(fd);
      if (n > 0) f.type.assign(text, static_cast<std::size_t>(n));
      if (const auto eol = f.type.find('\n'); eol != std::string::npos) f.type.erase(eol);
    }
    f.directory = std::move(dir);
    break;
  }
  return f;
}

std::optional<std::uint32_t> perf_pmu_type(const std::filesystem::path& sysfs_root, std::string_view name) {
  std::ifstream in(sysfs_root / "bus" / "event_source" / "devices" / std::string(name) / "type");
  std::string text;
  std::uint32_t type = 0;
  if (!std::getline(in, text)) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), type);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return type;
}

// (The reasons are joined as text, not formatted: Hal::open makes one in every process that
// opens a HAL, and nothing else there formats.)
AccessChoice choose_access(const std::string& configured, const std::string& origin, bool native,
                           bool backend_matches, const std::string& backend, const PerfPmuFacts& pmu) {
  if (const std::optional<AccessKind> given = parse_access(configured)) {
    std::string reason = "access = \"" + configured + "\" (" + origin + ")";
    if (*given != AccessKind::sim && !native)
      reason += "; the CPU is a CPUID dump, so a session with " + backend + " events fails: '" + configured +
                "' counts this machine's PMU, not the dump's";
    return {*given, reason};
  }
  if (configured != "auto")
    throw Error(errc::invalid_argument, fmt::format("access = \"{}\" ({}): not an access method (auto, sim, perf or msr)",
                                                    configured, origin));
  const std::string head = "access = \"auto\" (" + origin + "): ";
  if (!native)
    return {AccessKind::sim, head + "sim, because the CPU is a CPUID dump: its " + backend +
                                 " PMU can only be counted on the simulated device"};
  if (!pmu.exposed)
    return {AccessKind::sim, head + "sim, because this machine exposes no hardware PMU to Linux perf (" + pmu.directory +
                                 " missing): the hypervisor (or the kernel) exposes no PMU to this machine, so hardware "
                                 "events cannot be counted for real here; " +
                                 backend + " events and workloads count on the simulated device"};
  if (!backend_matches)
    return {AccessKind::sim, head + "sim, because the " + backend +
                                 " backend was named but does not match this CPU, so its encodings would be wrong for "
                                 "the PMU Linux perf exposes (" +
                                 pmu.directory + ")"};
  return {AccessKind::perf, head + "perf, because Linux perf exposes the hardware PMU (" + pmu.directory +
                                (pmu.type.empty() ? "" : ", type " + pmu.type) + ") and the " + backend +
                                " backend matches this CPU"};
}

// ---------------------------------------------------------------------------------------------
// HAL events

const std::vector<HalEventInfo>& hal_events() {
  static const std::vector<HalEventInfo> events = {
      {"tsc", nullptr, HalEventKind::tsc, 0, "ticks",
       "time-stamp counter ticks (rdtsc) between start and stop; its rate: pmc::tsc_frequency()", false},
      {"task-clock", nullptr, HalEventKind::software, PERF_COUNT_SW_TASK_CLOCK, "ns",
       "CPU time of the counted tasks (perf software event)", true},
      {"cpu-clock", nullptr, HalEventKind::software, PERF_COUNT_SW_CPU_CLOCK, "ns",
       "time on the CPU clock while the counted tasks run (perf software event)", true},
      {"context-switches", "cs", HalEventKind::software, PERF_COUNT_SW_CONTEXT_SWITCHES, "",
       "context switches (perf software event)", false},
      {"cpu-migrations", "migrations", HalEventKind::software, PERF_COUNT_SW_CPU_MIGRATIONS, "",
       "moves of a counted task to another CPU (perf software event)", false},
      {"page-faults", "faults", HalEventKind::software, PERF_COUNT_SW_PAGE_FAULTS, "",
       "page faults, minor and major (perf software event)", false},
      {"minor-faults", nullptr, HalEventKind::software, PERF_COUNT_SW_PAGE_FAULTS_MIN, "",
       "page faults served without I/O (perf software event)", false},
      {"major-faults", nullptr, HalEventKind::software, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "",
       "page faults that needed I/O (perf software event)", false},
  };
  return events;
}

bool is_hal_encoding(const Encoding& e) { return e.canonical.rfind("hal::", 0) == 0; }

std::optional<HalEvent> find_hal_event(const EventSpec& spec) {
  if (!spec.pmu.empty() && spec.pmu != "hal") return std::nullopt;
  const HalEventInfo* found = nullptr;
  for (const auto& e : hal_events())
    if (iequal(spec.name, e.name) || (e.alias && iequal(spec.name, e.alias))) found = &e;
  if (!found) {
    if (spec.pmu == "hal") {
      std::vector<std::string> names;
      for (const auto& e : hal_events()) names.emplace_back(e.name);
      throw Error(errc::not_found, event_error(spec, 1, fmt::format("unknown HAL event '{}' (HAL events: {})",
                                                                    spec.name, join(names))));
    }
    return std::nullopt;
  }
  if (!spec.unit_masks.empty())
    throw Error(errc::unit_mask, event_error(spec, spec.unit_mask_columns.front(),
                                             fmt::format("HAL event {} takes no unit masks", found->name)));
  // Software events take the privilege filters u and k (perf's exclude_user/exclude_kernel),
  // with the libpfm4 meaning: naming one of them clears the other unless it is named too.
  std::optional<std::uint64_t> u, k, period, freq;
  const bool clock = found->samples;
  for (const auto& m : spec.modifiers) {
    if (m.name == "period" || m.name == "freq") {
      // Sampling: perf's sample_period in ns of the clock, or sample_freq (freq = 1) in samples
      // a second; only the two clock events have one.
      const bool is_freq = m.name == "freq";
      if (!clock)
        throw Error(errc::attribute,
                    event_error(spec, m.column,
                                fmt::format("modifier '{}' samples the clock events cpu-clock and task-clock only, "
                                            "not HAL event {}",
                                            m.name, found->name)));
      std::optional<std::uint64_t>& slot = is_freq ? freq : period;
      if (slot)
        throw Error(errc::attribute, event_error(spec, m.column, fmt::format("modifier '{}' given twice", m.name)));
      if (!m.value || *m.value == 0)
        throw Error(errc::attribute_value,
                    event_error(spec, m.column,
                                is_freq ? "modifier 'freq' takes a sampling frequency in samples a second above 0 "
                                          "(freq=0 is no frequency)"
                                        : "modifier 'period' takes a sampling period in ns above 0"));
      slot = *m.value;
      if (period && freq)
        throw Error(errc::feature_combination,
                    event_error(spec, m.column,
                                "freq= and period= together: an event samples every N ns (period=N) or about N times "
                                "a second (freq=N), not both"));
      continue;
    }
    const bool privilege = m.name == "u" || m.name == "k";
    if (!privilege || found->kind == HalEventKind::tsc)
      throw Error(errc::attribute,
                  event_error(spec, m.column,
                              fmt::format("unknown modifier '{}' for HAL event {} (accepted: {})", m.name, found->name,
                                          found->kind == HalEventKind::tsc ? "none" : clock ? "u, k, period, freq" : "u, k")));
    auto& slot = m.name == "u" ? u : k;
    if (slot) throw Error(errc::attribute, event_error(spec, m.column, fmt::format("modifier '{}' given twice", m.name)));
    std::uint64_t v = m.value.value_or(1);
    if (v > 1)
      throw Error(errc::attribute_value,
                  event_error(spec, m.column, fmt::format("modifier '{}' takes 0 or 1, not {}", m.name, v)));
    slot = v;
  }
  if (u || k) {
    if (!u) u = 0;
    if (!k) k = 0;
    if (*u == 0 && *k == 0)
      throw Error(errc::feature_combination, event_error(spec, spec.modifiers.front().column,
                                                         "u=0 and k=0 together count nothing"));
  } else {
    u = k = 1;
  }
  HalEvent h;
  h.info = found;
  h.encoding.event = spec.text;
  h.encoding.config = found->config;
  h.encoding.name = found->name;
  h.encoding.canonical = found->kind == HalEventKind::tsc ? fmt::format("hal::{}", found->name)
                                                          : fmt::format("hal::{}:u={}:k={}", found->name, *u, *k);
  if (period) h.encoding.canonical += fmt::format(":period={}", *period);
  if (freq) h.encoding.canonical += fmt::format(":freq={}", *freq);
  h.exclude_user = *u == 0;
  h.exclude_kernel = *k == 0;
  h.period = period.value_or(0);
  h.frequency = freq.value_or(0);
  return h;
}

// ---------------------------------------------------------------------------------------------
// The register path

RegisterAccess::RegisterAccess(std::shared_ptr<const Context> ctx, DeviceHandle device, AccessOptions options)
    : name_("sim"), ctx_(std::move(ctx)), options_(std::move(options)), device_(std::move(device)),
      regs_(device_.device.get()) {}

RegisterAccess::RegisterAccess(std::shared_ptr<const Context> ctx, std::unique_ptr<RegisterFile> msr,
                               AccessOptions options)
    : name_("msr"), ctx_(std::move(ctx)), options_(std::move(options)), msr_(std::move(msr)), regs_(msr_.get()) {}

RegisterAccess::~RegisterAccess() {
  if (running_now_) {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; the counters are switched off as far as possible
    }
  }
}

std::uint64_t RegisterAccess::now() const { return device_.device ? sim_clock_ : monotonic_ns(); }

const std::vector<Assignment>& RegisterAccess::assignments() const {
  static const std::vector<Assignment> kNone;
  return assignments_.empty() ? kNone : assignments_[active_];
}

void RegisterAccess::assign(std::vector<Encoding> encodings, std::vector<EventSet> sets) {
  if (running_now_) throw Error(errc::invalid_argument, "cannot change the events while the counters run");
  set_of_.assign(encodings.size(), 0);
  counter_of_.assign(encodings.size(), nullptr);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    if (sets[s].events.size() != sets[s].counters.size())
      throw Error(errc::invalid_argument, "an event set needs one counter per event");
    for (std::size_t i = 0; i < sets[s].events.size(); ++i) {
      const std::size_t e = sets[s].events[i];
      if (e >= encodings.size() || counter_of_[e])
        throw Error(errc::invalid_argument, "every event belongs to exactly one event set");
      set_of_[e] = s;
      counter_of_[e] = sets[s].counters[i];
    }
  }
  for (const CounterInfo* c : counter_of_)
    if (!c) throw Error(errc::invalid_argument, "every event belongs to exactly one event set");
  encodings_ = std::move(encodings);
  sets_ = std::move(sets);
  active_ = 0;
  // Each set's assignments and extra MSR values, made once: a rotation allocates nothing.
  assignments_.clear();
  extras_.clear();
  for (const EventSet& set : sets_) {
    std::vector<Assignment> a;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> x;
    for (std::size_t i = 0; i < set.events.size(); ++i) {
      const Encoding& e = encodings_[set.events[i]];
      a.push_back({set.counters[i], &e});
      if (e.extra.empty()) continue;
      const std::uint32_t msr = i < set.extra_msrs.size() ? set.extra_msrs[i] : 0;
      if (msr == 0)
        throw Error(errc::invalid_argument,
                    fmt::format("event '{}' needs extra register '{}', and its event set names no MSR for it",
                                e.event, e.extra));
      const auto held = std::find_if(x.begin(), x.end(), [&](const auto& p) { return p.first == msr; });
      if (held != x.end() && held->second != e.extra_value)
        throw Error(errc::invalid_argument,
                    fmt::format("event '{}' needs 0x{:X} in MSR 0x{:X}, which its event set gives 0x{:X}", e.event,
                                e.extra_value, msr, held->second));
      if (held == x.end()) x.emplace_back(msr, e.extra_value);
    }
    assignments_.push_back(std::move(a));
    extras_.push_back(std::move(x));
  }
  totals_.assign(encodings_.size(), 0);
  last_raw_.assign(encodings_.size(), 0);
  running_.assign(encodings_.size(), 0);
  enabled_ = 0;
  programmed_ = false;
}

// Programs the active set (the driver gives a counter no event of the set uses a selection of 0)
// and zeroes its counters.
void RegisterAccess::program() {
  const Backend& b = ctx_->backend();
  const PmuContext pc = ctx_->pmu_context();
  const std::vector<Assignment>& set = assignments();
  b.program(*regs_, pc, set);
  for (const Assignment& a : set) b.write_counter(*regs_, pc, *a.counter, 0);
  if (profiler_ && !profile_.empty()) profiler_->program_profile(*regs_, pc, set, profile_);
  for (std::size_t e : sets_[active_].events) last_raw_[e] = 0;
  programmed_ = true;
}

void RegisterAccess::set_profile(const ProfilingDriver* driver, ProfileRequest request) {
  if (running_now_) throw Error(errc::invalid_argument, "cannot change profiling while the counters run");
  profiler_ = driver;
  profile_ = std::move(request);
  programmed_ = false;  // programmed with the events at the next start; the counts carry on
}

std::optional<LevelHistogram> RegisterAccess::levels() {
  if (!profiler_ || !profile_.levels || !programmed_) return std::nullopt;
  return profiler_->read_levels(*regs_, ctx_->pmu_context());
}

std::optional<PcProfile> RegisterAccess::pc_profile() {
  if (!profiler_ || !profile_.pc || !programmed_) return std::nullopt;
  return profiler_->read_pc_profile(*regs_, ctx_->pmu_context(), *profile_.pc);
}

// The extra registers of the active set (offcore response, load latency, frontend): written
// before its counters start, cleared once they stopped.
void RegisterAccess::write_extras(bool on) {
  if (extras_.empty()) return;
  for (const auto& [msr, value] : extras_[active_]) regs_->write(msr, on ? value : 0);
}

void RegisterAccess::start() {
  if (running_now_ || encodings_.empty()) return;
  if (!programmed_) program();
  write_extras(true);
  ctx_->backend().start(*regs_, ctx_->pmu_context(), assignments());
  running_now_ = true;
  started_ = now();
  slice_start_ = started_;
}

void RegisterAccess::fold() {
  if (sets_.empty()) return;
  const Backend& b = ctx_->backend();
  const PmuContext pc = ctx_->pmu_context();
  const EventSet& set = sets_[active_];
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    const std::size_t e = set.events[i];
    const CounterInfo& c = *set.counters[i];
    const std::uint64_t raw = b.read_counter(*regs_, pc, c);
    totals_[e] += (raw - last_raw_[e]) & c.width_mask();  // wrap-corrected delta
    last_raw_[e] = raw;
  }
}

void RegisterAccess::close_slice(std::uint64_t t) {
  for (std::size_t e : sets_[active_].events) running_[e] += t - slice_start_;
  slice_start_ = t;
}

// The active set's slice is over: its counters stop and are folded, the next set is programmed
// onto them and started.
void RegisterAccess::rotate() {
  const Backend& b = ctx_->backend();
  const PmuContext pc = ctx_->pmu_context();
  b.stop(*regs_, pc, assignments());
  write_extras(false);
  fold();
  close_slice(now());
  active_ = (active_ + 1) % sets_.size();
  program();
  write_extras(true);
  b.start(*regs_, pc, assignments());
  ++rotations_;
}

void RegisterAccess::poll() {
  fold();
  if (running_now_ && !device_.device && sets_.size() > 1 && now() - slice_start_ >= options_.rotation_ns) rotate();
}

void RegisterAccess::advance(std::uint64_t cycles) {
  if (!running_now_ || !device_.device) return;
  sim_clock_ += cycles;
  if (sets_.size() > 1 && sim_clock_ - slice_start_ >= options_.rotation_cycles) rotate();
}

std::uint64_t RegisterAccess::cycles_to_rotation() const {
  if (!running_now_ || !device_.device || sets_.size() < 2) return ~0ull;
  const std::uint64_t used = sim_clock_ - slice_start_;
  return used >= options_.rotation_cycles ? 1 : options_.rotation_cycles - used;
}

void RegisterAccess::stop() {
  if (!running_now_) return;
  ctx_->backend().stop(*regs_, ctx_->pmu_context(), assignments());
  running_now_ = false;
  fold();
  const std::uint64_t t = now();  // one instant: the sets' running times add up to the enabled time
  close_slice(t);
  enabled_ += t - started_;
  write_extras(false);
}

void RegisterAccess::reset() {
  const Backend& b = ctx_->backend();
  if (programmed_) {
    const PmuContext pc = ctx_->pmu_context();
    for (const Assignment& a : assignments()) b.write_counter(*regs_, pc, *a.counter, 0);
    if (profiler_ && !profile_.empty()) profiler_->clear_profile(*regs_, pc, profile_);
  }
  totals_.assign(encodings_.size(), 0);
  last_raw_.assign(encodings_.size(), 0);
  running_.assign(encodings_.size(), 0);
  enabled_ = 0;
  if (running_now_) started_ = slice_start_ = now();
}

void RegisterAccess::read_counts(std::span<Count> out) {
  if (running_now_) fold();
  const std::uint64_t t = now();
  const std::uint64_t enabled = enabled_ + (running_now_ ? t - started_ : 0);
  for (std::size_t e = 0; e < encodings_.size() && e < out.size(); ++e) {
    std::uint64_t running = running_[e];
    if (running_now_ && set_of_[e] == active_) running += t - slice_start_;
    Count c;
    if (sets_.size() < 2) {  // every event has its own counter all the time: no scaling
      c.value = totals_[e];
      c.time_enabled = enabled;
      c.time_running = enabled;
    } else {
      c = scale_count(totals_[e], enabled, running);
    }
    out[e] = c;
  }
}

std::vector<std::vector<Count>> RegisterAccess::read() {
  std::vector<Count> counts(encodings_.size());
  read_counts(counts);
  std::vector<std::vector<Count>> out;
  for (const Count& c : counts) out.push_back({c});
  return out;
}

}  // namespace pmc::detail
