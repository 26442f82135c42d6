#define BOOST_TEST_MODULE workload
#include <boost/test/unit_test.hpp>

// The Activity workload TOML format (docs/workload-format.md). Expected positions are counted by
// hand in the inputs (line:column, both from 1; a value's column is its first character).

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using pmc::errc;
using pmc::Mode;
using pmc::Workload;
using u64 = std::uint64_t;

const std::filesystem::path kData = std::filesystem::path(PMC_TEST_DATA) / "workloads";
const std::filesystem::path kExamples =
    std::filesystem::path(PMC_SOURCE_DIR) / "examples" / "workloads";

struct Failure {
  errc code = errc::ok;
  std::string what;
};

template <class F>
Failure failure(F&& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return {e.kind(), e.what()};
  }
  return {};
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(good_file_reads_every_key) {
  const Workload w = pmc::load_workload(kData / "good.toml");
  BOOST_TEST(w.name == "every-key");
  BOOST_TEST(w.description == "exercises every key of the format");
  BOOST_TEST(w.source == (kData / "good.toml").string());
  // 1 + 1 (repeat 4 stored as one 2000-cycle segment) + 1 + 3 (repeat 3 with a PC range).
  BOOST_TEST_REQUIRE(w.size() == 6u);

  const auto& a = w.segment(0);
  BOOST_TEST(a.cycles == 1000u);
  BOOST_TEST((a.mode == Mode::user));
  BOOST_TEST(!a.halted);
  BOOST_TEST(a.signals.size() == 2u);
  BOOST_TEST(a.per_cycle("instructions") == 2u);
  BOOST_TEST(a.per_cycle("l2_ld.m") == 1u);
  BOOST_TEST(a.per_cycle("cycles") == 1u);
  BOOST_TEST(a.per_cycle("branches") == 0u);
  BOOST_TEST(a.per_cycle("ipl") == 0u);
  BOOST_TEST(a.pc_begin == 0u);
  BOOST_TEST(a.pc_end == 0u);

  const auto& b = w.segment(1);
  BOOST_TEST(b.cycles == 2000u);
  BOOST_TEST((b.mode == Mode::kernel));
  BOOST_TEST(b.per_cycle("branches") == 1u);

  const auto& c = w.segment(2);
  BOOST_TEST(c.cycles == 250u);
  BOOST_TEST(c.halted);
  BOOST_TEST((c.mode == Mode::user));
  BOOST_TEST(c.per_cycle("cycles") == 0u);  // halted: no unhalted cycles
  BOOST_TEST(c.signals.empty());

  for (std::size_t i = 3; i < 6; ++i) {
    const auto& d = w.segment(i);
    BOOST_TEST(d.cycles == 100u);
    BOOST_TEST(d.per_cycle("ipl") == 7u);  // a level signal (the Alpha model's), kept as given
    BOOST_TEST(d.pc_begin == 0x120000000u);
    BOOST_TEST(d.pc_end == 0x120001000u);
    BOOST_TEST(d.per_cycle("instructions") == 1u);
  }

  BOOST_TEST(w.total_cycles() == 1000u + 2000u + 250u + 300u);
  BOOST_TEST(w.total("cycles") == 3550u - 250u);
  BOOST_TEST(w.total("instructions") == 2000u + 2000u + 300u);
  BOOST_TEST(w.total("branches") == 2000u);
  BOOST_TEST(w.total("l2_ld.m") == 1000u);
  BOOST_TEST(w.total("no-such-signal") == 0u);
}

BOOST_AUTO_TEST_CASE(name_defaults_to_the_file_stem) {
  const Workload w = pmc::load_workload(kData / "unnamed-loop.toml");
  BOOST_TEST(w.name == "unnamed-loop");
  BOOST_TEST(w.description.empty());
  BOOST_TEST(w.total("instructions") == 10u);
  const Workload s = pmc::parse_workload("[[segment]]\ncycles = 1\n", "dir/inline.toml");
  BOOST_TEST(s.name == "inline");
  BOOST_TEST(s.source == "dir/inline.toml");
  BOOST_TEST((s.segment(0).mode == Mode::user));
}

