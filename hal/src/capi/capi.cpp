// The C API (<pmc/pmc.h>, docs/c-api.md) over the C++ one. Every entry point catches everything:
// a pmc::Error becomes its code and message, anything else PMC_ERR_NO_MEMORY or
// PMC_ERR_INTERNAL; the message goes to a per-thread buffer that pmc_last_error() returns and
// whose writing cannot throw.
#include "access_kind.hpp"
#include "embed.hpp"

#include <pmc/pmc.h>
#include <pmc/event_list.hpp>
#include <pmc/pmc.hpp>
#include <pmc/region.hpp>

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#ifndef PMC_PROJECT_VERSION
#error "PMC_PROJECT_VERSION must be defined by the build (the project's version, \"0.1.0\")"
#endif

// The C codes are pmc::errc's values.
static_assert(PMC_ERR_NOT_SUPPORTED == static_cast<int>(pmc::errc::not_supported));
static_assert(PMC_ERR_INVALID_ARGUMENT == static_cast<int>(pmc::errc::invalid_argument));
static_assert(PMC_ERR_NOT_FOUND == static_cast<int>(pmc::errc::not_found));
static_assert(PMC_ERR_FEATURE_COMBINATION == static_cast<int>(pmc::errc::feature_combination));
static_assert(PMC_ERR_UNIT_MASK == static_cast<int>(pmc::errc::unit_mask));
static_assert(PMC_ERR_ATTRIBUTE == static_cast<int>(pmc::errc::attribute));
static_assert(PMC_ERR_ATTRIBUTE_VALUE == static_cast<int>(pmc::errc::attribute_value));
static_assert(PMC_ERR_NO_COUNTER == static_cast<int>(pmc::errc::no_counter));
static_assert(PMC_ERR_PLUGIN == static_cast<int>(pmc::errc::plugin));
static_assert(PMC_ERR_PLUGIN_ABI == static_cast<int>(pmc::errc::plugin_abi));
static_assert(PMC_ERR_PARSE == static_cast<int>(pmc::errc::parse));
static_assert(PMC_ERR_REGISTER_FAULT == static_cast<int>(pmc::errc::register_fault));
static_assert(PMC_ERR_PERMISSION == static_cast<int>(pmc::errc::permission));
static_assert(PMC_ERR_IO == static_cast<int>(pmc::errc::io));
static_assert(static_cast<int>(pmc::errc::io) == 14, "a new pmc::errc needs its PMC_ERR_ code in pmc.h");

struct pmc_hal {
  pmc::Hal hal;
  std::string cpu;
  std::string access;
  struct Event {
    std::string name, description, generic, pmu;
  };
  std::vector<Event> events;
};

struct pmc_session {
  pmc::Session session;
  // What each value of a read is, worked out by one full read after the events change (so the
  // reads themselves need not).
  std::vector<pmc::Reading> layout;
  bool layout_valid = false;
};

