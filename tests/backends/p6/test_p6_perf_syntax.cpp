// perf's raw event syntax on the P6 backend (docs/event-format.md, "Raw events and perf's PMU
// syntax"): cpu/term=value,.../ with p6.toml's [perf_format] (Linux arch/x86/events/intel/p6.c
// intel_p6_formats_attr: event config:0-7, umask 8-15, edge 18, pc 19, inv 23, cmask 24-31) and
// rNNN as the PerfEvtSel value (SDM vol 3B, P6 PerfEvtSel0/1: event 7:0, unit mask 15:8, USR
// 16, OS 17, E 18, PC 19, INT 20, EN 22, INV 23, CMASK 31:24; EN is the driver's here).
#define BOOST_TEST_MODULE p6_perf_syntax
#include <boost/test/unit_test.hpp>

#include "support/encode_checks.hpp"

#include <pmc/pmc.hpp>

#include <string>

namespace {

constexpr std::uint64_t kUsr = 1ull << 16, kOs = 1ull << 17, kEdge = 1ull << 18, kInv = 1ull << 23;

const pmc::Hal& pentium_iii() {
  static const pmc::Hal hal = pmc_test::open_dump("pentium-iii");
  return hal;
}

std::string error_of(const std::string& event) { return pmc_test::encode_error(pentium_iii(), event); }
using pmc_test::has;

}  // namespace

BOOST_AUTO_TEST_CASE(p6_terms_equal_the_catalog_event) {
  const pmc::Hal& hal = pentium_iii();
  BOOST_TEST_REQUIRE(hal.require_backend().name == "p6");
  // INST_RETIRED, C0H: user and kernel.
  const pmc::Encoding terms = hal.encode("cpu/event=0xc0,umask=0x0/");
  BOOST_TEST(terms.config == (0xC0u | kUsr | kOs));
  BOOST_TEST(terms.config == hal.encode("INST_RETIRED").config);
  BOOST_TEST(terms.config == hal.encode("rC0").config);
  BOOST_TEST(terms.config == hal.encode("p6/event=0xc0/").config);
  // L2_LD (29H) with the MESI unit mask 0FH, CMASK 1, INV, EDGE, kernel only.
  const std::uint64_t sdm = 0x29 | (0x0Full << 8) | kOs | kEdge | kInv | (1ull << 24);
  const pmc::Encoding l2 = hal.encode("cpu/event=0x29,umask=0xf,cmask=1,inv,edge/k");
  BOOST_TEST(l2.config == sdm);
  BOOST_TEST(l2.config == hal.encode("L2_LD:M:E:S:I:k:c=1:i=1:e=1").config);
  BOOST_TEST(l2.config == hal.encode("r1840F29:k").config);
  BOOST_TEST((hal.encode("instructions:uk").config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST((hal.encode("cpu/event=0xc0/u").config & (kUsr | kOs)) == kUsr);
}

BOOST_AUTO_TEST_CASE(p6_refusals_name_the_term) {
  const std::string any = error_of("cpu/event=0xc0,any=1/");
  BOOST_TEST(has(any, "PMU 'cpu' has no term 'any' (its terms: cmask (config:24-31), edge (config:18), event "
                      "(config:0-7), inv (config:23), pc (config:19), umask (config:8-15); and config=, period=)"),
             any);
  const std::string en = error_of("r4000C0");
  BOOST_TEST(has(en, "sets en (0x400000), the driver's own field"), en);
  const std::string usr = error_of("r300C0");
  BOOST_TEST(has(usr, "sets usr, os"), usr);
}
