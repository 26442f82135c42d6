// The keys of model-specific catalogs (docs/event-format.md, "Events of one model"): what the
// loader accepts and refuses (with file:line:column), what the parse cache keeps, what the
// encoder makes of them, and that validate() tells events of one code apart by their unit masks.
#define BOOST_TEST_MODULE catalog_schema
#include <boost/test/unit_test.hpp>

#include "catalog_state.hpp"
#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/sdk/backend.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// IA32_PERFEVTSELx as architectural perfmon v6 lays it out (docs/hardware/archperf.md).
const char* kHeader = R"(backend = "t"
modifiers = ["u", "k", "e", "i", "c"]
[format]
event = "0-7"
umask = "8-15"
usr = "16"
os = "17"
edge = "18"
inv = "23"
cmask = "24-31"
eq = "36"
umask2 = "40-47"
[pmu]
reserved = ["32-35", "37-39", "48-63"]
[extra.offcore_rsp]
msrs = [0x1A6, 0x1A7]
desc = "offcore response"
[extra.ldlat]
msrs = [0x3F6]
desc = "load latency threshold"
)";

const char* kEvents = R"(
[[event]]
name = "OCR.DEMAND_DATA_RD.ANY_RESPONSE"
desc = "d"
code = 0xB7
code2 = 0xBB
umask = 0x01
extra = { offcore_rsp = 0x10001 }
period = 100003
topic = "cache"
[[event]]
name = "OCR.ONE_ONLY"
desc = "d"
code = 0xB7
umask = 0x01
extra = { offcore_rsp = 0x20001 }
extra_msrs = [0x1A7]
deprecated = true
[[event]]
name = "MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4"
desc = "d"
code = 0xCD
umask = 0x01
extra = { ldlat = 4 }
precise = 2
exclusive = true
errata = "SKL057, SKL058"
[[event]]
name = "CYCLE_ACTIVITY.STALLS_TOTAL"
desc = "d"
code = 0xA3
umask = 0x04
defaults = { c = 4 }
[[event]]
name = "CYCLE_ACTIVITY.STALLS_L3_MISS"
desc = "d"
code = 0xA3
umask = 0x04
defaults = { c = 6 }
[[event]]
name = "TOPDOWN.BACKEND_BOUND_SLOTS"
desc = "d"
code = 0xA4
umask = 0x02
umask2 = 0x01
[[event]]
name = "UOPS_RETIRED.EQUAL"
desc = "d"
code = 0xC2
umask = 0x02
set = { eq = 1 }
)";

pmc::EventCatalog load(const std::string& body = kEvents) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + body, "t.toml", "t");
  return c;
}

