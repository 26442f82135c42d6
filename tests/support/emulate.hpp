// What tests/hal/emulate/test_emulate.cpp and tests/cli/test_emulate_cli.cpp share: the test program (tests/data/emulate/
// loop.c, built here with gcc -O1 -g), a plain cachegrind run whose own summary (Valgrind's
// text, not pmchal's parser) the emulated counts are checked against, Hals on CPUID dumps, and
// the preconditions (valgrind and gcc installed).
#pragma once

#include <pmc/pmc.hpp>

#include "support/child_process.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

extern char** environ;

namespace pmc_test {

inline bool on_path(const char* name) {
  try {
    (void)pmc::find_executable(name);
    return true;
  } catch (const pmc::Error&) {
    return false;
  }
}

namespace detail {
inline boost::test_tools::assertion_result valgrind_and_gcc(boost::unit_test::test_unit_id) {
  const bool ok = on_path("valgrind") && on_path("gcc");
  boost::test_tools::assertion_result r(ok);
  r.message() << "valgrind or gcc is not installed (Debian packages valgrind and gcc)";
  return r;
}
}  // namespace detail

// The emulation runs programs under Valgrind, and the tests build theirs with gcc.
inline boost::unit_test::precondition requires_valgrind() {
  return boost::unit_test::precondition(&detail::valgrind_and_gcc);
}

// This process's environment, for a child that must see exactly what an emulated run's child
// sees (the C runtime's start-up reads it: its instruction count depends on it).
inline Env current_env() {
  Env env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

// tests/data/emulate/loop.c built with fixed flags into a scratch directory.
struct LoopProgram {
  TempDir dir{"pmc-test-emulate"};
  fs::path exe = dir.path() / "loop";
  LoopProgram() {
    const Result r = run(pmc::find_executable("gcc"),
                         {"-O1", "-g", "-o", exe.string(), std::string(PMC_TEST_DATA) + "/emulate/loop.c"},
                         current_env(), dir.path());
    if (r.status != 0) throw std::runtime_error("building loop.c failed: " + r.err);
  }
};

// The figures of Valgrind's own end-of-run summary (its log), by label: "I refs", "D refs",
// "Branches", "Mispredicts", "LL misses" ...
using Summary = std::map<std::string, std::uint64_t>;

inline Summary parse_summary(const std::string& log) {
  Summary out;
  static const std::regex line(R"(==\d+== ([A-Za-z0-9 ]+?):\s+([0-9,]+))");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
    std::string digits = (*it)[2].str();
    std::erase(digits, ',');
    std::string label = (*it)[1].str();
    // "I   refs" -> "I refs"
    label = std::regex_replace(label, std::regex(" +"), " ");
    out[label] = std::stoull(digits);
  }
  return out;
}

// Runs exe with args and this process's own environment, in its order (the C runtime's start-up
// walks it: its instruction count depends on it, as in the emulated run's child), in the current
// directory, its output to files in scratch. Returns the exit status.
inline int run_here(const fs::path& exe, const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> argv_s{exe.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = c_strings(argv_s);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (scratch / "here.stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (scratch / "here.stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs the program under plain cachegrind, as a user would, with the same caches, environment
// and working directory as the emulated run, and returns Valgrind's own summary.
inline Summary plain_cachegrind(const std::vector<std::string>& argv, const pmc::CacheHierarchy& c,
                                const TempDir& scratch) {
  auto cache = [](const pmc::CacheGeometry& g) {
    return std::to_string(g.size) + "," + std::to_string(g.ways) + "," + std::to_string(g.line);
  };
  const fs::path log = scratch.path() / "plain.log";
  std::vector<std::string> args{"--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                                "--I1=" + cache(c.l1i), "--D1=" + cache(c.l1d), "--LL=" + cache(c.ll),
                                "--cachegrind-out-file=" + (scratch.path() / "plain.out").string(),
                                "--log-file=" + log.string()};
  args.insert(args.end(), argv.begin(), argv.end());
  const int status = run_here(pmc::find_executable("valgrind"), args, scratch.path());
  if (status < 0) throw std::runtime_error("plain cachegrind run failed: " + slurp(scratch.path() / "here.stderr"));
  return parse_summary(slurp(log));
}

inline pmc::Hal open_hal(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = dump;
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

inline std::string bundled(const std::string& name) { return std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name; }
inline std::string emulate_data(const std::string& name) { return std::string(PMC_TEST_DATA) + "/emulate/" + name; }

}  // namespace pmc_test
