#define BOOST_TEST_MODULE workload_compact
#include <boost/test/unit_test.hpp>

// The compact workload form (docs/workload-format.md, "Compact form"): a line per segment for
// large generated workloads, read whole (load_workload) or streamed (WorkloadReader and
// Session::run of a reader), and written by save_compact_workload. Expected counts are worked
// out by hand from the rows; positions (line:column, both from 1) are counted in the inputs.

#include "support/child_process.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;
using pmc::errc;
using pmc_test::spit;
using pmc_test::TempDir;

const fs::path kExamples = fs::path(PMC_SOURCE_DIR) / "examples" / "workloads";

// The first example of docs/workload-format.md, in the compact form.
const char* kDemo =
    "pmc-workload 1\n"
    "name demo\n"
    "description a loop and a system call   # a comment\n"
    "# segments: cycles, mode, repeat, halted, then occurrences per cycle\n"
    "columns cycles mode repeat halted instructions branches l2_rqsts.i\n"
    "1000000 u 3 0 2 1 0      # 3 million cycles of user code\n"
    "\n"
    "50000   k 1 0 1 0 1      # a system call\n"
    "100000  kernel 1 1 0 0 0 # idle\n";

pmc::Hal pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = (fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-iii.txt").string();
  return pmc::Hal::open(cfg);
}

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