// The message of loading header + body, "" when it loads.
std::string load_error(const std::string& body) {
  try {
    (void)load(body);
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return {};
}

pmc::PmuInfo four_counters() {
  pmc::PmuInfo p;
  p.name = "t";
  for (unsigned i = 0; i < 4; ++i) {
    pmc::CounterInfo c;
    c.kind = pmc::CounterKind::general;
    c.index = i;
    c.width = 48;
    p.counters.push_back(c);
  }
  p.reserved = 0xFFFF00EF00000000ull;
  return p;
}

pmc::Encoding encode(const pmc::EventCatalog& c, const std::string& text) {
  return pmc::encode_with_catalog(pmc::parse_event(text), c, four_counters());
}

// Every field of the new keys, as kEvents writes them.
void check_fields(const pmc::EventCatalog& c) {
  const pmc::EventDef* ocr = c.find("OCR.DEMAND_DATA_RD.ANY_RESPONSE");
  BOOST_REQUIRE(ocr);
  BOOST_TEST((ocr->code2 && *ocr->code2 == 0xBBu));
  BOOST_TEST(ocr->extra == "offcore_rsp");
  BOOST_TEST(ocr->extra_value == 0x10001u);
  BOOST_TEST(ocr->extra_msrs.empty());
  BOOST_TEST(ocr->period == 100003u);
  BOOST_TEST(ocr->topic == "cache");
  BOOST_TEST(!ocr->deprecated);
  const pmc::EventDef* one = c.find("OCR.ONE_ONLY");
  BOOST_REQUIRE(one);
  BOOST_TEST(one->extra_msrs == std::vector<std::uint32_t>{0x1A7});
  BOOST_TEST(one->deprecated);
  BOOST_TEST(!one->code2);
  const pmc::EventDef* lat = c.find("MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4");
  BOOST_REQUIRE(lat);
  BOOST_TEST(lat->extra == "ldlat");
  BOOST_TEST(lat->precise == 2u);
  BOOST_TEST(lat->exclusive);
  BOOST_TEST(lat->errata == "SKL057, SKL058");
  BOOST_TEST(c.find("TOPDOWN.BACKEND_BOUND_SLOTS")->umask2 == 1u);
  BOOST_TEST(c.find("UOPS_RETIRED.EQUAL")->set.at("eq") == 1u);
  BOOST_TEST(c.find("CYCLE_ACTIVITY.STALLS_L3_MISS")->defaults.at("c") == 6u);
  BOOST_REQUIRE(c.extra_regs().size() == 2u);
  const pmc::ExtraRegDef* x = c.extra_reg("offcore_rsp");
  BOOST_REQUIRE(x);
  BOOST_TEST(x->msrs == (std::vector<std::uint32_t>{0x1A6, 0x1A7}));
  BOOST_TEST(x->description == "offcore response");
  BOOST_TEST(x->source.line == 15u);  // [extra.offcore_rsp] in kHeader
  BOOST_TEST(c.extra_reg("frontend") == nullptr);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_new_keys_load) {
  check_fields(load());
}

BOOST_AUTO_TEST_CASE(the_encoder_writes_umask2_set_and_the_extra_register) {
  const pmc::EventCatalog c = load();
  const pmc::Encoding td = encode(c, "TOPDOWN.BACKEND_BOUND_SLOTS:u");
  BOOST_TEST(td.config == ((1ull << 40) | (1ull << 16) | 0x02A4));  // umask2 1 at bit 40, umask 02, u
  BOOST_TEST(td.extra.empty());
  BOOST_TEST(td.extra_msrs.empty());
  BOOST_TEST(!td.exclusive);
  // set = { eq = 1 } writes bit 36; u and k by default.
  BOOST_TEST(encode(c, "UOPS_RETIRED.EQUAL").config == ((1ull << 36) | (3ull << 16) | 0x02C2));
  // The extra register: the declared MSRs, or the event's own choice of them.
  const pmc::Encoding ocr = encode(c, "OCR.DEMAND_DATA_RD.ANY_RESPONSE");
  BOOST_TEST(ocr.config == ((3ull << 16) | 0x01B7));
  BOOST_TEST(ocr.extra == "offcore_rsp");
  BOOST_TEST(ocr.extra_value == 0x10001u);
  BOOST_TEST(ocr.extra_msrs == (std::vector<std::uint32_t>{0x1A6, 0x1A7}));
  BOOST_TEST(encode(c, "OCR.ONE_ONLY").extra_msrs == std::vector<std::uint32_t>{0x1A7});
  const pmc::Encoding lat = encode(c, "MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4");
  BOOST_TEST(lat.extra_msrs == std::vector<std::uint32_t>{0x3F6});
  BOOST_TEST(lat.extra_value == 4u);
  BOOST_TEST(lat.exclusive);
  // defaults carry the counter mask; the user may override it as perf allows.
  BOOST_TEST(encode(c, "CYCLE_ACTIVITY.STALLS_L3_MISS").config == ((6ull << 24) | (3ull << 16) | 0x04A3));
  BOOST_TEST(encode(c, "CYCLE_ACTIVITY.STALLS_L3_MISS:c=2").config == ((2ull << 24) | (3ull << 16) | 0x04A3));
  // encode_event (a backend's own definition) fills the same.
  const pmc::EventDef* def = c.find("OCR.ONE_ONLY");
  const pmc::Encoding own = pmc::encode_event(pmc::parse_event("OCR.ONE_ONLY"), *def, c, four_counters());
  BOOST_TEST(own.extra_value == 0x20001u);
  BOOST_TEST(own.extra_msrs == std::vector<std::uint32_t>{0x1A7});
}

BOOST_AUTO_TEST_CASE(validate_tells_events_of_one_code_apart_by_their_selection) {
  // kEvents has two 0xB7/0x01 events told apart by the MSR value, two 0xA3/0x04 by the counter
  // mask: no defect.
  auto problems = load().validate(4);
  BOOST_TEST(problems.empty(), (problems.empty() ? std::string() : problems.front()));
  // The same selection twice is a defect; a different umask2 or `set` is not.
  const pmc::EventCatalog dup = load(R"(
[[event]]
name = "A"
desc = "d"
code = 0xA4
umask = 0x02
[[event]]
name = "B"
desc = "d"
code = 0xA4
umask = 0x02
umask2 = 0x01
[[event]]
name = "C"
desc = "d"
code = 0xA4
umask = 0x02
set = { eq = 1 }
[[event]]
name = "D"
desc = "d"
code = 0xA4
umask = 0x02
)");
  problems = dup.validate(4);
  BOOST_REQUIRE_EQUAL(problems.size(), 1u);
  BOOST_TEST(problems[0].find("events A and D share code 0xA4") != std::string::npos, problems[0]);
  BOOST_TEST(problems[0].find("t.toml:40:") == 0u, problems[0]);  // D's name
}

BOOST_AUTO_TEST_CASE(a_later_file_uses_an_earlier_files_extra_register) {
  pmc::EventCatalog c;
  c.load_string(kHeader, "base.toml", "t");
  c.load_string(R"(backend = "t"
[[event]]
name = "FE.X"
desc = "d"
code = 0xC6
umask = 0x01
extra = { ldlat = 0x11 }
)", "model.toml", "t");
  BOOST_TEST(encode(c, "FE.X").extra_msrs == std::vector<std::uint32_t>{0x3F6});
  // A later file may redeclare a register; its events then use the new MSRs.
  c.load_string("backend = \"t\"\n[extra.ldlat]\nmsrs = [0x3F7]\n", "again.toml", "t");
  BOOST_TEST(c.extra_reg("ldlat")->msrs == std::vector<std::uint32_t>{0x3F7});
  BOOST_TEST(c.extra_regs().size() == 2u);
}

BOOST_AUTO_TEST_CASE(refusals_name_file_line_and_column) {
  struct Case {
    const char* body;
    const char* message;
  };
  // kHeader is 20 lines: a body's first [[event]] is on line 21.
  const Case cases[] = {
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nextra = { nope = 1 }\n",
       "t.toml:25:11: unknown extra register 'nope' (declared: ldlat, offcore_rsp"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nextra = { ldlat = 1, offcore_rsp = 2 }\n",
       "t.toml:25:9: 'extra' must be a table of one entry"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nset = { nope = 1 }\n",
       "t.toml:25:9: 'set' names field 'nope', which is not in [format]"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nset = { eq = 2 }\n",
       "t.toml:25:14: 'set' value 0x2 does not fit the 1-bit field 'eq' at bits 36"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nset = { cmask = 2 }\n",
       "t.toml:25:9: 'set' writes field 'cmask', which modifier 'c' of event X sets (give it in 'defaults')"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\numask2 = 0x100\n",
       "t.toml:25:10: unit mask extension 0x100 does not fit the 8-bit field at bits 40-47"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nprecise = 4\n", "t.toml:25:11: 'precise' 4 is out of range 0-3"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nextra_msrs = [0x1A6]\n",
       "t.toml:25:14: 'extra_msrs' needs 'extra'"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nextra = { ldlat = 1 }\nextra_msrs = [0x1A6]\n",
       "t.toml:26:15: MSR 0x1A6 is not one of extra register 'ldlat' (0x3F6)"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncode2 = 0x100\n",
       "t.toml:25:9: second event code 0x100 does not fit the 8-bit field at bits 0-7"},
      {"[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nexclusive = 1\n", "t.toml:25:13: 'exclusive' must be"},
      {"[extra.bad]\nmsrs = []\n", "t.toml:22:8: 'msrs' must not be empty"},
      {"[extra.bad]\nmsrs = [0x3F6]\nwhat = 1\n", "t.toml:23:1: unknown key 'what' in [extra.bad]"},
      // A declaration without its MSRs (found by fuzz/fuzz_events_toml.cpp: it read the missing key).
      {"[extra.bad]\n\n", "t.toml:21:1: missing required key 'msrs'"},
  };
  for (const auto& c : cases) {
    const std::string m = load_error(c.body);
    BOOST_TEST(m.find(c.message) != std::string::npos, "got: " << m << "\nwanted: " << c.message);
  }
  // umask2 on a PMU without the field.
  pmc::EventCatalog c;
  try {
    c.load_string("backend = \"t\"\n[format]\nevent = \"0-7\"\n[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\numask2 = 1\n",
                  "n.toml", "t");
    BOOST_FAIL("umask2 without a [format] field loaded");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("n.toml:8:10: 'umask2' needs a field 'umask2' in [format]") != std::string::npos,
               e.what());
  }
}

