// CPU probing: CPUID answers -> CpuInfo. The decoding rules are the SDM's and AMD's:
//   - vendor: leaf 0 EBX, EDX, ECX (in that order), 4 little-endian bytes each;
//   - display family = base family EAX[11:8], plus extended family EAX[27:20] only when the
//     base family is 0FH;
//   - display model = base model EAX[7:4], plus extended model EAX[19:16] << 4 only when the
//     base family is 6 or 0FH;
//   - family and model come from leaf 1 only. AMD's 80000001H EAX repeats a signature, but on
//     K7 it says family 7 where leaf 1 says 6: it is never used here.
// Leaves beyond what leaf 0 / 80000000H advertise are ignored even when a dump has them.
//
// AArch64 (Arm ARM D17.2 MIDR_EL1, ID_AA64DFR0_EL1; D17.5 PMCR_EL0): MIDR_EL1 is Implementer
// [31:24], Variant [23:20], Architecture [19:16], PartNum [15:4], Revision [3:0];
// ID_AA64DFR0_EL1.PMUVer is [11:8]; PMCR_EL0.N [15:11] counts the event counters. Natively, Linux
// shows MIDR_EL1 in sysfs (cpu0/regs/identification/midr_el1) and its fields in /proc/cpuinfo
// ("CPU implementer", "CPU variant", "CPU part", "CPU revision"; "CPU architecture" is always 8
// there, while the register's field is 0xF), and hides PMUVer and PMCR_EL0 from user space.
#include "cpu_native.hpp"
#include "toml_util.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>

#include <fmt/format.h>

#include <sys/utsname.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PMC_HAVE_CPUID 1
#else
#define PMC_HAVE_CPUID 0
#endif

