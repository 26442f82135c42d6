// The archperf backend's golden table (tests/data/archperf_golden.toml), checked by the harness
// of test_golden.cpp (golden_test_support.hpp): the three cases of every table, then the
// encoder's refusals worded for the CPU, and model-specific catalogs added on events_path.
// Encoded end to end: CPUID dump -> Hal::open -> the backend's plugin -> its data files ->
// encoder.
#define BOOST_TEST_MODULE golden_archperf
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "golden_test_support.hpp"

using namespace pmc_test::golden;

namespace {

// archperf (backends/archperf/archperf.toml + archperf.cpp): the IA32_PERFEVTSELx value computed by
// hand from the SDM bit layout. The table's `cpu` is a dump, not a tag: several dumps share a
// version tag.
const Golden& archperf_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "archperf";
    g.dumps = {{"v1", kTestDumps / "archperf-v1-yonah.txt", "v1"},
               {"core2", kBundled / "core2.txt", "v2"},
               {"v2", kTestDumps / "archperf-v2-penryn.txt", "v2"},
               {"v3", kTestDumps / "archperf-v3-nehalem.txt", "v3"},
               {"v4", kTestDumps / "archperf-v4-skylake.txt", "v4"},
               {"icl", kBundled / "intel-icelake.txt", "v5"},
               {"guest", kTestDumps / "archperf-v5-guest.txt", "v5e"}};
    g.device_model = "archperf";
    g.error_kinds = with(kEncoderErrors, {"not_supported", "no_counter"});
    g.fixed_counters = true;
    g.no_interrupt = true;
    g.raw_has_no_def = true;
    g.reencode = Reencode::all;
    g.rows = {130, false};
    g.errors = Count{25, false};
    g.catalog_check = [](const pmc::Hal& hal) {
      // TOPDOWN_SLOTS is listed for version 5 parts only.
      const bool v5 = hal.pmu().cpu_tag == "v5";
      BOOST_TEST((hal.events().find("TOPDOWN_SLOTS", hal.pmu().cpu_tag) != nullptr) == v5);
      // archperf.toml's own events; a model's catalog (cpu/*.toml) adds its CPU's.
      std::size_t architectural = 0;
      for (const pmc::EventDef* e : hal.events().for_cpu(hal.pmu().cpu_tag))
        architectural += fs::path(e->source.file).filename() == "archperf.toml";
      BOOST_TEST(architectural == (v5 ? 8u : 7u));
    };
    return g;
  }();
  return spec;
}

}  // namespace

// archperf: also the encoder's refusals worded for the CPU, and model-specific catalogs added on
// events_path.
BOOST_AUTO_TEST_SUITE(archperf)
PMC_GOLDEN_CASES(archperf_golden)

namespace {
pmc::Hal open_archperf(const std::string& key, std::vector<fs::path> events_path = {}) {
  return open_dump(archperf_golden(), archperf_golden().dump(key), std::move(events_path));
}
}  // namespace

BOOST_AUTO_TEST_CASE(encode_is_pure) {
  // The same string gives the same bits, whichever Hal and however often: no state.
  pmc::Hal a = open_archperf("v3");
  pmc::Hal b = open_archperf("v3");
  for (const char* ev : {"instructions:t", "r01C2:c=3", "LLC_MISSES:i=1:c=1", "ref-cycles:k"}) {
    const pmc::Encoding x = a.encode(ev), y = b.encode(ev), z = a.encode(ev);
    BOOST_TEST(x.config == y.config);
    BOOST_TEST(x.config == z.config);
    BOOST_TEST(x.canonical == z.canonical);
    BOOST_TEST(x.fixed_control == y.fixed_control);
  }
}

