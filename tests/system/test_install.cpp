#define BOOST_TEST_MODULE install
#include <boost/test/unit_test.hpp>

// The installed tree: `cmake --install <build> --prefix <tmp>` gives a tree that works on its
// own (the installed pmc finds the installed library, plugins and data, never the build tree's),
// from any working directory, and still works after the whole prefix is moved elsewhere.

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/child_process.hpp"

namespace {

using pmc_test::Env;
using pmc_test::Result;
using pmc_test::TempDir;
using pmc_test::run;
using pmc_test::slurp;

namespace fs = std::filesystem;
using nlohmann::json;

// Layout of the build tree, which mirrors the installed one (bin/, lib/pmchal/plugins, share/pmchal).
const fs::path kBuild = PMC_BUILD_DIR;
const fs::path kBinSub = fs::path(PMC_BIN_DIR).lexically_relative(kBuild);
const fs::path kPluginSub = fs::path(PMC_PLUGIN_DIR).lexically_relative(kBuild);
const fs::path kDataSub = fs::path(PMC_DATA_DIR).lexically_relative(kBuild);

// The first executable `name` on $PATH.
fs::path on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

// True when path lies inside dir (both made absolute and normalised; symlinks resolved).
bool inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  const fs::path d = fs::weakly_canonical(dir, ec);
  auto rel = p.lexically_relative(d);
  return !rel.empty() && *rel.begin() != "..";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Installed {
  TempDir tmp{"pmc-test-install"};
  fs::path prefix = tmp.path() / "prefix";
  fs::path home = tmp.path() / "home";
  fs::path scratch = tmp.path() / "scratch";
  Env env;

  Installed() {
    fs::create_directories(home);
    fs::create_directories(scratch);
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/local/bin:/usr/bin:/bin";
    env["HOME"] = home.string();
    env["XDG_CONFIG_HOME"] = (home / ".config").string();
    env["LC_ALL"] = "C";
  }

  // Runs the installed pmc probe from / and checks that everything it used lives in `root`.
  void check_probe(const fs::path& root) {
    const fs::path pmc = root / kBinSub / "pmc";
    BOOST_REQUIRE_MESSAGE(fs::exists(pmc), pmc << " was not installed");
    Result r = run(pmc, {"probe", "--cpuid-dump", "pentium-iii", "--json"}, env, scratch, "/");
    BOOST_TEST_REQUIRE(r.status == 0, r);
    json j;
    try {
      j = json::parse(r.out);
    } catch (const json::exception& e) {
      BOOST_FAIL("stdout is not JSON: " << e.what() << "\n" << r);
    }
    BOOST_TEST(j["backend"] == "p6", r.out);
    BOOST_REQUIRE(j["plugins"].is_array());
    BOOST_TEST(!j["plugins"].empty(), r.out);
    bool p6 = false, p6_model = false;
    for (const auto& p : j["plugins"]) {
      const fs::path file = p["file"].get<std::string>();
      BOOST_TEST(inside(file, root), file << " is outside the installed tree " << root);
      BOOST_TEST(!inside(file, kBuild), file << " is in the build tree");
      BOOST_TEST(p["error"].is_null(), p.dump());
      if (p["name"] == "p6" && p["kind"] == "backend") p6 = true;
      if (p["name"] == "p6" && p["kind"] == "model") p6_model = true;  // what `stat` below runs on
    }
    BOOST_TEST(p6, "p6 plugin not loaded: " << r.out);
    BOOST_TEST(p6_model, "p6 model plugin not loaded: " << r.out);
    // The bundled CPUID dump came from the installed data too.
    const fs::path dump = j["cpu"]["source"].get<std::string>();
    BOOST_TEST(contains(dump.string(), "pentium-iii"), r.out);
    BOOST_TEST(inside(dump, root), dump << " is outside " << root);

    // The installed events table and bundled workload work as well.
    Result s = run(pmc, {"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "--json"}, env, scratch, "/");
    BOOST_TEST_REQUIRE(s.status == 0, s);
    json st = json::parse(s.out, nullptr, false);
    BOOST_REQUIRE(st.is_object());
    const fs::path workload = st["file"].get<std::string>();
    BOOST_TEST(inside(workload, root), workload << " is outside " << root);
    BOOST_TEST(st["counters"].size() == 2u, s.out);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(install_probe_and_relocate, Installed) {
  const fs::path cmake = on_path("cmake");
  BOOST_REQUIRE_MESSAGE(!cmake.empty(), "cmake is not on PATH");
  Result install = run(cmake, {"--install", kBuild.string(), "--prefix", prefix.string()}, env, scratch, "/");
  BOOST_TEST_REQUIRE(install.status == 0, install);

  // The tree has the public headers (the user API and the plugin SDK), the backend's data file,
  // and the backend and model plugins.
  BOOST_TEST(fs::is_regular_file(prefix / "include" / "pmc" / "hal.hpp"));
  BOOST_TEST(fs::is_regular_file(prefix / "include" / "pmc" / "pmc.hpp"));
  BOOST_TEST(fs::is_regular_file(prefix / "include" / "pmc" / "sdk" / "backend.hpp"));
  BOOST_TEST(fs::is_regular_file(prefix / "include" / "pmc" / "sdk" / "model.hpp"));
  BOOST_TEST(fs::is_regular_file(prefix / kDataSub / "events" / "p6.toml"));
  BOOST_TEST(fs::is_regular_file(prefix / kPluginSub / "libp6.so"));
  BOOST_TEST(fs::is_regular_file(prefix / kPluginSub / "libp6-model.so"));
  BOOST_TEST(fs::is_regular_file(prefix / kDataSub / "cpuid" / "pentium-iii.txt"));
  BOOST_TEST(fs::is_regular_file(prefix / kDataSub / "workloads" / "p6-demo.toml"));
  // The test plugins are not part of the product.
  for (const auto& e : fs::recursive_directory_iterator(prefix))
    BOOST_TEST(!contains(e.path().filename().string(), "throwing"), e.path());

  BOOST_TEST_CONTEXT("installed at " << prefix) { check_probe(prefix); }

  // Relocatable: move the whole prefix and run it again.
  const fs::path moved = tmp.path() / "elsewhere" / "moved-prefix";
  fs::create_directories(moved.parent_path());
  fs::rename(prefix, moved);
  BOOST_REQUIRE(!fs::exists(prefix));
  BOOST_TEST_CONTEXT("moved to " << moved) { check_probe(moved); }

  // Beside the plugins: the helper that starts counted commands, and pmc export's Prometheus
  // module, which only pmc export loads: without it, export says which file it needs and
  // exits 1, and the other commands do not notice.
  const fs::path pmchal_dir = (moved / kPluginSub).parent_path();
  BOOST_TEST(fs::is_regular_file(pmchal_dir / "pmc-child"));
  const fs::path module = pmchal_dir / "libpmc-prometheus.so";
  BOOST_REQUIRE(fs::is_regular_file(module));
  fs::remove(module);
  const fs::path pmc = moved / kBinSub / "pmc";
  Result exp = run(pmc, {"export", "--textfile", (scratch / "m.prom").string(), "--timeout", "100"}, env, scratch, "/");
  BOOST_TEST(exp.status == 1, exp);
  BOOST_TEST(contains(exp.err, "pmc: pmc export needs its Prometheus module: " + module.string() + ": "), exp);
  BOOST_TEST(std::count(exp.err.begin(), exp.err.end(), '\n') == 1, exp);
  BOOST_TEST(!fs::exists(scratch / "m.prom"));
  Result st = run(pmc, {"stat", "-e", "task-clock", "--", "true"}, env, scratch, "/");
  BOOST_TEST(st.status == 0, st);
  BOOST_TEST(contains(st.err, "task-clock"), st);
}
