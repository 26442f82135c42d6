// Boost.Test preconditions for tests that need what this machine may lack: such a test is
// reported as skipped with the reason ("skipped because precondition failed: ..."), never passed
// by returning early. (Plain functions, not lambdas: GCC 12 warns about boost::function holding a
// stateless lambda.)
#pragma once

#include "access.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>

namespace pmc_test {

namespace detail {

inline boost::test_tools::assertion_result perf_pmu(boost::unit_test::test_unit_id) {
  const auto pmu = pmc::detail::find_perf_pmu();
  boost::test_tools::assertion_result r(pmu.exposed);
  r.message() << "no hardware PMU exposed to Linux perf on this machine (" << pmu.directory << " missing)";
  return r;
}

inline boost::test_tools::assertion_result no_perf_pmu(boost::unit_test::test_unit_id) {
  const auto pmu = pmc::detail::find_perf_pmu();
  boost::test_tools::assertion_result r(!pmu.exposed);
  r.message() << "this machine exposes a hardware PMU to Linux perf (" << pmu.directory << ")";
  return r;
}

inline bool msr_device_exists() {
  std::error_code ec;
  return std::filesystem::exists("/dev/cpu/0/msr", ec);
}

inline boost::test_tools::assertion_result msr_device(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(msr_device_exists());
  r.message() << "/dev/cpu/0/msr does not exist (the msr module is not loaded)";
  return r;
}

inline boost::test_tools::assertion_result no_msr_device(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(!msr_device_exists());
  r.message() << "/dev/cpu/0/msr exists (the msr module is loaded)";
  return r;
}

}  // namespace detail

// Linux perf exposes a hardware PMU (a core PMU directory under /sys/bus/event_source/devices).
inline boost::unit_test::precondition requires_perf_pmu() { return boost::unit_test::precondition(&detail::perf_pmu); }
// The opposite: the test checks what happens without a PMU.
inline boost::unit_test::precondition requires_no_perf_pmu() {
  return boost::unit_test::precondition(&detail::no_perf_pmu);
}
// The MSR device of CPU 0 exists (present) or not.
inline boost::unit_test::precondition requires_msr_device(bool present = true) {
  return boost::unit_test::precondition(present ? &detail::msr_device : &detail::no_msr_device);
}

}  // namespace pmc_test
