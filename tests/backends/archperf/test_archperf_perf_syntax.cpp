// perf's raw event syntax on archperf (docs/event-format.md, "Raw events and perf's PMU
// syntax"): cpu/term=value,.../ with the terms of archperf.toml's [perf_format] (Linux
// arch/x86/events/intel/core.c: event config:0-7, umask 8-15, edge 18, pc 19, any 21, inv 23,
// cmask 24-31), rNNN as the config value, cpu_core/.../ and cpu_atom/.../ on a hybrid part, and
// perf's combined modifiers. Every encoding is checked against the catalog event of the same
// bits and against the value worked out by hand from IA32_PERFEVTSELx (SDM vol 3B 18.2.1,
// Figure 18-6: event 7:0, umask 15:8, USR 16, OS 17, E 18, PC 19, INT 20, ANY 21, EN 22, INV 23,
// CMASK 31:24); archperf's config includes EN, which its driver writes with the selection.
#define BOOST_TEST_MODULE archperf_perf_syntax
#include <boost/test/unit_test.hpp>

#include "support/encode_checks.hpp"

#include <pmc/pmc.hpp>

#include <string>

namespace {

constexpr std::uint64_t kUsr = 1ull << 16, kOs = 1ull << 17, kEdge = 1ull << 18, kEn = 1ull << 22, kInv = 1ull << 23;
constexpr std::uint64_t cmask(std::uint64_t n) { return n << 24; }
constexpr std::uint64_t umask(std::uint64_t n) { return n << 8; }

pmc::Hal open(const char* dump) { return pmc_test::open_dump(dump); }

const pmc::Hal& skylake() {
  static const pmc::Hal hal = open("intel-skl");
  return hal;
}

std::string error_of(const pmc::Hal& hal, const std::string& event, pmc::errc* kind = nullptr) {
  return pmc_test::encode_error(hal, event, kind);
}
using pmc_test::has;

}  // namespace

BOOST_AUTO_TEST_CASE(cpu_terms_equal_the_catalog_event_and_the_sdm_bits) {
  const pmc::Hal& hal = skylake();
  BOOST_TEST_REQUIRE(hal.require_backend().name == "archperf");
  // UnHalted Core Cycles, architectural event 0 (3CH, umask 00H), user and kernel by default.
  const pmc::Encoding terms = hal.encode("cpu/event=0x3c,umask=0x0/");
  BOOST_TEST(terms.config == (0x3Cu | kUsr | kOs | kEn));
  BOOST_TEST(terms.config == hal.encode("UNHALTED_CORE_CYCLES").config);
  BOOST_TEST(terms.config == hal.encode("r3c").config);
  BOOST_TEST(!terms.fixed.has_value());  // a raw event never takes a fixed counter
  // The brief's example: C0H umask 01H, CMASK 2, INV, EDGE, user only.
  const std::uint64_t sdm = 0xC0 | umask(1) | kUsr | kEdge | kEn | kInv | cmask(2);
  BOOST_TEST(sdm == 0x02C501C0u);
  const pmc::Encoding full = hal.encode("cpu/event=0xc0,umask=0x1,cmask=2,inv=1,edge=1/u");
  BOOST_TEST(full.config == sdm);
  BOOST_TEST(full.config == hal.encode("INST_RETIRED.PREC_DIST:u:c=2:i=1:e=1").config);
  BOOST_TEST(full.config == hal.encode("r28401C0:u").config);  // perf's rNNN: the same config value
  BOOST_TEST(full.canonical.rfind("archperf::r01C0:u=1:k=0:e=1:i=1:c=2", 0) == 0, full.canonical);
  // A term without a value is 1, as in perf; config= gives the whole value.
  BOOST_TEST(hal.encode("cpu/event=0xc0,umask=1,edge,inv,cmask=2/u").config == sdm);
  BOOST_TEST(hal.encode("cpu/config=0x28401c0/u").config == sdm);
  BOOST_TEST(hal.encode("cpu/config=0x28401c0,cmask=3/u").config == (sdm & ~cmask(0xFF)) + cmask(3));
  // A catalog event with defaults (c=10, i=1) and the terms that spell it.
  BOOST_TEST(hal.encode("cpu/event=0xc0,umask=1,cmask=10,inv=1/").config ==
             hal.encode("INST_RETIRED.TOTAL_CYCLES_PS").config);
  // The backend's name is a PMU too.
  BOOST_TEST(hal.encode("archperf/event=0x3c/").config == terms.config);
}

