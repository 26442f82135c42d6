#define BOOST_TEST_MODULE msr
#include <boost/test/unit_test.hpp>

// Access "msr" against a file-backed fake /dev/cpu tree: pread/pwrite land at the MSR offset,
// only the backend's registers pass (others are refused before the file is touched), missing
// devices and a busy PMU are reported, and a whole session drives the p6 driver through it
// (64-bit totals over the 40-bit counters included). The real /dev/cpu/N/msr is only opened,
// never written.

#include "access.hpp"
#include "msr.hpp"
#include "plugins.hpp"
#include "session_impl.hpp"
#include "support/backend.hpp"
#include "support/child_process.hpp"
#include "support/preconditions.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A general counter of the given geometry (the other CounterInfo fields keep their defaults).
pmc::CounterInfo general_counter(unsigned index, unsigned width, std::uint32_t control, std::uint32_t counter) {
  pmc::CounterInfo c;
  c.kind = pmc::CounterKind::general;
  c.index = index;
  c.width = width;
  c.control_msr = control;
  c.counter_msr = counter;
  return c;
}

pmc::PmuInfo p6_pmu() {
  pmc::PmuInfo p;
  p.name = "p6";
  p.counters = {general_counter(0, 40, 0x186, 0xC1), general_counter(1, 40, 0x187, 0xC2)};
  p.registers = {0xC1, 0xC2, 0x186, 0x187};
  return p;
}

