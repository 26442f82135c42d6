// AArch64 and the machines that are neither x86 nor AArch64: decoding MIDR_EL1,
// ID_AA64DFR0_EL1 and PMCR_EL0; CPU description files (.toml), the way to name an Arm CPU that
// is not this machine; and reading this machine's through Linux.
//
// AArch64 (Arm ARM D17.2 MIDR_EL1, ID_AA64DFR0_EL1; D17.5 PMCR_EL0): MIDR_EL1 is Implementer
// [31:24], Variant [23:20], Architecture [19:16], PartNum [15:4], Revision [3:0];
// ID_AA64DFR0_EL1.PMUVer is [11:8]; PMCR_EL0.N [15:11] counts the event counters. Natively, Linux
// shows MIDR_EL1 in sysfs (cpu0/regs/identification/midr_el1) and its fields in /proc/cpuinfo
// ("CPU implementer", "CPU variant", "CPU part", "CPU revision"; "CPU architecture" is always 8
// there, while the register's field is 0xF), and hides PMUVer and PMCR_EL0 from user space.
#include "cpu_list.hpp"
#include "cpu_native.hpp"
#include "cpuid_bits.hpp"
#include "toml_util.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/input_file.hpp>

#include <fmt/format.h>

#include <sys/utsname.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>

namespace pmc {

using detail::bits;

namespace {

// MIDR_EL1.Implementer codes (Arm ARM D17.2, MIDR_EL1; the later ones as Linux's cputype.h
// names them).
const char* implementer_name(unsigned code) {
  switch (code) {
    case 0x41: return "Arm";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x44: return "DEC";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x49: return "Infineon";
    case 0x4D: return "Motorola";
    case 0x4E: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x53: return "Samsung";
    case 0x56: return "Marvell";
    case 0x61: return "Apple";
    case 0x69: return "Intel";
    case 0xC0: return "Ampere";
    default: return nullptr;
  }
}

// Part numbers of the cores the bundled and example descriptions use, and their neighbours
// (each core's Technical Reference Manual, MIDR_EL1.PartNum).
const char* part_name(unsigned implementer, unsigned part) {
  if (implementer == 0x41) {
    switch (part) {
      case 0xD03: return "Cortex-A53";
      case 0xD04: return "Cortex-A35";
      case 0xD05: return "Cortex-A55";
      case 0xD07: return "Cortex-A57";
      case 0xD08: return "Cortex-A72";
      case 0xD09: return "Cortex-A73";
      case 0xD0A: return "Cortex-A75";
      case 0xD0B: return "Cortex-A76";
      case 0xD0C: return "Neoverse N1";
      case 0xD0D: return "Cortex-A77";
      default: return nullptr;
    }
  }
  if (implementer == 0x46 && part == 0x001) return "A64FX";
  return nullptr;
}

}  // namespace

CpuInfo decode_arm(std::uint32_t midr, std::uint64_t dfr0, std::uint32_t pmcr, std::string name, std::string source) {
  CpuInfo cpu;
  cpu.isa = Isa::aarch64;
  ArmId& a = cpu.arm;
  a.midr = midr;
  a.implementer = bits(midr, 31, 24);
  a.variant = bits(midr, 23, 20);
  a.architecture = bits(midr, 19, 16);
  a.part = bits(midr, 15, 4);
  a.revision = bits(midr, 3, 0);
  a.dfr0 = dfr0;
  a.pmu_version = static_cast<unsigned>((dfr0 >> 8) & 0xFu);
  a.pmcr = pmcr;
  a.pmu_counters = bits(pmcr, 15, 11);
  const char* vendor = implementer_name(a.implementer);
  cpu.vendor = vendor ? vendor : fmt::format("implementer {:#04x}", a.implementer);
  cpu.family = a.architecture;
  cpu.model = a.part;
  cpu.stepping = a.revision;
  if (name.empty())
    if (const char* part = part_name(a.implementer, a.part)) name = part;
  cpu.brand = std::move(name);
  cpu.source = std::move(source);
  return cpu;
}

CpuInfo parse_cpu_description(std::string_view text, const std::string& name) {
  const toml::table doc = detail::parse_toml_string(text, name);
  detail::check_keys(doc, {"isa", "name", "midr_el1", "id_aa64dfr0_el1", "pmcr_el0"}, "a CPU description");
  const std::string isa = *detail::get_string(doc, "isa", true);
  if (isa != "aarch64")
    detail::fail_at(detail::node_of(doc, "isa"), errc::invalid_argument,
                    fmt::format("isa '{}' is not described by a CPU description file (expected \"aarch64\"; an x86 "
                                "CPU is a CPUID dump)",
                                isa));
  // A register value: an integer that fits the register's width.
  auto reg = [&](std::string_view key, unsigned width) {
    const std::int64_t v = *detail::get_int(doc, key, true);
    if (v < 0 || (width < 64 && static_cast<std::uint64_t>(v) >> width))
      detail::fail_at(detail::node_of(doc, key), errc::invalid_argument,
                      fmt::format("{} = {} does not fit the {}-bit register", key, v, width));
    return static_cast<std::uint64_t>(v);
  };
  const std::uint64_t midr = reg("midr_el1", 32);
  const std::uint64_t dfr0 = reg("id_aa64dfr0_el1", 64);
  const std::uint64_t pmcr = reg("pmcr_el0", 32);
  CpuInfo cpu = decode_arm(static_cast<std::uint32_t>(midr), dfr0, static_cast<std::uint32_t>(pmcr),
                           detail::get_string(doc, "name").value_or(""), name);
  cpu.from = CpuSource::description;
  return cpu;
}

CpuInfo load_cpu_file(const std::filesystem::path& path) {
  if (path.extension() != ".toml") return load_cpuid_dump(path);
  return parse_cpu_description(read_input_file(path, InputKind::cpu_description), path.string());
}

namespace detail {

namespace {

std::optional<std::uint64_t> parse_number(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    unsigned d = 0;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
    v = v * static_cast<unsigned>(base) + d;
  }
  return v;
}

}  // namespace

std::optional<std::uint32_t> midr_from_proc_cpuinfo(std::string_view text) {
  std::optional<std::uint64_t> implementer, variant, part, revision;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (implementer && part) break;  // the first processor's block is enough
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    const std::string_view value = line.substr(colon + 1);
    if (key == "CPU implementer") implementer = parse_number(value);
    else if (key == "CPU variant") variant = parse_number(value);
    else if (key == "CPU part") part = parse_number(value);
    else if (key == "CPU revision") revision = parse_number(value);
  }
  if (!implementer || !part || *implementer > 0xFF || *part > 0xFFF) return std::nullopt;
  // "CPU architecture" is 8 in Linux's listing for every AArch64 CPU; the register says 0xF.
  return static_cast<std::uint32_t>((*implementer << 24) | ((variant.value_or(0) & 0xF) << 20) | (0xFu << 16) |
                                    (*part << 4) | (revision.value_or(0) & 0xF));
}

