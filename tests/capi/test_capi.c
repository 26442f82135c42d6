/* The C API (<pmc/pmc.h>) from C11, linked against libpmchal.so as a C program outside the tree
 * would be (ctest: test_capi_c). Every expected count is worked out by hand from the workload
 * file it runs (examples/workloads/p6-demo.toml; the arithmetic is in examples/CMakeLists.txt):
 * on the simulated Pentium III, p6-demo retires 7,900,000 instructions, 7,550,000 of them in
 * user mode.
 *
 *   test_capi_c SCRATCH_DIR
 *
 * Prints "FAIL file:line: ..." for each failed check, exits 1 if any failed. */
#include <pmc/pmc.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

#define CHECK_EQ(a, b)                                                                                          \
  do {                                                                                                          \
    unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b);                            \
    if (va_ != vb_) {                                                                                           \
      fprintf(stderr, "FAIL %s:%d: %s is %llu, expected %llu (%s)\n", __FILE__, __LINE__, #a, va_, vb_,        \
              pmc_last_error());                                                                                \
      ++failures;                                                                                               \
    }                                                                                                           \
  } while (0)

#define CHECK_STR(a, b)                                                                                       \
  do {                                                                                                        \
    const char* sa_ = (a);                                                                                    \
    if (!sa_ || strcmp(sa_, (b)) != 0) {                                                                      \
      fprintf(stderr, "FAIL %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, sa_ ? sa_ : "(null)", \
              (b));                                                                                           \
      ++failures;                                                                                             \
    }                                                                                                         \
  } while (0)

static int contains(const char* haystack, const char* needle) { return haystack && strstr(haystack, needle) != NULL; }
#define CONTAINS(haystack, needle) contains((haystack), (needle))

/* The error a thread records stays that thread's. */
static void* failing_thread(void* arg) {
  (void)arg;
  pmc_status st = pmc_session_add(NULL, "cycles");
  int ok = st == PMC_ERR_INVALID_ARGUMENT && CONTAINS(pmc_last_error(), "pmc_session_add: session is NULL");
  return ok ? (void*)1 : NULL;
}

static pmc_config pentium_iii(void) {
  pmc_config cfg = PMC_CONFIG_INIT;
  cfg.cpu = "pentium-iii"; /* a bundled CPUID dump, by name */
  return cfg;
}

static void test_version_and_status_names(void) {
  /* The header and the library agree: 0.1.0 = (0 << 16) | (1 << 8) | 0. */
  CHECK_EQ(pmc_version(), ((uint32_t)PMC_VERSION_MAJOR << 16) | ((uint32_t)PMC_VERSION_MINOR << 8) | PMC_VERSION_PATCH);
  CHECK_STR(pmc_version_string(), "0.1.0");
  CHECK_STR(pmc_status_name(PMC_ERR_NOT_FOUND), "not_found");
  CHECK_STR(pmc_strerror(PMC_ERR_PARSE), "parse error");
  CHECK_STR(pmc_status_name((pmc_status)77), "unknown");
  /* Nothing failed on this thread yet. */
  CHECK_EQ(pmc_last_status(), PMC_OK);
  CHECK_STR(pmc_last_error(), "");
}

static void test_probe_and_events(void) {
  pmc_config cfg = pentium_iii();
  pmc_hal* hal = NULL;
  CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_OK);
  if (!hal) return;
  CHECK_STR(pmc_hal_backend(hal), "p6");
  CHECK_STR(pmc_hal_cpu(hal), "GenuineIntel family 6 model 8 stepping 3");
  CHECK(CONTAINS(pmc_hal_reason(hal), "Pentium III"));
  CHECK_STR(pmc_hal_access(hal), "sim"); /* a CPUID dump is not this machine: simulated */

  /* The p6 catalog on a Pentium III, then the HAL events. */
  size_t n = pmc_hal_event_count(hal);
  CHECK(n > 10);
  int saw_inst = 0, saw_task_clock = 0;
  for (size_t i = 0; i < n; ++i) {
    pmc_event_info e = PMC_EVENT_INFO_INIT;
    CHECK_EQ(pmc_hal_event(hal, i, &e), PMC_OK);
    if (e.name && strcmp(e.name, "INST_RETIRED") == 0) {
      saw_inst = 1;
      CHECK_STR(e.pmu, "p6");
      CHECK_STR(e.generic, "instructions");
      CHECK(e.description && e.description[0]);
    }
    if (e.name && strcmp(e.name, "task-clock") == 0) {
      saw_task_clock = 1;
      CHECK_STR(e.pmu, "hal");
    }
  }
  CHECK(saw_inst);
  CHECK(saw_task_clock);
  /* Past the end: an error with its message. */
  pmc_event_info e = PMC_EVENT_INFO_INIT;
  CHECK_EQ(pmc_hal_event(hal, n, &e), PMC_ERR_INVALID_ARGUMENT);
  CHECK(CONTAINS(pmc_last_error(), "is past the"));
  /* An older caller's smaller struct: only the fields it has are written. */
  pmc_event_info small = PMC_EVENT_INFO_INIT;
  const char* untouched = "untouched";
  small.struct_size = offsetof(pmc_event_info, description);
  small.description = untouched;
  CHECK_EQ(pmc_hal_event(hal, 0, &small), PMC_OK);
  CHECK(small.name != NULL);
  CHECK(small.description == untouched);
  pmc_hal_close(hal);
}

static void test_counting_a_workload(void) {
  pmc_config cfg = pentium_iii();
  pmc_hal* hal = NULL;
  CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_OK);
  if (!hal) return;
  pmc_session* s = NULL;
  CHECK_EQ(pmc_session_open(hal, NULL, &s), PMC_OK);
  if (!s) {
    pmc_hal_close(hal);
    return;
  }
  CHECK_EQ(pmc_session_add(s, "instructions"), PMC_OK);
  CHECK_EQ(pmc_session_add(s, "INST_RETIRED:u"), PMC_OK);
  CHECK_EQ(pmc_session_reading_count(s), 2);

  pmc_reading_info info = PMC_READING_INFO_INIT;
  CHECK_EQ(pmc_session_reading_info(s, 0, &info), PMC_OK);
  CHECK_STR(info.event, "instructions");
  CHECK_STR(info.name, "INST_RETIRED");
  CHECK_STR(info.generic, "instructions");
  CHECK_EQ(info.cpu, -1);
  CHECK_EQ(info.hal, 0);
  CHECK_EQ(pmc_session_reading_info(s, 1, &info), PMC_OK);
  CHECK(CONTAINS(info.canonical, "p6::INST_RETIRED"));

  pmc_workload_run run = {0, 0, 0};
  CHECK_EQ(pmc_session_run_workload(s, "p6-demo", &run), PMC_OK);
  uint64_t v[2] = {0, 0}, enabled[2] = {0, 0}, running[2] = {0, 0};
  CHECK_EQ(pmc_session_read(s, v, 2, enabled, running), PMC_OK);
  CHECK_EQ(v[0], 7900000); /* user 7,550,000 + kernel 350,000 */
  CHECK_EQ(v[1], 7550000);
  CHECK_EQ(enabled[0], running[0]); /* two events on two counters: never multiplexed */

  /* The hal may go first: the session keeps what it needs. A second run accumulates. */
  pmc_hal_close(hal);
  CHECK_EQ(pmc_session_run_workload(s, "p6-demo", NULL), PMC_OK);
  CHECK_EQ(pmc_session_read(s, v, 2, NULL, NULL), PMC_OK);
  CHECK_EQ(v[0], 2 * 7900000);
  CHECK_EQ(v[1], 2 * 7550000);
  CHECK_EQ(pmc_session_reset(s), PMC_OK);
  CHECK_EQ(pmc_session_read(s, v, 2, NULL, NULL), PMC_OK);
  CHECK_EQ(v[0], 0);

  /* Room for one value of two: refused, nothing written past it. */
  uint64_t one[2] = {123, 456};
  CHECK_EQ(pmc_session_read(s, one, 1, NULL, NULL), PMC_ERR_INVALID_ARGUMENT);
  CHECK(CONTAINS(pmc_last_error(), "room for 1 values, and the session reads 2"));
  CHECK_EQ(one[1], 456);

  /* Errors: the code, and a one-line message naming the thing at fault. */
  CHECK_EQ(pmc_session_add(s, "INST_RETIRD"), PMC_ERR_NOT_FOUND);
  CHECK_EQ(pmc_last_status(), PMC_ERR_NOT_FOUND);
  CHECK(CONTAINS(pmc_last_error(), "INST_RETIRD"));
  CHECK(strchr(pmc_last_error(), '\n') == NULL);
  CHECK_EQ(pmc_session_add(s, "INST_RETIRED:nosuch=1"), PMC_ERR_ATTRIBUTE);
  CHECK(CONTAINS(pmc_last_error(), "nosuch"));
  CHECK_EQ(pmc_session_add(s, "EVENT::"), PMC_ERR_PARSE);
  /* The session is as it was: still two values. */
  CHECK_EQ(pmc_session_reading_count(s), 2);
  /* A successful call leaves the last error alone. */
  CHECK_EQ(pmc_session_read(s, v, 2, NULL, NULL), PMC_OK);
  CHECK_EQ(pmc_last_status(), PMC_ERR_PARSE);
  /* A workload file that does not exist. */
  CHECK_EQ(pmc_session_run_workload(s, "no-such-workload.toml", NULL), PMC_ERR_IO);
  CHECK(CONTAINS(pmc_last_error(), "no-such-workload.toml"));
  pmc_session_close(s);
}

static void test_bad_input(const char* scratch) {
  pmc_hal* hal = (pmc_hal*)1;
  /* A config file with a wrong type: the code, and file:line:column. */
  char path[4096];
  snprintf(path, sizeof path, "%s/bad-config.toml", scratch);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("# written by test_capi_c\nbackend = 3\n", f);
    fclose(f);
  }
  CHECK_EQ(pmc_hal_open_file(path, &hal), PMC_ERR_INVALID_ARGUMENT);
  CHECK(hal == NULL);
  CHECK(CONTAINS(pmc_last_error(), "bad-config.toml:2:11"));
  /* An unknown backend named in a pmc_config. */
  pmc_config cfg = pentium_iii();
  cfg.backend = "nosuchbackend";
  CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_ERR_NOT_FOUND);
  CHECK(CONTAINS(pmc_last_error(), "unknown backend 'nosuchbackend'"));
  /* An access method that does not exist is refused by pmc_hal_open itself, naming the valid
     ones, also for a CPU no backend drives (a Transmeta Crusoe), where no event ever meets it. */
  snprintf(path, sizeof path, "%s/crusoe.txt", scratch);
  f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("CPUID 00000000: 00000001-756E6547-3638784D-54656E69\n"
          "CPUID 00000001: 00000543-00000000-00000000-00000010\n", f);
    fclose(f);
  }
  const char* cpus[] = {path, "pentium-iii"};
  for (int i = 0; i < 2; ++i) {
    cfg = pentium_iii();
    cfg.cpu = cpus[i];
    cfg.access = "bogus";
    hal = (pmc_hal*)1;
    CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_ERR_INVALID_ARGUMENT);
    CHECK(hal == NULL);
    CHECK(CONTAINS(pmc_last_error(), "\"bogus\""));
    CHECK(CONTAINS(pmc_last_error(), "auto, sim, perf or msr"));
    if (hal && hal != (pmc_hal*)1) pmc_hal_close(hal);
  }
  /* A struct_size that is not the struct's. */
  cfg = pentium_iii();
  cfg.struct_size = 8;
  CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_ERR_INVALID_ARGUMENT);
  CHECK(CONTAINS(pmc_last_error(), "struct_size"));
  /* NULL handles. */
  CHECK_EQ(pmc_hal_open(NULL, NULL), PMC_ERR_INVALID_ARGUMENT);
  CHECK(pmc_hal_backend(NULL) == NULL);
  CHECK_EQ(pmc_hal_event_count(NULL), 0);
  CHECK_EQ(pmc_session_reading_count(NULL), 0);
  pmc_hal_close(NULL);
  pmc_session_close(NULL);
  /* A scope kind that is none. */
  cfg = pentium_iii();
  CHECK_EQ(pmc_hal_open(&cfg, &hal), PMC_OK);
  pmc_scope scope = PMC_SCOPE_THIS_THREAD_INIT;
  scope.kind = (pmc_scope_kind)9;
  pmc_session* s = (pmc_session*)1;
  CHECK_EQ(pmc_session_open(hal, &scope, &s), PMC_ERR_INVALID_ARGUMENT);
  CHECK(s == NULL);
  CHECK(CONTAINS(pmc_last_error(), "scope kind 9"));
  pmc_hal_close(hal);

  /* Another thread's error is its own. */
  CHECK_EQ(pmc_session_add(NULL, NULL), PMC_ERR_INVALID_ARGUMENT);
  char mine[1024];
  snprintf(mine, sizeof mine, "%s", pmc_last_error());
  pthread_t t;
  void* ok = NULL;
  CHECK_EQ(pthread_create(&t, NULL, failing_thread, NULL), 0);
  CHECK_EQ(pthread_join(t, &ok), 0);
  CHECK(ok != NULL);
  CHECK_STR(pmc_last_error(), mine);
}

