#define BOOST_TEST_MODULE profile_dwarf
#include <boost/test/unit_test.hpp>

// `pmc profile --call-graph dwarf[,SIZE]`: at each sample the kernel copies SIZE bytes of the user
// stack and the user registers (perf's PERF_SAMPLE_STACK_USER and PERF_SAMPLE_REGS_USER), and pmc
// unwinds them with libdw through the program's call frame information. On cli/profile_target.c
// built without frame pointers and optimised (profile_target_nofp), the stacks then reach from
// main down to the hot function, where -g's frame-pointer walk on that same binary does not get
// through. A SIZE perf would refuse (not a multiple of 8, above 65528, zero) is refused before the
// command runs.

#include "support/pmc_command.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kNoFp = PMC_PROFILE_TARGET_NOFP;
const std::string kFp = PMC_PROFILE_TARGET;
const std::string kChain = "main;pmc_test_work;pmc_test_hot_loop";

struct Cli : pmc_test::PmcCommand {
  // The collapsed stacks of one profile: stack -> samples.
  std::map<std::string, std::uint64_t> folded(const std::vector<std::string>& mode, const std::string& target) {
    const fs::path file = tmp.path() / "out.folded";
    fs::remove(file);
    std::vector<std::string> args = {"profile"};
    args.insert(args.end(), mode.begin(), mode.end());
    for (const std::string& a : {std::string("--folded"), file.string(), std::string("--"), target, std::string("300")})
      args.push_back(a);
    auto r = pmc(args);
    BOOST_TEST_REQUIRE(r.status == 0, r);
    std::map<std::string, std::uint64_t> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      const auto space = line.rfind(' ');
      BOOST_TEST_REQUIRE(space != std::string::npos, line);
      out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
    }
    BOOST_TEST_REQUIRE(!out.empty());
    return out;
  }
};

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The samples whose stack ends in the hot function, and those of them that reach it from main.
struct Hot {
  std::uint64_t total = 0, hot = 0, from_main = 0;
};

Hot count(const std::map<std::string, std::uint64_t>& stacks) {
  Hot h;
  for (const auto& [stack, n] : stacks) {
    h.total += n;
    if (stack == "pmc_test_hot_loop" || ends_with(stack, ";pmc_test_hot_loop")) h.hot += n;
    if (stack == kChain || ends_with(stack, ";" + kChain)) h.from_main += n;
  }
  return h;
}

std::string dump(const std::map<std::string, std::uint64_t>& stacks) {
  std::string out;
  for (const auto& [stack, n] : stacks) out += stack + " " + std::to_string(n) + "\n";
  return out.substr(0, 3000);
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(dwarf_unwinds_a_program_without_frame_pointers, Cli) {
  const auto stacks = folded({"--call-graph", "dwarf"}, kNoFp);
  const Hot h = count(stacks);
  // Nearly all the time is in the hot loop, and nearly every such sample unwinds to main.
  BOOST_TEST(2 * h.hot > h.total, dump(stacks));
  BOOST_TEST(10 * h.from_main > 9 * h.hot, dump(stacks));
}

BOOST_FIXTURE_TEST_CASE(frame_pointers_do_not_get_through_the_same_program, Cli) {
  const auto stacks = folded({"-g"}, kNoFp);
  const Hot h = count(stacks);
  BOOST_TEST(2 * h.hot > h.total, dump(stacks));
  // Without frame pointers the kernel's walk stops at the hot function: main is never reached
  // through pmc_test_work.
  BOOST_TEST(h.from_main == 0u, dump(stacks));
}

BOOST_FIXTURE_TEST_CASE(dwarf_with_a_size_and_on_a_frame_pointer_build, Cli) {
  // A smaller copy still holds these few frames; the frame-pointer build unwinds alike.
  for (const std::string& target : {kNoFp, kFp}) {
    const auto stacks = folded({"--call-graph", "dwarf,2048"}, target);
    const Hot h = count(stacks);
    BOOST_TEST(2 * h.hot > h.total, target << "\n" << dump(stacks));
    BOOST_TEST(10 * h.from_main > 9 * h.hot, target << "\n" << dump(stacks));
  }
}

BOOST_FIXTURE_TEST_CASE(dwarf_call_tree_in_the_terminal, Cli) {
  auto r = pmc({"profile", "--call-graph", "dwarf", "--", kNoFp, "200"});
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const auto graph = r.err.find("Call graph, callers above callees");
  BOOST_TEST_REQUIRE(graph != std::string::npos, r.err);
  const std::string tree = r.err.substr(graph);
  const auto main_at = tree.find(" main\n"), work = tree.find(" pmc_test_work\n"), hot = tree.find(" pmc_test_hot_loop\n");
  BOOST_TEST_REQUIRE((main_at != std::string::npos && work != std::string::npos && hot != std::string::npos), tree);
  BOOST_TEST((main_at < work && work < hot), tree);
}

BOOST_FIXTURE_TEST_CASE(a_bad_size_is_refused_before_the_command_runs, Cli) {
  const fs::path ran = tmp.path() / "ran";
  for (const std::string size : {"12", "65536", "0", "8k", ""}) {
    auto r = pmc({"profile", "--call-graph", "dwarf," + size, "--", "/bin/sh", "-c", "touch " + ran.string()});
    BOOST_TEST(r.status == 1, size << ": " << r);
    BOOST_TEST(r.out.empty(), r);
    // One line, naming the option and the size at fault.
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    BOOST_TEST(r.err.find("--call-graph dwarf,SIZE: '" + size + "'") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("multiple of 8 from 8 to 65528") != std::string::npos, r.err);
    BOOST_TEST(!fs::exists(ran), size);
  }
  // The largest size perf takes is taken.
  auto r = pmc({"profile", "--call-graph", "dwarf,65528", "--", "/bin/true"});
  BOOST_TEST(r.status == 0, r);
}
