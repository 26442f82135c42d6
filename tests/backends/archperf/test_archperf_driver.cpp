// The archperf driver against a register file that knows only the registers PmuInfo declares
// (a #GP for anything else), recording every write: the programming sequence of version 1
// (per-counter EN) and version 2+ (global control), IA32_FIXED_CTR_CTRL fields, counter presets
// (32-bit sign-extended writes, full-width aliases), and scheduling with fixed counters.
// Expected values come from the fact sheet (docs/hardware/archperf.md sections 2-4), not from runs.
#define BOOST_TEST_MODULE archperf_driver
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/register_file.hpp>
#include <pmc/schedule.hpp>
#include <pmc/session.hpp>

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Write = std::pair<std::uint32_t, std::uint64_t>;

struct Regs final : pmc::RegisterFile {
  std::map<std::uint32_t, std::uint64_t> regs;
  std::vector<Write> writes;
  explicit Regs(const pmc::PmuInfo& pmu, std::uint64_t perf_capabilities = 0) {
    for (std::uint32_t r : pmu.registers) regs[r] = 0;
    if (regs.count(0x345)) regs[0x345] = perf_capabilities;
    if (regs.count(0x38F)) regs[0x38F] = (1ull << pmu.general_count()) - 1;  // reset: GP enables set
  }
  std::uint64_t& at(std::uint32_t msr) {
    auto it = regs.find(msr);
    if (it == regs.end()) throw pmc::Error(pmc::errc::register_fault, fmt::format("#GP: MSR 0x{:X}", msr));
    return it->second;
  }
  std::uint64_t read(std::uint32_t msr) override { return at(msr); }
  void write(std::uint32_t msr, std::uint64_t v) override {
    at(msr) = v;
    writes.emplace_back(msr, v);
  }
  std::uint64_t rdpmc(std::uint32_t) override { throw pmc::Error(pmc::errc::register_fault, "#GP: RDPMC"); }
};

pmc::Hal open(const std::string& path) {
  pmc::Config cfg;
  cfg.cpu = path;
  return pmc::Hal::open(cfg);
}
std::string test_dump(const char* name) { return std::string(PMC_TEST_DATA) + "/cpuid/" + name; }
std::string bundled(const char* name) { return std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + name; }

// The Hal's backend driver, called as a session of the Hal calls it: with the Hal's CPU, PMU and
// catalog as its context.
struct Driver {
  pmc_test::LoadedForTest loaded;
  pmc::PmuContext ctx;
  explicit Driver(const pmc::Hal& hal)
      : loaded(pmc_test::LoadedForTest::of(hal)), ctx(pmc_test::LoadedForTest::context(hal)) {}
  const pmc::Backend& backend() const { return loaded.backend(); }
};

// Encodes events and assigns them with the core scheduler, as Session::add does.
struct Set {
  std::vector<pmc::Encoding> enc;
  std::vector<pmc::Assignment> assignments;
  Set(const pmc::Hal& hal, const std::vector<std::string>& events) {
    for (const auto& e : events) enc.push_back(hal.encode(e));
    const auto slots = pmc::schedule(hal.pmu(), enc);
    for (std::size_t i = 0; i < enc.size(); ++i) assignments.push_back({&hal.pmu().counters[slots[i]], &enc[i]});
  }
};

