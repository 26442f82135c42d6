#define BOOST_TEST_MODULE encode_cost
#include <boost/test/unit_test.hpp>

// Encoding allocates only the Encoding it returns (docs/performance.md, "Encoding"): the shared
// encoder looks events up through the catalog's hashed index and resolves fields and modifiers
// by position, with its working lists on the stack. Allocations are counted by replacing
// operator new in this program. The encoding itself is worked out by hand from amd.toml.

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/backend.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

// The replacement pair is malloc and free; GCC, seeing both, would call the library's delete of
// a new'ed pointer mismatched.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

pmc::Hal zen4() {
  pmc::Config cfg;
  cfg.cpu = (std::filesystem::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "amd-zen4-genoa.txt").string();
  return pmc::Hal::open(cfg);
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_encoding_allocates_only_itself) {
  const pmc::Hal hal = zen4();
  const pmc::EventSpec spec = pmc::parse_event("LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:u");
  (void)hal.events().events();  // the events decoded, once (not one by one from the parse cache)
  (void)pmc::encode_with_catalog(spec, hal.events(), hal.pmu());
  allocations = 0;
  counting = true;
  const pmc::Encoding e = pmc::encode_with_catalog(spec, hal.events(), hal.pmu());
  counting = false;
  // The Encoding's own storage: the event string (41 characters, beyond the 15 a std::string
  // holds in place), the canonical string, and the list of counters. Nothing else.
  BOOST_TEST(allocations.load() == 3);
  // LS_DISPATCH is event 0x29; LD_DISPATCH (0x01) | STORE_DISPATCH (0x02) = unit mask 0x03 in bits
  // 15:8; ":u" alone sets USR (bit 16) and clears OS (bit 17): 0x0001_0329.
  BOOST_TEST(e.config == 0x10329u);
  // The masks in declaration order (LD_ST_DISPATCH, STORE_DISPATCH, LD_DISPATCH), then every
  // modifier of amd.toml's list (u, k, e, i, c, h, g) with its value.
  BOOST_TEST(e.canonical == "amd::LS_DISPATCH:STORE_DISPATCH:LD_DISPATCH:u=1:k=0:e=0:i=0:c=0:h=0:g=0");
  // A Genoa with PerfCtrExtCore (CPUID 80000001H ECX[23]): six general counters, any of them.
  BOOST_TEST(e.counters.size() == 6u);
}

BOOST_AUTO_TEST_CASE(lookups_allocate_nothing) {
  const pmc::Hal hal = zen4();
  const pmc::EventCatalog& c = hal.events();
  (void)c.events();  // decoded (a catalog restored from the parse cache decodes at the first need)
  (void)c.find("LS_DISPATCH", "zen4");
  allocations = 0;
  counting = true;
  const pmc::EventDef* byname = c.find("ls_dispatch", "zen4");
  const pmc::UnitMask* mask = nullptr;
  const pmc::EventDef* bygeneric = c.find_generic_mask("instructions", "zen4", &mask);
  counting = false;
  BOOST_TEST(allocations.load() == 0);
  BOOST_REQUIRE(byname);
  BOOST_TEST(byname->code == 0x29u);
  BOOST_TEST(byname->cpus == std::vector<std::string>{"zen4"});
  BOOST_TEST(bygeneric != nullptr);
}

// With the Zen 4 catalog restored from the parse cache (at its first use: Hal::pmu() here), the
// first encoding decodes the one event it needs, not the thousand definitions (their strings
// alone are tens of thousands of allocations).
BOOST_AUTO_TEST_CASE(a_first_encoding_decodes_one_event) {
  (void)zen4().pmu();  // the parse cache filled
  const pmc::Hal hal = zen4();
  (void)hal.pmu();
  allocations = 0;
  counting = true;
  const pmc::Encoding e = hal.encode("cycles");
  counting = false;
  BOOST_TEST(allocations.load() < 1000, allocations.load() << " allocations");
  BOOST_TEST(e.name == "CYCLES_NOT_IN_HALT");
  // Decoding the whole catalog afterwards: far more.
  allocations = 0;
  counting = true;
  (void)hal.events().events();
  counting = false;
  BOOST_TEST(allocations.load() > 10000, allocations.load() << " allocations");
}
