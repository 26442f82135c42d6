// The hand-written per-CPU catalogs of archperf for Core 2 and Core Duo
// (backends/archperf/events/cpu/core2.toml, coreduo.toml; facts: docs/hardware/core2-coreduo.md):
// each loads beside archperf.toml with no validate() defect, keeps the SDM's counter limits, and
// encodes as the SDM's tables say. Every expected value below is worked out by hand: event select
// | unit mask << 8 | USR (bit 16) | OS (bit 17) | EN (bit 22, archperf's encodings carry it), plus
// the edge (18), invert (23) and counter-mask (31:24) fields where named.
#define BOOST_TEST_MODULE core2_catalog
#include <boost/test/unit_test.hpp>

#include "support/backend.hpp"
#include "support/child_process.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr std::uint64_t kUsrOsEn = 0x430000;  // USR | OS | EN: the default privilege, enabled

std::string cpu_file(const std::string& name) {
  return std::string(PMC_SOURCE_DIR) + "/backends/archperf/events/cpu/" + name;
}

// archperf with archperf.toml and one cpu/ file loaded after it, on a CPU from a CPUID dump.
struct Catalog {
  pmc_test::LoadedForTest archperf{"archperf"};
  pmc::CpuInfo cpu;
  pmc::PmuInfo pmu;
  Catalog(const std::string& file, const std::string& dump) {
    archperf.data.load(cpu_file(file), "archperf");
    cpu = pmc::load_cpuid_dump(dump);
    pmu = archperf.pmu(cpu);
  }
  [[nodiscard]] pmc::Encoding encode(const std::string& event) const {
    return archperf.encode(event, archperf.context(cpu, pmu));
  }
};

const Catalog& core2() {  // Core 2 Duo E6600 (Conroe, model 0FH), version 2 with the EDX = 0 quirk
  static const Catalog c("core2.toml", std::string(PMC_SOURCE_DIR) + "/data/cpuid/core2.txt");
  return c;
}
const Catalog& penryn() {  // Core 2 Duo E8400 (Wolfdale, model 17H), three fixed counters reported
  static const Catalog c("core2.toml", std::string(PMC_TEST_DATA) + "/cpuid/archperf-v2-penryn.txt");
  return c;
}
const Catalog& coreduo() {  // Core Duo T2500 (Yonah, model 0EH), version 1
  static const Catalog c("coreduo.toml", std::string(PMC_SOURCE_DIR) + "/data/cpuid/core-duo.txt");
  return c;
}

void check_config(const Catalog& c, const std::string& event, std::uint64_t want) {
  BOOST_TEST_CONTEXT(event) {
    const pmc::Encoding e = c.encode(event);
    BOOST_TEST(e.config == want, std::hex << "0x" << e.config << " != 0x" << want);
  }
}

void check_counters(const Catalog& c, const std::string& event, std::vector<unsigned> want) {
  BOOST_TEST_CONTEXT(event) {
    const pmc::Encoding e = c.encode(event);
    BOOST_TEST(e.counters == want, boost::test_tools::per_element());
    BOOST_TEST(!e.fixed.has_value());
  }
}

void check_refused(const Catalog& c, const std::string& event) {
  BOOST_TEST_CONTEXT(event) { BOOST_CHECK_THROW((void)c.encode(event), pmc::Error); }
}

namespace fs = std::filesystem;

// A plugin directory laid out as the build tree's, with a copy of the archperf plugin, its data
// file and a cpu/ directory holding only the three files of this catalog (the generated rows of
// index.toml are another test's), so Hal::open chooses among index-sdm.toml's rows alone.
class Tree {
 public:
  Tree() {
    const fs::path built(PMC_PLUGIN_DIR);
    const fs::path cpu = plugins() / "archperf" / "cpu";
    fs::create_directories(cpu);
    fs::copy_file(built / "libarchperf.so", plugins() / "libarchperf.so");
    for (const auto& e : fs::directory_iterator(built.parent_path().parent_path()))
      if (e.path().filename().string().rfind("libpmchal.so", 0) == 0)
        fs::create_symlink(e.path(), tmp_.path() / "lib" / e.path().filename());
    fs::copy_file(fs::path(PMC_DATA_DIR) / "events" / "archperf.toml", plugins() / "archperf.toml");
    for (const char* f : {"index-sdm.toml", "core2.toml", "coreduo.toml"}) fs::copy_file(cpu_file(f), cpu / f);
  }
  [[nodiscard]] fs::path plugins() const { return tmp_.path() / "lib" / "pmchal" / "plugins"; }

