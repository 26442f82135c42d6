// CPUs that are not described by CPUID (pmc/cpu.hpp): AArch64 CPU description files, the native
// reading of an arm64 Linux machine from /proc/cpuinfo and sysfs (fed fixtures here), other
// machines, and a HAL opened on such a CPU. The register values are the Cortex-A72's (its TRM,
// as examples/armv8/cortex-a72.toml records): MIDR_EL1 0x410FD083 = implementer 0x41, variant 0,
// architecture 0xF, part 0xD08, revision 3; ID_AA64DFR0_EL1 0x10305106 has PMUVer [11:8] = 1;
// PMCR_EL0 0x41023000 has N [15:11] = 6.
#define BOOST_TEST_MODULE cpu_description
#include <boost/test/unit_test.hpp>

#include "cpu_native.hpp"

#include <pmc/error.hpp>
#include <pmc/pmc.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(PMC_SOURCE_DIR) / "examples" / "armv8";

template <class F>
std::string error_of(F&& f, pmc::errc code) {
  try {
    f();
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == code), e.what());
    return e.what();
  }
  BOOST_ERROR("no error thrown");
  return {};
}

// A scratch directory under the build tree, emptied first.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(PMC_BUILD_DIR) / "tests" / "cpu-description" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// The first processor of Linux's /proc/cpuinfo on a Raspberry Pi 4 (Cortex-A72 r0p3), in the
// layout arch/arm64/kernel/cpuinfo.c prints.
const char* const kProcCpuinfoA72 =
    "processor\t: 0\n"
    "BogoMIPS\t: 108.00\n"
    "Features\t: fp asimd evtstrm crc32 cpuid\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x0\n"
    "CPU part\t: 0xd08\n"
    "CPU revision\t: 3\n"
    "\n"
    "processor\t: 1\n"
    "CPU implementer\t: 0x51\n"
    "CPU part\t: 0x800\n"
    "\n";

}  // namespace

BOOST_AUTO_TEST_CASE(a_description_decodes_midr_pmuver_and_n) {
  const pmc::CpuInfo c = pmc::load_cpu_file(kExamples / "cortex-a72.toml");
  BOOST_TEST((c.isa == pmc::Isa::aarch64));
  BOOST_TEST(c.arm.midr == 0x410FD083u);
  BOOST_TEST(c.arm.implementer == 0x41u);
  BOOST_TEST(c.arm.variant == 0u);
  BOOST_TEST(c.arm.architecture == 0xFu);
  BOOST_TEST(c.arm.part == 0xD08u);
  BOOST_TEST(c.arm.revision == 3u);
  BOOST_TEST(c.arm.pmu_version == 1u);
  BOOST_TEST(c.arm.pmu_counters == 6u);
  BOOST_TEST(!c.arm.pmu_inferred);
  // The mapping probe tables use: vendor = implementer, family = architecture, model = part.
  BOOST_TEST(c.vendor == "Arm");
  BOOST_TEST(c.family == 0xFu);
  BOOST_TEST(c.model == 0xD08u);
  BOOST_TEST(c.stepping == 3u);
  BOOST_TEST(c.brand == "Cortex-A72");
  BOOST_TEST(pmc::describe(c) == "Arm part 0xd08 r0p3 (Cortex-A72)");
  BOOST_TEST(c.source == (kExamples / "cortex-a72.toml").string());

  // A64FX: implementer 0x46, variant 1, PMUv3p1 (PMUVer 4), N = (0x4040 >> 11) & 0x1F = 8.
  const pmc::CpuInfo fx = pmc::load_cpu_file(kExamples / "a64fx.toml");
  BOOST_TEST(fx.vendor == "Fujitsu");
  BOOST_TEST(fx.arm.variant == 1u);
  BOOST_TEST(fx.arm.pmu_version == 4u);
  BOOST_TEST(fx.arm.pmu_counters == 8u);
  BOOST_TEST(pmc::describe(fx) == "Fujitsu part 0x001 r1p0 (A64FX)");
  // An implementer without a name, and no brand.
  BOOST_TEST(pmc::describe(pmc::decode_arm(0x7F0F0010, 0, 0, "", "x")) == "implementer 0x7f part 0x001 r0p0");
}

BOOST_AUTO_TEST_CASE(a_bad_description_names_file_line_and_column) {
  const std::string ok = "isa = \"aarch64\"\nmidr_el1 = 0x410FD083\nid_aa64dfr0_el1 = 0x10305106\npmcr_el0 = 0x41023000\n";
  std::string what = error_of([&] { (void)pmc::parse_cpu_description(ok + "pmceid0 = 1\n", "d.toml"); },
                              pmc::errc::attribute);
  BOOST_TEST(what.find("d.toml:5:1") != std::string::npos, what);
  BOOST_TEST(what.find("pmceid0") != std::string::npos, what);
  what = error_of([] { (void)pmc::parse_cpu_description("isa = \"x86\"\nmidr_el1 = 1\n", "x.toml"); },
                  pmc::errc::invalid_argument);
  BOOST_TEST(what.find("x.toml:1:7") != std::string::npos, what);
  what = error_of(
      [] {
        (void)pmc::parse_cpu_description(
            "isa = \"aarch64\"\nmidr_el1 = 0x1410FD083\nid_aa64dfr0_el1 = 0\npmcr_el0 = 0\n", "big.toml");
      },
      pmc::errc::invalid_argument);
  BOOST_TEST(what.find("big.toml:2:12") != std::string::npos, what);
  BOOST_TEST(what.find("does not fit the 32-bit register") != std::string::npos, what);
  what = error_of([] { (void)pmc::parse_cpu_description("isa = \"aarch64\"\nmidr_el1 = 0x410FD083\n", "short.toml"); },
                  pmc::errc::invalid_argument);
  BOOST_TEST(what.find("short.toml") != std::string::npos, what);
  BOOST_TEST(what.find("id_aa64dfr0_el1") != std::string::npos, what);
  what = error_of([] { (void)pmc::parse_cpu_description("isa = \"aarch64\"\nmidr_el1 = \"0x41\"\n", "s.toml"); },
                  pmc::errc::invalid_argument);
  BOOST_TEST(what.find("s.toml:2:12") != std::string::npos, what);
  error_of([] { (void)pmc::parse_cpu_description("isa = \n", "broken.toml"); }, pmc::errc::parse);
  what = error_of([] { (void)pmc::load_cpu_file("/nonexistent/cpu.toml"); }, pmc::errc::io);
  BOOST_TEST(what.find("/nonexistent/cpu.toml") != std::string::npos, what);
}

