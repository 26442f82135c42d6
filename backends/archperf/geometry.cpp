// The archperf backend: the PMU's geometry from CPUID alone (docs/hardware/archperf.md sections
// 1, 2 and 6; the quirks it applies are listed at the top of archperf.cpp).
#include "archperf.hpp"

#include <fmt/format.h>

#include <string>

namespace pmc::archperf {

namespace {

std::string core_type_name(std::uint32_t type) {
  switch (type) {
    case 0x20: return "an Atom (E-core)";
    case 0x40: return "a Core (P-core)";
    default: return fmt::format("core type 0x{:02X}", type);
  }
}


}  // namespace

Geometry geometry(const CpuInfo& cpu) {
  Geometry g;
  const ArchPerfmon& a = cpu.arch;
  g.version = a.version;
  const auto leaf1 = cpu.raw.get(1);
  g.pdcm = leaf1 && bit(leaf1->ecx, 15);
  const bool hypervisor = leaf1 && bit(leaf1->ecx, 31);

  if (cpu.vendor == "CentaurHauls" || cpu.vendor == "Shanghai") {
    g.refusal = fmt::format(
        "vendor {} (VIA / Zhaoxin): leaf 0AH reports version {}, but these parts encode the architectural "
        "events differently (Linux drives them with its zhaoxin PMU driver: cycles = 0x0082, not 0x003C) and "
        "Nano parts fault on RDPMC of fixed counters; archperf drives GenuineIntel only",
        cpu.vendor, a.version);
  } else if (!cpu.is_intel()) {
    g.refusal = fmt::format("vendor {} is not GenuineIntel", cpu.vendor.empty() ? "unknown" : cpu.vendor);
  } else if (cpu.max_leaf < 0x0A) {
    g.refusal = fmt::format("no CPUID leaf 0AH (maximum basic leaf 0x{:X}): no architectural perfmon", cpu.max_leaf);
  } else if (a.version == 0) {
    g.refusal = hypervisor ? "CPUID.0AH:EAX[7:0] (version) is 0: no architectural perfmon in this guest "
                             "(CPUID.1:ECX[31]: a hypervisor's guest, whose CPUID the hypervisor emulates; one that "
                             "gives its guests no virtual PMU reports version 0)"
                           : "CPUID.0AH:EAX[7:0] (version) is 0: no architectural perfmon";
  }

  unsigned version = a.version;
  if (version == 0) {
    // Forced onto a CPU without leaf 0AH (backend = "archperf"): the smallest architectural PMU,
    // Core Solo / Core Duo's (version 1, two 40-bit counters, the seven events). [U]
    version = 1;
    g.general = {0, 1};
    g.general_width = 40;
    g.ebx_length = 7;
    g.notes.push_back("no leaf 0AH: assuming version 1 with two 40-bit general counters");
    return g;
  }
  if (version > 5) g.notes.push_back(fmt::format("version {} is newer than 5: driven as version 5", version));

  for (unsigned i = 0; i < a.gp_counters && i < kMaxGeneral; ++i) g.general.push_back(i);
  if (a.gp_counters > kMaxGeneral)
    g.notes.push_back(fmt::format("{} general counters reported, {} used", a.gp_counters, kMaxGeneral));
  g.general_width = a.gp_width;
  g.ebx = a.unavailable_events;
  g.ebx_length = a.ebx_length;
  g.any = version < 3 ? AnyThread::reserved : a.anythread_deprecated ? AnyThread::deprecated : AnyThread::supported;

  if (version >= 2) {
    unsigned count = a.fixed_counters;
    g.fixed_width = a.fixed_width;
    if (version == 2 && count == 0 && !hypervisor) {
      g.notes.push_back("Core 2 quirk: version 2 with CPUID.0AH:EDX[4:0] = 0 still has fixed counters 0-2 "
                        "(SDM: early parts report wrong version-2 data; Linux assumes 3)");
      count = 3;
    } else if (version == 2 && count == 0) {
      g.notes.push_back("version 2 with no fixed counters under a hypervisor (CPUID.1:ECX[31]): taken as reported");
    }
    if (g.fixed_width == 0 && count > 0) {
      g.fixed_width = a.gp_width;
      g.notes.push_back(fmt::format("fixed counter width EDX[12:5] = 0: using the general width {}", a.gp_width));
    }
    for (unsigned i = 0; i < 32; ++i) {
      const bool present = i < count || (version >= 5 && bit(a.fixed_bitmap, i));
      if (!present) continue;
      if (i < kMaxFixed) g.fixed.push_back(i);
      else g.notes.push_back(fmt::format("fixed counter {} ignored (beyond FIXED_CTR{})", i, kMaxFixed - 1));
    }
  }

  // Hybrid parts: this core type's own counters, where CPUID 23H gives them.
  // CPUID.(7,1):EAX[8] = leaf 23H exists; 23H.0:EAX bit i = subleaf i exists (Linux
  // ARCH_PERFMON_NUM_COUNTER_LEAF, fixed in 2025 to bit 1).
  // Sub-leaf (7,1) exists only when CPUID.(7,0):EAX (leaf 7's highest sub-leaf) is >= 1.
  const bool has_71 = cpu.max_leaf >= 7 && cpu.raw.get(7, 0).value_or(CpuidRegs{}).eax >= 1;
  const CpuidRegs l71 = has_71 ? cpu.raw.get(7, 1).value_or(CpuidRegs{}) : CpuidRegs{};
  const CpuidRegs l23 = cpu.max_leaf >= 0x23 ? cpu.raw.get(0x23, 0).value_or(CpuidRegs{}) : CpuidRegs{};
  const CpuidRegs l23s1 = cpu.max_leaf >= 0x23 ? cpu.raw.get(0x23, 1).value_or(CpuidRegs{}) : CpuidRegs{};
  const bool ext = bit(l71.eax, 8) && bit(l23.eax, 1) && cpu.raw.get(0x23, 1).has_value();
  // 23H.0:EBX says which IA32_PERFEVTSELx extensions exist (Linux update_pmu_cap:
  // ARCH_PERFMON_EXT_UMASK2 = bit 0, ARCH_PERFMON_EXT_EQ = bit 1).
  g.ext_leaf = bit(l71.eax, 8) && cpu.max_leaf >= 0x23 && cpu.raw.get(0x23, 0).has_value();
  g.umask2 = g.ext_leaf && bit(l23.ebx, 0);
  g.eq = g.ext_leaf && bit(l23.ebx, 1);
  if (ext) {
    g.general.clear();
    for (unsigned i = 0; i < kMaxGeneral; ++i)
      if (bit(l23s1.eax, i)) g.general.push_back(i);
    g.fixed.clear();
    for (unsigned i = 0; i < 32; ++i)
      if (bit(l23s1.ebx, i)) {
        if (i < kMaxFixed) g.fixed.push_back(i);
        else g.notes.push_back(fmt::format("fixed counter {} ignored (beyond FIXED_CTR{})", i, kMaxFixed - 1));
      }
    if (!g.fixed.empty() && g.fixed_width == 0) g.fixed_width = a.gp_width;
    g.notes.push_back(fmt::format("counters from CPUID.23H.1 (general bitmap 0x{:X}, fixed bitmap 0x{:X})",
                                  l23s1.eax, l23s1.ebx));
  }
  if (cpu.hybrid) {
    const bool has_1a = cpu.max_leaf >= 0x1A && cpu.raw.get(0x1A, 0).has_value();
    const std::uint32_t type = has_1a ? cpu.raw.get(0x1A, 0).value_or(CpuidRegs{}).eax >> 24 : 0;
    const std::string which = has_1a ? fmt::format("this CPU is {} (CPUID.1AH:EAX[31:24] = 0x{:02X})",
                                                   core_type_name(type), type)
                                     : std::string("CPUID.1AH (core type) is absent");
    g.hybrid = fmt::format("hybrid part, {}: {}", type == 0x40 ? "P-core" : type == 0x20 ? "E-core" : "core type unknown",
                           ext ? "this core type's counters (CPUID.23H)" : "the counters every core type has (CPUID.0AH)");
    g.notes.push_back(fmt::format("hybrid part (CPUID.07H:EDX[15]): {}; other core types have their own counters{}",
                                  which,
                                  ext ? "" : ", and without CPUID.23H only leaf 0AH's common set is known here"));
  }

  if (g.refusal.empty() && g.general.empty() && g.fixed.empty())
    g.refusal = fmt::format("architectural perfmon version {} with no counters (EAX[15:8] = 0, no fixed counters)",
                            a.version);
  if (g.refusal.empty() && !g.general.empty() && (g.general_width == 0 || g.general_width > 64))
    g.refusal = fmt::format("general counters {} bits wide (EAX[23:16]): not a usable width", g.general_width);
  if (g.general_width == 0 || g.general_width > 64) g.general_width = 40;  // forced use only [U]
  if (g.fixed_width > 64) g.fixed_width = 64;
  return g;
}

std::string summary(const Geometry& g) {
  std::string s = fmt::format("{} general counter{} x {} bits", g.general.size(), g.general.size() == 1 ? "" : "s",
                              g.general_width);
  if (!g.fixed.empty()) {
    std::string idx;
    for (unsigned i : g.fixed) idx += fmt::format("{}{}", idx.empty() ? "" : ",", i);
    s += fmt::format(", {} fixed ({}) x {} bits", g.fixed.size(), idx, g.fixed_width);
  } else if (g.version >= 2) {
    s += ", no fixed counters";
  }
  return s;
}

Facts facts_of(const CpuInfo& cpu) {
  Facts f;
  f.cpu = describe(cpu);
  const Geometry g = geometry(cpu);
  f.version = g.version == 0 ? 1 : g.version;
  f.ebx = g.ebx;
  f.ebx_length = g.ebx_length;
  f.any = g.any;
  f.ext_leaf = g.ext_leaf;
  f.umask2 = g.umask2;
  f.eq = g.eq;
  return f;
}

}  // namespace pmc::archperf
