// What the tests of the `pmc` command share (test_cli.cpp, test_cli_list.cpp, test_cli_stat.cpp):
// the built PMC_BIN_DIR/pmc as a child process with its own environment (HOME and
// XDG_CONFIG_HOME pointed at a temporary directory, PMC_CONFIG unset, so the developer's real
// config never leaks in), checking exit status, stdout and stderr separately.
#pragma once

#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "support/messages.hpp"

namespace pmc_test::cli {

using pmc_test::Env;
using pmc_test::Result;
using pmc_test::TempDir;
using pmc_test::contains;
using pmc_test::run;
using pmc_test::slurp;
using pmc_test::spit;

namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

// ---------------------------------------------------------------------------------------------
// A child process with captured stdout, stderr and exit status.

// stderr holds exactly one non-empty line.
inline bool one_line(const std::string& err) {
  return err.size() > 1 && err.back() == '\n' && err.find('\n') == err.size() - 1;
}

// A JSON document, or a null with the parse error reported.
inline json parse_json(const Result& r) {
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    BOOST_ERROR("stdout is not JSON (" << e.what() << "): " << r);
    return json();
  }
}

// "file:line:column" -> file.
inline std::string source_file(const std::string& source) {
  static const std::regex pos(R"(^(.*):([0-9]+):([0-9]+)$)");
  std::smatch m;
  if (std::regex_match(source, m, pos)) return m[1].str();
  return source;
}

inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

inline const json* find_by(const json& array, const char* key, const std::string& value) {
  if (!array.is_array()) return nullptr;
  for (const auto& e : array)
    if (e.is_object() && e.contains(key) && e[key] == value) return &e;
  return nullptr;
}

// Each test gets a scratch directory holding an empty HOME and XDG_CONFIG_HOME; PMC_CONFIG unset.
struct Cli {
  TempDir tmp{"pmc-test-cli"};
  fs::path home = tmp.path() / "home";
  fs::path xdg = tmp.path() / "xdg";
  Env env;

  Cli() {
    fs::create_directories(home);
    fs::create_directories(xdg);
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = home.string();
    env["XDG_CONFIG_HOME"] = xdg.string();
    env["LC_ALL"] = "C";
  }

  Result pmc(const std::vector<std::string>& args) { return run(kPmc, args, env, tmp.path()); }

  // Expects exit 1 and one line on stderr that contains every word.
  Result fails(const std::vector<std::string>& args, const std::vector<std::string>& words, int status = 1) {
    Result r = pmc(args);
    BOOST_TEST(r.status == status, r);
    BOOST_TEST(one_line(r.err), r);
    BOOST_TEST(r.err.rfind("pmc: ", 0) == 0u, r);
    for (const auto& w : words) BOOST_TEST(contains(r.err, w), "stderr lacks '" << w << "': " << r);
    return r;
  }
};

inline const std::vector<std::string> kP3 = {"--cpuid-dump", "pentium-iii"};

inline std::vector<std::string> args(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace pmc_test::cli
