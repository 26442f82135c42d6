// A Boost.Test fixture that runs the built `pmc` in a clean environment: its own HOME and
// XDG_CONFIG_HOME (so no config file of the user running the tests is read), the caller's PATH,
// LC_ALL=C, and a scratch directory that is removed afterwards.
#pragma once

#include "child_process.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace pmc_test {

struct PmcCommand {
  TempDir tmp{"pmc-test-command"};
  fs::path home = tmp.path() / "home";
  Env env;

  PmcCommand() {
    fs::create_directories(home);
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = home.string();
    env["XDG_CONFIG_HOME"] = home.string();
    env["LC_ALL"] = "C";
  }
  Result pmc(const std::vector<std::string>& args) {
    return run(fs::path(PMC_BIN_DIR) / "pmc", args, env, tmp.path());
  }
};

}  // namespace pmc_test
