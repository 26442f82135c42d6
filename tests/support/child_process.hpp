// Test support: run a child process with exactly the environment given, capturing stdout,
// stderr and the exit status; temporary directories; whole-file reads and writes.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace pmc_test {

namespace fs = std::filesystem;

struct Result {
  int status = -1;   // exit status, or -signal
  std::string out;
  std::string err;
  std::string command;
};

inline std::ostream& operator<<(std::ostream& os, const Result& r) {
  return os << "`" << r.command << "` exited " << r.status << "\n--- stdout:\n" << r.out << "--- stderr:\n" << r.err;
}

inline std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
}

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "pmc-test") {
    std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

using Env = std::map<std::string, std::optional<std::string>>;  // nullopt = unset


// A NULL-terminated char* array over strings that must outlive it (argv, envp for exec).
inline std::vector<char*> c_strings(std::vector<std::string>& owned) {
  std::vector<char*> out;
  for (auto& s : owned) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// "KEY=value" for every variable that is set, plus the sanitizer runtime's options of this run
// when env does not name them: a sanitizer build of a test that runs itself (or pmc) as a child
// must check the child as the run asked (scripts/ci-sanitizers.sh), not by the runtime's defaults.
inline std::vector<std::string> env_strings(const Env& env) {
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    if (v) out.push_back(k + "=" + *v);
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
    const char* value = std::getenv(name);
    if (value && !env.count(name)) out.push_back(std::string(name) + "=" + value);
  }
  return out;
}

// Starts exe with args and exactly the environment env in the background, with default signal
// dispositions and an empty signal mask whatever the caller inherited (a signal test must see
// what a shell's child sees); stdin from /dev/null; stdout to out_fd when it is >= 0, else to
// the file `out`, else inherited; stderr to the file `err`, else inherited. Returns the pid, or
// minus the errno of posix_spawn.
inline pid_t spawn(const fs::path& exe, const std::vector<std::string>& args, const Env& env, const fs::path& out = {},
                   const fs::path& err = {}, int out_fd = -1) {
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = c_strings(argv_s);
  std::vector<std::string> env_s = env_strings(env);
  std::vector<char*> envp = c_strings(env_s);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  else if (!out.empty())
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!err.empty()) posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -rc;
}

// Runs exe with args and exactly the environment env (no variable of ours leaks in; only the
// sanitizer options, see env_strings), in cwd.
inline Result run(const fs::path& exe, const std::vector<std::string>& args, const Env& env, const fs::path& scratch,
           const fs::path& cwd = {}) {
  Result r;
  r.command = exe.string();
  std::vector<std::string> argv_s{exe.string()};
  for (const auto& a : args) {
    argv_s.push_back(a);
    r.command += " " + a;
  }
  std::vector<char*> argv = c_strings(argv_s);
  std::vector<std::string> env_s = env_strings(env);
  std::vector<char*> envp = c_strings(env_s);

  const fs::path out_file = scratch / "child.stdout";
  const fs::path err_file = scratch / "child.stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r.err = std::string("posix_spawn failed: ") + std::strerror(rc);
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
  r.out = slurp(out_file);
  r.err = slurp(err_file);
  return r;
}

// Whether process pid catches signal sig (its SigCgt mask in /proc/PID/status) within ms
// milliseconds: a signal sent earlier would meet the default action, not the program's handler.
inline bool catches_signal_within(pid_t pid, int sig, int ms) {
  for (int waited = 0; waited < ms; waited += 10) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("SigCgt:", 0) == 0 && ((std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1u) != 0)
        return true;
    ::usleep(10000);
  }
  return false;
}

// This test program's own arguments (/proc/self/cmdline), for a helper mode a test starts it in
// (`TEST -- pmc-helper ...`), read by a static initializer before Boost.Test's main.
inline std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(in, a, '\0')) args.push_back(a);
  return args;
}

}  // namespace pmc_test
