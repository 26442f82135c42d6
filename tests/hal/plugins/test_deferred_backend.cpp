// Hal::open with the probe an earlier open kept (hal/src/session/preselection.hpp): what it says
// of the chosen backend (name, description, data file, profiling) comes from the parse cache's
// record, and the backend's library is loaded at the backend's first use (an encoding, the PMU,
// the events, a session), not by Hal::open. What a program sees of it: the library is not in
// its memory map after Hal::open and is after the first encoding, and the encoding is the one
// an open that loaded the library gave. A library that no longer loads, or holds another
// backend by then, is named at that first use.
#define BOOST_TEST_MODULE deferred_backend
#include <boost/test/unit_test.hpp>

#include "context.hpp"
#include "support/child_process.hpp"
#include "support/messages.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// Whether a library of that file name is mapped into this process (/proc/self/maps).
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.size() > name.size() && line.compare(line.size() - name.size() - 1, std::string::npos, "/" + name) == 0)
      return true;
  return false;
}

// The parse cache of these tests: their own, so that the first open below is the first.
struct OwnCache {
  pmc_test::TempDir tmp{"pmc-test-deferred"};
  OwnCache() { ::setenv("PMC_CACHE_DIR", (tmp.path() / "cache").c_str(), 1); }
  ~OwnCache() { ::unsetenv("PMC_CACHE_DIR"); }
};

pmc::Config pentium_iii() {
  pmc::Config cfg;
  cfg.cpu = "pentium-iii";  // a bundled CPUID dump: the p6 backend, on any machine
  return cfg;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_kept_probe_loads_the_backend_at_its_first_use, OwnCache) {
  BOOST_TEST_REQUIRE(!mapped("libp6.so"), "libp6.so is loaded before any HAL is opened");
  pmc::Encoding loaded;
  pmc::BackendInfo info;
  std::string pmu;
  {
    // The first open probes: it loads the library (and keeps the probe for the next open).
    const pmc::Hal hal = pmc::Hal::open(pentium_iii());
    BOOST_TEST_REQUIRE(hal.backend() != nullptr, hal.why());
    BOOST_TEST(mapped("libp6.so"));
    info = *hal.backend();
    loaded = hal.encode("INST_RETIRED:u");
    pmu = hal.pmu().name;
  }
  BOOST_TEST_REQUIRE(!mapped("libp6.so"), "the library stays loaded after its HAL is gone");

  const pmc::Hal hal = pmc::Hal::open(pentium_iii());
  BOOST_TEST_REQUIRE(hal.backend() != nullptr, hal.why());
  BOOST_TEST(!mapped("libp6.so"), "the second open loaded the backend's library");
  // What the open says of the backend is what the open that loaded it said.
  BOOST_TEST(hal.backend()->name == "p6");
  BOOST_TEST(hal.backend()->description == info.description);
  BOOST_TEST(hal.backend()->file == info.file);
  BOOST_TEST(hal.backend()->data == info.data);
  BOOST_TEST(hal.backend()->profiles == info.profiles);
  BOOST_TEST(hal.why().find("p6 matched with score") != std::string::npos, hal.why());
  // The first encoding loads it, and encodes as before.
  const pmc::Encoding e = hal.encode("INST_RETIRED:u");
  BOOST_TEST(mapped("libp6.so"));
  BOOST_TEST(e.canonical == loaded.canonical);
  BOOST_TEST(e.config == loaded.config);
  BOOST_TEST(hal.pmu().name == pmu);
}

// Context::backend() of a backend Hal::open did not load: the checks and the load happen there,
// so what changed in between is reported there, naming the library.
BOOST_AUTO_TEST_CASE(a_library_that_holds_another_backend_by_then_is_named) {
  pmc::detail::Context ctx;
  const fs::path lib = fs::path(PMC_TEST_PLUGIN_DIR) / "testgood" / "libtestgood.so";
  ctx.later = pmc::detail::LaterBackend{lib, "p6", false};
  BOOST_TEST(ctx.has_backend());
  const std::string m = pmc_test::message_of([&] { (void)ctx.backend(); });
  BOOST_TEST(m.find(lib.string() + ": the library changed after the HAL was opened (it holds backend 'testgood' now, "
                                   "not the 'p6' that was chosen); open the HAL again") != std::string::npos,
             m);
  // Asked again, it says so again (nothing half-loaded was kept).
  BOOST_TEST(pmc_test::message_of([&] { (void)ctx.backend(); }) == m);
}

BOOST_AUTO_TEST_CASE(a_library_gone_since_the_open_is_named) {
  pmc_test::TempDir tmp{"pmc-test-deferred-gone"};
  pmc::detail::Context ctx;
  const fs::path lib = tmp.path() / "libp6.so";
  ctx.later = pmc::detail::LaterBackend{lib, "p6", false};
  try {
    (void)ctx.backend();
    BOOST_FAIL("a missing library loaded");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::plugin));
    const std::string m = e.what();
    BOOST_TEST(m.find("backend 'p6' cannot be loaded: " + lib.string()) != std::string::npos, m);
  }
}
