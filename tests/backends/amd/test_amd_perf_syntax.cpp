// perf's raw event syntax on the AMD backend (docs/event-format.md, "Raw events and perf's PMU
// syntax"): cpu/term=value,.../ with amd.toml's [perf_format] (Linux arch/x86/events/amd/core.c
// amd_format_attr: event config:0-7,32-35, umask 8-15, edge 18, inv 23, cmask 24-31), and rNNN
// as the PERF_CTL value. The event select is 12 bits, its bits 11:8 in PERF_CTL 35:32 (AMD APM
// vol 2, 13.2.1, "PerfEvtSeln"): USR 16, OS 17, Edge 18, INT 20, EN 22, INV 23, CntMask 31:24,
// GuestOnly 40, HostOnly 41. The encoder leaves EN and INT to the driver.
#define BOOST_TEST_MODULE amd_perf_syntax
#include <boost/test/unit_test.hpp>

#include "support/encode_checks.hpp"

#include <pmc/pmc.hpp>

#include <string>

namespace {

constexpr std::uint64_t kUsr = 1ull << 16, kOs = 1ull << 17, kEdge = 1ull << 18, kInv = 1ull << 23;

const pmc::Hal& zen3() {
  static const pmc::Hal hal = pmc_test::open_dump("amd-zen3");
  return hal;
}

std::string error_of(const std::string& event) { return pmc_test::encode_error(zen3(), event); }
using pmc_test::has;

}  // namespace

BOOST_AUTO_TEST_CASE(a_twelve_bit_event_spans_config_bits_7_0_and_35_32) {
  const pmc::Hal& hal = zen3();
  BOOST_TEST_REQUIRE(hal.require_backend().name == "amd");
  // Event 0x1C7 (retired branches mispredicted, direction mismatch, Zen 3): 0xC7 in 7:0, 0x1 in 35:32.
  const std::uint64_t apm = 0x1'0000'0000ull | 0xC7 | kUsr | kOs;
  BOOST_TEST(apm == 0x1'0003'00C7ull);
  const pmc::Encoding terms = hal.encode("cpu/event=0x1c7/");
  BOOST_TEST(terms.config == apm);
  BOOST_TEST(terms.config == hal.encode("RETIRED_BRANCH_MISPREDICTED_DIRECTION_MISMATCH").config);
  BOOST_TEST(hal.encode("r1000000C7").config == apm);  // perf's rNNN: the PERF_CTL value
  BOOST_TEST(terms.canonical.rfind("amd::r1000000C7:", 0) == 0, terms.canonical);
  // With a unit mask, user only: event 0x18E umask 0x1F.
  const pmc::Encoding ic = hal.encode("cpu/event=0x18e,umask=0x1f/u");
  BOOST_TEST(ic.config == (0x1'0000'0000ull | 0x8E | (0x1Full << 8) | kUsr));
  BOOST_TEST(ic.config == hal.encode("ic_tag_hit_miss.all_instruction_cache_accesses:u").config);
  // edge, inv and cmask as terms, and as the catalog's modifiers.
  const pmc::Encoding flags = hal.encode("cpu/event=0xc0,cmask=2,inv=1,edge=1/k");
  BOOST_TEST(flags.config == (0xC0u | kOs | kEdge | kInv | (2ull << 24)));
  BOOST_TEST(flags.config == hal.encode("r28400C0:k").config);
}

BOOST_AUTO_TEST_CASE(amd_terms_and_refusals) {
  const std::string any = error_of("cpu/event=0xc0,any=1/");
  BOOST_TEST(has(any, "PMU 'cpu' has no term 'any' (its terms: cmask (config:24-31), edge (config:18), event "
                      "(config:0-7,32-35), inv (config:23), umask (config:8-15); and config=, period=)"),
             any);
  const std::string wide = error_of("cpu/event=0x1000/");
  BOOST_TEST(has(wide, "does not fit config:0-7,32-35 (12 bits, at most 0xfff)"), wide);
  const std::string en = error_of("r4000C0");
  BOOST_TEST(has(en, "sets en (0x400000), the driver's own field"), en);
  // HostOnly (bit 41) in the value is the catalog's :h modifier.
  BOOST_TEST(zen3().encode("r200000000C0").config == zen3().encode("r00C0:h").config);
}

BOOST_AUTO_TEST_CASE(combined_modifiers_on_amd) {
  BOOST_TEST((zen3().encode("cpu/event=0xc0/uk").config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST((zen3().encode("r00C0:ku").config & (kUsr | kOs)) == (kUsr | kOs));
  BOOST_TEST((zen3().encode("r00C0:u").config & (kUsr | kOs)) == kUsr);
}
