#define BOOST_TEST_MODULE emulate_cli
#include <boost/test/unit_test.hpp>

// pmc stat --emulate and pmc profile --emulate (docs/emulation.md): the CLI functions of
// tools/pmc/emulate.cpp, compiled into this test with the CLI's shared helpers (common.cpp),
// and the command itself. Expected counts are worked
// out from tests/data/emulate/loop.c (see tests/hal/emulate/test_emulate.cpp for the reasoning) or are Valgrind's
// own summary of a plain cachegrind run.

#include "../../tools/pmc/common.cpp"
#include "../../tools/pmc/emulate.cpp"

#include "support/pmc_command.hpp"
#include "support/emulate.hpp"

#include <nlohmann/json.hpp>

#include <regex>
#include <string>
#include <vector>

namespace {

using pmc_test::bundled;
using pmc_test::emulate_data;
using u64 = std::uint64_t;
constexpr u64 N = 4000;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Options as pmc would parse them, with an empty config file (no user config is read) and the
// report going to a file.
struct Cli {
  pmc_test::TempDir tmp{"pmc-test-emulate-cli"};
  pmc_cli::Options o;
  explicit Cli(const std::string& dump) {
    pmc_test::spit(tmp.path() / "config.toml", "");
    o.config = tmp.path() / "config.toml";
    o.cpuid_dump = dump;
    o.output = (tmp.path() / "report").string();
  }
  [[nodiscard]] std::string report() const { return pmc_test::slurp(o.output); }
  [[nodiscard]] nlohmann::json json() const { return nlohmann::json::parse(report()); }
};

// "  1,234      EVENT ..." lines of a text report: event -> count.
std::map<std::string, u64> counts_of(const std::string& text) {
  std::map<std::string, u64> out;
  static const std::regex line(R"(^\s+([0-9,]+)\s{6}(\S+))");
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    std::string digits = m[1].str();
    std::erase(digits, ',');
    out[m[2].str()] = std::stoull(digits);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functions, *pmc_test::requires_valgrind())

BOOST_AUTO_TEST_CASE(stat_counts_are_the_same_twice_and_match_cachegrind) {
  const pmc_test::LoopProgram prog;
  Cli cli(bundled("pentium-iii.txt"));
  cli.o.events = {"INST_RETIRED,BR_INST_RETIRED,BR_MISS_PRED_RETIRED,DATA_MEM_REFS"};
  cli.o.command = {prog.exe.string(), std::to_string(N)};
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 0);
  const std::string first = cli.report();
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 0);
  const std::string second = cli.report();
  const auto a = counts_of(first), b = counts_of(second);
  BOOST_TEST(a.size() == 4u);
  BOOST_TEST((a == b));
  BOOST_TEST(contains(first, "(emulated)"));
  BOOST_TEST(contains(first, "Emulated counts"));
  BOOST_TEST(contains(first, "p6 device model"));
  BOOST_TEST(contains(first, "Simulated caches ("));
  const pmc_test::TempDir scratch("pmc-test-emulate-plain");
  const pmc::CacheHierarchy caches = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("pentium-iii.txt")));
  const pmc_test::Summary plain = pmc_test::plain_cachegrind(cli.o.command, caches, scratch);
  BOOST_TEST(a.at("INST_RETIRED") == plain.at("I refs"));
  BOOST_TEST(a.at("BR_INST_RETIRED") == plain.at("Branches"));
  BOOST_TEST(a.at("BR_MISS_PRED_RETIRED") == plain.at("Mispredicts"));
  BOOST_TEST(a.at("DATA_MEM_REFS") == plain.at("D refs"));
}

