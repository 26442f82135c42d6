// The amd backend's probe and PMU geometry: the verdict on every bundled AMD and Hygon CPUID
// dump, the counter layout CPUID selects (legacy, PerfCtrExtCore, PerfMonV2), the registers the
// driver may touch (the legacy aliases, the global registers), and the reserved bits per family.
// Every expected value is worked out by hand from docs/hardware/amd.md (section numbers in
// brackets) and the dumps' CPUID words (quoted in the comments), never taken from a run.
#define BOOST_TEST_MODULE amd_probe
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using u64 = std::uint64_t;
namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

fs::path dump(const std::string& file) { return fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / file; }

pmc::Config config_for(const std::string& file) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = dump(file).string();
  cfg.backend = "auto";
  cfg.access = "sim";
  return cfg;
}

const pmc::Match* amd_verdict(const pmc::Hal& hal) {
  for (const auto& c : hal.candidates())
    if (c.backend == "amd") return &c.match;
  return nullptr;
}

// The registers [2.1, 2.2, 2.3].
constexpr std::uint32_t PerfEvtSel0 = 0xC0010000, PerfCtr0 = 0xC0010004, PERF_CTL0 = 0xC0010200,
                        PERF_CTR0 = 0xC0010201, GlobalStatus = 0xC0000300, GlobalCtl = 0xC0000301,
                        GlobalStatusClr = 0xC0000302, GlobalStatusSet = 0xC0000303;

std::vector<std::uint32_t> legacy_registers() {
  std::vector<std::uint32_t> r;
  for (std::uint32_t a = PerfEvtSel0; a <= PerfCtr0 + 3; ++a) r.push_back(a);  // 0xC0010000-0xC0010007
  return r;
}

// Reserved PERF_CTL bits [3.2]: 21, 36-39, 42-63 on every family from 10h; K7 and K8 add 32-35
// and 40-41 (so 21 and 32-63), family 11h adds 40-41 (so 21 and 36-63).
constexpr u64 kCommonReserved = (1ull << 21) | (0xFull << 36) | (~0ull << 42);  // 0xFFFF_FCF0_0020_0000
constexpr u64 kK7K8Reserved = (1ull << 21) | (~0ull << 32);                      // 0xFFFF_FFFF_0020_0000
constexpr u64 kFam11hReserved = (1ull << 21) | (~0ull << 36);                    // 0xFFFF_FFF0_0020_0000

struct Expect {
  const char* file;
  const char* tag;
  unsigned counters;
  bool ext_core;  // PerfCtrExtCore layout
  bool v2;        // PerfMonV2 global registers
  u64 reserved;
};

