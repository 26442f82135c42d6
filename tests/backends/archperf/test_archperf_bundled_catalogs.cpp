// The archperf backend with the bundled per-model catalogs (backends/archperf/events/cpu/,
// generated from Intel's event lists) on the bundled CPUID dumps: the model's file is loaded, its
// events encode to the bits Intel's list gives (offcore response values as the extra register,
// perf's config1), two offcore events with different values take one MSR each, the unit-mask
// extension passes where CPUID has no leaf 23H, and the Atom cores' fixed counters 4-6 count
// their events on the device model. Expected values are Intel's list entries (code, unit mask,
// MSRValue), cited in each check, and the fact sheet's bit layout (docs/hardware/archperf.md 3.1).
#define BOOST_TEST_MODULE archperf_bundled_catalogs
#include <boost/test/unit_test.hpp>

#include "perf_event.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/schedule.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

pmc::Hal open(const std::string& dump) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

bool loaded(const pmc::Hal& hal, const std::string& file) {
  const auto& c = hal.require_backend().cpu_catalogs;
  return std::any_of(c.begin(), c.end(), [&](const std::string& s) { return s.rfind(file, 0) == 0; });
}

}  // namespace

BOOST_AUTO_TEST_CASE(skylake_events_encode_to_intels_bits) {
  const pmc::Hal hal = open("skylake.txt");
  BOOST_TEST_REQUIRE(loaded(hal, "cpu/skl.toml"));
  // skylake_core.json OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE: EventCode "0xB7, 0xBB",
  // UMask 0x01, MSRIndex "0x1a6,0x1a7", MSRValue 0x10001.
  const pmc::Encoding ocr = hal.encode("OFFCORE_RESPONSE.DEMAND_DATA_RD.ANY_RESPONSE");
  BOOST_TEST(ocr.config == 0x4301B7u);
  BOOST_TEST(ocr.extra == "offcore_rsp");
  BOOST_TEST(ocr.extra_value == 0x10001u);
  BOOST_TEST(ocr.extra_msrs == (std::vector<std::uint32_t>{0x1A6, 0x1A7}), boost::test_tools::per_element());
  BOOST_TEST(pmc::detail::perf_raw_event(ocr, hal.events().format()).config1 == 0x10001u);
  // MEM_LOAD_RETIRED.L3_MISS: 0xD1 / 0x20; :u:c=1 adds USR and CMASK 1; libpfm4's spelling too.
  BOOST_TEST(hal.encode("MEM_LOAD_RETIRED.L3_MISS:u:c=1").config == 0x014120D1u);
  BOOST_TEST(hal.encode("MEM_LOAD_RETIRED:L3_MISS:u:c=1").config == 0x014120D1u);
  BOOST_TEST(hal.encode("mem_load_retired.l3_miss").config == 0x004320D1u);
  // ARITH.DIVIDER_ACTIVE: 0x14 / 0x01 with CounterMask 1.
  BOOST_TEST(hal.encode("ARITH.DIVIDER_ACTIVE").config == 0x01430114u);
  // INST_RETIRED.ANY is fixed counter 0's only ("Fixed counter 0").
  const pmc::Encoding inst = hal.encode("INST_RETIRED.ANY");
  BOOST_TEST(inst.counters.empty());
  BOOST_TEST(inst.fixed.value_or(99) == 0u);
  BOOST_TEST(inst.fixed_control == 0x3u);
  // Two offcore events with different values count together: 0x1A6 and 0x1A7, the second with
  // the second code (0xBB).
  const pmc::Encoding rfo = hal.encode("OFFCORE_RESPONSE.DEMAND_RFO.ANY_RESPONSE");  // MSRValue 0x10002
  BOOST_TEST(rfo.extra_value == 0x10002u);
  const pmc::Placement p = pmc::place(hal.pmu(), {ocr, rfo, inst});
  BOOST_TEST(p.extra_msrs == (std::vector<std::uint32_t>{0x1A6, 0x1A7, 0}), boost::test_tools::per_element());
  BOOST_TEST(pmc::bind_extra_msr(rfo, 0x1A7, hal.events().format()).config == 0x4301BBu);
  // A third value does not fit beside them.
  const pmc::Encoding other = hal.encode("OFFCORE_RESPONSE.DEMAND_CODE_RD.ANY_RESPONSE");
  BOOST_TEST(other.extra_value != ocr.extra_value);
  BOOST_CHECK_THROW((void)pmc::place(hal.pmu(), {ocr, rfo, other}), pmc::Error);
}

BOOST_AUTO_TEST_CASE(icelake_ocr_events) {
  const pmc::Hal hal = open("intel-icelake.txt");
  BOOST_TEST_REQUIRE(loaded(hal, "cpu/icl.toml"));
  // icelake_core.json OCR.DEMAND_DATA_RD.ANY_RESPONSE: "0xB7, 0xBB", 0x01, MSRValue 0x10001.
  const pmc::Encoding ocr = hal.encode("OCR.DEMAND_DATA_RD.ANY_RESPONSE");
  BOOST_TEST(ocr.config == 0x4301B7u);
  BOOST_TEST(ocr.extra_value == 0x10001u);
  BOOST_TEST(hal.encode("ocr.demand_data_rd.any_response").extra_value == 0x10001u);
  // TOPDOWN.SLOTS: fixed counter 3.
  BOOST_TEST(hal.encode("TOPDOWN.SLOTS").fixed.value_or(99) == 3u);
}

BOOST_AUTO_TEST_CASE(darkmont_fixed_counters_4_to_6) {
  // intel-ptl-dkt.txt: Panther Lake's Darkmont E-core, fixed counters {0, 1, 2, 4, 5, 6}.
  const pmc::Hal hal = open("intel-ptl-dkt.txt");
  BOOST_TEST_REQUIRE(loaded(hal, "cpu/ptl-dkt.toml"));
  BOOST_REQUIRE(hal.pmu().fixed(6));
  BOOST_TEST(!hal.pmu().fixed(3));
  // pantherlake_darkmont_core.json: TOPDOWN_BAD_SPECULATION.ALL, TOPDOWN_FE_BOUND.ALL and
  // TOPDOWN_RETIRING.ALL are "Fixed counter 4", "5", "6" (event 0x00, unit mask 0x05-0x07).
  const char* names[] = {"TOPDOWN_BAD_SPECULATION.ALL", "TOPDOWN_FE_BOUND.ALL", "TOPDOWN_RETIRING.ALL"};
  pmc::Session s = hal.session();
  for (unsigned i = 0; i < 3; ++i) {
    const pmc::Encoding e = hal.encode(names[i]);
    BOOST_TEST(e.fixed.value_or(99) == 4 + i, names[i]);
    BOOST_TEST(pmc::detail::perf_raw_event(e, hal.events().format()).config == (std::uint64_t{5 + i} << 8), names[i]);
    s.add(names[i]);
  }
  // The device model counts fixed counter i's signal fixed.<i> (fact sheet policy 10.15).
  s.run(pmc::parse_workload("[[segment]]\ncycles = 1000\nsignals = { \"fixed.4\" = 1, \"fixed.5\" = 2, \"fixed.6\" = 3 }\n",
                            "inline.toml"));
  const auto r = s.read();
  for (unsigned i = 0; i < 3; ++i) {
    BOOST_TEST((r.at(i).counter_kind == pmc::CounterKind::fixed), names[i]);
    BOOST_TEST(r.at(i).counter == 4 + i, names[i]);
    BOOST_TEST(r.at(i).value == 1000u * (i + 1), names[i]);
  }
}
