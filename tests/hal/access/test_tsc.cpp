#define BOOST_TEST_MODULE tsc
#include <boost/test/unit_test.hpp>

// The `tsc` HAL event and pmc::tsc_frequency(): the CPUID formulas and the measurement
// arithmetic with hand-made values, then the real rdtsc of this machine (every x86 machine,
// including the project's KVM guests, has one).

#include "access.hpp"
#include "support/child_process.hpp"
#include "support/no_backend.hpp"
#include "tsc.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <string>

namespace {

pmc::CpuidTable table(std::uint32_t max_leaf) {
  pmc::CpuidTable t;
  t.set(0, 0, {max_leaf, 0x756E6547, 0x6C65746E, 0x49656E69});
  return t;
}

using pmc_test::no_backend_hal;

void spin() {
  volatile std::uint64_t x = 0;
  for (int i = 0; i < 200000; ++i) x = x + static_cast<std::uint64_t>(i);
}

}  // namespace

BOOST_AUTO_TEST_CASE(cpuid_15h_crystal_times_ratio) {
  auto t = table(0x16);
  t.set(0x15, 0, {2, 188, 24000000, 0});  // 24 MHz * 188/2 = 2.256 GHz
  t.set(0x16, 0, {2200, 4000, 100, 0});
  auto f = pmc::detail::tsc_frequency_from_cpuid(t);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->hz == 2256000000.0);
  BOOST_TEST(f->uncertainty_hz == 0.0);
  BOOST_TEST(f->method.find("cpuid 15H") != std::string::npos, f->method);
}

BOOST_AUTO_TEST_CASE(cpuid_16h_when_15h_has_no_crystal) {
  auto t = table(0x16);
  t.set(0x15, 0, {2, 188, 0, 0});  // ratio without the crystal clock
  t.set(0x16, 0, {2200, 4000, 100, 0});
  auto f = pmc::detail::tsc_frequency_from_cpuid(t);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->hz == 2200e6);
  BOOST_TEST(f->uncertainty_hz == 0.5e6);  // whole MHz
  BOOST_TEST(f->method.find("cpuid 16H") != std::string::npos, f->method);
}

BOOST_AUTO_TEST_CASE(no_cpuid_rate_below_leaf_15h_or_when_zero) {
  auto t = table(0x0D);
  t.set(0x15, 0, {2, 188, 24000000, 0});  // present in the table, but beyond the max leaf
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuid(t));
  auto z = table(0x16);
  z.set(0x15, 0, {0, 0, 0, 0});
  z.set(0x16, 0, {0, 0, 0, 0});
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuid(z));
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuid(pmc::CpuidTable{}));
}

BOOST_AUTO_TEST_CASE(hypervisor_timing_leaf) {
  // CPUID 40000000H EAX: the hypervisor's largest leaf; 40000010H EAX: the TSC in kHz.
  pmc::CpuidTable t;
  t.set(0x40000000, 0, {0x40000010, 0x4B4D564B, 0x564B4D56, 0x0000004D});
  t.set(0x40000010, 0, {2595999, 1000000, 0, 0});  // 2,595,999 kHz, the APIC bus at 1 GHz
  auto f = pmc::detail::tsc_frequency_from_hypervisor(t);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->hz == 2595999000.0);
  BOOST_TEST(f->uncertainty_hz == 500.0);  // whole kHz
  BOOST_TEST(f->method.find("40000010H") != std::string::npos, f->method);
  // A hypervisor whose range stops below the timing leaf (KVM's 40000001H), or that leaves it 0.
  pmc::CpuidTable kvm;
  kvm.set(0x40000000, 0, {0x40000001, 0x4B4D564B, 0x564B4D56, 0x0000004D});
  kvm.set(0x40000010, 0, {2595999, 0, 0, 0});  // present in the table, but beyond the range
  BOOST_TEST(!pmc::detail::tsc_frequency_from_hypervisor(kvm));
  pmc::CpuidTable zero;
  zero.set(0x40000000, 0, {0x40000010, 0, 0, 0});
  zero.set(0x40000010, 0, {0, 0, 0, 0});
  BOOST_TEST(!pmc::detail::tsc_frequency_from_hypervisor(zero));
  BOOST_TEST(!pmc::detail::tsc_frequency_from_hypervisor(pmc::CpuidTable{}));
}

