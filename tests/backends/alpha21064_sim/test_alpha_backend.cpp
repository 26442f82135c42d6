#define BOOST_TEST_MODULE alpha_backend
#include <boost/test/unit_test.hpp>

// The alpha21064_sim backend through the HAL: chosen by name only, golden encodings of every
// event (ICCSR images computed by hand from docs/hardware/alpha21064.md section 2 and 3),
// `period=`, and the `pmc` command with no change for this backend. Its sessions (counts that are
// interrupts x interval on the emulated chip) and the checks of the conformance kit are in
// test_alpha_sessions.cpp.

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "alpha_test_support.hpp"
#include "support/messages.hpp"
#include "support/pmc_command.hpp"

using namespace pmc_test::alpha21064;
using pmc_test::contains;

namespace {

errc error_of(const pmc::Hal& hal, const std::string& event, std::string* message = nullptr) {
  try {
    (void)hal.encode(event);
  } catch (const pmc::Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return errc::ok;
}

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
