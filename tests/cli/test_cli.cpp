#define BOOST_TEST_MODULE cli
#include <boost/test/unit_test.hpp>

// The `pmc` command as a user runs it: the built PMC_BIN_DIR/pmc as a child process with its
// own environment (HOME, XDG_CONFIG_HOME and PMC_CONFIG pointed at a temporary directory, so
// the developer's real config never leaks in), checking exit status, stdout and stderr
// separately. Errors are one line on stderr; exit 2 for usage, 1 for everything else.
//
// Here: usage errors, `pmc probe`, `pmc encode`, --access and the config file's search order and
// errors. `pmc list` is in test_cli_list.cpp, `pmc stat` in test_cli_stat.cpp; the helpers they
// share in cli_test_support.hpp.

#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

#include "cli_test_support.hpp"

using namespace pmc_test::cli;

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_usage)

BOOST_FIXTURE_TEST_CASE(no_subcommand, Cli) {
  Result r = fails({}, {"subcommand"}, 2);
  BOOST_TEST(r.out.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(unknown_option, Cli) {
  fails({"--bogus-option"}, {}, 2);
  fails({"--bogus-option", "probe"}, {"--bogus-option"}, 2);
  Result r = fails({"probe", "--bogus-option"}, {"--bogus-option"}, 2);
  BOOST_TEST(r.out.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(unknown_subcommand, Cli) { fails({"frobnicate"}, {"frobnicate"}, 2); }

BOOST_FIXTURE_TEST_CASE(help_is_not_an_error, Cli) {
  Result r = pmc({"--help"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "probe"), r);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_probe)

// An Arm CPU description (examples/armv8/cortex-a72.toml: MIDR_EL1 0x410FD083, PMUv3, 6
// counters) is shown by its identification registers, not by x86 CPUID leaves.
BOOST_FIXTURE_TEST_CASE(probe_an_arm_cpu, Cli) {
  const std::string file = std::string(PMC_SOURCE_DIR) + "/examples/armv8/cortex-a72.toml";
  Result r = pmc({"probe", "--cpuid-dump", file});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(r.out.find("MIDR_EL1 0x410fd083, PMUv3 version 1, 6 event counters") != std::string::npos, r);
  BOOST_TEST(r.out.find("CPUID.0AH") == std::string::npos, r);
  r = pmc({"probe", "--json", "--cpuid-dump", file});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["cpu"]["isa"] == "aarch64", r.out);
  BOOST_TEST(j["cpu"]["midr_el1"] == 0x410FD083u, r.out);
  BOOST_TEST(j["cpu"]["arch_perfmon_version"].is_null(), r.out);
}

BOOST_FIXTURE_TEST_CASE(native, Cli) {
  Result r = pmc({"probe", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_REQUIRE(j.is_object());
  for (const char* key : {"cpu", "backend", "pmu", "candidates", "config"})
    BOOST_TEST(j.contains(key), "missing key " << key << ": " << r.out);
  for (const char* key : {"vendor", "family", "model", "stepping"})
    BOOST_TEST(j["cpu"].contains(key), "missing cpu." << key << ": " << r.out);
  BOOST_TEST(j["cpu"]["vendor"].is_string());
  BOOST_TEST(j["cpu"]["family"].is_number_integer());
  BOOST_TEST(j["cpu"]["model"].is_number_integer());
  BOOST_TEST(j["cpu"]["stepping"].is_number_integer());
  BOOST_REQUIRE(j["candidates"].is_array());
  for (const auto& c : j["candidates"]) {
    BOOST_TEST(c.contains("backend"));
    BOOST_TEST(c["score"].is_number_integer());
    BOOST_TEST((c["reason"].is_string() && !c["reason"].get<std::string>().empty()), c.dump());
  }
  const json* p6 = find_by(j["candidates"], "backend", "p6");
  BOOST_REQUIRE_MESSAGE(p6, "no p6 candidate: " << r.out);
  BOOST_TEST(j["config"]["found_by"] == "built-in defaults", r.out);
  BOOST_TEST(j["config"]["file"].is_null(), r.out);

  // This project's machines are AMD KVM guests without a PMU: p6 does not match, and says why.
  if (j["cpu"]["vendor"] != "GenuineIntel") {
    BOOST_TEST((*p6)["score"] == 0, r.out);
    BOOST_TEST(contains((*p6)["reason"].get<std::string>(), "GenuineIntel"), r.out);
  }
  // Whatever the CPU: no backend and no PMU when no candidate scores above 0, else the best one
  // with its PMU (the amd backend matches an AMD guest, whose CPUID hides the PMU extensions).
  int best = 0;
  std::string best_backend;
  for (const auto& c : j["candidates"])
    if (c["score"].get<int>() > best) {
      best = c["score"].get<int>();
      best_backend = c["backend"].get<std::string>();
    }
  if (best == 0) {
    BOOST_TEST(j["backend"].is_null(), r.out);
    BOOST_TEST(j["pmu"].is_null(), r.out);
  } else {
    BOOST_TEST(j["backend"] == best_backend, r.out);
    BOOST_TEST(!j["pmu"].is_null(), r.out);
  }
}

BOOST_FIXTURE_TEST_CASE(pentium_iii_dump, Cli) {
  Result r = pmc(args({{"probe"}, kP3, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["backend"] == "p6", r.out);
  BOOST_TEST(j["cpu"]["vendor"] == "GenuineIntel");
  BOOST_TEST(j["cpu"]["family"] == 6);
  BOOST_TEST(j["cpu"]["model"] == 8);
  BOOST_TEST(j["cpu"]["stepping"] == 3);
  const json& counters = j["pmu"]["counters"];
  BOOST_REQUIRE_MESSAGE(counters.is_array() && counters.size() == 2, r.out);
  for (unsigned i = 0; i < 2; ++i) {
    BOOST_TEST(counters[i]["kind"] == "general", counters[i].dump());
    BOOST_TEST(counters[i]["index"] == i, counters[i].dump());
    BOOST_TEST(counters[i]["width"] == 40, counters[i].dump());
  }
  const json* p6 = find_by(j["candidates"], "backend", "p6");
  BOOST_REQUIRE(p6);
  BOOST_TEST((*p6)["score"].get<int>() > 0);
  BOOST_TEST(contains((*p6)["reason"].get<std::string>(), "Pentium III"), r.out);
  BOOST_TEST(j["config"]["origin"]["cpu"] == "command line (--cpuid-dump)", r.out);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_encode)

BOOST_FIXTURE_TEST_CASE(three_events_one_bad, Cli) {
  Result r = pmc(args({{"encode"}, kP3, {"--json", "INST_RETIRED", "L2_LD:M:E", "BOGUS"}}));
  BOOST_TEST(r.status == 1, r);
  json j = parse_json(r);
  BOOST_REQUIRE_MESSAGE(j.is_array() && j.size() == 3, r.out);
  BOOST_TEST(j[0]["event"] == "INST_RETIRED");
  BOOST_TEST(j[0]["config"] == "0x300C0", j[0].dump());
  BOOST_TEST(j[0]["counters"] == json::array({0, 1}), j[0].dump());
  BOOST_TEST((j[0].contains("fixed") && j[0]["fixed"].is_null()), j[0].dump());
  BOOST_TEST(!j[0].contains("error"));
  BOOST_TEST(j[1]["event"] == "L2_LD:M:E");
  BOOST_TEST(j[1]["config"] == "0x30C29", j[1].dump());
  BOOST_TEST(!j[1].contains("error"));
  BOOST_TEST(j[2]["event"] == "BOGUS");
  BOOST_REQUIRE(j[2].contains("error"));
  BOOST_TEST(contains(j[2]["error"].get<std::string>(), "BOGUS"), j[2].dump());
  BOOST_TEST(!j[2].contains("config"));
}

BOOST_FIXTURE_TEST_CASE(counter_constraint, Cli) {
  Result r = pmc(args({{"encode"}, kP3, {"--json", "FLOPS"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_REQUIRE(j.is_array() && j.size() == 1);
  BOOST_TEST(j[0]["counters"] == json::array({0}), r.out);
}

BOOST_FIXTURE_TEST_CASE(text_error_is_one_line, Cli) {
  Result r = pmc(args({{"encode"}, kP3, {"BOGUS"}}));
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(one_line(r.err), r);
  BOOST_TEST(contains(r.err, "BOGUS"), r);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_access)

BOOST_FIXTURE_TEST_CASE(access_sim_shown_by_probe, Cli) {
  Result r = pmc(args({{"probe"}, kP3, {"--access", "sim"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  static const std::regex line(R"((^|\n)  access +sim +from command line \(--access\)\n)");
  BOOST_TEST(std::regex_search(r.out, line), r);
  BOOST_TEST(contains(r.out, "\nAccess:     sim\n"), r);

  r = pmc(args({{"probe"}, kP3, {"--access", "sim", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["access"] == "sim", r.out);
  BOOST_TEST(j["config"]["access"] == "sim", r.out);
  BOOST_TEST(j["config"]["origin"]["access"] == "command line (--access)", r.out);
}

BOOST_FIXTURE_TEST_CASE(access_overrides_config_file, Cli) {
  const fs::path file = tmp.path() / "config.toml";
  spit(file, "access = \"msr\"\n");
  Result r = pmc(args({{"--config", file.string(), "probe"}, kP3, {"--access", "sim", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["access"] == "sim", r.out);
  BOOST_TEST(j["config"]["origin"]["access"] == "command line (--access)", r.out);
}

BOOST_FIXTURE_TEST_CASE(access_perf_on_a_dump_cannot_count, Cli) {
  // perf counts this machine's PMU, never the PMU of a CPUID dump (user guide, access methods).
  Result r = fails(args({{"stat"}, kP3, {"--access", "perf", "--workload", "p6-demo"}}),
                   {"access 'perf' counts this machine's PMU", "CPUID dump", "pentium-iii"});
  BOOST_TEST(r.out.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(access_bogus_is_a_usage_error, Cli) {
  const std::vector<std::string> allowed = {"bogus", "auto", "sim", "perf", "msr"};
  Result r = fails(args({{"probe"}, kP3, {"--access", "bogus"}}), allowed, 2);
  BOOST_TEST(r.out.empty(), r);
  // Every subcommand that opens a Hal has the option, with the same check.
  fails(args({{"list"}, kP3, {"--access", "bogus"}}), allowed, 2);
  fails(args({{"encode"}, kP3, {"--access", "bogus", "INST_RETIRED"}}), allowed, 2);
  fails(args({{"stat"}, kP3, {"--access", "bogus", "--workload", "p6-demo"}}), allowed, 2);
  fails(args({{"profile"}, kP3, {"--access", "bogus", "--workload", "p6-demo"}}), allowed, 2);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cli_config)

namespace {

// A config file that only says where it is (through access, which probe reports).
void write_config(const fs::path& file, const std::string& access) { spit(file, "access = \"" + access + "\"\n"); }

json probe_config(Cli& cli, const std::vector<std::string>& pre = {}) {
  Result r = cli.pmc(args({pre, {"probe"}, kP3, {"--json"}}));
  BOOST_TEST(r.status == 0, r);
  json j = parse_json(r);
  return j.is_object() ? j["config"] : json();
}

bool same_file(const json& reported, const fs::path& expected) {
  if (!reported.is_string()) return false;
  std::error_code ec;
  return fs::equivalent(fs::path(reported.get<std::string>()), expected, ec);
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(search_order, Cli) {
  const fs::path explicit_file = tmp.path() / "explicit.toml";
  const fs::path env_file = tmp.path() / "env.toml";
  const fs::path xdg_file = xdg / "pmc" / "config.toml";
  const fs::path home_file = home / ".config" / "pmc" / "config.toml";
  write_config(explicit_file, "sim");
  write_config(env_file, "perf");
  write_config(xdg_file, "msr");
  write_config(home_file, "sim");
  env["PMC_CONFIG"] = env_file.string();

  // --config beats everything.
  json c = probe_config(*this, {"--config", explicit_file.string()});
  BOOST_TEST(c["found_by"] == "--config", c.dump());
  BOOST_TEST(same_file(c["file"], explicit_file), c.dump());
  BOOST_TEST(c["access"] == "sim", c.dump());
  BOOST_TEST(contains(c["origin"]["access"].get<std::string>(), explicit_file.string() + ":1:10"), c.dump());

  // $PMC_CONFIG beats the user file.
  c = probe_config(*this);
  BOOST_TEST(c["found_by"] == "$PMC_CONFIG", c.dump());
  BOOST_TEST(same_file(c["file"], env_file), c.dump());
  BOOST_TEST(c["access"] == "perf", c.dump());

  // An empty $PMC_CONFIG counts as unset; $XDG_CONFIG_HOME/pmc/config.toml beats ~/.config.
  env["PMC_CONFIG"] = "";
  c = probe_config(*this);
  BOOST_TEST(c["found_by"] == "$XDG_CONFIG_HOME/pmc/config.toml", c.dump());
  BOOST_TEST(same_file(c["file"], xdg_file), c.dump());
  BOOST_TEST(c["access"] == "msr", c.dump());

  // Without $XDG_CONFIG_HOME: $HOME/.config/pmc/config.toml.
  env["PMC_CONFIG"] = std::nullopt;
  env["XDG_CONFIG_HOME"] = std::nullopt;
  c = probe_config(*this);
  BOOST_TEST(contains(c["found_by"].get<std::string>(), ".config/pmc/config.toml"), c.dump());
  BOOST_TEST(same_file(c["file"], home_file), c.dump());

  // No file anywhere: built-in defaults (unless this machine has /etc/pmc/config.toml).
  if (!fs::exists("/etc/pmc/config.toml")) {
    fs::remove(home_file);
    c = probe_config(*this);
    BOOST_TEST(c["found_by"] == "built-in defaults", c.dump());
    BOOST_TEST(c["file"].is_null(), c.dump());
    BOOST_TEST(c["access"] == "auto", c.dump());
    BOOST_TEST(c["backend"] == "auto", c.dump());
  }
}

BOOST_FIXTURE_TEST_CASE(xdg_set_without_file_does_not_fall_back_to_home, Cli) {
  // $XDG_CONFIG_HOME set: the XDG base directory spec says ~/.config is not consulted.
  write_config(home / ".config" / "pmc" / "config.toml", "sim");
  if (fs::exists("/etc/pmc/config.toml")) return;
  json c = probe_config(*this);
  BOOST_TEST(c["found_by"] == "built-in defaults", c.dump());
}

BOOST_FIXTURE_TEST_CASE(missing_named_config, Cli) {
  const std::string file = (tmp.path() / "absent.toml").string();
  fails({"--config", file, "probe"}, {file});
  env["PMC_CONFIG"] = file;
  fails({"probe"}, {file, "$PMC_CONFIG"});
}

BOOST_FIXTURE_TEST_CASE(bad_config_files, Cli) {
  struct Case {
    const char* name;
    const char* text;   // second line of the file; the first is a comment
    const char* where;  // "line:column"
    const char* word;
  };
  const Case cases[] = {
      {"unknown-key", "colour = \"blue\"", "2:1", "colour"},
      {"wrong-type", "access = 3", "2:10", "access"},
      {"unknown-access", "access = \"turbo\"", "2:10", "turbo"},
      {"unknown-backend", "backend = \"nosuchbackend\"", "2:11", "nosuchbackend"},
      {"wrong-array", "plugin_path = \"/usr/lib\"", "2:15", "plugin_path"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const fs::path file = tmp.path() / (std::string(c.name) + ".toml");
      spit(file, std::string("# ") + c.name + "\n" + c.text + "\n");
      const std::string where = file.string() + ":" + c.where + ":";
      fails({"--config", file.string(), "probe"}, {where, c.word});
      // The same file found through $PMC_CONFIG says the same.
      env["PMC_CONFIG"] = file.string();
      fails({"probe"}, {where, c.word});
      env["PMC_CONFIG"] = std::nullopt;
    }
  }
}

BOOST_FIXTURE_TEST_CASE(malformed_config, Cli) {
  const fs::path file = tmp.path() / "malformed.toml";
  spit(file, "backend = \"p6\"\naccess = \n");
  fails({"--config", file.string(), "probe"}, {file.string() + ":2:"});
}

BOOST_AUTO_TEST_SUITE_END()
