#define BOOST_TEST_MODULE alpha_backend
#include <boost/test/unit_test.hpp>

// The alpha21064_sim backend through the HAL: chosen by name only, golden encodings of every
// event (ICCSR images computed by hand from docs/hardware/alpha21064.md section 2 and 3),
// `period=`, sessions whose counts are interrupts x interval on the emulated chip, the checks
// of the conformance kit (which never reaches this backend: no CPUID dump matches it), and the
// `pmc` command with no change for this backend.

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/device.hpp"
#include "support/pmc_command.hpp"

namespace {

namespace fs = std::filesystem;
using pmc::errc;
using u64 = std::uint64_t;

const fs::path kDumps = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";

pmc::Config alpha_config(const std::string& dump = "pentium-iii.txt") {
  pmc::Config cfg;
  cfg.cpu = (kDumps / dump).string();
  cfg.backend = "alpha21064_sim";
  return cfg;
}

pmc::Hal alpha() { return pmc::Hal::open(alpha_config()); }

// Runs a workload through the session's emulated chip (Session::run: chunks for the session's
// own counter widths, 64 bits here).
void run(pmc::Session& s, const std::string& toml) {
  auto w = pmc::parse_workload(toml, "inline.toml");
  s.run(w);
}

// The emulated CPU runs a workload whatever the session does: a stopped session does not count
// it (Session::run would start the session for the run).
void run_while_stopped(pmc::Session& s, const std::string& toml) {
  BOOST_REQUIRE(!s.running());
  const auto w = pmc::parse_workload(toml, "inline.toml");
  for (std::size_t i = 0; i < w.size(); ++i) pmc_test::device(s).run(w.segment(i));
}

// The same, in the chunks a `width`-bit counter would need (each at most 2^(width-1) - 1 events
// of a counter), polling the session after each, as Session::run does for its own widths.
void run_in_chunks(pmc::Session& s, const std::string& toml, unsigned width) {
  const auto w = pmc::parse_workload(toml, "inline.toml");
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  pmc::Device& device = pmc_test::device(s);
  for (std::size_t i = 0; i < w.size(); ++i) {
    pmc::Segment piece = w.segment(i);
    std::uint64_t rate = 0;
    for (const auto& c : piece.signals) rate += c.per_cycle;
    const std::uint64_t chunk = budget / std::max<std::uint64_t>(rate, 1);
    BOOST_REQUIRE(chunk > 0);
    for (std::uint64_t left = w.segment(i).cycles; left > 0; left -= piece.cycles) {
      piece.cycles = std::min(left, chunk);
      device.run(piece);
      s.poll();
    }
  }
}

errc error_of(const pmc::Hal& hal, const std::string& event, std::string* message = nullptr) {
  try {
    (void)hal.encode(event);
  } catch (const pmc::Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return errc::ok;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Probe and geometry.

BOOST_AUTO_TEST_CASE(probe_never_matches_and_says_why) {
  for (const auto& e : fs::directory_iterator(kDumps)) {
    if (e.path().extension() != ".txt") continue;
    pmc::Config cfg;
    cfg.cpu = e.path().string();
    pmc::Hal hal = pmc::Hal::open(cfg);
    BOOST_TEST_CONTEXT(e.path().filename()) {
      bool seen = false;
      for (const auto& c : hal.candidates()) {
        if (c.backend != "alpha21064_sim") continue;
        seen = true;
        BOOST_TEST(c.match.score == 0);
        BOOST_TEST(contains(c.match.reason, "never matches a real CPU"), c.match.reason);
        BOOST_TEST(contains(c.match.reason, "backend = \"alpha21064_sim\""), c.match.reason);
      }
      BOOST_TEST(seen);
      BOOST_TEST((!hal.backend() || hal.backend()->name != "alpha21064_sim"));
    }
  }
}

BOOST_AUTO_TEST_CASE(chosen_by_name) {
  pmc::Hal hal = alpha();
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.backend()->name == "alpha21064_sim");
  BOOST_TEST(contains(hal.why(), "backend = \"alpha21064_sim\""), hal.why());
  BOOST_TEST(contains(hal.why(), "no match"), hal.why());
  const pmc::PmuInfo& pmu = hal.pmu();
  BOOST_TEST(pmu.name == "alpha21064_sim");
  BOOST_TEST(pmu.device_model == "alpha21064");
  BOOST_TEST(pmu.cpu_tag == "ev4");
  BOOST_REQUIRE(pmu.counters.size() == 2u);
  for (unsigned i = 0; i < 2; ++i) {
    BOOST_TEST((pmu.counters[i].kind == pmc::CounterKind::general));
    BOOST_TEST(pmu.counters[i].index == i);
    BOOST_TEST(pmu.counters[i].width == 64u);  // the interrupt count x interval, see the backend
    BOOST_TEST(pmu.counters[i].control_msr == 0u);
    BOOST_TEST(pmu.counters[i].counter_msr == i + 1);
  }
  BOOST_TEST(hal.access() == "sim");
  BOOST_TEST(hal.events().validate(pmu.general_count()).empty());
  BOOST_TEST(hal.events().for_cpu(pmu.cpu_tag).size() == 17u);
}

// ---------------------------------------------------------------------------------------------
// Golden encodings. ICCSR write format (sheet 2): PC1 bit 0, PC0 bit 3, MUX0 bits 11:8, MUX1 bits
// 34:32. MUX values (sheet 3, pfcntr.h). config = MUX << 8 (counter 0) or MUX << 32 (counter 1),
// plus 0x8 (PC0) for period=4096 on counter 0 or 0x1 (PC1) for period=256 on counter 1.

struct Golden {
  const char* event;
  u64 config;
  unsigned counter;
  const char* canonical;
};

// clang-format off
const Golden kGolden[] = {
    // MUX0, counter 0: default period 65536 (PC0 = 0), period=4096 sets PC0.
    {"PF_ISSUES",                  0x000, 0, "alpha21064_sim::PF_ISSUES:period=65536"},      // MUX0 0x0
    {"PF_ISSUES:period=4096",      0x008, 0, "alpha21064_sim::PF_ISSUES:period=4096"},
    {"PF_PIPEDRY",                 0x200, 0, "alpha21064_sim::PF_PIPEDRY:period=65536"},     // MUX0 0x2
    {"PF_PIPEDRY:period=4096",     0x208, 0, "alpha21064_sim::PF_PIPEDRY:period=4096"},
    {"PF_LOADI",                   0x400, 0, "alpha21064_sim::PF_LOADI:period=65536"},       // MUX0 0x4
    {"PF_LOADI:period=4096",       0x408, 0, "alpha21064_sim::PF_LOADI:period=4096"},
    {"PF_PIPEFROZEN",              0x600, 0, "alpha21064_sim::PF_PIPEFROZEN:period=65536"},  // MUX0 0x6
    {"PF_PIPEFROZEN:period=4096",  0x608, 0, "alpha21064_sim::PF_PIPEFROZEN:period=4096"},
    {"PF_BRANCHI",                 0x800, 0, "alpha21064_sim::PF_BRANCHI:period=65536"},     // MUX0 0x8
    {"PF_BRANCHI:period=4096",     0x808, 0, "alpha21064_sim::PF_BRANCHI:period=4096"},
    {"PF_CYCLES",                  0xA00, 0, "alpha21064_sim::PF_CYCLES:period=65536"},      // MUX0 0xA
    {"PF_CYCLES:period=4096",      0xA08, 0, "alpha21064_sim::PF_CYCLES:period=4096"},
    {"PF_PALMODE",                 0xB00, 0, "alpha21064_sim::PF_PALMODE:period=65536"},     // MUX0 0xB
    {"PF_PALMODE:period=4096",     0xB08, 0, "alpha21064_sim::PF_PALMODE:period=4096"},
    {"PF_NONISSUES",               0xC00, 0, "alpha21064_sim::PF_NONISSUES:period=65536"},   // MUX0 0xC
    {"PF_NONISSUES:period=4096",   0xC08, 0, "alpha21064_sim::PF_NONISSUES:period=4096"},
    {"PF_EXTPIN0",                 0xE00, 0, "alpha21064_sim::PF_EXTPIN0:period=65536"},     // MUX0 0xE
    {"PF_EXTPIN0:period=4096",     0xE08, 0, "alpha21064_sim::PF_EXTPIN0:period=4096"},
    // MUX1, counter 1: default period 4096 (PC1 = 0), period=256 sets PC1.
    {"PF_DCACHE",                  0x000000000, 1, "alpha21064_sim::PF_DCACHE:period=4096"},      // MUX1 0
    {"PF_DCACHE:period=256",       0x000000001, 1, "alpha21064_sim::PF_DCACHE:period=256"},
    {"PF_ICACHE",                  0x100000000, 1, "alpha21064_sim::PF_ICACHE:period=4096"},      // MUX1 1
    {"PF_ICACHE:period=256",       0x100000001, 1, "alpha21064_sim::PF_ICACHE:period=256"},
    {"PF_DUAL",                    0x200000000, 1, "alpha21064_sim::PF_DUAL:period=4096"},        // MUX1 2
    {"PF_DUAL:period=256",         0x200000001, 1, "alpha21064_sim::PF_DUAL:period=256"},
    {"PF_BRANCHMISS",              0x300000000, 1, "alpha21064_sim::PF_BRANCHMISS:period=4096"},  // MUX1 3
    {"PF_BRANCHMISS:period=256",   0x300000001, 1, "alpha21064_sim::PF_BRANCHMISS:period=256"},
    {"PF_FPINST",                  0x400000000, 1, "alpha21064_sim::PF_FPINST:period=4096"},      // MUX1 4
    {"PF_FPINST:period=256",       0x400000001, 1, "alpha21064_sim::PF_FPINST:period=256"},
    {"PF_INTOPS",                  0x500000000, 1, "alpha21064_sim::PF_INTOPS:period=4096"},      // MUX1 5
    {"PF_INTOPS:period=256",       0x500000001, 1, "alpha21064_sim::PF_INTOPS:period=256"},
    {"PF_STOREI",                  0x600000000, 1, "alpha21064_sim::PF_STOREI:period=4096"},      // MUX1 6
    {"PF_STOREI:period=256",       0x600000001, 1, "alpha21064_sim::PF_STOREI:period=256"},
    {"PF_EXTPIN1",                 0x700000000, 1, "alpha21064_sim::PF_EXTPIN1:period=4096"},     // MUX1 7
    {"PF_EXTPIN1:period=256",      0x700000001, 1, "alpha21064_sim::PF_EXTPIN1:period=256"},
    // Explicit longer periods, hex values, case, the PMU prefix, generic names.
    {"PF_CYCLES:period=65536",     0xA00, 0, "alpha21064_sim::PF_CYCLES:period=65536"},
    {"PF_CYCLES:period=0x1000",    0xA08, 0, "alpha21064_sim::PF_CYCLES:period=4096"},
    {"pf_cycles",                  0xA00, 0, "alpha21064_sim::PF_CYCLES:period=65536"},
    {"alpha21064_sim::PF_DUAL:period=256", 0x200000001, 1, "alpha21064_sim::PF_DUAL:period=256"},
    {"PF_DCACHE:period=4096",      0x000000000, 1, "alpha21064_sim::PF_DCACHE:period=4096"},
    {"cycles",                     0xA00, 0, "alpha21064_sim::PF_CYCLES:period=65536"},
    {"branches",                   0x800, 0, "alpha21064_sim::PF_BRANCHI:period=65536"},
    {"branch-misses",              0x300000000, 1, "alpha21064_sim::PF_BRANCHMISS:period=4096"},
};
// clang-format on

BOOST_AUTO_TEST_CASE(golden_encodings) {
  pmc::Hal hal = alpha();
  for (const auto& g : kGolden) {
    BOOST_TEST_CONTEXT(g.event) {
      pmc::Encoding e = hal.encode(g.event);
      BOOST_TEST(e.config == g.config);
      BOOST_TEST(e.counters == std::vector<unsigned>{g.counter});
      BOOST_TEST(!e.fixed.has_value());
      BOOST_TEST(e.canonical == g.canonical);
      BOOST_TEST(e.interrupt);
      pmc::Encoding again = hal.encode(e.canonical);
      BOOST_TEST(again.config == e.config);
      BOOST_TEST(again.canonical == e.canonical);
    }
  }
  // Every catalog event is in the table, both periods.
  for (const pmc::EventDef* def : hal.events().for_cpu("ev4")) {
    unsigned seen = 0;
    for (const auto& g : kGolden)
      if (std::string(g.canonical).find("::" + def->name + ":") != std::string::npos) ++seen;
    BOOST_TEST(seen >= 2u, def->name);
  }
}

BOOST_AUTO_TEST_CASE(encoding_errors) {
  pmc::Hal hal = alpha();
  std::string msg;
  BOOST_TEST((error_of(hal, "PF_CYCLES:period=256", &msg) == errc::attribute_value));
  BOOST_TEST(contains(msg, "allowed: 65536, 4096"), msg);
  BOOST_TEST(contains(msg, "column 11"), msg);
  BOOST_TEST((error_of(hal, "PF_DCACHE:period=65536", &msg) == errc::attribute_value));
  BOOST_TEST(contains(msg, "allowed: 4096, 256"), msg);
  BOOST_TEST((error_of(hal, "PF_DCACHE:period=0") == errc::attribute_value));
  BOOST_TEST((error_of(hal, "PF_CYCLES:u") == errc::attribute));            // no privilege filter
  BOOST_TEST((error_of(hal, "PF_CYCLES:c=1") == errc::attribute));
  BOOST_TEST((error_of(hal, "PF_CYCLES:period=4096:period=4096") == errc::attribute));
  BOOST_TEST((error_of(hal, "PF_CYCLES:period") == errc::unit_mask));       // a bare word is a unit mask
  BOOST_TEST((error_of(hal, "PF_NOSUCH", &msg) == errc::not_found));
  BOOST_TEST((error_of(hal, "instructions") == errc::not_found));           // ISSUES is not instructions
  BOOST_TEST((error_of(hal, "p6::PF_CYCLES") == errc::not_found));
}

BOOST_AUTO_TEST_CASE(broken_user_events_are_refused) {
  // A user events file for this backend with an undefined MUX0 (code 0x5) or a counter that
  // does not match the mux: the encoder refuses both rather than program the chip wrongly.
  pmc_test::TempDir tmp("pmc-alpha");
  const fs::path file = tmp.path() / "mine.toml";
  pmc_test::spit(file, R"(backend = "alpha21064_sim"
modifiers = ["period"]
[[event]]
name = "MY_UNDEFINED"
code = 0x5
counters = [0]
desc = "MUX0 5 is defined by no source"
[[event]]
name = "MY_MISPLACED"
code = 0x13
counters = [0]
desc = "a MUX1 select on counter 0"
[[event]]
name = "MY_CYCLES"
code = 0xA
counters = [0]
desc = "the same as PF_CYCLES"
)");
  pmc::Config cfg = alpha_config();
  cfg.events_path = {file};
  pmc::Hal hal = pmc::Hal::open(cfg);
  std::string msg;
  BOOST_TEST((error_of(hal, "MY_UNDEFINED", &msg) == errc::invalid_argument));
  BOOST_TEST(contains(msg, "MUX0"), msg);
  BOOST_TEST((error_of(hal, "MY_MISPLACED", &msg) == errc::invalid_argument));
  BOOST_TEST(contains(msg, "counter 1"), msg);
  BOOST_TEST(hal.encode("MY_CYCLES:period=4096").config == 0xA08u);
}

// ---------------------------------------------------------------------------------------------
// Sessions on the emulated chip: counts are interrupts x interval.

BOOST_AUTO_TEST_CASE(session_counts_interrupts_times_interval) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES");
  s.start();
  run(s, "[[segment]]\ncycles = 196613\n");  // 3 x 65,536 + 5 (sheet 5.1)
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 3u * 65536);
  BOOST_TEST(r.at(0).counter == 0u);
  BOOST_TEST(r.at(0).canonical == "alpha21064_sim::PF_CYCLES:period=65536");
  BOOST_TEST(pmc_test::device(s).interrupts() == 3u);
  BOOST_TEST(pmc_test::device(s).name() == "alpha21064");
}