// From each dump's CPUID.1:EAX (family/model [1.1]), 80000001H:ECX[23] and 80000022H:EAX[0],
// EBX[3:0] [1.5], by the table of [1.3].
const Expect kDumps[] = {
    // 0x642: family 6 model 4 -> k7; 80000001H:ECX = 0: legacy.
    {"amd-k7.txt", "k7", 4, false, false, kK7K8Reserved},
    // 0x20FF0 / 0x40F33: family 0xF models 0x2F and 0x43 -> revisions E and F.
    {"amd-k8-reve.txt", "k8_reve", 4, false, false, kK7K8Reserved},
    {"amd-k8-revf.txt", "k8_revf", 4, false, false, kK7K8Reserved},
    // family 0x10 models 2, 4, 8, 0xA -> B, C, D, D (0xA: decision [1.4]).
    {"amd-fam10h-revb.txt", "fam10h_revb", 4, false, false, kCommonReserved},
    {"amd-fam10h-revc.txt", "fam10h_revc", 4, false, false, kCommonReserved},
    {"amd-fam10h-revd.txt", "fam10h_revd", 4, false, false, kCommonReserved},
    {"amd-fam10h-reve.txt", "fam10h_revd", 4, false, false, kCommonReserved},
    {"amd-fam12h.txt", "fam12h", 4, false, false, kCommonReserved},
    {"amd-fam14h.txt", "fam14h", 4, false, false, kCommonReserved},
    // family 0x15: ECX[23] set -> six counters at 0xC0010200.
    {"amd-fam15h.txt", "fam15h", 6, true, false, kCommonReserved},
    // family 0x16 Kabini: 80000001H:ECX = 0x154037FF, bit 23 clear -> legacy [1.3].
    {"amd-fam16h.txt", "fam16h", 4, false, false, kCommonReserved},
    // family 0x17 model 1 -> Zen 1; model 0x31 -> Zen 2; ECX[23] set, no leaf 0x80000022 bit.
    {"amd-zen1.txt", "zen1", 6, true, false, kCommonReserved},
    {"amd-zen2.txt", "zen2", 6, true, false, kCommonReserved},
    // family 0x19 model 1 -> Zen 3: 80000022H all zero.
    {"amd-zen3.txt", "zen3", 6, true, false, kCommonReserved},
    // family 0x19 model 0x11 -> Zen 4; 80000022H EAX = 7 (bit 0), EBX = 0x00304106 (EBX[3:0] = 6).
    {"amd-zen4-genoa.txt", "zen4", 6, true, true, kCommonReserved},
    // family 0x19 model 0x61 -> Zen 4 (models 0x60-0xAF); PerfMonV2, EBX[3:0] = 6.
    {"amd-zen.txt", "zen4", 6, true, true, kCommonReserved},
    // The same Genoa in a KVM guest: 80000001H:ECX = 0x004003F3 (bit 23 clear), largest extended
    // leaf 0x80000021 (no PerfMonV2): legacy four counters.
    {"amd-zen4-kvm.txt", "zen4", 4, false, false, kCommonReserved},
    // family 0x1A model 2 -> Zen 5; PerfMonV2 with EBX[3:0] = 6.
    {"amd-zen5.txt", "zen5", 6, true, true, kCommonReserved},
    // HygonGenuine family 0x18 -> zen1 [1.2]; 80000001H:ECX = 0x35C233FF, bit 23 set.
    {"hygon-dhyana.txt", "zen1", 6, true, false, kCommonReserved},
};

// A CPU from raw CPUID words: vendor, leaf 1 EAX, 80000001H:ECX, and 80000022H EAX/EBX (when
// max_ext reaches it).
pmc::CpuInfo synthetic(const std::string& vendor, std::uint32_t signature, std::uint32_t ext1_ecx = 0,
                       std::uint32_t max_ext = 0x80000008, std::uint32_t ext22_eax = 0, std::uint32_t ext22_ebx = 0,
                       std::uint32_t leaf1_ecx = 0) {
  auto word = [&](std::size_t at) {
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < 4; ++i) w |= static_cast<std::uint32_t>(static_cast<unsigned char>(vendor.at(at + i))) << (8 * i);
    return w;
  };
  pmc::CpuidTable t;
  t.set(0, 0, {0xD, word(0), word(8), word(4)});  // EBX, EDX, ECX hold the vendor string
  t.set(1, 0, {signature, 0, leaf1_ecx, 0});
  t.set(0x80000000, 0, {max_ext, 0, 0, 0});
  t.set(0x80000001, 0, {0, 0, ext1_ecx, 0});
  if (max_ext >= 0x80000022) t.set(0x80000022, 0, {ext22_eax, ext22_ebx, 0, 0});
  return pmc::decode_cpuid(t, "synthetic");
}

constexpr std::uint32_t kExtCore = 1u << 23;  // 80000001H:ECX[23] PerfCtrExtCore

}  // namespace

