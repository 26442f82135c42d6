#define BOOST_TEST_MODULE catalog_import
#include <boost/test/unit_test.hpp>

// `pmc catalog import` (docs/hardware/intel-catalogs.md) run as a user runs it:
// (a) the tiny hand-written vendor trees of tests/data/catalog-import give the catalog facts
//     worked out by hand below from those files (Intel layout: codes, pairs, unit mask
//     extension, defaults, fixed counters numbered from 1, extra MSRs, flags, the index rows and
//     the synthesized CPUID dumps; perf layout: what the hand-written zen5 catalog already
//     resolves is left out, uncore entries and metrics too, no zen6 without a zen6 tag);
// (b) with Intel's and perf's trees present (PMC_PERFMON_DIR, PMC_PERF_AMD_DIR, default
//     ../shared/perfmon and ../shared/perf-amd beside the source tree), the checked-in catalogs,
//     index and dumps are byte for byte what the importer writes; skipped otherwise;
// (c) bad input is one clear line naming the file, and exit status 1.

#include "support/pmc_command.hpp"
#include "support/vendor_trees.hpp"

#include <toml++/toml.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::Result;
using pmc_test::slurp;
using pmc_test::spit;

const fs::path kData = fs::path(PMC_TEST_DATA) / "catalog-import";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool one_line(const std::string& err) {
  return err.size() > 1 && err.back() == '\n' && err.find('\n') == err.size() - 1;
}

// The [[event]] of that name in a parsed catalog (null when absent).
const toml::table* event(const toml::table& doc, const std::string& name) {
  const toml::array* events = doc["event"].as_array();
  if (!events) return nullptr;
  for (const auto& e : *events)
    if (const auto* t = e.as_table(); t && (*t)["name"].value_or(std::string()) == name) return t;
  return nullptr;
}

std::vector<std::int64_t> ints(const toml::node_view<const toml::node>& v) {
  std::vector<std::int64_t> out;
  if (const auto* a = v.as_array())
    for (const auto& x : *a) out.push_back(x.value_or(std::int64_t{-1}));
  return out;
}