std::string show(const std::vector<Write>& w) {
  std::string s;
  for (const auto& [msr, v] : w) s += fmt::format("0x{:X}=0x{:X} ", msr, v);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(version_1_starts_and_stops_each_counter_with_its_enable_bit) {
  pmc::Hal hal = open(test_dump("archperf-v1-yonah.txt"));
  const Driver d(hal);
  const pmc::Backend& b = d.backend();
  Set set(hal, {"instructions:u", "branches"});
  Regs regs(hal.pmu());
  b.program(regs, d.ctx, set.assignments);
  // Selects without EN (bit 22): 0x0001_00C0 and 0x0003_00C4 (fact sheet 3).
  const std::vector<Write> program = {{0x186, 0x100C0}, {0x187, 0x300C4}};
  BOOST_TEST(regs.writes == program, show(regs.writes));
  regs.writes.clear();
  b.start(regs, d.ctx, set.assignments);
  const std::vector<Write> start = {{0x186, 0x4100C0}, {0x187, 0x4300C4}};
  BOOST_TEST(regs.writes == start, show(regs.writes));
  regs.writes.clear();
  b.stop(regs, d.ctx, set.assignments);
  BOOST_TEST(regs.writes == program, show(regs.writes));
}

BOOST_AUTO_TEST_CASE(version_1_leaves_an_unused_counter_disabled) {
  pmc::Hal hal = open(test_dump("archperf-v1-yonah.txt"));
  Set set(hal, {"LLC_MISSES"});
  Regs regs(hal.pmu());
  regs.regs[0x187] = 0x4300C0;  // left enabled by someone else
  const Driver d(hal);
  d.backend().program(regs, d.ctx, set.assignments);
  BOOST_TEST(regs.regs[0x186] == 0x3412Eu);
  BOOST_TEST(regs.regs[0x187] == 0u);
}

BOOST_AUTO_TEST_CASE(version_2_programs_with_global_control_off_then_starts_globally) {
  pmc::Hal hal = open(bundled("core2.txt"));
  const Driver d(hal);
  const pmc::Backend& b = d.backend();
  // instructions -> FIXED_CTR0 (user+kernel: field 3), cycles:u -> FIXED_CTR1 (USR: field 2),
  // ref-cycles:k -> FIXED_CTR2 (OS: field 1), two general events on PMC0 and PMC1.
  Set set(hal, {"instructions", "cycles:u", "ref-cycles:k", "branches", "LLC_MISSES:c=1"});
  Regs regs(hal.pmu(), 1ull << 13);
  b.program(regs, d.ctx, set.assignments);
  const std::vector<Write> program = {
      {0x38F, 0},                  // GLOBAL_CTRL off: its reset value enables PMC0/1
      {0x186, 0x4300C4},           // PERFEVTSEL0: branches with EN
      {0x187, 0x0143412E},         // PERFEVTSEL1: LLC misses, CMASK 1, EN
      {0x38D, 0x3 | 0x2 << 4 | 0x1 << 8},  // FIXED_CTR_CTRL = 0x123
      {0x390, 0x7'0000'0003},      // OVF_CTRL: clear the status bits of PMC0-1, FIXED0-2
  };
  BOOST_TEST(regs.writes == program, show(regs.writes));
  regs.writes.clear();
  b.start(regs, d.ctx, set.assignments);
  const std::vector<Write> start = {{0x38F, 0x7'0000'0003}};  // EN_PMC0-1 | EN_FIXED0-2 (bits 32-34)
  BOOST_TEST(regs.writes == start, show(regs.writes));
  regs.writes.clear();
  b.stop(regs, d.ctx, set.assignments);
  const std::vector<Write> stop = {{0x38F, 0}};
  BOOST_TEST(regs.writes == stop, show(regs.writes));
}

BOOST_AUTO_TEST_CASE(anythread_reaches_the_fixed_control_field_on_version_3) {
  pmc::Hal hal = open(test_dump("archperf-v3-nehalem.txt"));
  Set set(hal, {"cycles:t", "instructions:k:t"});
  Regs regs(hal.pmu());
  const Driver d(hal);
  d.backend().program(regs, d.ctx, set.assignments);
  // FIXED_CTR1 field (bits 7:4) = OS|USR|AnyThread = 7; FIXED_CTR0 (3:0) = OS|AnyThread = 5.
  BOOST_TEST(regs.regs[0x38D] == 0x75u);
  BOOST_TEST(regs.regs[0x186] == 0u);  // no general counter used
}

BOOST_AUTO_TEST_CASE(fixed_counters_are_preferred_and_general_counters_stay_free) {
  // Nehalem: 4 general + 3 fixed counters hold 7 events when three of them can go fixed.
  pmc::Hal hal = open(test_dump("archperf-v3-nehalem.txt"));
  Set set(hal, {"instructions", "LLC_REFERENCES", "cycles", "LLC_MISSES", "ref-cycles", "branches", "branch-misses"});
  std::vector<std::string> where;
  for (const auto& a : set.assignments)
    where.push_back(fmt::format("{}{}", a.counter->kind == pmc::CounterKind::fixed ? "fixed " : "", a.counter->index));
  const std::vector<std::string> expected = {"fixed 0", "0", "fixed 1", "1", "fixed 2", "2", "3"};
  BOOST_TEST(where == expected, boost::test_tools::per_element());
  // An eighth event that needs a general counter has none left: the error names the competitors
  // (a raw event, which has no catalog entry, by its string).
  std::vector<pmc::Encoding> more = set.enc;
  more.push_back(hal.encode("r01C2"));
  try {
    (void)pmc::schedule(hal.pmu(), more);
    BOOST_ERROR("eight events scheduled on seven counters");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::no_counter);
    BOOST_TEST(std::string(e.what()).find("r01C2") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("compete for counters 0, 1, 2, 3 (4 available)") != std::string::npos, e.what());
  }
  // instructions:e=1 cannot use the fixed counter, so it competes for the general ones too.
  BOOST_CHECK_THROW(Set(hal, {"instructions:e=1", "LLC_REFERENCES", "LLC_MISSES", "branches", "branch-misses"}), pmc::Error);
  BOOST_CHECK_NO_THROW(Set(hal, {"instructions", "LLC_REFERENCES", "LLC_MISSES", "branches", "branch-misses"}));
}

