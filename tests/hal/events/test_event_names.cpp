// The names users type (docs/event-format.md, "Names users type"): Intel's EVENT.UMASK names in
// any case, libpfm4's EVENT:UMASK spelling of them, perf's event.umask spelling of an event and
// one of its unit masks, with modifiers after either, and what stays an error.
#define BOOST_TEST_MODULE event_names
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/sdk/backend.hpp>

#include <string>

namespace {

// An Intel-style catalog (one event per code and unit mask, named EVENT.UMASK) and an AMD-style
// one (an event with named unit masks) in one file.
const char* kCatalog = R"(backend = "t"
modifiers = ["u", "k", "e", "i", "c"]
[format]
event = "0-7"
umask = "8-15"
usr = "16"
os = "17"
edge = "18"
inv = "23"
cmask = "24-31"
[cpus]
a = "CPU A"
b = "CPU B"
[[event]]
name = "INST_RETIRED.ANY_P"
code = 0xC0
umask = 0x00
desc = "instructions"
[[event]]
name = "MEM_LOAD_RETIRED.L3_MISS"
code = 0xD1
umask = 0x20
desc = "loads that missed L3"
aliases = ["MEM_LOAD_UOPS_RETIRED.L3_MISS"]
[[event]]
name = "ONLY_B.THING"
code = 0x10
umask = 0x01
desc = "an event of CPU B"
cpus = ["b"]
[[event]]
name = "LS_DISPATCH"
code = 0x29
desc = "dispatched loads and stores"
aliases = ["LsDispatch"]
[event.umasks]
combinable = true
masks = [
  { name = "LD_DISPATCH", value = 0x01, desc = "loads" },
  { name = "STORE_DISPATCH", value = 0x02, desc = "stores" },
]
# An event with unit masks and, beside it, an event named as one of its masks would be.
[[event]]
name = "CACHE"
code = 0x2E
desc = "cache"
[event.umasks]
default = ["HIT"]
masks = [
  { name = "HIT", value = 0x01, desc = "hits" },
  { name = "MISS", value = 0x02, desc = "misses" },
]
[[event]]
name = "CACHE.HIT"
code = 0x2F
umask = 0x04
desc = "another event spelled like CACHE with its mask HIT"
[[event]]
name = "CACHE.WAYS"
code = 0x2E
umask = 0x10
desc = "CACHE's neighbour"
)";

pmc::EventCatalog catalog() {
  pmc::EventCatalog c;
  c.load_string(kCatalog, "n.toml", "t");
  return c;
}

pmc::PmuInfo pmu(const char* tag = "a") {
  pmc::PmuInfo p;
  p.name = "t";
  p.cpu_tag = tag;
  for (unsigned i = 0; i < 2; ++i) {
    pmc::CounterInfo c;
    c.kind = pmc::CounterKind::general;
    c.index = i;
    c.width = 48;
    p.counters.push_back(c);
  }
  return p;
}

pmc::Encoding encode(const std::string& text, const char* tag = "a") {
  static const pmc::EventCatalog c = catalog();
  return pmc::encode_with_catalog(pmc::parse_event(text), c, pmu(tag));
}

std::string error_of(const std::string& text, const char* tag = "a") {
  try {
    (void)encode(text, tag);
  } catch (const pmc::Error& e) {
    return e.what();
  }
  return {};
}

constexpr std::uint64_t kUserKernel = 3ull << 16;

}  // namespace

BOOST_AUTO_TEST_CASE(intel_names_in_any_case) {
  BOOST_TEST(encode("INST_RETIRED.ANY_P").name == "INST_RETIRED.ANY_P");
  BOOST_TEST(encode("inst_retired.any_p").config == (kUserKernel | 0xC0));
  BOOST_TEST(encode("Mem_Load_Retired.L3_Miss:u").config == ((1ull << 16) | 0x20D1));
}

