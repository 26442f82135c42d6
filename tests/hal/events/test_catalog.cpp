// The events TOML loader: what it accepts, and that every rejection names file:line:column.
#define BOOST_TEST_MODULE catalog
#include <boost/test/unit_test.hpp>

#include <pmc/sdk/backend.hpp>
#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

// A general counter of the given geometry (the other CounterInfo fields keep their defaults).
pmc::CounterInfo general_counter(unsigned index, unsigned width, std::uint32_t control, std::uint32_t counter) {
  pmc::CounterInfo c;
  c.kind = pmc::CounterKind::general;
  c.index = index;
  c.width = width;
  c.control_msr = control;
  c.counter_msr = counter;
  return c;
}

pmc::PmuInfo two_counters() {
  pmc::PmuInfo p;
  p.name = "t";
  p.counters = {general_counter(0, 40, 0, 0), general_counter(1, 40, 0, 0)};
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

// One name, several CPUs (docs/event-format.md): a file may define a name again when both
// definitions have `cpus` and the lists are disjoint; find() and for_cpu() pick the one for the
// tag. kHeader is 22 lines, so a body's first line is line 23.
BOOST_AUTO_TEST_CASE(one_name_on_disjoint_cpus_is_one_definition_per_cpu) {
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"([[event]]
name = "L2_LD"
code = 0x29
umasks = "MESI"
desc = "loads on a"
cpus = ["a"]
[[event]]
name = "l2_ld"
code = 0x29
desc = "loads on b"
cpus = ["b"]
umask = 0x20
generic = "cache-references"
)", "t.toml", "t");
  BOOST_REQUIRE(c.events().size() == 2u);
  const pmc::EventDef* on_a = c.find("L2_LD", "a");
  const pmc::EventDef* on_b = c.find("L2_LD", "b");
  BOOST_REQUIRE(on_a);
  BOOST_REQUIRE(on_b);
  BOOST_TEST(on_a->description == "loads on a");
  BOOST_TEST(on_b->description == "loads on b");
  BOOST_TEST(on_a->source.str() == "t.toml:24:8");  // body line 2
  BOOST_TEST(on_b->source.str() == "t.toml:30:8");  // body line 8
  BOOST_TEST(c.find("l2_ld", "b") == on_b);         // case-insensitive, per tag
  // Without a tag (a CPU the backend has no tag for): the first definition in file order.
  BOOST_TEST(c.find("L2_LD") == on_a);
  // for_cpu: one definition per tag; every definition without a tag.
  BOOST_TEST((c.for_cpu("a") == std::vector<const pmc::EventDef*>{on_a}));
  BOOST_TEST((c.for_cpu("b") == std::vector<const pmc::EventDef*>{on_b}));
  BOOST_TEST(c.for_cpu("").size() == 2u);
  BOOST_TEST(c.find_generic("cache-references", "a", nullptr) == nullptr);
  BOOST_TEST(c.find_generic("cache-references", "b", nullptr) == on_b);
  // The same code on disjoint CPUs is no defect.
  BOOST_TEST(c.validate(2).empty());
  // Encoded per CPU: on a, MESI default M|E|S|I = 0x0F -> 0x0F29; on b, the fixed umask 0x20
  // -> 0x2029; USR|OS = 0x30000 in both.
  pmc::PmuInfo pmu = two_counters();
  pmu.cpu_tag = "a";
  BOOST_TEST(pmc::encode_with_catalog(pmc::parse_event("L2_LD"), c, pmu).config == 0x30F29u);
  BOOST_TEST(pmc::encode_with_catalog(pmc::parse_event("L2_LD:M"), c, pmu).config == 0x30829u);
  pmu.cpu_tag = "b";
  BOOST_TEST(pmc::encode_with_catalog(pmc::parse_event("L2_LD"), c, pmu).config == 0x32029u);
  try {
    (void)pmc::encode_with_catalog(pmc::parse_event("L2_LD:M"), c, pmu);
    BOOST_ERROR("b's L2_LD took a's unit mask");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::unit_mask), e.what());
  }
}

