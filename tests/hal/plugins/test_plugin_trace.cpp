// Issue 26, item 11: a plugin that aborts or exits in a constructor, whose factory hangs, or
// whose descriptor holds a garbage pointer took every command down with nothing printed. With
// PMC_DEBUG=plugins the loader names each file on stderr before it runs the plugin's code
// (docs/writing-a-backend.md), so `pmc probe` shows which plugin did it: the last trace line.
// The plugins are tests/plugins/deadly.cpp, each alone in its directory, given to pmc through a
// config file's plugin_path. Every wait has a time limit; a hung pmc is killed.
#define BOOST_TEST_MODULE plugin_trace
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  pmc_test::TempDir tmp{"pmc-test-plugin-trace"};
  pmc_test::Env env;
  fs::path err = tmp.path() / "stderr";
  Fixture() {
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = tmp.path().string();
    env["XDG_CONFIG_HOME"] = tmp.path().string();
    env["PMC_CACHE_DIR"] = (tmp.path() / "cache").string();
    env["LC_ALL"] = "C";
    env["PMC_DEBUG"] = "plugins";
  }
  static fs::path library(const std::string& name) {
    return fs::path(PMC_TEST_PLUGIN_DIR) / name / ("lib" + name + ".so");
  }
  // Starts `pmc --config C probe` with the plugin directory of `name` in C's plugin_path.
  pid_t probe(const std::string& name) {
    const fs::path config = tmp.path() / "config.toml";
    pmc_test::spit(config, "plugin_path = [\"" + (fs::path(PMC_TEST_PLUGIN_DIR) / name).string() + "\"]\n");
    const pid_t pid = pmc_test::spawn(fs::path(PMC_BIN_DIR) / "pmc", {"--config", config.string(), "probe"}, env,
                                      tmp.path() / "stdout", err);
    BOOST_REQUIRE_MESSAGE(pid > 0, "posix_spawn: " << std::strerror(-pid));
    return pid;
  }
  // The wait status, or nullopt when pmc had not ended after `limit` (then it is killed).
  static std::optional<int> wait(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return std::nullopt;
      }
      std::this_thread::sleep_for(5ms);
    }
  }
  // The last "pmchal: plugins:" line of stderr.
  std::string last_trace() const {
    const std::string text = pmc_test::slurp(err);
    std::string last;
    std::size_t pos = 0;
    while ((pos = text.find("pmchal: plugins: ", pos)) != std::string::npos) {
      const std::size_t end = text.find('\n', pos);
      last = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      pos = end == std::string::npos ? text.size() : end;
    }
    return last;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_constructor_that_aborts_is_named, Fixture) {
  const auto status = wait(probe("ctorabort"), 60s);
  BOOST_REQUIRE(status.has_value());
  BOOST_TEST((WIFSIGNALED(*status) && WTERMSIG(*status) == SIGABRT), pmc_test::slurp(err));
  BOOST_TEST(last_trace() == "pmchal: plugins: loading " + library("ctorabort").string() + " (its constructors run now)",
             pmc_test::slurp(err));
}

BOOST_FIXTURE_TEST_CASE(a_constructor_that_exits_is_named, Fixture) {
  const auto status = wait(probe("ctorexit"), 60s);
  BOOST_REQUIRE(status.has_value());
  BOOST_TEST((WIFEXITED(*status) && WEXITSTATUS(*status) == 7), pmc_test::slurp(err));
  BOOST_TEST(last_trace() == "pmchal: plugins: loading " + library("ctorexit").string() + " (its constructors run now)",
             pmc_test::slurp(err));
}

// A hanging factory: pmc never ends; once the trace names the factory call, the test kills it.
BOOST_FIXTURE_TEST_CASE(a_factory_that_hangs_is_named, Fixture) {
  const pid_t pid = probe("hangfactory");
  const std::string expected =
      "pmchal: plugins: calling the factory of backend 'deadly' in " + library("hangfactory").string();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (last_trace() != expected && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  BOOST_TEST(last_trace() == expected, pmc_test::slurp(err));
  BOOST_TEST(!wait(pid, 200ms).has_value(), "pmc ended although the factory never returns");
}

BOOST_FIXTURE_TEST_CASE(a_garbage_name_pointer_is_named, Fixture) {
  const auto status = wait(probe("garbagename"), 60s);
  BOOST_REQUIRE(status.has_value());
  // SIGSEGV (a sanitizer build reports it and exits non-zero instead).
  BOOST_TEST(!(WIFEXITED(*status) && WEXITSTATUS(*status) == 0), pmc_test::slurp(err));
  BOOST_TEST(last_trace() == "pmchal: plugins: loaded " + library("garbagename").string() + "; reading its descriptors",
             pmc_test::slurp(err));
}

// Without PMC_DEBUG the loader says nothing about plugins that load.
BOOST_FIXTURE_TEST_CASE(no_trace_without_pmc_debug, Fixture) {
  env.erase("PMC_DEBUG");
  const auto status = wait(probe("ctorexit"), 60s);
  BOOST_REQUIRE(status.has_value());
  BOOST_TEST(last_trace() == "", pmc_test::slurp(err));
}
