// Issue 26: a setuid program that used the library honoured PMC_REGION_OUTPUT, PMC_CONFIG and
// PMC_CACHE_DIR, so the user who started it could make it overwrite a root-only file and create
// root-owned directories. The library now reads its variables with secure_getenv
// (hal/src/base/environment.hpp): in a setuid or setgid process they read as unset.
//
// The setuid program is a copy of this test binary made setuid root, run as the user nobody
// (uid 65534) through setpriv, in a helper mode: `-- region-helper` marks one region through the
// C API, encodes an event of a bundled CPU (the parse cache), and exits normally, so the exit
// handler writes the report wherever the setup says. The
// same copy without the setuid bit shows that the helper does follow the variables otherwise.
#define BOOST_TEST_MODULE setuid_environment
#define BOOST_TEST_NO_MAIN  // main() below: the helper mode first, then Boost.Test
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"

#include <pmc/hal.hpp>
#include <pmc/pmc.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

// Marks a region (the report is written at exit) and encodes an event of the bundled Pentium III
// (which parses the P6 catalog through the parse cache).
int region_helper() {
  if (pmc_region_begin("work") != PMC_OK || pmc_region_end("work") != PMC_OK) {
    std::fprintf(stderr, "region: %s\n", pmc_last_error());
    return 3;
  }
  try {
    pmc::Config cfg;
    cfg.cpu = "pentium-iii";
    std::printf("%s\n", pmc::Hal::open(cfg).encode("INST_RETIRED").canonical.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "encode: %s\n", e.what());
    return 4;
  }
  return 0;  // returning from main: the exit handler writes the report
}

boost::test_tools::assertion_result root_with_setpriv(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(geteuid() == 0 && fs::exists("/usr/bin/setpriv"));
  r.message() << "making a setuid-root program and running it as nobody needs root and setpriv (util-linux)";
  return r;
}

// A root-only directory with a root-only file in it, a directory of nobody's, and the test
// binary copied to `helper` (made setuid root by the test that wants it).
struct Fixture {
  pmc_test::TempDir tmp{"pmc-test-setuid"};
  fs::path root_only = tmp.path() / "root-only";
  fs::path victim = root_only / "victim";
  fs::path users = tmp.path() / "users";
  // Beside the test binary, where the bundled data and plugins are found relative to it.
  fs::path helper = fs::path(PMC_BIN_DIR) / ("setuid-helper-" + std::to_string(::getpid()));
  pmc_test::Env env;

  Fixture() {
    fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    fs::create_directory(root_only);
    fs::permissions(root_only, fs::perms::owner_all);
    std::FILE* f = std::fopen(victim.c_str(), "w");
    BOOST_REQUIRE(f);
    std::fputs("root's file\n", f);
    std::fclose(f);
    fs::create_directory(users);
    BOOST_REQUIRE(::chown(users.c_str(), kNobody, kNobody) == 0);
    fs::copy_file(fs::read_symlink("/proc/self/exe"), helper);
    const char* path = std::getenv("PATH");
    env["PATH"] = path ? path : "/usr/bin:/bin";
    env["HOME"] = users.string();
    env["LC_ALL"] = "C";
    env["PMC_REGION_EVENTS"] = "task-clock:u";  // nobody may count user mode only (paranoid 2)
    // A sanitizer build: LeakSanitizer cannot inspect a setuid process (it is not dumpable).
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env["ASAN_OPTIONS"] = std::string(asan) + ":detect_leaks=0";
  }
  pmc_test::Result run_as_nobody() {
    return pmc_test::run("/usr/bin/setpriv",
                         {"--reuid=65534", "--regid=65534", "--clear-groups", helper.string(), "--", "region-helper"}, env,
                         tmp.path());
  }
  std::string victim_text() const { return pmc_test::slurp(victim); }
  ~Fixture() {
    std::error_code ec;
    fs::remove(helper, ec);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(setuid_environment, *boost::unit_test::precondition(root_with_setpriv))

BOOST_FIXTURE_TEST_CASE(a_setuid_program_writes_no_report_or_cache_where_the_user_says, Fixture) {
  BOOST_REQUIRE(::chmod(helper.c_str(), 04755) == 0);
  env["PMC_REGION_OUTPUT"] = victim.string();
  env["PMC_CACHE_DIR"] = (root_only / "cache-made-for-nobody").string();
  const pmc_test::Result r = run_as_nobody();
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.out.find("INST_RETIRED") != std::string::npos, r);  // it did encode (through the cache)
  BOOST_TEST(victim_text() == "root's file\n", "the root-only file was overwritten:\n" << victim_text());
  BOOST_TEST(!fs::exists(root_only / "cache-made-for-nobody"), "a cache directory was made for the user in root's directory");
}

// A config of the user's that would send the report into the root-only directory: not read
// (it once was, and refused for its owner, which stopped the program's regions).
BOOST_FIXTURE_TEST_CASE(a_setuid_program_reads_no_config_the_user_names, Fixture) {
  BOOST_REQUIRE(::chmod(helper.c_str(), 04755) == 0);
  const fs::path config = users / "config.toml";
  std::FILE* f = std::fopen(config.c_str(), "w");
  BOOST_REQUIRE(f);
  std::fprintf(f, "[regions]\noutput = \"%s\"\n", (root_only / "from-config.json").c_str());
  std::fclose(f);
  env["PMC_CONFIG"] = config.string();
  const pmc_test::Result r = run_as_nobody();
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(r.err.find("config.toml") == std::string::npos, r);
  BOOST_TEST(!fs::exists(root_only / "from-config.json"), "the user's $PMC_CONFIG was read");
}

// The control: without the setuid bit the same program, run as nobody, follows the variables.
BOOST_FIXTURE_TEST_CASE(the_same_program_without_the_setuid_bit_follows_them, Fixture) {
  env["PMC_REGION_OUTPUT"] = (users / "regions.json").string();
  env["PMC_CACHE_DIR"] = (users / "cache").string();
  const pmc_test::Result r = run_as_nobody();
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(pmc_test::slurp(users / "regions.json").find("\"work\"") != std::string::npos, r);
  BOOST_TEST(fs::is_directory(users / "cache"), r);
}

BOOST_AUTO_TEST_SUITE_END()

int main(int argc, char* argv[]) {
  if (argc >= 3 && std::string(argv[1]) == "--" && std::string(argv[2]) == "region-helper") return region_helper();
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