BOOST_AUTO_TEST_CASE(session_both_counters_and_periods) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  // 10,000 cycles with 3 D-cache misses each: 10,000 / 4096 = 2 interrupts -> 8192;
  // 30,000 / 256 = 117 interrupts -> 29,952.
  run(s, "[[segment]]\ncycles = 10000\nsignals = { l1d-misses = 3 }\n");
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 8192u);
  BOOST_TEST(r.at(1).value == 29952u);
  BOOST_TEST(r.at(1).counter == 1u);
  // The driver's ICCSR: MUX0 0xA + PC0, MUX1 0 + PC1, nothing disabled.
  BOOST_TEST(pmc_test::device(s).read(0) == 0xA09u);
}

BOOST_AUTO_TEST_CASE(session_disables_the_unused_counter) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_STOREI:period=256");
  s.start();
  run(s, "[[segment]]\ncycles = 70000\nsignals = { stores = 1 }\n");
  s.stop();
  BOOST_TEST(s.read().at(0).value == 273u * 256);  // 70,000 / 256 = 273
  // ICCSR: MUX1 6 at bits 34:32, PC1, and bit 35 (counter 0 unused: disabled). Counter 0 still
  // counts its MUX0 0 (ISSUES: none here), so nothing is dismissed.
  BOOST_TEST(pmc_test::device(s).read(0) == (0x600000001ULL | (1ULL << 35)));
  BOOST_TEST(pmc_test::device(s).read(1) == 0u);  // COUNT0: counter 0's interrupt count
}

