/* The program pmc profile's tests profile (tests/cli/test_profile_names.cpp), built with
 * -O1 -g -fno-omit-frame-pointer -fno-inline so that its functions keep their frames and
 * names: main -> pmc_test_work -> pmc_test_hot_loop, where it spends almost all of its time,
 * and a sixteenth as much in main -> pmc_test_work -> pmc_test_cold_loop. It runs until its
 * process has used the CPU time given in ms (default 300), so that no check depends on speed.
 * The line marked "hot line" is where the hot function's samples fall. */
#include <stdlib.h>
#include <time.h>

volatile unsigned long pmc_test_sink;

static unsigned long long cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* The byte on the stack gives the hot and cold functions a frame of their own: GCC sets up no frame
 * pointer in a leaf function that uses no stack, even with -fno-omit-frame-pointer, and the
 * kernel's walk then skips its caller (perf's frame-pointer call graphs have the same gap). */
__attribute__((noinline)) void pmc_test_hot_loop(unsigned long n) {
  volatile char frame = 0;
  (void)frame;
  for (unsigned long i = 0; i < n; ++i) pmc_test_sink += i; /* hot line */
}

__attribute__((noinline)) void pmc_test_cold_loop(unsigned long n) {
  volatile char frame = 0;
  (void)frame;
  for (unsigned long i = 0; i < n; ++i) pmc_test_sink += i;
}

__attribute__((noinline)) void pmc_test_work(unsigned long long ms) {
  const unsigned long long until = cpu_ns() + ms * 1000000ull;
  do {
    pmc_test_hot_loop(1ul << 22);
    pmc_test_cold_loop(1ul << 18);
  } while (cpu_ns() < until);
}

int main(int argc, char** argv) {
  pmc_test_work(argc > 1 ? strtoull(argv[1], NULL, 10) : 300);
  return 0;
}
