// CpuInfo: CPUID decoded once into a value type. Built from the native instruction or from a
// CPUID dump file; backends probe against it and never execute CPUID themselves.
#pragma once

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

struct CpuInfo {
  std::string vendor;           // the full 12-byte vendor string, e.g. "GenuineIntel"
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
  CpuidTable raw;               // everything the source had, for backends that need more
  std::string source;           // "native" or the dump file path

  [[nodiscard]] bool is_intel() const { return vendor == "GenuineIntel"; }
  [[nodiscard]] bool is_amd() const { return vendor == "AuthenticAMD"; }
};

// Decodes a table of raw CPUID answers. Throws pmc::Error(parse) when leaf 0 or 1 is missing.
PMC_API CpuInfo decode_cpuid(CpuidTable table, std::string source);

// Executes CPUID on this CPU (x86 only; elsewhere throws not_supported).
PMC_API CpuInfo read_native_cpu();

// Reads a dump in the Linux `cpuid -r` format or the AIDA64/InstLatx64 format
// ("CPUID 0000000A: EAX-EBX-ECX-EDX"). A line that looks like a CPUID line but cannot be
// parsed is an error naming the file and line; other lines are ignored.
PMC_API CpuidTable parse_cpuid_dump(std::string_view text, const std::string& name);
PMC_API CpuInfo load_cpuid_dump(const std::filesystem::path& path);

// "GenuineIntel family 6 model 8 stepping 3 (Pentium III)" style one-line summary.
PMC_API std::string describe(const CpuInfo& cpu);

}  // namespace pmc
