#define BOOST_TEST_MODULE cpuid
#include <boost/test/unit_test.hpp>

// CPUs from CPUID: each bundled dump (data/cpuid/) decodes to its CPU and says what it is, and
// whether it was captured, as data/cpuid/README.md (which lists them all) does; the synthesized
// dumps decode as their headers say; the native CPU's leaves agree with CPUID executed here and
// with /proc/cpuinfo. The decoding rules are in test_cpuid_decode.cpp, the dump formats and their
// errors in test_cpuid_dumps.cpp.
//
// Expected values below are worked out by hand from the bit layouts in the SDM / AMD APM as
// summarised in docs/hardware/ (archperf.md, amd.md, p6.md, p5.md), never by running the
// decoder.

#include <pmc/cpu.hpp>

#include "cpu_native.hpp"
#include "cpuid_test_support.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace fs = std::filesystem;
using pmc::CpuInfo;
using cpuid_test::reg;

namespace {

const fs::path kBundled = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(bundled)

struct Expect {
  const char* file;
  const char* vendor;
  unsigned family, model, stepping;
  unsigned arch_version, gp_counters, gp_width, fixed_counters, fixed_width;
  const char* brand;
  bool perfctr_core, perfmon_v2;
  unsigned v2_core_counters;
  bool captured;  // a real capture (data/cpuid/README.md says so); else written by hand
};

// From the reference sheets: p6.md §1 (P6 models: 1 PPro, 5 PII, 8 PIII, 13 Pentium M; no leaf
// 0AH), archperf.md §1/§6 (Core 2 v2 with EDX = 0; v5 with 4 fixed counters), amd.md §1 (K7 =
// family 6; Zen 4 = family 0x19 with PerfCtrExtCore and PerfMonV2 with 6 core counters), p5.md §1
// (family 5: Pentium, Pentium MMX, OverDrive, Quark; the AMD K6). The captured dumps: the
// signature, PerfCtrExtCore and PerfMonV2 facts their headers and data/cpuid/README.md state, and
// the brand string their leaves 80000002H-80000004H spell (read byte by byte from the files).
const Expect kBundledCpus[] = {
    {"pentium-pro.txt", "GenuineIntel", 6, 1, 7, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-ii.txt", "GenuineIntel", 6, 5, 2, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-iii.txt", "GenuineIntel", 6, 8, 3, 0, 0, 0, 0, 0, "", false, false, 0, false},
    {"pentium-m.txt", "GenuineIntel", 6, 13, 8, 0, 0, 0, 0, 0, "Intel(R) Pentium(R) M processor 1.80GHz", false,
     false, 0, false},
    {"core2.txt", "GenuineIntel", 6, 15, 6, 2, 2, 40, 0, 0, "Intel(R) Core(TM)2 CPU          6600  @ 2.40GHz",
     false, false, 0, false},
    {"core-duo.txt", "GenuineIntel", 6, 14, 8, 1, 2, 40, 0, 0, "Genuine Intel(R) CPU           T2500  @ 2.00GHz",
     false, false, 0, false},
    {"skylake.txt", "GenuineIntel", 6, 0x5E, 3, 4, 4, 48, 3, 48, "Intel(R) Core(TM) i7-6700K CPU @ 4.00GHz", false,
     false, 0, false},
    {"intel-icelake.txt", "GenuineIntel", 6, 0x7E, 5, 5, 8, 48, 4, 48, "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
     false, false, 0, false},
    {"amd-k7.txt", "AuthenticAMD", 6, 4, 2, 0, 0, 0, 0, 0, "AMD Athlon(tm) Processor", false, false, 0, false},
    {"amd-zen.txt", "AuthenticAMD", 0x19, 0x61, 2, 0, 0, 0, 0, 0, "AMD Ryzen 9 7950X 16-Core Processor", true,
     true, 6, false},
    // Family 5 (p5.md §1): max leaf 1 or 2, no brand string (Quark's brand leaves are zero).
    {"pentium.txt", "GenuineIntel", 5, 2, 5, 0, 0, 0, 0, 0, "", false, false, 0, true},             // 0x525 P54C
    {"pentium-mmx.txt", "GenuineIntel", 5, 4, 3, 0, 0, 0, 0, 0, "", false, false, 0, true},         // 0x543 P55C
    {"pentium-mmx-e74.txt", "GenuineIntel", 5, 4, 4, 0, 0, 0, 0, 0, "", false, false, 0, false},    // 0x544
    {"pentium-overdrive.txt", "GenuineIntel", 5, 3, 2, 0, 0, 0, 0, 0, "", false, false, 0, true},   // 0x1532 P24T
    {"quark-x1000.txt", "GenuineIntel", 5, 9, 0, 0, 0, 0, 0, 0, "", false, false, 0, true},         // 0x590
    {"amd-k6.txt", "AuthenticAMD", 5, 8, 0, 0, 0, 0, 0, 0, "AMD-K6(tm) 3D processor", false, false, 0, true},  // 0x580
    // AMD (amd.md §1): family = base 0xF + extended; PerfCtrExtCore = 80000001H:ECX[23];
    // PerfMonV2 = 80000022H:EAX[0] with the core counters in EBX[3:0].
    {"amd-zen4-kvm.txt", "AuthenticAMD", 0x19, 0x11, 1, 0, 0, 0, 0, 0, "AMD EPYC", false, false, 0, true},
    {"amd-k8-reve.txt", "AuthenticAMD", 0xF, 0x2F, 0, 0, 0, 0, 0, 0, "AMD Athlon(tm) 64 Processor 3200+", false,
     false, 0, true},
    {"amd-k8-revf.txt", "AuthenticAMD", 0xF, 0x43, 3, 0, 0, 0, 0, 0, "AMD Athlon(tm) 64 X2 Dual Core Processor 6400+",
     false, false, 0, true},
    {"amd-fam10h-revb.txt", "AuthenticAMD", 0x10, 2, 2, 0, 0, 0, 0, 0, "AMD Engineering Sample", false, false, 0,
     true},
    {"amd-fam10h-revc.txt", "AuthenticAMD", 0x10, 4, 2, 0, 0, 0, 0, 0, "AMD Phenom(tm) II X4 940 Processor", false,
     false, 0, true},
    {"amd-fam10h-revd.txt", "AuthenticAMD", 0x10, 8, 0, 0, 0, 0, 0, 0, "Six-Core AMD Opteron(tm) Processor 2431",
     false, false, 0, true},
    {"amd-fam10h-reve.txt", "AuthenticAMD", 0x10, 0xA, 0, 0, 0, 0, 0, 0, "AMD Phenom(tm) II X6 1055T Processor",
     false, false, 0, true},
    {"amd-fam12h.txt", "AuthenticAMD", 0x12, 1, 0, 0, 0, 0, 0, 0, "AMD A8-3850 APU with Radeon(tm) HD Graphics",
     false, false, 0, true},
    {"amd-fam14h.txt", "AuthenticAMD", 0x14, 1, 0, 0, 0, 0, 0, 0, "AMD E-350 Processor", false, false, 0, true},
    {"amd-fam15h.txt", "AuthenticAMD", 0x15, 1, 2, 0, 0, 0, 0, 0, "AMD Opteron(TM) Processor 6274", true, false, 0,
     true},
    {"amd-fam16h.txt", "AuthenticAMD", 0x16, 0, 1, 0, 0, 0, 0, 0, "AMD A4-5000 APU with Radeon(TM) HD Graphics",
     false, false, 0, true},
    {"amd-zen1.txt", "AuthenticAMD", 0x17, 1, 1, 0, 0, 0, 0, 0, "AMD Ryzen 7 1800X Eight-Core Processor", true,
     false, 0, true},
    {"amd-zen2.txt", "AuthenticAMD", 0x17, 0x31, 0, 0, 0, 0, 0, 0, "AMD EPYC 7742 64-Core Processor", true, false,
     0, true},
    {"amd-zen3.txt", "AuthenticAMD", 0x19, 1, 1, 0, 0, 0, 0, 0, "AMD EPYC 7713 64-Core Processor", true, false, 0,
     true},  // leaf 80000022H present but zero
    {"amd-zen4-genoa.txt", "AuthenticAMD", 0x19, 0x11, 1, 0, 0, 0, 0, 0, "AMD EPYC 9654 96-Core Processor", true,
     true, 6, true},
    {"amd-zen5.txt", "AuthenticAMD", 0x1A, 2, 1, 0, 0, 0, 0, 0, "AMD EPYC 9655 96-Core Processor", true, true, 6,
     true},
    {"hygon-dhyana.txt", "HygonGenuine", 0x18, 0, 2, 0, 0, 0, 0, 0, "Hygon C86 3185  8-core Processor", true, false,
     0, true},
};

// What data/cpuid/README.md says of a dump: captured when its entry says "captured" or it is
// listed under "Captured dumps".
bool readme_says_captured(const std::string& readme, const std::string& file) {
  const auto at = readme.find("`" + file + "`");
  if (at == std::string::npos) return false;
  const auto line_end = readme.find('\n', at);
  const std::string line = readme.substr(at, line_end == std::string::npos ? std::string::npos : line_end - at);
  const auto section = readme.find("Captured dumps");
  return line.find("captured:") != std::string::npos || (section != std::string::npos && at > section);
}

BOOST_AUTO_TEST_CASE(each_bundled_dump_decodes_to_its_cpu) {
  for (const auto& e : kBundledCpus) {
    BOOST_TEST_CONTEXT(e.file) {
      const CpuInfo c = pmc::load_cpuid_dump(kBundled / e.file);
      BOOST_TEST(c.vendor == e.vendor);
      BOOST_TEST(c.family == e.family);
      BOOST_TEST(c.model == e.model);
      BOOST_TEST(c.stepping == e.stepping);
      BOOST_TEST(c.arch.version == e.arch_version);
      BOOST_TEST(c.arch.gp_counters == e.gp_counters);
      BOOST_TEST(c.arch.gp_width == e.gp_width);
      BOOST_TEST(c.arch.fixed_counters == e.fixed_counters);
      BOOST_TEST(c.arch.fixed_width == e.fixed_width);
      BOOST_TEST(c.brand == e.brand);
      BOOST_TEST(c.amd.perfctr_core == e.perfctr_core);
      BOOST_TEST(c.amd.perfmon_v2 == e.perfmon_v2);
      BOOST_TEST(c.amd.v2_core_counters == e.v2_core_counters);
      BOOST_TEST(!c.hybrid);
      // Every file says what it is; one written by hand says it was not captured, and a real
      // capture (only those README.md says are) says where it comes from.
      const std::string text = read_text(kBundled / e.file);
      BOOST_TEST(text.rfind("# ", 0) == 0u);
      BOOST_TEST(e.captured == readme_says_captured(read_text(kBundled / "README.md"), e.file));
      if (e.captured) {
        BOOST_TEST((text.find("not captured") == std::string::npos));
        BOOST_TEST((text.find("InstLatx64") != std::string::npos || text.find("Captured with") != std::string::npos));
      } else {
        BOOST_TEST((text.find("not captured") != std::string::npos));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(bundled_specifics) {
  // Ice Lake v5: fixed bitmap 0xF, AnyThread deprecated, 8 events enumerated, all available.
  const CpuInfo icl = pmc::load_cpuid_dump(kBundled / "intel-icelake.txt");
  BOOST_TEST(icl.arch.fixed_bitmap == 0xFu);
  BOOST_TEST(icl.arch.anythread_deprecated);
  BOOST_TEST(icl.arch.ebx_length == 8u);
  BOOST_TEST(icl.arch.unavailable_events == 0u);
  // Core 2: 7 architectural events enumerated; PDCM (CPUID.1:ECX[15]) set.
  const CpuInfo c2 = pmc::load_cpuid_dump(kBundled / "core2.txt");
  BOOST_TEST(c2.arch.ebx_length == 7u);
  BOOST_TEST((reg(c2.raw, 1, 0, 'c') & 0x8000u) != 0u);
  // K7: 80000001H EAX says family 7 (0x742); decoded family stays 6.
  const CpuInfo k7 = pmc::load_cpuid_dump(kBundled / "amd-k7.txt");
  BOOST_TEST(((reg(k7.raw, 0x80000001, 0, 'a') >> 8) & 0xFu) == 7u);
  BOOST_TEST(k7.family == 6u);
  BOOST_TEST(!k7.amd.perfctr_nb);
  // Zen 4: NB and LLC counters too.
  const CpuInfo zen = pmc::load_cpuid_dump(kBundled / "amd-zen.txt");
  BOOST_TEST(zen.amd.perfctr_nb);
  BOOST_TEST(zen.amd.perfctr_llc);
  // Pentium Pro: stepping 7 < 9, the erratum-26 range (p6.md §1); no MMX (CPUID.1:EDX[23]).
  const CpuInfo ppro = pmc::load_cpuid_dump(kBundled / "pentium-pro.txt");
  BOOST_TEST(ppro.stepping < 9u);
  BOOST_TEST((reg(ppro.raw, 1, 0, 'd') & (1u << 23)) == 0u);
  BOOST_TEST((reg(pmc::load_cpuid_dump(kBundled / "pentium-ii.txt").raw, 1, 0, 'd') & (1u << 23)) != 0u);
  // Pentium III: no brand string, so describe() is the bare signature.
  BOOST_TEST(pmc::describe(pmc::load_cpuid_dump(kBundled / "pentium-iii.txt")) ==
             "GenuineIntel family 6 model 8 stepping 3");
}

BOOST_AUTO_TEST_CASE(readme_lists_every_bundled_dump_and_both_formats_are_used) {
  const std::string readme = read_text(kBundled / "README.md");
  std::set<std::string> on_disk;
  bool saw_r = false, saw_aida = false;
  for (const auto& entry : fs::directory_iterator(kBundled)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string name = entry.path().filename().string();
    on_disk.insert(name);
    BOOST_TEST((readme.find("`" + name + "`") != std::string::npos), name << " not in README.md");
    const std::string text = read_text(entry.path());
    saw_r = saw_r || text.find("\n   0x00000001 0x00: ") != std::string::npos;
    saw_aida = saw_aida || text.find("\nCPUID 00000001: ") != std::string::npos;
  }
  for (const auto& e : kBundledCpus) BOOST_TEST(on_disk.count(e.file) == 1u, e.file << " missing");
  // The dumps pmc catalog import synthesizes (one per Intel catalog) are checked below instead.
  std::size_t synthesized = 0;
  for (const auto& name : on_disk)
    if (read_text(kBundled / name).rfind("# Synthesized, not captured", 0) == 0) ++synthesized;
  BOOST_TEST(on_disk.size() - synthesized == std::size(kBundledCpus));
  BOOST_TEST(saw_r);
  BOOST_TEST(saw_aida);
}

// The synthesized dumps (data/cpuid/README.md, docs/hardware/intel-catalogs.md section 5) decode
// to what their headers say they are: the header's family, model, stepping, core type and leaf
// 0AH version and general counters, read from the words, against the library's decoding of the
// leaves below it.
BOOST_AUTO_TEST_CASE(synthesized_dumps_decode_as_their_headers_say) {
  std::size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(kBundled)) {
    const std::string text = read_text(entry.path());
    if (entry.path().extension() != ".txt" || text.rfind("# Synthesized, not captured", 0) != 0) continue;
    ++seen;
    BOOST_TEST_CONTEXT(entry.path().filename().string()) {
      std::string header;  // the comment lines as one paragraph
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line) && line.rfind("# ", 0) == 0;) header += line.substr(2) + " ";
      const auto number_after = [&](const std::string& words, int base) -> long {
        const std::size_t at = header.find(words);
        return at == std::string::npos ? -1 : std::stol(header.substr(at + words.size()), nullptr, base);
      };
      const CpuInfo c = pmc::load_cpuid_dump(entry.path());
      BOOST_TEST(c.vendor == "GenuineIntel");
      BOOST_TEST(static_cast<long>(c.family) == number_after("(family ", 10));
      BOOST_TEST(static_cast<long>(c.model) == number_after(", model 0x", 16));
      BOOST_TEST(static_cast<long>(c.stepping) == number_after(", stepping ", 10));
      BOOST_TEST(static_cast<long>(c.arch.version) == number_after("leaf 0AH version ", 10));
      BOOST_TEST(static_cast<long>(c.arch.gp_counters) == number_after(" version " + std::to_string(c.arch.version) + ", ", 10));
      BOOST_TEST(c.arch.gp_width == 48u);
      BOOST_TEST(c.hybrid == (header.find("core type 0x") != std::string::npos));
    }
  }
  BOOST_TEST(seen > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(native)

#if defined(__x86_64__) || defined(__i386__)

BOOST_AUTO_TEST_CASE(native_cpu_matches_its_own_leaves) {
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST(!c.vendor.empty());
  BOOST_TEST(c.family > 0u);
  BOOST_TEST(c.source == "native");

  // Independently of the library: CPUID leaf 0 and 1 executed here.
  unsigned a = 0, b = 0, cx = 0, d = 0;
  __cpuid(0, a, b, cx, d);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &cx, 4);
  BOOST_TEST(c.vendor == std::string(vendor));
  BOOST_TEST(c.max_leaf == a);
  __cpuid(1, a, b, cx, d);
  BOOST_TEST(c.signature == a);
  BOOST_TEST(c.stepping == (a & 0xFu));

  // The leaves the library reads at every Hal::open were read (subleaf 0), where the CPU has them;
  // no others: each CPUID instruction traps to the hypervisor in a virtual machine. Intel's
  // leaves 0AH, 15H, 16H, 1AH and 23H are not read on AMD or Hygon parts, whose APM does not
  // define them (docs/hardware/amd.md section 1): there they read as zero, checked here.
  const bool intel_leaves = c.vendor != "AuthenticAMD" && c.vendor != "HygonGenuine";
  std::set<std::uint32_t> eager{0x00, 0x01, 0x07};
  for (std::uint32_t leaf : {0x0Au, 0x15u, 0x16u, 0x1Au, 0x23u}) {
    if (intel_leaves) {
      eager.insert(leaf);
    } else if (leaf <= c.max_leaf) {
      __cpuid_count(leaf, 0, a, b, cx, d);
      BOOST_TEST((a | b | cx | d) == 0u, "leaf " << std::hex << leaf << " is not zero on this " << c.vendor << " part");
    }
  }
  for (std::uint32_t leaf = 0; leaf <= c.max_leaf && leaf <= 0xFF; ++leaf)
    BOOST_TEST(c.raw.get(leaf).has_value() == (eager.count(leaf) == 1), "leaf " << std::hex << leaf);
  for (std::uint32_t leaf : {0x80000001u, 0x80000002u, 0x80000003u, 0x80000004u, 0x80000022u})
    if (leaf <= c.max_ext_leaf) BOOST_TEST(c.raw.get(leaf).has_value(), "leaf " << std::hex << leaf << " not read");
  BOOST_TEST(!c.raw.get(0x80000008).has_value());
  // Under a hypervisor, its vendor leaf (the TSC rate's timing leaf comes from its range).
  // The hypervisor's range is not read eagerly (the TSC's rate asks for it); on request, under a
  // hypervisor (CPUID.1:ECX[31]), its vendor leaf and the timing leaf as far as the vendor leaf
  // reaches, agreeing with CPUID executed here; on bare metal nothing.
  BOOST_TEST(!c.raw.get(0x40000000).has_value());
  CpuInfo h = c;
  pmc::detail::read_native_leaf(h, 0x40000010, 0);
  if ((reg(c.raw, 1, 0, 'c') >> 31) & 1u) {
    __cpuid(0x40000000, a, b, cx, d);
    BOOST_TEST(reg(h.raw, 0x40000000, 0, 'a') == a);
    BOOST_TEST(reg(h.raw, 0x40000000, 0, 'b') == b);
    BOOST_TEST(h.raw.get(0x40000010).has_value() == (a >= 0x40000010u && a <= 0x400000FFu));
  } else {
    BOOST_TEST(!h.raw.get(0x40000000).has_value());
    BOOST_TEST(!h.raw.get(0x40000010).has_value());
  }
  // Leaf 0AH decoding agrees with the raw answer (this project's KVM guests say version 0).
  unsigned expected_version = 0;
  if (intel_leaves && c.max_leaf >= 0x0A) expected_version = reg(c.raw, 0x0A, 0, 'a') & 0xFFu;
  BOOST_TEST(c.arch.version == expected_version);
  if (intel_leaves && c.max_leaf >= 0x0A) {
    BOOST_TEST(c.arch.gp_counters == ((reg(c.raw, 0x0A, 0, 'a') >> 8) & 0xFFu));
    BOOST_TEST(c.arch.fixed_counters == (reg(c.raw, 0x0A, 0, 'd') & 0x1Fu));
  }
  // The answers agree with CPUID executed here, whether the library executed the instruction or
  // took the copy glibc's loader made at start-up (leaves 1, 7 and 80000001H): every register,
  // but leaf 1's EBX[31:24], the initial APIC ID of whichever CPU the reading ran on.
  __cpuid(1, a, b, cx, d);
  BOOST_TEST(reg(c.raw, 1, 0, 'a') == a);
  BOOST_TEST((reg(c.raw, 1, 0, 'b') & 0x00FFFFFFu) == (b & 0x00FFFFFFu));
  BOOST_TEST(reg(c.raw, 1, 0, 'c') == cx);
  BOOST_TEST(reg(c.raw, 1, 0, 'd') == d);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> compared;
  if (c.max_leaf >= 7) {
    compared.emplace_back(7u, 0u);
    if (reg(c.raw, 7, 0, 'a') >= 1) compared.emplace_back(7u, 1u);
  }
  if (c.max_ext_leaf >= 0x80000001) compared.emplace_back(0x80000001u, 0u);
  for (const auto& [leaf, sub] : compared) {
    __cpuid_count(leaf, sub, a, b, cx, d);
    BOOST_TEST(reg(c.raw, leaf, sub, 'a') == a, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'b') == b, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'c') == cx, "leaf " << std::hex << leaf << "." << sub);
    BOOST_TEST(reg(c.raw, leaf, sub, 'd') == d, "leaf " << std::hex << leaf << "." << sub);
  }
  // Leaf 7's subleaf count (EAX of subleaf 0) was honoured.
  if (c.max_leaf >= 7) {
    const std::uint32_t last = reg(c.raw, 7, 0, 'a');
    for (std::uint32_t s = 1; s <= last && s < 64; ++s) BOOST_TEST(c.raw.get(7, s).has_value());
  }
}

// A leaf the eager reading leaves out is read on request (detail::read_native_leaf: the cache
// leaves for emulation, a leaf a probe table names), its subleaf enumeration following the
// leaf's own rule (SDM / APM), and agrees with CPUID executed here.
BOOST_AUTO_TEST_CASE(native_leaves_on_request) {
  CpuInfo c = pmc::read_native_cpu();
  const auto advertised = [&](std::uint32_t leaf) {
    return leaf < 0x80000000u ? leaf <= c.max_leaf : leaf <= c.max_ext_leaf;
  };
  for (std::uint32_t leaf : {0x02u, 0x04u, 0x0Bu, 0x0Du, 0x1Fu, 0x80000005u, 0x80000006u, 0x80000008u, 0x8000001Du})
    pmc::detail::read_native_leaf(c, leaf, 0);
  for (std::uint32_t leaf : {0x02u, 0x04u, 0x0Bu, 0x0Du, 0x1Fu, 0x80000005u, 0x80000006u, 0x80000008u, 0x8000001Du})
    BOOST_TEST(c.raw.get(leaf).has_value() == advertised(leaf), "leaf " << std::hex << leaf);
  if (advertised(0x80000008)) {
    unsigned a = 0, b = 0, cx = 0, d = 0;
    __cpuid(0x80000008, a, b, cx, d);
    BOOST_TEST(reg(c.raw, 0x80000008, 0, 'a') == a);
  }
  // A leaf beyond the largest the CPU has is not asked for.
  CpuInfo beyond = pmc::read_native_cpu();
  pmc::detail::read_native_leaf(beyond, beyond.max_leaf + 1, 0);
  BOOST_TEST(!beyond.raw.get(beyond.max_leaf + 1).has_value());
  // Nor is anything read into a CPU that is not this machine's.
  CpuInfo dump = c;
  dump.source = "some-dump.txt";
  dump.from = pmc::CpuSource::cpuid_dump;
  dump.raw = pmc::CpuidTable{};
  pmc::detail::read_native_leaf(dump, 1, 0);
  BOOST_TEST(dump.raw.empty());

  const auto last_subleaf = [&](std::uint32_t leaf) {
    std::uint32_t last = 0;
    for (const auto& [key, regs] : c.raw.all()) {
      if (key.first == leaf) last = key.second;
    }
    return last;
  };
  for (const std::uint32_t leaf : {0x04u, 0x8000001Du}) {  // until cache type (EAX[4:0]) 0
    if (!advertised(leaf)) continue;
    const std::uint32_t last = last_subleaf(leaf);
    BOOST_TEST((reg(c.raw, leaf, last, 'a') & 0x1Fu) == 0u, "leaf " << std::hex << leaf << " ends early");
    for (std::uint32_t s = 0; s < last; ++s) BOOST_TEST((reg(c.raw, leaf, s, 'a') & 0x1Fu) != 0u);
  }
  for (const std::uint32_t leaf : {0x0Bu, 0x1Fu}) {  // until level type (ECX[15:8]) 0
    if (!advertised(leaf)) continue;
    const std::uint32_t last = last_subleaf(leaf);
    BOOST_TEST(((reg(c.raw, leaf, last, 'c') >> 8) & 0xFFu) == 0u, "leaf " << std::hex << leaf << " ends early");
  }
  if (advertised(0x0D)) {  // a subleaf per XCR0 | IA32_XSS component >= 2
    const std::uint64_t xcr0 = (std::uint64_t{reg(c.raw, 0x0D, 0, 'd')} << 32) | reg(c.raw, 0x0D, 0, 'a');
    const std::uint64_t xss = (std::uint64_t{reg(c.raw, 0x0D, 1, 'd')} << 32) | reg(c.raw, 0x0D, 1, 'c');
    for (std::uint32_t i = 2; i < 64; ++i) {
      const bool listed = (((xcr0 | xss) >> i) & 1u) == 1u;
      BOOST_TEST(c.raw.get(0x0D, i).has_value() == listed, "leaf 0DH subleaf " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(native_cpu_agrees_with_proc_cpuinfo) {
  // Linux computes vendor/family/model/stepping from the same leaves with the same rules.
  std::ifstream in("/proc/cpuinfo");
  if (!in) {
    BOOST_TEST_MESSAGE("no /proc/cpuinfo: skipped");
    return;
  }
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = colon + 1 < line.size() ? line.substr(colon + 1) : std::string();
    if (!value.empty() && value.front() == ' ') value.erase(0, 1);
    fields.emplace(key, value);
  }
  if (!fields.count("vendor_id") || !fields.count("cpu family") || !fields.count("model")) {
    BOOST_TEST_MESSAGE("/proc/cpuinfo has no x86 identification fields: skipped");
    return;
  }
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST(c.vendor == fields["vendor_id"]);
  BOOST_TEST(std::to_string(c.family) == fields["cpu family"]);
  BOOST_TEST(std::to_string(c.model) == fields["model"]);
  if (fields.count("stepping")) BOOST_TEST(std::to_string(c.stepping) == fields["stepping"]);
}

#else

// Off x86 there is no CPUID: the native CPU is read from what the OS shows (AArch64: MIDR_EL1
// through /proc/cpuinfo and sysfs; elsewhere the machine name), and reading it never throws
// (tests/hal/cpu/test_cpu_description.cpp feeds those readers fixtures).
BOOST_AUTO_TEST_CASE(native_cpu_off_x86_is_not_an_x86_cpu) {
  const CpuInfo c = pmc::read_native_cpu();
  BOOST_TEST((c.isa != pmc::Isa::x86));
  BOOST_TEST(c.source == "native");
}

#endif

BOOST_AUTO_TEST_SUITE_END()