BOOST_AUTO_TEST_CASE(session_same_counter_twice_is_refused) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES");
  try {
    s.add_group({"PF_CYCLES", "PF_LOADI"});  // at once; two adds would take turns on counter 0
    BOOST_ERROR("two MUX0 events were scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter));
  }
  BOOST_CHECK_NO_THROW(s.add("PF_INTOPS"));  // counter 1 is free
  BOOST_TEST(s.encodings().size() == 2u);
}

BOOST_AUTO_TEST_CASE(session_stop_start_and_reset) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.start();
  run(s, "[[segment]]\ncycles = 10000\n");      // 2 interrupts, 1808 cycles pending
  s.stop();
  run_while_stopped(s, "[[segment]]\ncycles = 100000\n");  // stopped: nothing
  BOOST_TEST(s.read().at(0).value == 8192u);
  s.reset();                                    // clears the count; the interval carries on
  BOOST_TEST(s.read().at(0).value == 0u);
  s.start();
  run(s, "[[segment]]\ncycles = 2288\n");       // 1808 + 2288 = 4096: one interrupt
  s.stop();
  BOOST_TEST(s.read().at(0).value == 4096u);
}

BOOST_AUTO_TEST_CASE(session_through_narrow_chunks) {
  // pmc stat chunks a workload by the narrowest counter width (64 here); a 12-bit chunking, as
  // a session folding at the hardware widths would need, gives the same counts.
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DUAL:period=256");
  s.start();
  run_in_chunks(s, "[[segment]]\ncycles = 1000000\nsignals = { issues = 2 }\n", 12);
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 244u * 4096);   // 1,000,000 / 4096 = 244
  BOOST_TEST(r.at(1).value == 3906u * 256);   // 1,000,000 / 256 = 3906
}

