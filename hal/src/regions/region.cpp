// Regions (pmc/region.hpp, docs/regions.md): named, nestable, per-thread counting aggregated over
// calls and threads.
//
// Shape: one process-wide registry (the HAL, the events, the region names, every thread's
// totals), never destroyed so that the JSON can still be written at exit; per thread, a session
// counting the events, the stack of open regions with their counts at begin, and the totals of
// each region it ran (shared with the registry, which reads them under the thread's own lock).
// The hot path (begin/end of a region this thread has seen, by number) reads the session once,
// takes the time, and folds a call into the totals under that uncontended lock: no allocation,
// no lookup by name. The report's JSON and table are region_report.cpp's.
#include "clock.hpp"
#include "embed.hpp"
#include "environment.hpp"

#include <pmc/error.hpp>
#include <pmc/region.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>

namespace pmc {

namespace detail {

void read_values(Session& s, std::span<std::uint64_t> values, std::uint64_t* time_enabled, std::uint64_t* time_running) {
  if (!time_enabled && !time_running) {  // the hot path: values only, into the caller's buffer
    const std::size_t n = s.readings();
    if (n != values.size())
      throw Error(errc::invalid_argument, fmt::format("the session gives {} values per read, not {}", n, values.size()));
    (void)s.read(values);
    return;
  }
  // With the times: Session::read()'s readings (their names built once; no allocation).
  const std::vector<Reading>& readings = s.read();
  if (readings.size() != values.size())
    throw Error(errc::invalid_argument,
                fmt::format("the session gives {} values per read, not {}", readings.size(), values.size()));
  for (std::size_t i = 0; i < readings.size(); ++i) {
    values[i] = readings[i].value;
    if (time_enabled) time_enabled[i] = readings[i].time_enabled;
    if (time_running) time_running[i] = readings[i].time_running;
  }
}

}  // namespace detail

namespace {

using regions::Id;
constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

using detail::monotonic_ns;

struct Aggregate {
  std::uint64_t sum = 0;
  std::uint64_t min = kNone;
  std::uint64_t max = 0;
  void add(std::uint64_t v) {
    sum += v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  void merge(const Aggregate& o) {
    sum += o.sum;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
};

// One region's totals on one thread.
struct Slot {
  std::uint64_t calls = 0;
  Aggregate time;
  std::vector<Aggregate> events;
};

struct ThreadState {
  std::mutex mu;                   // guards session (its end) and slots against report()/reset()
  std::optional<Session> session;  // reset when the thread exits
  std::vector<Slot> slots;         // by region number
  // The rest belongs to the thread alone.
  struct Open {
    Id id;
    std::uint64_t start_ns;
  };
  std::vector<Open> stack;
  std::vector<std::uint64_t> starts;  // the counts at each open region's begin, n per level
  std::vector<std::uint64_t> now;     // n
  std::size_t n = 0;                  // values per read
  // Names this thread looked up (begin/end by name), so that a name costs one hash, no lock.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Id, Hash, std::equal_to<>> names;
};

struct Registry {
  std::mutex mu;  // everything below, except where noted
  bool set_up = false;
  std::optional<Error> failure;  // set up and failed: every region call throws it
  std::optional<Hal> hal;
  std::vector<std::string> events;
  std::filesystem::path output;
  std::vector<std::string> names;
  std::unordered_map<std::string, Id, ThreadState::Hash, std::equal_to<>> ids;
  std::atomic<std::uint32_t> count{0};  // names.size(), read without the lock
  std::vector<std::shared_ptr<ThreadState>> threads;
};

// Never destroyed: the exit handler and threads that outlive main's statics still use it.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void write_at_exit() {
  Registry& r = registry();
  std::filesystem::path out;
  {
    std::lock_guard lock(r.mu);
    out = r.output;
  }
  if (out.empty()) return;
  // At exit no caller is left to tell but the user: a report that cannot be written says so.
  try {
    regions::write(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmchal: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "pmchal: %s: cannot write the region report\n", out.c_str());
  }
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty())
      throw Error(errc::invalid_argument, fmt::format("$PMC_REGION_EVENTS=\"{}\": an event string is empty", text));
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// Opens the HAL and checks the events by adding them to a session of this thread. Caller holds
// r.mu; r.set_up is false.
void set_up(Registry& r, const Config& config, std::vector<std::string> events, std::filesystem::path output) {
  r.set_up = true;
  try {
    Hal hal = Hal::open(config);
    {
      Session probe = hal.session();
      for (const auto& e : events) probe.add(e);
    }
    r.hal.emplace(std::move(hal));
    r.events = std::move(events);
  } catch (const Error& e) {
    r.failure.emplace(e.kind(), fmt::format("regions: {}", e.what()));
  } catch (const std::exception& e) {
    r.failure.emplace(errc::invalid_argument, fmt::format("regions: {}", e.what()));
  }
  r.output = std::move(output);
  if (!r.output.empty()) std::atexit(write_at_exit);
}

// The setup from the environment and the config file, once.
Registry& ready() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (!r.set_up) {
    Config config;
    std::vector<std::string> events{"task-clock"};
    std::filesystem::path output;
    try {
      config = find_config(std::nullopt);
      if (!config.region_events.empty()) events = config.region_events;
      output = config.region_output;
      if (const char* env = detail::environment_nonempty("PMC_REGION_EVENTS")) events = split_list(env);
    } catch (const Error& e) {
      r.set_up = true;
      r.failure.emplace(e.kind(), fmt::format("regions: {}", e.what()));
      if (const char* env = detail::environment_nonempty("PMC_REGION_OUTPUT")) r.output = env;
      if (!r.output.empty()) std::atexit(write_at_exit);
    }
    if (const char* env = detail::environment_nonempty("PMC_REGION_OUTPUT")) output = env;
    if (!r.set_up) set_up(r, config, std::move(events), std::move(output));
  }
  if (r.failure) throw *r.failure;
  return r;
}

// The calling thread's state: on first use a session counting the events, started.
struct ThreadHandle {
  std::shared_ptr<ThreadState> state;
  ~ThreadHandle() {
    if (!state) return;
    std::lock_guard lock(state->mu);
    state->session.reset();  // closes its counters; the totals stay with the registry
  }
};

ThreadState& this_thread() {
  thread_local ThreadHandle handle;
  if (handle.state) return *handle.state;
  Registry& r = ready();
  auto state = std::make_shared<ThreadState>();
  {
    std::lock_guard lock(r.mu);
    Session s = r.hal->session();
    for (const auto& e : r.events) s.add(e);
    s.start();
    state->n = s.readings();
    state->session.emplace(std::move(s));
    r.threads.push_back(state);
  }
  // Room for 16 nested regions and the regions seen so far: deeper nesting and new regions
  // allocate once, when first seen.
  state->stack.reserve(16);
  state->starts.resize(16 * state->n);
  state->now.resize(state->n);
  state->slots.reserve(std::max<std::size_t>(r.count.load(), 16));
  handle.state = std::move(state);
  return *handle.state;
}

std::string region_name(Id id) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return id < r.names.size() ? r.names[id] : fmt::format("#{}", id);
}

Id lookup(ThreadState& t, std::string_view name) {
  if (auto it = t.names.find(name); it != t.names.end()) return it->second;
  const Id id = regions::id(name);
  t.names.emplace(std::string(name), id);
  return id;
}

}  // namespace

