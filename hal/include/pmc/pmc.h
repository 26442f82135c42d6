/* pmchal's C API: the HAL from C, C++17, or any language with a C foreign-function interface
 * (Python ctypes, Rust, Go). Plain C99; link with -lpmchal (pkg-config pmchal, or the CMake
 * target pmc::pmchal_c). docs/c-api.md is the guide; the C++ API is <pmc/pmc.hpp>.
 *
 * Conventions
 *  - Handles are opaque (pmc_hal, pmc_session), created by an *_open function and released by its
 *    *_close, which accepts NULL. A session may outlive the hal it came from.
 *  - Every function that can fail returns a pmc_status: PMC_OK (0), or the code of the error,
 *    whose one-line message pmc_last_error() then gives. Codes 1..14 are pmc::errc's values.
 *  - The last error is per thread: a failing call sets it; a successful one leaves it alone.
 *  - No C++ exception ever leaves this API.
 *  - Strings returned are owned by the handle they came from and stay valid until it is closed
 *    (or, for a session's reading info, until the next pmc_session_add).
 *  - Structures that may grow start with struct_size, which the caller sets (the *_INIT macros do):
 *    the library fills only the fields that size covers.
 *  - A handle is used by one thread at a time; different handles may be used concurrently.
 */
#ifndef PMC_PMC_H
#define PMC_PMC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PMC_C_API __attribute__((visibility("default")))
#else
#define PMC_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library this header belongs to (pmc_version() is the one linked). */
#define PMC_VERSION_MAJOR 0
#define PMC_VERSION_MINOR 1
#define PMC_VERSION_PATCH 0

/* ------------------------------------------------------------------------------------------ */
/* Errors */

typedef enum pmc_status {
  PMC_OK = 0,
  PMC_ERR_NOT_SUPPORTED = 1,       /* the CPU, backend or access method cannot do this */
  PMC_ERR_INVALID_ARGUMENT = 2,    /* a value out of range or of the wrong kind (NULL handles too) */
  PMC_ERR_NOT_FOUND = 3,           /* unknown event, unit mask, backend, file */
  PMC_ERR_FEATURE_COMBINATION = 4, /* modifiers or unit masks that cannot go together */
  PMC_ERR_UNIT_MASK = 5,           /* a unit mask problem (unknown, not combinable, missing) */
  PMC_ERR_ATTRIBUTE = 6,           /* unknown modifier */
  PMC_ERR_ATTRIBUTE_VALUE = 7,     /* modifier value out of range */
  PMC_ERR_NO_COUNTER = 8,          /* no assignment of the events to counters exists */
  PMC_ERR_PLUGIN = 9,              /* a plugin failed to load or to initialise */
  PMC_ERR_PLUGIN_ABI = 10,         /* a plugin built for another ABI version */
  PMC_ERR_PARSE = 11,              /* malformed TOML, CPUID dump or event string */
  PMC_ERR_REGISTER_FAULT = 12,     /* an access the hardware would refuse */
  PMC_ERR_PERMISSION = 13,         /* the OS refused access */
  PMC_ERR_IO = 14,                 /* a file could not be read or written */
  PMC_ERR_NO_MEMORY = 100,         /* C API only: an allocation failed */
  PMC_ERR_INTERNAL = 101           /* C API only: an unexpected error inside the library */
} pmc_status;

/* The message of the last call that failed on this thread: one line naming the thing at fault
 * ("event 'INST_RETIRD', column 1: unknown event ..."); "" when none has failed. */
PMC_C_API const char* pmc_last_error(void);
/* The code of that call (PMC_OK when none has failed). */
PMC_C_API pmc_status pmc_last_status(void);
/* The code's name ("not_found") and a generic description ("not found"); "unknown" for a value
 * that is no code. Static strings. */
PMC_C_API const char* pmc_status_name(pmc_status status);
PMC_C_API const char* pmc_strerror(pmc_status status);

/* The library's version, (major << 16) | (minor << 8) | patch, and as "0.1.0". */
PMC_C_API uint32_t pmc_version(void);
PMC_C_API const char* pmc_version_string(void);

/* ------------------------------------------------------------------------------------------ */
/* The HAL: configuration, plugins, the CPU, the chosen backend. */

typedef struct pmc_hal pmc_hal;

/* What a config file says, as values (docs/user-guide.md, "The config file"). NULL strings keep
 * the default; relative paths are relative to the current directory. */