BOOST_AUTO_TEST_CASE(stat_refuses_cycles_before_running_anything) {
  Cli cli(bundled("pentium-iii.txt"));
  cli.o.events = {"CPU_CLK_UNHALTED"};
  cli.o.command = {"/nonexistent/never-run"};  // refused before the run: its absence is not reported
  try {
    (void)pmc_cli::stat_emulated(cli.o);
    BOOST_FAIL("CPU_CLK_UNHALTED was emulated");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_supported));
    BOOST_TEST(contains(e.what(), "cannot emulate CPU_CLK_UNHALTED: it counts in cycles"));
    BOOST_TEST(contains(e.what(), "INST_RETIRED"));
  }
}

BOOST_AUTO_TEST_CASE(stat_json_the_exit_status_and_the_defaults) {
  const pmc_test::LoopProgram prog;
  Cli cli(bundled("amd-zen4-genoa.txt"));
  cli.o.json = true;
  cli.o.command = {prog.exe.string(), std::to_string(N), "3"};
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 3);  // loop N 3 exits with 3
  const nlohmann::json doc = cli.json();
  BOOST_TEST(doc.at("emulated").get<bool>());
  BOOST_TEST(doc.at("exit_status").get<int>() == 3);
  BOOST_TEST(doc.at("model").get<std::string>() == "amd");
  BOOST_TEST(doc.at("caches").at("source").get<std::string>() == "CPUID leaf 8000001DH");
  BOOST_TEST(doc.at("caches").at("ll").at("level").get<unsigned>() == 3u);
  // Without -e: perf stat's defaults that can be emulated; Genoa's cache-misses (L2 misses,
  // below its L3) cannot.
  std::vector<std::string> events;
  for (const auto& c : doc.at("counters")) events.push_back(c.at("event").get<std::string>());
  BOOST_TEST((events == std::vector<std::string>{"instructions", "branches", "branch-misses", "cache-references"}));
  BOOST_TEST(doc.at("counters").at(0).at("value").get<u64>() == doc.at("activity").at("Ir").get<u64>());
  BOOST_TEST(doc.at("counters").at(3).at("reads").at(0).at("terms").size() == 3u);  // I1mr + D1mr + D1mw
}

BOOST_AUTO_TEST_CASE(profile_gives_per_function_counts) {
  const pmc_test::LoopProgram prog;
  Cli cli(emulate_data("pentium-iii-leaf2.txt"));
  cli.o.events = {"INST_RETIRED,BR_INST_RETIRED"};
  cli.o.command = {prog.exe.string(), std::to_string(N)};
  cli.o.json = true;
  BOOST_TEST(pmc_cli::profile_emulated(cli.o) == 0);
  const nlohmann::json doc = cli.json();
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& f : doc.at("functions")) by_name[f.at("function").get<std::string>()] = f.at("counts");
  BOOST_TEST(by_name.at("count_down").at("INST_RETIRED").get<u64>() == 2 * N + 2);
  BOOST_TEST(by_name.at("classify").at("BR_INST_RETIRED").get<u64>() == 2 * N + 1);
  BOOST_TEST(by_name.at("stream").at("INST_RETIRED").get<u64>() == 40962u);
  // Busiest first by the first event.
  u64 previous = ~u64{0};
  for (const auto& f : doc.at("functions")) {
    const u64 v = f.at("counts").at("INST_RETIRED").get<u64>();
    BOOST_TEST(v <= previous);
    previous = v;
  }
  cli.o.json = false;
  cli.o.top = 3;
  BOOST_TEST(pmc_cli::profile_emulated(cli.o) == 0);
  const std::string text = cli.report();
  BOOST_TEST(contains(text, "Functions by INST_RETIRED (the 3 busiest of"));
  BOOST_TEST(contains(text, "Source lines by INST_RETIRED"));
  BOOST_TEST(contains(text, "CPUID leaf 2 descriptors"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(options_that_do_not_go_with_emulate) {
  Cli cli(bundled("pentium-iii.txt"));
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 2);  // no command
  cli.o.command = {"true"};
  cli.o.repeat = 2;
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 2);
  cli.o.repeat = 1;
  cli.o.access = "perf";
  BOOST_TEST(pmc_cli::stat_emulated(cli.o) == 2);
  cli.o.access.clear();
  cli.o.pc_range = "0x1000:0x2000";
  BOOST_TEST(pmc_cli::profile_emulated(cli.o) == 2);
}

