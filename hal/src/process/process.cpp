// Running a command to count it (pmc/process.hpp). The command's process and the watchdog are
// the helper program pmc-child started with posix_spawn (child.hpp); without it, forks of this
// process, which between fork and exec call only async-signal-safe functions, so an embedder's
// threads cannot deadlock them.
#include "child.hpp"
#include "clock.hpp"
#include "root_safety.hpp"

#include <pmc/error.hpp>
#include <pmc/paths.hpp>
#include <pmc/process.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace pmc {

namespace {

std::mutex g_run_mutex;
volatile sig_atomic_t g_group = 0;        // the command's process group, for the handler
volatile sig_atomic_t g_interrupted = 0;  // a forwarded signal arrived
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void forward_signal(int sig) {
  g_interrupted = 1;
  if (g_group > 0) ::kill(-static_cast<pid_t>(g_group), sig);
}

using detail::monotonic_ns;

bool forwarded(int sig) {
  for (int s : kForwarded)
    if (s == sig) return true;
  return false;
}

// Gives the terminal to a process group, ignoring SIGTTOU meanwhile (a background caller gets it).
void give_terminal(int fd, pid_t group) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTTOU);
  sigprocmask(SIG_BLOCK, &block, &old);
  (void)tcsetpgrp(fd, group);
  sigprocmask(SIG_SETMASK, &old, nullptr);
}

[[noreturn]] void cannot_run(std::string_view name, errc code, std::string_view why) {
  throw Error(code, fmt::format("cannot run '{}': {}", name, why));
}

// The checks of find_executable() on one candidate file.
std::filesystem::path checked(std::string_view name, const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) cannot_run(name, errno == ENOENT ? errc::not_found : errc::permission, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) cannot_run(name, errc::permission, "it is a directory");
  if (!S_ISREG(st.st_mode)) cannot_run(name, errc::permission, "it is not a regular file");
  if (::access(file.c_str(), X_OK) != 0) cannot_run(name, errc::permission, std::strerror(errno));
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EACCES) return file;  // executable but not readable: the kernel can still run an ELF file
    cannot_run(name, errc::permission, std::strerror(errno));
  }
  std::array<char, 4> head{};
  const ssize_t n = ::read(fd, head.data(), head.size());
  ::close(fd);
  const bool elf = n == 4 && head[0] == 0x7F && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
  const bool script = n >= 2 && head[0] == '#' && head[1] == '!';
  if (!elf && !script)
    cannot_run(name, errc::invalid_argument,
               fmt::format("{} is not an executable: neither an ELF file nor a script starting with #!", file.string()));
  return file;
}

}  // namespace

std::filesystem::path find_executable(std::string_view name) {
  if (name.empty()) throw Error(errc::invalid_argument, "cannot run an empty command name");
  if (name.find('/') != std::string_view::npos) return checked(name, std::filesystem::path(std::string(name)));
  const char* env = std::getenv("PATH");
  const std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t pos = 0;
  std::optional<Error> first;
  while (pos <= path.size()) {
    const std::size_t colon = path.find(':', pos);
    const std::string_view dir =
        std::string_view(path).substr(pos, colon == std::string::npos ? std::string_view::npos : colon - pos);
    // POSIX: an empty PATH entry is the current directory.
    const std::filesystem::path candidate =
        (dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir)) / std::filesystem::path(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      try {
        return checked(name, candidate);
      } catch (const Error& e) {
        if (!first) first = e;  // a later PATH entry may still have a good one
      }
    }
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  if (first) throw *first;
  cannot_run(name, errc::not_found, "No such file or directory (not found in $PATH)");
}

