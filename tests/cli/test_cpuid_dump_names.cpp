// The bundled CPUID dumps by name: `pmc list --cpuid-dumps` lists them with the CPU each
// describes; a mistyped dump name, workload name or backend name (--cpuid-dump, --workload,
// --backend, the config keys cpu and backend) is one line naming it and the nearest names.
#define BOOST_TEST_MODULE cpuid_dump_names
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using pmc_test::Result;

struct Cli : pmc_test::PmcCommand {
  Cli() { env["PMC_CACHE_DIR"] = (tmp.path() / "cache").string(); }
  fs::path config(const std::string& text) {
    const fs::path file = tmp.path() / "config.toml";
    std::ofstream(file) << text;
    return file;
  }
};

// The dumps of the source tree's data/cpuid, which the build installs under their names.
std::set<std::string> source_dumps() {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid"))
    if (e.path().extension() == ".txt") names.insert(e.path().stem().string());
  return names;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(list_cpuid_dumps_names_each_with_its_cpu, Cli) {
  Result r = pmc({"list", "--cpuid-dumps"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(r.err.empty(), r);
  BOOST_TEST(r.out.rfind("NAME ", 0) == 0, r);
  // Family, model and stepping as the dumps' headers and data/cpuid/README.md give them.
  BOOST_TEST(r.out.find("\npentium-iii ") != std::string::npos, r);
  BOOST_TEST(r.out.find("GenuineIntel family 6 model 8 stepping 3\n") != std::string::npos, r);
  BOOST_TEST(r.out.find("AuthenticAMD family 25 model 17 stepping 1") != std::string::npos, r);  // amd-zen4-kvm
  BOOST_TEST(r.out.find("(unreadable") == std::string::npos, r);

  Result j = pmc({"list", "--cpuid-dumps", "--json"});
  BOOST_TEST_REQUIRE(j.status == 0, j);
  const json doc = json::parse(j.out);
  std::set<std::string> listed;
  for (const auto& d : doc["cpuid_dumps"]) {
    listed.insert(d["name"].get<std::string>());
    BOOST_TEST(fs::is_regular_file(d["file"].get<std::string>()), d.dump());
    if (d["name"] == "pentium-iii") BOOST_TEST(d["cpu"] == "GenuineIntel family 6 model 8 stepping 3");
  }
  BOOST_TEST(listed == source_dumps());
  BOOST_TEST(r.out.find(std::to_string(listed.size()) + " bundled CPUID dumps") != std::string::npos, r);
}

BOOST_FIXTURE_TEST_CASE(a_mistyped_dump_name_suggests_the_nearest, Cli) {
  Result r = pmc({"probe", "--cpuid-dump", "skylak"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: no bundled CPUID dump 'skylak'; did you mean 'skylake'?\n", r);

  r = pmc({"probe", "--cpuid-dump", "pentium-iiii"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.rfind("pmc: no bundled CPUID dump 'pentium-iiii'; did you mean 'pentium-iii', ", 0) == 0, r);

  r = pmc({"probe", "--cpuid-dump", "zzzzzzzzzz"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: no bundled CPUID dump 'zzzzzzzzzz' and no file of that name\n", r);

  // A path is a file, not a bundled name: its own message.
  r = pmc({"probe", "--cpuid-dump", (tmp.path() / "skylak").string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.find("bundled") == std::string::npos, r);
}

BOOST_FIXTURE_TEST_CASE(a_mistyped_workload_name_suggests_the_nearest, Cli) {
  Result r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-dem"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: no bundled workload 'p6-dem'; did you mean 'p6-demo'?\n", r);
}

BOOST_FIXTURE_TEST_CASE(the_config_key_cpu_suggests_the_nearest, Cli) {
  const fs::path file = config("cpu = \"skylak\"\n");
  Result r = pmc({"probe", "--config", file.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.rfind("pmc: " + file.string() + ":1:7: 'cpu' = \"skylak\" is neither a CPUID dump file", 0) == 0, r);
  BOOST_TEST(r.err.find("; did you mean 'skylake'?\n") != std::string::npos, r);
}

BOOST_FIXTURE_TEST_CASE(a_backend_name_in_the_wrong_case_suggests_the_right_one, Cli) {
  Result r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--backend", "P6"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.rfind("pmc: command line (--backend): unknown backend 'P6'; did you mean 'p6'? (loaded backends: ", 0) == 0,
             r);

  const fs::path file = config("backend = \"P6\"\ncpu = \"pentium-iii\"\n");
  r = pmc({"probe", "--config", file.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.find(file.string() + ":1:") != std::string::npos, r);
  BOOST_TEST(r.err.find("unknown backend 'P6'; did you mean 'p6'?") != std::string::npos, r);

  r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--backend", "archperff"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.find("unknown backend 'archperff'; did you mean 'archperf'?") != std::string::npos, r);

  r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--backend", "zzzzzz"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.find("unknown backend 'zzzzzz' (loaded backends: ") != std::string::npos, r);
}
