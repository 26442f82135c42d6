// The backends' catalogs and encoders as golden tables, one per backend, checked by one harness:
// tests/data/<backend>_golden.toml (p5, p6, archperf, amd). Every row is an event string, the CPU
// it is encoded for (a key this test maps to a CPUID dump), and the event-select value, counters
// and canonical string worked out by hand from the manuals (each table's header says how), or
// the error kind expected. Encoded end to end: CPUID dump -> Hal::open -> the backend's plugin ->
// its data files -> encoder. Every failure names the table's file and the row's line.
//
// What differs between the backends is data (p5_golden(), p6_golden() and amd_golden() below,
// archperf_golden() in test_golden_archperf.cpp): the dumps and the tags they probe to, the error
// kinds a table may use, its size, and which checks each table has had since it was written (the
// row schema of p5 and amd, the P5's 10-bit CESR half, archperf's fixed counters, canonical
// strings encoded again by archperf and amd, ...). Each backend's suite runs the same three cases
// on its table (the dumps probe to their tags, the table, the catalogs validate), then the cases
// that are not rows of a table. The harness is golden_test_support.hpp; the archperf suite is in
// test_golden_archperf.cpp.
#define BOOST_TEST_MODULE golden
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <string>
#include <utility>
#include <vector>

#include "golden_test_support.hpp"

using namespace pmc_test::golden;

namespace {

// p5 (backends/p5/p5.toml): the CESR half computed by hand from the SDM layout (ES 5:0, CC 8:6,
// PC 9; docs/hardware/p5.md section 3). The bundled dumps and the tags they probe to: p5.md 7.1;
// test_p5_probe.cpp checks the verdicts in detail.
const Golden& p5_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "p5";
    g.dumps = {{"p5", kBundled / "pentium.txt", "p5"},
               {"p5mmx", kBundled / "pentium-mmx.txt", "p5mmx"},
               {"p5mmx_e74", kBundled / "pentium-mmx-e74.txt", "p5mmx_e74"}};
    g.access = "sim";
    g.error_kinds = kEncoderErrors;
    // The keys of the header of p5_golden.toml: a misspelt key would silently skip a check.
    g.strict = true;
    g.row_keys = {"event", "cpu", "config", "counters", "canonical", "source", "raw", "error", "message"};
    g.not_in_error_rows = {"config", "canonical"};
    g.message_only_in_error_rows = true;
    g.config_bits = 10;     // a CESR half: ES 5:0, CC 8:6, PC 9
    g.no_interrupt = true;  // the P5 has no overflow interrupt
    g.raw_has_no_def = true;
    g.rows = {195, false};  // the header's sections 1-7
    g.errors = Count{49, false};
    g.raws = Count{6, false};
    return g;
  }();
  return spec;
}

// p6 (backends/p6/p6.toml): the PerfEvtSel value computed by hand from the SDM bit layout.
const Golden& p6_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "p6";
    g.dumps = {{"ppro", kBundled / "pentium-pro.txt", "ppro"},
               {"pii", kBundled / "pentium-ii.txt", "pii"},
               {"piii", kBundled / "pentium-iii.txt", "piii"},
               {"pm", kBundled / "pentium-m.txt", "pm"}};
    g.error_kinds = kEncoderErrors;
    g.check_message = false;
    g.rows = {150, false};
    return g;
  }();
  return spec;
}

// amd (backends/amd/amd.toml + events/amd/*.toml): the PERF_CTL value, counters and canonical
// string worked out by hand from the manuals. The bundled dumps and the tags they probe to:
// docs/hardware/amd.md 1.3; the section headers of amd_golden.toml name the same files;
// test_amd_probe.cpp checks the verdicts in detail.
const Golden& amd_golden() {
  static const Golden spec = [] {
    Golden g;
    g.backend = "amd";
    for (const auto& [tag, file] : std::vector<std::pair<std::string, std::string>>{
             {"k7", "amd-k7.txt"},
             {"k8_reve", "amd-k8-reve.txt"},
             {"k8_revf", "amd-k8-revf.txt"},
             {"fam10h_revb", "amd-fam10h-revb.txt"},
             {"fam10h_revc", "amd-fam10h-revc.txt"},
             {"fam10h_revd", "amd-fam10h-revd.txt"},
             {"fam12h", "amd-fam12h.txt"},
             {"fam14h", "amd-fam14h.txt"},
             {"fam15h", "amd-fam15h.txt"},
             {"fam16h", "amd-fam16h.txt"},
             {"zen1", "amd-zen1.txt"},
             {"zen2", "amd-zen2.txt"},
             {"zen3", "amd-zen3.txt"},
             {"zen4", "amd-zen4-genoa.txt"},
             {"zen5", "amd-zen5.txt"},
         })
      g.dumps.push_back({tag, kBundled / file, tag});
    g.access = "sim";
    g.error_kinds = with(kEncoderErrors, {"no_counter"});
    // The keys of the header of amd_golden.toml, plus `message`: a misspelt key would silently
    // skip a check.
    g.strict = true;
    g.row_keys = {"event", "cpu", "config", "counters", "canonical", "source", "error", "message"};
    g.not_in_error_rows = {"config"};
    g.reencode = Reencode::config;  // canonical strings are what pmc prints
    g.rows = {909, true};           // the file's header: 909 rows, 169 of them errors
    g.errors = Count{169, true};
    // Family 15h's events name counters 3-5: checked against the six-counter PMU of its dump.
    g.validate_on = {"fam15h", "zen4"};
    g.catalog_check = [](const pmc::Hal& hal) { BOOST_TEST(hal.pmu().general_count() == 6u); };
    return g;
  }();
  return spec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(p5)
PMC_GOLDEN_CASES(p5_golden)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(p6)
PMC_GOLDEN_CASES(p6_golden)

BOOST_AUTO_TEST_CASE(model_specific_events_follow_the_cpu) {
  const auto open_for = [](const std::string& key) { return open_dump(p6_golden(), p6_golden().dump(key)); };
  // MMX_INSTR_EXEC (B0H) is a Pentium II event only; the SSE events (D8H) a Pentium III one.
  BOOST_TEST(open_for("pii").events().find("MMX_INSTR_EXEC", "pii") != nullptr);
  BOOST_TEST(open_for("piii").events().find("MMX_INSTR_EXEC", "piii") == nullptr);
  BOOST_CHECK_THROW((void)open_for("ppro").encode("EMON_KNI_INST_RETIRED"), pmc::Error);
  BOOST_TEST(open_for("piii").encode("EMON_KNI_INST_RETIRED").config == 0x300D8u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(amd)
PMC_GOLDEN_CASES(amd_golden)
BOOST_AUTO_TEST_SUITE_END()