  // The Hal of an Intel CPU with this CPUID signature and leaf 0AH EAX (version in bits 7:0).
  [[nodiscard]] pmc::Hal open(std::uint32_t signature, std::uint32_t leaf_a_eax) const {
    const fs::path file = tmp_.path() / "cpu.txt";
    pmc_test::spit(file, fmt::format("CPU:\n"
                                     "   0x00000000 0x00: eax=0x0000000a ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
                                     "   0x00000001 0x00: eax=0x{:08x} ebx=0x00020800 ecx=0x0000e3bd edx=0xbfebfbff\n"
                                     "   0x0000000a 0x00: eax=0x{:08x} ebx=0x00000000 ecx=0x00000000 edx=0x00000503\n",
                                     signature, leaf_a_eax));
    pmc::Config cfg;
    cfg.plugin_path = {plugins()};
    cfg.backend = "archperf";
    cfg.cpu = file.string();
    return pmc::Hal::open(cfg);
  }

 private:
  pmc_test::TempDir tmp_;
};

}  // namespace

// cpu/index-sdm.toml (sheet 1): family 6 model 0EH loads coreduo.toml; 0FH, 16H, 17H and 1DH
// load core2.toml; the neighbours Bonnell (1CH) and Nehalem (1AH) load neither.
BOOST_AUTO_TEST_CASE(the_sdm_rows_choose_the_files) {
  const Tree tree;
  const struct {
    std::uint32_t signature, leaf_a;
    const char* loaded;  // BackendInfo::cpu_catalogs, "" for none
  } cases[] = {
      {0x000006E8, 0x07280201, "cpu/coreduo.toml (Core Solo / Core Duo (Yonah))"},
      {0x000006F6, 0x07280202, "cpu/core2.toml (Core 2 (65 nm: Merom, Conroe, Woodcrest, Kentsfield, Clovertown))"},
      {0x00010661, 0x07280202, "cpu/core2.toml (Core 2 (65 nm single-core: Merom-L, Celeron 4xx/5xx))"},
      {0x0001067A, 0x07280202, "cpu/core2.toml (Core 2 (45 nm: Penryn, Wolfdale, Yorkfield, Harpertown))"},
      {0x000106D1, 0x07280202, "cpu/core2.toml (Xeon 7400 (45 nm: Dunnington))"},
      {0x000106C2, 0x07280203, ""},
      {0x000106A5, 0x07300403, ""},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(std::hex << "signature 0x" << c.signature) {
      const pmc::Hal hal = tree.open(c.signature, c.leaf_a);
      BOOST_REQUIRE(hal.backend());
      const std::vector<std::string>& loaded = hal.backend()->cpu_catalogs;
      if (*c.loaded) {
        BOOST_TEST(loaded == std::vector<std::string>{c.loaded}, boost::test_tools::per_element());
      } else {
        BOOST_TEST(loaded.empty());
      }
      const bool core2 = std::string(c.loaded).find("core2") != std::string::npos;
      const bool coreduo = std::string(c.loaded).find("coreduo") != std::string::npos;
      BOOST_TEST(static_cast<bool>(hal.events().find("L1D_CACHE_LD")) == core2);      // Core 2's name
      BOOST_TEST(static_cast<bool>(hal.events().find("DCACHE_CACHE_LD")) == coreduo);  // Core Duo's
      BOOST_TEST(hal.events().find("INSTRUCTION_RETIRED"));  // archperf.toml's events stay
    }
  }
  // The chosen catalog encodes through the Hal as through the backend.
  BOOST_TEST(tree.open(0x0001067A, 0x07280202).encode("L2_LINES_IN:BOTH_CORES:u").config == 0x41F024u);
}

BOOST_AUTO_TEST_CASE(catalogs_load_without_defects) {
  for (const auto* c : {&core2(), &coreduo()}) {
    const std::vector<std::string> problems = c->archperf.data.validate(2, c->pmu.cpu_tag);
    for (const auto& p : problems) BOOST_TEST_MESSAGE(p);
    BOOST_TEST(problems.empty());
  }
  // What each file adds to archperf.toml's architectural events (sheet 4: 123 libpfm4 `core`
  // events and 9 SDM names; 108 libpfm4 `coreduo` events, THERMAL_TRIP.TRIPS and 27 SDM names).
  pmc_test::LoadedForTest bare("archperf");
  const std::size_t base = bare.data.events().size();
  BOOST_TEST(core2().archperf.data.events().size() == base + 132);
  BOOST_TEST(coreduo().archperf.data.events().size() == base + 136);
  BOOST_TEST(core2().pmu.cpu_tag == "v2");
  BOOST_TEST(coreduo().pmu.cpu_tag == "v1");
}

