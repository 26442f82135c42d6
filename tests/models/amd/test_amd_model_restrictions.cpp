#define BOOST_TEST_MODULE amd_model_restrictions
#include <boost/test/unit_test.hpp>

// The AMD core PMU device model against docs/hardware/amd.md, and the amd backend driving it: the
// counters an event may use, family 15h's counter restrictions (item 10) and Zen's merge pairs
// (item 11), in the model, through the backend and in sessions. Every expected value below is
// worked out by hand from the docs (section numbers in brackets; "item N" is section 7, "Behaviours
// worth a test"; "policy N" section 8), never taken from a run of the model or the backend. The
// model's own choices where the docs leave one open are the ones sim/models/amd/amd_model.hpp
// lists.

#include "amd_model_support.hpp"
#include "support/backend.hpp"
#include "support/device.hpp"

#include <pmc/hal.hpp>
#include <pmc/session.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace amd_model_test;

BOOST_AUTO_TEST_CASE(item10_family_15h_counter_restrictions_in_the_model) {
  // [5.2, 5.3]: an event on a PERF_CTL it cannot use counts nothing. Program the same event on
  // all six counters and see which count: 10 cycles x 1 of its signal.
  auto counting = [](u64 code, u64 um) {
    AmdDevice d(dump_cpu("amd-fam15h.txt"));
    for (unsigned i = 0; i < 6; ++i) d.write(perf_ctl(i), event(code) | umask(um) | USR | OS | EN);
    const std::string sig = [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "amd.0x%03llX.0x%02llX", static_cast<unsigned long long>(code),
                    static_cast<unsigned long long>(um));
      return std::string(buf);
    }();
    d.run(seg(10, {{sig.c_str(), 1}}));
    unsigned mask = 0;
    for (unsigned i = 0; i < 6; ++i)
      if (d.read(perf_ctr(i)) == 10u) mask |= 1u << i;
    return mask;
  };
  BOOST_TEST(counting(0x003, 0xFF) == 0x08u);  // 0x003: counter 3 only
  BOOST_TEST(counting(0x08F, 0x00) == 0x01u);  // 0x08F: counter 0 only
  BOOST_TEST(counting(0x031, 0x03) == 0x00u);  // 0x031, two unit-mask bits: nowhere
  BOOST_TEST(counting(0x031, 0x01) == 0x07u);  // one bit: 0, 1, 2
  BOOST_TEST(counting(0x000, 0x11) == 0x08u);  // 0x000, bits in both nibbles: 3 only
  BOOST_TEST(counting(0x000, 0x03) == 0x38u);  // one nibble: 3, 4, 5
  BOOST_TEST(counting(0x004, 0x03) == 0x08u);  // 0x004, two bits: 3 only
  BOOST_TEST(counting(0x004, 0x02) == 0x38u);
  BOOST_TEST(counting(0x0C0, 0x00) == 0x3Fu);  // EX_LS: every counter
  BOOST_TEST(counting(0x07D, 0x00) == 0x07u);  // CU: 0, 1, 2
  BOOST_TEST(counting(0x1C0, 0x00) == 0x38u);
  BOOST_TEST(counting(0x02E, 0x00) == 0x09u);  // 0 and 3
}