// <tmp>/dev/cpu/<n>/msr as a plain file, <tmp>/proc/sys/kernel/nmi_watchdog = 0. Unlike the
// device, where the offset selects one 64-bit MSR, a file's 8-byte records at neighbouring
// offsets overlap: the tests look only at registers at least 8 apart or at the last write.
struct FakeTree {
  pmc_test::TempDir tmp{"pmc-test-msr"};
  pmc::detail::AccessOptions options;
  FakeTree() {
    options.msr_root = tmp.path() / "dev" / "cpu";
    options.proc_root = tmp.path() / "proc";
    options.sysfs_root = tmp.path() / "sys";
    options.load_msr_module = false;
    pmc_test::spit(options.proc_root / "sys" / "kernel" / "nmi_watchdog", "0\n");
  }
  fs::path device(int cpu) const { return options.msr_root / std::to_string(cpu) / "msr"; }
  void make_device(int cpu) {
    fs::create_directories(device(cpu).parent_path());
    int fd = ::open(device(cpu).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(ftruncate(fd, 0x1000) == 0);
    ::close(fd);
  }
  std::uint64_t peek(int cpu, std::uint32_t msr) const {
    int fd = ::open(device(cpu).c_str(), O_RDONLY);
    std::uint64_t v = 0;
    BOOST_REQUIRE(pread(fd, &v, 8, msr) == 8);
    ::close(fd);
    return v;
  }
  void poke(int cpu, std::uint32_t msr, std::uint64_t v) const {
    int fd = ::open(device(cpu).c_str(), O_RDWR);
    BOOST_REQUIRE(pwrite(fd, &v, 8, msr) == 8);
    ::close(fd);
  }
};

// A context as Hal::open builds it: the p6 plugin forced onto this machine, access "msr".
std::shared_ptr<pmc::detail::Context> p6_msr_context() {
  const pmc_test::LoadedForTest p6("p6");
  auto ctx = std::make_shared<pmc::detail::Context>();
  ctx->loaded = p6.b;
  ctx->cpu = pmc::read_native_cpu();
  ctx->catalog = p6.data;
  ctx->pmu = p6.pmu(ctx->cpu);
  ctx->access = pmc::detail::AccessKind::msr;
  return ctx;
}

cpu_set_t affinity() {
  cpu_set_t s;
  CPU_ZERO(&s);
  sched_getaffinity(0, sizeof s, &s);
  return s;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(reads_and_writes_land_at_the_msr_offset, FakeTree) {
  make_device(0);
  pmc::detail::MsrRegisterFile regs(0, p6_pmu(), options);
  BOOST_TEST(regs.device() == device(0));
  regs.write(0x186, 0x4300C0);
  BOOST_TEST(peek(0, 0x186) == 0x4300C0u);
  BOOST_TEST(peek(0, 0x18E) == 0u);  // 8 bytes exactly (a file's offsets overlap; the device's do not)
  poke(0, 0xC1, 0x12345);
  BOOST_TEST(regs.read(0xC1) == 0x12345u);
  BOOST_TEST(regs.read(0x186) == 0x4300C0u);
}

BOOST_FIXTURE_TEST_CASE(other_registers_are_refused_before_the_device, FakeTree) {
  make_device(0);
  pmc::detail::MsrRegisterFile regs(0, p6_pmu(), options);
  for (std::uint32_t msr : {0x10u, 0x1A0u, 0x188u, 0xC0u}) {
    try {
      regs.write(msr, 0xFFFF);
      BOOST_ERROR("wrote MSR " << msr);
    } catch (const pmc::Error& e) {
      BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(pmc::errc::register_fault));
      BOOST_TEST(contains(e.what(), "not a register of the p6 PMU"), e.what());
      BOOST_TEST(contains(e.what(), "0xC1, 0xC2, 0x186, 0x187"), e.what());
      BOOST_TEST(contains(e.what(), "refused before reaching " + device(0).string()), e.what());
    }
    BOOST_TEST(peek(0, msr) == 0u);  // the file never saw it
    BOOST_CHECK_THROW((void)regs.read(msr), pmc::Error);
  }
  BOOST_CHECK_THROW((void)regs.rdpmc(0), pmc::Error);
}

BOOST_FIXTURE_TEST_CASE(missing_device, FakeTree) {
  try {
    pmc::detail::MsrRegisterFile regs(3, p6_pmu(), options);
    BOOST_ERROR("opened a device that does not exist");
  } catch (const pmc::Error& e) {
    BOOST_TEST(contains(e.what(), device(3).string() + ": no such device: the msr driver is not loaded"), e.what());
    BOOST_TEST(contains(e.what(), "modprobe msr"), e.what());
    BOOST_TEST(contains(e.what(), "access = \"perf\""), e.what());
  }
}

BOOST_FIXTURE_TEST_CASE(modprobe_when_the_device_is_missing, FakeTree) {
  // A stand-in modprobe on the PATH that "loads the module" by creating the device.
  const fs::path bin = tmp.path() / "bin";
  pmc_test::spit(bin / "modprobe", "#!/bin/sh\n[ \"$1\" = msr ] || exit 1\nmkdir -p '" + device(0).parent_path().string() +
                                       "' && : > '" + device(0).string() + "'\n");
  fs::permissions(bin / "modprobe", fs::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", (bin.string() + ":" + saved).c_str(), 1);
  options.load_msr_module = true;
  try {
    pmc::detail::MsrRegisterFile regs(0, p6_pmu(), options);
    BOOST_TEST(geteuid() == 0u);  // only root loads the module
    BOOST_TEST(fs::exists(device(0)));
  } catch (const pmc::Error& e) {
    BOOST_TEST(geteuid() != 0u, e.what());
    BOOST_TEST(contains(e.what(), "loading it needs root"), e.what());
  }
  setenv("PATH", saved.c_str(), 1);
}

BOOST_AUTO_TEST_CASE(open_error_messages) {
  const fs::path d = "/dev/cpu/2/msr";
  BOOST_TEST(contains(pmc::detail::msr_open_error(d, EACCES, "", false),
                      "/dev/cpu/2/msr: permission denied: reading and writing MSRs needs root (CAP_SYS_RAWIO)"));
  BOOST_TEST(contains(pmc::detail::msr_open_error(d, ENOENT, "modprobe not found", true),
                      "the msr driver is not loaded (modprobe not found)"));
  BOOST_TEST(contains(pmc::detail::msr_open_error(d, ENXIO, "", true), "offline or has no MSRs"));
}

BOOST_FIXTURE_TEST_CASE(nmi_watchdog_and_busy_counters, FakeTree) {
  BOOST_TEST(!pmc::detail::nmi_watchdog_conflict(options));
  pmc_test::spit(options.proc_root / "sys" / "kernel" / "nmi_watchdog", "1\n");
  auto c = pmc::detail::nmi_watchdog_conflict(options);
  BOOST_REQUIRE(c);
  BOOST_TEST(contains(*c, (options.proc_root / "sys/kernel/nmi_watchdog").string() + " is 1"), *c);

  make_device(0);
  pmc::detail::MsrRegisterFile regs(0, p6_pmu(), options);
  BOOST_TEST(!pmc::detail::counters_in_use(regs, p6_pmu(), 0, device(0).string()));
  poke(0, 0x186, 0x4300C0);  // someone's PerfEvtSel0 with EN
  auto busy = pmc::detail::counters_in_use(regs, p6_pmu(), 0, device(0).string());
  BOOST_REQUIRE(busy);
  BOOST_TEST(contains(*busy, "general counter 0 is already counting on CPU 0: MSR 0x186 = 0x4300C0 (EN set)"), *busy);
}

BOOST_FIXTURE_TEST_CASE(a_session_drives_the_p6_driver_through_the_device, FakeTree) {
  make_device(0);
  const cpu_set_t before = affinity();
  {
    pmc::detail::SessionImpl s(p6_msr_context(), pmc::Scope::on_cpu(0), options);
    s.add("INST_RETIRED:u");
    s.add("task-clock");  // HAL events mix in as with any access
    // Pinned to the CPU it programs.
    cpu_set_t now = affinity();
    BOOST_TEST(CPU_COUNT(&now) == 1);
    BOOST_TEST(CPU_ISSET(0, &now));
    s.start();
    BOOST_TEST(peek(0, 0x186) == (0x100C0u | (1u << 22)));  // programmed, EN on
    BOOST_TEST(peek(0, 0xC1) == 0u);                         // counter zeroed
    // The "hardware" counts: 5, then past the 40-bit wrap, then 3 more after it.
    poke(0, 0xC1, 5);
    BOOST_TEST(s.read().at(0).value == 5u);
    poke(0, 0xC1, 0xFFFFFFFFFFull);
    s.poll();
    poke(0, 0xC1, 3);
    s.stop();
    BOOST_TEST((peek(0, 0x186) & (1u << 22)) == 0u);  // stopped: EN clear
    auto r = s.read();
    BOOST_TEST(r.at(0).value == (1ull << 40) + 3);
    BOOST_TEST(r.at(0).canonical == "p6::INST_RETIRED:u=1:k=0:e=0:i=0:c=0");
    BOOST_TEST(r.at(1).unit == "ns");
  }
  const cpu_set_t after = affinity();
  BOOST_TEST(CPU_EQUAL(&before, &after));  // the pin is undone with the session
}

// On a Pentium M the p6 driver reads IA32_MISC_ENABLE (0x1A0) before it programs anything
// (sheet section 1: bit 7 "perfmon available" must be 1). The PMU geometry is the Pentium M's
// (its allowlist has 0x1A0); the CPU stays this machine's, since access "msr" programs it.
BOOST_FIXTURE_TEST_CASE(a_pentium_m_session_checks_misc_enable_through_the_device, FakeTree) {
  make_device(0);
  auto ctx = p6_msr_context();
  const pmc::CpuInfo pentium_m = pmc::load_cpuid_dump(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-m.txt");
  ctx->pmu = ctx->backend().pmu(pentium_m, ctx->catalog, ctx->backend().probe(pentium_m, ctx->catalog));
  BOOST_REQUIRE(ctx->pmu.cpu_tag == "pm");
  {
    poke(0, 0x1A0, 0);  // firmware cleared bit 7
    pmc::detail::SessionImpl s(ctx, pmc::Scope::on_cpu(0), options);
    s.add("INST_RETIRED:u");
    try {
      s.start();
      BOOST_ERROR("a Pentium M with IA32_MISC_ENABLE[7] = 0 was programmed");
    } catch (const pmc::Error& e) {
      BOOST_TEST(contains(e.what(), "IA32_MISC_ENABLE (0x1A0) bit 7 is 0"), e.what());
    }
    BOOST_TEST(!s.running);
    BOOST_TEST(peek(0, 0x186) == 0u);  // nothing written
  }
  {
    poke(0, 0x1A0, 0x80);
    pmc::detail::SessionImpl s(ctx, pmc::Scope::on_cpu(0), options);
    s.add("INST_RETIRED:u");
    s.start();
    BOOST_TEST(peek(0, 0x186) == (0x100C0u | (1u << 22)));
    s.stop();
    BOOST_TEST(peek(0, 0x1A0) == 0x80u);  // read, never written
  }
}

BOOST_FIXTURE_TEST_CASE(sessions_refuse_a_busy_pmu_and_the_watchdog, FakeTree) {
  make_device(0);
  poke(0, 0x186, 1u << 22);
  {
    pmc::detail::SessionImpl s(p6_msr_context(), pmc::Scope::on_cpu(0), options);
    try {
      s.add("INST_RETIRED");
      BOOST_ERROR("programmed a PMU someone else is using");
    } catch (const pmc::Error& e) {
      BOOST_TEST(contains(e.what(), "access 'msr' refused"), e.what());
      BOOST_TEST(contains(e.what(), "EN set"), e.what());
    }
    BOOST_TEST(s.encodings.empty());
    BOOST_TEST(peek(0, 0x186) == (1u << 22));  // untouched
  }
  poke(0, 0x186, 0);
  pmc_test::spit(options.proc_root / "sys" / "kernel" / "nmi_watchdog", "1\n");
  pmc::detail::SessionImpl s(p6_msr_context(), pmc::Scope::on_cpu(0), options);
  try {
    s.add("INST_RETIRED");
    BOOST_ERROR("programmed the PMU under the NMI watchdog");
  } catch (const pmc::Error& e) {
    BOOST_TEST(contains(e.what(), "nmi_watchdog is 1"), e.what());
  }
  // Scopes the msr access cannot count.
  pmc::detail::SessionImpl all(p6_msr_context(), pmc::Scope::all_cpus(), options);
  BOOST_CHECK_THROW(all.add("INST_RETIRED"), pmc::Error);
}

// This machine's MSR device, only opened (no register is read or written; the module is not
// loaded by the test).
BOOST_AUTO_TEST_CASE(this_machine_device_opens, *pmc_test::requires_msr_device(true)) {
  pmc::detail::AccessOptions options;
  options.load_msr_module = false;
  BOOST_CHECK_NO_THROW(pmc::detail::MsrRegisterFile(0, p6_pmu(), options));
}

BOOST_AUTO_TEST_CASE(this_machine_without_the_msr_device_says_why, *pmc_test::requires_msr_device(false)) {
  pmc::detail::AccessOptions options;
  options.load_msr_module = false;
  try {
    pmc::detail::MsrRegisterFile regs(0, p6_pmu(), options);
    BOOST_ERROR("/dev/cpu/0/msr opened although it does not exist");
  } catch (const pmc::Error& e) {
    BOOST_TEST_MESSAGE(e.what());
    BOOST_TEST(contains(e.what(), "/dev/cpu/0/msr"), e.what());
    BOOST_TEST(contains(e.what(), "the msr driver is not loaded"), e.what());
  }
}

BOOST_AUTO_TEST_CASE(a_cpuid_dump_is_not_programmed) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  cfg.access = "msr";
  pmc::Hal hal = pmc::Hal::open(cfg);
  pmc::Session s = hal.session();
  try {
    s.add("instructions");
    BOOST_ERROR("programmed a CPUID dump's PMU");
  } catch (const pmc::Error& e) {
    BOOST_TEST(contains(e.what(), "CPUID dump"), e.what());
  }
}