namespace pmc {

void CpuidTable::set(std::uint32_t leaf, std::uint32_t subleaf, CpuidRegs regs) {
  leaves_.insert_or_assign(std::pair{leaf, subleaf}, regs);
}

std::optional<CpuidRegs> CpuidTable::get(std::uint32_t leaf, std::uint32_t subleaf) const {
  auto it = leaves_.find(std::pair{leaf, subleaf});
  if (it == leaves_.end()) return std::nullopt;
  return it->second;
}

namespace {

constexpr std::uint32_t kArchPerfmonLeaf = 0x0A;
constexpr std::uint32_t kExtBase = 0x80000000;
constexpr std::uint32_t kAmdPerfmonLeaf = 0x80000022;

// Bits hi..lo of v (inclusive), as the SDM tables write them.
constexpr unsigned bits(std::uint32_t v, unsigned hi, unsigned lo) {
  const unsigned width = hi - lo + 1;
  const std::uint32_t mask = width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u);
  return static_cast<unsigned>((v >> lo) & mask);
}
constexpr bool bit(std::uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

// Appends the 4 bytes of a register, low byte first (how CPUID packs strings).
void append_bytes(std::string& out, std::uint32_t reg) {
  for (unsigned i = 0; i < 4; ++i) out.push_back(static_cast<char>((reg >> (8 * i)) & 0xFFu));
}

// Cuts at the first NUL (the strings are NUL-padded) and trims surrounding blanks (older Intel
// brand strings are right-justified with leading spaces).
std::string clean_string(std::string s) {
  if (auto nul = s.find('\0'); nul != std::string::npos) s.resize(nul);
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

// 80000000H answers with the highest *basic* leaf's data on CPUs without extended leaves
// (SDM: out-of-range inputs return the highest basic leaf), so only 8000xxxxH counts as a
// maximum.
std::uint32_t max_extended(const CpuidTable& t) {
  const auto r = t.get(kExtBase);
  if (!r || (r->eax & 0xFFFF0000u) != kExtBase) return 0;
  return r->eax;
}

ArchPerfmon decode_arch_perfmon(const CpuidRegs& r) {
  ArchPerfmon a;
  a.version = bits(r.eax, 7, 0);
  a.gp_counters = bits(r.eax, 15, 8);
  a.gp_width = bits(r.eax, 23, 16);
  a.ebx_length = bits(r.eax, 31, 24);
  a.unavailable_events = r.ebx;
  a.fixed_bitmap = r.ecx;
  a.fixed_counters = bits(r.edx, 4, 0);
  a.fixed_width = bits(r.edx, 12, 5);
  a.anythread_deprecated = bit(r.edx, 15);
  return a;
}

}  // namespace

CpuInfo decode_cpuid(CpuidTable table, std::string source) {
  const auto leaf0 = table.get(0);
  if (!leaf0) {
    throw Error(errc::parse,
                fmt::format("{}: CPUID leaf 0 missing (no vendor string or maximum leaf)", source));
  }
  const auto leaf1 = table.get(1);
  if (!leaf1) {
    throw Error(errc::parse,
                fmt::format("{}: CPUID leaf 1 missing (no family/model/stepping signature)", source));
  }

  CpuInfo cpu;
  std::string vendor;
  append_bytes(vendor, leaf0->ebx);
  append_bytes(vendor, leaf0->edx);
  append_bytes(vendor, leaf0->ecx);
  cpu.vendor = clean_string(std::move(vendor));
  cpu.max_leaf = leaf0->eax;

  cpu.signature = leaf1->eax;
  const unsigned base_family = bits(cpu.signature, 11, 8);
  const unsigned ext_family = bits(cpu.signature, 27, 20);
  const unsigned base_model = bits(cpu.signature, 7, 4);
  const unsigned ext_model = bits(cpu.signature, 19, 16);
  cpu.family = base_family == 0xF ? base_family + ext_family : base_family;
  cpu.model = (base_family == 0x6 || base_family == 0xF) ? base_model + (ext_model << 4) : base_model;
  cpu.stepping = bits(cpu.signature, 3, 0);

  if (cpu.max_leaf >= 7) {
    if (const auto leaf7 = table.get(7, 0)) cpu.hybrid = bit(leaf7->edx, 15);
  }
  if (cpu.max_leaf >= kArchPerfmonLeaf) {
    if (const auto leafa = table.get(kArchPerfmonLeaf)) cpu.arch = decode_arch_perfmon(*leafa);
  }

  cpu.max_ext_leaf = max_extended(table);
  // The AMD bits are reserved (zero) on Intel, so they are read whatever the vendor: Hygon
  // and other AMD-compatible parts then get them too.
  if (cpu.max_ext_leaf >= 0x80000001) {
    if (const auto e1 = table.get(0x80000001)) {
      cpu.amd.perfctr_core = bit(e1->ecx, 23);
      cpu.amd.perfctr_nb = bit(e1->ecx, 24);
      cpu.amd.perfctr_llc = bit(e1->ecx, 28);
    }
  }
  if (cpu.max_ext_leaf >= kAmdPerfmonLeaf) {
    if (const auto e22 = table.get(kAmdPerfmonLeaf)) {
      cpu.amd.perfmon_v2 = bit(e22->eax, 0);
      cpu.amd.v2_core_counters = bits(e22->ebx, 3, 0);
    }
  }
  if (cpu.max_ext_leaf >= 0x80000004) {
    const auto b2 = table.get(0x80000002);
    const auto b3 = table.get(0x80000003);
    const auto b4 = table.get(0x80000004);
    if (b2 && b3 && b4) {
      std::string brand;
      for (const auto* r : {&*b2, &*b3, &*b4}) {
        append_bytes(brand, r->eax);
        append_bytes(brand, r->ebx);
        append_bytes(brand, r->ecx);
        append_bytes(brand, r->edx);
      }
      cpu.brand = clean_string(std::move(brand));
    }
  }

  cpu.raw = std::move(table);
  cpu.source = std::move(source);
  return cpu;
}

#if PMC_HAVE_CPUID
namespace {

// Enough for every subleaf enumeration the SDM and APM define today; protects against a
// hypervisor that reports nonsense counts.
constexpr std::uint32_t kMaxSubleaves = 64;
constexpr std::uint32_t kMaxBasicLeaf = 0xFF;
constexpr std::uint32_t kMaxExtLeaf = kExtBase + 0xFF;
constexpr std::uint32_t kHypervisorBase = 0x40000000, kHypervisorTiming = 0x40000010;

// The leaves a native reading holds. In a virtual machine each CPUID instruction traps to the
// hypervisor (about 6 us on the project's guests: the whole table, 65 instructions there, took
// 0.4 ms of every pmc command), so not every leaf, but those CpuInfo decodes and the library and
// the in-tree backends and models read at every Hal::open: 0 and 1 (vendor, signature,
// features), 7 (features, hybrid), 0AH and 23H (architectural perfmon), 15H and 16H (the TSC
// rate), 1AH (hybrid core type); 80000001H (AMD perfmon features), 80000002H-80000004H (brand),
// 80000022H (PerfMonV2); and the hypervisor's 40000000H and 40000010H. Others are read when asked
// for (read_native_leaf): the cache leaves 2, 4, 80000005H, 80000006H and 8000001DH by
// emulation (cache_hierarchy), a leaf a backend's probe table names by Hal::open. A CPUID dump
// keeps every leaf it has.
constexpr std::uint32_t kNativeLeaves[] = {0x00, 0x01, 0x07, 0x0A, 0x15, 0x16, 0x1A, 0x23};
constexpr std::uint32_t kNativeExtLeaves[] = {0x80000001, 0x80000002, 0x80000003, 0x80000004, 0x80000022};

CpuidRegs native_cpuid(std::uint32_t leaf, std::uint32_t subleaf) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid_count(leaf, subleaf, a, b, c, d);
  return {a, b, c, d};
}

// Reads subleaf 0 and, for the leaves that have them, the further subleaves the SDM (basic
// leaves) or the APM (8000001DH, 80000026H) defines. Enumerations that end with a null entry
// keep that entry, as `cpuid -r` does.
void read_leaf(CpuidTable& t, std::uint32_t leaf) {
  const CpuidRegs s0 = native_cpuid(leaf, 0);
  t.set(leaf, 0, s0);
  auto read_range = [&](std::uint32_t last) {  // subleaves 1..last
    for (std::uint32_t i = 1; i <= last && i < kMaxSubleaves; ++i) t.set(leaf, i, native_cpuid(leaf, i));
  };
  auto read_until = [&](auto is_end) {  // subleaves 1.. up to and including the first null one
    if (is_end(s0)) return;
    for (std::uint32_t i = 1; i < kMaxSubleaves; ++i) {
      const CpuidRegs r = native_cpuid(leaf, i);
      t.set(leaf, i, r);
      if (is_end(r)) break;
    }
  };
  auto read_bitmap = [&](std::uint64_t map, std::uint32_t first) {  // subleaf i when bit i set
    for (std::uint32_t i = first; i < 64 && i < kMaxSubleaves; ++i) {
      if ((map >> i) & 1u) t.set(leaf, i, native_cpuid(leaf, i));
    }
  };
  const auto cache_type_null = [](const CpuidRegs& r) { return bits(r.eax, 4, 0) == 0; };
  const auto level_type_null = [](const CpuidRegs& r) { return bits(r.ecx, 15, 8) == 0; };

  switch (leaf) {
    case 0x04:        // deterministic cache parameters: until cache type 0
    case 0x8000001D:  // AMD cache topology, same layout
      read_until(cache_type_null);
      break;
    case 0x0B:        // extended topology: until level type 0
    case 0x1F:        // V2 extended topology
    case 0x80000026:  // AMD extended CPU topology
      read_until(level_type_null);
      break;
    case 0x07:  // structured extended features: EAX = highest subleaf
    case 0x14:  // processor trace
    case 0x17:  // SoC vendor attributes
    case 0x18:  // deterministic address translation
    case 0x1D:  // tile information: EAX = highest palette
    case 0x20:  // HRESET
    case 0x24:  // AVX10
      read_range(s0.eax);
      break;
    case 0x0D: {  // XSAVE: 0 and 1, then state component i for each XCR0 | IA32_XSS bit i >= 2
      const CpuidRegs s1 = native_cpuid(leaf, 1);
      t.set(leaf, 1, s1);
      const std::uint64_t xcr0 = (std::uint64_t{s0.edx} << 32) | s0.eax;
      const std::uint64_t xss = (std::uint64_t{s1.edx} << 32) | s1.ecx;
      read_bitmap(xcr0 | xss, 2);
      break;
    }
    case 0x0F:  // RDT monitoring: EDX bit i = resource i has subleaf i
      read_bitmap(s0.edx, 1);
      break;
    case 0x10:  // RDT allocation: EBX bit i = resource i has subleaf i
      read_bitmap(s0.ebx, 1);
      break;
    case 0x12:  // SGX (when CPUID.(7,0):EBX[2]): 0, 1, then EPC sections until an invalid one
      if (const auto l7 = t.get(7, 0); l7 && bit(l7->ebx, 2)) {
        t.set(leaf, 1, native_cpuid(leaf, 1));
        for (std::uint32_t i = 2; i < kMaxSubleaves; ++i) {
          const CpuidRegs r = native_cpuid(leaf, i);
          t.set(leaf, i, r);
          if (bits(r.eax, 3, 0) == 0) break;
        }
      }
      break;
    case 0x23:  // architectural perfmon extended: EAX bit i = subleaf i valid
      read_bitmap(s0.eax, 1);
      break;
    default:  // 1AH (hybrid core type) and the rest have no subleaves
      break;
  }
}

}  // namespace
#endif

CpuInfo read_native_cpu() {
#if PMC_HAVE_CPUID
  CpuidTable t;
  const std::uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  // 0 also means "no CPUID instruction" on old i386 (__get_cpuid_max checks the ID flag); a
  // CPU whose leaf 0 says 0 has no leaf 1 to decode either.
  if (max_leaf == 0) throw Error(errc::not_supported, "native: CPUID is unavailable or reports no leaf 1");
  for (std::uint32_t leaf : kNativeLeaves)
    if (leaf <= max_leaf) read_leaf(t, leaf);

  const CpuidRegs ext0 = native_cpuid(kExtBase, 0);
  t.set(kExtBase, 0, ext0);
  if ((ext0.eax & 0xFFFF0000u) == kExtBase) {
    for (std::uint32_t leaf : kNativeExtLeaves)
      if (leaf <= ext0.eax && leaf <= kMaxExtLeaf) read_leaf(t, leaf);
  }
  // Under a hypervisor (CPUID.1:ECX[31]), its range 40000000H: the vendor leaf and, where the
  // vendor leaf reaches it, the timing leaf 40000010H (the TSC rate, tsc.cpp).
  if (const auto l1 = t.get(1); l1 && bit(l1->ecx, 31)) {
    const CpuidRegs h0 = native_cpuid(kHypervisorBase, 0);
    t.set(kHypervisorBase, 0, h0);
    if (h0.eax >= kHypervisorTiming && h0.eax <= kHypervisorBase + 0xFF)
      t.set(kHypervisorTiming, 0, native_cpuid(kHypervisorTiming, 0));
  }
  CpuInfo cpu = decode_cpuid(std::move(t), "native");
  cpu.from = CpuSource::native;
  return cpu;
#elif defined(__aarch64__)
  return detail::read_native_arm("/proc/cpuinfo", "/sys");
#else
  return detail::native_other();
#endif
}

// ---------------------------------------------------------------------------------------------
// AArch64

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

namespace {

std::string read_file(const std::filesystem::path& path, const char* what) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(errc::io, fmt::format("{}: cannot read {}: is a directory", name, what));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw Error(errc::io, fmt::format("{}: cannot read {}: {}", name, what,
                                      err != 0 ? std::generic_category().message(err) : "cannot open"));
  }
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw Error(errc::io, fmt::format("{}: cannot read {}: read error", name, what));
  return text;
}

}  // namespace