BOOST_AUTO_TEST_CASE(item10_family_15h_through_the_backend) {
  // The backend's encodings (golden rows and [5.3 items 1-3]) and the scheduler.
  const fs::path extra = fs::temp_directory_path() / "pmchal-test-sim-amd-fam15h.toml";
  {
    // Events the catalog lacks, to reach the umask rules with combinable masks: 0x031, and
    // 0x000 / 0x004 with combinable bits.
    std::ofstream out(extra);
    out << "backend = \"amd\"\nmodifiers = [\"u\", \"k\", \"e\", \"i\", \"c\", \"h\", \"g\"]\n"
           "[[event]]\nname = \"TEST_031\"\ncode = 0x31\ncpus = [\"fam15h\"]\ncounters = [0, 1, 2]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"A\"]\n"
           "masks = [ { name = \"A\", value = 0x01, desc = \"a\" }, { name = \"B\", value = 0x02, desc = \"b\" } ]\n"
           "[[event]]\nname = \"TEST_000\"\ncode = 0x00\ncpus = [\"fam15h\"]\ncounters = [3, 4, 5]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"L1\"]\n"
           "masks = [ { name = \"L1\", value = 0x01, desc = \"a\" }, { name = \"L2\", value = 0x02, desc = \"b\" },"
           " { name = \"H1\", value = 0x10, desc = \"c\" } ]\n"
           "[[event]]\nname = \"TEST_004\"\ncode = 0x04\ncpus = [\"fam15h\"]\ncounters = [3, 4, 5]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"A\"]\n"
           "masks = [ { name = \"A\", value = 0x01, desc = \"a\" }, { name = \"B\", value = 0x02, desc = \"b\" } ]\n";
  }
  pmc::Config cfg = config_for("amd-fam15h.txt");
  cfg.events_path = {extra};
  pmc::Hal hal = pmc::Hal::open(cfg);
  using V = std::vector<unsigned>;
  BOOST_TEST(hal.encode("RETIRED_SSE_OPS").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("DISPATCHED_FPU_OPS").counters == V({3}), boost::test_tools::per_element());  // ALL = 0xFF
  BOOST_TEST(hal.encode("DISPATCHED_FPU_OPS:OPS_PIPE1").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_000:L1:L2").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_000:L1:H1").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_004:A").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_004:A:B").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_031:B").counters == V({0, 1, 2}), boost::test_tools::per_element());
  try {
    (void)hal.encode("TEST_031:A:B");
    BOOST_ERROR("0x031 with two unit-mask bits encoded");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
    BOOST_TEST(std::string(e.what()).find("TEST_031:A:B") != std::string::npos, e.what());
  }
  // Two PERF_CTL3-only events cannot be counted together.
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_OPS");
  try {
    // At once (a group); two adds would take turns on PERF_CTL3 (multiplexing).
    s.add_group({"RETIRED_SSE_OPS", "DISPATCHED_FPU_OPS"});
    BOOST_ERROR("two counter-3 events scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
  }
  // The session programs RETIRED_SSE_OPS (0x0003_FF03) on PERF_CTL3 = 0xC0010206, and it counts there.
  s.add("instructions");
  s.start();
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(d.read(perf_ctl(3)) == (0x0003'FF03ULL | EN));
  d.run(seg(10, {{"amd.0x003.0xFF", 2}, {"instructions", 1}}));
  s.stop();
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "RETIRED_SSE_OPS").counter == 3u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_OPS").value == 20u);
  BOOST_TEST(reading(rs, "instructions").value == 10u);
  fs::remove(extra);
}

BOOST_AUTO_TEST_CASE(item11_zen_merge_pair_in_the_model) {
  // [5.3 item 5]: counter 0 counts RETIRED_SSE_AVX_FLOPS:ANY (0x003, unit mask 0x1F), counter 1
  // holds the merge event 0xFFF with EN (no USR/OS: the driver writes exactly that): counter 1
  // counts counter 0's wraps, so the pair reads N + 2^48 (N+1).
  for (const char* file : {"amd-zen3.txt", "amd-zen4-genoa.txt", "amd-zen4-kvm.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(perfctr(0), TWO48 - 16);
      d.write(evtsel(0), 0x03 | umask(0x1F) | USR | OS | EN);
      d.write(evtsel(1), MERGE | EN);
      d.run(seg(4, {{"amd.0x003.0x1F", 8}}));  // 32 events: 2^48 - 16 + 32 = 2^48 + 16
      BOOST_TEST(d.read(perfctr(0)) == 16u);
      BOOST_TEST(d.read(perfctr(1)) == 1u);
      // 2^49 more events (2^43 cycles x 64): two more carries, counter 0 back at 16.
      d.run(seg(1ULL << 43, {{"amd.0x003.0x1F", 64}}));
      BOOST_TEST(d.read(perfctr(0)) == 16u);
      BOOST_TEST(d.read(perfctr(1)) == 3u);
      // Without EN in the partner there is no pairing: it stays, counter 0 wraps alone.
      d.write(evtsel(1), MERGE);
      d.run(seg(1, {{"amd.0x003.0x1F", 8}}));
      d.write(perfctr(0), TWO48 - 1);
      d.run(seg(1, {{"amd.0x003.0x1F", 1}}));
      BOOST_TEST(d.read(perfctr(0)) == 0u);
      BOOST_TEST(d.read(perfctr(1)) == 3u);
    }
  }
  // Before Zen the merge event pairs nothing (family 15h: 0xFFF is no event).
  AmdDevice f15(dump_cpu("amd-fam15h.txt"));
  f15.write(perf_ctr(0), TWO48 - 1);
  f15.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN);
  f15.write(perf_ctl(1), MERGE | EN);
  f15.run(seg(2, {{"instructions", 1}}));
  BOOST_TEST(f15.read(perf_ctr(0)) == 1u);
  BOOST_TEST(f15.read(perf_ctr(1)) == 0u);
}