// SDM table 19-23 (Core microarchitecture) and the qualifier encodings of sheet section 3.
BOOST_AUTO_TEST_CASE(core2_encodings_from_the_sdm) {
  const Catalog& c = core2();
  check_config(c, "INST_RETIRED:ANY_P", kUsrOsEn | 0x00C0);                 // C0H/00H
  check_config(c, "INST_RETIRED:LOADS:u", 0x410000 | 0x01C0);              // C0H/01H, user only
  check_config(c, "LOAD_BLOCK:STA:STD", kUsrOsEn | 0x0603);                // 03H, 02H | 04H combine
  check_config(c, "SB_DRAIN_CYCLES", kUsrOsEn | 0x0104);                   // 04H/01H
  check_config(c, "L1D_REPL", kUsrOsEn | 0x0F45);                          // 45H/0FH
  check_config(c, "L1D_CACHE_LOCK_DURATION", kUsrOsEn | 0x1042);           // 42H/10H
  check_config(c, "THERMAL_TRIP", kUsrOsEn | 0xC03B);                      // 3BH/C0H
  check_config(c, "CPU_CLK_UNHALTED:BUS", kUsrOsEn | 0x013C);              // 3CH/01H
  check_config(c, "BR_INST_RETIRED:MISPRED_TAKEN", kUsrOsEn | 0x08C4);     // C4H/08H
  check_config(c, "BR_INST_RETIRED.MISPRED", kUsrOsEn | 0x00C5);           // C5H/00H (alias)
  check_config(c, "RS_UOPS_DISPATCHED.PORT5", kUsrOsEn | 0x20A1);          // A1H/20H
  check_config(c, "FP_MMX_TRANS_TO_FP", kUsrOsEn | 0x02CC);                // CCH/02H
  check_config(c, "X87_OPS_RETIRED", kUsrOsEn | 0xFEC1);                   // C1H/FEH, default ANY
  check_config(c, "UOPS_RETIRED:FUSED", kUsrOsEn | 0x07C2);                // C2H/07H
  // RS_UOPS_DISPATCHED with invert (bit 23) and counter mask 1 (bits 31:24).
  check_config(c, "RS_UOPS_DISPATCHED_NONE", 0x01000000 | 0x800000 | kUsrOsEn | 0x00A0);
  // Core specificity (bits 15:14) and the event's own masks: L2_LINES_IN is 24H with this core
  // (01B) and all requests (bits 13:12 = 11B) by default: 70H.
  check_config(c, "L2_LINES_IN", kUsrOsEn | 0x7024);
  check_config(c, "L2_LINES_IN:SELF:ANY", kUsrOsEn | 0x7024);
  check_config(c, "L2_LINES_IN:SELF:PREFETCH", kUsrOsEn | 0x5024);          // 01B, 01B
  check_config(c, "L2_LINES_IN:BOTH_CORES", kUsrOsEn | 0xF024);             // 11B, default 11B
  check_config(c, "L2_LINES_IN:BOTH_CORES:EXCL_PREFETCH", kUsrOsEn | 0xC024);
  check_config(c, "L2_IFETCH:S_STATE", kUsrOsEn | 0x4228);                  // this core, Shared
  check_config(c, "L2_M_LINES_IN", kUsrOsEn | 0x4025);                      // core only
  // Core, prefetch and MESI on one event (L2_RQSTS 2EH, L2_LD 29H).
  check_config(c, "L2_RQSTS", kUsrOsEn | 0x7F2E);
  check_config(c, "L2_RQSTS:SELF:ANY:MESI", kUsrOsEn | 0x7F2E);
  check_config(c, "L2_RQSTS:SELF:ANY:I_STATE", kUsrOsEn | 0x712E);
  check_config(c, "L2_LD:BOTH_CORES:PREFETCH:M_STATE", kUsrOsEn | 0xD829);
  // Bus agent (bit 13) with core specificity: BUS_TRANS_ANY 70H, EXT_SNOOP 77H, CMP_SNOOP 78H.
  check_config(c, "BUS_TRANS_ANY", kUsrOsEn | 0x4070);
  check_config(c, "BUS_TRANS_ANY:THIS_AGENT", kUsrOsEn | 0x4070);
  check_config(c, "BUS_TRANS_ANY:ALL_AGENTS:BOTH_CORES", kUsrOsEn | 0xE070);
  check_config(c, "BUS_DRDY_CLOCKS:ALL_AGENTS", kUsrOsEn | 0x2062);          // agent only
  check_config(c, "EXT_SNOOP", kUsrOsEn | 0x0B77);                           // CLEAN|HIT|HITM
  check_config(c, "EXT_SNOOP:ALL_AGENTS:HITM", kUsrOsEn | 0x2877);
  check_config(c, "CMP_SNOOP:BOTH_CORES:SHARE", kUsrOsEn | 0xC178);
  check_config(c, "BUSQ_EMPTY:BOTH_CORES", kUsrOsEn | 0xC07D);               // SDM: core, not agent
  check_config(c, "L2_ADS:SELF=0", kUsrOsEn | 0x0021);                       // core bits 00B
}