BOOST_AUTO_TEST_CASE(every_bundled_amd_dump_gets_its_tag_and_geometry) {
  for (const Expect& x : kDumps) {
    BOOST_TEST_CONTEXT(x.file) {
      pmc::Hal hal = pmc::Hal::open(config_for(x.file));
      BOOST_REQUIRE(hal.backend());
      BOOST_TEST(hal.backend()->name == "amd");
      const pmc::Match* m = amd_verdict(hal);
      BOOST_REQUIRE(m);
      BOOST_TEST(m->matched());
      BOOST_TEST(m->score == 10);  // amd.toml [pmu] score
      BOOST_TEST(m->cpu_tag == x.tag);
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST(pmu.cpu_tag == x.tag);
      BOOST_TEST(pmu.device_model == "amd");
      BOOST_TEST(pmu.general_count() == x.counters);
      BOOST_TEST(pmu.counters.size() == x.counters);  // exactly one group, no fixed counters
      for (unsigned i = 0; i < pmu.counters.size(); ++i) {
        const pmc::CounterInfo& c = pmu.counters[i];
        BOOST_TEST_CONTEXT("counter " << i) {
          BOOST_TEST((c.kind == pmc::CounterKind::general));
          BOOST_TEST(c.index == i);
          BOOST_TEST(c.width == 48u);  // [4]
          // Legacy: PerfEvtSel0 + i, PerfCtr0 + i; PerfCtrExtCore: 0xC0010200 + 2i, + 1 [2.2].
          BOOST_TEST(c.control_msr == (x.ext_core ? PERF_CTL0 + 2 * i : PerfEvtSel0 + i));
          BOOST_TEST(c.counter_msr == (x.ext_core ? PERF_CTR0 + 2 * i : PerfCtr0 + i));
          BOOST_TEST(c.rdpmc.value_or(99) == i);  // RDPMC by counter index [2.1, 4]
        }
      }
      // The allowlist: the group's MSRs, the legacy aliases with PerfCtrExtCore, and the
      // PerfMonV2 registers exactly when CPUID reports PerfMonV2.
      std::vector<std::uint32_t> expected = legacy_registers();
      if (x.ext_core)
        for (std::uint32_t a = PERF_CTL0; a < PERF_CTL0 + 2 * x.counters; ++a) expected.push_back(a);
      if (x.v2)
        for (std::uint32_t a : {GlobalStatus, GlobalCtl, GlobalStatusClr, GlobalStatusSet}) expected.push_back(a);
      std::sort(expected.begin(), expected.end());
      BOOST_TEST(pmu.registers == expected, boost::test_tools::per_element());
      BOOST_TEST(pmu.reserved == x.reserved, std::hex << pmu.reserved << " != " << x.reserved);
      // The reason names the layout.
      BOOST_TEST(contains(m->reason, x.ext_core ? "PerfCtrExtCore layout" : "legacy layout"), m->reason);
      BOOST_TEST(contains(m->reason, std::to_string(x.counters) + " 48-bit counters"), m->reason);
      BOOST_TEST(contains(m->reason, "PerfMonV2 (CPUID 0x80000022:EAX[0])") == x.v2, m->reason);
    }
  }
}

BOOST_AUTO_TEST_CASE(this_machine_kind_a_zen4_guest_without_pmu_extensions) {
  // data/cpuid/amd-zen4-kvm.txt: Zen 4 by family/model, but PerfCtrExtCore clear, no leaf
  // 0x80000022, CPUID.1:ECX[31] (hypervisor) set. It still matches, with the legacy layout, and
  // the reason says why [1.5, 2.2].
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-kvm.txt"));
  const pmc::Match* m = amd_verdict(hal);
  BOOST_REQUIRE(m);
  BOOST_TEST(m->matched());
  BOOST_TEST(contains(m->reason, "Zen 4"), m->reason);
  BOOST_TEST(contains(m->reason, "CPUID hides the PMU extensions"), m->reason);
  BOOST_TEST(contains(m->reason, "PerfCtrExtCore (0x80000001:ECX[23]) is clear"), m->reason);
  BOOST_TEST(contains(m->reason, "hypervisor"), m->reason);
  BOOST_TEST(contains(m->reason, "4 48-bit counters, legacy layout"), m->reason);
  BOOST_TEST(hal.pmu().registers == legacy_registers(), boost::test_tools::per_element());
  // Its bare-metal twin has neither note.
  pmc::Hal genoa = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  BOOST_TEST(!contains(amd_verdict(genoa)->reason, "hides"), amd_verdict(genoa)->reason);
}

