/* The program pmc profile's vDSO test profiles (tests/cli/test_profile_symbols.cpp): it reads the
 * monotonic clock in a loop, which the C library's clock_gettime answers through the vDSO's
 * __vdso_clock_gettime without entering the kernel, until its process has used the CPU time
 * given in ms (default 300). Almost all of its samples fall in the [vdso] mapping. */
#include <stdlib.h>
#include <time.h>

volatile long pmc_test_vdso_sink;

int main(int argc, char** argv) {
  const unsigned long long ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 300;
  struct timespec start, now, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  do {
    for (int i = 0; i < 10000; ++i) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      pmc_test_vdso_sink += t.tv_nsec;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  } while ((long long)(now.tv_sec - start.tv_sec) * 1000000000ll + (long long)(now.tv_nsec - start.tv_nsec) <
           (long long)ms * 1000000ll);
  return 0;
}
