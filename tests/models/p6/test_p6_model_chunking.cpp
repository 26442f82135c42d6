#define BOOST_TEST_MODULE p6_model_chunking
#include <boost/test/unit_test.hpp>

// The P6 device model under a session: how Session::run() chunks a workload for counters of a given
// width (the suite's comment below). Every expected value below is worked out by hand, never taken
// from a run of the model.

#include "p6_model_support.hpp"
#include "session_impl.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>

using namespace p6_model_test;

BOOST_AUTO_TEST_SUITE(chunking)

// Session::run() splits each segment into chunks that no counter of the PMU's narrowest width
// can pass half its range in, and polls after each (folding the counters into 64-bit totals).
// A session over the p6 plugin whose device is the P6 model wrapped in a ChunkSpy sees every
// chunk; the PMU's counter width is set here to the width a test needs.

pmc::Workload workload(std::initializer_list<pmc::OwnedSegment> segments) {
  pmc::Workload w;
  w.name = "test";
  for (const auto& s : segments) w.add(s);
  return w;
}

// A session counting on the simulated P6 (a Pentium Pro), its counters `width` bits wide.
pmc::Session session(unsigned width) {
  static const pmc_test::LoadedForTest backend("p6");
  auto ctx = pmc_test::spy_context<pmc::sim::P6Device>(backend, pentium_pro());
  for (auto& c : ctx->pmu.counters) c.width = width;
  return pmc::Session(std::make_unique<pmc::detail::SessionImpl>(ctx));
}

// What a session does between chunks: fold the difference of two `width`-bit readings into 64
// bits, here from the device's counter after each chunk (the largest step shows the chunking).
struct Folder {
  Device& d;
  std::uint32_t msr;
  unsigned width;
  u64 last = 0, total = 0, calls = 0, largest_step = 0;
  void operator()() {
    const u64 now = d.read(msr);
    const u64 step = (now - last) & ((u64{1} << width) - 1);
    largest_step = std::max(largest_step, step);
    total += step;
    last = now;
    ++calls;
  }
};

// Runs before each test of the suite and after it: no callback left from another test.
struct NoCallback {
  NoCallback() { pmc_test::between_chunks = nullptr; }
  ~NoCallback() { pmc_test::between_chunks = nullptr; }
};

// The counter register of reading i (PerfCtr0 + its counter).
std::uint32_t counter_msr(pmc::Session& s, std::size_t i) { return PerfCtr0 + s.read().at(i).counter; }

// 3 * 2^39 cycles of 2 instructions = 3 * 2^40 instructions. Budget per chunk: 2^39 - 1 events,
// so (2^39 - 1) / 2 = 2^38 - 1 cycles; 6 * 2^38 cycles = 6 chunks of 2^38 - 1 and 6 cycles left:
// 7 chunks.
BOOST_FIXTURE_TEST_CASE(wrap_40bit_workload_in_seven_chunks, NoCallback) {
  auto s = session(40);
  s.add("INST_RETIRED:u");  // EN | USR | INST_RETIRED
  Folder fold{pmc_test::device(s), counter_msr(s, 0), 40};
  pmc_test::between_chunks = [&] { fold(); };
  const pmc::WorkloadRun run = s.run(workload({seg(3 * (1ULL << 39), {{"instructions", 2}})}));
  BOOST_TEST(!s.running());  // started for the run, stopped after it
  BOOST_TEST(fold.calls == 7u);
  BOOST_TEST(fold.total == 3 * TWO40);
  BOOST_TEST(fold.largest_step == 2 * ((1ULL << 38) - 1));
  BOOST_TEST(fold.largest_step < (1ULL << 39));
  BOOST_TEST(s.read().at(0).value == 3 * TWO40);  // the session's own 64-bit total
  BOOST_TEST(run.cycles == 3 * (1ULL << 39));
  BOOST_TEST(run.cycles_not_counted == 0u);
}

// Width 8: budget 127 events. 1000 cycles x 3 -> 42 cycles a chunk, 24 chunks (23 x 42 = 966);
// 200 kernel cycles without signals -> at most 1 event a cycle (unhalted cycles) -> 127 cycles a
// chunk, 2 chunks. Chunks never span segments.
BOOST_FIXTURE_TEST_CASE(chunks_per_segment_and_exact_totals, NoCallback) {
  auto s = session(8);
  s.add("INST_RETIRED");      // USR | OS | INST_RETIRED
  s.add("CPU_CLK_UNHALTED");  // USR | OS | CPU_CLK_UNHALTED
  Device& d = pmc_test::device(s);
  Folder f0{d, counter_msr(s, 0), 8}, f1{d, counter_msr(s, 1), 8};
  pmc_test::between_chunks = [&] { f0(); f1(); };
  s.run(workload({seg(1000, {{"instructions", 3}}), seg(200, {}, Mode::kernel)}));
  BOOST_TEST(f0.calls == 26u);
  BOOST_TEST(f0.total == 3000u);
  BOOST_TEST(f1.total == 1200u);
  BOOST_TEST(f0.largest_step == 126u);  // 42 cycles x 3
  BOOST_TEST(f1.largest_step == 127u);  // 127 kernel cycles
  // The session folded its 8-bit readings into the same exact totals.
  BOOST_TEST(s.read().at(0).value == 3000u);
  BOOST_TEST(s.read().at(1).value == 1200u);
}

// An edge detector sees one assertion across the chunks of one segment.
BOOST_FIXTURE_TEST_CASE(chunking_does_not_create_edges, NoCallback) {
  auto s = session(8);
  s.add("INST_RETIRED:u:e=1");  // EN | USR | E | INST_RETIRED
  int calls = 0;
  pmc_test::between_chunks = [&] { ++calls; };
  s.run(workload({seg(1000, {{"instructions", 3}})}));
  BOOST_TEST(calls == 24);
  BOOST_TEST(pmc_test::device(s).read(counter_msr(s, 0)) == 1u);
  BOOST_TEST(s.read().at(0).value == 1u);
}

BOOST_FIXTURE_TEST_CASE(run_workload_refuses_impossible_widths, NoCallback) {
  const auto w = workload({seg(10, {{"instructions", 1}})});
  {
    auto s = session(1);
    s.add("INST_RETIRED:u");
    BOOST_TEST(throws([&] { s.run(w); }, errc::invalid_argument, {"width 1"}));
  }
  // A counter wider than 64 bits cannot be declared at all: the data loader refuses it.
  BOOST_TEST(throws(
      [] {
        pmc::EventCatalog c;
        c.load_string("backend = \"wide\"\n[pmu]\n[[pmu.counters]]\ncount = 1\nwidth = 65\ncontrol = 0x186\n"
                      "counter = 0xC1\n",
                      "wide.toml", "wide");
      },
      errc::attribute_value, {"wide.toml", "width"}));
  // 200 events in one cycle cannot stay below 2^7 = 128 between two calls.
  {
    auto s = session(8);
    s.add("INST_RETIRED:u");
    const auto w200 = workload({seg(10, {{"instructions", 200}})});
    BOOST_TEST(throws([&] { s.run(w200); }, errc::invalid_argument, {"segment 1"}));
  }
  // No callback is allowed too; 64-bit counters take a workload in one chunk.
  auto s = session(64);
  s.add("INST_RETIRED:u");
  const std::uint64_t before = pmc_test::chunks_run;
  s.run(w);
  BOOST_TEST(pmc_test::chunks_run - before == 1u);
  BOOST_TEST(pmc_test::device(s).read(counter_msr(s, 0)) == 10u);
  BOOST_TEST(s.read().at(0).value == 10u);
}

BOOST_AUTO_TEST_SUITE_END()
