#define BOOST_TEST_MODULE emulate_catalog_e2e
#include <boost/test/unit_test.hpp>

// End to end (docs/emulation.md, "Catalog events, per model"): `pmc stat --emulate` counts a
// model-specific catalog event through the signal named after it. The device models count such
// signals for the session's event of that name (the models' side of the contract); the expected
// count is Valgrind's own summary of a plain cachegrind run of the same program with the same
// caches: its data reads ("D refs: ... (N rd + M wr)"), which MEM_INST_RETIRED.ALL_LOADS stands for.

#include "support/emulate.hpp"
#include "support/pmc_command.hpp"

#include <regex>
#include <string>
#include <vector>

namespace {

using u64 = std::uint64_t;
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

u64 number(std::string digits) {
  std::erase(digits, ',');
  return std::stoull(digits);
}

}  // namespace

BOOST_AUTO_TEST_CASE(skylake_all_loads_are_cachegrinds_data_reads, *pmc_test::requires_valgrind()) {
  const pmc_test::LoopProgram prog;
  pmc_test::PmcCommand cmd;
  const std::vector<std::string> run{prog.exe.string(), "4000"};
  std::vector<std::string> args{"stat", "--emulate", "--cpuid-dump", "intel-skl", "-e", "MEM_INST_RETIRED.ALL_LOADS",
                                "--"};
  args.insert(args.end(), run.begin(), run.end());
  const pmc_test::Result r = cmd.pmc(args);
  BOOST_TEST(r.status == 0, r);
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(r.err, m, std::regex(R"(\n\s+([0-9,]+)\s+MEM_INST_RETIRED\.ALL_LOADS\s)")),
                        "no count of MEM_INST_RETIRED.ALL_LOADS in: " << r.err);
  const u64 counted = number(m[1].str());
  BOOST_TEST(contains(r.err, "(Dr)"), r);
  // The same run under plain cachegrind (pmc's clean environment, intel-skl's caches: the
  // documented default, since its CPUID dump has no cache leaves).
  const pmc::CacheHierarchy c = pmc::default_cache_hierarchy();
  auto cache = [](const pmc::CacheGeometry& g) {
    return std::to_string(g.size) + "," + std::to_string(g.ways) + "," + std::to_string(g.line);
  };
  std::vector<std::string> plain{"--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                                 "--I1=" + cache(c.l1i), "--D1=" + cache(c.l1d), "--LL=" + cache(c.ll),
                                 "--cachegrind-out-file=" + (cmd.tmp.path() / "plain.out").string(),
                                 "--log-file=" + (cmd.tmp.path() / "plain.log").string()};
  plain.insert(plain.end(), run.begin(), run.end());
  (void)pmc_test::run(pmc::find_executable("valgrind"), plain, cmd.env, cmd.tmp.path());
  const std::string log = pmc_test::slurp(cmd.tmp.path() / "plain.log");
  std::smatch d;
  BOOST_REQUIRE_MESSAGE(std::regex_search(log, d, std::regex(R"(D\s+refs:\s+[0-9,]+\s+\(\s*([0-9,]+) rd)")),
                        "no D refs line in Valgrind's log: " << log);
  BOOST_TEST(counted == number(d[1].str()));
  BOOST_TEST(counted > 8192u);  // stream alone reads 8,193 times (tests/data/emulate/loop.c)
}
