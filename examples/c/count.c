/* count: pmchal from C, through <pmc/pmc.h> (docs/c-api.md). Counts events of a simulated
 * workload on the PMU of a CPUID dump, or of its own loop on this machine:
 *
 *   count --cpu pentium-iii --workload p6-demo instructions INST_RETIRED:u
 *   count task-clock page-faults             (this process, for real, on any Linux)
 *
 * Built against an installed pmchal with CMake (find_package or pkg-config) or by hand:
 *   cc count.c $(pkg-config --cflags --libs pmchal) -o count
 * Prints "EVENT = VALUE" per event; an error is one line on stderr and exit status 1. */
#include <pmc/pmc.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "count: %s: %s (%s)\n", what, pmc_last_error(), pmc_status_name(pmc_last_status()));
  return 1;
}

int main(int argc, char** argv) {
  pmc_config cfg = PMC_CONFIG_INIT;
  const char* workload = NULL;
  int first = 1;
  for (; first < argc; ++first) {
    if (strcmp(argv[first], "--cpu") == 0 && first + 1 < argc) cfg.cpu = argv[++first];
    else if (strcmp(argv[first], "--workload") == 0 && first + 1 < argc) workload = argv[++first];
    else break;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: count [--cpu DUMP] [--workload FILE] EVENT...\n");
    return 2;
  }

  pmc_hal* hal = NULL;
  if (pmc_hal_open(&cfg, &hal) != PMC_OK) return fail("opening the HAL");
  const char* backend = pmc_hal_backend(hal);
  printf("cpu: %s\nbackend: %s\n", pmc_hal_cpu(hal), backend ? backend : "(none)");

  pmc_session* s = NULL;
  if (pmc_session_open(hal, NULL, &s) != PMC_OK) return fail("opening a session");
  for (int i = first; i < argc; ++i)
    if (pmc_session_add(s, argv[i]) != PMC_OK) return fail(argv[i]);

  if (workload) {
    if (pmc_session_run_workload(s, workload, NULL) != PMC_OK) return fail(workload);
  } else {
    if (pmc_session_start(s) != PMC_OK) return fail("starting");
    volatile double x = 0;
    for (int i = 0; i < 10 * 1000 * 1000; ++i) x += i * 0.5;
    (void)x;
    if (pmc_session_stop(s) != PMC_OK) return fail("stopping");
  }

  size_t n = pmc_session_reading_count(s);
  uint64_t* values = calloc(n ? n : 1, sizeof *values);
  if (!values || pmc_session_read(s, values, n, NULL, NULL) != PMC_OK) return fail("reading");
  for (size_t i = 0; i < n; ++i) {
    pmc_reading_info info = PMC_READING_INFO_INIT;
    pmc_session_reading_info(s, i, &info);
    printf("%s = %llu%s%s\n", info.event, (unsigned long long)values[i], info.unit[0] ? " " : "", info.unit);
  }
  free(values);
  pmc_session_close(s);
  pmc_hal_close(hal);
  return 0;
}