BOOST_AUTO_TEST_CASE(item11_zen_merge_events_through_the_backend) {
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  using V = std::vector<unsigned>;
  // Even counters with an odd neighbour: 0, 2, 4 (six counters); never 1.
  BOOST_TEST(hal.encode("RETIRED_SSE_AVX_FLOPS").counters == V({0, 2, 4}), boost::test_tools::per_element());
  pmc::Hal kvm = pmc::Hal::open(config_for("amd-zen4-kvm.txt"));
  BOOST_TEST(kvm.encode("RETIRED_SSE_AVX_FLOPS").counters == V({0, 2}), boost::test_tools::per_element());

  // A session: the scheduler gives the pair the first even counter, 0, and the driver programs
  // counter 1 with the merge event 0xF_0000_00FF | EN = 0xF_0040_00FF [5.3 item 5]; the four
  // other events take counters 2-5.
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_AVX_FLOPS");
  s.add("instructions");
  s.add("cycles");
  s.add("branches");
  s.add("branch-misses");
  try {
    // no free pair left for all six at once (a group); a plain add would be multiplexed
    s.add_group({"RETIRED_SSE_AVX_FLOPS", "instructions", "cycles", "branches", "branch-misses",
                 "RETIRED_SSE_AVX_FLOPS:MULT_FLOPS"});
    BOOST_ERROR("a second pair was scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
  }
  s.start();
  pmc::Device& d = pmc_test::device(s);
  // RETIRED_SSE_AVX_FLOPS:ANY = 0x003 | unit mask 0x1F | USR | OS = 0x0003_1F03 [3.1].
  BOOST_TEST(d.read(perf_ctl(0)) == (0x0003'1F03ULL | EN));
  BOOST_TEST(d.read(perf_ctl(1)) == 0xF'0040'00FFULL);
  BOOST_TEST(d.read(GlobalCtl) == 0x3Fu);  // counters 0-5 all in use (1 as the partner)
  d.run(seg(1000, {{"amd.0x003.0x1F", 16}, {"instructions", 2}}));
  s.stop();
  BOOST_TEST(d.read(perf_ctl(1)) == 0xF'0000'00FFULL);  // the merge event stays, without EN
  BOOST_TEST(d.read(GlobalCtl) == 0u);
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").counter == 0u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").value == 16'000u);
  BOOST_TEST(reading(rs, "instructions").counter == 2u);
  BOOST_TEST(reading(rs, "instructions").value == 2'000u);
  BOOST_TEST(reading(rs, "cycles").value == 1'000u);

  // Item 11 as written: the event on counter 2 takes counter 3 with 0xF_0000_00FF | EN. The
  // driver called directly with that assignment, on a fresh model.
  const pmc_test::LoadedForTest amd = pmc_test::LoadedForTest::of(hal);
  const pmc::PmuContext ctx = pmc_test::LoadedForTest::context(hal);
  const pmc::Encoding flops = hal.encode("RETIRED_SSE_AVX_FLOPS");
  const std::vector<pmc::Assignment> set{{&hal.pmu().counters.at(2), &flops}};
  AmdDevice g(genoa_cpu());
  g.write(perf_ctr(3), 123);  // left over: program() clears it
  amd->program(g, ctx, set);
  BOOST_TEST(g.read(GlobalCtl) == 0u);
  BOOST_TEST(g.read(perf_ctl(2)) == 0x0003'1F03ULL);
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0000'00FFULL);
  BOOST_TEST(g.read(perf_ctr(3)) == 0u);
  amd->start(g, ctx, set);
  BOOST_TEST(g.read(perf_ctl(2)) == (0x0003'1F03ULL | EN));
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0040'00FFULL);
  BOOST_TEST(g.read(GlobalCtl) == 0xCu);  // counters 2 and 3
  amd->stop(g, ctx, set);
  BOOST_TEST(g.read(GlobalCtl) == 0u);
  BOOST_TEST(g.read(perf_ctl(2)) == 0x0003'1F03ULL);
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0000'00FFULL);
}

BOOST_AUTO_TEST_CASE(the_backend_reads_and_writes_a_pair_as_one_value) {
  // The driver's view of a merged pair: N + 2^48 (N+1) [5.3 item 5], on the model's registers.
  pmc_test::LoadedForTest amd("amd");
  const pmc::CpuInfo cpu = genoa_cpu();
  const pmc::PmuInfo pmu = amd.pmu(cpu);
  const pmc::PmuContext ctx = amd.context(cpu, pmu);
  AmdDevice d(cpu);
  d.write(perf_ctl(0), 0x03 | umask(0x1F) | USR | OS | EN);
  d.write(perf_ctl(1), MERGE | EN);
  d.write(perf_ctr(0), TWO48 - 16);
  d.run(seg(4, {{"amd.0x003.0x1F", 8}}));  // as above: counter 0 = 16, counter 1 = 1
  BOOST_TEST(amd->read_counter(d, ctx, pmu.counters.at(0)) == TWO48 + 16);
  // 2^48 * 5 + 7: counter 1 = 5, counter 0 = 7.
  amd->write_counter(d, ctx, pmu.counters.at(0), 5 * TWO48 + 7);
  BOOST_TEST(d.read(perf_ctr(0)) == 7u);
  BOOST_TEST(d.read(perf_ctr(1)) == 5u);
  // Without the merge event in counter 1, counter 0 is a plain 48-bit counter.
  d.write(perf_ctl(1), 0);
  BOOST_TEST(amd->read_counter(d, ctx, pmu.counters.at(0)) == 7u);
}