namespace {

// The last error of this thread: fixed storage, so that recording it cannot fail.
struct LastError {
  pmc_status status = PMC_OK;
  std::array<char, 1024> message{};
};
thread_local LastError last;

pmc_status fail(pmc_status status, const char* message) noexcept {
  last.status = status;
  std::size_t n = 0;
  for (const char* p = message; p && *p && n + 1 < last.message.size(); ++p)
    last.message[n++] = (*p == '\n' || *p == '\r') ? ' ' : *p;  // one line
  last.message[n] = '\0';
  return status;
}

template <class F>
pmc_status guarded(F&& f) noexcept {
  try {
    f();
    return PMC_OK;
  } catch (const pmc::Error& e) {
    return fail(static_cast<pmc_status>(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(PMC_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(PMC_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(PMC_ERR_INTERNAL, "an unknown exception inside pmchal");
  }
}

void need(const void* p, const char* function, const char* what) {
  if (!p) throw pmc::Error(pmc::errc::invalid_argument, fmt::format("{}: {} is NULL", function, what));
}

// The caller's struct_size says which fields it has: fields wholly inside it are written.
#define PMC_SET_FIELD(s, type, field, value)                                                   \
  do {                                                                                         \
    if (offsetof(type, field) + sizeof((s)->field) <= (s)->struct_size) (s)->field = (value); \
  } while (false)

void check_size(std::size_t given, std::size_t minimum, const char* function, const char* type) {
  if (given < minimum)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("{}: {}.struct_size is {}, less than the {} bytes of its first fields (set it to "
                                 "sizeof({}))",
                                 function, type, given, minimum, type));
}

pmc::Config to_config(const pmc_config& c) {
  check_size(c.struct_size, sizeof(pmc_config), "pmc_hal_open", "pmc_config");
  pmc::Config cfg;
  if (c.backend) cfg.backend = c.backend;
  if (c.access) {
    cfg.access = c.access;
    if (cfg.access != "auto" && !pmc::detail::parse_access(cfg.access))
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("pmc_hal_open: config->access \"{}\" is not an access method (expected auto, sim, "
                                   "perf or msr)",
                                   cfg.access.size() > 80 ? cfg.access.substr(0, 80) + "..." : cfg.access));
  }
  if (c.cpu) cfg.cpu = c.cpu;
  if (c.plugin_path_count) need(c.plugin_path, "pmc_hal_open", "config->plugin_path");
  for (std::size_t i = 0; i < c.plugin_path_count; ++i) {
    need(c.plugin_path[i], "pmc_hal_open", "an entry of config->plugin_path");
    cfg.plugin_path.emplace_back(c.plugin_path[i]);
  }
  if (c.events_path_count) need(c.events_path, "pmc_hal_open", "config->events_path");
  for (std::size_t i = 0; i < c.events_path_count; ++i) {
    need(c.events_path[i], "pmc_hal_open", "an entry of config->events_path");
    cfg.events_path.emplace_back(c.events_path[i]);
  }
  cfg.found_by = "the C API (pmc_config)";
  return cfg;
}

pmc_hal* make_hal(pmc::Hal hal) {
  auto h = new pmc_hal{std::move(hal), {}, {}, {}};
  std::unique_ptr<pmc_hal> guard(h);
  h->cpu = pmc::describe(h->hal.cpu());
  h->access = h->hal.access();
  if (const pmc::BackendInfo* b = h->hal.backend())
    for (const pmc::EventDef* e : h->hal.events().for_cpu(h->hal.pmu().cpu_tag))
      h->events.push_back({e->name, e->description, e->generic, b->name});
  for (const auto& e : pmc::hal_events()) h->events.push_back({e.name, e.description, "", "hal"});
  return guard.release();
}

const std::vector<pmc::Reading>& layout(pmc_session* s) {
  if (!s->layout_valid) {
    s->layout = s->session.read();
    s->layout_valid = true;
  }
  return s->layout;
}

pmc::Scope to_scope(const pmc_scope& s) {
  pmc::Scope scope;
  // The caller's value as the integer C stores: a C caller may store any int in the enum, which
  // C++ may not load as the enum type (its values end at 7).
  static_assert(sizeof(pmc_scope_kind) == sizeof(int));
  int kind = 0;
  std::memcpy(&kind, &s.kind, sizeof kind);
  switch (kind) {
    case PMC_SCOPE_THREAD: scope.kind = pmc::Scope::Kind::thread; break;
    case PMC_SCOPE_PROCESS: scope.kind = pmc::Scope::Kind::process; break;
    case PMC_SCOPE_CPU: scope.kind = pmc::Scope::Kind::cpu; break;
    case PMC_SCOPE_EACH_CPU: scope.kind = pmc::Scope::Kind::each_cpu; break;
    case PMC_SCOPE_ALL_CPUS: scope.kind = pmc::Scope::Kind::all_cpus; break;
    default:
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("pmc_session_open: scope kind {} is not a pmc_scope_kind (0 to 4)", kind));
  }
  scope.pid = s.pid;
  scope.cpu = s.cpu;
  scope.inherit = s.inherit != 0;
  scope.enable_on_exec = s.enable_on_exec != 0;
  return scope;
}

void copy_run(const pmc::WorkloadRun& r, pmc_workload_run* run) {
  if (!run) return;
  run->cycles = r.cycles;
  run->cycles_not_counted = r.cycles_not_counted;
  run->interrupts = r.interrupts;
}

}  // namespace

extern "C" {

const char* pmc_last_error(void) { return last.message.data(); }
pmc_status pmc_last_status(void) { return last.status; }

const char* pmc_status_name(pmc_status status) {
  switch (status) {
    case PMC_OK: return "ok";
    case PMC_ERR_NOT_SUPPORTED: return "not_supported";
    case PMC_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case PMC_ERR_NOT_FOUND: return "not_found";
    case PMC_ERR_FEATURE_COMBINATION: return "feature_combination";
    case PMC_ERR_UNIT_MASK: return "unit_mask";
    case PMC_ERR_ATTRIBUTE: return "attribute";
    case PMC_ERR_ATTRIBUTE_VALUE: return "attribute_value";
    case PMC_ERR_NO_COUNTER: return "no_counter";
    case PMC_ERR_PLUGIN: return "plugin";
    case PMC_ERR_PLUGIN_ABI: return "plugin_abi";
    case PMC_ERR_PARSE: return "parse";
    case PMC_ERR_REGISTER_FAULT: return "register_fault";
    case PMC_ERR_PERMISSION: return "permission";
    case PMC_ERR_IO: return "io";
    case PMC_ERR_NO_MEMORY: return "no_memory";
    case PMC_ERR_INTERNAL: return "internal";
  }
  return "unknown";
}

const char* pmc_strerror(pmc_status status) {
  switch (status) {
    case PMC_OK: return "success";
    case PMC_ERR_NOT_SUPPORTED: return "not supported";
    case PMC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case PMC_ERR_NOT_FOUND: return "not found";
    case PMC_ERR_FEATURE_COMBINATION: return "invalid combination of features";
    case PMC_ERR_UNIT_MASK: return "invalid unit mask";
    case PMC_ERR_ATTRIBUTE: return "unknown attribute";
    case PMC_ERR_ATTRIBUTE_VALUE: return "attribute value out of range";
    case PMC_ERR_NO_COUNTER: return "no counter can take the event";
    case PMC_ERR_PLUGIN: return "backend plugin failed";
    case PMC_ERR_PLUGIN_ABI: return "backend plugin ABI mismatch";
    case PMC_ERR_PARSE: return "parse error";
    case PMC_ERR_REGISTER_FAULT: return "register access fault";
    case PMC_ERR_PERMISSION: return "permission denied";
    case PMC_ERR_IO: return "input/output error";
    case PMC_ERR_NO_MEMORY: return "out of memory";
    case PMC_ERR_INTERNAL: return "internal error";
  }
  return "unknown";
}

uint32_t pmc_version(void) {
  return (uint32_t{PMC_VERSION_MAJOR} << 16) | (uint32_t{PMC_VERSION_MINOR} << 8) | uint32_t{PMC_VERSION_PATCH};
}
const char* pmc_version_string(void) { return PMC_PROJECT_VERSION; }

pmc_status pmc_hal_open(const pmc_config* config, pmc_hal** hal) {
  return guarded([&] {
    need(hal, "pmc_hal_open", "hal");
    *hal = nullptr;
    const pmc::Config cfg = config ? to_config(*config) : pmc::find_config(std::nullopt);
    *hal = make_hal(pmc::Hal::open(cfg));
  });
}

pmc_status pmc_hal_open_file(const char* path, pmc_hal** hal) {
  return guarded([&] {
    need(hal, "pmc_hal_open_file", "hal");
    *hal = nullptr;
    need(path, "pmc_hal_open_file", "path");
    pmc::Config cfg = pmc::load_config(path);
    cfg.found_by = "pmc_hal_open_file";
    *hal = make_hal(pmc::Hal::open(cfg));
  });
}

void pmc_hal_close(pmc_hal* hal) { delete hal; }

const char* pmc_hal_backend(const pmc_hal* hal) {
  if (!hal || !hal->hal.backend()) return nullptr;
  return hal->hal.backend()->name.c_str();
}
const char* pmc_hal_reason(const pmc_hal* hal) { return hal ? hal->hal.why().c_str() : nullptr; }
const char* pmc_hal_cpu(const pmc_hal* hal) { return hal ? hal->cpu.c_str() : nullptr; }
const char* pmc_hal_access(const pmc_hal* hal) { return hal ? hal->access.c_str() : nullptr; }

size_t pmc_hal_event_count(const pmc_hal* hal) { return hal ? hal->events.size() : 0; }

pmc_status pmc_hal_event(const pmc_hal* hal, size_t index, pmc_event_info* info) {
  return guarded([&] {
    need(hal, "pmc_hal_event", "hal");
    need(info, "pmc_hal_event", "info");
    check_size(info->struct_size, sizeof(size_t), "pmc_hal_event", "pmc_event_info");
    if (index >= hal->events.size())
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("pmc_hal_event: index {} is past the {} events", index, hal->events.size()));
    const pmc_hal::Event& e = hal->events[index];
    PMC_SET_FIELD(info, pmc_event_info, name, e.name.c_str());
    PMC_SET_FIELD(info, pmc_event_info, description, e.description.c_str());
    PMC_SET_FIELD(info, pmc_event_info, generic, e.generic.c_str());
    PMC_SET_FIELD(info, pmc_event_info, pmu, e.pmu.c_str());
  });
}

pmc_status pmc_session_open(const pmc_hal* hal, const pmc_scope* scope, pmc_session** session) {
  return guarded([&] {
    need(session, "pmc_session_open", "session");
    *session = nullptr;
    need(hal, "pmc_session_open", "hal");
    const pmc::Scope s = scope ? to_scope(*scope) : pmc::Scope::this_thread();
    *session = new pmc_session{hal->hal.session(s), {}, false};
  });
}

// Session's destructor stops the counters and never throws.
void pmc_session_close(pmc_session* session) { delete session; }

pmc_status pmc_session_add(pmc_session* session, const char* event) {
  return guarded([&] {
    need(session, "pmc_session_add", "session");
    need(event, "pmc_session_add", "event");
    session->session.add(event);
    session->layout_valid = false;
  });
}

pmc_status pmc_session_add_list(pmc_session* session, const char* list) {
  return guarded([&] {
    need(session, "pmc_session_add_list", "session");
    need(list, "pmc_session_add_list", "list");
    const std::vector<pmc::EventGroup> groups = pmc::parse_event_list(std::string_view(list));  // before any add
    for (const pmc::EventGroup& g : groups) {
      if (g.braces) {
        session->session.add_group(g.events);
      } else {
        for (const std::string& e : g.events) session->session.add(e);
      }
      session->layout_valid = false;
    }
  });
}

pmc_status pmc_session_start(pmc_session* session) {
  return guarded([&] {
    need(session, "pmc_session_start", "session");
    session->session.start();
  });
}

pmc_status pmc_session_stop(pmc_session* session) {
  return guarded([&] {
    need(session, "pmc_session_stop", "session");
    session->session.stop();
  });
}

pmc_status pmc_session_reset(pmc_session* session) {
  return guarded([&] {
    need(session, "pmc_session_reset", "session");
    session->session.reset();
  });
}

size_t pmc_session_reading_count(pmc_session* session) {
  size_t n = 0;
  const pmc_status st = guarded([&] {
    need(session, "pmc_session_reading_count", "session");
    n = session->session.readings();
  });
  return st == PMC_OK ? n : 0;
}

pmc_status pmc_session_read(pmc_session* session, uint64_t* values, size_t count, uint64_t* time_enabled,
                            uint64_t* time_running) {
  return guarded([&] {
    need(session, "pmc_session_read", "session");
    const std::size_t n = session->session.readings();
    if (n) need(values, "pmc_session_read", "values");
    if (count < n)
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("pmc_session_read: room for {} values, and the session reads {}", count, n));
    pmc::detail::read_values(session->session, std::span(values, n), time_enabled, time_running);
  });
}

