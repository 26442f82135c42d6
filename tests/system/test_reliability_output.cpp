#define BOOST_TEST_MODULE reliability_output
#include <boost/test/unit_test.hpp>

// Reliability of the `pmc` program's output (issue 13): output that cannot kill it (stderr on
// /dev/full, a reader that closes the pipe; stdout on /dev/full is an error, issue 26). pmc runs
// as a child with a time limit, and nothing it started may be left running
// (reliability_test_support.hpp); the commands it runs are in test_reliability.cpp.

#include "reliability_test_support.hpp"
#include "support/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace pmc_test::reliability;

// =============================================================================================
BOOST_AUTO_TEST_SUITE(output)

// An error message that cannot be written (stderr on a full device) once threw inside the
// error handler: SIGABRT instead of exit 1. encode's documented status when one event fails is
// 1, with the good events still printed on stdout.
BOOST_FIXTURE_TEST_CASE(encode_with_stderr_on_dev_full, Fixture) {
  const auto status =
      pmc({"encode", "--cpuid-dump", "pentium-iii", "INST_RETIRED", "BAD_EVENT"}, out.string(), "/dev/full");
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 1");
  BOOST_TEST(contains(pmc_test::slurp(out), "INST_RETIRED"), pmc_test::slurp(out));
  // A usage error: exit 2 however stderr fares.
  const auto usage = pmc({"encode", "--no-such-option"}, out.string(), "/dev/full");
  BOOST_REQUIRE(usage);
  BOOST_TEST(describe(*usage) == "exit 2");
  // An error before anything is printed (a config file that does not exist): exit 1.
  const auto missing = pmc({"--config", (tmp.path() / "none.toml").string(), "probe"}, out.string(), "/dev/full");
  BOOST_REQUIRE(missing);
  BOOST_TEST(describe(*missing) == "exit 1");
}

// stat reports on stderr; on a full device the report is lost, the command's status is not.
BOOST_FIXTURE_TEST_CASE(stat_with_stderr_on_dev_full, Fixture) {
  const auto status = pmc({"stat", "-e", "task-clock", "--", "sh", "-c", "exit 3"}, out.string(), "/dev/full");
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 3");
  // Killed by a signal: 128 + N, report or not.
  const auto killed = pmc({"stat", "-e", "tsc", "--", "sh", "-c", "kill -TERM $$"}, out.string(), "/dev/full");
  BOOST_REQUIRE(killed);
  BOOST_TEST(describe(*killed) == "exit " + std::to_string(128 + SIGTERM));
  // A command that cannot start: exit 1, with nowhere to say why.
  const auto cannot = pmc({"stat", "--", "no-such-command-pmc-test"}, out.string(), "/dev/full");
  BOOST_REQUIRE(cannot);
  BOOST_TEST(describe(*cannot) == "exit 1");
}

// Reports on stdout to a full device: an error naming standard output, exit 1 (issue 26 item
// 13: once lost silently, exit 0).
BOOST_FIXTURE_TEST_CASE(stdout_on_dev_full, Fixture) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"list", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"list", "--cpuid-dump", "pentium-iii", "--json"},
        std::vector<std::string>{"probe", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo"},
        std::vector<std::string>{"--help"}}) {
    BOOST_TEST_CONTEXT("pmc " << join(args)) {
      const auto status = pmc(args, "/dev/full", err.string());
      BOOST_REQUIRE(status);
      BOOST_TEST(describe(*status) == "exit 1", pmc_test::slurp(err));
      BOOST_TEST(pmc_test::slurp(err) == "pmc: writing standard output: No space left on device\n");
    }
  }
}

// `pmc list | head -1`: the reader goes away. pmc ignores SIGPIPE, so each write fails with
// EPIPE instead of killing it; it ends normally (exit 0: the listing is not an error) with
// nothing on stderr. Here the reader closes the pipe at once, before pmc has opened its Hal (a
// real `head -1` below too).
BOOST_FIXTURE_TEST_CASE(a_reader_that_goes_away, Fixture) {
  int fds[2];
  BOOST_REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::optional<int> status;
  {
    Pmc p({"list", "--cpuid-dump", "pentium-iii"}, env, "", err.string(), fds[1]);
    ::close(fds[1]);
    ::close(fds[0]);
    status = p.wait(60s);
  }
  BOOST_REQUIRE_MESSAGE(status, "pmc did not finish");
  BOOST_TEST(describe(*status) == "exit 0");
  BOOST_TEST(pmc_test::slurp(err).empty(), pmc_test::slurp(err));

  // Through a shell pipeline, as a user types it; bash's PIPESTATUS gives pmc's status.
  const pmc_test::Result r =
      pmc_test::run("/usr/bin/bash",
                    {"-c", kPmc.string() + " list --cpuid-dump pentium-iii | head -1; echo \"pmc ${PIPESTATUS[0]}\" >&2"},
                    env, tmp.path());
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(std::count(r.out.begin(), r.out.end(), '\n') == 1, r);
  BOOST_TEST(contains(r.out, "events for"), r);  // the listing's first line
  BOOST_TEST(r.err == "pmc 0\n", r);
}

BOOST_AUTO_TEST_SUITE_END()