namespace regions {

void init(const Config& config, std::vector<std::string> events) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.set_up)
    throw Error(errc::invalid_argument, "regions: init() comes before the first region of the process, and regions are "
                                        "already set up");
  if (events.empty()) throw Error(errc::invalid_argument, "regions: init() needs at least one event");
  std::filesystem::path output = config.region_output;
  if (const char* env = detail::environment_nonempty("PMC_REGION_OUTPUT")) output = env;
  set_up(r, config, std::move(events), std::move(output));
  if (r.failure) throw *r.failure;
}

Id id(std::string_view name) {
  if (name.empty()) throw Error(errc::invalid_argument, "regions: a region needs a name");
  Registry& r = ready();
  std::lock_guard lock(r.mu);
  if (auto it = r.ids.find(name); it != r.ids.end()) return it->second;
  const Id id = static_cast<Id>(r.names.size());
  r.names.emplace_back(name);
  r.ids.emplace(std::string(name), id);
  r.count.store(static_cast<std::uint32_t>(r.names.size()));
  return id;
}

void begin(Id id) {
  ThreadState& t = this_thread();
  if (id >= registry().count.load()) throw Error(errc::invalid_argument, fmt::format("regions: no region number {}", id));
  for (const auto& o : t.stack)
    if (o.id == id)
      throw Error(errc::invalid_argument,
                  fmt::format("regions: region '{}' is already open on this thread (regions do not recurse)", region_name(id)));
  const std::size_t depth = t.stack.size();
  if (t.starts.size() < (depth + 1) * t.n) t.starts.resize((depth + 1) * t.n);
  // The time first and the counters last, so that the region's counts leave out this call.
  const std::uint64_t start = monotonic_ns();
  detail::read_values(*t.session, std::span(t.starts.data() + depth * t.n, t.n), nullptr, nullptr);
  t.stack.push_back({id, start});
}