// The error of loading `text` as <tmp>/bad.pmcw, with the file name cut to "bad.pmcw".
Failure load_error(const TempDir& tmp, const std::string& text) {
  const fs::path file = tmp.path() / "bad.pmcw";
  spit(file, text);
  Failure f = failure([&] { (void)pmc::load_workload(file); });
  const std::string dir = tmp.path().string() + "/";
  if (f.what.rfind(dir, 0) == 0) f.what.erase(0, dir.size());
  return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(rows_are_segments) {
  TempDir tmp;
  const fs::path file = tmp.path() / "demo.pmcw";
  spit(file, kDemo);
  const pmc::Workload w = pmc::load_workload(file);
  BOOST_TEST(w.name == "demo");
  BOOST_TEST(w.description == "a loop and a system call");
  BOOST_TEST(w.source == file.string());
  BOOST_REQUIRE_EQUAL(w.size(), 3u);
  // repeat 3 without a PC range: one segment of 3,000,000 cycles, as in the TOML form.
  const pmc::Segment a = w.segment(0);
  BOOST_TEST(a.cycles == 3000000u);
  BOOST_TEST((a.mode == pmc::Mode::user));
  BOOST_TEST(a.per_cycle("instructions") == 2u);
  BOOST_TEST(a.per_cycle("branches") == 1u);
  BOOST_TEST(a.signals.size() == 2u);  // a 0 is no signal
  const pmc::Segment c = w.segment(2);
  BOOST_TEST((c.mode == pmc::Mode::kernel));
  BOOST_TEST(c.halted);
  BOOST_TEST(c.signals.empty());
  // 3,000,000 + 50,000 + 100,000 cycles; 6,000,000 + 50,000 instructions.
  BOOST_TEST(w.total_cycles() == 3150000u);
  BOOST_TEST(w.total("instructions") == 6050000u);
  BOOST_TEST(w.total("l2_rqsts.i") == 50000u);
}

BOOST_AUTO_TEST_CASE(a_streamed_run_counts_what_a_loaded_one_does) {
  TempDir tmp;
  const fs::path file = tmp.path() / "demo.pmcw";
  spit(file, kDemo);
  pmc::Hal hal = pentium_iii();
  // instructions:u 6,000,000 (the user segment), instructions:k 50,000 (the system call; the
  // idle segment has none). Two events: the P6 has two counters (no multiplexing).
  for (bool streamed : {true, false}) {
    pmc::Session s = hal.session();
    s.add("instructions:u");
    s.add("instructions:k");
    pmc::WorkloadRun run;
    if (streamed) {
      pmc::WorkloadReader reader(file);
      BOOST_TEST(reader.compact());
      run = s.run(reader);
    } else {
      run = s.run(pmc::load_workload(file));
    }
    BOOST_TEST(run.cycles == 3150000u);
    const auto r = s.read();
    BOOST_TEST(r.at(0).value == 6000000u);
    BOOST_TEST(r.at(1).value == 50000u);
    BOOST_TEST(!r.at(0).extrapolated);
    BOOST_TEST(!s.running());
  }
}

// A column that is not a segment key is a signal: the Alpha 21064 model's IPL is one (`ipl`),
// read by that model as the level the segment runs at.
BOOST_AUTO_TEST_CASE(an_ipl_column_is_a_signal) {
  TempDir tmp;
  const fs::path file = tmp.path() / "ipl.pmcw";
  spit(file, "pmc-workload 1\ncolumns cycles mode ipl issues\n4096 k 3 1\n4096 k 0 1\n");
  const pmc::Workload w = pmc::load_workload(file);
  BOOST_REQUIRE_EQUAL(w.size(), 2u);
  BOOST_TEST(w.segment(0).per_cycle("ipl") == 3u);
  BOOST_TEST(w.segment(1).signals.size() == 1u);  // ipl 0: the segment does not have the signal
}

BOOST_AUTO_TEST_CASE(a_reader_streams_toml_too) {
  pmc::WorkloadReader reader(kExamples / "p6-demo.toml");
  BOOST_TEST(!reader.compact());
  BOOST_TEST(reader.name() == "p6-demo");
  const pmc::Workload whole = pmc::load_workload(kExamples / "p6-demo.toml");
  std::size_t n = 0;
  while (const pmc::Segment* s = reader.next()) {
    BOOST_REQUIRE(n < whole.size());
    BOOST_TEST(s->cycles == whole.segment(n).cycles);
    ++n;
  }
  BOOST_TEST(n == whole.size());
  reader.rewind();
  BOOST_TEST(reader.next() != nullptr);
}

BOOST_AUTO_TEST_CASE(a_refused_streamed_workload_counts_nothing) {
  // A P6 counter is 40 bits: a chunk may add at most 2^39 - 1 events, so a segment of 2^39
  // (549,755,813,888) instructions a cycle cannot be split finely enough. It is the second
  // segment, on line 4: the first, on line 3, must not have been counted either.
  TempDir tmp;
  const fs::path file = tmp.path() / "steep.pmcw";
  spit(file, "pmc-workload 1\ncolumns cycles instructions\n1000 1\n10 549755813888\n");
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  s.add("instructions");
  pmc::WorkloadReader reader(file);
  const Failure f = failure([&] { (void)s.run(reader); });
  BOOST_TEST((f.code == errc::invalid_argument));
  BOOST_TEST(f.what == file.string() +
                           ":4: segment 2: up to 549755813888 events per cycle overflow half of a 40-bit counter in a "
                           "single cycle");
  BOOST_TEST(s.read().at(0).value == 0u);
  BOOST_TEST(!s.running());
}

BOOST_AUTO_TEST_CASE(a_pc_range_repeats_as_separate_segments) {
  TempDir tmp;
  const fs::path file = tmp.path() / "pc.pmcw";
  spit(file,
       "pmc-workload 1\n"
       "columns cycles repeat pc_begin pc_end\n"
       "100 3 0x1000 0x2000\n"  // each occurrence walks the range again: 3 segments
       "100 3 0 0\n");          // no range: one segment of 300 cycles
  const pmc::Workload w = pmc::load_workload(file);
  BOOST_REQUIRE_EQUAL(w.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(w.segment(i).cycles == 100u);
    BOOST_TEST(w.segment(i).pc_begin == 0x1000u);
    BOOST_TEST(w.segment(i).pc_end == 0x2000u);
  }
  BOOST_TEST(w.segment(3).cycles == 300u);
  BOOST_TEST(w.segment(3).pc_begin == w.segment(3).pc_end);
}

BOOST_AUTO_TEST_CASE(saved_compact_counts_as_the_toml) {
  TempDir tmp;
  const pmc::Workload toml = pmc::load_workload(kExamples / "p6-demo.toml");
  const fs::path file = tmp.path() / "p6-demo.pmcw";
  pmc::save_compact_workload(toml, file);
  const pmc::Workload compact = pmc::load_workload(file);
  BOOST_TEST(compact.name == toml.name);
  BOOST_REQUIRE_EQUAL(compact.size(), toml.size());
  for (std::size_t i = 0; i < toml.size(); ++i) {
    const pmc::Segment a = toml.segment(i), b = compact.segment(i);
    BOOST_TEST(a.cycles == b.cycles);
    BOOST_TEST((a.mode == b.mode));
    BOOST_TEST(a.halted == b.halted);
    BOOST_TEST(a.signals.size() == b.signals.size());
    for (const pmc::SignalCount& c : a.signals) BOOST_TEST(b.per_cycle(c.signal) == c.per_cycle);
  }
  // docs/workload-format.md: 1,370,000 branches and 20,000 branch misses.
  pmc::Hal hal = pentium_iii();
  pmc::Session s = hal.session();
  s.add("branches");
  s.add("branch-misses");
  pmc::WorkloadReader reader(file);
  (void)s.run(reader);
  const auto r = s.read();
  BOOST_TEST(r.at(0).value == 1370000u);
  BOOST_TEST(r.at(1).value == 20000u);
}

BOOST_AUTO_TEST_CASE(errors_name_the_line_and_column) {
  TempDir tmp;
  const std::string head = "pmc-workload 1\ncolumns cycles mode instructions\n";
  auto f = load_error(tmp, head + "100 x 1\n");
  BOOST_TEST((f.code == errc::invalid_argument));
  BOOST_TEST(f.what == "bad.pmcw:3:5: mode 'x' is not u, user, k or kernel");
  f = load_error(tmp, head + "100 u 1 2\n");
  BOOST_TEST(f.what == "bad.pmcw:3:9: 4 values, but the columns name 3");
  f = load_error(tmp, head + "100 u   # too few\n");
  BOOST_TEST(f.what == "bad.pmcw:3:6: 2 values, but the columns name 3");
  f = load_error(tmp, head + "100 u 1\n0 u 1\n");
  BOOST_TEST(f.what == "bad.pmcw:4:1: 'cycles' must be 1..18446744073709551615, not 0");
  f = load_error(tmp, head + "1x0 u 1\n");
  BOOST_TEST(f.what == "bad.pmcw:3:1: 'cycles' 1x0 is not an unsigned 64-bit number (decimal, or hex with 0x)");
  f = load_error(tmp, "pmc-workload 2\ncolumns cycles\n1\n");
  BOOST_TEST((f.code == errc::parse));
  BOOST_TEST(f.what == "bad.pmcw:1:1: a compact workload starts with the line 'pmc-workload 1'");
  f = load_error(tmp, "pmc-workload 1\ncolums cycles\n");
  BOOST_TEST(f.what == "bad.pmcw:2:1: unknown header line 'colums' (expected name, description or columns)");
  f = load_error(tmp, "pmc-workload 1\nname only\n");
  BOOST_TEST(f.what.find("no 'columns' line") != std::string::npos, f.what);
  f = load_error(tmp, "pmc-workload 1\ncolumns cycles mode cycles\n");
  BOOST_TEST(f.what == "bad.pmcw:2:21: column 'cycles' given twice");
  f = load_error(tmp, "pmc-workload 1\ncolumns mode instructions\n");
  BOOST_TEST(f.what == "bad.pmcw:2:1: the columns need 'cycles'");
  f = load_error(tmp, "pmc-workload 1\ncolumns cycles pid parent\n100 0 5\n");
  BOOST_TEST(f.what == "bad.pmcw:3:7: 'parent' 5 needs a 'pid' of the child, other than 0 and the parent");
  f = load_error(tmp, "pmc-workload 1\ncolumns cycles pc_begin pc_end\n100 0x2000 0x1000\n");
  BOOST_TEST(f.what ==
             "bad.pmcw:3:5: the PC range must be [begin, end) with begin < end, not [0x2000, 0x1000]");
  // 2^64 - 1 cycles of 2 instructions: the total does not fit 64 bits.
  f = load_error(tmp, "pmc-workload 1\ncolumns cycles instructions\n18446744073709551615 2\n");
  BOOST_TEST(f.what == "bad.pmcw:3: the total of signal 'instructions' over the workload so far exceeds 2^64 - 1");
  f = load_error(tmp, "pmc-workload 1\ncolumns cycles\n");
  BOOST_TEST(f.what.find("no segment") != std::string::npos, f.what);
}
