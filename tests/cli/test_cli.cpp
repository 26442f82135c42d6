#define BOOST_TEST_MODULE cli
#include <boost/test/unit_test.hpp>

// The `pmc` command as a user runs it: the built PMC_BIN_DIR/pmc as a child process with its
// own environment (HOME, XDG_CONFIG_HOME and PMC_CONFIG pointed at a temporary directory, so
// the developer's real config never leaks in), checking exit status, stdout and stderr
// separately. Errors are one line on stderr; exit 2 for usage, 1 for everything else.

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "support/no_backend.hpp"

namespace {

using pmc_test::Env;
using pmc_test::Result;
using pmc_test::TempDir;
using pmc_test::run;
using pmc_test::slurp;
using pmc_test::spit;

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

// ---------------------------------------------------------------------------------------------
// A child process with captured stdout, stderr and exit status.

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// stderr holds exactly one non-empty line.
bool one_line(const std::string& err) {
  return err.size() > 1 && err.back() == '\n' && err.find('\n') == err.size() - 1;
}

// A JSON document, or a null with the parse error reported.
json parse_json(const Result& r) {
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    BOOST_ERROR("stdout is not JSON (" << e.what() << "): " << r);
    return json();
  }
}

// "file:line:column" -> file.
std::string source_file(const std::string& source) {
  static const std::regex pos(R"(^(.*):([0-9]+):([0-9]+)$)");
  std::smatch m;
  if (std::regex_match(source, m, pos)) return m[1].str();
  return source;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const json* find_by(const json& array, const char* key, const std::string& value) {
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

const std::vector<std::string> kP3 = {"--cpuid-dump", "pentium-iii"};

std::vector<std::string> args(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

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
BOOST_AUTO_TEST_SUITE(cli_list)

BOOST_FIXTURE_TEST_CASE(builtin_catalog, Cli) {
  Result r = pmc(args({{"list"}, kP3, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  const json* inst = find_by(j, "name", "INST_RETIRED");
  BOOST_REQUIRE_MESSAGE(inst, "no INST_RETIRED in pmc list");
  const std::string src = (*inst)["source"].get<std::string>();
  BOOST_TEST(ends_with(source_file(src), "p6.toml"), src);
  BOOST_TEST(src != source_file(src), "source has no line:column: " << src);
}

BOOST_FIXTURE_TEST_CASE(user_events_file_adds_and_overrides, Cli) {
  const fs::path events = tmp.path() / "my-events" / "extra.toml";
  spit(events, R"(# user additions for the P6
backend = "p6"
modifiers = ["u", "k", "e", "i", "c"]

[[event]]
name = "INST_RETIRED"
code = 0xC0
generic = "instructions"
desc = "Overridden by test_cli: instructions retired."

[[event]]
name = "TEST_CLI_EVENT"
code = 0x2E
desc = "An event added by test_cli."
)");
  const fs::path config = tmp.path() / "config.toml";
  spit(config, "backend = \"p6\"\nevents_path = [\"" + events.string() + "\"]\n");
  Result r = pmc(args({{"--config", config.string(), "list"}, kP3, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);

  const json* inst = find_by(j, "name", "INST_RETIRED");
  BOOST_REQUIRE(inst);
  BOOST_TEST((*inst)["desc"] == "Overridden by test_cli: instructions retired.", inst->dump());
  BOOST_TEST(source_file((*inst)["source"].get<std::string>()) == events.string(), inst->dump());

  const json* added = find_by(j, "name", "TEST_CLI_EVENT");
  BOOST_REQUIRE_MESSAGE(added, "the user event is missing");
  BOOST_TEST((*added)["code"] == "0x2E", added->dump());
  BOOST_TEST(source_file((*added)["source"].get<std::string>()) == events.string(), added->dump());

  // The others still come from the built-in table, and each name appears once.
  const json* flops = find_by(j, "name", "FLOPS");
  BOOST_REQUIRE(flops);
  BOOST_TEST(ends_with(source_file((*flops)["source"].get<std::string>()), "p6.toml"), flops->dump());
  unsigned n = 0;
  for (const auto& e : j)
    if (e["name"] == "INST_RETIRED") ++n;
  BOOST_TEST(n == 1u);
}

namespace {

// The bundled Core 2 dump (data/cpuid/core2.txt: CPUID.0AH version 2, EBX 0) is driven by the
// archperf backend, whose events carry the SDM and older libpfm4 spellings as aliases
// (backends/archperf/archperf.toml). The P6 table has three, libpfm4's spellings.
const std::vector<std::string> kCore2 = {"--cpuid-dump", "core2"};

std::vector<std::string> names_of(const json& list) {
  std::vector<std::string> out;
  if (list.is_array())
    for (const auto& e : list) out.push_back(e["name"].get<std::string>());
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(aliases_in_json, Cli) {
  Result r = pmc(args({{"list"}, kCore2, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  // events.toml, EBX bit 4: aliases = ["LAST_LEVEL_CACHE_MISSES", "LONGEST_LAT_CACHE.MISS"].
  const json* llc = find_by(j, "name", "LLC_MISSES");
  BOOST_REQUIRE_MESSAGE(llc, "no LLC_MISSES in pmc list: " << r.out);
  BOOST_TEST((*llc)["aliases"] == json::array({"LAST_LEVEL_CACHE_MISSES", "LONGEST_LAT_CACHE.MISS"}), llc->dump());
  // EBX bit 1: aliases = ["INSTRUCTIONS_RETIRED", "INST_RETIRED.ANY", "INST_RETIRED.ANY_P"].
  const json* insn = find_by(j, "name", "INSTRUCTION_RETIRED");
  BOOST_REQUIRE(insn);
  BOOST_TEST((*insn)["aliases"] == json::array({"INSTRUCTIONS_RETIRED", "INST_RETIRED.ANY", "INST_RETIRED.ANY_P"}),
             insn->dump());

  // An event without aliases still has the key, an empty array. In the P6 table only the three
  // events libpfm4 spells differently have one (backends/p6/p6.toml).
  const std::map<std::string, std::string> libpfm4 = {
      {"BUS_DATA_RCV", "BUS_DATA_RECV"}, {"BUS_TRAN_BRD", "BUS_TRANS_BRD"}, {"BUS_TRAN_RFO", "BUS_TRANS_RFO"}};
  r = pmc(args({{"list"}, kP3, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  j = parse_json(r);
  BOOST_REQUIRE(j.is_array() && !j.empty());
  for (const auto& e : j) {
    if (e.value("pmu", "") == "hal") continue;  // below
    auto it = libpfm4.find(e.value("name", ""));
    const json expected = it == libpfm4.end() ? json::array() : json::array({it->second});
    BOOST_TEST((e.contains("aliases") && e["aliases"] == expected), e.dump());
  }
}

BOOST_FIXTURE_TEST_CASE(aliases_in_text, Cli) {
  Result r = pmc(args({{"list"}, kCore2}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "\n    aliases: LAST_LEVEL_CACHE_MISSES, LONGEST_LAT_CACHE.MISS\n"), r);
  BOOST_TEST(contains(r.out, "\n    aliases: CPU_CLK_UNHALTED.CORE, CPU_CLK_UNHALTED.THREAD, CPU_CLK_UNHALTED.THREAD_P\n"),
             r);
  // The aliases line follows its event's line.
  const auto at = r.out.find("\nLLC_MISSES ");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, r);
  const auto next = r.out.find('\n', at + 1);
  BOOST_TEST(r.out.compare(next + 1, 13, "    aliases: ") == 0, r);

  // No aliases, no line: in the P6 listing only the three libpfm4 spellings have one.
  r = pmc(args({{"list"}, kP3}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "INST_RETIRED"), r);
  std::size_t lines = 0;
  for (auto pos = r.out.find("aliases:"); pos != std::string::npos; pos = r.out.find("aliases:", pos + 1)) ++lines;
  BOOST_TEST(lines == 3u, r);
  BOOST_TEST(contains(r.out, "\n    aliases: BUS_TRANS_BRD\n"), r);
}

BOOST_FIXTURE_TEST_CASE(filter_by_name_ignores_case, Cli) {
  // LLC_REFERENCES and LLC_MISSES are the archperf events named LLC_*.
  Result r = pmc(args({{"list"}, kCore2, {"--json", "llc"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(names_of(parse_json(r)) == (std::vector<std::string>{"LLC_REFERENCES", "LLC_MISSES"}), r);

  // The text listing shows the same two, and none of the others.
  r = pmc(args({{"list"}, kCore2, {"LlC"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "\nLLC_REFERENCES "), r);
  BOOST_TEST(contains(r.out, "\nLLC_MISSES "), r);
  BOOST_TEST(!contains(r.out, "UNHALTED_CORE_CYCLES"), r);
  BOOST_TEST(!contains(r.out, "INSTRUCTION_RETIRED"), r);
  BOOST_TEST(r.err.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(filter_by_alias, Cli) {
  // "BR_INST_RETIRED.ALL" and "BR_MISP_RETIRED" are in no name the Core 2 lists (archperf.toml's
  // or its catalog cpu/core2.toml's), only in the SDM aliases BR_INST_RETIRED.ALL_BRANCHES
  // (BRANCH_INSTRUCTIONS_RETIRED) and BR_MISP_RETIRED.ALL_BRANCHES (MISPREDICTED_BRANCH_RETIRED).
  Result r = pmc(args({{"list"}, kCore2, {"--json", "br_inst_retired.all", "br_misp_retired"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(names_of(parse_json(r)) ==
                 (std::vector<std::string>{"BRANCH_INSTRUCTIONS_RETIRED", "MISPREDICTED_BRANCH_RETIRED"}),
             r);
}

BOOST_FIXTURE_TEST_CASE(filter_any_word_matches, Cli) {
  // LLC_MISSES by its name, INSTRUCTION_RETIRED by its alias INST_RETIRED.ANY; a word that
  // matches nothing does not hide the others.
  Result r = pmc(args({{"list"}, kCore2, {"--json", "LLC_MISSES", "inst_retired.any", "NO_SUCH_WORD"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(names_of(parse_json(r)) == (std::vector<std::string>{"INSTRUCTION_RETIRED", "LLC_MISSES"}), r);
}

BOOST_FIXTURE_TEST_CASE(filter_without_match, Cli) {
  Result r = fails(args({{"list"}, kP3, {"NO_SUCH_WORD"}}), {});
  BOOST_TEST(r.err == "pmc: no event of backend p6 matches 'NO_SUCH_WORD'\n", r);
  BOOST_TEST(r.out.empty(), r);
  // TOPDOWN_SLOTS is listed for version 5 CPUs only (cpus = ["v5"]): not on the Core 2 (v2).
  r = fails(args({{"list"}, kCore2, {"--json", "topdown"}}), {});
  BOOST_TEST(r.err == "pmc: no event of backend archperf matches 'topdown'\n", r);
  BOOST_TEST(r.out.empty(), r);
  // The Ice Lake dump is version 5: there it is, beside Ice Lake's own TOPDOWN.* events (cpu/icl.toml).
  r = pmc({"list", "--cpuid-dump", "intel-icelake", "--json", "topdown"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const std::vector<std::string> names = names_of(parse_json(r));
  BOOST_TEST(std::count(names.begin(), names.end(), "TOPDOWN_SLOTS") == 1, r);
  BOOST_TEST(std::count(names.begin(), names.end(), "TOPDOWN.SLOTS") == 1, r);
}

// The HAL events (docs/user-guide.md "HAL events": tsc and seven perf software events) follow the
// backend's, in text and JSON, and are what `pmc list` shows when no backend matches.
const std::vector<std::string> kHalEvents = {"tsc",          "task-clock",     "cpu-clock",    "context-switches",
                                             "cpu-migrations", "page-faults", "minor-faults", "major-faults"};

BOOST_FIXTURE_TEST_CASE(hal_events_follow_the_backends, Cli) {
  Result r = pmc(args({{"list"}, kP3, {"--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  std::vector<std::string> hal;
  for (const auto& e : j)
    if (e.value("pmu", "") == "hal") hal.push_back(e["name"].get<std::string>());
    else BOOST_TEST(e.value("pmu", "") == "p6", e.dump());
  BOOST_TEST(hal == kHalEvents, r);
  BOOST_TEST(j.back()["name"] == "major-faults");  // after the backend's
  const json* cs = find_by(j, "name", "context-switches");
  BOOST_REQUIRE(cs);
  BOOST_TEST((*cs)["aliases"] == json::array({"cs"}));
  BOOST_TEST(find_by(j, "name", "task-clock")->at("unit") == "ns");
  BOOST_TEST(find_by(j, "name", "tsc")->at("unit") == "ticks");

  r = pmc(args({{"list"}, kP3}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto section = r.out.find("\n8 HAL events, counted by pmchal with any backend or none:\n");
  BOOST_TEST((section != std::string::npos && section > r.out.find("INST_RETIRED")), r);
  BOOST_TEST(contains(r.out, "[also cs]"), r);
}

BOOST_FIXTURE_TEST_CASE(per_cpu_definitions_say_their_cpus_without_a_cpu_tag, Cli) {
  // p6 forced onto a CPU it has no tag for lists every definition; L2_LD has one for the
  // PPro/PII/PIII and one for the Pentium M (backends/p6/p6.toml).
  Result r = pmc({"list", "--cpuid-dump", "amd-zen", "--backend", "p6", "L2_LD"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "\n    for CPUs: ppro, pii, piii\n"), r);
  BOOST_TEST(contains(r.out, "\n    for CPUs: pm\n"), r);
  // With a tag, only this CPU's definition, and no such line.
  r = pmc(args({{"list"}, kP3, {"L2_LD"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(!contains(r.out, "for CPUs:"), r);
}

BOOST_FIXTURE_TEST_CASE(without_a_backend_the_hal_events_are_listed, Cli) {
  // No backend matches a Transmeta Crusoe (support/no_backend.hpp): its PMU events cannot be
  // listed, the HAL events can.
  const std::string crusoe = pmc_test::no_backend_dump(tmp).string();
  Result r = pmc({"list", "--cpuid-dump", crusoe, "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(names_of(parse_json(r)) == kHalEvents, r);
  BOOST_TEST(contains(r.err, "pmc: no PMU events: "), r);
  BOOST_TEST(contains(r.err, "GenuineTMx86"), r);
  BOOST_TEST(one_line(r.err), r);

  r = pmc({"list", "--cpuid-dump", crusoe, "CLOCK", "faults"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "5 of 8 HAL events"), r);  // task-clock, cpu-clock, and the three faults
  BOOST_TEST(contains(r.out, "\ncpu-clock "), r);
  BOOST_TEST(!contains(r.out, "\ntsc "), r);

  r = fails({"list", "--cpuid-dump", crusoe, "NO_SUCH_WORD"}, {});
  BOOST_TEST(r.err == "pmc: no HAL event matches 'NO_SUCH_WORD' (and no backend matches this CPU)\n", r);
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
BOOST_AUTO_TEST_SUITE(cli_stat)

BOOST_FIXTURE_TEST_CASE(insn_per_cycle_from_the_events_generic_names, Cli) {
  // The IPC metric (data/metrics/generic.toml) finds its inputs by the catalog's `generic`,
  // whatever the events' names: archperf-demo (workload comments) retires 15,700,000
  // instructions in 5,750,000 unhalted cycles, 2.730 per cycle; p6-demo 7,550,000 user
  // instructions in 4,940,000 user cycles, 1.528 (a metric pairs inputs of the same levels, as
  // perf: user instructions over cycles of every level would be no IPC, test_stat_perf_parity).
  Result r = pmc(args({{"stat", "--cpuid-dump", "core2"}, {"--workload", "archperf-demo", "-e", "cycles,INSTRUCTION_RETIRED"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "15,700,000      INSTRUCTION_RETIRED          #    2.730 insn per cycle"), r);
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "CPU_CLK_UNHALTED:u,INST_RETIRED:u"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "7,550,000      INST_RETIRED:u               #    1.528 insn per cycle"), r);
  // The same in JSON, by name.
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "CPU_CLK_UNHALTED:u,INST_RETIRED:u", "--json"}}));
  json j = parse_json(r);
  const json* ipc = find_by(j["metrics"], "name", "IPC");
  BOOST_REQUIRE_MESSAGE(ipc, r.out);
  BOOST_TEST((*ipc)["value"].get<double>() == 7'550'000.0 / 4'940'000.0, boost::test_tools::tolerance(1e-12));
}

namespace {

// The bundled workload: the source copy, else the build tree's (installed layout) copy.
fs::path demo_workload() {
  for (const fs::path& p : {fs::path(PMC_SOURCE_DIR) / "examples" / "workloads" / "p6-demo.toml",
                            fs::path(PMC_DATA_DIR) / "workloads" / "p6-demo.toml"})
    if (fs::exists(p)) return p;
  return {};
}

struct Expected {
  std::uint64_t unhalted_cycles = 0;
  std::uint64_t all_cycles = 0;
  std::uint64_t instructions = 0;
};

// Totals implied by the workload file (docs/workload-format.md): each segment lasts
// cycles * repeat; CPU_CLK_UNHALTED advances only in segments that are not halted; a signal
// occurs `value` times per cycle.
Expected expected_from(const fs::path& file) {
  Expected e;
  toml::table doc = toml::parse_file(file.string());
  const toml::array* segments = doc["segment"].as_array();
  BOOST_REQUIRE_MESSAGE(segments, file << " has no [[segment]]");
  for (const auto& node : *segments) {
    const toml::table& seg = *node.as_table();
    const auto cycles = static_cast<std::uint64_t>(seg["cycles"].value_or<std::int64_t>(0));
    const auto repeat = static_cast<std::uint64_t>(seg["repeat"].value_or<std::int64_t>(1));
    const bool halted = seg["halted"].value_or(false);
    const auto insn = static_cast<std::uint64_t>(seg["signals"]["instructions"].value_or<std::int64_t>(0));
    e.all_cycles += cycles * repeat;
    if (!halted) e.unhalted_cycles += cycles * repeat;
    e.instructions += insn * cycles * repeat;
  }
  return e;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(demo_workload_counts, Cli) {
  const fs::path file = demo_workload();
  BOOST_REQUIRE_MESSAGE(!file.empty(), "examples/workloads/p6-demo.toml is missing");
  const Expected want = expected_from(file);
  BOOST_TEST_MESSAGE("expected cycles " << want.unhalted_cycles << ", instructions " << want.instructions);
  BOOST_REQUIRE(want.instructions > 0);

  Result r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["backend"] == "p6", r.out);
  BOOST_TEST(j["cycles"] == want.all_cycles, r.out);
  const json* cycles = find_by(j["counters"], "event", "cycles");
  const json* insn = find_by(j["counters"], "event", "instructions");
  BOOST_REQUIRE_MESSAGE(cycles, "no 'cycles' counter: " << r.out);
  BOOST_REQUIRE_MESSAGE(insn, "no 'instructions' counter: " << r.out);
  BOOST_TEST((*cycles)["value"] == want.unhalted_cycles, cycles->dump());
  BOOST_TEST((*insn)["value"] == want.instructions, insn->dump());
  BOOST_TEST(j["counters"].size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(missing_workload_file, Cli) {
  const std::string file = (tmp.path() / "no-such-workload.toml").string();
  fails(args({{"stat"}, kP3, {"--workload", file}}), {file});
}

BOOST_FIXTURE_TEST_CASE(malformed_workload, Cli) {
  const fs::path file = tmp.path() / "broken.toml";
  spit(file, "name = \"broken\"\n[[segment]\ncycles = 10\n");
  fails(args({{"stat"}, kP3, {"--workload", file.string()}}), {file.string() + ":2:"});
}

BOOST_FIXTURE_TEST_CASE(invalid_workload_value, Cli) {
  const fs::path file = tmp.path() / "invalid.toml";
  spit(file, "name = \"invalid\"\n[[segment]]\ncycles = 10\nmode = \"sideways\"\n");
  fails(args({{"stat"}, kP3, {"--workload", file.string()}}), {file.string() + ":4:8:", "sideways"});
}

BOOST_FIXTURE_TEST_CASE(workload_signals_named_after_catalog_events, Cli) {
  // docs/workload-format.md, "Signals named after events": on the simulated Skylake client,
  // 1,000 cycles with 3 MEM_LOAD_RETIRED.L3_MISS per cycle, then 500 with none.
  const fs::path file = tmp.path() / "l3-miss.toml";
  spit(file,
       "[[segment]]\ncycles = 1000\nsignals = { \"MEM_LOAD_RETIRED.L3_MISS\" = 3 }\n"
       "[[segment]]\ncycles = 500\n");
  Result r = pmc(args({{"stat", "--cpuid-dump", "intel-skl"},
                       {"--workload", file.string(), "-e", "MEM_LOAD_RETIRED.L3_MISS,MEM_LOAD_RETIRED.L3_MISS:c=2:i=1", "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  const json* all = find_by(j["counters"], "event", "MEM_LOAD_RETIRED.L3_MISS");
  const json* fewer = find_by(j["counters"], "event", "MEM_LOAD_RETIRED.L3_MISS:c=2:i=1");
  BOOST_REQUIRE_MESSAGE(all && fewer, r.out);
  BOOST_TEST((*all)["value"] == 3'000u, all->dump());   // 3 x 1,000
  BOOST_TEST((*fewer)["value"] == 500u, fewer->dump()); // the cycles with fewer than 2
  // A cycles event as a signal is refused, naming the signal.
  spit(file, "[[segment]]\ncycles = 10\nsignals = { \"CPU_CLK_UNHALTED.THREAD\" = 1 }\n");
  fails(args({{"stat", "--cpuid-dump", "intel-skl"}, {"--workload", file.string(), "-e", "MEM_LOAD_RETIRED.L3_MISS"}}),
        {"CPU_CLK_UNHALTED.THREAD", "implicit"});
}

BOOST_FIXTURE_TEST_CASE(topdown_slots_and_perf_metrics_from_the_command_line, Cli) {
  // docs/hardware/archperf.md section 12 on the simulated Sapphire Rapids (6 slots per cycle):
  // 1,000,000 cycles = 6,000,000 slots, of which retiring 2,400,000 (byte 255 x 0.4 = 102,
  // reads 6,000,000 x 102 / 255 = 2,400,000), bad-spec 600,000 (byte 25.5 -> 25, reads
  // 150,000,000 / 255 = 588,235), fe-bound 1,200,000 (51: 1,200,000), be-bound 1,800,000 (76.5 ->
  // 76: 456,000,000 / 255 = 1,788,235), mem-bound 600,000 (25: 588,235). The per-cycle signals:
  // 600,000 cycles of retiring 2, bad-spec 1, fe-bound 2, be-bound 1, mem-bound 1, then 400,000
  // of retiring 3, be-bound 3, mem-bound 0.
  const fs::path file = tmp.path() / "topdown.toml";
  spit(file,
       "[[segment]]\ncycles = 600000\nsignals = { topdown-retiring = 2, topdown-bad-spec = 1, topdown-fe-bound = 2, "
       "topdown-be-bound = 1, topdown-mem-bound = 1 }\n"
       "[[segment]]\ncycles = 400000\nsignals = { topdown-retiring = 3, topdown-be-bound = 3 }\n");
  const std::vector<std::pair<std::string, std::uint64_t>> expected = {
      {"TOPDOWN.SLOTS", 6'000'000},           {"PERF_METRICS.RETIRING", 2'400'000},
      {"PERF_METRICS.BAD_SPECULATION", 588'235}, {"PERF_METRICS.FRONTEND_BOUND", 1'200'000},
      {"PERF_METRICS.BACKEND_BOUND", 1'788'235}, {"topdown-mem-bound", 588'235}};
  std::string events;
  for (const auto& [e, v] : expected) events += (events.empty() ? "" : ",") + e;
  Result r = pmc(args({{"stat", "--cpuid-dump", "intel-spr"}, {"--workload", file.string(), "-e", events, "--json"}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse_json(r);
  for (const auto& [e, v] : expected) {
    const json* c = find_by(j["counters"], "event", e);
    BOOST_REQUIRE_MESSAGE(c, e << ": " << r.out);
    BOOST_TEST((*c)["value"] == v, c->dump());
  }
  // The table prints them too.
  r = pmc(args({{"stat", "--cpuid-dump", "intel-spr"}, {"--workload", file.string(), "-e", events}}));
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "2,400,000      PERF_METRICS.RETIRING"), r);
  // Skylake has no PERF_METRICS: refused, naming the CPU.
  fails(args({{"stat", "--cpuid-dump", "intel-skl"}, {"--workload", file.string(), "-e", "PERF_METRICS.RETIRING"}}),
        {"PERF_METRICS", "family 6 model 78"});
}

BOOST_FIXTURE_TEST_CASE(unknown_event, Cli) {
  Result r = fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "instructions,NO_SUCH_EVENT"}}),
                   {"NO_SUCH_EVENT"});
  BOOST_TEST(r.out.empty(), r);
}

BOOST_FIXTURE_TEST_CASE(impossible_assignment, Cli) {
  // MUL and DIV both count on counter 1 only: as a group ({...}) they cannot be counted at once;
  // as two events they take turns on counter 1 (multiplexed).
  Result r = fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "{MUL,DIV}"}}), {"MUL", "DIV"});
  BOOST_TEST(r.out.empty(), r);
  r = pmc(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "MUL,DIV", "--json"}}));
  BOOST_TEST(r.status == 0, r);
  json j = parse_json(r);
  BOOST_TEST(j["counters"][0]["extrapolated"] == true, r.out);
}

BOOST_FIXTURE_TEST_CASE(empty_event_list_entry, Cli) {
  fails(args({{"stat"}, kP3, {"--workload", "p6-demo", "-e", "instructions,,cycles"}}), {"instructions,,cycles"});
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