BOOST_AUTO_TEST_CASE(raw_config_is_perfs_value) {
  const pmc::Hal& hal = skylake();
  BOOST_TEST(hal.encode("r01C2").config == (0xC2u | umask(1) | kUsr | kOs | kEn));
  BOOST_TEST(hal.encode("r18400C0").config == (0xC0u | kEdge | kInv | cmask(1) | kUsr | kOs | kEn));
  BOOST_TEST(hal.encode("r18400C0").config == hal.encode("INST_RETIRED.ANY_P:e=1:i=1:c=1").config);
  pmc::errc kind{};
  // USR and OS are the modifiers, as in perf (Linux masks them out of a raw config).
  const std::string usr = error_of(hal, "r4301C2", &kind);
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::invalid_argument));
  BOOST_TEST(has(usr, "raw config 0x4301c2 sets usr, os"), usr);
  BOOST_TEST(has(usr, ":u, :k"), usr);
  const std::string reserved = error_of(hal, "r1000000C0");
  BOOST_TEST(has(reserved, "sets bits 0x100000000, which no field"), reserved);
  const std::string digits = error_of(hal, "r11112222333344445");
  BOOST_TEST(has(digits, "at most 16"), digits);
  const std::string contradiction = error_of(hal, "r20000C0:c=3", &kind);
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::feature_combination));
  BOOST_TEST(has(contradiction, "modifier 'c=3' contradicts the raw config 0x20000c0, which holds c=2"), contradiction);
}

BOOST_AUTO_TEST_CASE(terms_and_pmus_the_cpu_lacks_are_refused_by_name) {
  const pmc::Hal& hal = skylake();
  pmc::errc kind{};
  const std::string term = error_of(hal, "cpu/event=0x3c,colour=1/", &kind);
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::attribute));
  BOOST_TEST(has(term, "column 16: PMU 'cpu' has no term 'colour' (its terms: any (config:21), cmask (config:24-31), "
                       "edge (config:18), eq (config:36), event (config:0-7), inv (config:23), pc (config:19), "
                       "umask (config:8-15); and config=, period=)"),
             term);
  const std::string pmu = error_of(hal, "uncore_imc/event=0x3c/", &kind);
  BOOST_TEST(static_cast<int>(kind) == static_cast<int>(pmc::errc::not_found));
  BOOST_TEST(has(pmu, "unknown PMU 'uncore_imc'"), pmu);
  const std::string wide = error_of(hal, "cpu/event=0x13c/");
  BOOST_TEST(has(wide, "term 'event' value 0x13c does not fit config:0-7 (8 bits, at most 0xff)"), wide);
  const std::string pc = error_of(hal, "cpu/event=0x3c,pc=1/");
  BOOST_TEST(has(pc, "pc"), pc);
  BOOST_TEST(has(pc, "driver"), pc);
}

