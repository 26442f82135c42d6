// CpuInfo: what the CPU is, decoded once into a value type, so backends probe against it and never
// read the CPU themselves. On x86 it is CPUID (the native instruction or a CPUID dump file); on
// AArch64 the identification registers MIDR_EL1, ID_AA64DFR0_EL1 and PMCR_EL0 (a CPU description
// file, or natively what Linux shows of them in /proc/cpuinfo and sysfs). docs/user-guide.md,
// "CPU descriptions", has the description file format.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/cpu.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pmc {

struct CpuidRegs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  friend bool operator==(const CpuidRegs&, const CpuidRegs&) = default;
};

// Raw CPUID answers keyed by (leaf, subleaf). Leaves that do not depend on a subleaf are
// stored under subleaf 0.
class PMC_API CpuidTable {
 public:
  void set(std::uint32_t leaf, std::uint32_t subleaf, CpuidRegs regs);
  // The answer for (leaf, subleaf), or nullopt when the source did not have it.
  [[nodiscard]] std::optional<CpuidRegs> get(std::uint32_t leaf, std::uint32_t subleaf = 0) const;
  [[nodiscard]] bool empty() const noexcept { return leaves_.empty(); }
  [[nodiscard]] const std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs>& all() const noexcept {
    return leaves_;
  }

 private:
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves_;
};

// Leaf 0AH: architectural performance monitoring.
struct ArchPerfmon {
  unsigned version = 0;                 // EAX[7:0]
  unsigned gp_counters = 0;             // EAX[15:8]
  unsigned gp_width = 0;                // EAX[23:16]
  unsigned ebx_length = 0;              // EAX[31:24]: how many bits of EBX are valid
  std::uint32_t unavailable_events = 0; // EBX: bit set = event NOT available
  std::uint32_t fixed_bitmap = 0;       // ECX (version 5): fixed counters supported, bitmap
  unsigned fixed_counters = 0;          // EDX[4:0] (version 2 and later)
  unsigned fixed_width = 0;             // EDX[12:5]
  bool anythread_deprecated = false;    // EDX[15]
};

// AMD extended performance-monitoring features.
struct AmdPerfmon {
  bool perfctr_core = false;    // CPUID 80000001H ECX[23]: six core counters at C0010200H
  bool perfctr_nb = false;      // CPUID 80000001H ECX[24]: northbridge counters
  bool perfctr_llc = false;     // CPUID 80000001H ECX[28]: L2I / LLC counters
  bool perfmon_v2 = false;      // CPUID 80000022H EAX[0]
  unsigned v2_core_counters = 0;// CPUID 80000022H EBX[3:0]
};

// Which instruction set the CPU runs, and so which part of CpuInfo describes it.
enum class Isa : std::uint8_t {
  x86,      // CPUID: vendor, family/model/stepping, arch, amd, raw
  aarch64,  // the Arm identification registers: arm (vendor, family, model, stepping mapped below)
  other,    // neither: vendor and brand say what little is known
};

// An AArch64 CPU as its identification registers describe it (Arm ARM D17 / D13: MIDR_EL1,
// ID_AA64DFR0_EL1, PMCR_EL0). For probe tables written against vendor/family/model, CpuInfo maps
// MIDR_EL1 onto them: vendor = the implementer's name ("Arm", "Fujitsu", ...; "implementer 0xNN"
// for a code without one), family = MIDR_EL1.Architecture (0xF on every ARMv8 CPU), model =
// PartNum (0xD08 for a Cortex-A72), stepping = Revision. The variant (the x of rxpy) is only here.
struct ArmId {
  std::uint32_t midr = 0;     // MIDR_EL1
  unsigned implementer = 0;   // MIDR_EL1[31:24]: 0x41 Arm, 0x46 Fujitsu, ...
  unsigned variant = 0;       // MIDR_EL1[23:20]: the major revision, x in rxpy
  unsigned architecture = 0;  // MIDR_EL1[19:16]: 0xF, "defined by the ID registers"
  unsigned part = 0;          // MIDR_EL1[15:4]: the primary part number
  unsigned revision = 0;      // MIDR_EL1[3:0]: the minor revision, y in rxpy
  std::uint64_t dfr0 = 0;     // ID_AA64DFR0_EL1
  unsigned pmu_version = 0;   // ID_AA64DFR0_EL1.PMUVer [11:8]: 0 none, 1 PMUv3, 4 PMUv3p1, 5 PMUv3p4,
                              //   6 PMUv3p5, 7 PMUv3p7, 8 PMUv3p8, 9 PMUv3p9, 0xF IMPLEMENTATION DEFINED
  std::uint32_t pmcr = 0;     // PMCR_EL0 as reset: IMP [31:24], IDCODE [23:16], N [15:11]
  unsigned pmu_counters = 0;  // PMCR_EL0.N: event counters, 0..31 (the cycle counter is extra)
  // Running natively, Linux hides ID_AA64DFR0_EL1.PMUVer and PMCR_EL0 from user space: then
  // pmu_version is 1 when Linux registered an Arm PMUv3 driver (sysfs), 0 otherwise, and
  // pmu_counters is 0 (unknown). False for a description file, which gives them.
  bool pmu_inferred = false;
};

// Where a CpuInfo's answers came from.
enum class CpuSource {
  native,       // this machine (CPUID, or /proc and /sys off x86)
  cpuid_dump,   // a CPUID dump file (decode_cpuid of a table)
  description,  // a CPU description file (parse_cpu_description)
};