BOOST_AUTO_TEST_CASE(repeat_multiplies_exactly) {
  const Workload w = pmc::parse_workload(
      "[[segment]]\ncycles = 10\nrepeat = 3\nsignals = { instructions = 2 }\n"
      "[[segment]]\ncycles = 1_000_000_000_000\nrepeat = 1_000_000\n",
      "repeat.toml");
  BOOST_TEST_REQUIRE(w.size() == 2u);
  BOOST_TEST(w.segment(0).cycles == 30u);
  BOOST_TEST(w.total("instructions") == 60u);
  BOOST_TEST(w.segment(1).cycles == 1'000'000'000'000'000'000u);  // 10^18, no expansion
  BOOST_TEST(w.total_cycles() == 1'000'000'000'000'000'030u);
}

// TOML reads an unquoted dotted key (l2_ld.m = 1) as nested tables; it names the same signal as
// the quoted key "l2_ld.m".
BOOST_AUTO_TEST_CASE(dotted_signal_keys_need_no_quotes) {
  const Workload w = pmc::parse_workload(
      "[[segment]]\ncycles = 5\n[segment.signals]\nl2_ld.m = 1\nbus_tran_brd.self = 2\n"
      "\"l2_ld.e\" = 3\ninstructions = 4\n",
      "dotted.toml");
  const auto signals = w.segment(0).signals;  // a view into w
  BOOST_TEST(signals.size() == 4u);
  BOOST_TEST(w.segment(0).per_cycle("l2_ld.m") == 1u);
  BOOST_TEST(w.segment(0).per_cycle("bus_tran_brd.self") == 2u);
  BOOST_TEST(w.segment(0).per_cycle("l2_ld.e") == 3u);
  BOOST_TEST(w.segment(0).per_cycle("instructions") == 4u);
}

BOOST_AUTO_TEST_CASE(totals_refuse_64_bit_overflow) {
  Workload w;
  w.name = "big";
  pmc::OwnedSegment s(1ULL << 62);
  s.signal("instructions", 4);
  w.add(s);
  BOOST_TEST(w.total_cycles() == (1ULL << 62));
  const Failure f = failure([&] { (void)w.total("instructions"); });
  BOOST_TEST((f.code == errc::invalid_argument));
  BOOST_TEST(contains(f.what, "'instructions'"));
}

// Each bad file: the error kind and exact file:line:column.
BOOST_AUTO_TEST_CASE(bad_files_name_file_line_and_column) {
  struct Case {
    const char* file;
    errc code;
    const char* at;
    const char* says;
  };
  const Case cases[] = {
      {"bad-unknown-key.toml", errc::attribute, ":4:1: ", "unknown key 'cylces' in [[segment]]"},
      {"bad-mode.toml", errc::invalid_argument, ":3:8: ", "unknown mode 'supervisor'"},
      {"bad-signal-cycles.toml", errc::invalid_argument, ":5:1: ", "'cycles' is implicit"},
      {"bad-repeat-overflow.toml", errc::invalid_argument, ":3:10: ", "overflows 64 bits"},
      {"bad-syntax.toml", errc::parse, ":2:10: ", ""},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.file) {
      const std::string path = (kData / c.file).string();
      const Failure f = failure([&] { (void)pmc::load_workload(kData / c.file); });
      BOOST_TEST((f.code == c.code));
      BOOST_TEST(starts_with(f.what, path + c.at), f.what);
      BOOST_TEST(contains(f.what, c.says), f.what);
    }
  }
  const Failure missing =
      failure([] { (void)pmc::load_workload(kData / "no-such-file.toml"); });
  BOOST_TEST((missing.code == errc::io));
  BOOST_TEST(contains(missing.what, "no-such-file.toml"));
}

