// The Pentium (P5) cannot sample: its counters raise no interrupt on overflow (CESR's PC bit
// only drives the PM0/PM1 pins; docs/hardware/p5.md sections 2, 3.2 and 4), so `period=` is
// refused naming the event and that reason, on a catalog event and a raw one alike, and a
// profile is refused because the backend has no driver that samples (docs/profiling.md).
#define BOOST_TEST_MODULE p5_sampling
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>

#include <string>

namespace {

pmc::Session session() {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-mmx.txt";
  return pmc::Hal::open(cfg).session();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// The P5 cannot interrupt on overflow: period= is refused naming the event and why.
BOOST_AUTO_TEST_CASE(the_p5_refuses_sampling_with_the_reason) {
  pmc::Session s = session();
  for (const std::string event : {"INSTRUCTIONS_EXECUTED:period=1000", "r16:u:period=1000"}) {
    std::string why;
    try {
      s.add(event);
    } catch (const pmc::Error& e) {
      why = e.what();
      BOOST_TEST((e.kind() == pmc::errc::not_supported));
    }
    BOOST_TEST(contains(why, "event '" + event + "'"));
    BOOST_TEST(contains(why, event.substr(0, event.find(':')) + " cannot be sampled"));
    BOOST_TEST(contains(why, "cannot interrupt on overflow"));
    BOOST_TEST(contains(why, "PM0/PM1"));
  }
  BOOST_TEST(s.read().empty());  // nothing was added
}

// Without a period: counting works, and a profile is refused since no p5 driver samples.
BOOST_AUTO_TEST_CASE(a_profile_is_refused_on_the_p5) {
  pmc::Session s = session();
  s.add("INSTRUCTIONS_EXECUTED");
  std::string why;
  try {
    s.profile({true, std::nullopt});
  } catch (const pmc::Error& e) {
    why = e.what();
    BOOST_TEST((e.kind() == pmc::errc::not_supported));
  }
  BOOST_TEST(contains(why, "backend 'p5' collects no profiles"));
}