BOOST_AUTO_TEST_CASE(refusals_name_the_event_the_ebx_bit_and_the_cpu) {
  pmc::Hal guest = open_archperf("guest");
  try {
    (void)guest.encode("LLC_MISSES:u");
    BOOST_ERROR("LLC_MISSES encoded on a CPU whose EBX marks it unavailable");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("event 'LLC_MISSES:u'") != std::string::npos, m);
    BOOST_TEST(m.find("architectural event 4 (LLC Misses)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EBX bit 4 is set (EBX = 0x00000050)") != std::string::npos, m);
    BOOST_TEST(m.find("Intel Xeon Processor (Icelake)") != std::string::npos, m);
  }
  pmc::Hal core2 = open_archperf("core2");
  try {
    (void)core2.encode("TOPDOWN_SLOTS");
    BOOST_ERROR("TOPDOWN_SLOTS encoded on a CPU whose EBX vector is 7 bits long");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("architectural event 7 (Topdown Slots)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EAX[31:24] = 7, so the EBX vector has no bit 7") != std::string::npos, m);
    BOOST_TEST(m.find("Core(TM)2") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(anythread_messages_say_why) {
  // The Hal outlives the exception: its plugin's code destroys the exception object.
  const pmc::Hal v2 = open_archperf("v2");
  const pmc::Hal icl = open_archperf("icl");
  try {
    (void)v2.encode("instructions:t=1");
    BOOST_ERROR("AnyThread accepted on version 2");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::attribute);
    BOOST_TEST(std::string(e.what()).find("column 14") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("needs architectural perfmon version 3 or later") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("has version 2") != std::string::npos, e.what());
  }
  try {
    (void)icl.encode("cycles:t");
    BOOST_ERROR("AnyThread accepted where CPUID deprecates it");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("CPUID.0AH:EDX[15] = 1") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(model_specific_catalog_on_events_path) {
  // A user's Nehalem file: two model-specific events, one overriding built-in description, one
  // with a unit-mask group and a counter constraint, and an SDM-named alias.
  const fs::path dir = fs::temp_directory_path() / ("pmc-archperf-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "nehalem.toml";
  std::ofstream(file) << R"toml(backend = "archperf"
description = "a few Nehalem events (SDM vol 3B table 19-19)"
[cpus]
v3 = "version 3"

[[event]]
name = "UOPS_RETIRED"
code = 0xC2
desc = "Micro-ops retired"
cpus = ["v3"]
umasks = { default = ["ANY"], masks = [
  { name = "ANY", value = 0x01, desc = "all micro-ops" },
  { name = "RETIRE_SLOTS", value = 0x02, desc = "retirement slots used" },
] }

[[event]]
name = "L1D_PEND_MISS"
code = 0x48
umask = 0x00
counters = [2]
desc = "Outstanding L1D misses, each cycle (counter 2 only)"
aliases = ["L1D_PEND_MISS.PENDING"]
)toml";
  pmc::Hal hal = open_archperf("v3", {file});
  const pmc::Encoding uops = hal.encode("UOPS_RETIRED");
  BOOST_TEST(uops.config == 0x4301C2u);  // same bits as r01C2
  BOOST_TEST(uops.canonical == "archperf::UOPS_RETIRED:ANY:u=1:k=1:e=0:i=0:c=0:t=0");
  BOOST_TEST(uops.def->source.file == file.string());
  BOOST_TEST(hal.encode("UOPS_RETIRED:RETIRE_SLOTS:u").config == 0x4102C2u);
  const pmc::Encoding pend = hal.encode("L1D_PEND_MISS.PENDING:c=1");
  BOOST_TEST(pend.config == 0x01430048u);
  BOOST_TEST(pend.counters == std::vector<unsigned>{2}, boost::test_tools::per_element());
  BOOST_TEST(hal.encode("instructions").config == 0x4300C0u);  // built-ins still there
  for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
  // On another version the v3 event does not exist, and says where it does.
  pmc::Hal v4 = open_archperf("v4", {file});
  try {
    (void)v4.encode("UOPS_RETIRED");
    BOOST_ERROR("a v3-only event encoded on v4");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::not_found);
    BOOST_TEST(std::string(e.what()).find("exists on: v3") != std::string::npos, e.what());
  }
  // A session schedules the constrained event onto counter 2.
  pmc::Session s = hal.session();
  s.add("L1D_PEND_MISS");
  s.add("instructions");
  const auto r = s.read();
  BOOST_TEST(r.at(0).counter == 2u);
  BOOST_TEST((r.at(1).counter_kind == pmc::CounterKind::fixed));
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
