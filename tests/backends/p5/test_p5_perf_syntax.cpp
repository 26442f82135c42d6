// perf's raw events on the Pentium (docs/event-format.md, "Raw events and perf's PMU syntax";
// docs/hardware/p5.md 7.5): rNNN is a CESR half (ES 5:0, CC 8:6, PC 9; SDM vol 3B 18.26.1),
// read by the SDK's one parser: CC bit 2 is the modifier d, CC bits 1:0 the privilege levels :u
// and :k. Linux perf has no Pentium PMU, so the PMU/term=value/ form is refused with that reason.
#define BOOST_TEST_MODULE p5_perf_syntax
#include <boost/test/unit_test.hpp>

#include "support/encode_checks.hpp"

#include <pmc/pmc.hpp>

#include <string>

namespace {

constexpr std::uint64_t kOs = 1ull << 6, kUsr = 1ull << 7, kClk = 1ull << 8;

const pmc::Hal& pentium() {
  static const pmc::Hal hal = pmc_test::open_dump("pentium-mmx");
  return hal;
}

std::string error_of(const std::string& event) { return pmc_test::encode_error(pentium(), event); }
using pmc_test::has;

}  // namespace

BOOST_AUTO_TEST_CASE(raw_cesr_half) {
  const pmc::Hal& hal = pentium();
  BOOST_TEST_REQUIRE(hal.require_backend().name == "p5");
  // 16H, instructions executed: CC = 011 (both levels).
  BOOST_TEST(hal.encode("r16").config == (0x16u | kOs | kUsr));
  BOOST_TEST(hal.encode("r16").config == hal.encode("INSTRUCTIONS_EXECUTED").config);
  BOOST_TEST(hal.encode("r16:uk").config == hal.encode("INSTRUCTIONS_EXECUTED:u:k").config);
  BOOST_TEST(hal.encode("r16:u").config == (0x16u | kUsr));
  // CC bit 2 in the value: the duration modifier d.
  const pmc::Encoding clocks = hal.encode("r116:k");
  BOOST_TEST(clocks.config == (0x16u | kClk | kOs));
  BOOST_TEST(clocks.canonical == "p5::r16:u=0:k=1:d=1:pc=0");
}

BOOST_AUTO_TEST_CASE(p5_refusals) {
  const std::string terms = error_of("cpu/event=0x16/");
  BOOST_TEST(has(terms, "the p5 PMU has no perf format terms (Linux perf has no driver for it"), terms);
  const std::string cc = error_of("r56");
  BOOST_TEST(has(cc, "raw config 0x56 sets os (0x40)"), cc);
  const std::string reserved = error_of("r3C");
  BOOST_TEST(has(reserved, "reserved on the Pentium"), reserved);
}
