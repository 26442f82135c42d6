/* pmc-child: the small program pmc::run_child (hal/src/process.cpp) starts with posix_spawn, so
 * that counting a command never copies the caller's address space (a fork of a process with the
 * plugins and catalogs loaded costs its page tables, and every page the caller writes while the
 * copy lives costs a copy-on-write fault: docs/performance.md, "Running the command"). Not for
 * people: run_child gives it its descriptors by number, with close-on-exec cleared for it alone.
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int number(const char* text, long min, long max, long* out) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < min || v > max) return 0;
  *out = v;
  return 1;
}

/* 1 when a byte arrived, 0 at end of file or on an error. */
static int one_byte(int fd) {
  char c = 0;
  ssize_t n = 0;
  do {
    n = read(fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  return n == 1;
}

static int usage(void) {
  static const char text[] =
      "pmc-child: a helper of pmchal's run_child, not a command: pmc-child exec GO FAILED PATH ARGV0 [ARG...] | "
      "pmc-child watch WATCH GROUP\n";
  if (write(STDERR_FILENO, text, sizeof text - 1) < 0) return 2;
  return 2;
}

static int run_exec(char** argv) {
  long go = 0, failed = 0;
  if (!number(argv[2], 0, INT_MAX, &go) || !number(argv[3], 0, INT_MAX, &failed) || go == failed) return usage();
  if (fcntl((int)go, F_GETFD) < 0 || fcntl((int)failed, F_SETFD, FD_CLOEXEC) != 0) return 127;
  if (!one_byte((int)go)) return 127; /* the caller gave up before the exec */
  close((int)go);
  execv(argv[4], argv + 5);
  const int err = errno;
  if (write((int)failed, &err, sizeof err) < 0) return 127;
  return 127;
}

static int run_watch(char** argv) {
  long watch = 0, group = 0;
  if (!number(argv[2], 0, INT_MAX, &watch) || !number(argv[3], 2, INT_MAX, &group)) return usage();
  static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; ++i) sigaction(ignored[i], &ignore, NULL);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd)
    if (fd != (int)watch && null >= 0) dup2(null, fd);
  /* Nothing else of the caller's: not the command's `go` pipe, not a reader's pipe on stdout. */
  const int w = (int)watch;
  if (w > 3) close_range(3, (unsigned)w - 1, 0);
  close_range((unsigned)w + 1 > 3 ? (unsigned)w + 1 : 3, ~0U, 0);
  if (!one_byte(w)) kill(-(pid_t)group, SIGKILL); /* the caller died */
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 6 && strcmp(argv[1], "exec") == 0) return run_exec(argv);
  if (argc == 4 && strcmp(argv[1], "watch") == 0) return run_watch(argv);
  return usage();
}