struct Import : pmc_test::PmcCommand {
  fs::path out = tmp.path() / "out";
  Result intel(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"catalog", "import", "--layout", "intel", "--from", (kData / "intel").string(),
                                  "--out", (out / "cpu").string(), "--cpuid-out", (out / "cpuid").string(),
                                  "--tables", (kData / "tables").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return pmc(args);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// (a) Intel layout

BOOST_FIXTURE_TEST_CASE(intel_events_carry_every_fact_of_the_list, Import) {
  const Result r = intel();
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const toml::table doc = toml::parse_file((out / "cpu" / "tst.toml").string());
  BOOST_TEST(doc["backend"].value_or(std::string()) == "archperf");
  // 11 entries; ARITH.DIV_ACTIVE_OLD (deprecated) selects what ARITH.DIVIDER_ACTIVE selects: an alias.
  BOOST_TEST(doc["event"].as_array()->size() == 10u);
  BOOST_TEST(!event(doc, "ARITH.DIV_ACTIVE_OLD"));

  // Fixed-counter pseudo events; test_core.json numbers the fixed counters from 1.
  const auto* inst = event(doc, "INST_RETIRED.ANY");
  BOOST_TEST_REQUIRE(inst);
  BOOST_TEST((*inst)["code"].value_or(-1) == 0);
  BOOST_TEST((*inst)["umask"].value_or(-1) == 1);
  BOOST_TEST(ints((*inst)["counters"]).empty());
  BOOST_TEST((*inst)["counters"].is_array());
  BOOST_TEST((*inst)["fixed"].value_or(-1) == 0);
  BOOST_TEST((*event(doc, "CPU_CLK_UNHALTED.THREAD"))["fixed"].value_or(-1) == 1);

  // CounterMask -> defaults.c; Counter, not CounterHTOff; the period; topic by prefix; a
  // generated description, not the file's sentence.
  const auto* arith = event(doc, "ARITH.DIVIDER_ACTIVE");
  BOOST_TEST_REQUIRE(arith);
  BOOST_TEST((*arith)["code"].value_or(-1) == 0x14);
  BOOST_TEST((*arith)["umask"].value_or(-1) == 0x09);
  BOOST_TEST((*arith)["defaults"]["c"].value_or(-1) == 1);
  BOOST_TEST(!(*arith)["defaults"]["i"]);
  BOOST_TEST(ints((*arith)["counters"]) == (std::vector<std::int64_t>{0, 1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST((*arith)["period"].value_or(-1) == 1000003);
  BOOST_TEST((*arith)["topic"].value_or(std::string()) == "pipeline");
  const std::string desc = (*arith)["desc"].value_or(std::string());
  BOOST_TEST(contains(desc, "event 0x14"));
  BOOST_TEST(contains(desc, "unit mask 0x09"));
  BOOST_TEST(contains(desc, "cmask 1"));
  BOOST_TEST(!contains(desc, "Own words"));
  BOOST_TEST(contains((*arith)["reference"].value_or(std::string()), "test_core.json ARITH.DIVIDER_ACTIVE"));
  BOOST_TEST_REQUIRE((*arith)["aliases"].as_array());
  BOOST_TEST((*arith)["aliases"].as_array()->size() == 1u);
  BOOST_TEST((*arith)["aliases"][0].value_or(std::string()) == "ARITH.DIV_ACTIVE_OLD");
  BOOST_TEST((*arith)["period"].value_or(-1) == 1000003);  // its own, not the alias's 2000003
  BOOST_TEST(!(*arith)["exclusive"]);
  BOOST_TEST(!(*arith)["deprecated"]);
  BOOST_TEST(!(*arith)["errata"]);  // "null"

  // A paired offcore event: both codes, the offcore response value, any of the two MSRs.
  const auto* ocr = event(doc, "OCR.DEMAND_DATA_RD.ANY_RESPONSE");
  BOOST_TEST_REQUIRE(ocr);
  BOOST_TEST((*ocr)["code"].value_or(-1) == 0xB7);
  BOOST_TEST((*ocr)["code2"].value_or(-1) == 0xBB);
  BOOST_TEST((*ocr)["extra"]["offcore_rsp"].value_or(-1) == 0x10001);
  BOOST_TEST(!(*ocr)["extra_msrs"]);
  BOOST_TEST((*ocr)["topic"].value_or(std::string()) == "cache");

  // Load latency (3F6H), taken alone, PEBS 2; the longest topic prefix wins (MEM_TRANS_RETIRED
  // over MEM_).
  const auto* ldlat = event(doc, "MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4");
  BOOST_TEST_REQUIRE(ldlat);
  BOOST_TEST((*ldlat)["extra"]["ldlat"].value_or(-1) == 4);
  BOOST_TEST((*ldlat)["exclusive"].value_or(false));
  BOOST_TEST((*ldlat)["precise"].value_or(-1) == 2);
  BOOST_TEST((*ldlat)["topic"].value_or(std::string()) == "memory");
  const auto* fe = event(doc, "FRONTEND_RETIRED.DSB_MISS");
  BOOST_TEST((*fe)["extra"]["frontend"].value_or(-1) == 0x11);
  BOOST_TEST((*fe)["precise"].value_or(-1) == 1);
  BOOST_TEST((*fe)["topic"].value_or(std::string()) == "misc");  // no prefix: the table's default

  // One code, a unit mask per MSR (0x01 with 1A6H, 0x02 with 1A7H), Intel naming 1A7H: 0x02.
  const auto* one = event(doc, "OFFCORE_RESPONSE_1.ANY");
  BOOST_TEST_REQUIRE(one);
  BOOST_TEST((*one)["umask"].value_or(-1) == 0x02);
  BOOST_TEST((*one)["extra"]["offcore_rsp"].value_or(-1) == 0x8008);
  BOOST_TEST(ints((*one)["extra_msrs"]) == (std::vector<std::int64_t>{0x1A7}), boost::test_tools::per_element());
  BOOST_TEST(!(*one)["code2"]);

  // An MSR set none of the base names covers: declared in the file under a derived name.
  BOOST_TEST(ints(doc["extra"]["msr_3e0"]["msrs"]) == (std::vector<std::int64_t>{0x3E0, 0x3E1}),
             boost::test_tools::per_element());
  BOOST_TEST(doc["extra"]["msr_3e0"]["desc"].is_string());
  const auto* region = event(doc, "MEM_LOAD_REGION.ONE");
  BOOST_TEST((*region)["umask"].value_or(-1) == 0x01);
  BOOST_TEST((*region)["extra"]["msr_3e0"].value_or(-1) == 5);
  BOOST_TEST(ints((*region)["extra_msrs"]) == (std::vector<std::int64_t>{0x3E0}), boost::test_tools::per_element());

  // UMaskExt, Invert, EdgeDetect, AnyThread, Equal, Deprecated, Errata.
  const auto* odd = event(doc, "UOPS_ISSUED.ODD");
  BOOST_TEST_REQUIRE(odd);
  BOOST_TEST((*odd)["umask2"].value_or(-1) == 0x80);
  BOOST_TEST((*odd)["defaults"]["c"].value_or(-1) == 2);
  BOOST_TEST((*odd)["defaults"]["i"].value_or(-1) == 1);
  BOOST_TEST((*odd)["defaults"]["e"].value_or(-1) == 1);
  BOOST_TEST((*odd)["defaults"]["t"].value_or(-1) == 1);
  BOOST_TEST((*odd)["set"]["eq"].value_or(-1) == 1);
  BOOST_TEST((*odd)["deprecated"].value_or(false));
  BOOST_TEST((*odd)["errata"].value_or(std::string()) == "TST001, TST002");

  // perf's old offcore spelling becomes a catalog name; Intel's stays in the reference.
  const auto* old = event(doc, "OFFCORE_RESPONSE.ALL_READS.ANY");
  BOOST_TEST_REQUIRE(old);
  BOOST_TEST((*old)["deprecated"].value_or(false));
  BOOST_TEST(contains((*old)["reference"].value_or(std::string()), "OFFCORE_RESPONSE:request=ALL_READS:response=ANY"));
}

BOOST_FIXTURE_TEST_CASE(intel_vendor_descriptions_only_when_asked, Import) {
  const Result r = intel({"--vendor-descriptions"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const toml::table doc = toml::parse_file((out / "cpu" / "tst.toml").string());
  BOOST_TEST((*event(doc, "ARITH.DIVIDER_ACTIVE"))["desc"].value_or(std::string()) == "Own words three.");
}

BOOST_FIXTURE_TEST_CASE(intel_index_rows_and_hybrid_files, Import) {
  const Result r = intel();
  BOOST_TEST_REQUIRE(r.status == 0, r);
  std::set<std::string> files;
  for (const auto& f : fs::directory_iterator(out / "cpu")) files.insert(f.path().filename().string());
  BOOST_TEST((files == std::set<std::string>{"hyb-big.toml", "hyb-smallcore.toml", "index.toml", "nvx.toml", "tst.toml"}));

  const toml::table index = toml::parse_file((out / "cpu" / "index.toml").string());
  const toml::array* rows = index["catalog"].as_array();
  BOOST_TEST_REQUIRE(rows);
  BOOST_TEST_REQUIRE(rows->size() == 5u);  // the uncore row is left out
  const auto row = [&](std::size_t i) { return toml::node_view<const toml::node>(&(*rows)[i]); };
  BOOST_TEST(row(0)["vendor"].value_or(std::string()) == "GenuineIntel");
  BOOST_TEST(row(0)["family"].value_or(-1) == 6);
  BOOST_TEST(ints(row(0)["model"]) == (std::vector<std::int64_t>{0x4E, 0x5E}), boost::test_tools::per_element());
  BOOST_TEST(!row(0)["stepping"]);
  BOOST_TEST(row(0)["file"].value_or(std::string()) == "tst.toml");
  BOOST_TEST(row(0)["name"].value_or(std::string()) == "Test client");
  BOOST_TEST(row(1)["model"].value_or(-1) == 0x55);
  BOOST_TEST(row(1)["stepping"].value_or(std::string()) == "5-15");
  BOOST_TEST(row(2)["core_type"].value_or(-1) == 0x40);
  BOOST_TEST(row(2)["native_model"].value_or(-1) == 1);
  BOOST_TEST(row(2)["file"].value_or(std::string()) == "hyb-big.toml");
  BOOST_TEST(row(2)["name"].value_or(std::string()) == "Hybrid test, big core");
  BOOST_TEST(row(3)["core_type"].value_or(-1) == 0x20);
  BOOST_TEST(row(3)["file"].value_or(std::string()) == "hyb-smallcore.toml");  // no table entry: the word
  BOOST_TEST(row(4)["family"].value_or(-1) == 18);
  BOOST_TEST(row(4)["model"].value_or(-1) == 1);
  BOOST_TEST(row(4)["file"].value_or(std::string()) == "nvx.toml");
}

// The dumps, by hand: leaf 1 EAX = stepping | model[3:0] << 4 | family << 8 | model[7:4] << 16
// (family 18: base 0xF, extended 3 << 20); leaf 0AH EAX = version | counters << 8 | 48 << 16 |
// events << 24, EDX = contiguous fixed counters | 48 << 5 (| bit 15 from version 5).
BOOST_FIXTURE_TEST_CASE(intel_cpuid_dumps, Import) {
  const Result r = intel();
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const std::string tst = slurp(out / "cpuid" / "intel-tst.txt");
  BOOST_TEST(contains(tst, "# Synthesized, not captured"));
  BOOST_TEST(contains(tst, "CPUID 00000000: 0000000A-756E6547-6C65746E-49656E69"));
  BOOST_TEST(contains(tst, "CPUID 00000001: 000406E0-"));  // 6-4E, stepping 0
  BOOST_TEST(contains(tst, "CPUID 0000000A: 07300404-00000000-00000000-00000602"));  // v4, 4 GP, fixed 0-1
  BOOST_TEST(!contains(tst, "CPUID 0000001A"));
  const std::string big = slurp(out / "cpuid" / "intel-hyb-big.txt");
  BOOST_TEST(contains(big, "CPUID 00000007: 00000000-00000000-00000000-00008000"));
  BOOST_TEST(contains(big, "CPUID 0000000A: 08300805-00000000-00000009-00008601"));  // 8 GP, fixed {0, 3}
  BOOST_TEST(contains(big, "CPUID 0000001A: 40000001-"));
  const std::string small = slurp(out / "cpuid" / "intel-hyb-smallcore.txt");
  BOOST_TEST(contains(small, "CPUID 0000000A: 07300605-00000000-00000001-00008601"));  // 6 GP, fixed 0
  BOOST_TEST(contains(small, "CPUID 0000001A: 20000001-"));
  BOOST_TEST(contains(slurp(out / "cpuid" / "intel-nvx.txt"), "CPUID 00000001: 00300F10-"));

  // The library reads them: the hybrid dump is a P-core of 8 general counters.
  const Result probe = pmc({"probe", "--cpuid-dump", (out / "cpuid" / "intel-hyb-big.txt").string()});
  BOOST_TEST_REQUIRE(probe.status == 0, probe);
  BOOST_TEST(contains(probe.out, "family 6 model 151"));
  BOOST_TEST(contains(probe.out, "P-core"));
  BOOST_TEST(contains(probe.out, "8 general counters"));
}

// ---------------------------------------------------------------------------------------------
// (a) perf layout (AMD): on the bundled Zen 5 dump, with the hand-written catalogs

BOOST_FIXTURE_TEST_CASE(perf_supplement_holds_only_what_the_catalogs_lack, Import) {
  const Result r = pmc({"catalog", "import", "--layout", "perf", "--from", (kData / "perf").string(), "--out",
                        out.string()});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  BOOST_TEST(contains(r.out, "amdzen6"));
  BOOST_TEST(contains(r.out, "no CPU tag zen6"));
  BOOST_TEST(!fs::exists(out / "perf-zen6.toml"));
  const toml::table doc = toml::parse_file((out / "perf-zen5.toml").string());
  BOOST_TEST(doc["backend"].value_or(std::string()) == "amd");
  // ls_dispatch.ld_dispatch is zen5.toml's LS_DISPATCH (alias ls_dispatch) with its unit mask
  // LD_DISPATCH = 0x01: perf's bits already, so not repeated. The L3 entry (Unit), the
  // data-fabric file and the metric are not core events.
  BOOST_TEST(doc["event"].as_array()->size() == 3u);
  BOOST_TEST(doc["modifiers"].as_array());  // zen5's own list: the file before may be another family's
  BOOST_TEST(!event(doc, "ls_dispatch.ld_dispatch"));
  BOOST_TEST(!event(doc, "l3_made_up"));
  BOOST_TEST(!event(doc, "df_made_up"));
  const auto* thing = event(doc, "ls_made_up.thing");
  BOOST_TEST_REQUIRE(thing);
  BOOST_TEST((*thing)["code"].value_or(-1) == 0x1C7);
  BOOST_TEST((*thing)["umask"].value_or(-1) == 0x03);
  BOOST_TEST(std::string((*thing)["cpus"][0].value_or("")) == "zen5");
  BOOST_TEST((*thing)["topic"].value_or(std::string()) == "load-store");
  BOOST_TEST(!contains((*thing)["desc"].value_or(std::string()), "Own words"));
  const auto* plain = event(doc, "ls_made_up_plain");
  BOOST_TEST_REQUIRE(plain);
  BOOST_TEST((*plain)["code"].value_or(-1) == 0xE5);
  BOOST_TEST((*plain)["umask"].value_or(-1) == 0);  // perf's encoding: unit mask 0 when it names none
  // perf's second name for the same encoding is an alias, not a second event.
  BOOST_TEST(!event(doc, "ls_made_up.same_thing"));
  BOOST_TEST((*thing)["aliases"][0].value_or(std::string()) == "ls_made_up.same_thing");
  // A known event (fp_ret_sse_avx_ops) with a unit mask name zen5.toml does not have.
  const auto* fp = event(doc, "fp_ret_sse_avx_ops.made_up_all");
  BOOST_TEST_REQUIRE(fp);
  BOOST_TEST((*fp)["umask"].value_or(-1) == 0x0F);
  BOOST_TEST((*fp)["deprecated"].value_or(false));
  BOOST_TEST((*fp)["topic"].value_or(std::string()) == "floating-point");
}

// ---------------------------------------------------------------------------------------------
// (c) bad input

BOOST_FIXTURE_TEST_CASE(missing_mapfile_is_one_line_naming_it, Import) {
  fs::create_directories(tmp.path() / "empty");
  const Result r = pmc({"catalog", "import", "--layout", "intel", "--from", (tmp.path() / "empty").string(), "--out",
                        out.string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(one_line(r.err), r);
  BOOST_TEST(contains(r.err, (tmp.path() / "empty" / "mapfile.csv").string()), r);
  BOOST_TEST(!fs::exists(out));
}

BOOST_FIXTURE_TEST_CASE(malformed_json_is_one_line_naming_the_file, Import) {
  const fs::path tree = tmp.path() / "bad";
  spit(tree / "mapfile.csv", "Family-model,Version,Filename,EventType\nGenuineIntel-6-4E,V1,/X/events/x_core.json,core\n");
  spit(tree / "X" / "events" / "x_core.json", "{ \"Events\": [ { \"EventName\": \"A\", } ] }\n");
  const Result r = pmc({"catalog", "import", "--layout", "intel", "--from", tree.string(), "--out", out.string(),
                        "--tables", (kData / "tables").string()});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(one_line(r.err), r);
  BOOST_TEST(contains(r.err, (tree / "X" / "events" / "x_core.json").string()), r);
  BOOST_TEST(contains(r.err, "malformed JSON"), r);
  BOOST_TEST(contains(r.err, "line 1"), r);

  const fs::path perf = tmp.path() / "badperf";
  spit(perf / "mapfile.csv", "Family-model,Version,Filename,EventType\nAuthenticAMD-26-[[:xdigit:]]+,v1,amdzen5,core\n");
  spit(perf / "amdzen5" / "core.json", "[ { \"EventName\": \"x\" \"EventCode\": \"0x1\" } ]\n");
  const Result p = pmc({"catalog", "import", "--layout", "perf", "--from", perf.string(), "--out", out.string()});
  BOOST_TEST(p.status == 1, p);
  BOOST_TEST(one_line(p.err), p);
  BOOST_TEST(contains(p.err, (perf / "amdzen5" / "core.json").string()), p);
}

// ---------------------------------------------------------------------------------------------
// (b) the checked-in catalogs are the importer's output

namespace {

using pmc_test::shared_dir;
using pmc_test::vendor_trees;

// The files of dir whose text holds marker (the importer's own), by name.
std::set<std::string> generated(const fs::path& dir, const std::string& prefix, const std::string& marker) {
  std::set<std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) {
    const std::string n = f.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && contains(slurp(f.path()), marker)) out.insert(n);
  }
  return out;
}

void same_files(const fs::path& fresh, const fs::path& tree, const std::string& prefix, const std::string& marker) {
  std::set<std::string> written;
  for (const auto& f : fs::directory_iterator(fresh)) written.insert(f.path().filename().string());
  BOOST_TEST((written == generated(tree, prefix, marker)), "the importer's files and the generated files of "
                                                             << tree.string() << " differ");
  for (const auto& n : written)
    BOOST_TEST(slurp(fresh / n) == slurp(tree / n), (tree / n).string() << " differs from the importer's output: "
                                                                         "rerun scripts/regen-catalogs.sh");
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(checked_in_catalogs_are_the_importers_output, Import,
                        *boost::unit_test::precondition(vendor_trees)) {
  const fs::path src = PMC_SOURCE_DIR;
  const Result i = pmc({"catalog", "import", "--layout", "intel", "--from", shared_dir("PMC_PERFMON_DIR", "perfmon").string(),
                        "--out", (out / "cpu").string(), "--cpuid-out", (out / "cpuid").string(), "--tables",
                        (src / "data" / "catalog-import").string()});
  BOOST_TEST_REQUIRE(i.status == 0, i);
  same_files(out / "cpu", src / "backends" / "archperf" / "events" / "cpu", "", "# Generated by `pmc catalog import");
  same_files(out / "cpuid", src / "data" / "cpuid", "intel-", "# Synthesized, not captured");
  const Result a = pmc({"catalog", "import", "--layout", "perf", "--from", shared_dir("PMC_PERF_AMD_DIR", "perf-amd").string(),
                        "--out", (out / "amd").string()});
  BOOST_TEST_REQUIRE(a.status == 0, a);
  same_files(out / "amd", src / "backends" / "amd" / "events", "perf-", "# Generated by `pmc catalog import");
}