pmc_status pmc_session_reading_info(pmc_session* session, size_t index, pmc_reading_info* info) {
  return guarded([&] {
    need(session, "pmc_session_reading_info", "session");
    need(info, "pmc_session_reading_info", "info");
    check_size(info->struct_size, sizeof(size_t), "pmc_session_reading_info", "pmc_reading_info");
    const auto& l = layout(session);
    if (index >= l.size())
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("pmc_session_reading_info: index {} is past the {} values of a read", index, l.size()));
    const pmc::Reading& r = l[index];
    PMC_SET_FIELD(info, pmc_reading_info, event, r.event.c_str());
    PMC_SET_FIELD(info, pmc_reading_info, canonical, r.canonical.c_str());
    PMC_SET_FIELD(info, pmc_reading_info, name, r.name.c_str());
    PMC_SET_FIELD(info, pmc_reading_info, generic, r.generic.c_str());
    PMC_SET_FIELD(info, pmc_reading_info, unit, r.unit.c_str());
    PMC_SET_FIELD(info, pmc_reading_info, cpu, r.cpu);
    PMC_SET_FIELD(info, pmc_reading_info, hal, r.hal ? 1 : 0);
  });
}

pmc_status pmc_session_run_workload(pmc_session* session, const char* workload, pmc_workload_run* run) {
  return guarded([&] {
    need(session, "pmc_session_run_workload", "session");
    need(workload, "pmc_session_run_workload", "workload");
    const pmc::Workload w = pmc::load_workload(pmc::resolve_data(workload, pmc::DataKind::workload));
    copy_run(session->session.run(w), run);
  });
}

