// The events TOML loader: what it accepts, and that every rejection names file:line:column.
#define BOOST_TEST_MODULE catalog
#include <boost/test/unit_test.hpp>

#include <pmc/backend.hpp>
#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <string>

namespace {

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
[cpus]
a = "CPU A"
b = "CPU B"
[umask_groups.MESI]
combinable = true
default = ["M", "E", "S", "I"]
masks = [
  { name = "I", value = 0x01, desc = "invalid" },
  { name = "S", value = 0x02, desc = "shared" },
  { name = "E", value = 0x04, desc = "exclusive" },
  { name = "M", value = 0x08, desc = "modified" },
]
)";

// Loads header + body; returns the error message or "" when it loaded.
std::string load_error(const std::string& body, pmc::errc* kind = nullptr) {
  pmc::EventCatalog c;
  try {
    c.load_string(std::string(kHeader) + body, "t.toml", "t");
  } catch (const pmc::Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return {};
}

pmc::PmuInfo two_counters() {
  pmc::PmuInfo p;
  p.name = "t";
  p.counters = {{pmc::CounterKind::general, 0, 40, 0, 0}, {pmc::CounterKind::general, 1, 40, 0, 0}};
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(loads_events_masks_and_format) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"(
[[event]]
name = "L2_LD"
code = 0x29
umasks = "MESI"
desc = "loads"
generic = "cache-references"
[[event]]
name = "FLOPS"
code = 0xC1
counters = [0]
desc = "flops"
cpus = ["b"]
)", "t.toml", "t");
  BOOST_REQUIRE(c.events().size() == 2u);
  const auto* e = c.find("l2_ld");  // case-insensitive
  BOOST_REQUIRE(e);
  BOOST_TEST(e->unit_masks->masks.size() == 4u);
  BOOST_TEST(e->source.str() == "t.toml:25:8");
  BOOST_TEST(c.find("FLOPS", "a") == nullptr);
  BOOST_TEST(c.find("FLOPS", "b") != nullptr);
  BOOST_TEST(c.for_cpu("a").size() == 1u);
  std::vector<std::string> masks;
  BOOST_TEST(c.find_generic("cache-references", "a", &masks) == e);
  BOOST_TEST(masks.empty());
  auto enc = pmc::encode_with_catalog(pmc::parse_event("L2_LD:M:S:u"), c, two_counters());
  BOOST_TEST(enc.config == 0x10A29u);
  BOOST_TEST(enc.canonical == "t::L2_LD:S:M:u=1:k=0:e=0:i=0:c=0");
}

BOOST_AUTO_TEST_CASE(malformed_toml_names_line_and_column) {
  std::string m = load_error("[[event]]\nname = \"X\n");
  BOOST_TEST(m.rfind("t.toml:24:", 0) == 0, m);
}

BOOST_AUTO_TEST_CASE(unknown_key_names_line_and_column) {
  pmc::errc kind{};
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncolour = \"red\"\n", &kind);
  BOOST_TEST(m.rfind("t.toml:27:1: unknown key 'colour' in an event", 0) == 0, m);
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::attribute));
  pmc::EventCatalog c;
  try {
    c.load_string("backend = \"t\"\nbogus = 1\n", "u.toml", "t");
    BOOST_ERROR("an unknown top-level key was accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).rfind("u.toml:2:1: unknown key 'bogus' in an events file", 0) == 0, e.what());
  }
}

