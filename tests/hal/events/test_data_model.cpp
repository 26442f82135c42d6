#define BOOST_TEST_MODULE data_model
#include <boost/test/unit_test.hpp>

// The events TOML schema of ABI 2.0 (docs/event-format.md): register fields made of several bit
// ranges, modifiers a backend's data file declares (and refuses), event defaults, the PMU's shape
// ([pmu], [[pmu.counters]], [[pmu.registers]]) and the probe table ([[probe]]) as data. Every
// expected value is worked out from the bit positions written in the TOML of the test.

#include "support/pmc_command.hpp"

#include <pmc/error.hpp>
#include <pmc/pmc.hpp>
#include <pmc/sdk/backend.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A backend "demo" with a 12-bit event select in two ranges (7:0 and 35:32, as AMD's), the
// privilege pair, a host-only flag at bit 41, a guest flag with inverted polarity at bit 40, a
// 4-bit threshold modifier with a smaller maximum, and a refused modifier.
constexpr const char* kDemo = R"TOML(
backend = "demo"
description = "a made-up PMU"
modifiers = ["u", "k", "h", "ng", "th"]

[format]
event = "0-7,32-35"
umask = "8-15"
usr = "16"
os = "17"
en = "22"
thresh = "24-27"
guest = "40"
host = "41"

[modifier.h]
field = "host"
kind = "flag"
desc = "host only"

[modifier.ng]
field = "guest"
kind = "flag"
polarity = "inverted"
desc = "not in guests: clears the guest bit, which is set otherwise"

[modifier.th]
field = "thresh"
kind = "value"
max = 9
desc = "threshold"

[modifier.e]
refuse = "the demo PMU has no edge detect"

[pmu]
description = "demo PMU"
model = "none"
score = 3
reserved = ["36-39", "42-63"]
driver_fields = ["en"]
unmatched = "not a demo CPU"

[[pmu.counters]]
count = 2
width = 44
control = 0x100
control_stride = 2
counter = 0x101
counter_stride = 2
rdpmc = 4

[[pmu.counters]]
kind = "fixed"
count = 1
width = 48
control = 0x200
counter = 0x201
cpus = ["big"]

[[pmu.registers]]
address = 0x300
name = "GLOBAL"
cpus = ["big"]

[cpus]
small = "a small demo part"
big = "a big demo part"

[[probe]]
vendor = "DemoVendrCPU"
family = 6
model = "0-3"
refuse = "models 0 to 3 are prototypes"

[[probe]]
vendor = ["DemoVendrCPU", "OtherDemoCPU"]
family = [6, "8-9"]
cpuid_set = ["1.edx.23"]
tag = "big"
name = "big demo part"

[[probe]]
vendor = "DemoVendrCPU"
family = 6
cpuid_clear = ["1.edx.23"]
tag = "small"
name = "small demo part"

[[event]]
name = "WIDE"
code = 0x1C0
desc = "a 12-bit code"
defaults = { th = 2 }

[[event]]
name = "NARROW"
code = 0x2E
desc = "an 8-bit code"
counters = [1]
)TOML";

pmc::EventCatalog demo() {
  pmc::EventCatalog c;
  c.load_string(kDemo, "demo.toml", "demo");
  return c;
}

// A CPU with the vendor, family and model, and CPUID.1:EDX[23] as given.
pmc::CpuInfo cpu(const std::string& vendor, unsigned family, unsigned model, bool edx23) {
  pmc::CpuidTable t;
  auto word = [&](std::size_t i) {
    std::uint32_t w = 0;
    for (std::size_t b = 0; b < 4; ++b) w |= static_cast<std::uint32_t>(static_cast<unsigned char>(vendor[i + b])) << (8 * b);
    return w;
  };
  t.set(0, 0, {1, word(0), word(8), word(4)});
  t.set(1, 0, {(family << 8) | (model << 4), 0, 0, edx23 ? (1u << 23) : 0u});
  return pmc::decode_cpuid(t, "test");
}

