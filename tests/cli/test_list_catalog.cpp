// `pmc list` and `pmc encode` with a model's catalog (events_path): one line per event with its
// encoding, deprecated events hidden unless asked, --topic and --counter, --json with every
// field of the catalog, and encode's extra register (config1), exclusive flag, umask2, precise
// and period. The catalog is this test's own (names TEST.*), on the bundled Skylake dump.
#define BOOST_TEST_MODULE list_catalog
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using nlohmann::json;
using pmc_test::Result;

const char* kCatalog = R"(backend = "archperf"
description = "test: one model's events"

[[event]]
name = "TEST.DIVIDER_ACTIVE"
code = 0x14
umask = 0x09
defaults = { c = 1 }
topic = "core"
desc = "test: cycles the divider is busy"

[[event]]
name = "TEST.OCR_A"
code = 0xB7
code2 = 0xBB
umask = 0x01
extra = { offcore_rsp = 0x10001 }
topic = "memory"
period = 100003
desc = "test: offcore responses A"

[[event]]
name = "TEST.LOAD_LATENCY"
code = 0xCD
umask = 0x01
extra = { ldlat = 0x80 }
precise = 2
topic = "Memory"
errata = "SKL999"
desc = "test: loads slower than 128 cycles"

[[event]]
name = "TEST.ALONE"
code = 0xC3
umask = 0x01
exclusive = true
counters = [0, 1]
topic = "pipeline"
desc = "test: taken alone"

[[event]]
name = "TEST.EXT"
code = 0x2E
umask = 0x41
umask2 = 0x02
set = { eq = 1 }
topic = "cache"
desc = "test: unit-mask extension and equal"

[[event]]
name = "TEST.OLD"
code = 0xC4
umask = 0x04
deprecated = true
topic = "pipeline"
desc = "test: deprecated"
)";

struct Cli : pmc_test::PmcCommand {
  pmc_test::fs::path config = tmp.path() / "pmc.toml";
  Cli() {
    const pmc_test::fs::path events = tmp.path() / "model.toml";
    pmc_test::spit(events, kCatalog);
    pmc_test::spit(config, "events_path = [\"" + events.string() + "\"]\n");
  }
  Result run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config.string()});
    args.insert(args.begin() + 3, {"--cpuid-dump", "skylake"});
    return pmc(args);
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The line of the listing that starts with `name` and a space.
std::string line_of(const std::string& out, const std::string& name) {
  const auto at = out.find("\n" + name + " ");
  if (at == std::string::npos) return {};
  return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

json parse(const Result& r) {
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    BOOST_ERROR("not JSON: " << e.what() << ": " << r);
    return json::array();
  }
}