// The names libpfm4 and the SDM write for the same events (sheet 4, items 1 and 3).
BOOST_AUTO_TEST_CASE(core2_names_users_type) {
  const Catalog& c = core2();
  check_config(c, "BR_INST_RETIRED.MISPRED_TAKEN", kUsrOsEn | 0x08C4);    // the SDM's EVENT.MASK
  check_config(c, "DTLB_MISSES.MISS_LD", kUsrOsEn | 0x0208);
  check_config(c, "l2_lines_in:BOTH_CORES", kUsrOsEn | 0xF024);           // case-blind event names
  check_config(c, "RS_UOPS_DISPATCHED:PORT2", kUsrOsEn | 0x04A1);         // EVENT:UMASK for EVENT.UMASK
  check_config(c, "INST_RETIRED.ANY_P", kUsrOsEn | 0x00C0);               // archperf.toml's alias
  const pmc::Encoding mem = c.encode("MEM_LOAD_RETIRED:L2_MISS");
  BOOST_TEST(mem.config == (kUsrOsEn | 0x04CB));
  BOOST_TEST(c.archperf.data.find("MEM_LOAD_RETIRED")->precise == 1u);   // PEBS (sheet 6 item 6)
  BOOST_TEST(c.archperf.data.find("INST_RETIRED")->precise == 0u);
}

BOOST_AUTO_TEST_CASE(core2_counter_limits_and_fixed_counters) {
  const Catalog& c = core2();
  // SDM table 19-23 "IA32_PMC0 only" / "IA32_PMC1 only"; libpfm4 counter masks 1 and 2.
  for (const char* e : {"FP_COMP_OPS_EXE", "CYCLES_DIV_BUSY", "IDLE_DURING_DIV", "RS_UOPS_DISPATCHED_CYCLES:PORT_0",
                        "RS_UOPS_DISPATCHED.PORT3", "MEM_LOAD_RETIRED:L1D_MISS"})
    check_counters(c, e, {0});
  for (const char* e : {"FP_ASSIST", "MUL", "DIV", "DELAYED_BYPASS:SIMD"}) check_counters(c, e, {1});
  check_counters(c, "L2_LINES_IN", {0, 1});
  // The fixed-counter events are archperf.toml's, under the SDM's Core 2 names (table 19-2).
  for (const auto* cat : {&core2(), &penryn()}) {
    const struct {
      const char* name;
      unsigned fixed;
    } fixed[] = {{"INST_RETIRED.ANY", 0}, {"CPU_CLK_UNHALTED.CORE", 1}, {"CPU_CLK_UNHALTED.REF", 2}};
    for (const auto& f : fixed) {
      BOOST_TEST_CONTEXT(f.name) {
        const pmc::Encoding e = cat->encode(f.name);
        BOOST_TEST_REQUIRE(e.fixed.has_value());
        BOOST_TEST(*e.fixed == f.fixed);
      }
    }
  }
  // The 45 nm model loads the same catalog.
  check_config(penryn(), "INST_RETIRED:VM_H", kUsrOsEn | 0x08C0);
}