BOOST_AUTO_TEST_CASE(conformance_checks_for_this_backend) {
  // The conformance kit (tools/conformance) runs these for backends a CPUID dump matches; this one is never
  // matched, so the same checks run here with the backend named.
  pmc::Hal hal = alpha();
  const pmc::PmuInfo& pmu = hal.pmu();
  for (const auto& c : pmu.counters) {
    BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.counter_msr) != pmu.registers.end()));
    BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.control_msr) != pmu.registers.end()));
  }
  for (const auto& problem : hal.events().validate(pmu.general_count())) BOOST_ERROR(problem);
  for (const pmc::EventDef* e : hal.events().for_cpu(pmu.cpu_tag)) {
    BOOST_TEST_CONTEXT(e->name) {
      pmc::Encoding a = hal.encode(e->name);
      pmc::Encoding b = hal.encode(e->name);
      BOOST_TEST(a.config == b.config);
      pmc::Encoding c = hal.encode(a.canonical);
      BOOST_TEST(c.config == a.config);
      BOOST_TEST(c.canonical == a.canonical);
      pmc::Session s = hal.session();
      s.add(e->name);
      BOOST_CHECK_NO_THROW(s.start());
      BOOST_CHECK_NO_THROW(run(s, "[[segment]]\ncycles = 300000\nsignals = { issues = 1, loads = 1 }\n"));
      BOOST_CHECK_NO_THROW(s.stop());
      std::vector<pmc::Reading> r;
      BOOST_CHECK_NO_THROW(r = s.read());
      const u64 period = a.counters.at(0) == 0 ? 65536 : 4096;
      BOOST_TEST(r.at(0).value % period == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(bundled_counters_workload) {
  // examples/workloads/alpha-counters.toml, worked out in its comments.
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  auto w = pmc::load_workload(fs::path(PMC_SOURCE_DIR) / "examples" / "workloads" / "alpha-counters.toml");
  s.run(w);
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).value == 278528u);
  BOOST_TEST(r.at(1).value == 12288u);
  pmc::Session t = hal.session();
  t.add("PF_ISSUES");
  t.add("PF_DUAL:period=256");
  t.start();
  t.run(w);
  t.stop();
  r = t.read();
  BOOST_TEST(r.at(0).value == 4u * 65536);   // 270,341 ISSUES
  BOOST_TEST(r.at(1).value == 1024u * 256);  // 262,149 dual-issue cycles
}

// ---------------------------------------------------------------------------------------------
// The pmc command, unchanged.

namespace {

using Cli = pmc_test::PmcCommand;

}  // namespace

BOOST_FIXTURE_TEST_CASE(pmc_encode_with_the_backend_named, Cli) {
  auto r = pmc({"encode", "--backend", "alpha21064_sim", "PF_CYCLES:period=4096"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "config=0xA08"), r);
  BOOST_TEST(contains(r.out, "counters=0"), r);
  BOOST_TEST(contains(r.out, "alpha21064_sim::PF_CYCLES:period=4096"), r);

  r = pmc({"encode", "--backend", "alpha21064_sim", "--json", "PF_STOREI:period=256", "PF_DCACHE:period=100"});
  BOOST_TEST(r.status == 1, r);
  auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at(0).at("config") == "0x600000001");
  BOOST_TEST(j.at(0).at("granularity") == 256);  // counts in steps of the interrupt interval
  BOOST_TEST(contains(j.at(1).at("error").get<std::string>(), "allowed: 4096, 256"), r);
}