pmc::Encoding encode(const std::string& text, const pmc::EventCatalog& c, const pmc::PmuInfo& p) {
  return pmc::encode_with_catalog(pmc::parse_event(text), c, p);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_field_of_two_ranges_scatters_the_value_low_bits_first) {
  const pmc::BitField f = pmc::parse_bit_range("0-7,32-35");
  BOOST_TEST(f.width() == 12u);
  BOOST_TEST(f.mask() == 0xF000000FFull);
  BOOST_TEST(f.place(0x1C0) == 0x1000000C0ull);  // C0 in 7:0, 1 in 35:32
  BOOST_TEST(f.extract(0x1000000C0ull) == 0x1C0u);
  BOOST_TEST(f.max_value() == 0xFFFu);
  BOOST_TEST(f.str() == "0-7,32-35");
  BOOST_CHECK_THROW(pmc::parse_bit_range("0-7,4-9"), pmc::Error);  // overlap
  BOOST_CHECK_THROW(pmc::parse_bit_range("0-7,"), pmc::Error);
  pmc::RegisterFormat fmt;
  fmt.add("event", f);
  std::uint64_t reg = 0;
  BOOST_CHECK_THROW(fmt.set(reg, "event", 0x1000), pmc::Error);  // 13 bits
}

BOOST_AUTO_TEST_CASE(declared_modifiers_set_their_fields) {
  const pmc::EventCatalog c = demo();
  const pmc::PmuInfo p = pmc::pmu_from_data(cpu("DemoVendrCPU", 6, 5, true), c, "big");
  // WIDE: code 0x1C0 -> 0xC0 | 1 << 32; usr + os = 0x30000; default th = 2 -> 2 << 24; the guest
  // bit is set when ng = 0 (inverted polarity) -> 1 << 40.
  const pmc::Encoding w = encode("WIDE", c, p);
  BOOST_TEST(w.config == (0xC0ull | (1ull << 32) | 0x30000ull | (2ull << 24) | (1ull << 40)));
  BOOST_TEST(w.canonical == "demo::WIDE:u=1:k=1:h=0:ng=0:th=2");
  // :h sets bit 41; :ng clears bit 40; :th=9 is the maximum; :u alone drops os.
  const pmc::Encoding h = encode("WIDE:h:ng:th=9:u", c, p);
  BOOST_TEST(h.config == (0xC0ull | (1ull << 32) | 0x10000ull | (9ull << 24) | (1ull << 41)));
  BOOST_TEST(h.canonical == "demo::WIDE:u=1:k=0:h=1:ng=1:th=9");
  // The same as h=1 written as a value.
  BOOST_TEST(encode("WIDE:h=1:ng=1:th=9:u", c, p).config == h.config);
}

BOOST_AUTO_TEST_CASE(declared_modifiers_refuse_with_their_reasons) {
  const pmc::EventCatalog c = demo();
  const pmc::PmuInfo p = pmc::pmu_from_data(cpu("DemoVendrCPU", 6, 5, true), c, "big");
  auto error = [&](const std::string& text) {
    try {
      (void)encode(text, c, p);
    } catch (const pmc::Error& e) {
      return std::pair{e.kind(), std::string(e.what())};
    }
    return std::pair{pmc::errc::ok, std::string("no error")};
  };
  auto [k1, m1] = error("WIDE:e=1");
  BOOST_TEST((k1 == pmc::errc::attribute));
  BOOST_TEST(contains(m1, "modifier 'e' refused: the demo PMU has no edge detect"), m1);
  auto [k2, m2] = error("WIDE:th=10");  // above max = 9, although the field holds 15
  BOOST_TEST((k2 == pmc::errc::attribute_value));
  BOOST_TEST(contains(m2, "th=10"), m2);
  auto [k3, m3] = error("WIDE:h=2");
  BOOST_TEST((k3 == pmc::errc::attribute_value), m3);
  auto [k4, m4] = error("WIDE:c=1");  // a built-in the file's events do not accept
  BOOST_TEST((k4 == pmc::errc::attribute), m4);
  // An event may not be programmed on a counter it does not allow: NARROW is counter 1 only.
  BOOST_TEST((encode("NARROW", c, p).counters == std::vector<unsigned>{1}));
}