// Regions.

pmc_status pmc_region_begin(const char* name) {
  return guarded([&] {
    need(name, "pmc_region_begin", "name");
    pmc::regions::begin(std::string_view(name));
  });
}

pmc_status pmc_region_end(const char* name) {
  return guarded([&] {
    need(name, "pmc_region_end", "name");
    pmc::regions::end(std::string_view(name));
  });
}

pmc_status pmc_region_id(const char* name, uint32_t* id) {
  return guarded([&] {
    need(name, "pmc_region_id", "name");
    need(id, "pmc_region_id", "id");
    *id = pmc::regions::id(name);
  });
}

pmc_status pmc_region_begin_id(uint32_t id) {
  return guarded([&] { pmc::regions::begin(pmc::regions::Id{id}); });
}

pmc_status pmc_region_end_id(uint32_t id) {
  return guarded([&] { pmc::regions::end(pmc::regions::Id{id}); });
}

pmc_status pmc_regions_init(const pmc_config* config, const char* const* events, size_t count) {
  return guarded([&] {
    if (count) need(events, "pmc_regions_init", "events");
    std::vector<std::string> list;
    for (std::size_t i = 0; i < count; ++i) {
      need(events[i], "pmc_regions_init", "an entry of events");
      list.emplace_back(events[i]);
    }
    pmc::regions::init(config ? to_config(*config) : pmc::find_config(std::nullopt), std::move(list));
  });
}

pmc_status pmc_regions_write(const char* path) {
  return guarded([&] {
    need(path, "pmc_regions_write", "path");
    pmc::regions::write(path);
  });
}

pmc_status pmc_regions_reset(void) {
  return guarded([&] { pmc::regions::reset(); });
}

pmc_status pmc_regions_run_workload(const char* workload, pmc_workload_run* run) {
  return guarded([&] {
    need(workload, "pmc_regions_run_workload", "workload");
    const pmc::Workload w = pmc::load_workload(pmc::resolve_data(workload, pmc::DataKind::workload));
    copy_run(pmc::regions::thread_session().run(w), run);
  });
}

}  // extern "C"