BOOST_AUTO_TEST_CASE(one_name_on_overlapping_cpus_is_refused_naming_both_positions) {
  // Body: X at lines 23-27 (name on 24), X again at 28-32 (name on 29): the second definition's
  // name is at 29:8, the first's at 24:8. They share CPU b.
  pmc::errc kind{};
  std::string m = load_error(
      "[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = [\"a\", \"b\"]\n"
      "[[event]]\nname = \"x\"\ncode = 2\ndesc = \"e\"\ncpus = [\"b\"]\n",
      &kind);
  BOOST_TEST(m == "t.toml:29:8: event 'x' is already defined at t.toml:24:8 for CPU 'b' (definitions of one name "
                  "need disjoint, non-empty cpus lists)");
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::invalid_argument));
  // A definition without `cpus` applies to every CPU: it overlaps any other, in either order.
  // Lines: first name 24; the second [[event]] after 4 lines (no cpus) or 5 (with cpus).
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\n[[event]]\nname = \"X\"\ncode = 2\ndesc = \"e\"\n"
                 "cpus = [\"a\"]\n");
  BOOST_TEST(m == "t.toml:28:8: event 'X' is already defined at t.toml:24:8 (definitions of one name need "
                  "disjoint, non-empty cpus lists)");
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = [\"a\"]\n[[event]]\nname = \"X\"\ncode = 2\n"
                 "desc = \"e\"\n");
  BOOST_TEST(m == "t.toml:29:8: event 'X' is already defined at t.toml:24:8 (definitions of one name need "
                  "disjoint, non-empty cpus lists)");
  // An empty list is no list: every CPU.
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = []\n[[event]]\nname = \"X\"\ncode = 2\n"
                 "desc = \"e\"\ncpus = [\"a\"]\n");
  BOOST_TEST(m.rfind("t.toml:29:8: event 'X' is already defined at t.toml:24:8 (", 0) == 0, m);
  // A third definition is checked against every earlier one: X on a, X on b, X on b again
  // (names at 24, 29, 34) clashes with the second.
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = [\"a\"]\n"
                 "[[event]]\nname = \"X\"\ncode = 2\ndesc = \"e\"\ncpus = [\"b\"]\n"
                 "[[event]]\nname = \"X\"\ncode = 3\ndesc = \"f\"\ncpus = [\"b\"]\n");
  BOOST_TEST(m.rfind("t.toml:34:8: event 'X' is already defined at t.toml:29:8 for CPU 'b'", 0) == 0, m);
}

BOOST_AUTO_TEST_CASE(aliases_follow_the_same_cpu_rule) {
  // Two definitions on disjoint CPUs may share an alias, which then finds the one for the tag.
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"([[event]]
name = "X"
code = 1
desc = "d"
cpus = ["a"]
aliases = ["X_ALIAS"]
[[event]]
name = "X"
code = 2
desc = "e"
cpus = ["b"]
aliases = ["X_ALIAS"]
)", "t.toml", "t");
  BOOST_TEST(c.find("X_ALIAS", "a")->code == 1u);
  BOOST_TEST(c.find("X_ALIAS", "b")->code == 2u);
  // On a shared CPU an alias may not repeat another definition's name or alias. Y's alias is on
  // body line 10 (t.toml:32), column 12; X's name on 24:8.
  std::string m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\ncpus = [\"a\", \"b\"]\n"
                             "[[event]]\nname = \"Y\"\ncode = 2\ndesc = \"e\"\naliases = [\"X\"]\ncpus = [\"b\"]\n");
  BOOST_TEST(m == "t.toml:32:12: alias 'X' of event Y is already a name of event X at t.toml:24:8 for CPU 'b'");
  // ... nor may a name repeat another definition's alias on a shared CPU.
  m = load_error("[[event]]\nname = \"X\"\ncode = 1\ndesc = \"d\"\naliases = [\"Z\"]\n[[event]]\nname = \"Z\"\ncode = 2\n"
                 "desc = \"e\"\ncpus = [\"a\"]\n");
  BOOST_TEST(m == "t.toml:29:8: event 'Z' is already an alias of event X at t.toml:24:8");
}

