#define BOOST_TEST_MODULE profile_cli
#include <boost/test/unit_test.hpp>

// pmc profile and pmc probe with the alpha21064_sim backend, whose driver samples at counter
// interrupts (pfm(7) PFM_IPL and PFM_PROFILING): the IPL histogram drawn, the hottest PC buckets
// (text and --json, user and kernel), whether a backend profiles, and the refusals. Expected
// values are worked out by hand from docs/hardware/alpha21064.md and the model's documented
// rules, as the example workloads' comments do (and as in test_profile.cpp, which profiles
// through the HAL).

#include <nlohmann/json.hpp>

#include <string>

#include "support/messages.hpp"
#include "support/pmc_command.hpp"

// ---------------------------------------------------------------------------------------------
// pmc profile.

namespace {
using pmc_test::contains;
using Cli = pmc_test::PmcCommand;
}  // namespace

BOOST_FIXTURE_TEST_CASE(pmc_profile_draws_the_ipl_histogram, Cli) {
  auto r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-ipl", "-e", "PF_CYCLES:period=4096"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "20 counter interrupts sampled"), r);
  // The user slot is the longest bar (40 marks), idle 6/10 of it (24), IPL 3 one tenth (4).
  BOOST_TEST(contains(r.out, "user                       10   50.0%  |" + std::string(40, '#') + "\n"), r);
  BOOST_TEST(contains(r.out, "idle                        6   30.0%  |" + std::string(24, '#') + "\n"), r);
  BOOST_TEST(contains(r.out, "IPL 3                       1    5.0%  |" + std::string(4, '#') + "\n"), r);
  BOOST_TEST(contains(r.out, "IPL 1                       0    0.0%  |\n"), r);
  BOOST_TEST(contains(r.out, "No PC profile: no user segment of the workload has a `pc` range"), r);
}

BOOST_FIXTURE_TEST_CASE(pmc_profile_lists_the_hottest_buckets, Cli) {
  auto r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "-e",
                "PF_CYCLES:period=4096", "--top", "3"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "PC profile of user addresses [0x120000000, 0x120001000): 256 buckets of 16 bytes, 80 samples"), r);
  BOOST_TEST(contains(r.out, "the workload's busiest user code"), r);
  BOOST_TEST(contains(r.out, "Hottest 3 of the 67 buckets with samples"), r);
  const auto first = r.out.find("0x120000430-0x12000043F");
  const auto second = r.out.find("0x120000400-0x12000040F");
  const auto third = r.out.find("0x120000410-0x12000041F");
  BOOST_TEST((first != std::string::npos && first < second && second < third && third != std::string::npos), r);
  BOOST_TEST(!contains(r.out, "0x120000420-0x12000042F"), r);  // fourth: not listed with --top 3

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "-e", "PF_CYCLES:period=4096",
           "--pc", "0x120000400:0x120000440", "--json", "--top", "2"});
  BOOST_TEST(r.status == 0, r);
  auto j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at("pc_profile").at("start") == "0x120000400");
  BOOST_TEST(j.at("pc_profile").at("chosen") == "--pc");
  BOOST_TEST(j.at("pc_profile").at("buckets") == 4);
  BOOST_TEST(j.at("pc_profile").at("total") == 17);  // 4 + 4 + 4 + 5
  BOOST_TEST(j.at("pc_profile").at("hottest").size() == 2u);
  BOOST_TEST(j.at("pc_profile").at("hottest").at(0).at("start") == "0x120000430");
  BOOST_TEST(j.at("pc_profile").at("hottest").at(0).at("samples") == 5);
  BOOST_TEST(j.at("levels").at("total") == 83);  // 64 + 16 + 1 user, 2 kernel
  BOOST_TEST(j.at("levels").at("bins").at(8).at("samples") == 81);
  BOOST_TEST(j.at("counters").at(0).at("value") == 83 * 4096);

  // --kernel: the workload's kernel text at KSEG [0xfffffc0000310000, +8 KiB), 2 interrupts at
  // offsets 4095 and 8191: buckets 255 and 511.
  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "-e", "PF_CYCLES:period=4096",
           "--kernel", "--json"});
  BOOST_TEST(r.status == 0, r);
  j = nlohmann::json::parse(r.out);
  BOOST_TEST(j.at("pc_profile").at("space") == "kernel");
  BOOST_TEST(j.at("pc_profile").at("start") == "0xFFFFFC0000310000");
  BOOST_TEST(j.at("pc_profile").at("end") == "0xFFFFFC0000312000");
  BOOST_TEST(j.at("pc_profile").at("total") == 2);
  BOOST_TEST(j.at("pc_profile").at("hottest").at(0).at("start") == "0xFFFFFC0000310FF0");
  BOOST_TEST(j.at("pc_profile").at("hottest").at(1).at("start") == "0xFFFFFC0000311FF0");
}

BOOST_FIXTURE_TEST_CASE(pmc_probe_says_whether_the_backend_profiles, Cli) {
  auto r = pmc({"probe", "--backend", "alpha21064_sim"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "\nProfiling:  yes"), r);
  r = pmc({"probe", "--cpuid-dump", "pentium-iii", "--json"});  // p6: samples at overflow (period=)
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(nlohmann::json::parse(r.out).at("pmu").at("profiling") == true);
  r = pmc({"probe", "--cpuid-dump", "pentium-mmx", "--json"});  // p5: cannot interrupt on overflow
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(nlohmann::json::parse(r.out).at("pmu").at("profiling") == false);
  r = pmc({"probe", "--cpuid-dump", "pentium-mmx"});
  BOOST_TEST(contains(r.out, "\nProfiling:  no: its driver does not sample"), r);
}

BOOST_FIXTURE_TEST_CASE(pmc_profile_refusals, Cli) {
  auto r = pmc({"profile", "--cpuid-dump", "pentium-mmx", "--workload", "p6-demo"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "pmc: backend 'p5' collects no profiles"), r);
  BOOST_TEST(r.out.empty(), r);
  // The p6 samples only events given a period; the default event (cycles) has none.
  r = pmc({"profile", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "add period=N to an event"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "--pc", "0x10:x"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "'0x10:x' is not START:END"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "--pc", "0x20:0x10"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "empty range"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "--pc", "0:0x1000000"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "16777216 bytes"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-profile", "--top", "0"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "--top: Value 0 not in range 1 to 1000000"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "alpha-ipl", "-e", "tsc"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "counts no PMU event"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim"});
  BOOST_TEST(r.status == 2, r);
  BOOST_TEST(contains(r.err, "needs a command (pmc profile [-e EVENTS] -- COMMAND ARGS...) or --workload FILE"), r);

  r = pmc({"profile", "--backend", "alpha21064_sim", "--workload", "no-such-workload"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, "no-such-workload"), r);
}
