// perf's event syntax in the parser (docs/event-format.md, "Raw events and perf's PMU syntax"):
// PMU/term=value,.../modifiers, the modifier letters combined as perf writes them (uk, ppp), a
// group's modifiers applied to each member, commas inside a PMU's terms, and the conflicts
// refused with one message. The encodings of these strings are checked per backend
// (tests/backends/*/test_*_perf_syntax.cpp).
#define BOOST_TEST_MODULE perf_syntax
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/event_list.hpp>

#include <string>
#include <vector>

namespace {

std::string parse_error(const std::string& text) {
  try {
    (void)pmc::parse_event(text);
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::parse));
    return e.what();
  }
  BOOST_ERROR("'" << text << "' parsed but should not");
  return {};
}

std::string list_error(const std::string& text) {
  try {
    (void)pmc::parse_event_list(text);
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::parse));
    return e.what();
  }
  BOOST_ERROR("'" << text << "' parsed but should not");
  return {};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> names(const pmc::EventSpec& s) {
  std::vector<std::string> out;
  for (const auto& m : s.modifiers) out.push_back(m.name);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(pmu_terms_in_order_with_their_columns) {
  const pmc::EventSpec s = pmc::parse_event("cpu/event=0xc0,umask=0x1,cmask=2,inv=1,edge=1/u");
  BOOST_TEST(s.perf_terms());
  BOOST_TEST(s.pmu == "cpu");
  BOOST_TEST(s.name == "cpu/event=0xc0,umask=0x1,cmask=2,inv=1,edge=1/");
  BOOST_REQUIRE(s.terms.size() == 5u);
  BOOST_TEST(s.terms[0].name == "event");
  BOOST_TEST(*s.terms[0].value == 0xC0u);
  BOOST_TEST(s.terms[0].column == 5u);
  BOOST_TEST(s.terms[1].name == "umask");
  BOOST_TEST(*s.terms[1].value == 1u);
  BOOST_TEST(s.terms[2].name == "cmask");
  BOOST_TEST(*s.terms[2].value == 2u);  // decimal, as perf reads it
  BOOST_TEST(s.terms[4].name == "edge");
  BOOST_TEST(s.terms[4].column == 40u);
  BOOST_TEST(names(s) == (std::vector<std::string>{"u"}), boost::test_tools::per_element());
  BOOST_TEST(s.modifiers[0].column == 47u);
  BOOST_TEST(s.unit_masks.empty());
}

BOOST_AUTO_TEST_CASE(a_term_without_value_is_one_and_period_is_the_modifier) {
  const pmc::EventSpec s = pmc::parse_event("cpu_core/event=0x3c,edge,period=100000/ukppp");
  BOOST_TEST(s.pmu == "cpu_core");
  BOOST_REQUIRE(s.terms.size() == 2u);
  BOOST_TEST(!s.terms[1].value.has_value());  // perf's "edge" is edge=1: the backend reads it so
  BOOST_TEST(names(s) == (std::vector<std::string>{"period", "u", "k", "ppp"}), boost::test_tools::per_element());
  BOOST_TEST(*s.modifier("period")->value == 100000u);
}

BOOST_AUTO_TEST_CASE(combined_letters_split_as_perf_reads_them) {
  BOOST_TEST(names(pmc::parse_event("instructions:uk")) == (std::vector<std::string>{"u", "k"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(pmc::parse_event("instructions:ku")) == (std::vector<std::string>{"u", "k"}),
             boost::test_tools::per_element());
  const pmc::EventSpec ppp = pmc::parse_event("cycles:ppp");
  BOOST_TEST(names(ppp) == (std::vector<std::string>{"ppp"}), boost::test_tools::per_element());
  BOOST_TEST(ppp.unit_masks.empty());
  const pmc::EventSpec mixed = pmc::parse_event("cycles:upp:period=1000");
  BOOST_TEST(names(mixed) == (std::vector<std::string>{"u", "pp", "period"}), boost::test_tools::per_element());
  BOOST_TEST(mixed.modifier("pp")->column == 9u);  // the first p
  // A letter repeated in one word counts once (perf accepts "uu").
  BOOST_TEST(names(pmc::parse_event("cycles:uu")) == (std::vector<std::string>{"u"}), boost::test_tools::per_element());
  // A word with another character is still a unit mask: "UK" in upper case, "ukx".
  BOOST_TEST(pmc::parse_event("X:UK").unit_masks == (std::vector<std::string>{"UK"}), boost::test_tools::per_element());
  BOOST_TEST(pmc::parse_event("X:ukx").unit_masks == (std::vector<std::string>{"ukx"}), boost::test_tools::per_element());
  BOOST_TEST(pmc::parse_event("rC0:uk").name == "rC0");
}

BOOST_AUTO_TEST_CASE(conflicting_modifiers_refused_with_one_message) {
  const std::string two = parse_error("cycles:p:pp");
  BOOST_TEST(has(two, "column 10: precision ':pp' conflicts with ':p' at column 8: give one of p, pp, ppp"), two);
  const std::string four = parse_error("cycles:pppp");
  BOOST_TEST(has(four, "at most 3"), four);
  const std::string letter = parse_error("cpu/event=0x3c/uh");
  BOOST_TEST(has(letter, "column 17: unknown modifier 'h'"), letter);
  const std::string twice = parse_error("cpu/event=0x3c,event=0xc0/");
  BOOST_TEST(has(twice, "column 16: term 'event' given twice (first at column 5)"), twice);
}

BOOST_AUTO_TEST_CASE(malformed_pmu_forms_pointed_at) {
  BOOST_TEST(has(parse_error("/event=1/"), "column 1: missing PMU name before '/'"));
  BOOST_TEST(has(parse_error("cpu/event=1"), "column 4: a '/' without its closing '/'"));
  BOOST_TEST(has(parse_error("cpu//"), "column 5: no terms between the '/'s"));
  BOOST_TEST(has(parse_error("cpu/event=1,,umask=2/"), "column 13: empty term"));
  BOOST_TEST(has(parse_error("cpu/event=zz/"), "value 'zz' of term 'event' is not a number"));
  BOOST_TEST(has(parse_error("cpu/period=10/"), "no event terms"));
  BOOST_TEST(has(parse_error("cpu/event=1/u/"), "unknown modifier '/'"));
  BOOST_TEST(has(parse_error("cp u/event=1/"), "unexpected character ' ' in PMU name"));
}

BOOST_AUTO_TEST_CASE(commas_inside_a_pmus_terms_belong_to_the_event) {
  const auto groups = pmc::parse_event_list("cpu/event=0x3c,umask=0x0/,instructions,{cpu/event=0xc0,umask=0/u,cycles}");
  BOOST_REQUIRE(groups.size() == 3u);
  BOOST_TEST(groups[0].events == (std::vector<std::string>{"cpu/event=0x3c,umask=0x0/"}), boost::test_tools::per_element());
  BOOST_TEST(groups[1].events == (std::vector<std::string>{"instructions"}), boost::test_tools::per_element());
  BOOST_TEST(groups[2].braces);
  BOOST_TEST(groups[2].events == (std::vector<std::string>{"cpu/event=0xc0,umask=0/u", "cycles"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(group_modifiers_apply_to_every_member) {
  const auto g = pmc::parse_event_list("{cycles,instructions}:u,branches");
  BOOST_REQUIRE(g.size() == 2u);
  BOOST_TEST(g[0].events == (std::vector<std::string>{"cycles:u", "instructions:u"}), boost::test_tools::per_element());
  BOOST_TEST(g[1].events == (std::vector<std::string>{"branches"}), boost::test_tools::per_element());
  // A member keeps what it has; the PMU form takes the letters after its '/'.
  const auto m = pmc::parse_event_list("{cycles:k,instructions:u,cpu/event=0xc4/,cpu/event=0xc5/k}:uk");
  BOOST_TEST(m[0].events ==
                 (std::vector<std::string>{"cycles:k:u", "instructions:u:k", "cpu/event=0xc4/uk", "cpu/event=0xc5/ku"}),
             boost::test_tools::per_element());
  const auto p = pmc::parse_event_list("{cycles:period=1000,instructions:period=1000}:pp");
  BOOST_TEST(p[0].events == (std::vector<std::string>{"cycles:period=1000:pp", "instructions:period=1000:pp"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(group_modifier_conflicts_refused) {
  const std::string zero = list_error("{cycles:u=0,instructions}:u");
  BOOST_TEST(has(zero, "the group's ':u' conflicts with u=0 in its member 'cycles:u=0'"), zero);
  const std::string prec = list_error("{cycles:p,instructions}:pp");
  BOOST_TEST(has(prec, "the group's ':pp' conflicts with ':p' in its member 'cycles:p'"), prec);
  const std::string other = list_error("{cycles,instructions}:h");
  BOOST_TEST(has(other, "group modifier ':h'"), other);
  const std::string after = list_error("{cycles,instructions}x");
  BOOST_TEST(has(after, "followed by ',' or nothing"), after);
}