BOOST_AUTO_TEST_CASE(combined_modifiers_set_usr_and_os) {
  const pmc::Hal& hal = skylake();
  const pmc::Encoding uk = hal.encode("instructions:uk");
  BOOST_TEST((uk.config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST(uk.fixed_control == 3u);  // IA32_FIXED_CTR_CTRL: OS bit 0, USR bit 1
  const pmc::Encoding u = hal.encode("instructions:u");
  BOOST_TEST((u.config & (kUsr | kOs)) == kUsr);
  BOOST_TEST(u.fixed_control == 2u);
  BOOST_TEST((hal.encode("instructions:k").config & (kUsr | kOs)) == kOs);
  BOOST_TEST((hal.encode("cpu/event=0xc0/uk").config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST((hal.encode("cpu/event=0xc0/k").config & (kUsr | kOs)) == kOs);
  // Precision: perf's :ppp, with a period (sampling); alone it samples at perf record's default
  // frequency, 4,000 a second (perf record -e cycles:ppp: sample_freq 4000, freq 1).
  const pmc::Encoding ppp = hal.encode("cycles:ukppp:period=100003");
  BOOST_TEST(ppp.precise == 3u);
  BOOST_TEST(ppp.period == 100003u);
  BOOST_TEST((ppp.config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST(hal.encode("cpu/event=0x3c,period=100003/ppp").precise == 3u);
  const pmc::Encoding alone = hal.encode("cycles:ppp");
  BOOST_TEST(alone.frequency == 4000u);
  BOOST_TEST(alone.period == 0u);
  BOOST_TEST(alone.precise == 3u);
  // Conflicts: one clear message each.
  const std::string twice = error_of(hal, "instructions:uk:u");
  BOOST_TEST(has(twice, "modifier 'u' given twice"), twice);
  const std::string none = error_of(hal, "instructions:uk:u=0:k=0");
  BOOST_TEST(has(none, "given twice"), none);
}

BOOST_AUTO_TEST_CASE(group_modifiers_reach_every_member) {
  const pmc::Hal& hal = skylake();
  const auto groups = pmc::parse_event_list("{cycles,instructions,cpu/event=0xc4,umask=0/}:u");
  BOOST_REQUIRE(groups.size() == 1u);
  BOOST_REQUIRE(groups[0].events.size() == 3u);
  for (const std::string& member : groups[0].events) {
    const pmc::Encoding e = hal.encode(member);
    BOOST_TEST((e.config & (kUsr | kOs)) == kUsr, member);
  }
  pmc::Session s = hal.session();
  s.add_group(groups[0].events);
  BOOST_REQUIRE(s.encodings().size() == 3u);
  for (const pmc::Encoding& e : s.encodings()) BOOST_TEST((e.config & (kUsr | kOs)) == kUsr, e.event);
}

BOOST_AUTO_TEST_CASE(hybrid_parts_are_cpu_core_and_cpu_atom) {
  const pmc::Hal hal = open("intel-adl-glc");
  // Golden Cove (cpu_core): C0H/00H, and Gracemont (cpu_atom): C4H/00H user only.
  const pmc::Encoding core = hal.encode("cpu_core/event=0xc0,umask=0x0/");
  BOOST_TEST(core.config == (0xC0u | kUsr | kOs | kEn));
  BOOST_TEST(core.config == hal.encode("cpu_core::INST_RETIRED.ANY_P").config);
  BOOST_TEST(core.canonical.rfind("adl_glc::", 0) == 0, core.canonical);
  const pmc::Encoding atom = hal.encode("cpu_atom/event=0xc4,umask=0x0/u");
  BOOST_TEST(atom.config == (0xC4u | kUsr | kEn));
  BOOST_TEST(atom.config == hal.encode("cpu_atom::BR_INST_RETIRED.ALL_BRANCHES:u").config);
  BOOST_TEST(atom.canonical.rfind("adl_grt::", 0) == 0, atom.canonical);
  // Linux has no "cpu" PMU on a hybrid part: refused, naming the two.
  const std::string cpu = error_of(hal, "cpu/event=0xc0/");
  BOOST_TEST(has(cpu, "unknown PMU 'cpu' on this hybrid CPU: its core PMUs are cpu_core (adl_glc cores), cpu_atom "
                      "(adl_grt cores)"),
             cpu);
}