// Each kind of error in a string, with its position.
BOOST_AUTO_TEST_CASE(bad_inputs_name_line_and_column) {
  struct Case {
    int line;  // of this table, for the report
    const char* toml;
    errc code;
    const char* at;
    const char* says;
  };
  const Case cases[] = {
      {__LINE__, "nmae = \"x\"\n[[segment]]\ncycles = 5\n", errc::attribute, "1:1",
       "unknown key 'nmae' in the workload (expected one of: name, description, segment)"},
      {__LINE__, "name = 3\n[[segment]]\ncycles = 1\n", errc::invalid_argument, "1:8",
       "'name' must be a string, not an integer"},
      {__LINE__, "[[segment]]\ncycles = \"10\"\n", errc::invalid_argument, "2:10",
       "'cycles' must be an integer, not a string"},
      {__LINE__, "[[segment]]\ncycles = -5\n", errc::invalid_argument, "2:10",
       "'cycles' must be > 0"},
      {__LINE__, "[[segment]]\ncycles = 0\n", errc::invalid_argument, "2:10",
       "'cycles' must be > 0"},
      {__LINE__, "name = \"x\"\n\n[[segment]]\nmode = \"user\"\n", errc::invalid_argument, "3:1",
       "missing required key 'cycles'"},
      {__LINE__, "[[segment]]\ncycles = 5\nmode = \"User\"\n", errc::invalid_argument, "3:8",
       "unknown mode 'User'"},
      {__LINE__, "[[segment]]\ncycles = 5\nhalted = \"yes\"\n", errc::invalid_argument, "3:10",
       "'halted' must be true or false"},
      {__LINE__, "[[segment]]\ncycles = 5\nsignals = 3\n", errc::invalid_argument, "3:11",
       "'signals' must be a table"},
      {__LINE__, "[[segment]]\ncycles = 5\nsignals = { instructions = -1 }\n",
       errc::invalid_argument, "3:28", "signal 'instructions' must be >= 0"},
      {__LINE__, "[[segment]]\ncycles = 5\n[segment.signals]\n\"l2_ld.m\" = 1.5\n",
       errc::invalid_argument, "4:13", "signal 'l2_ld.m' must be an integer"},
      {__LINE__, "[[segment]]\ncycles = 5\n[segment.signals]\n\"\" = 1\n", errc::invalid_argument,
       "4:1", "empty signal name"},
      {__LINE__, "[[segment]]\ncycles = 5\n[segment.signals]\nl2_ld.m = \"x\"\n",
       errc::invalid_argument, "4:11", "signal 'l2_ld.m' must be an integer"},
      {__LINE__, "[[segment]]\ncycles = 5\n[segment.signals]\nl2_ld.m = 1\n\"l2_ld.m\" = 2\n",
       errc::invalid_argument, "5:1", "signal 'l2_ld.m' is given twice"},
      {__LINE__, "[[segment]]\ncycles = 5\nsignals = { cycles = 1 }\n", errc::invalid_argument,
       "3:13", "'cycles' is implicit"},
      {__LINE__, "[[segment]]\ncycles = 5\nrepeat = 0\n", errc::invalid_argument, "3:10",
       "'repeat' must be >= 1"},
      // The Alpha 21064's IPL is a signal of its model, no longer a key of every segment.
      {__LINE__, "[[segment]]\ncycles = 5\nipl = 3\n", errc::attribute, "3:1",
       "unknown key 'ipl' in [[segment]]"},
      {__LINE__, "[[segment]]\ncycles = 5\npc = [1, 2, 3]\n", errc::invalid_argument, "3:6",
       "'pc' must be [begin, end]"},
      {__LINE__, "[[segment]]\ncycles = 5\npc = [0x2000, 0x1000]\n", errc::invalid_argument, "3:6",
       "0 <= begin < end"},
      {__LINE__, "[[segment]]\ncycles = 5\npc = [1.5, 2]\n", errc::invalid_argument, "3:7",
       "'pc' begin must be an integer >= 0 or a string holding a number, not a float"},
      {__LINE__, "[[segment]]\ncycles = 5\npc = [0, 16]\nrepeat = 100_000\n",
       errc::invalid_argument, "4:10", "raise 'cycles' instead"},
      {__LINE__, "name = \"x\"\n[segment]\ncycles = 5\n", errc::invalid_argument, "2:1",
       "write each one as [[segment]]"},
      {__LINE__, "segment = [{ cycles = 5 }, 3]\n", errc::invalid_argument, "1:11",
       "'segment' must be an array of tables"},
      {__LINE__, "name = \"x\"\nsegment = []\n", errc::invalid_argument, "2:11", "no [[segment]]"},
      {__LINE__, "name = \"nothing\"\n", errc::invalid_argument, "1:1", "no [[segment]]"},
      {__LINE__, "[[segment]]\ncycles = 4611686018427387904\nsignals = { uops = 4 }\n",
       errc::invalid_argument, "1:1", "total of signal 'uops' exceeds 2^64 - 1"},
      {__LINE__,
       "[[segment]]\ncycles = 4611686018427387904\nsignals = { uops = 2 }\n"
       "[[segment]]\ncycles = 4611686018427387904\nsignals = { uops = 2 }\n",
       errc::invalid_argument, "1:1", "total of signal 'uops' exceeds 2^64 - 1"},
      {__LINE__,
       "[[segment]]\ncycles = 9223372036854775807\n[[segment]]\ncycles = 9223372036854775807\n"
       "[[segment]]\ncycles = 2\n",
       errc::invalid_argument, "1:1", "total cycles exceed 2^64 - 1"},
      {__LINE__, "[[segment]]\ncycles = 5\nrepeat = 2\nrepeat = 3\n", errc::parse, "4:10",
       "repeat"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("case at line " << c.line) {
      const Failure f = failure([&] { (void)pmc::parse_workload(c.toml, "inline.toml"); });
      BOOST_TEST((f.code == c.code), "code " << static_cast<int>(f.code) << ": " << f.what);
      BOOST_TEST(starts_with(f.what, std::string("inline.toml:") + c.at + ": "), f.what);
      BOOST_TEST(contains(f.what, c.says), f.what);
    }
  }
}

BOOST_AUTO_TEST_CASE(largest_values_are_accepted) {
  // cycles = 2^63 - 1 and a PC range at the top of the int64 range.
  const Workload w = pmc::parse_workload(
      "[[segment]]\ncycles = 9223372036854775807\nmode = \"kernel\"\n"
      "pc = [0, 0x7FFFFFFFFFFFFFFF]\n[segment.signals]\nzero = 0\n",
      "max.toml");
  BOOST_TEST(w.segment(0).cycles == 9223372036854775807u);
  BOOST_TEST(w.segment(0).pc_end == 0x7FFFFFFFFFFFFFFFu);
  BOOST_TEST(w.total("zero") == 0u);
  BOOST_TEST(w.total("cycles") == 9223372036854775807u);
}

// 'pc' values as strings: unsigned 64-bit numbers, for the addresses of 2^63 and above (Alpha
// KSEG) that a TOML integer, signed 64-bit, cannot hold.
namespace {
// The one segment of "[[segment]]\ncycles = 16\npc = <pc>\n" (it has no signals, so nothing of it
// refers to the workload, which is gone).
pmc::Segment pc_segment(const std::string& pc) {
  const Workload w =
      pmc::parse_workload("[[segment]]\ncycles = 16\npc = " + pc + "\n", "pc.toml");
  BOOST_TEST_REQUIRE(w.size() == 1u);
  return w.segment(0);
}
}  // namespace

BOOST_AUTO_TEST_CASE(pc_hex_strings_parse_exactly) {
  auto s = pc_segment("[\"0xfffffc0000310000\", \"0xfffffc0000312000\"]");
  BOOST_TEST(s.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(s.pc_end == 0xfffffc0000312000u);
  BOOST_TEST(s.pc_begin > (1ULL << 63));
  BOOST_TEST(s.pc_end - s.pc_begin == 8192u);

  s = pc_segment("[\"0x0\", \"0xffffffffffffffff\"]");  // the whole 64-bit range
  BOOST_TEST(s.pc_begin == 0u);
  BOOST_TEST(s.pc_end == 0xffffffffffffffffu);

  s = pc_segment("['0x8000000000000000', \"0X8000000000000001\"]");  // literal string; 2^63
  BOOST_TEST(s.pc_begin == 0x8000000000000000u);
  BOOST_TEST(s.pc_end == 0x8000000000000001u);

  s = pc_segment("[\"0xFFFFFC0000310000\", \"0xFffffc0000310010\"]");  // either case of digit
  BOOST_TEST(s.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(s.pc_end == 0xfffffc0000310010u);

  s = pc_segment("[0x120000000, \"0x120001000\"]");  // an integer and a string mix
  BOOST_TEST(s.pc_begin == 0x120000000u);
  BOOST_TEST(s.pc_end == 0x120001000u);

  s = pc_segment("[\"0x000000000000000000010\", \"0x20\"]");  // leading zeros do not count
  BOOST_TEST(s.pc_begin == 0x10u);
  BOOST_TEST(s.pc_end == 0x20u);
}

BOOST_AUTO_TEST_CASE(pc_decimal_strings_parse_exactly) {
  auto s = pc_segment("[\"18446739675666251776\", \"18446739675666259968\"]");
  BOOST_TEST(s.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(s.pc_end == 0xfffffc0000312000u);

  s = pc_segment("[\"0\", \"18446744073709551615\"]");  // 2^64 - 1
  BOOST_TEST(s.pc_begin == 0u);
  BOOST_TEST(s.pc_end == 0xffffffffffffffffu);

  s = pc_segment("[\"4096\", 8192]");
  BOOST_TEST(s.pc_begin == 4096u);
  BOOST_TEST(s.pc_end == 8192u);
}

BOOST_AUTO_TEST_CASE(pc_strings_take_underscores_between_digits) {
  auto s = pc_segment("[\"0xffff_fc00_0031_0000\", \"0xffff_fc00_0031_2000\"]");
  BOOST_TEST(s.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(s.pc_end == 0xfffffc0000312000u);

  s = pc_segment("[\"18_446_739_675_666_251_776\", \"1_8_4_4_6_7_4_4_0_7_3_7_0_9_5_5_1_6_1_5\"]");
  BOOST_TEST(s.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(s.pc_end == 0xffffffffffffffffu);

  // The same range, as the kernel segment of a workload with a repeat: each copy keeps it.
  const Workload w = pmc::parse_workload(
      "[[segment]]\ncycles = 8_192\nmode = \"kernel\"\nrepeat = 2\n"
      "pc = [\"0xffff_fc00_0031_0000\", \"0xffff_fc00_0031_2000\"]\n",
      "kseg.toml");
  BOOST_TEST_REQUIRE(w.size() == 2u);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const pmc::Segment k = w.segment(i);
    BOOST_TEST(k.pc_begin == 0xfffffc0000310000u);
    BOOST_TEST(k.pc_end == 0xfffffc0000312000u);
    BOOST_TEST((k.mode == Mode::kernel));
  }
}

// Each bad 'pc': the line:column of the value at fault (the array for begin >= end) and the
// offending text, quoted as written for a string.
BOOST_AUTO_TEST_CASE(bad_pc_values_name_position_and_text) {
  struct Case {
    int line;        // of this table, for the report
    const char* pc;  // the value of 'pc', on line 3 of the input
    const char* at;
    const char* says;
    const char* text;  // the bad value, in the message
  };
  const Case cases[] = {
      // Strings that are not numbers.
      {__LINE__, R"(["0xfffffc00003g0000", "0xfffffc0000312000"])", "3:7",
       "'pc' begin \"0xfffffc00003g0000\" is not an unsigned 64-bit number", "0xfffffc00003g0000"},
      {__LINE__, R"([0, "12ab"])", "3:10", "'pc' end \"12ab\" is not an unsigned 64-bit number",
       "\"12ab\""},
      {__LINE__, R"(["", "0x10"])", "3:7", "'pc' begin \"\" is not", "\"\""},
      {__LINE__, R"(["0x", "0x10"])", "3:7", "'pc' begin \"0x\" is not", "\"0x\""},
      {__LINE__, R"([0x10, " 0x20"])", "3:13", "'pc' end \" 0x20\" is not", "\" 0x20\""},
      {__LINE__, R"([0x10, "0x20 "])", "3:13", "'pc' end \"0x20 \" is not", "\"0x20 \""},
      {__LINE__, R"(["+16", "32"])", "3:7", "'pc' begin \"+16\" is not", "\"+16\""},
      {__LINE__, R"(["-16", "32"])", "3:7", "'pc' begin \"-16\" is not", "\"-16\""},
      {__LINE__, R"(["0b101", "32"])", "3:7", "'pc' begin \"0b101\" is not", "\"0b101\""},
      {__LINE__, R"(["1e6", "2e6"])", "3:7", "'pc' begin \"1e6\" is not", "\"1e6\""},
      {__LINE__, R"(["0x-10", "32"])", "3:7", "'pc' begin \"0x-10\" is not", "\"0x-10\""},
      {__LINE__, R"(["0x0x10", "32"])", "3:7", "'pc' begin \"0x0x10\" is not", "\"0x0x10\""},
      {__LINE__, R"(["ffff", "0x10000"])", "3:7", "'pc' begin \"ffff\" is not", "\"ffff\""},
      // Underscores other than between two digits.
      {__LINE__, R"(["0x_10", "0x20"])", "3:7", "'pc' begin \"0x_10\" is not", "\"0x_10\""},
      {__LINE__, R"(["_16", "32"])", "3:7", "'pc' begin \"_16\" is not", "\"_16\""},
      {__LINE__, R"(["16_", "32"])", "3:7", "'pc' begin \"16_\" is not", "\"16_\""},
      {__LINE__, R"(["1__6", "32"])", "3:7", "'pc' begin \"1__6\" is not", "\"1__6\""},
      {__LINE__, R"(["16", "3_x2"])", "3:13", "'pc' end \"3_x2\" is not", "\"3_x2\""},
      // Numbers of 2^64 and more.
      {__LINE__, R"(["0", "0x1_0000_0000_0000_0000"])", "3:12",
       "'pc' end \"0x1_0000_0000_0000_0000\" does not fit in 64 bits", "0x1_0000_0000_0000_0000"},
      {__LINE__, R"(["18446744073709551616", "18446744073709551617"])", "3:7",
       "'pc' begin \"18446744073709551616\" does not fit in 64 bits", "18446744073709551616"},
      {__LINE__, R"(["0", "0xfffffc00003100000"])", "3:12", "does not fit in 64 bits",
       "\"0xfffffc00003100000\""},
      // Negative integers; the message says what the same 64 bits are as an address.
      {__LINE__, "[-4096, 0]", "3:7", "'pc' begin must be >= 0, not -4096", "0xfffffffffffff000"},
      {__LINE__, "[0, -4398043299840]", "3:10", "'pc' end must be >= 0, not -4398043299840",
       "\"0xfffffc0000310000\""},
      // begin >= end, at the array, with both values in hex.
      {__LINE__, R"(["0xfffffc0000312000", "0xfffffc0000310000"])", "3:6", "0 <= begin < end",
       "[0xfffffc0000312000, 0xfffffc0000310000]"},
      {__LINE__, R"(["16", "0x10"])", "3:6", "0 <= begin < end", "[0x10, 0x10]"},
      {__LINE__, R"(["0xffffffffffffffff", 0])", "3:6", "0 <= begin < end",
       "[0xffffffffffffffff, 0x0]"},
      // Neither an integer nor a string; not an array; not two values.
      {__LINE__, R"([0, true])", "3:10", "'pc' end must be an integer >= 0 or a string",
       "not a boolean"},
      {__LINE__, R"("0x10")", "3:6", "'pc' must be [begin, end], integers or number strings",
       "not a string"},
      {__LINE__, R"(["0x10"])", "3:6", "'pc' must be [begin, end]", "an array of 1 values"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("case at line " << c.line) {
      const std::string toml = std::string("[[segment]]\ncycles = 5\npc = ") + c.pc + "\n";
      const Failure f = failure([&] { (void)pmc::parse_workload(toml, "inline.toml"); });
      BOOST_TEST((f.code == errc::invalid_argument), "code " << static_cast<int>(f.code) << ": "
                                                              << f.what);
      BOOST_TEST(starts_with(f.what, std::string("inline.toml:") + c.at + ": "), f.what);
      BOOST_TEST(contains(f.what, c.says), f.what);
      BOOST_TEST(contains(f.what, c.text), f.what);
    }
  }
}

// The shipped examples load, and say what their comments promise.
BOOST_AUTO_TEST_CASE(example_workloads) {
  const Workload wrap = pmc::load_workload(kExamples / "wrap-40bit.toml");
  BOOST_TEST(wrap.total("instructions") == 3 * (1ULL << 40));
  BOOST_TEST(wrap.total("cycles") == 3 * (1ULL << 39));
  BOOST_TEST(wrap.total("cycles") > (1ULL << 40));

  const Workload demo = pmc::load_workload(kExamples / "p6-demo.toml");
  BOOST_TEST(demo.name == "p6-demo");
  BOOST_TEST(demo.total_cycles() == 6'290'000u);
  BOOST_TEST(demo.total("cycles") == 5'290'000u);  // 1 000 000 halted
  BOOST_TEST(demo.total("instructions") == 7'900'000u);
  BOOST_TEST(demo.total("branches") == 1'370'000u);
  BOOST_TEST(demo.total("branch-misses") == 20'000u);
  BOOST_TEST(demo.total("flops") == 3'000'000u);
  BOOST_TEST(demo.total("mul") == 400'000u);
  BOOST_TEST(demo.total("div") == 10'000u);
  BOOST_TEST(demo.total("l2_rqsts.i") == 220'000u);
  BOOST_TEST(demo.total("l2_rqsts.e") == 100'000u);
  BOOST_TEST(demo.total("l2_rqsts.s") == 150'000u);
  bool user = false, kernel = false;
  for (std::size_t i = 0; i < demo.size(); ++i) (demo.segment(i).mode == Mode::user ? user : kernel) = true;
  BOOST_TEST(user);
  BOOST_TEST(kernel);

  // alpha-profile.toml: its kernel text is at KSEG [0xfffffc0000310000, 0xfffffc0000312000),
  // written as hex strings.
  const Workload profile = pmc::load_workload(kExamples / "alpha-profile.toml");
  BOOST_TEST_REQUIRE(profile.size() == 4u);
  const auto& ktext = profile.segment(3);
  BOOST_TEST((ktext.mode == Mode::kernel));
  BOOST_TEST(ktext.cycles == 8192u);
  BOOST_TEST(ktext.pc_begin == 0xfffffc0000310000u);
  BOOST_TEST(ktext.pc_end == 0xfffffc0000312000u);
}