struct CpuInfo {
  Isa isa = Isa::x86;
  std::string vendor;           // x86: the 12-byte vendor string, e.g. "GenuineIntel"; AArch64: the
                                //   implementer's name ("Arm")
  std::string brand;            // 80000002H..80000004H, trimmed; empty when absent
  std::uint32_t max_leaf = 0;
  std::uint32_t max_ext_leaf = 0;
  std::uint32_t signature = 0;  // leaf 1 EAX
  unsigned family = 0;          // display family (base + extended when base is 0FH)
  unsigned model = 0;           // display model (extended model added for family 6 and 0FH)
  unsigned stepping = 0;
  ArchPerfmon arch;             // zeros when leaf 0AH is absent
  AmdPerfmon amd;
  bool hybrid = false;          // CPUID 07H EDX[15]
  unsigned core_type = 0;       // CPUID 1AH EAX[31:24]: 0x20 Atom (E-core), 0x40 Core (P-core); 0
                                //   without leaf 1AH. A native reading's is the core it ran on
  std::uint32_t native_model = 0;  // CPUID 1AH EAX[23:0]: the native model ID of that core type
  CpuidTable raw;               // the raw answers, for backends that need more: a dump's every
                                //   leaf; natively the leaves read_native_cpu() lists
  ArmId arm;                    // Isa::aarch64 only
  // Where the answers came from: this machine, or a file (whose path `source` names). Code asks
  // `from`, never the text.
  CpuSource from = CpuSource::cpuid_dump;
  std::string source;           // "native" or the dump (or description) file path

  [[nodiscard]] bool native() const { return from == CpuSource::native; }

  [[nodiscard]] bool is_intel() const { return vendor == "GenuineIntel"; }
  [[nodiscard]] bool is_amd() const { return vendor == "AuthenticAMD"; }
};

// Decodes a table of raw CPUID answers. Throws pmc::Error(parse) when leaf 0 or 1 is missing.
PMC_API CpuInfo decode_cpuid(CpuidTable table, std::string source);

// This CPU. On x86 it reads the leaves the library and the in-tree backends read at every
// Hal::open (each CPUID instruction traps to the hypervisor in a virtual machine, so not all of
// them): 0, 1, 7, 0AH, 15H, 16H, 1AH and 23H with their subleaves (on AMD and Hygon parts not
// Intel's 0AH, 15H, 16H, 1AH and 23H, which read as zero there), 80000000H-80000004H and
// 80000022H; leaves 1, 7 and 80000001H are the answers glibc's loader got at the process's start,
// where it keeps them. Hal::open's own reading leaves out the brand's 80000002H-80000004H until
// Hal::cpu() or a backend's code needs them, and adds the leaves a backend's probe table names;
// cache_hierarchy() adds the cache leaves, the TSC's rate the hypervisor's 40000000H and
// 40000010H. A backend's code that needs another leaf names it in its probe table
// (docs/writing-a-backend.md).
// On AArch64 Linux it reads /proc/cpuinfo (MIDR_EL1's fields)
// and sysfs (the Arm PMU Linux registered; see ArmId::pmu_inferred); elsewhere it gives
// Isa::other with the machine name (uname). It throws only where CPUID itself is missing (an
// i386 without it).
PMC_API CpuInfo read_native_cpu();

// A CPU description file, TOML (docs/user-guide.md, "CPU descriptions"): an AArch64 CPU by its
// identification registers,
//   isa = "aarch64"
//   name = "Cortex-A72"             # optional: the brand describe() shows
//   midr_el1 = 0x410FD083
//   id_aa64dfr0_el1 = 0x10305106
//   pmcr_el0 = 0x41023000
// Unknown keys, wrong types and values that do not fit a register are errors naming
// file:line:column.
PMC_API CpuInfo parse_cpu_description(std::string_view toml, const std::string& name);
// A CPU from a file: a CPU description (a name ending in .toml) or a CPUID dump (anything else).
// What Hal::open reads for a config's `cpu` other than "native".
PMC_API CpuInfo load_cpu_file(const std::filesystem::path& path);
// The AArch64 CpuInfo of these register values (MIDR_EL1 mapped onto vendor/family/model as
// ArmId says). `name` is the brand; empty: the part's name when known.
PMC_API CpuInfo decode_arm(std::uint32_t midr, std::uint64_t dfr0, std::uint32_t pmcr, std::string name,
                           std::string source);

// Reads a dump in the Linux `cpuid -r` format or the AIDA64/InstLatx64 format
// ("CPUID 0000000A: EAX-EBX-ECX-EDX"). A line that looks like a CPUID line but cannot be
// parsed is an error naming the file and line; other lines are ignored.
PMC_API CpuidTable parse_cpuid_dump(std::string_view text, const std::string& name);
PMC_API CpuInfo load_cpuid_dump(const std::filesystem::path& path);

// "GenuineIntel family 6 model 8 stepping 3 (Pentium III)" style one-line summary; for AArch64
// "Arm part 0xd08 r0p3 (Cortex-A72)".
PMC_API std::string describe(const CpuInfo& cpu);
// The CPU as a probe verdict names it, without the brand: "GenuineIntel family 6 model 8",
// "Arm part 0xd08 r0p3"; every backend's reasons start with it.
PMC_API std::string probe_subject(const CpuInfo& cpu);

}  // namespace pmc

#endif  // C++20
