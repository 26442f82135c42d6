#define BOOST_TEST_MODULE cli_list
#include <boost/test/unit_test.hpp>

// `pmc list` as a user runs it (the built pmc as a child process, cli_test_support.hpp): the
// built-in catalog and a user events file, aliases in JSON and text, the filters by name and
// alias, the HAL events after the backend's, and without a backend.

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "support/no_backend.hpp"

using namespace pmc_test::cli;

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