const json* find(const json& array, const std::string& name) {
  for (const auto& e : array)
    if (e.value("name", "") == name) return &e;
  return nullptr;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(one_line_per_event_with_its_encoding, Cli) {
  Result r = run({"list", "TEST."});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const std::string div = line_of(r.out, "TEST.DIVIDER_ACTIVE");
  BOOST_TEST(has(div, " event=0x14 umask=0x09 c=1 "), r);
  BOOST_TEST(has(div, " counters 0-3 "), r);
  BOOST_TEST(has(div, "test: cycles the divider is busy"), r);
  BOOST_TEST(has(line_of(r.out, "TEST.OCR_A"), " event=0xB7,0xBB umask=0x01 offcore_rsp=0x10001 "), r);
  BOOST_TEST(has(line_of(r.out, "TEST.EXT"), " event=0x2E umask=0x41 umask2=0x02 eq=1 "), r);
  BOOST_TEST(has(line_of(r.out, "TEST.ALONE"), " counters 0-1 "), r);
  BOOST_TEST(has(line_of(r.out, "TEST.ALONE"), "[exclusive]"), r);
  // The events sit under the file they came from.
  BOOST_TEST(has(r.out, "model.toml:\nTEST.DIVIDER_ACTIVE "), r);
  // Deprecated events are hidden, and the header says so.
  BOOST_TEST(line_of(r.out, "TEST.OLD").empty(), r);
  BOOST_TEST(has(r.out.substr(0, r.out.find('\n')), "deprecated hidden: --deprecated"), r);
  r = run({"list", "--deprecated", "TEST."});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(has(line_of(r.out, "TEST.OLD"), "[deprecated]"), r);
  BOOST_TEST(!has(r.out.substr(0, r.out.find('\n')), "deprecated hidden"), r);
}

BOOST_FIXTURE_TEST_CASE(filter_by_topic, Cli) {
  // Topics compare ignoring case ("Memory" is memory); several with commas.
  Result r = run({"list", "--topic", "memory", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse(r);
  BOOST_TEST(find(j, "TEST.OCR_A"));
  BOOST_TEST(find(j, "TEST.LOAD_LATENCY"));
  BOOST_TEST(!find(j, "TEST.DIVIDER_ACTIVE"));
  BOOST_TEST(!find(j, "tsc"));  // HAL events have no topic
  for (const auto& e : j) BOOST_TEST(e.value("topic", "").size() == 6u, e.dump());
  r = run({"list", "--topic", "CACHE,core", "TEST."});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(!line_of(r.out, "TEST.EXT").empty(), r);
  BOOST_TEST(!line_of(r.out, "TEST.DIVIDER_ACTIVE").empty(), r);
  BOOST_TEST(line_of(r.out, "TEST.OCR_A").empty(), r);
  // A topic no event has: the message lists the ones there are.
  r = run({"list", "--topic", "no-such-topic"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(has(r.err, "has topic 'no-such-topic' (topics here: "), r);
  BOOST_TEST(has(r.err, "memory"), r);
}

BOOST_FIXTURE_TEST_CASE(filter_by_counter, Cli) {
  // TEST.ALONE is limited to counters 0 and 1.
  Result r = run({"list", "--counter", "3", "TEST."});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(!line_of(r.out, "TEST.DIVIDER_ACTIVE").empty(), r);
  BOOST_TEST(line_of(r.out, "TEST.ALONE").empty(), r);
  r = run({"list", "--counter", "1", "TEST.ALONE"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(!line_of(r.out, "TEST.ALONE").empty(), r);
  // Fixed counters: the architectural events with a fixed twin, on Skylake's fixed 0-2.
  r = run({"list", "--counter", "fixed", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  json j = parse(r);
  BOOST_TEST(find(j, "INSTRUCTION_RETIRED"));
  BOOST_TEST(!find(j, "TEST.DIVIDER_ACTIVE"));
  for (const auto& e : j) BOOST_TEST(e["fixed"].is_number(), e.dump());
  r = run({"list", "--counter", "fixed2", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  for (const auto& e : parse(r)) BOOST_TEST(e["fixed"] == 2, e.dump());
  // No general counter 9 on Skylake (4 general counters).
  r = run({"list", "--counter", "9"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(has(r.err, "no general counter 9 (it has 0-3)"), r);
  r = run({"list", "--counter", "bogus"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(has(r.err, "--counter bogus"), r);
}

BOOST_FIXTURE_TEST_CASE(json_carries_every_field, Cli) {
  Result r = run({"list", "--json", "--deprecated", "TEST."});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json j = parse(r);
  const json* ocr = find(j, "TEST.OCR_A");
  BOOST_REQUIRE(ocr);
  BOOST_TEST((*ocr)["code"] == "0xB7");
  BOOST_TEST((*ocr)["code2"] == "0xBB");
  BOOST_TEST((*ocr)["umask"] == "0x1");
  BOOST_TEST((*ocr)["extra"] == (json{{"name", "offcore_rsp"}, {"value", "0x10001"}, {"msrs", {"0x1A6", "0x1A7"}}}),
             ocr->dump());
  BOOST_TEST((*ocr)["period"] == 100003);
  BOOST_TEST((*ocr)["topic"] == "memory");
  BOOST_TEST((*ocr)["encoding"] == "event=0xB7,0xBB umask=0x01 offcore_rsp=0x10001");
  BOOST_TEST((*ocr)["deprecated"] == false);
  BOOST_TEST((*ocr)["errata"].is_null());
  const json* ld = find(j, "TEST.LOAD_LATENCY");
  BOOST_REQUIRE(ld);
  BOOST_TEST((*ld)["precise"] == 2);
  BOOST_TEST((*ld)["errata"] == "SKL999");
  BOOST_TEST((*ld)["extra"]["msrs"] == json::array({"0x3F6"}));
  const json* ext = find(j, "TEST.EXT");
  BOOST_REQUIRE(ext);
  BOOST_TEST((*ext)["umask2"] == "0x2");
  BOOST_TEST((*ext)["set"] == (json{{"eq", 1}}));
  BOOST_TEST(find(j, "TEST.DIVIDER_ACTIVE")->at("defaults") == (json{{"c", 1}}));
  BOOST_TEST(find(j, "TEST.ALONE")->at("exclusive") == true);
  BOOST_TEST(find(j, "TEST.OLD")->at("deprecated") == true);
}

BOOST_FIXTURE_TEST_CASE(encode_shows_the_extra_register, Cli) {
  Result r = run({"encode", "--json", "TEST.OCR_A:u", "TEST.LOAD_LATENCY", "TEST.EXT", "TEST.ALONE", "INSTRUCTION_RETIRED"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json j = parse(r);
  BOOST_REQUIRE(j.size() == 5u);
  BOOST_TEST(j[0]["config"] == "0x4101B7");
  BOOST_TEST(j[0]["config1"] == "0x10001");
  BOOST_TEST(j[0]["extra"] == (json{{"name", "offcore_rsp"}, {"value", "0x10001"}, {"msrs", {"0x1A6", "0x1A7"}}}));
  BOOST_TEST(j[0]["period"] == 100003);
  BOOST_TEST(j[0]["precise"] == 0);
  BOOST_TEST(j[0]["exclusive"] == false);
  BOOST_TEST(j[1]["precise"] == 2);
  BOOST_TEST(j[1]["config1"] == "0x80");
  BOOST_TEST(j[2]["umask2"] == "0x2");
  BOOST_TEST(j[2]["config"] == "0x2100043412E");  // umask2 2 (bit 41), EQ (bit 36)
  BOOST_TEST(j[3]["exclusive"] == true);
  BOOST_TEST(j[4]["extra"].is_null());
  BOOST_TEST(j[4]["config1"].is_null());
  BOOST_TEST(j[4]["umask2"] == "0x0");
  // Text: perf's name for the extra value.
  r = run({"encode", "TEST.OCR_A:u", "TEST.ALONE", "INSTRUCTION_RETIRED"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(has(r.out, "config=0x4101B7     config1=0x10001 counters=0,1,2,3"), r);
  BOOST_TEST(has(r.out, " exclusive  archperf::TEST.ALONE"), r);
  BOOST_TEST(!has(r.out.substr(r.out.find("INSTRUCTION_RETIRED")), "config1"), r);
}

BOOST_FIXTURE_TEST_CASE(probe_names_the_cpu_catalogs, Cli) {
  // The bundled Skylake dump loads the generated cpu/skl.toml (and this test's events_path file,
  // which is not a cpu/ catalog).
  Result r = run({"probe", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const json c = parse(r)["pmu"]["cpu_catalogs"];
  BOOST_TEST_REQUIRE(c.size() == 1u, r);
  BOOST_TEST(c[0].get<std::string>().rfind("cpu/skl.toml (Skylake client", 0) == 0u, r);
  // The Pentium III's backend has none.
  r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--json"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(parse(r)["pmu"]["cpu_catalogs"] == json::array(), r);
}

// A hybrid CPU (the bundled Alder Lake dump, read on a Golden Cove P-core): each core type's
// events under a header naming the part, the E-cores' written as they are typed, and encoded
// with their own catalog. Intel's lists give BR_MISP_RETIRED.ALL_BRANCHES event C5H, unit mask
// 00H on counters 0-7 of Golden Cove and 0-5 of Gracemont.
BOOST_FIXTURE_TEST_CASE(a_hybrid_cpu_lists_and_encodes_each_core_type, pmc_test::PmcCommand) {
  Result r = pmc({"list", "--cpuid-dump", "intel-adl-glc", "BR_MISP_RETIRED.ALL_BRANCHES"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(has(r.out, "on the adl_glc cores (cpu/adl-glc.toml (Alder Lake, Golden Cove P-core), Linux perf's cpu_core)"), r);
  BOOST_TEST(has(r.out, "on the adl_grt cores (cpu/adl-grt.toml (Alder Lake, Gracemont E-core), Linux perf's cpu_atom)"), r);
  BOOST_TEST(has(line_of(r.out, "BR_MISP_RETIRED.ALL_BRANCHES"), " event=0xC5 umask=0x00 counters 0-7 "), r);
  BOOST_TEST(has(line_of(r.out, "adl_grt::BR_MISP_RETIRED.ALL_BRANCHES"), " event=0xC5 umask=0x00 counters 0-5 "), r);
  r = pmc({"list", "--cpuid-dump", "intel-adl-glc", "--json", "BR_MISP_RETIRED.ALL_BRANCHES"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  std::vector<std::string> parts;
  for (const auto& e : parse(r))
    if (e.value("name", "") == "BR_MISP_RETIRED.ALL_BRANCHES")
      parts.push_back(e.value("part", "") + " " + e.value("perf_pmu", "") + " " + e.value("core_type", ""));
  BOOST_TEST(parts == (std::vector<std::string>{"adl_glc cpu_core 0x40", "adl_grt cpu_atom 0x20"}), r);
  // EN (22), USR (16), event C5H; the part in the canonical form, by either of its names.
  r = pmc({"encode", "--cpuid-dump", "intel-adl-glc", "cpu_atom::BR_MISP_RETIRED.ALL_BRANCHES:u"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(has(r.out, "config=0x4100C5 "), r);
  BOOST_TEST(has(r.out, "counters=0,1,2,3,4,5 "), r);
  BOOST_TEST(has(r.out, "adl_grt::BR_MISP_RETIRED.ALL_BRANCHES:u=1:k=0"), r);
  r = pmc({"encode", "--cpuid-dump", "intel-adl-glc", "cpu_lowpower::BR_MISP_RETIRED.ALL_BRANCHES"});
  BOOST_TEST(r.status != 0, r);
  BOOST_TEST(has(r.err, "PMU 'cpu_lowpower' is not the active backend 'archperf'"), r);
}