void end(Id id) {
  ThreadState& t = this_thread();
  // The counters first, then the time.
  detail::read_values(*t.session, std::span(t.now.data(), t.n), nullptr, nullptr);
  const std::uint64_t stop = monotonic_ns();
  if (t.stack.empty() || t.stack.back().id != id) {
    const std::string open = t.stack.empty() ? std::string("no region is open")
                                             : fmt::format("the innermost open region is '{}'", region_name(t.stack.back().id));
    throw Error(errc::invalid_argument,
                fmt::format("regions: cannot end region '{}' on this thread: {}", region_name(id), open));
  }
  const ThreadState::Open o = t.stack.back();
  t.stack.pop_back();
  const std::uint64_t* start = t.starts.data() + t.stack.size() * t.n;
  std::lock_guard lock(t.mu);
  if (t.slots.size() <= id) t.slots.resize(id + 1);  // a region new to this thread: once
  Slot& s = t.slots[id];
  if (s.events.size() != t.n) s.events.resize(t.n);
  ++s.calls;
  s.time.add(stop - o.start_ns);
  for (std::size_t i = 0; i < t.n; ++i) s.events[i].add(t.now[i] - start[i]);
}

void begin(std::string_view name) {
  ThreadState& t = this_thread();
  begin(lookup(t, name));
}

void end(std::string_view name) {
  ThreadState& t = this_thread();
  end(lookup(t, name));
}

RegionReport report() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  RegionReport out;
  out.pid = static_cast<long>(getpid());
  if (r.failure) out.error = r.failure->what();
  if (r.hal) {
    out.cpu = describe(r.hal->cpu());
    if (r.hal->backend()) {
      out.backend = r.hal->backend()->name;
      out.access = r.hal->access();
    }
  }
  out.events = r.events;
  for (Id id = 0; id < r.names.size(); ++id) {
    Slot total;
    total.events.resize(r.events.size());
    unsigned threads = 0;
    for (const auto& t : r.threads) {
      std::lock_guard tl(t->mu);
      if (id >= t->slots.size() || t->slots[id].calls == 0) continue;
      const Slot& s = t->slots[id];
      ++threads;
      total.calls += s.calls;
      total.time.merge(s.time);
      for (std::size_t i = 0; i < total.events.size() && i < s.events.size(); ++i) total.events[i].merge(s.events[i]);
    }
    if (total.calls == 0) continue;
    RegionStats st;
    st.name = r.names[id];
    st.calls = total.calls;
    st.threads = threads;
    st.time_ns = total.time.sum;
    st.min_time_ns = total.time.min;
    st.max_time_ns = total.time.max;
    for (std::size_t i = 0; i < total.events.size(); ++i)
      st.events.push_back({r.events[i], total.events[i].sum, total.events[i].min, total.events[i].max});
    out.regions.push_back(std::move(st));
  }
  return out;
}

void write(const std::filesystem::path& path) {
  const std::string text = region_report_json(report()) + "\n";
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw Error(errc::io, "regions: cannot write the report to standard output");
    return;
  }
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (out) out.flush();
  if (!out) {
    const int err = errno;
    throw Error(errc::io, fmt::format("{}: cannot write the region report: {}", path.string(),
                                      err ? std::generic_category().message(err) : "write failed"));
  }
}

void reset() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& t : r.threads) {
    std::lock_guard tl(t->mu);
    for (Slot& s : t->slots) {
      s.calls = 0;
      s.time = {};
      for (auto& e : s.events) e = {};
    }
  }
}

Session& thread_session() { return *this_thread().session; }

}  // namespace regions

ScopedRegion::ScopedRegion(regions::Id id) : id_(id) { regions::begin(id_); }
ScopedRegion::ScopedRegion(std::string_view name) : id_(regions::id(name)) { regions::begin(id_); }
ScopedRegion::~ScopedRegion() {
  try {
    regions::end(id_);
  } catch (...) {  // documented: a destructor cannot report it
  }
}

}  // namespace pmc