BOOST_AUTO_TEST_CASE(out_of_range_values_name_line_and_column) {
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = 300\ndesc = \"d\"\n");
  BOOST_TEST(m.rfind("t.toml:25:8: event code 0x12C does not fit the 8-bit field at bits 0-7", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = -1\ndesc = \"d\"\n");
  BOOST_TEST(m.rfind("t.toml:25:8: event code must not be negative", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\numask = 0x100\n");
  BOOST_TEST(m.rfind("t.toml:27:9: unit mask 0x100 does not fit", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncounters = [0, 99]\n");
  BOOST_TEST(m.rfind("t.toml:27:16: counter index 99", 0) == 0, m);
}

BOOST_AUTO_TEST_CASE(wrong_types_and_missing_keys) {
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = \"0xC0\"\ndesc = \"d\"\n");
  BOOST_TEST(m.rfind("t.toml:25:8: 'code' must be an integer, not a string", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\n");
  BOOST_TEST(m.find("missing required key 'desc'") != std::string::npos, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = [\"zz\"]\n");
  BOOST_TEST(m.rfind("t.toml:27:9: cpu tag 'zz' is not declared", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\numasks = \"NOPE\"\n");
  BOOST_TEST(m.find("unknown unit-mask group 'NOPE'") != std::string::npos, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\nmodifiers = [\"z\"]\n");
  BOOST_TEST(m.find("unknown modifier 'z'") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(unit_mask_group_rules) {
  std::string m = load_error(R"([umask_groups.BAD]
combinable = true
masks = [ { name = "A", value = 3, desc = "a" }, { name = "B", value = 1, desc = "b" } ]
)");
  BOOST_TEST(m.find("share bits 0x1") != std::string::npos, m);
  m = load_error(R"([umask_groups.BAD]
masks = [ { name = "A", value = 3, desc = "a" } ]
default = ["Z"]
)");
  BOOST_TEST(m.find("default unit mask 'Z'") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(duplicate_event_in_one_file_is_an_error) {
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\n[[event]]\nname = \"x\"\ncode = 2\ndesc = \"e\"\n");
  BOOST_TEST(m.find("already defined at t.toml:24:8") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(later_file_overrides_and_adds) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + "[[event]]\nname = \"X\"\ncode = 1\ndesc = \"built-in\"\n", "builtin.toml", "t");
  c.load_string("backend = \"t\"\n[[event]]\nname = \"X\"\ncode = 2\ndesc = \"mine\"\n[[event]]\nname = \"Y\"\ncode = 3\ndesc = \"new\"\n",
                "user.toml", "t");
  c.load_string("backend = \"other\"\n[[event]]\nname = \"Z\"\ncode = 3\ndesc = \"elsewhere\"\n", "other.toml", "t");
  BOOST_REQUIRE(c.find("X"));
  BOOST_TEST(c.find("X")->code == 2u);
  BOOST_TEST(c.find("X")->source.file == "user.toml");
  BOOST_TEST(c.find("Y")->source.file == "user.toml");
  BOOST_TEST(c.find("Z") == nullptr);  // a file for another backend is skipped
  BOOST_TEST(c.files().size() == 2u);
}

BOOST_AUTO_TEST_CASE(validate_reports_table_defects) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"(
[[event]]
name = "A"
code = 0x10
desc = "a"
counters = [3]
[[event]]
name = "B"
code = 0x10
desc = "b"
)", "t.toml", "t");
  auto problems = c.validate(2);
  BOOST_REQUIRE(problems.size() == 2u);
  BOOST_TEST(problems[0].find("names counter 3 but the PMU has 2") != std::string::npos, problems[0]);
  BOOST_TEST(problems[1].find("share code 0x10") != std::string::npos, problems[1]);
}

BOOST_AUTO_TEST_CASE(aliases_select_the_event_and_names_win_over_aliases) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"(
[[event]]
name = "INSTRUCTION_RETIRED"
code = 0xC0
desc = "instructions"
aliases = ["INST_RETIRED.ANY", "INSTRUCTIONS_RETIRED"]
[[event]]
name = "ONLY_B"
code = 0x3C
desc = "b"
cpus = ["b"]
aliases = ["B_ALIAS"]
)", "t.toml", "t");
  BOOST_REQUIRE(c.find("inst_retired.any"));
  BOOST_TEST(c.find("inst_retired.any")->name == "INSTRUCTION_RETIRED");
  BOOST_TEST(c.find("INSTRUCTIONS_RETIRED", "a")->name == "INSTRUCTION_RETIRED");
  BOOST_TEST(c.find("B_ALIAS", "a") == nullptr);  // aliases follow the event's CPU tags
  BOOST_TEST(c.find("B_ALIAS", "b")->name == "ONLY_B");
  // Encodings use the name: the canonical string says INSTRUCTION_RETIRED.
  pmc::Encoding e = pmc::encode_with_catalog(pmc::parse_event("INST_RETIRED.ANY:u"), c, two_counters());
  BOOST_TEST(e.config == 0x100C0u);
  BOOST_TEST(e.canonical == "t::INSTRUCTION_RETIRED:u=1:k=0:e=0:i=0:c=0");
  // A later file's event *named* like an alias is found by that name.
  c.load_string("backend = \"t\"\n[[event]]\nname = \"INST_RETIRED.ANY\"\ncode = 0xC1\ndesc = \"mine\"\n", "user.toml", "t");
  BOOST_TEST(c.find("INST_RETIRED.ANY")->code == 0xC1u);
  BOOST_TEST(c.find("INSTRUCTIONS_RETIRED")->code == 0xC0u);
}

BOOST_AUTO_TEST_CASE(alias_errors_name_line_and_column) {
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\naliases = [\"A-B\"]\n");
  BOOST_TEST(m.rfind("t.toml:27:12: alias 'A-B' may hold only letters, digits, '_' and '.'", 0) == 0, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\naliases = [\"x\"]\n");
  BOOST_TEST(m.find("alias 'x' repeats a name of event X") != std::string::npos, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\n[[event]]\nname = \"Y\"\ncode = 2\ndesc = \"e\"\n"
                 "aliases = [\"x\"]\n");
  BOOST_TEST(m.find("alias 'x' of event Y is already a name of event X at t.toml:24:8") != std::string::npos, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\naliases = [\"Z\"]\n[[event]]\nname = \"z\"\ncode = 2\n"
                 "desc = \"e\"\n");
  BOOST_TEST(m.find("event 'z' is already an alias of event X") != std::string::npos, m);
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\naliases = \"Z\"\n");
  BOOST_TEST(m.find("'aliases' must be an array") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(perf_synonyms_and_case_find_generic_events) {
  // perf list: "cpu-cycles OR cycles", "branch-instructions OR branches",
  // "stalled-cycles-frontend OR idle-cycles-frontend"; an events file names one spelling.
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"(
[[event]]
name = "CLK"
code = 0x79
desc = "cycles"
generic = "cycles"
[[event]]
name = "BR"
code = 0xC4
desc = "branches"
generic = "branches"
[[event]]
name = "FE_STALL"
code = 0x10
desc = "front-end stalls"
generic = "stalled-cycles-frontend"
)",
                "syn.toml", "t");
  const pmc::EventDef* clk = c.find("CLK");
  BOOST_TEST_REQUIRE(clk != nullptr);
  BOOST_TEST(c.find_generic("cycles", {}, nullptr) == clk);
  BOOST_TEST(c.find_generic("cpu-cycles", {}, nullptr) == clk);
  BOOST_TEST(c.find_generic("CPU-Cycles", {}, nullptr) == clk);
  BOOST_TEST(c.find_generic("branch-instructions", {}, nullptr) == c.find("BR"));
  BOOST_TEST(c.find_generic("idle-cycles-frontend", {}, nullptr) == c.find("FE_STALL"));
  BOOST_TEST(c.find_generic("bus-cycles", {}, nullptr) == nullptr);  // not in this file
}