BOOST_AUTO_TEST_CASE(libpfm4_event_colon_umask) {
  const pmc::Encoding e = encode("INST_RETIRED:ANY_P");
  BOOST_TEST(e.name == "INST_RETIRED.ANY_P");
  BOOST_TEST(e.config == (kUserKernel | 0xC0));
  BOOST_TEST(e.canonical == "t::INST_RETIRED.ANY_P:u=1:k=1:e=0:i=0:c=0");
  // Modifiers after the unit mask as usual, in any case.
  const pmc::Encoding m = encode("mem_load_retired:l3_miss:u:c=1");
  BOOST_TEST(m.name == "MEM_LOAD_RETIRED.L3_MISS");
  BOOST_TEST(m.config == ((1ull << 24) | (1ull << 16) | 0x20D1));
  // An alias joined with its unit mask is a name too.
  BOOST_TEST(encode("MEM_LOAD_UOPS_RETIRED:L3_MISS").name == "MEM_LOAD_RETIRED.L3_MISS");
  // EVENT is an event but UMASK is not one of its masks: EVENT.UMASK, when it is an event.
  BOOST_TEST(encode("CACHE:WAYS").name == "CACHE.WAYS");
  BOOST_TEST(encode("CACHE:WAYS").config == (kUserKernel | 0x102E));
  // ... and its own unit mask wins over an event spelled EVENT.UMASK.
  BOOST_TEST(encode("CACHE:HIT").name == "CACHE");
  BOOST_TEST(encode("CACHE:HIT").config == (kUserKernel | 0x012E));
}

BOOST_AUTO_TEST_CASE(perf_event_dot_umask) {
  const pmc::Encoding e = encode("ls_dispatch.ld_dispatch");
  BOOST_TEST(e.name == "LS_DISPATCH");
  BOOST_TEST(e.config == (kUserKernel | 0x0129));
  BOOST_TEST(e.canonical == "t::LS_DISPATCH:LD_DISPATCH:u=1:k=1:e=0:i=0:c=0");
  // With modifiers, with more unit masks of a combinable group, through an alias.
  BOOST_TEST(encode("LS_DISPATCH.LD_DISPATCH:u").config == ((1ull << 16) | 0x0129));
  BOOST_TEST(encode("ls_dispatch.ld_dispatch:store_dispatch").config == (kUserKernel | 0x0329));
  BOOST_TEST(encode("lsdispatch.store_dispatch").config == (kUserKernel | 0x0229));
  // A name that is an event is that event, not an event and a mask.
  BOOST_TEST(encode("cache.hit").name == "CACHE.HIT");
  BOOST_TEST(encode("cache.miss").name == "CACHE");
  BOOST_TEST(encode("cache.miss").config == (kUserKernel | 0x022E));
}

BOOST_AUTO_TEST_CASE(what_stays_an_error) {
  // '_' differences are not ignored.
  std::string m = error_of("ls_dispatch.lddispatch");
  BOOST_TEST(m.find("unknown event 'ls_dispatch.lddispatch'") != std::string::npos, m);
  m = error_of("INST_RETIRED:ANY");
  BOOST_TEST(m.find("unknown event 'INST_RETIRED'") != std::string::npos, m);
  // An event whose unit mask is not one of its own, nor an event joined with it.
  m = error_of("CACHE:NONE");
  BOOST_TEST(m.find("unknown unit mask 'NONE' for event CACHE") != std::string::npos, m);
  // The mask a perf name carries counts as given: naming it again is refused at its column.
  m = error_of("ls_dispatch.ld_dispatch:ld_dispatch");
  BOOST_TEST(m.find("column 25: unit mask 'LD_DISPATCH' given twice") != std::string::npos, m);
  // A non-combinable group takes one: the second is refused.
  m = error_of("cache.miss:hit");
  BOOST_TEST(m.find("cannot be combined") != std::string::npos, m);
  // Another CPU's event, in either spelling, says where it exists.
  for (const char* s : {"ONLY_B.THING", "only_b:thing"}) {
    m = error_of(s);
    BOOST_TEST(m.find("event ONLY_B.THING does not exist on this CPU (a); it exists on: b") != std::string::npos, m);
    BOOST_TEST(encode(s, "b").config == (kUserKernel | 0x0110));
  }
}