std::optional<std::string> arm_pmu_in_sysfs(const std::filesystem::path& sysfs_root) {
  std::error_code ec;
  std::optional<std::string> found;
  for (std::filesystem::directory_iterator it(sysfs_root / "bus" / "event_source" / "devices", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.rfind("armv8", 0) == 0 && (!found || n < *found)) found = n;
  }
  return found;
}

CpuInfo read_native_arm(const std::filesystem::path& proc_cpuinfo, const std::filesystem::path& sysfs_root) {
  std::optional<std::uint32_t> midr;
  if (auto s = read_first_line(sysfs_root / "devices/system/cpu/cpu0/regs/identification/midr_el1"))
    if (auto v = parse_number(*s); v && *v <= 0xFFFFFFFFu) midr = static_cast<std::uint32_t>(*v);
  if (!midr) {
    std::ifstream in(proc_cpuinfo, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    midr = midr_from_proc_cpuinfo(text);
  }
  const std::optional<std::string> pmu = arm_pmu_in_sysfs(sysfs_root);
  // PMUVer (ID_AA64DFR0_EL1[11:8]) = 1 when Linux drives a PMUv3, else 0; N unknown.
  CpuInfo cpu = decode_arm(midr.value_or(0), pmu ? 0x100u : 0u, 0, "", "native");
  cpu.arm.pmu_inferred = true;
  cpu.from = CpuSource::native;
  if (!midr) cpu.vendor = "unknown";
  return cpu;
}

CpuInfo native_other() {
  CpuInfo cpu;
  cpu.isa = Isa::other;
  struct utsname u {};
  cpu.vendor = "unknown";
  if (uname(&u) == 0) cpu.brand = u.machine;
  cpu.source = "native";
  cpu.from = CpuSource::native;
  return cpu;
}

}  // namespace detail

}  // namespace pmc