BOOST_AUTO_TEST_CASE(k5_and_k6_are_refused_with_the_reason) {
  // amd-k6.txt: family 5 [1.3]: no PerfEvtSel/PerfCtr MSRs.
  pmc::Hal hal = pmc::Hal::open(config_for("amd-k6.txt"));
  const pmc::Match* m = amd_verdict(hal);
  BOOST_REQUIRE(m);
  BOOST_TEST(!m->matched());
  BOOST_TEST(contains(m->reason, "K5 and K6"), m->reason);
  BOOST_TEST(contains(m->reason, "start with the K7"), m->reason);
  BOOST_TEST(!hal.backend());
  // A synthetic K5 (family 5 model 0) likewise.
  pmc_test::LoadedForTest amd("amd");
  const pmc::Match k5 = amd.probe(synthetic("AuthenticAMD", 0x500));
  BOOST_TEST(!k5.matched());
  BOOST_TEST(contains(k5.reason, "K5 and K6"), k5.reason);
}

BOOST_AUTO_TEST_CASE(other_verdicts) {
  pmc_test::LoadedForTest amd("amd");
  // Family 0x17 model 0xF0 (signature 0x8F0F00: base 0xF + ext 0x8, model 0x0 | 0xF << 4): no
  // Linux model range -> Zen 2 assumed, said so [1.3].
  pmc::Match m = amd.probe(synthetic("AuthenticAMD", 0x8F0F00, kExtCore));
  BOOST_TEST(m.matched());
  BOOST_TEST(m.cpu_tag == "zen2");
  BOOST_TEST(contains(m.reason, "Zen 2 events assumed"), m.reason);
  // Families with no AMD parts (0x13: 0x400F00) and after 0x1A (0x1B: 0xC00F00): not in the table.
  for (std::uint32_t sig : {0x400F00u, 0xC00F00u}) {
    m = amd.probe(synthetic("AuthenticAMD", sig));
    BOOST_TEST(!m.matched());
    BOOST_TEST(contains(m.reason, "not in the amd probe table"), m.reason);
  }
  // Other vendors.
  m = amd.probe(synthetic("GenuineIntel", 0x50654));
  BOOST_TEST(!m.matched());
  BOOST_TEST(contains(m.reason, "not in the amd probe table"), m.reason);
  // K7 model 1 (0x612): no local APIC, noted [4].
  m = amd.probe(synthetic("AuthenticAMD", 0x612));
  BOOST_TEST(m.cpu_tag == "k7");
  BOOST_TEST(contains(m.reason, "no local APIC"), m.reason);
}

BOOST_AUTO_TEST_CASE(perfmon_v2_counter_count_comes_from_ebx) {
  pmc_test::LoadedForTest amd("amd");
  // Zen 4 (0xA10F11) with PerfCtrExtCore and PerfMonV2, EBX[3:0] = 4: four counters, at the
  // PerfCtrExtCore addresses, and the global registers [2.2, 2.3].
  pmc::CpuInfo cpu = synthetic("AuthenticAMD", 0xA10F11, kExtCore, 0x80000022, 0x1, 0x4);
  pmc::PmuInfo pmu = amd.pmu(cpu);
  BOOST_TEST(pmu.general_count() == 4u);
  BOOST_TEST(pmu.counters.at(3).control_msr == 0xC0010206u);
  BOOST_TEST(pmu.counters.at(3).counter_msr == 0xC0010207u);
  BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), GlobalCtl) != pmu.registers.end()));
  // EBX[3:0] = 0: six, the PerfCtrExtCore default [2.2], with a note.
  cpu = synthetic("AuthenticAMD", 0xA10F11, kExtCore, 0x80000022, 0x1, 0x0);
  BOOST_TEST(amd.pmu(cpu).general_count() == 6u);
  BOOST_TEST(contains(amd.probe(cpu).reason, "EBX[3:0] (NumPerfCtrCore) is 0"), amd.probe(cpu).reason);
  // PerfMonV2 without PerfCtrExtCore: ignored (Linux amd_core_pmu_init), legacy four, no global registers.
  cpu = synthetic("AuthenticAMD", 0xA10F11, 0, 0x80000022, 0x1, 0x6);
  pmu = amd.pmu(cpu);
  BOOST_TEST(pmu.general_count() == 4u);
  BOOST_TEST(pmu.registers == legacy_registers(), boost::test_tools::per_element());
  // A Zen 4 with PerfCtrExtCore but no PerfMonV2 (a guest): six counters, a note, no global registers.
  cpu = synthetic("AuthenticAMD", 0xA10F11, kExtCore, 0x80000021, 0, 0, 1u << 31);
  pmu = amd.pmu(cpu);
  BOOST_TEST(pmu.general_count() == 6u);
  BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), GlobalCtl) == pmu.registers.end()));
  BOOST_TEST(contains(amd.probe(cpu).reason, "CPUID does not report PerfMonV2"), amd.probe(cpu).reason);
}