namespace detail {

std::filesystem::path child_helper() {
  const std::filesystem::path helper = default_paths().plugins.parent_path() / "pmc-child";
  struct stat st {};
  if (::stat(helper.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(helper.c_str(), X_OK) != 0) return {};
  if (unsafe_for_root(helper)) return {};  // as root, only a file nobody else may replace
  return helper;
}

}  // namespace detail

namespace {

// posix_spawn of the helper (hal/helper/pmc_child.c) with `args` after its path, descriptor
// `keep` (and `keep2`, when not -1) made inheritable in the child alone (a posix_spawn dup2 of a
// descriptor onto itself clears its close-on-exec flag there). Returns the pid, or -1 with errno.
pid_t spawn_helper(const std::string& helper, const std::vector<std::string>& args, int keep, int keep2,
                   const posix_spawnattr_t& attr) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(helper.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (int err = posix_spawn_file_actions_init(&actions)) {
    errno = err;
    return -1;
  }
  int err = posix_spawn_file_actions_adddup2(&actions, keep, keep);
  if (!err && keep2 >= 0) err = posix_spawn_file_actions_adddup2(&actions, keep2, keep2);
  pid_t pid = -1;
  if (!err) err = posix_spawn(&pid, helper.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err) {
    errno = err;
    return -1;
  }
  return pid;
}

// The command's process through the helper: in a process group of its own, with an empty signal
// mask and SIGPIPE at its default action (as a shell starts a command; pmc ignores SIGPIPE for
// itself), waiting on `go` to execute `exe`. -1 with errno when the helper could not be started.
pid_t spawn_command(const std::string& helper, int go, int failed, const std::string& exe,
                    const std::vector<std::string>& argv_in) {
  std::vector<std::string> args{"exec", std::to_string(go), std::to_string(failed), exe};
  args.insert(args.end(), argv_in.begin(), argv_in.end());
  posix_spawnattr_t attr;
  if (int err = posix_spawnattr_init(&attr)) {
    errno = err;
    return -1;
  }
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  sigaddset(&reset, SIGPIPE);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &reset);
  const pid_t pid = spawn_helper(helper, args, go, failed, attr);
  const int err = errno;
  posix_spawnattr_destroy(&attr);
  errno = err;
  return pid;
}

// The watchdog through the helper: a session of its own, nothing blocked, reading `watch`.
pid_t spawn_watchdog(const std::string& helper, int watch, pid_t group) {
  posix_spawnattr_t attr;
  if (int err = posix_spawnattr_init(&attr)) {
    errno = err;
    return -1;
  }
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigmask(&attr, &none);
  const pid_t pid = spawn_helper(helper, {"watch", std::to_string(watch), std::to_string(group)}, watch, -1, attr);
  const int err = errno;
  posix_spawnattr_destroy(&attr);
  errno = err;
  return pid;
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv_in, const ChildOptions& options) {
  return detail::run_child(argv_in, options, detail::child_helper());
}

ChildResult detail::run_child(const std::vector<std::string>& argv_in, const ChildOptions& options,
                              const std::filesystem::path& helper_file) {
  if (argv_in.empty()) throw Error(errc::invalid_argument, "no command to run");
  std::lock_guard<std::mutex> lock(g_run_mutex);
  const std::filesystem::path exe = find_executable(argv_in[0]);
  // Everything the child needs, made before the fork.
  std::vector<char*> argv;
  for (const auto& a : argv_in) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string exe_path = exe.string();

  // `go`: the child waits on it until its counters are open; `failed`: the errno of a failed
  // exec (close-on-exec: a successful exec closes it empty).
  int go[2], failed[2];
  if (pipe2(go, O_CLOEXEC) != 0) throw Error(errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(failed, O_CLOEXEC) != 0) {
    ::close(go[0]);
    ::close(go[1]);
    throw Error(errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  }
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  for (int sig : kForwarded) sigaddset(&blocked, sig);
  sigprocmask(SIG_BLOCK, &blocked, &previous);  // until the handlers are in place
  const bool terminal = ::isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  std::fflush(stdout);
  std::fflush(stderr);
  // With the helper, no copy of this process is made (posix_spawn); without it (not installed,
  // or it could not be started), a fork whose child waits and executes the command itself.
  const std::string helper = helper_file.string();
  pid_t pid = helper.empty() ? -1 : spawn_command(helper, go[0], failed[1], exe_path, argv_in);
  const bool spawned = pid > 0;
  if (!spawned) pid = fork();
  if (pid < 0) {
    const int err = errno;
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    for (int fd : {go[0], go[1], failed[0], failed[1]}) ::close(fd);
    throw Error(errc::io, fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    // As a shell starts a command (spawn_command): SIGPIPE at its default action, nothing blocked.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::close(go[1]);
    ::close(failed[0]);
    char c = 0;
    ssize_t n = 0;
    do {
      n = ::read(go[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // the parent gave up before the exec
    ::execv(exe_path.c_str(), argv.data());
    const int err = errno;
    if (::write(failed[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before it is used
  ::close(go[0]);
  ::close(failed[1]);

  // The watchdog: kills the command's group when this process dies without saying "done".
  int watch[2] = {-1, -1};
  pid_t watchdog = -1;
  if (pipe2(watch, O_CLOEXEC) == 0) {
    if (spawned) watchdog = spawn_watchdog(helper, watch[0], pid);
    if (watchdog < 0) watchdog = fork();
    if (watchdog == 0) {
      ::setsid();  // no terminal signals reach it
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE}) sigaction(sig, &ignore, nullptr);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      // Hold nothing of the parent's but the pipe: not the child's `go` pipe (whose EOF tells the
      // child to give up), not the caller's stdout (a reader waits for its EOF).
      if (watch[0] != 3 && ::dup2(watch[0], 3) < 0) _exit(0);
      ::close_range(4, ~0U, 0);
      const int null = ::open("/dev/null", O_RDWR);
      if (null >= 0)
        for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
      watch[0] = 3;
      char c = 0;
      ssize_t n = 0;
      do {
        n = ::read(watch[0], &c, 1);
      } while (n < 0 && errno == EINTR);
      if (n != 1) ::kill(-pid, SIGKILL);  // the parent died
      _exit(0);
    }
    ::close(watch[0]);
    if (watchdog < 0) {
      ::close(watch[1]);
      watch[1] = -1;
    }
  }

  g_group = pid;
  g_interrupted = 0;
  struct sigaction forward {}, saved[std::size(kForwarded)];
  forward.sa_handler = forward_signal;
  forward.sa_flags = 0;  // no SA_RESTART: waits return EINTR, and are retried
  sigemptyset(&forward.sa_mask);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &forward, &saved[i]);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (terminal) give_terminal(STDIN_FILENO, pid);

  auto finish = [&] {
    if (terminal) give_terminal(STDIN_FILENO, getpgrp());
    g_group = 0;
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &saved[i], nullptr);
    if (watch[1] >= 0) {
      if (::write(watch[1], "d", 1) != 1) { /* the watchdog is gone: nothing to tell it */ }
      ::close(watch[1]);
      watch[1] = -1;
    }
    if (watchdog > 0) {
      while (::waitpid(watchdog, nullptr, 0) < 0 && errno == EINTR) {
      }
      watchdog = -1;
    }
  };
  rusage ru{};
  auto reap = [&](bool ticking) {
    int status = 0;
    for (;;) {
      const pid_t got = wait4(pid, &status, WUNTRACED | (ticking ? WNOHANG : 0), &ru);
      if (got < 0) {
        if (errno == EINTR) continue;
        return 0;  // not our child any more: nothing to report
      }
      if (got == 0) {  // still running
        options.tick();
        const auto ms = options.tick_interval.count() > 0 ? options.tick_interval.count() : 10;
        timespec wait{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
        nanosleep(&wait, nullptr);  // a forwarded signal ends it early: fine
        continue;
      }
      if (WIFSTOPPED(status)) {
        // Stopped like a shell job: stop too, and continue it when continued.
        if (terminal) give_terminal(STDIN_FILENO, getpgrp());
        ::kill(getpid(), SIGSTOP);
        if (terminal) give_terminal(STDIN_FILENO, pid);
        ::kill(-pid, SIGCONT);
        continue;
      }
      return status;
    }
  };

  try {
    if (options.before_exec) options.before_exec(pid);
  } catch (...) {
    ::close(go[1]);  // the child exits 127 without running the command
    ::close(failed[0]);
    (void)reap(false);
    finish();
    throw;
  }
  const std::uint64_t t0 = monotonic_ns();
  if (::write(go[1], "g", 1) != 1) { /* the child died already: reaped below */ }
  ::close(go[1]);
  int exec_errno = 0;
  ssize_t n = 0;
  do {
    n = ::read(failed[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  ::close(failed[0]);
  const bool exec_failed = n == static_cast<ssize_t>(sizeof exec_errno);
  const int status = reap(static_cast<bool>(options.tick) && !exec_failed);
  ChildResult out;
  out.elapsed_ns = monotonic_ns() - t0;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : out.signal ? 128 + out.signal : 1;
  out.interrupted = g_interrupted != 0 || (out.signal != 0 && forwarded(out.signal));
  // An interrupted command leaves nothing running: what it started in its group goes too.
  if (out.interrupted) ::kill(-pid, SIGKILL);
  finish();
  out.user_seconds = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
  out.system_seconds = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
  if (exec_failed)
    throw Error(exec_errno == ENOENT ? errc::not_found : errc::permission,
                fmt::format("cannot run '{}': {}", argv_in[0], std::strerror(exec_errno)));
  return out;
}

}  // namespace pmc