BOOST_FIXTURE_TEST_CASE(pmc_probe_list_and_stat, Cli) {
  auto r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--json"});
  BOOST_TEST(r.status == 0, r);
  auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& c : j.at("candidates"))
    if (c.at("backend") == "alpha21064_sim") {
      seen = true;
      BOOST_TEST(c.at("score") == 0);
    }
  BOOST_TEST(seen, r);

  r = pmc({"list", "--backend", "alpha21064_sim"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "PF_EXTPIN1"), r);

  r = pmc({"stat", "--backend", "alpha21064_sim", "--workload", "alpha-counters", "-e",
           "PF_CYCLES:period=4096,PF_DCACHE:period=256", "--json"});
  BOOST_TEST(r.status == 0, r);
  j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at("backend") == "alpha21064_sim");
  BOOST_TEST(j.at("cycles") == 278533);
  BOOST_TEST(j.at("counters").at(0).at("value") == 278528);
  BOOST_TEST(j.at("counters").at(1).at("value") == 12288);
  BOOST_TEST(j.at("interrupts") == 68 + 48);
}

BOOST_AUTO_TEST_CASE(readings_carry_the_interrupt_interval_as_granularity) {
  pmc::Hal hal = alpha();
  pmc::Session s = hal.session();
  s.add("PF_CYCLES:period=4096");
  s.add("PF_DCACHE:period=256");
  s.start();
  run(s, "[[segment]]\ncycles = 10000\nsignals = { l1d-misses = 1 }\n");
  s.stop();
  auto r = s.read();
  BOOST_TEST(r.at(0).granularity == 4096u);
  BOOST_TEST(r.at(1).granularity == 256u);
  BOOST_TEST(r.at(0).value == 2u * 4096u);  // 10000 cycles: two interrupts of 4096
  BOOST_TEST(r.at(1).value == 39u * 256u);  // 10000 misses: 39 interrupts of 256
}

