/* The OSF/1 pfm(7) device of the emulated Alpha 21064, used from C the way pfm(7) describes it
 * (and kprofile(1) / uprofile(1) used it): open the device, select the events and intervals
 * with PCNTSETMUX, choose the items, enable, let the machine run, read the interrupt counts,
 * the IPL histogram and the PC profile. Here "let the machine run" is pfm_sim_run() over the
 * bundled workloads (argv[1] is their directory); the expected values are worked out by hand in
 * the comments of examples/workloads/alpha-*.toml. Every check prints a line; a failed one
 * prints FAIL and the program exits 1. */
#define _POSIX_C_SOURCE 200809L

#include <pmc/pfm.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (cond) {                                                                              \
      printf("ok   %s\n", #cond);                                                            \
    } else {                                                                                 \
      printf("FAIL %s:%d: %s (errno %d: %s)\n", __FILE__, __LINE__, #cond, errno,            \
             pfm_sim_error());                                                               \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)

/* The call fails: -1 with this errno. */
#define CHECK_ERRNO(call, err)                                                               \
  do {                                                                                       \
    errno = 0;                                                                               \
    int rc_ = (call);                                                                        \
    int errno_ = errno;                                                                      \
    if (rc_ == -1 && errno_ == (err)) {                                                      \
      printf("ok   %s fails with %s\n", #call, #err);                                        \
    } else {                                                                                 \
      printf("FAIL %s:%d: %s returned %d with errno %d, not -1 with %s\n", __FILE__, __LINE__, \
             #call, rc_, errno_, #err);                                                      \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)

static const char* dir = ".";
static char path_buf[4096];

static const char* workload(const char* name) {
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
  return path_buf;
}

static struct iccsr mux(unsigned mux0, unsigned pc0, unsigned mux1, unsigned pc1, unsigned disable) {
  struct iccsr m;
  memset(&m, 0, sizeof m);
  m.iccsr_mux0 = mux0 & 0xFu;
  m.iccsr_pc0 = pc0 & 1u;
  m.iccsr_mux1 = mux1 & 7u;
  m.iccsr_pc1 = pc1 & 1u;
  m.iccsr_disable = disable & 3u;
  return m;
}

/* Counting: PF_CYCLES every 4096 cycles, PF_DCACHE every 256 misses, first for the selected
 * processes only (PCNTLOGSELECT), then for the whole system (PCNTLOGALL). */
static void counters(void) {
  printf("-- counters (alpha-counters.toml)\n");
  CHECK(pfm_sim_reset(1) == 0);
  CHECK(pfm_sim_set_pid(100) == 0);
  int fd = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENALL);
  CHECK(fd >= 0);
  struct iccsr m = mux(PF_CYCLES, PF_C0_INT_EVERY_4096, PF_DCACHE, PF_C1_INT_EVERY_256, 0);
  /* A request kept in an int, as old code may, is sign-extended: still PCNTSETMUX. */
  const int request_in_an_int = (int)PCNTSETMUX;
  CHECK(pfm_ioctl(fd, (unsigned long)(long)request_in_an_int, &m) == 0);
  CHECK(pfm_ioctl(fd, PCNTCLEARCNT) == 0);   /* no argument, as pfm(7) writes it */
  CHECK(pfm_ioctl(fd, PCNTENABLE) == 0);     /* pfm(7)'s spelling of PCNTRENABLE */
  CHECK(pfm_ioctl(fd, PCNTLOGSELECT) == 0);  /* this process (100) and its children */
  CHECK(pfm_sim_run(workload("alpha-counters.toml")) == 0);

  struct pfcntrs cntrs[1];
  struct pfcntrs* p = cntrs;
  CHECK(pfm_ioctl(fd, PCNTGETCNT, &p) == 0);
  printf("selected: %ld cycle interrupts (%ld cycles), %ld D-cache interrupts (%ld misses), pr_cycle %ld\n",
         cntrs[0].pf_cntr0, cntrs[0].pf_cntr0 * 4096, cntrs[0].pf_cntr1, cntrs[0].pf_cntr1 * 256,
         cntrs[0].pr_cycle);
  CHECK(cntrs[0].pf_cntr0 == 67); /* 274,437 cycles of processes 100 and 200 */
  CHECK(cntrs[0].pf_cntr1 == 48); /* 12,288 misses */
  CHECK(cntrs[0].pr_cycle == 278533);

  /* The whole system. The 5 cycles left of the last interval carry on (not cleared). */
  CHECK(pfm_ioctl(fd, PCNTCLEARCNT, 0) == 0);
  CHECK(pfm_ioctl(fd, PCNTLOGALL, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-counters.toml")) == 0);
  CHECK(pfm_ioctl(fd, PCNTGETCNT, &p) == 0);
  printf("all:      %ld cycle interrupts, %ld D-cache interrupts\n", cntrs[0].pf_cntr0, cntrs[0].pf_cntr1);
  CHECK(cntrs[0].pf_cntr0 == 68); /* (5 + 278,533) / 4096 */
  CHECK(cntrs[0].pf_cntr1 == 48);

  /* Disabled: nothing more is counted. */
  CHECK(pfm_ioctl(fd, PCNTRDISABLE, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-counters.toml")) == 0);
  CHECK(pfm_ioctl(fd, PCNTGETCNT, &p) == 0);
  CHECK(cntrs[0].pf_cntr0 == 68);
  CHECK(pfm_close(fd) == 0);
}

/* The IPL histogram: PF_CYCLES every 4096 cycles, counter 1 disabled. */
static void ipl_histogram(void) {
  printf("-- IPL histogram (alpha-ipl.toml)\n");
  CHECK(pfm_sim_reset(1) == 0);
  int fd = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENALL);
  CHECK(fd >= 0);
  long items = PFM_COUNTERS | PFM_IPL;
  CHECK(pfm_ioctl(fd, PCNTSETITEMS, &items) == 0);
  struct iccsr m = mux(PF_CYCLES, PF_C0_INT_EVERY_4096, PF_DCACHE, 0, 2 /* counter 1 off */);
  CHECK(pfm_ioctl(fd, PCNTSETMUX, &m) == 0);
  CHECK(pfm_ioctl(fd, PCNTRENABLE, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-ipl.toml")) == 0);

  struct pfipls ipls[1];
  struct pfipls* p = ipls;
  CHECK(pfm_ioctl(fd, PCNTGETIPLHIS, &p) == 0);
  static const unsigned long expected[PFM_NIPL] = {2, 0, 0, 1, 0, 1, 0, 6, 10};
  printf("IPL ticks:");
  for (int i = 0; i < PFM_NIPL; ++i) printf(" %lu", ipls[0].pf_ipl[i]);
  printf("   (0-5 IPL, 6 unused, 7 idle, 8 user)\n");
  CHECK(memcmp(ipls[0].pf_ipl, expected, sizeof expected) == 0);
  struct pfcntrs cntrs[1];
  struct pfcntrs* c = cntrs;
  CHECK(pfm_ioctl(fd, PCNTGETCNT, &c) == 0);
  CHECK(cntrs[0].pf_cntr0 == 20); /* 21 intervals, one lost while masked at IPL 7 */
  CHECK(cntrs[0].pf_cntr1 == 0);

  /* Clearing with PFM_IPL clears the histogram. */
  CHECK(pfm_ioctl(fd, PCNTCLEARCNT, 0) == 0);
  CHECK(pfm_ioctl(fd, PCNTGETIPLHIS, &p) == 0);
  CHECK(ipls[0].pf_ipl[8] == 0);
  /* Without PFM_IPL the histogram cannot be read; with profiling only nothing can be cleared. */
  items = PFM_COUNTERS;
  CHECK(pfm_ioctl(fd, PCNTSETITEMS, &items) == 0);
  CHECK_ERRNO(pfm_ioctl(fd, PCNTGETIPLHIS, &p), EINVAL);
  items = PFM_PROFILING;
  CHECK(pfm_ioctl(fd, PCNTSETITEMS, &items) == 0);
  CHECK_ERRNO(pfm_ioctl(fd, PCNTCLEARCNT, 0), EINVAL);
  CHECK_ERRNO(pfm_ioctl(fd, PCNTGETCNT, &c), EINVAL);
  CHECK(pfm_close(fd) == 0);
}

/* PC profiling of a user range, then of a kernel range. */
static void profile(void) {
  printf("-- PC profile (alpha-profile.toml)\n");
  CHECK(pfm_sim_reset(1) == 0);
  int fd = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENALL);
  CHECK(fd >= 0);
  struct addr_range text = {0x120000000UL, 0x120001000UL};
  CHECK_ERRNO(pfm_ioctl(fd, PCNTSETUADDR, &text), EINVAL); /* not open for profiling yet */
  CHECK_ERRNO(pfm_ioctl(fd, PCNTSETKADDR, &text), EINVAL);
  long items = PFM_COUNTERS | PFM_PROFILING;
  CHECK(pfm_ioctl(fd, PCNTSETITEMS, &items) == 0);
  long rsize = -1;
  CHECK(pfm_ioctl(fd, PCNTGETRSIZE, &rsize) == 0);
  CHECK(rsize == 0); /* no range yet */
  CHECK(pfm_ioctl(fd, PCNTSETUADDR, &text) == 0);
  CHECK(pfm_ioctl(fd, PCNTGETRSIZE, &rsize) == 0);
  CHECK(rsize == 1024); /* 4096 bytes / 4 */
  struct iccsr m = mux(PF_CYCLES, PF_C0_INT_EVERY_4096, PF_DCACHE, 0, 2);
  CHECK(pfm_ioctl(fd, PCNTSETMUX, &m) == 0);
  CHECK(pfm_ioctl(fd, PCNTRENABLE, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-profile.toml")) == 0);

  unsigned int buckets[256];
  CHECK(pfm_read(fd, buckets, sizeof buckets) == 1024);
  unsigned long total = 0;
  int right = 1;
  for (unsigned i = 0; i < 256; ++i) {
    unsigned want = (i % 4 == 3) ? 1u : 0u;          /* the program: buckets 3, 7, ..., 255 */
    if (i >= 64 && i <= 67) want += 4;               /* the hot loop at 0x120000400 */
    if (buckets[i] != want) {
      printf("bucket %u (PC 0x%lx): %u samples, expected %u\n", i, 0x120000000UL + 16UL * i, buckets[i], want);
      right = 0;
    }
    total += buckets[i];
  }
  printf("user profile: %lu samples; hottest PC 0x%lx (%u)\n", total, 0x120000000UL + 16UL * 67, buckets[67]);
  CHECK(right);
  CHECK(total == 80);

  /* Kernel profiling replaces the user one. */
  struct addr_range ktext = {0xfffffc0000310000UL, 0xfffffc0000312000UL}; /* KSEG */
  CHECK(pfm_ioctl(fd, PCNTSETKADDR, &ktext) == 0);
  CHECK(pfm_ioctl(fd, PCNTGETRSIZE, &rsize) == 0);
  CHECK(rsize == 2048);
  CHECK(pfm_sim_run(workload("alpha-profile.toml")) == 0);
  unsigned int kbuckets[512];
  CHECK(pfm_read(fd, kbuckets, sizeof kbuckets) == 2048);
  total = 0;
  for (unsigned i = 0; i < 512; ++i) total += kbuckets[i];
  CHECK(total == 2);
  CHECK(kbuckets[255] == 1);
  CHECK(kbuckets[511] == 1);
  CHECK(pfm_close(fd) == 0);
}

/* Several CPUs (alpha-smp.toml): PCNTOPENONE / EACH / ALL, and the error cases of pfm(7). */
static void multiprocessor(void) {
  printf("-- four CPUs: open modes and errors\n");
  CHECK(pfm_sim_reset(4) == 0);
  CHECK_ERRNO(pfm_open("/dev/null", O_RDONLY | PCNTOPENALL), ENODEV);
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY), EINVAL);                /* no open mode */
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENONE), EINVAL);  /* not bound */
  CHECK(pfm_sim_bind(7) == 0);
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENONE), ENODEV);  /* no CPU 7 */
  CHECK(pfm_sim_bind(1) == 0);
  int one = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENONE);
  CHECK(one >= 0);
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENONE), EBUSY);   /* CPU 1 is open */
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENALL), EBUSY);   /* not all CPUs free */
  CHECK_ERRNO(pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENEACH), EBUSY);
  CHECK(pfm_sim_bind(2) == 0);
  int two = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENONE);             /* another CPU is free */
  CHECK(two >= 0);
  CHECK(pfm_close(two) == 0);

  /* CPU 1 alone: cycles every 4096. */
  struct iccsr m = mux(PF_CYCLES, PF_C0_INT_EVERY_4096, PF_ICACHE, PF_C1_INT_EVERY_256, 0);
  CHECK(pfm_ioctl(one, PCNTSETMUX, &m) == 0);
  CHECK(pfm_ioctl(one, PCNTRENABLE, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-smp.toml")) == 0);
  struct pfcntrs cntrs[4];
  struct pfcntrs* p = cntrs;
  CHECK(pfm_ioctl(one, PCNTGETCNT, &p) == 0);
  CHECK(cntrs[0].pf_cntr0 == 2);  /* CPU 1's 8192 cycles */
  CHECK(cntrs[0].pf_cntr1 == 32); /* 8192 I-cache misses / 256 */
  CHECK(pfm_close(one) == 0);

  /* EACH: one struct pfcntrs per CPU; an array of one is too small. */
  int each = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENEACH);
  CHECK(each >= 0);
  CHECK(pfm_ioctl(each, PCNTSETMUX, &m) == 0);
  long each_items = PFM_COUNTERS | PFM_IPL;
  CHECK(pfm_ioctl(each, PCNTSETITEMS, &each_items) == 0);
  CHECK(pfm_ioctl(each, PCNTCLEARCNT, 0) == 0);
  CHECK(pfm_ioctl(each, PCNTRENABLE, 0) == 0);
  CHECK(pfm_sim_run(workload("alpha-smp.toml")) == 0);
  CHECK(pfm_sim_map(cntrs, sizeof cntrs[0]) == 0); /* the program's memory: one element */
  CHECK_ERRNO(pfm_ioctl(each, PCNTGETCNT, &p), EFAULT);
  pfm_sim_unmap_all();
  CHECK(pfm_sim_map(cntrs, sizeof cntrs) == 0);
  CHECK(pfm_ioctl(each, PCNTGETCNT, &p) == 0);
  pfm_sim_unmap_all();
  for (int i = 0; i < 4; ++i) {
    printf("CPU %d: %ld cycle interrupts, %ld I-cache interrupts\n", i, cntrs[i].pf_cntr0, cntrs[i].pf_cntr1);
    CHECK(cntrs[i].pf_cntr0 == i + 1); /* 4096 (i + 1) cycles */
  }
  CHECK(cntrs[1].pf_cntr1 == 32);
  CHECK(cntrs[3].pf_cntr1 == 64);
  /* The IPL histograms, one struct pfipls per CPU: every interrupt of both counters lands in
   * the user slot (8), i + 1 cycle interrupts plus the I-cache ones. One element is too small. */
  struct pfipls ipls[4];
  struct pfipls* h = ipls;
  CHECK(pfm_sim_map(ipls, sizeof ipls[0]) == 0);
  CHECK_ERRNO(pfm_ioctl(each, PCNTGETIPLHIS, &h), EFAULT);
  pfm_sim_unmap_all();
  CHECK(pfm_sim_map(ipls, sizeof ipls) == 0);
  CHECK(pfm_ioctl(each, PCNTGETIPLHIS, &h) == 0);
  pfm_sim_unmap_all();
  CHECK(ipls[0].pf_ipl[8] == 1);
  CHECK(ipls[1].pf_ipl[8] == 2 + 32);
  CHECK(ipls[2].pf_ipl[8] == 3);
  CHECK(ipls[3].pf_ipl[8] == 4 + 64);
  CHECK(pfm_close(each) == 0);

  /* ALL: one aggregate. */
  int all = pfm_open(PFM_DEVICE, O_RDONLY | PCNTOPENALL);
  CHECK(all >= 0);
  CHECK(pfm_ioctl(all, PCNTGETCNT, &p) == 0);  /* the counts survive close and open */
  CHECK(cntrs[0].pf_cntr0 == 1 + 2 + 3 + 4);
  CHECK(cntrs[0].pf_cntr1 == 32 + 64);

  /* Argument errors. */
  struct iccsr bad = mux(0x5, 0, 0, 0, 0);
  CHECK_ERRNO(pfm_ioctl(all, PCNTSETMUX, &bad), EINVAL);  /* MUX0 5 is undefined */
  bad = mux(PF_CYCLES, 0, PF_DCACHE, 0, 3);
  CHECK_ERRNO(pfm_ioctl(all, PCNTSETMUX, &bad), EINVAL);  /* both counters disabled */
  bad = mux(PF_CYCLES, 0, PF_DCACHE, 0, 0);
  bad.iccsr_ign2 = 0xFFFFFu;                              /* ignore fields: ignored */
  CHECK(pfm_ioctl(all, PCNTSETMUX, &bad) == 0);
  CHECK_ERRNO(pfm_ioctl(all, PCNTSETMUX, NULL), EFAULT);
  CHECK_ERRNO(pfm_ioctl(all, PCNTGETCNT, NULL), EFAULT);
  struct pfcntrs* null_array = 0;
  CHECK_ERRNO(pfm_ioctl(all, PCNTGETCNT, &null_array), EFAULT);
  long items = 0;
  CHECK_ERRNO(pfm_ioctl(all, PCNTSETITEMS, &items), EINVAL);
  items = 8;
  CHECK_ERRNO(pfm_ioctl(all, PCNTSETITEMS, &items), EINVAL);
  CHECK_ERRNO(pfm_ioctl(all, 0x2000507FUL, 0), EINVAL);    /* _IO('P',127): no such request */
  CHECK_ERRNO(pfm_ioctl(all + 100, PCNTRENABLE, 0), EBADF);
  CHECK(pfm_close(all) == 0);
  CHECK_ERRNO(pfm_close(all), EBADF);
}

int main(int argc, char** argv) {
  if (argc > 1) dir = argv[1];
  counters();
  ipl_histogram();
  profile();
  multiprocessor();
  printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