BOOST_AUTO_TEST_CASE(bad_declarations_name_file_line_and_column) {
  auto fails_at = [](const std::string& toml, const std::string& where, const std::string& what) {
    pmc::EventCatalog c;
    try {
      c.load_string(toml, "bad.toml", "demo");
      BOOST_ERROR("accepted: " << toml);
    } catch (const pmc::Error& e) {
      const std::string m = e.what();
      BOOST_TEST(contains(m, where), m);
      BOOST_TEST(contains(m, what), m);
    }
  };
  fails_at("backend = \"demo\"\n[format]\nevent = \"0-7\"\n[modifier.h]\nfield = \"host\"\n", "bad.toml:5:9",
           "field 'host' of modifier 'h' is not in [format]");
  fails_at("backend = \"demo\"\n[format]\nevent = \"0-7\"\nhost = \"41\"\n[modifier.h]\nfield = \"host\"\nkind = \"toggle\"\n",
           "bad.toml:7:8", "unknown kind 'toggle'");
  fails_at("backend = \"demo\"\nmodifiers = [\"zz\"]\n[format]\nevent = \"0-7\"\n", "bad.toml:2:14", "unknown modifier 'zz'");
  fails_at("backend = \"demo\"\n[format]\nevent = \"0-7\"\n[cpus]\na = \"A\"\n[[probe]]\nvendor = \"X\"\ntag = \"b\"\nname = \"B\"\n",
           "bad.toml:8:7", "cpu tag 'b' is not declared");
  fails_at("backend = \"demo\"\n[format]\nevent = \"0-7\"\n[[probe]]\ncpuid_set = [\"1.efx.23\"]\nrefuse = \"no\"\n",
           "bad.toml:5:14", "LEAF[:SUBLEAF].REG.BITS");
  fails_at("backend = \"demo\"\n[format]\nevent = \"0-7,32-35\"\n[[event]]\nname = \"X\"\ncode = 0x1000\ndesc = \"d\"\n",
           "bad.toml:6:8", "does not fit the 12-bit field at bits 0-7,32-35");
}