BOOST_AUTO_TEST_CASE(kernel_calibration_from_the_perf_page) {
  // A 2 GHz TSC: 0.5 ns a tick, which the kernel writes as time_mult / 2^time_shift with
  // time_shift 21 and time_mult 2^20 = 1,048,576. One unit of time_mult is 1/1,048,576 of the
  // rate: 2e9 / 1,048,576 = 1,907.35 Hz.
  auto f = pmc::detail::tsc_frequency_from_perf_page(true, 1048576, 21);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->hz == 2e9);
  BOOST_TEST(f->uncertainty_hz == 2e9 / 1048576, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(f->method.find("time_mult 1048576, time_shift 21") != std::string::npos, f->method);
  // No user-space time conversion offered (cap_user_time clear, as on a KVM guest whose
  // sched_clock is the paravirtual clock), or nothing written yet: no rate.
  BOOST_TEST(!pmc::detail::tsc_frequency_from_perf_page(false, 1048576, 21));
  BOOST_TEST(!pmc::detail::tsc_frequency_from_perf_page(true, 0, 21));
}

// /proc/cpuinfo of this project's KVM guest (abridged): the hypervisor states the TSC rate
// (tsc_known_freq), no APERF/MPERF, so "cpu MHz" is the kernel's TSC calibration.
BOOST_AUTO_TEST_CASE(kernel_calibration_from_cpuinfo_in_a_vm) {
  const std::string kvm =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2596.132\n"
      "flags\t\t: fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq pni hypervisor lahf_lm\n\n"
      "processor\t: 1\ncpu MHz\t\t: 1000.000\nflags\t\t: fpu\n";
  auto f = pmc::detail::tsc_frequency_from_cpuinfo(kvm);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->hz == 2596132000.0);
  BOOST_TEST(f->uncertainty_hz == 500.0);
  BOOST_TEST(f->method.find("cpu MHz 2596.132") != std::string::npos, f->method);
  // Bare metal (no "hypervisor"), APERF/MPERF present (the field is then the current clock), or
  // a rate the hypervisor did not state: not the TSC's rate.
  auto without = [&](const std::string& flag) {
    std::string t = kvm;
    t.replace(t.find(flag), flag.size(), "");
    return t;
  };
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuinfo(without(" hypervisor")));
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuinfo(without(" tsc_known_freq")));
  std::string with_aperf = kvm;
  with_aperf.insert(with_aperf.find(" hypervisor"), " aperfmperf");
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuinfo(with_aperf));
  // A flag that only contains the name does not count; a malformed number gives nothing.
  std::string lookalike = without(" tsc_known_freq");
  lookalike.insert(lookalike.find(" hypervisor"), " xtsc_known_freq");
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuinfo(lookalike));
  std::string bad = kvm;
  bad.replace(bad.find("2596.132"), 8, "2596.1x2");
  BOOST_TEST(!pmc::detail::tsc_frequency_from_cpuinfo(bad));
}