BOOST_AUTO_TEST_CASE(core2_refusals) {
  const Catalog& c = core2();
  check_refused(c, "LOAD_BLOCK");                      // no default unit mask (libpfm4 neither)
  check_refused(c, "L2_LINES_IN:ANY:PREFETCH");        // one prefetch choice
  check_refused(c, "L2_RQSTS:EXCL_PREFETCH");          // sheet 4 item 3: not sayable there
  check_refused(c, "BUSQ_EMPTY:ALL_AGENTS");           // SDM: core specificity
  check_refused(c, "INST_RETIRED:ANY_P:t=1");          // no AnyThread before version 3
}

// SDM table 19-27 (Core Solo and Core Duo).
BOOST_AUTO_TEST_CASE(coreduo_encodings_from_the_sdm) {
  const Catalog& c = coreduo();
  check_config(c, "LD_BLOCKS", kUsrOsEn | 0x0003);
  check_config(c, "SSE_NTSTORES_RET", kUsrOsEn | 0x0307);                // 07H/03H
  check_config(c, "SSE_PREFT2_RET", kUsrOsEn | 0x0207);                  // 07H/02H (SDM name)
  check_config(c, "DATA_MEM_CACHE_REF", kUsrOsEn | 0x0244);              // 44H/02H
  check_config(c, "BUS_DATA_RCV", kUsrOsEn | 0x4064);                    // 64H/40H
  check_config(c, "EST_TRANS:FREQ", kUsrOsEn | 0x103A);                  // 3AH/10H
  check_config(c, "SIMD_FP_DP_S_COMP_RET", kUsrOsEn | 0x03D9);           // D9H/03H
  check_config(c, "FUSED_ST_UOPS_RET", kUsrOsEn | 0x02DA);               // DAH/02H
  check_config(c, "MMX_FP_TRANS", kUsrOsEn | 0x00CC);                    // MMX_FP_Trans, 00H
  check_config(c, "FP_MMX_TRANS", kUsrOsEn | 0x01CC);                    // FP_MMX_Trans, 01H
  check_config(c, "CYCLES_INT_PEDNING_MASKED", kUsrOsEn | 0x00C7);       // libpfm4's spelling
  check_config(c, "THERMAL_TRIP", kUsrOsEn | 0xC03B);                    // cycles
  check_config(c, "THERMAL_TRIP.TRIPS", 0x040000 | kUsrOsEn | 0xC03B);   // edge detect: trips
  check_config(c, "THERMAL_TRIP:TRIPS", 0x040000 | kUsrOsEn | 0xC03B);   // libpfm4's spelling
  // Qualifiers: Bus_Trans_RFO takes core and agent specificity (66H, "requires agent specificity,
  // requires core specificity"), Bus_Trans_Def 20H with core, Bus_Trans_WB C0H with agent.
  check_config(c, "BUS_TRANS_RFO", kUsrOsEn | 0x4066);
  check_config(c, "BUS_TRANS_RFO:BOTH_CORES:ALL_AGENTS", kUsrOsEn | 0xE066);
  check_config(c, "BUS_TRANS_DEF:BOTH_CORES", kUsrOsEn | 0xE06D);
  check_config(c, "BUS_TRANS_WB:ALL_AGENTS", kUsrOsEn | 0xE067);
  check_config(c, "DCU_SNOOP_TO_SHARE", kUsrOsEn | 0x4178);              // 78H/01H, this core
  check_config(c, "L2_LINES_IN:PREFETCH", kUsrOsEn | 0x5024);
  check_config(c, "L2_LINES_IN:SELF=0", kUsrOsEn | 0x3024);              // Core Solo: core bits 00B
  check_config(c, "L2_RQSTS:PREFETCH:I_STATE", kUsrOsEn | 0x512E);
  check_config(c, "BUS_SNOOPS:ALL_AGENTS:M_STATE", kUsrOsEn | 0x2877);
  // Counter limits: table 19-27 "IA32_PMC0 only" / "IA32_PMC1 only".
  for (const char* e : {"CYCLES_DIV_BUSY", "FP_COMP_INSTR_RET"}) check_counters(c, e, {0});
  for (const char* e : {"FP_ASSIST", "MUL", "DIV"}) check_counters(c, e, {1});
  // Version 1: no fixed counters, so the architectural instructions event is a general one.
  check_counters(c, "INSTRUCTION_RETIRED", {0, 1});
  check_refused(c, "CPU_CLK_UNHALTED");                                  // no default mask
  check_refused(c, "BUS_TRANS_RFO:PREFETCH");                            // SDM: agent, not prefetch
}
