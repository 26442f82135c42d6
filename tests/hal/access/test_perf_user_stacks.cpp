#define BOOST_TEST_MODULE perf_user_stacks
#include <boost/test/unit_test.hpp>

// Session::sampled_user_stacks(), the library side of pmc profile --call-graph dwarf: a command
// (cli/profile_target.c, built with frame pointers, spinning in pmc_test_hot_loop) sampled in
// user mode with request.user_stack_bytes, as pmc profile does. Each sample then carries the user
// registers in DWARF numbering and the stack copied from rsp up (perf's PERF_SAMPLE_REGS_USER and
// PERF_SAMPLE_STACK_USER), and is not in sampled_stacks(). Checked against what the frame-pointer
// build puts there: rip in the program's code; rbp (DWARF 6) within the copy above rsp (DWARF 7),
// and the word after the saved rbp there a return address into the program (pmc_test_work's call).
// Sizes the kernel would refuse (not a multiple of 8, above perf's 65528) are refused.

#include "support/no_backend.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/process.hpp>
#include <pmc/profile.hpp>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using u64 = std::uint64_t;

const std::string kTarget = PMC_PROFILE_TARGET;
constexpr std::uint32_t kCopy = 4096;

struct Profiled {
  int pid = 0;
  std::vector<pmc::SampledStack> stacks;
  pmc::UserStacks copies;
  std::vector<pmc::MappedFile> mappings;
};

Profiled profile_target(const pmc::Hal& hal) {
  Profiled out;
  std::optional<pmc::Session> session;
  pmc::ChildOptions child;
  child.before_exec = [&](int pid) {
    out.pid = pid;
    pmc::Scope scope = pmc::Scope::process(pid);
    scope.inherit = true;
    scope.enable_on_exec = true;
    session.emplace(hal.session(scope));
    session->add("cpu-clock:u:period=250000");
    pmc::ProfileRequest request;
    request.levels = true;
    request.user_stack_bytes = kCopy;
    session->profile(request);
    session->start();
  };
  child.tick = [&] { session->poll(); };
  const pmc::ChildResult run = pmc::run_child({kTarget, "200"}, child);
  BOOST_TEST_REQUIRE(run.exit_status == 0);
  session->stop();
  out.stacks = session->sampled_stacks();
  out.copies = session->sampled_user_stacks();
  out.mappings = session->sampled_mappings();
  return out;
}

bool in_program(const Profiled& p, u64 pc) {
  for (const auto& m : p.mappings)
    if (m.pid == p.pid && m.start <= pc && pc < m.end && fs::equivalent(m.path, kTarget)) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(registers_and_stack_of_each_sample) {
  pmc_test::TempDir tmp;
  const pmc::Hal hal = pmc_test::no_backend_hal(tmp);
  const Profiled p = profile_target(hal);
  const pmc::UserStacks& c = p.copies;
  BOOST_TEST_REQUIRE(c.samples.size() > 20u);
  BOOST_TEST(p.stacks.empty());  // every sample (user mode) has its copy instead
  BOOST_TEST(c.kernel.empty());
  std::size_t rip_in_program = 0, framed = 0;
  for (const pmc::UserStackSample& s : c.samples) {
    BOOST_TEST(s.pid == p.pid);
    BOOST_TEST(s.kernel_frames == 0u);
    BOOST_TEST((s.stack_bytes > 0 && s.stack_bytes <= kCopy), s.stack_bytes);
    BOOST_TEST_REQUIRE(s.stack_at + s.stack_bytes <= c.stack.size());
    const u64 rip = s.regs[16], rsp = s.regs[7], rbp = s.regs[6];
    if (in_program(p, rip)) ++rip_in_program;
    // The hot loop's frame: rbp above rsp in the copy, the caller's return address after it.
    if (rbp >= rsp && rbp - rsp + 16 <= s.stack_bytes) {
      u64 ret = 0;
      std::memcpy(&ret, c.stack.data() + s.stack_at + (rbp - rsp) + 8, sizeof ret);
      if (in_program(p, ret)) ++framed;
    }
  }
  BOOST_TEST(2 * rip_in_program > c.samples.size(), rip_in_program << " of " << c.samples.size());
  BOOST_TEST(2 * framed > c.samples.size(), framed << " of " << c.samples.size());
}

BOOST_AUTO_TEST_CASE(sizes_perf_would_refuse) {
  pmc_test::TempDir tmp;
  const pmc::Hal hal = pmc_test::no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("cpu-clock:period=1000000");
  for (std::uint32_t bytes : {12u, 65536u}) {
    pmc::ProfileRequest request;
    request.user_stack_bytes = bytes;
    try {
      s.profile(request);
      BOOST_ERROR("a user stack copy of " << bytes << " bytes was accepted");
    } catch (const pmc::Error& e) {
      BOOST_TEST(e.kind() == pmc::errc::invalid_argument);
      BOOST_TEST(std::string(e.what()).find(std::to_string(bytes)) != std::string::npos, e.what());
    }
  }
  pmc::ProfileRequest request;
  request.user_stack_bytes = 65528;
  s.profile(request);  // perf's largest: accepted
  BOOST_TEST(s.profile_request().user_stack_bytes == 65528u);
}