typedef struct pmc_config {
  size_t struct_size;                  /* sizeof(pmc_config) */
  const char* backend;                 /* "auto" (NULL) or a backend name */
  const char* access;                  /* "auto" (NULL), "sim", "perf" or "msr" */
  const char* cpu;                     /* "native" (NULL), a CPUID dump or CPU description file, or a
                                          bundled dump's name ("pentium-iii") */
  const char* const* plugin_path;      /* directories searched before the installed plugins */
  size_t plugin_path_count;
  const char* const* events_path;      /* event files or directories added to the catalog */
  size_t events_path_count;
} pmc_config;
#define PMC_CONFIG_INIT {sizeof(pmc_config), NULL, NULL, NULL, NULL, 0, NULL, 0}

/* Opens the HAL: reads the CPU, loads the plugins, chooses the backend. With config NULL, the
 * config file is found as the pmc command finds it ($PMC_CONFIG, $XDG_CONFIG_HOME/pmc/config.toml,
 * /etc/pmc/config.toml, else the defaults). */
PMC_C_API pmc_status pmc_hal_open(const pmc_config* config, pmc_hal** hal);
/* The same from a config file (TOML; errors name file:line:column). */
PMC_C_API pmc_status pmc_hal_open_file(const char* path, pmc_hal** hal);
PMC_C_API void pmc_hal_close(pmc_hal* hal);

/* The probe's result: the chosen backend's name (NULL when none matched), why it was chosen or
 * why none was, the CPU in one line ("GenuineIntel family 6 model 8 stepping 3"), and the access
 * method sessions use ("sim", "perf", "msr"; "" without a backend). NULL hal: NULL. */
PMC_C_API const char* pmc_hal_backend(const pmc_hal* hal);
PMC_C_API const char* pmc_hal_reason(const pmc_hal* hal);
PMC_C_API const char* pmc_hal_cpu(const pmc_hal* hal);
PMC_C_API const char* pmc_hal_access(const pmc_hal* hal);

/* The events a session can add: the backend's for this CPU, then the HAL events (tsc and the OS
 * software events, which need no backend). */
typedef struct pmc_event_info {
  size_t struct_size;        /* sizeof(pmc_event_info) */
  const char* name;          /* "INST_RETIRED", "task-clock" */
  const char* description;   /* one sentence */
  const char* generic;       /* the Linux perf generic name it implements ("instructions"), or "" */
  const char* pmu;           /* the backend's name, or "hal" for a HAL event */
} pmc_event_info;
#define PMC_EVENT_INFO_INIT {sizeof(pmc_event_info), NULL, NULL, NULL, NULL}

PMC_C_API size_t pmc_hal_event_count(const pmc_hal* hal);
PMC_C_API pmc_status pmc_hal_event(const pmc_hal* hal, size_t index, pmc_event_info* info);

/* ------------------------------------------------------------------------------------------ */
/* Sessions: events counted together. */

typedef struct pmc_session pmc_session;

/* Whose activity a session counts (docs/user-guide.md, "Scopes"). */
typedef enum pmc_scope_kind {
  PMC_SCOPE_THREAD = 0,     /* the thread that starts the session */
  PMC_SCOPE_PROCESS = 1,    /* another process, by pid */
  PMC_SCOPE_CPU = 2,        /* everything on one CPU */
  PMC_SCOPE_EACH_CPU = 3,   /* every online CPU, one reading per event and CPU */
  PMC_SCOPE_ALL_CPUS = 4    /* every online CPU, summed */
} pmc_scope_kind;

typedef struct pmc_scope {
  pmc_scope_kind kind;
  int pid;             /* PMC_SCOPE_PROCESS */
  int cpu;             /* PMC_SCOPE_CPU */
  int inherit;         /* non-zero: also count threads and children created later */
  int enable_on_exec;  /* PMC_SCOPE_PROCESS: counting begins when the process calls exec */
} pmc_scope;
#define PMC_SCOPE_THIS_THREAD_INIT {PMC_SCOPE_THREAD, 0, -1, 0, 0}

/* A session of the hal's backend (or of the HAL events alone, without one). scope NULL: this
 * thread. */
PMC_C_API pmc_status pmc_session_open(const pmc_hal* hal, const pmc_scope* scope, pmc_session** session);
PMC_C_API void pmc_session_close(pmc_session* session);

/* Adds one event string ("INST_RETIRED:u", "cycles", "task-clock"); on error the session is as it
 * was. Not while the session counts. */
PMC_C_API pmc_status pmc_session_add(pmc_session* session, const char* event);
/* Adds a list in perf's -e syntax: "cycles,instructions", "{cycles,instructions},page-faults".
 * Each event alone as pmc_session_add does; the events of a {a,b} group are counted together
 * (one event set: all or none of the group is added). The list's syntax is checked before
 * anything is added; when an entry is refused, the entries before it stay added. */
