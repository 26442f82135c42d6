// Event strings in the libpfm4 syntax: what is accepted, and where a bad one is pointed at.
#define BOOST_TEST_MODULE event_spec
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/event.hpp>

#include <string>

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
}  // namespace

BOOST_AUTO_TEST_CASE(plain_name) {
  auto s = pmc::parse_event("INST_RETIRED");
  BOOST_TEST(s.name == "INST_RETIRED");
  BOOST_TEST(s.pmu.empty());
  BOOST_TEST(s.unit_masks.empty());
  BOOST_TEST(s.modifiers.empty());
}

BOOST_AUTO_TEST_CASE(pmu_prefix_unit_masks_and_modifiers) {
  auto s = pmc::parse_event("p6::L2_LD:M:E:u:c=2:i=1");
  BOOST_TEST(s.pmu == "p6");
  BOOST_TEST(s.name == "L2_LD");
  BOOST_TEST(s.unit_masks == (std::vector<std::string>{"M", "E"}), boost::test_tools::per_element());
  BOOST_TEST(s.unit_mask_columns == (std::vector<std::size_t>{11, 13}), boost::test_tools::per_element());
  BOOST_REQUIRE(s.modifiers.size() == 3u);
  BOOST_TEST(s.modifiers[0].name == "u");
  BOOST_TEST(!s.modifiers[0].value.has_value());  // bare flag
  BOOST_TEST(s.modifiers[1].name == "c");
  BOOST_TEST(*s.modifiers[1].value == 2u);
  BOOST_TEST(s.modifiers[1].column == 17u);
  BOOST_TEST(*s.modifier("i")->value == 1u);
}

BOOST_AUTO_TEST_CASE(hex_values_and_generic_names) {
  BOOST_TEST(*pmc::parse_event("X:c=0x1F").modifier("c")->value == 31u);
  BOOST_TEST(pmc::parse_event("branch-misses").name == "branch-misses");
}

BOOST_AUTO_TEST_CASE(upper_case_I_is_a_unit_mask_lower_case_i_the_invert_flag) {
  auto s = pmc::parse_event("L2_LD:I:i");
  BOOST_TEST(s.unit_masks == (std::vector<std::string>{"I"}), boost::test_tools::per_element());
  BOOST_TEST(s.modifier("i") != nullptr);
}

BOOST_AUTO_TEST_CASE(errors_point_at_the_offending_column) {
  BOOST_TEST(parse_error("") .find("empty event name") != std::string::npos);
  BOOST_TEST(parse_error("INST_RETIRED:") .find("column 14") != std::string::npos);
  BOOST_TEST(parse_error("INST_RETIRED:u::k").find("column 16") != std::string::npos);
  std::string m = parse_error("INST_RETIRED:c=");
  BOOST_TEST(m.find("column 16") != std::string::npos, m);
  BOOST_TEST(m.find("needs a value") != std::string::npos, m);
  m = parse_error("INST_RETIRED:c=12x");
  BOOST_TEST(m.find("'12x'") != std::string::npos, m);
  BOOST_TEST(m.find("not a number") != std::string::npos, m);
  m = parse_error("INST RETIRED");
  BOOST_TEST(m.find("column 5") != std::string::npos, m);
  BOOST_TEST(m.find("INST RETIRED") != std::string::npos, m);  // quotes the whole string
  BOOST_TEST(parse_error("::INST").find("missing PMU name") != std::string::npos);
  BOOST_TEST(parse_error("X:c=99999999999999999999999").find("too large") != std::string::npos);
  BOOST_TEST(parse_error("X:=3").find("missing modifier name") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bit_ranges) {
  auto f = pmc::parse_bit_range("24-31");
  BOOST_TEST(f.low() == 24u);
  BOOST_TEST(f.width() == 8u);
  BOOST_TEST(f.mask() == 0xFF000000ull);
  BOOST_TEST(pmc::parse_bit_range("22").mask() == (1ull << 22));
  BOOST_TEST(pmc::parse_bit_range("0-63").mask() == ~0ull);
  BOOST_CHECK_THROW(pmc::parse_bit_range("31-24"), pmc::Error);
  BOOST_CHECK_THROW(pmc::parse_bit_range("64"), pmc::Error);
  BOOST_CHECK_THROW(pmc::parse_bit_range("a-b"), pmc::Error);
  // A field in two ranges, the value's low bits in the first: "0-7,32-35" is 12 bits.
  auto split = pmc::parse_bit_range("0-7,32-35");
  BOOST_TEST(split.count == 2u);
  BOOST_TEST(split.low() == 0u);
  BOOST_TEST(split.width() == 12u);
  BOOST_TEST(split.mask() == 0xF000000FFull);
  BOOST_TEST(split.max_value() == 0xFFFu);
  BOOST_TEST(split.place(0xABC) == 0xA000000BCull);
  BOOST_TEST(split.extract(0xA000000BCull | (1ull << 20)) == 0xABCu);
  BOOST_TEST(split.str() == "0-7,32-35");
  BOOST_TEST(pmc::parse_bit_range("22").str() == "22");
  BOOST_CHECK_THROW(pmc::parse_bit_range("0-7,4-9"), pmc::Error);  // overlapping ranges
}

BOOST_AUTO_TEST_CASE(register_format_packs_and_range_checks) {
  pmc::RegisterFormat f;
  f.add("event", pmc::parse_bit_range("0-7"));
  f.add("cmask", pmc::parse_bit_range("24-31"));
  std::uint64_t reg = 0;
  f.set(reg, "event", 0xC0);
  f.set(reg, "cmask", 2);
  BOOST_TEST(reg == 0x020000C0ull);
  BOOST_TEST(f.get(reg, "cmask") == 2u);
  try {
    f.set(reg, "cmask", 300);
    BOOST_ERROR("300 fit an 8-bit field");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("does not fit field 24-31") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(f.set(reg, "umask", 1), pmc::Error);
}