BOOST_AUTO_TEST_CASE(version_1_has_only_its_two_general_counters) {
  pmc::Hal hal = open(test_dump("archperf-v1-yonah.txt"));
  BOOST_CHECK_NO_THROW(Set(hal, {"instructions", "cycles"}));
  try {
    Set(hal, {"instructions", "cycles", "branches"});
    BOOST_ERROR("three events on two counters");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::no_counter);
    BOOST_TEST(std::string(e.what()).find("INSTRUCTION_RETIRED") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(only_the_fixed_counters_the_cpu_has) {
  // The guest has fixed counters 0 and 2 (v5 bitmap), not 1: cycles takes a general counter.
  pmc::Hal hal = open(test_dump("archperf-v5-guest.txt"));
  Set set(hal, {"cycles", "instructions", "ref-cycles", "LLC_REFERENCES"});
  BOOST_TEST((set.assignments[0].counter->kind == pmc::CounterKind::general));
  BOOST_TEST((set.assignments[1].counter->kind == pmc::CounterKind::fixed));
  BOOST_TEST(set.assignments[1].counter->index == 0u);
  BOOST_TEST((set.assignments[2].counter->kind == pmc::CounterKind::fixed));
  BOOST_TEST(set.assignments[2].counter->index == 2u);
  Regs regs(hal.pmu());
  const Driver d(hal);
  d.backend().program(regs, d.ctx, set.assignments);
  BOOST_TEST(regs.regs[0x38D] == 0x303u);  // fields of FIXED_CTR0 and FIXED_CTR2 only
  d.backend().start(regs, d.ctx, set.assignments);
  BOOST_TEST(regs.regs[0x38F] == 0x5'0000'0003u);  // PMC0, PMC1, FIXED0 (bit 32), FIXED2 (bit 34)
}

BOOST_AUTO_TEST_CASE(general_counter_presets_sign_extend_or_use_the_full_width_alias) {
  pmc::Hal hal = open(bundled("core2.txt"));  // 40-bit counters, PDCM set
  const Driver d(hal);
  const pmc::Backend& b = d.backend();
  const pmc::CounterInfo& pmc0 = *hal.pmu().general(0);
  {
    Regs regs(hal.pmu(), 1ull << 13);  // IA32_PERF_CAPABILITIES.FW_WRITE
    b.write_counter(regs, d.ctx, pmc0, 0x7FFFFFFF);          // positive 32-bit value: as is
    b.write_counter(regs, d.ctx, pmc0, (1ull << 40) - 5);    // -5 in 40 bits: sign extension of 0xFFFFFFFB
    b.write_counter(regs, d.ctx, pmc0, 0x1'8000'0000);       // needs bit 32 without bit 31's extension
    const std::vector<Write> expected = {{0xC1, 0x7FFFFFFF}, {0xC1, 0xFFFFFFFB}, {0x4C1, 0x1'8000'0000}};
    BOOST_TEST(regs.writes == expected, show(regs.writes));
  }
  {
    Regs regs(hal.pmu(), 0);  // FW_WRITE clear: the value cannot be preset
    try {
      b.write_counter(regs, d.ctx, pmc0, 0x1'8000'0000);
      BOOST_ERROR("preset without full-width writes");
    } catch (const pmc::Error& e) {
      BOOST_TEST(e.kind() == pmc::errc::invalid_argument);
      BOOST_TEST(std::string(e.what()).find("32 bits sign-extended") != std::string::npos, e.what());
    }
    BOOST_TEST(regs.writes.empty());
  }
  {
    pmc::Hal guest = open(test_dump("archperf-v5-guest.txt"));  // no PDCM: no 0x345 at all
    const pmc::PmuContext guest_ctx = pmc_test::LoadedForTest::context(guest);
    Regs regs(guest.pmu());
    BOOST_CHECK_THROW(b.write_counter(regs, guest_ctx, *guest.pmu().general(1), 1ull << 40), pmc::Error);
    b.write_counter(regs, guest_ctx, *guest.pmu().general(1), (1ull << 48) - 1);  // -1: 0xFFFFFFFF sign-extended
    const std::vector<Write> expected = {{0xC2, 0xFFFFFFFF}};
    BOOST_TEST(regs.writes == expected, show(regs.writes));
  }
}

BOOST_AUTO_TEST_CASE(fixed_counter_presets_are_full_width_within_the_width) {
  pmc::Hal hal = open(bundled("core2.txt"));
  const Driver d(hal);
  const pmc::Backend& b = d.backend();
  Regs regs(hal.pmu());
  b.write_counter(regs, d.ctx, *hal.pmu().fixed(1), 0xAB'1234'5678);    // 40 bits: written directly
  b.write_counter(regs, d.ctx, *hal.pmu().fixed(2), (1ull << 41) | 7);  // bits above 40 never written
  const std::vector<Write> expected = {{0x30A, 0xAB'1234'5678}, {0x30B, 7}};
  BOOST_TEST(regs.writes == expected, show(regs.writes));
  regs.regs[0x30A] = 0xFFFF'FFFF'FFFF;
  BOOST_TEST(b.read_counter(regs, d.ctx, *hal.pmu().fixed(1)) == 0xFF'FFFF'FFFFu);  // masked to 40 bits
}

BOOST_AUTO_TEST_CASE(the_driver_touches_only_declared_registers) {
  // Every bundled archperf dump and every test dump: a full program/start/stop/preset cycle on a
  // register file that faults on anything PmuInfo::registers does not list.
  for (const std::string& path : {bundled("core2.txt"), bundled("intel-icelake.txt"), test_dump("archperf-v1-yonah.txt"),
                                  test_dump("archperf-v2-penryn.txt"), test_dump("archperf-v3-nehalem.txt"),
                                  test_dump("archperf-v4-skylake.txt"), test_dump("archperf-v5-guest.txt"),
                                  test_dump("archperf-hybrid-adl.txt"), test_dump("archperf-hybrid-mtl.txt")}) {
    BOOST_TEST_CONTEXT(path) {
      pmc::Hal hal = open(path);
      const Driver d(hal);
  const pmc::Backend& b = d.backend();
      Set set(hal, hal.pmu().counters.size() >= 4 ? std::vector<std::string>{"instructions", "cycles", "ref-cycles", "branches"}
                                                  : std::vector<std::string>{"instructions", "branches"});
      Regs regs(hal.pmu(), 1ull << 13);
      BOOST_CHECK_NO_THROW(b.program(regs, d.ctx, set.assignments));
      for (const auto& a : set.assignments) BOOST_CHECK_NO_THROW(b.write_counter(regs, d.ctx, *a.counter, 0));
      BOOST_CHECK_NO_THROW(b.start(regs, d.ctx, set.assignments));
      BOOST_CHECK_NO_THROW(b.stop(regs, d.ctx, set.assignments));
      // Stopped means stopped: no EN left in a version 1 select, GLOBAL_CTRL 0 otherwise.
      if (regs.regs.count(0x38F)) BOOST_TEST(regs.regs[0x38F] == 0u);
      else
        for (const auto& c : hal.pmu().counters) BOOST_TEST((regs.regs[c.control_msr] & (1ull << 22)) == 0u);
    }
  }
}