CpuInfo load_cpu_file(const std::filesystem::path& path) {
  if (path.extension() != ".toml") return load_cpuid_dump(path);
  return parse_cpu_description(read_file(path, "CPU description"), path.string());
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

std::optional<std::string> read_small_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::string s;
  std::getline(in, s);
  return s;
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
  if (auto s = read_small_file(sysfs_root / "devices/system/cpu/cpu0/regs/identification/midr_el1"))
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

std::string describe(const CpuInfo& cpu) {
  std::string out;
  if (cpu.isa == Isa::aarch64)
    out = fmt::format("{} part {:#05x} r{}p{}", cpu.vendor.empty() ? std::string("unknown") : cpu.vendor, cpu.arm.part,
                      cpu.arm.variant, cpu.arm.revision);
  else if (cpu.isa == Isa::other)
    out = fmt::format("{} CPU", cpu.vendor.empty() ? std::string("unknown") : cpu.vendor);
  else
    out = fmt::format("{} family {} model {} stepping {}", cpu.vendor.empty() ? std::string("unknown-vendor") : cpu.vendor,
                      cpu.family, cpu.model, cpu.stepping);
  if (!cpu.brand.empty()) out += fmt::format(" ({})", cpu.brand);
  return out;
}

namespace detail {

namespace {
std::atomic<bool> g_native_read{false};
}

const CpuInfo& native_cpu() {
  static const CpuInfo cpu = read_native_cpu();
  g_native_read.store(true, std::memory_order_release);
  return cpu;
}

bool native_cpu_read() { return g_native_read.load(std::memory_order_acquire); }

void read_native_leaf(CpuInfo& cpu, std::uint32_t leaf, std::uint32_t subleaf) {
#if PMC_HAVE_CPUID
  if (cpu.isa != Isa::x86 || !cpu.native() || cpu.raw.get(leaf, subleaf) || cpu.raw.get(leaf, 0)) return;
  const bool extended = leaf >= kExtBase;
  if (extended ? leaf > cpu.max_ext_leaf || leaf > kMaxExtLeaf : leaf > cpu.max_leaf || leaf > kMaxBasicLeaf) return;
  read_leaf(cpu.raw, leaf);
#else
  (void)cpu;
  (void)leaf;
  (void)subleaf;
#endif
}

}  // namespace detail

}  // namespace pmc
