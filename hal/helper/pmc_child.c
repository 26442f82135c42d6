/* pmc-child: the small program pmc::run_child (hal/src/process/process.cpp) starts with posix_spawn, so
 * that counting a command never copies the caller's address space (a fork of a process with the
 * plugins and catalogs loaded costs its page tables, and every page the caller writes while the
 * copy lives costs a copy-on-write fault: docs/performance.md, "Start-up"). Not for people:
 * run_child gives it its descriptors by number, with close-on-exec cleared for it alone.
 *
 *   pmc-child exec GO FAILED PATH ARGV0 [ARG...]
 *     Waits for one byte on descriptor GO (the caller has opened the counters on this process);
 *     at end of file (the caller gave up) exits 127 without running anything. Then executes
 *     PATH with ARGV0 ARG... in this same process (enable_on_exec counters start there); when
 *     that fails, writes errno to descriptor FAILED and exits 127. Neither descriptor reaches
 *     the command. Everything else the caller left inheritable does, as after fork and exec.
 *
 *   pmc-child watch WATCH GROUP
 *     The watchdog: holds nothing of the caller's but descriptor WATCH (standard input, output
 *     and error on /dev/null), ignores the terminal's signals (run_child makes it a session of
 *     its own), and waits for a byte on WATCH. End of file without one means the caller died
 *     without saying it was done: it kills process group GROUP (the command and all it
 *     started) with SIGKILL.
 *
 * On x86-64 Linux it is built without a C library (PMC_CHILD_FREESTANDING: the system calls
 * below, and _start): a static glibc program spends about 0.45 ms starting up on the project's
 * virtual machines (its CPU-feature probing executes CPUID, a trap to the hypervisor, a dozen
 * times), on the way to every counted command; this one about 0.05 ms. Elsewhere, and in the
 * sanitizer builds, the same code runs on the C library.
 */
#ifdef PMC_CHILD_FREESTANDING

typedef long ssize_t;
typedef unsigned long size_t;
#define EINTR 4
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGKILL 9
#define SIGPIPE 13
#define SIGTERM 15
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define F_SETFD 2
#define F_GETFD 1
#define FD_CLOEXEC 1
#define O_RDWR 2
#define O_CLOEXEC 02000000
#define SIG_IGN_HANDLER ((void*)1)

static long sys6(long n, long a, long b, long c, long d) {
  long r;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
/* The kernel returns -errno; these keep the libc shape: -1, and the error in child_errno. */
static int child_errno;
static long ret(long r) {
  if (r < 0 && r > -4096) {
    child_errno = (int)-r;
    return -1;
  }
  return r;
}
static ssize_t sys_read(int fd, void* buf, size_t n) { return ret(sys6(0, fd, (long)buf, (long)n, 0)); }
static ssize_t sys_write(int fd, const void* buf, size_t n) { return ret(sys6(1, fd, (long)buf, (long)n, 0)); }
static int sys_open(const char* path, int flags) { return (int)ret(sys6(2, (long)path, flags, 0, 0)); }
static int sys_close(int fd) { return (int)ret(sys6(3, fd, 0, 0, 0)); }
static int sys_dup2(int from, int to) { return (int)ret(sys6(33, from, to, 0, 0)); }
static int sys_fcntl(int fd, int cmd, long arg) { return (int)ret(sys6(72, fd, cmd, arg, 0)); }
static int sys_kill(int pid, int sig) { return (int)ret(sys6(62, pid, sig, 0, 0)); }
static int sys_close_range(unsigned first, unsigned last) { return (int)ret(sys6(436, first, last, 0, 0)); }
static int sys_execve(const char* path, char* const* argv, char* const* envp) {
  return (int)ret(sys6(59, (long)path, (long)argv, (long)envp, 0));
}
__attribute__((noreturn)) static void sys_exit(int code) {
  for (;;) sys6(60, code, 0, 0, 0);
}
/* rt_sigaction's kernel structure: handler, flags, restorer, mask (8 bytes of signals). */
struct kernel_sigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  unsigned long mask;
};
static void ignore_signal(int sig) {
  struct kernel_sigaction sa;
  sa.handler = SIG_IGN_HANDLER;
  sa.flags = 0;
  sa.restorer = 0;
  sa.mask = 0;
  (void)sys6(13, sig, (long)&sa, 0, sizeof sa.mask);
}
static int equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