BOOST_AUTO_TEST_CASE(load_cpu_file_reads_a_cpuid_dump_for_any_other_name) {
  const pmc::CpuInfo p3 = pmc::load_cpu_file(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-iii.txt");
  BOOST_TEST((p3.isa == pmc::Isa::x86));
  BOOST_TEST(pmc::describe(p3) == "GenuineIntel family 6 model 8 stepping 3");
}

BOOST_AUTO_TEST_CASE(native_arm64_from_proc_cpuinfo_and_sysfs) {
  // /proc/cpuinfo alone: MIDR rebuilt from the first processor's lines, architecture 0xF.
  BOOST_TEST(pmc::detail::midr_from_proc_cpuinfo(kProcCpuinfoA72).value_or(0) == 0x410FD083u);
  BOOST_TEST(!pmc::detail::midr_from_proc_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\n").has_value());

  // A sysfs with MIDR_EL1 and a PMU Linux registered (a Cortex-A53 r0p4, 0x410FD034).
  const fs::path root = scratch("sysfs");
  write_file(root / "sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "0x00000000410fd034\n");
  fs::create_directories(root / "sys/bus/event_source/devices/armv8_cortex_a53");
  fs::create_directories(root / "sys/bus/event_source/devices/software");
  write_file(root / "cpuinfo", kProcCpuinfoA72);
  pmc::CpuInfo c = pmc::detail::read_native_arm(root / "cpuinfo", root / "sys");
  BOOST_TEST((c.isa == pmc::Isa::aarch64));
  BOOST_TEST(c.arm.part == 0xD03u);  // sysfs wins over /proc/cpuinfo
  BOOST_TEST(c.arm.revision == 4u);
  BOOST_TEST(c.brand == "Cortex-A53");
  BOOST_TEST(c.arm.pmu_inferred);
  BOOST_TEST(c.arm.pmu_version == 1u);   // a PMUv3 driver is registered
  BOOST_TEST(c.arm.pmu_counters == 0u);  // unknown: Linux hides PMCR_EL0
  BOOST_TEST(c.source == "native");
  BOOST_TEST(pmc::detail::arm_pmu_in_sysfs(root / "sys").value_or("") == "armv8_cortex_a53");

  // No sysfs MIDR: /proc/cpuinfo; no PMU registered: PMUVer 0.
  const fs::path bare = scratch("bare");
  write_file(bare / "cpuinfo", kProcCpuinfoA72);
  c = pmc::detail::read_native_arm(bare / "cpuinfo", bare / "sys");
  BOOST_TEST(c.arm.midr == 0x410FD083u);
  BOOST_TEST(c.arm.pmu_version == 0u);

  // Nothing readable at all: no exception, an unknown CPU.
  c = pmc::detail::read_native_arm(bare / "missing", bare / "sys");
  BOOST_TEST(c.vendor == "unknown");
  BOOST_TEST((c.isa == pmc::Isa::aarch64));
}

BOOST_AUTO_TEST_CASE(another_machine_is_described_by_its_name) {
  const pmc::CpuInfo c = pmc::detail::native_other();
  BOOST_TEST((c.isa == pmc::Isa::other));
  BOOST_TEST(c.vendor == "unknown");
  BOOST_TEST(!c.brand.empty());  // uname's machine ("x86_64" here)
  BOOST_TEST(pmc::describe(c) == "unknown CPU (" + c.brand + ")");
}

// Every in-tree backend probes an Arm CPU without failing, none matches, and the HAL still
// counts its own events: an arm64 machine without this repository's ARMv8 example gets a HAL.
BOOST_AUTO_TEST_CASE(a_hal_opens_on_an_arm_cpu_and_no_x86_backend_claims_it) {
  const fs::path dir = scratch("config");
  write_file(dir / "config.toml", "cpu = \"" + (kExamples / "cortex-a72.toml").string() + "\"\n");
  const pmc::Config cfg = pmc::load_config(dir / "config.toml");
  const pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_TEST(hal.backend() == nullptr);
  BOOST_TEST(hal.why().find("no loaded backend matches Arm part 0xd08 r0p3 (Cortex-A72)") != std::string::npos,
             hal.why());
  BOOST_TEST(!hal.candidates().empty());
  for (const auto& c : hal.candidates()) {
    BOOST_TEST(!c.match.matched(), c.backend);
    BOOST_TEST(c.match.reason.find("its probe failed") == std::string::npos, c.backend << ": " << c.match.reason);
    // Each verdict names the CPU as its MIDR_EL1 does, not as an x86 family and model.
    BOOST_TEST(c.match.reason.rfind("Arm part 0xd08 r0p3: ", 0) == 0, c.backend << ": " << c.match.reason);
  }
  pmc::Session s = hal.session();
  s.add("tsc");
  s.start();
  s.stop();
  BOOST_TEST(s.read().size() == 1u);
}