/* Regions from C: the hand-worked totals are checked through ctypes and in test_region; here,
 * that they run and refuse what they must. */
static void test_regions(const char* scratch) {
  pmc_config cfg = pentium_iii();
  const char* events[] = {"instructions"};
  CHECK_EQ(pmc_regions_init(&cfg, events, 1), PMC_OK);
  CHECK_EQ(pmc_region_begin("outer"), PMC_OK);
  CHECK_EQ(pmc_regions_run_workload("p6-demo", NULL), PMC_OK);
  uint32_t inner = 0;
  CHECK_EQ(pmc_region_id("inner", &inner), PMC_OK);
  CHECK_EQ(pmc_region_begin_id(inner), PMC_OK);
  CHECK_EQ(pmc_region_begin("inner"), PMC_ERR_INVALID_ARGUMENT); /* already open */
  CHECK(CONTAINS(pmc_last_error(), "region 'inner' is already open"));
  CHECK_EQ(pmc_region_end("outer"), PMC_ERR_INVALID_ARGUMENT); /* inner is innermost */
  CHECK(CONTAINS(pmc_last_error(), "the innermost open region is 'inner'"));
  CHECK_EQ(pmc_region_end_id(inner), PMC_OK);
  CHECK_EQ(pmc_region_end("outer"), PMC_OK);
  CHECK_EQ(pmc_regions_init(&cfg, events, 1), PMC_ERR_INVALID_ARGUMENT); /* once only */
  char path[4096];
  snprintf(path, sizeof path, "%s/regions.json", scratch);
  CHECK_EQ(pmc_regions_write(path), PMC_OK);
  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  if (f) {
    char text[8192] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    CHECK(n > 0);
    CHECK(CONTAINS(text, "\"format\": \"pmchal-regions\""));
    /* outer: one call, p6-demo counted once = 7,900,000 instructions */
    CHECK(CONTAINS(text, "\"sum\": 7900000"));
  }
  snprintf(path, sizeof path, "%s/no-such-dir/regions.json", scratch);
  CHECK_EQ(pmc_regions_write(path), PMC_ERR_IO);
  CHECK(CONTAINS(pmc_last_error(), "no-such-dir/regions.json"));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_capi_c SCRATCH_DIR\n");
    return 2;
  }
  test_version_and_status_names();
  test_probe_and_events();
  test_counting_a_workload();
  test_bad_input(argv[1]);
  test_regions(argv[1]);
  if (failures) {
    fprintf(stderr, "test_capi_c: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_capi_c: every check passed\n");
  return 0;
}