#else /* on the C library */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define child_errno errno
static ssize_t sys_read(int fd, void* buf, size_t n) { return read(fd, buf, n); }
static ssize_t sys_write(int fd, const void* buf, size_t n) { return write(fd, buf, n); }
static int sys_open(const char* path, int flags) { return open(path, flags); }
static int sys_close(int fd) { return close(fd); }
static int sys_dup2(int from, int to) { return dup2(from, to); }
static int sys_fcntl(int fd, int cmd, long arg) { return fcntl(fd, cmd, arg); }
static int sys_kill(int pid, int sig) { return kill(pid, sig); }
static int sys_close_range(unsigned first, unsigned last) { return close_range(first, last, 0); }
static int sys_execve(const char* path, char* const* argv, char* const* envp) { return execve(path, argv, envp); }
static void ignore_signal(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(sig, &sa, NULL);
}
static int equal(const char* a, const char* b) { return strcmp(a, b) == 0; }

#endif

/* A decimal number in [min, max]; 0 when the text is not one. */
static int number(const char* text, long min, long max, long* out) {
  long v = 0;
  if (!*text) return 0;
  for (; *text; ++text) {
    if (*text < '0' || *text > '9' || v > (max - (*text - '0')) / 10) return 0;
    v = v * 10 + (*text - '0');
  }
  if (v < min) return 0;
  *out = v;
  return 1;
}

/* 1 when a byte arrived, 0 at end of file or on an error. */
static int one_byte(int fd) {
  char c = 0;
  ssize_t n = 0;
  do {
    n = sys_read(fd, &c, 1);
  } while (n < 0 && child_errno == EINTR);
  return n == 1;
}

static int usage(void) {
  static const char text[] =
      "pmc-child: a helper of pmchal's run_child, not a command: pmc-child exec GO FAILED PATH ARGV0 [ARG...] | "
      "pmc-child watch WATCH GROUP\n";
  if (sys_write(2, text, sizeof text - 1) < 0) return 2;
  return 2;
}

static int run_exec(char** argv, char** envp) {
  long go = 0, failed = 0;
  if (!number(argv[2], 0, 0x7FFFFFFF, &go) || !number(argv[3], 0, 0x7FFFFFFF, &failed) || go == failed) return usage();
  if (sys_fcntl((int)go, F_GETFD, 0) < 0 || sys_fcntl((int)failed, F_SETFD, FD_CLOEXEC) != 0) return 127;
  if (!one_byte((int)go)) return 127; /* the caller gave up before the exec */
  sys_close((int)go);
  sys_execve(argv[4], argv + 5, envp);
  const int err = child_errno;
  if (sys_write((int)failed, &err, sizeof err) < 0) return 127;
  return 127;
}

static int run_watch(char** argv) {
  long watch = 0, group = 0;
  if (!number(argv[2], 0, 0x7FFFFFFF, &watch) || !number(argv[3], 2, 0x7FFFFFFF, &group)) return usage();
  static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
  for (unsigned i = 0; i < sizeof ignored / sizeof ignored[0]; ++i) ignore_signal(ignored[i]);
  const int w = (int)watch;
  const int null = sys_open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd)
    if (fd != w && null >= 0) sys_dup2(null, fd);
  /* Nothing else of the caller's: not the command's `go` pipe, not a reader's pipe on stdout. */
  if (w > 3) sys_close_range(3, (unsigned)w - 1);
  sys_close_range((unsigned)w + 1 > 3 ? (unsigned)w + 1 : 3, ~0U);
  if (!one_byte(w)) sys_kill(-(int)group, SIGKILL); /* the caller died */
  return 0;
}

static int child_main(int argc, char** argv, char** envp) {
  if (argc >= 6 && equal(argv[1], "exec")) return run_exec(argv, envp);
  if (argc == 4 && equal(argv[1], "watch")) return run_watch(argv);
  return usage();
}

#ifdef PMC_CHILD_FREESTANDING
/* The process starts here: the stack holds argc, the argument pointers, a null, the environment
 * pointers, a null. */
__attribute__((used, noreturn)) void pmc_child_start(long* stack) {
  const int argc = (int)stack[0];
  char** argv = (char**)(stack + 1);
  sys_exit(child_main(argc, argv, argv + argc + 1));
}
__asm__(
    ".text\n"
    ".global _start\n"
    "_start:\n"
    "  xor %rbp, %rbp\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call pmc_child_start\n"
    "  hlt\n");
#else
extern char** environ;
int main(int argc, char** argv) { return child_main(argc, argv, environ); }
#endif
