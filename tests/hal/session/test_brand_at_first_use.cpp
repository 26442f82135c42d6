// Hal::open reads the native CPU without its brand string: on x86 the brand is three CPUID
// leaves (80000002H-80000004H), and in a virtual machine each CPUID instruction is a trap to the
// hypervisor (docs/performance.md). The brand is read when something first needs it: Hal::cpu(),
// or the chosen backend's code, which sees the CPU when the PMU is made (Hal::pmu(), sessions).
// Each case runs in a child process, so that nothing this test program read before decides,
// after an open that kept the probes' verdicts (the first open on a CPU probes, and the backends'
// probe code gets the whole reading).
#define BOOST_TEST_MODULE brand_at_first_use
#include <boost/test/unit_test.hpp>

#include "cpu_native.hpp"

#include <pmc/cpu.hpp>
#include <pmc/hal.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace {

// Runs body in a child process: its exit status (each failed check a bit), 255 when it threw,
// -1 when the child could not be run or did not exit.
int in_child(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int bits = 255;
    try {
      bits = body();
    } catch (...) {
    }
    _exit(bits);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// An x86 CPU whose 80000000H says it has the brand leaves: the only kind whose brand is a
// CPUID reading Hal::open could have made.
boost::test_tools::assertion_result has_brand_leaves(boost::unit_test::test_unit_id) {
  const pmc::CpuInfo cpu = pmc::read_native_cpu();
  boost::test_tools::assertion_result r(cpu.isa == pmc::Isa::x86 && cpu.max_ext_leaf >= 0x80000004);
  r.message() << "skipped: this machine's CPU has no CPUID brand leaves (80000002H-80000004H)";
  return r;
}

// And a backend that matches it, whose code then describes it (asked in a child: an open here
// could read the brand, which the cases' children would inherit).
boost::test_tools::assertion_result a_backend_matches(boost::unit_test::test_unit_id id) {
  boost::test_tools::assertion_result r = has_brand_leaves(id);
  if (!r) return r;
  boost::test_tools::assertion_result m(in_child([] { return pmc::Hal::open(pmc::Config{}).backend() ? 0 : 1; }) == 0);
  m.message() << "skipped: no backend matches this machine's CPU (pmc probe says why)";
  return m;
}

// An open in a child of its own first: an open that probes the backends (the parse cache has no
// record of their verdicts yet) hands the CPU to the backends' code, and so reads the brand. The
// cases are about the opens after it, which keep the verdicts.
void keep_the_probes() {
  BOOST_REQUIRE(in_child([] {
    (void)pmc::Hal::open(pmc::Config{});
    return 0;
  }) == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(hal_cpu_reads_the_brand_that_hal_open_left, *boost::unit_test::precondition(has_brand_leaves)) {
  const pmc::CpuInfo whole = pmc::read_native_cpu();  // read directly: the memo is untouched
  keep_the_probes();
  const int bits = in_child([&] {
    int b = 0;
    if (pmc::detail::native_brand_read()) b |= 1;  // read before: the test could not tell
    const pmc::Hal hal = pmc::Hal::open(pmc::Config{});
    if (pmc::detail::native_brand_read()) b |= 2;
    const pmc::CpuInfo& cpu = hal.cpu();
    if (!pmc::detail::native_brand_read()) b |= 4;
    if (cpu.brand != whole.brand) b |= 8;
    for (std::uint32_t leaf : {0x80000002u, 0x80000003u, 0x80000004u})
      if (cpu.raw.get(leaf) != whole.raw.get(leaf)) b |= 16;
    if (&hal.cpu() != &cpu || hal.cpu().brand != whole.brand) b |= 32;  // the same reading, once
    return b;
  });
  BOOST_TEST((bits & 1) == 0, "the brand was read before the test");
  BOOST_TEST((bits & 2) == 0, "Hal::open read the brand's CPUID leaves");
  BOOST_TEST((bits & 4) == 0, "Hal::cpu() did not read them");
  BOOST_TEST((bits & 8) == 0, "Hal::cpu().brand is not read_native_cpu()'s '" << whole.brand << "'");
  BOOST_TEST((bits & 16) == 0, "Hal::cpu().raw lacks the brand's leaves or has others");
  BOOST_TEST((bits & 32) == 0, "a second Hal::cpu() differs from the first");
  BOOST_TEST(bits != 255, "Hal::open threw in the child");
  BOOST_TEST(bits != -1, "the child did not run or did not exit");
}

// The backend's pmu() describes the CPU (PmuInfo::cpu names the brand): when the PMU is the first
// to need the brand, the backend gets a reading that has it.
BOOST_AUTO_TEST_CASE(the_backend_sees_the_brand_when_it_is_first, *boost::unit_test::precondition(a_backend_matches)) {
  const pmc::CpuInfo whole = pmc::read_native_cpu();
  keep_the_probes();
  const int bits = in_child([&] {
    int b = 0;
    const pmc::Hal hal = pmc::Hal::open(pmc::Config{});
    if (!hal.backend()) return 64;
    if (pmc::detail::native_brand_read()) b |= 2;
    const pmc::PmuInfo& pmu = hal.pmu();
    if (!pmc::detail::native_brand_read()) b |= 4;
    if (pmu.cpu.find(whole.brand) == std::string::npos) b |= 8;
    if (hal.cpu().brand != whole.brand) b |= 16;
    return b;
  });
  BOOST_TEST(bits != 64, "no backend matched in the child, though one did in the test's process");
  BOOST_TEST((bits & 2) == 0, "Hal::open read the brand's CPUID leaves");
  BOOST_TEST((bits & 4) == 0, "making the PMU did not read them");
  BOOST_TEST((bits & 8) == 0, "the PMU's description of the CPU lacks the brand '" << whole.brand << "'");
  BOOST_TEST((bits & 16) == 0, "Hal::cpu().brand is not read_native_cpu()'s");
  BOOST_TEST(bits != 255, "Hal::open or Hal::pmu() threw in the child");
  BOOST_TEST(bits != -1, "the child did not run or did not exit");
}
