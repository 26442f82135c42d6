// Issue 26, files and outputs: what `pmc` echoes of a huge input, what it does when its output
// cannot be written (a full disk: /dev/full), and how it replaces files it writes (no write
// through a link planted at the temporary file's name).
#define BOOST_TEST_MODULE outputs
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <algorithm>
#include <string>

namespace {

using pmc_test::PmcCommand;
using pmc_test::Result;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(echoed_input, PmcCommand)

// A 100 KB event string: the message quotes its first 80 bytes once and says how long it is
// (once it quoted the whole string twice: a 200 KB message).
BOOST_AUTO_TEST_CASE(a_huge_event_string_is_cut_and_echoed_once) {
  const std::string huge(102400, 'A');
  for (const std::string& event : {huge, huge + ":u", huge + ":c=x"}) {
    const Result r = pmc({"encode", "--cpuid-dump", "pentium-iii", event});
    BOOST_TEST_CONTEXT("event of " << event.size() << " bytes") {
      BOOST_TEST(r.status == 1);
      BOOST_TEST(r.err.size() < 400u, r.err.substr(0, 400));
      BOOST_TEST(count(r.err, std::string(80, 'A')) == 1u, r.err.substr(0, 400));
      BOOST_TEST(contains(r.err, "... (" + std::to_string(event.size()) + " bytes)"), r.err.substr(0, 400));
      BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
  }
  // A short one is still quoted whole.
  const Result r = pmc({"encode", "--cpuid-dump", "pentium-iii", "NO_SUCH_EVENT_X"});
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "event 'NO_SUCH_EVENT_X'"), r.err);
  BOOST_TEST(!contains(r.err, "bytes)"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
