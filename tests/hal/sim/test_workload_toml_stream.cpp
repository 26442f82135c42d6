#define BOOST_TEST_MODULE workload_toml_stream
#include <boost/test/unit_test.hpp>

// Issue 25: a TOML workload became one document tree of the whole file (a 10^6-segment file
// took 4.4 s and 1.2 GB). pmc::WorkloadReader and load_workload now read the TOML form one
// [[segment]] at a time (hal/src/sim/workload_toml_stream.cpp). Here: what a cutter at table
// headers could get wrong (headers inside strings and arrays, a segment's own sub-tables,
// quoted keys, CRLF), what the reader reports (the segment's line), and that an invalid file
// still gets the whole-file reader's error, with its line and column. Expected values are
// worked out by hand from the inputs.

#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::spit;
using pmc_test::TempDir;

struct Seen {
  std::uint64_t cycles, instructions, pc_begin;
  std::string where;
};

std::vector<Seen> stream(const fs::path& file) {
  pmc::WorkloadReader r(file);
  std::vector<Seen> out;
  while (const pmc::Segment* s = r.next()) out.push_back({s->cycles, s->per_cycle("instructions"), s->pc_begin, r.where()});
  return out;
}

std::string error_of(const fs::path& file) {
  try {
    pmc::WorkloadReader r(file);
    while (r.next()) {
    }
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Headers the cutter must not take for segments: in a multi-line basic and literal string, in
// a one-line string, in a comment; an array over several lines; a segment's signals as a
// sub-table; a quoted "segment" key; blanks inside the brackets.
const char* kTricky =
    "name = \"tricky\"\n"                                    // 1
    "description = \"\"\"\n"                                 // 2
    "[[segment]]\n"                                          // 3 (in the string)
    "cycles = 1\"\"\"\n"                                     // 4
    "[[segment]]   # the first\n"                            // 5
    "cycles = 100\n"                                         // 6
    "pc = [\n"                                               // 7
    "  0x1000,\n"                                            // 8
    "  0x2000 ]\n"                                           // 9
    "signals = { instructions = 2 }\n"                       // 10
    "[[\"segment\"]]\n"                                      // 11: the second
    "cycles = 200\n"                                         // 12
    "LINE13\n"                                               // 13
    "LINE14\n"                                               // 14
    "[segment.signals]\n"                                    // 15
    "instructions = 3   # [[segment]] in a comment\n"        // 16
    "[[ segment ]]\n"                                        // 17: the third
    "cycles = 300\n"                                         // 18
    "mode = \"kernel\" # \"[[segment]]\"\n";                 // 19

// kTricky with lines 13 and 14 as given.
std::string tricky(const std::string& line13, const std::string& line14) {
  std::string text = kTricky;
  text.replace(text.find("LINE13"), 6, line13);
  text.replace(text.find("LINE14"), 6, line14);
  return text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(headers_inside_strings_arrays_and_comments_do_not_cut) {
  TempDir tmp;
  // Lines 13 and 14: a comment that is a header, and a blank line.
  const std::string text = tricky("# x = \"[[segment]]\"", "");
  const fs::path file = tmp.path() / "tricky.toml";
  spit(file, text);
  const auto seen = stream(file);
  BOOST_REQUIRE_EQUAL(seen.size(), 3u);
  BOOST_TEST(seen[0].cycles == 100u);
  BOOST_TEST(seen[0].pc_begin == 0x1000u);
  BOOST_TEST(seen[0].instructions == 2u);
  BOOST_TEST(seen[0].where == file.string() + ":5");
  BOOST_TEST(seen[1].cycles == 200u);
  BOOST_TEST(seen[1].instructions == 3u);
  BOOST_TEST(seen[1].where == file.string() + ":11");
  BOOST_TEST(seen[2].cycles == 300u);
  BOOST_TEST(seen[2].where == file.string() + ":17");
  pmc::WorkloadReader r(file);
  BOOST_TEST(r.name() == "tricky");
  BOOST_TEST(r.description() == "[[segment]]\ncycles = 1");
  // load_workload goes the same way.
  const pmc::Workload w = pmc::load_workload(file);
  BOOST_REQUIRE_EQUAL(w.size(), 3u);
  BOOST_TEST((w.segment(2).mode == pmc::Mode::kernel));
  BOOST_TEST(w.name == "tricky");
}

BOOST_AUTO_TEST_CASE(crlf_lines_and_a_rewind_give_the_same_segments) {
  TempDir tmp;
  const fs::path file = tmp.path() / "crlf.toml";
  spit(file, "name = \"crlf\"\r\n[[segment]]\r\ncycles = 7\r\nsignals = { instructions = 1 }\r\n"
             "[[segment]]\r\ncycles = 9\r\nrepeat = 2\r\n");
  pmc::WorkloadReader r(file);
  std::uint64_t first = 0, second = 0;
  while (const pmc::Segment* s = r.next()) first += s->cycles * 1000 + s->per_cycle("instructions");
  r.rewind();
  while (const pmc::Segment* s = r.next()) second += s->cycles * 1000 + s->per_cycle("instructions");
  BOOST_TEST(first == 7u * 1000 + 1 + 18u * 1000);  // repeat 2 of 9 cycles: one segment of 18
  BOOST_TEST(second == first);
}

BOOST_AUTO_TEST_CASE(an_invalid_file_gets_the_whole_file_readers_error) {
  TempDir tmp;
  // A key a segment does not have, in the second segment (a literal string over lines 13-14
  // holding a header): line 13, column 1.
  const fs::path bad = tmp.path() / "bad.toml";
  spit(bad, tricky("note = '''", "[[segment]]'''"));
  BOOST_TEST(error_of(bad).find(bad.string() + ":13:1: unknown key 'note' in [[segment]]") == 0u, error_of(bad));

  // A table the format does not have, after the segments.
  const fs::path extra = tmp.path() / "extra.toml";
  spit(extra, "[[segment]]\ncycles = 1\n\n[meta]\nx = 1\n");
  BOOST_TEST(error_of(extra).find("unknown key 'meta'") != std::string::npos, error_of(extra));

  // A syntax error in the third segment: its own line and column.
  const fs::path syntax = tmp.path() / "syntax.toml";
  spit(syntax, "[[segment]]\ncycles = 1\n[[segment]]\ncycles = 2\n[[segment]]\ncycles = = 3\n");
  BOOST_TEST(error_of(syntax).find(syntax.string() + ":6:") == 0u, error_of(syntax));

  // Totals over 64 bits across segments (each segment alone fits).
  const fs::path totals = tmp.path() / "totals.toml";
  spit(totals, "[[segment]]\ncycles = 9223372036854775807\n[[segment]]\ncycles = 9223372036854775807\n"
               "[[segment]]\ncycles = 9223372036854775807\n");
  BOOST_TEST(error_of(totals).find("total cycles exceed 2^64 - 1") != std::string::npos, error_of(totals));

  // No segment at all, and an unclosed multi-line string.
  const fs::path none = tmp.path() / "none.toml";
  spit(none, "name = \"x\"\n");
  BOOST_TEST(error_of(none).find("no [[segment]]") != std::string::npos, error_of(none));
  const fs::path open_string = tmp.path() / "open.toml";
  spit(open_string, "[[segment]]\ncycles = 1\n[[segment]]\ncycles = 2\nmode = \"\"\"user\n");
  BOOST_TEST(error_of(open_string).find(open_string.string() + ":5:") == 0u, error_of(open_string));
}

// The plain shape (a key per line, signals inline) is read without toml++; it must give what
// the whole-file reader gives, segment for segment, and leave every value it cannot take to
// the full reader's error.
BOOST_AUTO_TEST_CASE(plain_segments_read_as_the_whole_file_reader_reads_them) {
  TempDir tmp;
  const std::string text =
      "name = \"plain\"\n"
      "[[segment]]\n"
      "cycles = 1000\n"
      "mode = \"kernel\"\n"
      "signals = { instructions = 2, \"l2_ld.m\" = 1, branch-misses = 0x3, l2_rqsts.i = 4 }\n"
      "[[segment]]\n"
      "cycles = 0x10   # hex\n"
      "halted = true\n"
      "repeat = 3\n"
      "cpu = 63\n"
      "[[segment]]\n"
      "cycles = 5\n"
      "pc = [0x400000, 0x400100,]\n"
      "repeat = 2\n"
      "pid = 7\n"
      "parent = 1\n"
      "signals = {}\n"
      "[[segment]]\n"
      "cycles = 9223372036854775807\n"
      "mode = 'user'\n";
  const fs::path file = tmp.path() / "plain.toml";
  spit(file, text);
  const pmc::Workload whole = pmc::parse_workload(text, file.string());
  pmc::WorkloadReader r(file);
  std::size_t i = 0;
  while (const pmc::Segment* s = r.next()) {
    BOOST_REQUIRE(i < whole.size());
    const pmc::Segment w = whole.segment(i++);
    BOOST_TEST(s->cycles == w.cycles);
    BOOST_TEST((s->mode == w.mode));
    BOOST_TEST(s->halted == w.halted);
    BOOST_TEST(s->pc_begin == w.pc_begin);
    BOOST_TEST(s->pc_end == w.pc_end);
    BOOST_TEST(s->cpu == w.cpu);
    BOOST_TEST(s->pid == w.pid);
    BOOST_TEST(s->parent == w.parent);
    BOOST_REQUIRE_EQUAL(s->signals.size(), w.signals.size());
    for (const pmc::SignalCount& c : w.signals) BOOST_TEST(s->per_cycle(c.signal) == c.per_cycle);
  }
  BOOST_TEST(i == whole.size());
  // By hand: 1 + 1 (repeat 3 of 16 cycles is one of 48) + 2 (a PC range: each repeat apart) + 1.
  BOOST_TEST(whole.size() == 5u);
  BOOST_TEST(whole.segment(1).cycles == 48u);
  BOOST_TEST(whole.segment(0).per_cycle("branch-misses") == 3u);

  // Values the plain path must not take: the full reader's error for each.
  const std::pair<const char*, const char*> bad[] = {
      {"cycles = 0\n", "'cycles' must be > 0"},
      {"cycles = 1\ncpu = 64\n", "'cpu' must be 0..63"},
      {"cycles = 1\nsignals = { cycles = 1 }\n", "signal 'cycles' is implicit"},
      {"cycles = 1\nsignals = { a = 1, \"a\" = 2 }\n", ":"},  // a key twice: a TOML error
      {"cycles = 01\n", ":4:"},                                // a leading zero: not TOML
      {"cycles = 1\nparent = 3\n", "'parent' 3 needs a 'pid'"},
      {"cycles = 1\npc = [5, 5]\n", "'pc' must be [begin, end)"},
      {"cycles = 9223372036854775807\nrepeat = 3\n", "overflows 64 bits"},
      {"cycles = 1\nmode = \"idle\"\n", "unknown mode 'idle'"},
  };
  for (const auto& [segment, message] : bad) {
    const fs::path f = tmp.path() / "bad.toml";
    spit(f, std::string("[[segment]]\ncycles = 1\n[[segment]]\n") + segment);
    BOOST_TEST(error_of(f).find(message) != std::string::npos, segment << " -> " << error_of(f));
    BOOST_TEST(error_of(f).find(f.string() + ":") == 0u, error_of(f));
  }
}

// load_workload reads the file once and sizes its storage from the first 4,096 segments'
// density (hal/src/sim/workload_compact.cpp). A file whose segments get longer further on
// (storage reserved too large) or shorter (reserved too small, so it grows) must load whole and
// in order all the same, in either form; an error past the first 4,096 keeps its line.
BOOST_AUTO_TEST_CASE(load_workload_past_its_sizing_sample_keeps_every_segment) {
  TempDir tmp;
  constexpr std::uint64_t kSegments = 10'000;
  auto cycles_of = [](std::uint64_t i) { return 1000 + i; };
  auto instructions_of = [](std::uint64_t i) { return i % 4; };
  for (const bool denser_later : {false, true}) {
    std::string toml = "name = \"grow\"\n", compact = "pmc-workload 1\nname grow\ncolumns cycles mode instructions\n";
    for (std::uint64_t i = 0; i < kSegments; ++i) {
      // The short shape first (or last): no comment, one signal; the long one has a comment.
      const bool long_shape = (i >= 4096) != denser_later;
      const std::string pad = long_shape ? std::string(200, 'x') : std::string();
      toml += "[[segment]]\ncycles = " + std::to_string(cycles_of(i)) + (long_shape ? "  # " + pad : "") +
              "\nsignals = { instructions = " + std::to_string(instructions_of(i)) + " }\n";
      compact += std::to_string(cycles_of(i)) + " u " + std::to_string(instructions_of(i)) +
                 (long_shape ? "  # " + pad : "") + "\n";
    }
    for (const auto& [name, text] : {std::pair{"grow.toml", toml}, std::pair{"grow.pmcw", compact}}) {
      const fs::path file = tmp.path() / name;
      spit(file, text);
      const pmc::Workload w = pmc::load_workload(file);
      BOOST_REQUIRE_EQUAL(w.size(), kSegments);
      std::uint64_t wrong = 0;
      for (std::uint64_t i = 0; i < kSegments; ++i) {
        const pmc::Segment s = w.segment(i);
        wrong += s.cycles != cycles_of(i) || s.per_cycle("instructions") != instructions_of(i);
      }
      BOOST_TEST(wrong == 0u, name << (denser_later ? " (denser later)" : " (sparser later)"));
    }
  }
  // Segment 6,000 (TOML lines 3 per segment after line 1) has cycles = 0.
  std::string toml = "name = \"bad\"\n";
  for (std::uint64_t i = 0; i < 8000; ++i)
    toml += "[[segment]]\ncycles = " + std::to_string(i == 6000 ? 0 : cycles_of(i)) + "\nmode = \"user\"\n";
  const fs::path file = tmp.path() / "bad.toml";
  spit(file, toml);
  try {
    (void)pmc::load_workload(file);
    BOOST_FAIL("a segment with cycles = 0 loaded");
  } catch (const pmc::Error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find(file.string() + ":" + std::to_string(2 + 3 * 6000 + 1) + ":") == 0u, what);
    BOOST_TEST(what.find("'cycles' must be > 0") != std::string::npos, what);
  }
}