PMC_C_API pmc_status pmc_session_add_list(pmc_session* session, const char* list);
PMC_C_API pmc_status pmc_session_start(pmc_session* session);
PMC_C_API pmc_status pmc_session_stop(pmc_session* session);
PMC_C_API pmc_status pmc_session_reset(pmc_session* session);

/* How many values a read gives: one per event in the order added (PMC_SCOPE_EACH_CPU: one per
 * event and CPU, the event's CPUs together). 0 for a NULL session or on error. */
PMC_C_API size_t pmc_session_reading_count(pmc_session* session);

/* Reads the counts into values[0..count) (count must be at least pmc_session_reading_count),
 * and, when not NULL, the time each was enabled and running (nanoseconds; cycles of the workload
 * for a simulated PMU; they differ when the counters were multiplexed). Running or stopped. With
 * both time pointers NULL this is the hot-loop read: it allocates nothing and makes no system
 * call beyond the counters' own read; asking for the times builds the full readings. */
PMC_C_API pmc_status pmc_session_read(pmc_session* session, uint64_t* values, size_t count, uint64_t* time_enabled,
                                      uint64_t* time_running);

/* What value `index` of a read is. */
typedef struct pmc_reading_info {
  size_t struct_size;     /* sizeof(pmc_reading_info) */
  const char* event;      /* as added */
  const char* canonical;  /* "p6::INST_RETIRED:u=1:k=0:..." */
  const char* name;       /* the catalog or HAL event ("INST_RETIRED"), "" for a raw event */
  const char* generic;    /* "instructions", or "" */
  const char* unit;       /* "ns", "ticks", or "" for plain counts */
  int cpu;                /* PMC_SCOPE_EACH_CPU: the CPU; -1 otherwise */
  int hal;                /* non-zero: a HAL event (tsc, OS software events) */
} pmc_reading_info;
#define PMC_READING_INFO_INIT {sizeof(pmc_reading_info), NULL, NULL, NULL, NULL, NULL, -1, 0}

PMC_C_API pmc_status pmc_session_reading_info(pmc_session* session, size_t index, pmc_reading_info* info);

/* Simulated PMUs (access "sim"): runs a workload file (docs/workload-format.md; a bundled name
 * such as "p6-demo" works too) through the session's device model, starting the session for the
 * run when it is stopped. run may be NULL. */
typedef struct pmc_workload_run {
  uint64_t cycles;              /* cycles of the workload */
  uint64_t cycles_not_counted;  /* cycles on CPUs the simulated PMU does not count */
  uint64_t interrupts;          /* overflow interrupts the device raised */
} pmc_workload_run;

PMC_C_API pmc_status pmc_session_run_workload(pmc_session* session, const char* workload, pmc_workload_run* run);

/* ------------------------------------------------------------------------------------------ */
/* Regions (docs/regions.md): named, nestable parts of a program, counted on the calling thread
 * and aggregated over calls and threads. The events come from $PMC_REGION_EVENTS
 * ("cycles,instructions"), else the config file's [regions] events, else task-clock; the first
 * region call of the process opens the HAL as pmc_hal_open(NULL) would. The results are written
 * as JSON at exit to $PMC_REGION_OUTPUT (or the config's [regions] output), and on demand. */

/* Begins and ends a region on this thread. Regions nest (an inner region's counts are part of
 * its outer region's); a region already open on this thread cannot begin again, and end must
 * name the innermost open region. */
PMC_C_API pmc_status pmc_region_begin(const char* name);
PMC_C_API pmc_status pmc_region_end(const char* name);
/* The same by number: pmc_region_id registers a name once, the *_id calls skip the lookup. */
PMC_C_API pmc_status pmc_region_id(const char* name, uint32_t* id);
PMC_C_API pmc_status pmc_region_begin_id(uint32_t id);
PMC_C_API pmc_status pmc_region_end_id(uint32_t id);

/* Sets up regions explicitly instead of from the environment: counts `events` (count of them)
 * with a HAL opened from config (NULL: as pmc_hal_open(NULL)). Only before the first region
 * call of the process. */
PMC_C_API pmc_status pmc_regions_init(const pmc_config* config, const char* const* events, size_t count);
/* Writes the results so far as JSON (the format docs/regions.md describes) to path ("-": stdout). */
PMC_C_API pmc_status pmc_regions_write(const char* path);
/* Forgets the results so far (the regions' names stay registered). */
PMC_C_API pmc_status pmc_regions_reset(void);
/* Simulated PMUs: runs a workload on this thread's region session, as pmc_session_run_workload. */
PMC_C_API pmc_status pmc_regions_run_workload(const char* workload, pmc_workload_run* run);

#ifdef __cplusplus
}
#endif

#endif /* PMC_PMC_H */