BOOST_AUTO_TEST_CASE(the_legacy_registers_alias_the_first_four_with_perfctrextcore) {
  // [2.2]: with PerfCtrExtCore the legacy MSRs mirror PERF_CTL/CTR 0-3, so the allowlist holds
  // both; without it they are the counters themselves and 0xC0010200 up is not in it.
  pmc::Hal zen3 = pmc::Hal::open(config_for("amd-zen3.txt"));
  const auto& r = zen3.pmu().registers;
  for (std::uint32_t a = PerfEvtSel0; a <= PerfCtr0 + 3; ++a)
    BOOST_TEST((std::find(r.begin(), r.end(), a) != r.end()), std::hex << a);
  for (std::uint32_t a = PERF_CTL0; a <= 0xC001020B; ++a) BOOST_TEST((std::find(r.begin(), r.end(), a) != r.end()), std::hex << a);
  BOOST_TEST(r.size() == 20u);  // 8 legacy + 12 extended
  pmc::Hal k8 = pmc::Hal::open(config_for("amd-k8-revf.txt"));
  BOOST_TEST(k8.pmu().registers == legacy_registers(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reserved_bits_per_family) {
  pmc_test::LoadedForTest amd("amd");
  // Family 11h (0x200F31: base 0xF + ext 2, model 3) has no bundled dump: by hand [3.2].
  const pmc::CpuInfo griffin = synthetic("AuthenticAMD", 0x200F31);
  BOOST_TEST(amd.probe(griffin).cpu_tag == "fam11h");
  BOOST_TEST(amd.pmu(griffin).reserved == kFam11hReserved);
  // The encoder applies the set: a 12-bit code (RETIRED_X87_OPS 0x1C0) is refused on a K7
  // (bits 35:32 reserved), and the same string encodes on family 10h revision C to 0x1_0003_07C0
  // [7 item 9]. The test event file gives the K7 such an event.
  const fs::path extra = fs::temp_directory_path() / "pmchal-test-amd-probe-k7.toml";
  {
    std::ofstream out(extra);
    out << "backend = \"amd\"\nmodifiers = [\"u\", \"k\", \"e\", \"i\", \"c\"]\n"
           "[[event]]\nname = \"TEST_12BIT\"\ncode = 0x1C0\ncpus = [\"k7\"]\ndesc = \"a 12-bit code\"\n";
  }
  pmc::Config cfg = config_for("amd-k7.txt");
  cfg.events_path = {extra};
  pmc::Hal k7 = pmc::Hal::open(cfg);
  try {
    (void)k7.encode("TEST_12BIT");
    BOOST_ERROR("a 12-bit code encoded on the K7");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == pmc::errc::invalid_argument), e.what());
    BOOST_TEST(contains(e.what(), "reserves"), e.what());
  }
  fs::remove(extra);
  pmc::Hal revc = pmc::Hal::open(config_for("amd-fam10h-revc.txt"));
  BOOST_TEST(revc.encode("RETIRED_X87_OPS").config == 0x1'0003'07C0ull);
  // Host/guest bits: refused on the K7 (no h/g modifiers in its file), encoded from family 10h.
  BOOST_CHECK_THROW((void)k7.encode("RETIRED_INSTRUCTIONS:h"), pmc::Error);
  BOOST_TEST(revc.encode("RETIRED_INSTRUCTIONS:h").config == 0x200'0003'00C0ull);  // HostOnly 41 | USR | OS | 0xC0
}