BOOST_AUTO_TEST_CASE(later_files_replace_definitions_for_the_cpus_they_name) {
  // Built in: X on a (code 1) and on b (code 2); Y on every CPU (code 5).
  pmc::EventCatalog c;
  c.load_string(std::string(kHeader) + R"([[event]]
name = "X"
code = 1
desc = "X on a"
cpus = ["a"]
[[event]]
name = "X"
code = 2
desc = "X on b"
cpus = ["b"]
[[event]]
name = "Y"
code = 5
desc = "Y everywhere"
)", "builtin.toml", "t");
  // A later file's X on b replaces the built-in X on b only; its Y on a takes a from the
  // built-in Y, which keeps b (the declared tags a, b minus a).
  c.load_string("backend = \"t\"\n[[event]]\nname = \"X\"\ncode = 3\ndesc = \"mine on b\"\ncpus = [\"b\"]\n"
                "[[event]]\nname = \"Y\"\ncode = 6\ndesc = \"mine on a\"\ncpus = [\"a\"]\n",
                "user.toml", "t");
  BOOST_TEST(c.find("X", "a")->code == 1u);
  BOOST_TEST(c.find("X", "a")->source.file == "builtin.toml");
  BOOST_TEST(c.find("X", "b")->code == 3u);
  BOOST_TEST(c.find("X", "b")->source.file == "user.toml");
  BOOST_TEST(c.find("Y", "a")->code == 6u);
  BOOST_TEST(c.find("Y", "b")->code == 5u);
  BOOST_TEST((c.find("Y", "b")->cpus == std::vector<std::string>{"b"}));
  BOOST_TEST(c.for_cpu("a").size() == 2u);  // X (1), Y (6)
  BOOST_TEST(c.for_cpu("b").size() == 2u);  // X (3), Y (5)
  // The later definition takes the place of the first it touched: X (1), X (3), Y (5), Y (6).
  BOOST_REQUIRE(c.events().size() == 4u);
  BOOST_TEST(c.events()[1].code == 3u);
  BOOST_TEST(c.events()[3].code == 6u);
  // A definition without cpus replaces every definition of its name.
  c.load_string("backend = \"t\"\n[[event]]\nname = \"x\"\ncode = 4\ndesc = \"mine everywhere\"\n", "all.toml", "t");
  BOOST_TEST(c.find("X", "a")->code == 4u);
  BOOST_TEST(c.find("X", "b")->code == 4u);
  BOOST_TEST(std::count_if(c.events().begin(), c.events().end(), [](const pmc::EventDef& e) { return e.name == "x"; }) ==
             1);
  BOOST_TEST(c.events().size() == 3u);  // x (4), Y (5), Y (6)
  BOOST_TEST(c.events()[0].code == 4u);
  // A definition that covers every CPU of an earlier one drops it: Y on a and b.
  c.load_string("backend = \"t\"\n[[event]]\nname = \"Y\"\ncode = 7\ndesc = \"mine on a, b\"\ncpus = [\"a\", \"b\"]\n",
                "both.toml", "t");
  BOOST_TEST(c.events().size() == 2u);
  BOOST_TEST(c.find("Y", "a") == c.find("Y", "b"));
  BOOST_TEST(c.find("Y", "a")->code == 7u);
}

BOOST_AUTO_TEST_CASE(an_event_missing_on_this_cpu_names_every_cpu_it_exists_on) {
  // Two definitions of one name, for CPU a and for CPU b; the session's CPU is c.
  pmc::EventCatalog c;
  std::string header = kHeader;
  header.replace(header.find("b = \"CPU B\""), 11, "b = \"CPU B\"\nc = \"CPU C\"");
  c.load_string(header + R"([[event]]
name = "X"
code = 0x11
desc = "x on a"
cpus = ["a"]
[[event]]
name = "X"
code = 0x12
desc = "x on b"
cpus = ["b"]
)",
                "t.toml", "t");
  pmc::PmuInfo pmu = two_counters();
  pmu.cpu_tag = "c";
  try {
    (void)pmc::encode_with_catalog(pmc::parse_event("X"), c, pmu);
    BOOST_ERROR("X encoded on CPU c");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.code() == pmc::errc::not_found));
    BOOST_TEST(std::string(e.what()).find("does not exist on this CPU (c); it exists on: a, b") != std::string::npos,
               e.what());
  }
}