BOOST_AUTO_TEST_CASE(the_parse_cache_keeps_every_new_field) {
  pmc_test::TempDir tmp;
  const fs::path file = tmp.path() / "t.toml";
  pmc_test::spit(file, std::string(kHeader) + kEvents);
  const char* old = std::getenv("PMC_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("PMC_CACHE_DIR", (tmp.path() / "cache").c_str(), 1);
  pmc::EventCatalog first, second;
  first.load(file, "t");
  second.load(file, "t");
  // Restored: its events wait in the cache file until asked for.
  const auto* state = pmc::detail::CatalogState::find(second);
  BOOST_REQUIRE(state);
  BOOST_TEST(state->pending.load());
  // A lookup before the events are decoded reads one event from the cache file ...
  BOOST_TEST(second.find("OCR.ONE_ONLY")->extra_msrs == std::vector<std::uint32_t>{0x1A7});
  // ... and the catalog decoded whole has every field.
  check_fields(second);
  BOOST_TEST(encode(second, "OCR.DEMAND_DATA_RD.ANY_RESPONSE").extra_msrs ==
             (std::vector<std::uint32_t>{0x1A6, 0x1A7}));
  // The other spellings of a name work on a restored catalog before it is decoded too.
  pmc::EventCatalog third;
  third.load(file, "t");
  BOOST_TEST(pmc::detail::CatalogState::find(third)->pending.load());
  const pmc::Encoding e = encode(third, "ocr:one_only:u");
  BOOST_TEST(e.name == "OCR.ONE_ONLY");
  BOOST_TEST(e.extra_msrs == std::vector<std::uint32_t>{0x1A7});
  BOOST_TEST(e.config == ((1ull << 16) | 0x01B7));
  if (old) setenv("PMC_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("PMC_CACHE_DIR");
}