BOOST_AUTO_TEST_CASE(measurement_arithmetic) {
  // Brackets of 100 and 200 ticks around clock readings 1 s apart, 3e9 ticks between midpoints.
  pmc::detail::TscSample first{1000, 1000000000, 1100};
  pmc::detail::TscSample last{3000000950, 2000000000, 3000001150};
  auto f = pmc::detail::tsc_frequency_from_samples(first, last);
  BOOST_TEST(f.hz == 3e9);
  // (100 + 200) / 2 ticks of bracket, 2 ns of clock resolution: 150 Hz + 6 Hz.
  BOOST_TEST(f.uncertainty_hz == 156.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(f.method.find("CLOCK_MONOTONIC_RAW over 1000 ms") != std::string::npos, f.method);
  // Samples out of order give no rate rather than a wrong one.
  BOOST_TEST(pmc::detail::tsc_frequency_from_samples(last, first).hz == 0.0);
}

// Whether this machine has a usable TSC (the precondition of the tests that count with it).
boost::test_tools::assertion_result has_tsc(boost::unit_test::test_unit_id) {
  std::string why;
  boost::test_tools::assertion_result r(pmc::detail::tsc_available(&why));
  r.message() << "no usable TSC here: " << why;
  return r;
}
boost::test_tools::assertion_result lacks_tsc(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(!pmc::detail::tsc_available(nullptr));
  r.message() << "this machine has a usable TSC";
  return r;
}
boost::unit_test::precondition requires_tsc(bool wanted = true) {
  return boost::unit_test::precondition(wanted ? &has_tsc : &lacks_tsc);
}

BOOST_AUTO_TEST_CASE(this_machine_rate, *requires_tsc()) {
  pmc::TscFrequency f = pmc::tsc_frequency();
  BOOST_TEST_MESSAGE("TSC: " << f.hz << " Hz +- " << f.uncertainty_hz << " (" << f.method << ")");
  BOOST_TEST(f.hz > 0.0);
  BOOST_TEST(f.uncertainty_hz >= 0.0);
  BOOST_TEST(f.uncertainty_hz < f.hz * 0.01, f.method);
  // The first source that answers: CPUID, the hypervisor's leaf, the kernel, a measurement.
  const bool from_cpuid = pmc::detail::tsc_frequency_from_cpuid(pmc::read_native_cpu().raw).has_value();
  if (from_cpuid) BOOST_TEST(f.method.rfind("cpuid", 0) == 0u, f.method);
  else
    BOOST_TEST((f.method.rfind("hypervisor", 0) == 0u || f.method.rfind("the kernel's", 0) == 0u ||
                f.method.rfind("measured", 0) == 0u),
               f.method);
  // A measurement stops at 100 ppm (or after 30 ms).
  if (f.method.rfind("measured", 0) == 0u) BOOST_TEST(f.uncertainty_hz <= f.hz * 1e-4 * 1.0001, f.method);
  // Cached: the same answer again.
  BOOST_TEST(pmc::tsc_frequency().hz == f.hz);
}

BOOST_AUTO_TEST_CASE(no_rate_without_a_tsc, *requires_tsc(false)) {
  std::string why;
  (void)pmc::detail::tsc_available(&why);
  const pmc::TscFrequency f = pmc::tsc_frequency();
  BOOST_TEST(f.hz == 0.0);
  BOOST_TEST(f.method == why);
}

BOOST_AUTO_TEST_CASE(no_tsc_event_without_a_tsc, *requires_tsc(false)) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  BOOST_CHECK_THROW(s.add("tsc"), pmc::Error);
}

BOOST_AUTO_TEST_CASE(tsc_event_without_a_backend, *requires_tsc()) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  BOOST_TEST(hal.backend() == nullptr);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  s.add("tsc");
  s.add("hal::tsc");
  BOOST_TEST(s.encodings().at(0).canonical == "hal::tsc");
  s.start();
  spin();
  auto r1 = s.read();
  spin();
  auto r2 = s.read();
  s.stop();
  auto r3 = s.read();
  auto r4 = s.read();
  BOOST_REQUIRE_EQUAL(r1.size(), 2u);
  BOOST_TEST(r1[0].unit == "ticks");
  BOOST_TEST(r1[0].value > 0u);
  BOOST_TEST(r2[0].value >= r1[0].value);  // the TSC only goes forward
  BOOST_TEST(r3[0].value >= r2[0].value);
  BOOST_TEST(r4[0].value == r3[0].value);  // stopped: frozen
  BOOST_TEST(r4[1].value == r4[0].value);  // two tsc entries read the same ticks
  BOOST_TEST(r3[0].time_enabled == r3[0].time_running);
  BOOST_TEST(!r3[0].extrapolated);
  s.reset();
  BOOST_TEST(s.read()[0].value == 0u);
}

BOOST_AUTO_TEST_CASE(tsc_takes_no_modifiers) {
  pmc_test::TempDir tmp;
  pmc::Hal hal = no_backend_hal(tmp);
  pmc::Session s = hal.session(pmc::Scope::this_thread());
  try {
    s.add("tsc:u");
    BOOST_ERROR("tsc:u accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::attribute));
    BOOST_TEST(std::string(e.what()).find("column 5") != std::string::npos, e.what());
  }
  try {
    s.add("hal::tsd");
    BOOST_ERROR("hal::tsd accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::not_found));
    BOOST_TEST(std::string(e.what()).find("task-clock") != std::string::npos, e.what());
  }
  BOOST_TEST(s.encodings().empty());
}
