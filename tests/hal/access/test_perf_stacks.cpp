#define BOOST_TEST_MODULE perf_stacks
#include <boost/test/unit_test.hpp>

// Session::sampled_stacks() and sampled_mappings(), the library side of pmc profile's names:
// a command (cli/profile_target.c, frame pointers, spinning in pmc_test_hot_loop) sampled
// through Linux perf as pmc profile does (a process scope inherited and enabled at exec,
// run_child), then checked against the program's own ELF file: the mappings the kernel
// reported name the program at the child's pid; the hottest stack's sampled address lies in
// the program's code; with request.callchain the callers follow (main's frame, as the kernel's
// frame-pointer walk gives it), without it each stack is one address. And the refusals: call
// chains on a backend's counter interrupts, and changing them while counting.

#include "support/no_backend.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/process.hpp>
#include <pmc/profile.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using u64 = std::uint64_t;

const std::string kTarget = PMC_PROFILE_TARGET;

struct Profiled {
  int pid = 0;
  std::vector<pmc::SampledStack> stacks;
  std::vector<pmc::MappedFile> mappings;
};

Profiled profile_target(const pmc::Hal& hal, bool callchain) {
  Profiled out;
  std::optional<pmc::Session> session;
  pmc::ChildOptions child;
  child.before_exec = [&](int pid) {
    out.pid = pid;
    pmc::Scope scope = pmc::Scope::process(pid);
    scope.inherit = true;
    scope.enable_on_exec = true;
    session.emplace(hal.session(scope));
    session->add("cpu-clock:u:period=100000");
    pmc::ProfileRequest request;
    request.levels = true;
    request.callchain = callchain;
    session->profile(request);
    session->start();
  };
  child.tick = [&] { session->poll(); };
  const pmc::ChildResult run = pmc::run_child({kTarget, "200"}, child);
  BOOST_TEST_REQUIRE(run.exit_status == 0);
  session->stop();
  out.stacks = session->sampled_stacks();
  out.mappings = session->sampled_mappings();
  return out;
}

// The mapping of the program at the child's pid that holds `pc`, or nullptr.
const pmc::MappedFile* program_mapping(const Profiled& p, u64 pc) {
  for (const auto& m : p.mappings)
    if (m.pid == p.pid && m.start <= pc && pc < m.end && fs::equivalent(m.path, kTarget)) return &m;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mappings_and_one_address_stacks) {
  pmc_test::TempDir tmp;
  const pmc::Hal hal = pmc_test::no_backend_hal(tmp);
  const Profiled p = profile_target(hal, false);
  BOOST_TEST_REQUIRE(!p.stacks.empty());
  // The program and the dynamic loader were mapped executable in the child.
  BOOST_TEST(std::any_of(p.mappings.begin(), p.mappings.end(),
                         [&](const pmc::MappedFile& m) { return m.pid == p.pid && m.path == kTarget; }));
  BOOST_TEST(std::any_of(p.mappings.begin(), p.mappings.end(), [&](const pmc::MappedFile& m) {
    return m.pid == p.pid && m.path.find("ld-linux") != std::string::npos;
  }));
  for (const auto& m : p.mappings) BOOST_TEST(m.start < m.end);
  // Most samples first; each stack one address (user mode only was sampled).
  for (std::size_t i = 1; i < p.stacks.size(); ++i) BOOST_TEST(p.stacks[i - 1].samples >= p.stacks[i].samples);
  for (const auto& s : p.stacks) {
    BOOST_TEST(s.pid == p.pid);
    BOOST_TEST(s.kernel.empty());
    BOOST_TEST(s.user.size() == 1u);
  }
  // The hottest address is the program's own code (pmc_test_hot_loop).
  BOOST_TEST(program_mapping(p, p.stacks.front().user.front()) != nullptr);
}

BOOST_AUTO_TEST_CASE(call_chains_follow_the_sampled_address) {
  pmc_test::TempDir tmp;
  const pmc::Hal hal = pmc_test::no_backend_hal(tmp);
  const Profiled p = profile_target(hal, true);
  BOOST_TEST_REQUIRE(!p.stacks.empty());
  const pmc::SampledStack& hot = p.stacks.front();
  // pmc_test_hot_loop <- pmc_test_work <- main <- libc's start: the first three in the program.
  BOOST_TEST_REQUIRE(hot.user.size() >= 3u);
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(program_mapping(p, hot.user[i]) != nullptr, "frame " << i);
  BOOST_TEST(hot.user[0] != hot.user[1]);
}

BOOST_AUTO_TEST_CASE(refusals) {
  pmc_test::TempDir tmp;
  // A backend's counter interrupts (the emulated Alpha) have no call chains.
  pmc::Config cfg;
  cfg.cpu = (fs::path(PMC_DATA_DIR) / "cpuid" / "pentium-iii.txt").string();
  cfg.backend = "alpha21064_sim";
  const pmc::Hal alpha = pmc::Hal::open(cfg);
  pmc::Session s = alpha.session();
  s.add("PF_CYCLES:period=4096");
  pmc::ProfileRequest request;
  request.levels = true;
  request.callchain = true;
  try {
    s.profile(request);
    BOOST_ERROR("call chains on the Alpha's interrupts were accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::not_supported);
    BOOST_TEST(std::string(e.what()).find("call chains come from Linux perf sampling") != std::string::npos, e.what());
  }
  // Perf sampling: not while counting.
  const pmc::Hal hal = pmc_test::no_backend_hal(tmp);
  pmc::Session t = hal.session(pmc::Scope::this_thread());
  t.add("cpu-clock:period=1000000");
  t.start();
  BOOST_CHECK_THROW(t.profile(request), pmc::Error);
  t.stop();
  t.profile(request);  // stopped: accepted
  BOOST_TEST(t.profile_request().callchain);
}