BOOST_FIXTURE_TEST_CASE(pmc_stat_says_which_cycles_ran_on_other_cpus, Cli) {
  // The session counts the emulated CPU 0; 12,288 cycles of the workload run on CPU 2. The count
  // is 2 x 4096 (CPU 0's 8192 cycles) and the report says what it left out, rather than nothing.
  const fs::path file = tmp.path() / "smp.toml";
  pmc_test::spit(file, "[[segment]]\ncycles = 8192\ncpu = 0\n[[segment]]\ncycles = 12288\ncpu = 2\n");
  auto r = pmc({"stat", "--backend", "alpha21064_sim", "--workload", file.string(), "-e", "PF_CYCLES:period=4096"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "12,288      cycles not counted: they ran on other CPUs"), r);
  r = pmc({"stat", "--backend", "alpha21064_sim", "--workload", file.string(), "-e", "PF_CYCLES:period=4096", "--json"});
  auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at("counters").at(0).at("value") == 8192);
  BOOST_TEST(j.at("cycles_not_counted") == 12288);
  BOOST_TEST(j.at("cycles") == 20480);
  // An x86 model runs every segment, whatever its cpu.
  r = pmc({"stat", "--cpuid-dump", "pentium-iii", "--workload", file.string(), "--json"});
  j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at("cycles_not_counted") == 0);
  BOOST_TEST(!contains(r.out, "not counted"), r);
}