BOOST_AUTO_TEST_CASE(reserved_bits_and_driver_fields_are_refused) {
  pmc::EventCatalog c = demo();
  // A later file puts an event's code into the reserved bits 36-39 through a wider field.
  c.load_string("backend = \"demo\"\n[format]\nevent = \"0-7,36-39\"\n[[event]]\nname = \"BAD\"\ncode = 0x1C0\ndesc = \"d\"\n",
                "later.toml", "demo");
  const pmc::PmuInfo p = pmc::pmu_from_data(cpu("DemoVendrCPU", 6, 5, true), c, "big");
  try {
    (void)encode("BAD", c, p);
    BOOST_ERROR("an encoding with reserved bits was accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(contains(e.what(), "sets bits the demo PMU reserves (0x1000000000)"), e.what());
  }
  bool reported = false;
  for (const auto& problem : c.validate(2)) reported = reported || contains(problem, "BAD has code 0x1C0, which sets reserved bits");
  BOOST_TEST(reported);
}

BOOST_AUTO_TEST_CASE(the_pmu_shape_is_data) {
  const pmc::EventCatalog c = demo();
  const pmc::PmuInfo big = pmc::pmu_from_data(cpu("DemoVendrCPU", 6, 5, true), c, "big");
  BOOST_TEST(big.name == "demo");
  BOOST_TEST(big.device_model == "none");
  BOOST_TEST(big.reserved == ((0xFull << 36) | (~0ull << 42)));
  BOOST_TEST_REQUIRE(big.counters.size() == 3u);
  // General 0 and 1: control 0x100 + 2i, counter 0x101 + 2i, RDPMC 4 + i, 44 bits.
  BOOST_TEST(big.counters[1].control_msr == 0x102u);
  BOOST_TEST(big.counters[1].counter_msr == 0x103u);
  BOOST_TEST(*big.counters[1].rdpmc == 5u);
  BOOST_TEST(big.counters[1].width == 44u);
  BOOST_TEST((big.counters[2].kind == pmc::CounterKind::fixed));
  BOOST_TEST(!big.counters[2].rdpmc.has_value());
  BOOST_TEST((big.registers == std::vector<std::uint32_t>{0x100, 0x101, 0x102, 0x103, 0x200, 0x201, 0x300}));
  // The small part has neither the fixed counter nor the global register.
  const pmc::PmuInfo small = pmc::pmu_from_data(cpu("DemoVendrCPU", 6, 5, false), c, "small");
  BOOST_TEST(small.counters.size() == 2u);
  BOOST_TEST((small.registers == std::vector<std::uint32_t>{0x100, 0x101, 0x102, 0x103}));
}

BOOST_AUTO_TEST_CASE(the_probe_table_decides_in_order_with_reasons) {
  const pmc::EventCatalog c = demo();
  const pmc::Match proto = pmc::probe_table(cpu("DemoVendrCPU", 6, 2, true), c);
  BOOST_TEST(!proto.matched());
  BOOST_TEST(proto.reason == "DemoVendrCPU family 6 model 2: models 0 to 3 are prototypes");
  const pmc::Match big = pmc::probe_table(cpu("DemoVendrCPU", 6, 5, true), c);
  BOOST_TEST(big.score == 3);
  BOOST_TEST(big.cpu_tag == "big");
  BOOST_TEST(big.part == "big demo part");
  BOOST_TEST(big.reason == "DemoVendrCPU family 6 model 5: big demo part");
  BOOST_TEST(pmc::probe_table(cpu("DemoVendrCPU", 6, 5, false), c).cpu_tag == "small");
  BOOST_TEST(pmc::probe_table(cpu("OtherDemoCPU", 9, 0, true), c).cpu_tag == "big");  // family "8-9"
  const pmc::Match none = pmc::probe_table(cpu("OtherDemoCPU", 7, 0, true), c);
  BOOST_TEST(!none.matched());
  BOOST_TEST(none.reason == "OtherDemoCPU family 7 model 0: not a demo CPU");
}

// The issue's promise end to end: an events file on `events_path` declares a two-range field and
// a new modifier for an installed backend, and `pmc encode` honours both.
BOOST_FIXTURE_TEST_CASE(an_events_file_widens_a_field_and_adds_a_modifier_for_pmc_encode, pmc_test::PmcCommand) {
  pmc_test::spit(tmp.path() / "wide.toml", R"TOML(backend = "p6"
[pmu]
reserved = ["21"]
[format]
event = "0-7,32-35"
host = "41"
[modifier.h]
field = "host"
kind = "flag"
desc = "host only (made up for the test)"
[[event]]
name = "WIDE_EVENT"
code = 0x1C0
desc = "a 12-bit code on a P6 made up for the test"
modifiers = ["u", "k", "h"]
)TOML");
  pmc_test::spit(tmp.path() / "config.toml", "events_path = [\"wide.toml\"]\n");
  const auto r = pmc({"--config", (tmp.path() / "config.toml").string(), "encode", "--json", "--cpuid-dump",
                      "pentium-iii", "WIDE_EVENT:h", "WIDE_EVENT:k"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto doc = nlohmann::json::parse(r.out);
  // 0xC0 in 7:0, 0x1 in 35:32, usr + os (16, 17), host (41); then os alone.
  BOOST_TEST(doc.at(0).at("config").get<std::string>() == "0x201000300C0");
  BOOST_TEST(doc.at(0).at("canonical").get<std::string>() == "p6::WIDE_EVENT:u=1:k=1:h=1");
  BOOST_TEST(doc.at(1).at("config").get<std::string>() == "0x1000200C0");
}