// The command itself (docs/emulation.md): skipped only where valgrind or gcc is missing.
namespace {
boost::test_tools::assertion_result pmc_has_emulate(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(pmc_test::on_path("valgrind") && pmc_test::on_path("gcc"));
  r.message() << "valgrind or gcc is missing (Debian: valgrind gcc)";
  return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(pmc_stat_emulate, *boost::unit_test::precondition(&pmc_has_emulate)) {
  const pmc_test::LoopProgram prog;
  pmc_test::PmcCommand cmd;
  const std::vector<std::string> args{"stat", "--emulate", "--cpuid-dump", "pentium-iii", "-e",
                                      "INST_RETIRED,BR_INST_RETIRED,BR_MISS_PRED_RETIRED,DATA_MEM_REFS", "--",
                                      prog.exe.string(), std::to_string(N)};
  const pmc_test::Result a = cmd.pmc(args);
  const pmc_test::Result b = cmd.pmc(args);
  BOOST_TEST(a.status == 0, a);
  const auto ca = counts_of(a.err), cb = counts_of(b.err);
  BOOST_TEST(ca.size() == 4u, a);
  BOOST_TEST((ca == cb));
  // Valgrind's summary of the same program, environment and caches (pmc's clean environment).
  const pmc::CacheHierarchy c = pmc::cache_hierarchy(pmc::load_cpuid_dump(bundled("pentium-iii.txt")));
  auto cache = [](const pmc::CacheGeometry& g) {
    return std::to_string(g.size) + "," + std::to_string(g.ways) + "," + std::to_string(g.line);
  };
  std::vector<std::string> plain{"--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                                 "--I1=" + cache(c.l1i), "--D1=" + cache(c.l1d), "--LL=" + cache(c.ll),
                                 "--cachegrind-out-file=" + (cmd.tmp.path() / "plain.out").string(),
                                 "--log-file=" + (cmd.tmp.path() / "plain.log").string(), prog.exe.string(),
                                 std::to_string(N)};
  (void)pmc_test::run(pmc::find_executable("valgrind"), plain, cmd.env, cmd.tmp.path());
  const pmc_test::Summary s = pmc_test::parse_summary(pmc_test::slurp(cmd.tmp.path() / "plain.log"));
  BOOST_TEST(ca.at("INST_RETIRED") == s.at("I refs"));
  BOOST_TEST(ca.at("BR_INST_RETIRED") == s.at("Branches"));
  // The same program on a Skylake (archperf) and a Zen 4 (amd), by the generic names: the
  // instructions and branches do not depend on the caches, so they equal the same summary's.
  for (const char* cpu : {"skylake", "amd-zen4-genoa"}) {
    const pmc_test::Result r =
        cmd.pmc({"stat", "--emulate", "--cpuid-dump", cpu, "-e", "instructions,branches", "--", prog.exe.string(),
                 std::to_string(N)});
    BOOST_TEST(r.status == 0, r);
    const auto counted = counts_of(r.err);
    BOOST_TEST(counted.count("instructions") == 1u, r);
    BOOST_TEST(counted.count("branches") == 1u, r);
    if (counted.count("instructions") && counted.count("branches")) {
      BOOST_TEST(counted.at("instructions") == s.at("I refs"), cpu);
      BOOST_TEST(counted.at("branches") == s.at("Branches"), cpu);
    }
  }
  const pmc_test::Result clk =
      cmd.pmc({"stat", "--emulate", "--cpuid-dump", "pentium-iii", "-e", "CPU_CLK_UNHALTED", "--", prog.exe.string()});
  BOOST_TEST(clk.status == 1, clk);
  BOOST_TEST(contains(clk.err, "pmc: cannot emulate CPU_CLK_UNHALTED: it counts in cycles"), clk);
}
