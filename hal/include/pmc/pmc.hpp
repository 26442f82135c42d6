// pmchal: the whole user API in one header (docs/user-guide.md). Plugin authors include
// <pmc/sdk/backend.hpp> or <pmc/sdk/model.hpp> instead; C programs <pmc/pmc.h>.
//   Hal          configuration, plugins, CPU probing, the chosen backend
//   Session      events counted together: add, start, stop, read, profile, run a workload
//   Reading      one event's count with its identity (name, generic name, unit)
//   EventCatalog the backend's events; parse_event() the event-string syntax, parse_event_list()
//                perf's -e lists ("{a,b},c"); default_events() what perf stat counts without -e
//   MetricCatalog derived figures (IPC, miss ratios) as data; evaluate_metric()
//   Workload     simulated activity for a backend's device model
//   Scope        whose activity a session counts; parse_cpu_list() perf's -C lists
//   regions      named, nestable regions of a program, counted per thread (pmc/region.hpp)
//   Error        the one exception type (pmc::errc codes)
#pragma once
#if __cplusplus < 202002L
#error "<pmc/pmc.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/catalog.hpp>
#include <pmc/config.hpp>
#include <pmc/cpu.hpp>
#include <pmc/cpu_list.hpp>
#include <pmc/default_events.hpp>
#include <pmc/emulate.hpp>
#include <pmc/encoding.hpp>
#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/event_list.hpp>
#include <pmc/event_spec.hpp>
#include <pmc/hal.hpp>
#include <pmc/hal_events.hpp>
#include <pmc/metrics.hpp>
#include <pmc/paths.hpp>
#include <pmc/plugin.hpp>
#include <pmc/pmu.hpp>
#include <pmc/profile.hpp>
#include <pmc/reading.hpp>
#include <pmc/region.hpp>
#include <pmc/register_format.hpp>
#include <pmc/schedule.hpp>
#include <pmc/scope.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#endif  // C++20
