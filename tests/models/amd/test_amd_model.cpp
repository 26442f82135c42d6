#define BOOST_TEST_MODULE amd_model
#include <boost/test/unit_test.hpp>

// The AMD core PMU device model against docs/hardware/amd.md, and the amd backend driving it
// through sessions. Every expected value below is worked out by hand from the docs (section
// numbers in brackets; "item N" is section 7, "Behaviours worth a test"; "policy N" section 8),
// never taken from a run of the model or the backend. The model's own choices where the docs
// leave one open are the ones sim/models/amd/amd_model.hpp lists.

#include "amd_model.hpp"
#include "support/backend.hpp"
#include "support/device.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc::errc;
using pmc::Mode;
using pmc::sim::AmdDevice;
using u64 = std::uint64_t;

// MSRs [2].
constexpr std::uint32_t PerfEvtSel0 = 0xC0010000, PerfCtr0 = 0xC0010004;  // + i, i < 4
constexpr std::uint32_t PERF_CTL0 = 0xC0010200, PERF_CTR0 = 0xC0010201;   // + 2i
constexpr std::uint32_t GlobalStatus = 0xC0000300, GlobalCtl = 0xC0000301, GlobalStatusClr = 0xC0000302,
                        GlobalStatusSet = 0xC0000303;
constexpr std::uint32_t evtsel(unsigned i) { return PerfEvtSel0 + i; }
constexpr std::uint32_t perfctr(unsigned i) { return PerfCtr0 + i; }
constexpr std::uint32_t perf_ctl(unsigned i) { return PERF_CTL0 + 2 * i; }
constexpr std::uint32_t perf_ctr(unsigned i) { return PERF_CTR0 + 2 * i; }

// PERF_CTL fields [3.1].
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, E = 1ULL << 18, INT = 1ULL << 20, EN = 1ULL << 22,
              INV = 1ULL << 23, GUEST = 1ULL << 40, HOST = 1ULL << 41;
constexpr u64 umask(u64 m) { return m << 8; }
constexpr u64 cmask(u64 c) { return c << 24; }
// A 12-bit event code in its two ranges: bits 7:0 and 35:32 [3.1].
constexpr u64 event(u64 code) { return (code & 0xFF) | ((code >> 8) << 32); }
// The events the tests use (their generic signals: amd_model.hpp, from amd.md 6.1).
constexpr u64 INSTRUCTIONS = 0x0C0, CYCLES = 0x076;
constexpr u64 MERGE = event(0xFFF);  // 0xF_0000_00FF [3.1]

constexpr u64 TWO47 = 1ULL << 47, TWO48 = 1ULL << 48;

const fs::path kSource(PMC_SOURCE_DIR);
pmc::CpuInfo dump_cpu(const std::string& file) { return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / file); }

// The bundled CPUs (CPUID words in tests/backends/amd/test_amd_probe.cpp): K7 family 6 model 4 (legacy, local
// APIC); K8 revision F; family 10h revision C; family 15h (PerfCtrExtCore); Zen 3 (PerfCtrExtCore,
// no PerfMonV2); Zen 4 Genoa (PerfMonV2, EBX[3:0] = 6); Zen 4 in a KVM guest (legacy).
pmc::CpuInfo k7_cpu() { return dump_cpu("amd-k7.txt"); }
pmc::CpuInfo zen3_cpu() { return dump_cpu("amd-zen3.txt"); }
pmc::CpuInfo genoa_cpu() { return dump_cpu("amd-zen4-genoa.txt"); }

pmc::OwnedSegment seg(u64 cycles, std::initializer_list<std::pair<const char*, u64>> signals,
                      Mode mode = Mode::user) {
  pmc::OwnedSegment s(cycles, mode);
  for (const auto& [name, k] : signals) s.signal(name, k);
  return s;
}

// Whether f raises pmc::Error(register_fault) (a #GP).
bool gp(const std::function<void()>& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.kind() == errc::register_fault;
  }
  return false;
}

pmc::Config config_for(const std::string& file) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = (kSource / "data" / "cpuid" / file).string();
  cfg.backend = "auto";
  cfg.access = "sim";
  return cfg;
}

const pmc::Reading& reading(const std::vector<pmc::Reading>& rs, const std::string& event) {
  for (const auto& r : rs)
    if (r.event == event) return r;
  throw std::runtime_error("no reading for " + event);
}

}  // namespace

// =============================================================================================
// The model on its own.

BOOST_AUTO_TEST_CASE(geometry_follows_cpuid) {
  AmdDevice k7(k7_cpu());
  BOOST_TEST(k7.counters() == 4u);
  BOOST_TEST(!k7.ext_core());
  BOOST_TEST(!k7.perfmon_v2());
  AmdDevice zen3(zen3_cpu());
  BOOST_TEST(zen3.counters() == 6u);
  BOOST_TEST(zen3.ext_core());
  BOOST_TEST(!zen3.perfmon_v2());
  AmdDevice genoa(genoa_cpu());
  BOOST_TEST(genoa.counters() == 6u);
  BOOST_TEST(genoa.perfmon_v2());
  AmdDevice kvm(dump_cpu("amd-zen4-kvm.txt"));
  BOOST_TEST(kvm.counters() == 4u);
  BOOST_TEST(!kvm.ext_core());
  BOOST_TEST(!kvm.perfmon_v2());
  // K5/K6 and other vendors: no such PMU.
  BOOST_CHECK_THROW(AmdDevice(dump_cpu("amd-k6.txt")), pmc::Error);
  BOOST_CHECK_THROW(AmdDevice(dump_cpu("pentium-iii.txt")), pmc::Error);
  // The plugin builds the same model by name.
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen3.txt"));
  BOOST_TEST(hal.pmu().device_model == "amd");
}

BOOST_AUTO_TEST_CASE(item1_each_perfevtsel_has_its_own_enable) {
  // EN only in PerfEvtSel2: only counter 2 counts [3.4]. 100 cycles x 3 instructions = 300.
  AmdDevice d(k7_cpu());
  for (unsigned i = 0; i < 4; ++i) d.write(evtsel(i), INSTRUCTIONS | USR | OS | (i == 2 ? EN : 0));
  d.run(seg(100, {{"instructions", 3}}));
  BOOST_TEST(d.read(perfctr(0)) == 0u);
  BOOST_TEST(d.read(perfctr(1)) == 0u);
  BOOST_TEST(d.read(perfctr(2)) == 300u);
  BOOST_TEST(d.read(perfctr(3)) == 0u);
  // PerfMonV2 with GlobalCtl at its reset value (all counters, policy 3): EN alone still counts.
  AmdDevice g(genoa_cpu());
  BOOST_TEST(g.read(GlobalCtl) == 0x3Fu);  // six counters
  g.write(perf_ctl(4), INSTRUCTIONS | USR | OS | EN);
  g.run(seg(100, {{"instructions", 3}}));
  BOOST_TEST(g.read(perf_ctr(4)) == 300u);
  BOOST_TEST(g.read(perf_ctr(5)) == 0u);
}

BOOST_AUTO_TEST_CASE(item2_negative_preset_wraps_with_an_interrupt) {
  // PerfCtr0 <- 0xFFFF_FFFF_FFFF_FFF0 (-16) reads back 0x0000_FFFF_FFFF_FFF0 [4, policy 1, 2].
  for (const char* file : {"amd-k7.txt", "amd-zen3.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(PerfCtr0, 0xFFFF'FFFF'FFFF'FFF0ULL);
      BOOST_TEST(d.read(PerfCtr0) == 0x0000'FFFF'FFFF'FFF0ULL);
      BOOST_TEST((d.read(PerfCtr0) & TWO47) != 0u);  // bit 47 set
      d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS | INT | EN);
      d.run(seg(15, {{"instructions", 1}}));  // 15 events: 0xFFFF_FFFF_FFFF, no wrap yet
      BOOST_TEST(d.read(PerfCtr0) == 0x0000'FFFF'FFFF'FFFFULL);
      BOOST_TEST(d.interrupts() == 0u);
      d.run(seg(1, {{"instructions", 1}}));  // the 16th: 0, one interrupt
      BOOST_TEST(d.read(PerfCtr0) == 0u);
      BOOST_TEST((d.read(PerfCtr0) & TWO47) == 0u);  // bit 47 went 1 -> 0
      BOOST_TEST(d.interrupts() == 1u);
      // No PerfMonV2: there is no status register to change [2.3].
      BOOST_TEST(gp([&] { (void)d.read(GlobalStatus); }));
    }
  }
}

BOOST_AUTO_TEST_CASE(item3_counter_writes_keep_48_bits_and_policy_on_the_high_bits) {
  AmdDevice d(zen3_cpu());
  // 0x0000_8000_0000_0000 (zero-extended, bit 47 set) reads back 0x8000_0000_0000 [4].
  d.write(PERF_CTR0, 0x0000'8000'0000'0000ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0000ULL);
  // Sign-extended: 0xFFFF_8000_0000_0000 keeps 47:0 and reads with 63:48 = 0 [policy 1, 2].
  d.write(PERF_CTR0, 0xFFFF'8000'0000'0001ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0001ULL);
  // Bits 63:48 that are neither 0 nor the sign extension of bit 47: #GP, nothing written [policy 1].
  for (u64 bad : {0x0001'0000'0000'0000ULL, 0xFFFF'0000'0000'0005ULL, 0x8000'0000'0000'0000ULL,
                  0x0000'8000'0000'0000ULL | (1ULL << 63)}) {
    BOOST_TEST(gp([&] { d.write(PERF_CTR0, bad); }), std::hex << bad);
    BOOST_TEST(d.read(PERF_CTR0) == 0x8000'0000'0001ULL);
  }
  // The full 48 bits are writable (no sign extension from bit 31 as on the P6) [4].
  d.write(PERF_CTR0, 0x0000'1234'8765'4321ULL);
  BOOST_TEST(d.read(PERF_CTR0) == 0x1234'8765'4321ULL);
}

BOOST_AUTO_TEST_CASE(item4_legacy_registers_mirror_the_first_four_with_perfctrextcore) {
  AmdDevice d(zen3_cpu());
  // 0xC0010000 <-> 0xC0010200 and 0xC0010004 <-> 0xC0010201 [2.2], both ways.
  d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS);
  BOOST_TEST(d.read(PERF_CTL0) == (INSTRUCTIONS | USR | OS));
  d.write(perf_ctl(3), CYCLES | OS);
  BOOST_TEST(d.read(evtsel(3)) == (CYCLES | OS));  // 0xC0010003 <-> 0xC0010206
  d.write(PERF_CTR0, 1234);
  BOOST_TEST(d.read(PerfCtr0) == 1234u);
  d.write(perfctr(3), 77);
  BOOST_TEST(d.read(perf_ctr(3)) == 77u);  // 0xC0010007 <-> 0xC0010207
  // Counters 4 and 5 exist only at 0xC0010208-0xC001020B: writing them changes no legacy register.
  d.write(perf_ctl(4), CYCLES | USR);
  d.write(perf_ctr(5), 99);
  BOOST_TEST(d.read(0xC0010208) == (CYCLES | USR));
  BOOST_TEST(d.read(0xC001020B) == 99u);
  BOOST_TEST(d.read(evtsel(0)) == (INSTRUCTIONS | USR | OS));
  BOOST_TEST(d.read(perfctr(0)) == 1234u);
  BOOST_TEST(gp([&] { (void)d.read(0xC0010008); }));  // there is no legacy counter 4
  // An event selected through the legacy alias counts in the extended counter, and the reverse.
  d.write(PerfEvtSel0, INSTRUCTIONS | USR | OS | EN);
  d.write(PERF_CTR0, 0);
  d.run(seg(10, {{"instructions", 2}}));
  BOOST_TEST(d.read(PERF_CTR0) == 20u);
  BOOST_TEST(d.read(PerfCtr0) == 20u);
  BOOST_TEST(d.rdpmc(0) == 20u);
}

BOOST_AUTO_TEST_CASE(item5_no_perfctrextcore_no_extended_registers) {
  for (const char* file : {"amd-k7.txt", "amd-zen4-kvm.txt", "amd-fam16h.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      BOOST_TEST(gp([&] { (void)d.read(PERF_CTL0); }));   // 0xC0010200 -> #GP [2.2]
      BOOST_TEST(gp([&] { d.write(PERF_CTL0, 0); }));
      BOOST_TEST(gp([&] { (void)d.read(0xC001020B); }));
      BOOST_TEST(gp([&] { (void)d.rdpmc(4); }));           // RDPMC ECX=4 -> #GP
      BOOST_TEST(gp([&] { (void)d.rdpmc(0xC0010004); }));  // an MSR number is no counter index [4]
      d.write(perfctr(3), 5);
      BOOST_TEST(d.rdpmc(3) == 5u);                        // 0-3 are fine
      BOOST_TEST(gp([&] { (void)d.read(GlobalCtl); }));    // and no PerfMonV2 either
    }
  }
}

BOOST_AUTO_TEST_CASE(item6_rdpmc_by_counter_index) {
  AmdDevice d(zen3_cpu());
  // RDPMC ECX=5 reads PERF_CTR5 (0xC001020B) [2.2]: indices are contiguous, the MSRs interleave.
  d.write(0xC001020B, 0x1234'5678'9ABCULL);
  BOOST_TEST(d.rdpmc(5) == 0x1234'5678'9ABCULL);
  BOOST_TEST(gp([&] { (void)d.rdpmc(6); }));
  // CPL > 0 needs CR4.PCE [2.1].
  d.set_reader_cpl(3);
  BOOST_TEST(gp([&] { (void)d.rdpmc(5); }));
  d.set_cr4_pce(true);
  BOOST_TEST(d.rdpmc(5) == 0x1234'5678'9ABCULL);
}

BOOST_AUTO_TEST_CASE(item7_perfmon_v2_global_control_and_status) {
  AmdDevice d(genoa_cpu());
  BOOST_TEST(d.read(GlobalCtl) == 0x3Fu);     // policy 3: every implemented counter
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  // EN = 1 with GlobalCtl[0] = 0 does not count [3.4].
  d.write(GlobalCtl, 0);
  d.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN);
  d.run(seg(100, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);
  d.write(GlobalCtl, 0x1);
  d.run(seg(100, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 100u);
  // Overflow sets GlobalStatus[i] (INT or not: no interrupt here) [4].
  d.write(perf_ctr(0), TWO48 - 10);
  d.run(seg(10, {{"instructions", 1}}));
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);
  BOOST_TEST(d.read(GlobalStatus) == 0x1u);
  BOOST_TEST(d.interrupts() == 0u);
  // GlobalStatus is read-only; StatusSet sets, StatusClr clears [2.3].
  BOOST_TEST(gp([&] { d.write(GlobalStatus, 0); }));
  d.write(GlobalStatusSet, 0x24);  // counters 2 and 5
  BOOST_TEST(d.read(GlobalStatus) == 0x25u);
  d.write(GlobalStatusClr, 0x1);
  BOOST_TEST(d.read(GlobalStatus) == 0x24u);
  d.write(GlobalStatusClr, 0x24);
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  // Bit 58 (LBRs frozen) exists: Genoa's 0x80000022:EAX = 7 has LbrExtV2 (bit 1) [2.3].
  d.write(GlobalStatusSet, 1ULL << 58);
  BOOST_TEST(d.read(GlobalStatus) == (1ULL << 58));
  // Bits beyond the six counters are reserved (model policy, amd_model.hpp).
  BOOST_TEST(gp([&] { d.write(GlobalCtl, 1ULL << 6); }));
  BOOST_TEST(d.read(GlobalCtl) == 0x1u);
  // With INT, the overflow also interrupts.
  d.write(perf_ctl(1), INSTRUCTIONS | USR | OS | INT | EN);
  d.write(GlobalCtl, 0x3);
  d.write(perf_ctr(1), TWO48 - 1);
  d.run(seg(1, {{"instructions", 1}}));
  BOOST_TEST(d.interrupts() == 1u);
  BOOST_TEST((d.read(GlobalStatus) & 0x2u) == 0x2u);
}

BOOST_AUTO_TEST_CASE(item8_host_and_guest_bits) {
  // The model is a host with no guest (amd_model.hpp, from [3.3]): HostOnly alone and both bits
  // count, GuestOnly alone counts nothing, neither counts.
  AmdDevice d(dump_cpu("amd-fam10h-revc.txt"));
  const u64 base = INSTRUCTIONS | USR | OS | EN;
  d.write(evtsel(0), base | HOST | GUEST);
  d.write(evtsel(1), base | HOST);
  d.write(evtsel(2), base | GUEST);
  d.write(evtsel(3), base);
  d.run(seg(50, {{"instructions", 2}}));
  BOOST_TEST(d.read(perfctr(0)) == 100u);
  BOOST_TEST(d.read(perfctr(1)) == 100u);
  BOOST_TEST(d.read(perfctr(2)) == 0u);
  BOOST_TEST(d.read(perfctr(3)) == 100u);
}

BOOST_AUTO_TEST_CASE(item9_event_select_high_bits_and_reserved_bits_by_family) {
  // K7 and K8: EventSelect[11:8] (35:32) and 40-41 are reserved: #GP, nothing written [3.2].
  for (const char* file : {"amd-k7.txt", "amd-k8-revf.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(evtsel(0), INSTRUCTIONS | USR);
      BOOST_TEST(gp([&] { d.write(evtsel(0), event(0x1C0) | USR | OS | EN); }));
      BOOST_TEST(gp([&] { d.write(evtsel(0), INSTRUCTIONS | USR | HOST); }));
      BOOST_TEST(gp([&] { d.write(evtsel(0), INSTRUCTIONS | USR | GUEST); }));
      BOOST_TEST(d.read(evtsel(0)) == (INSTRUCTIONS | USR));
    }
  }
  // Family 10h: a 12-bit code. RETIRED_X87_OPS:ALL = 0x1_0003_07C0 (golden, fam10h_revc) with EN
  // counts its own signal, amd.0x1C0.0x07, not the 8-bit 0xC0's.
  AmdDevice d(dump_cpu("amd-fam10h-revc.txt"));
  d.write(evtsel(0), 0x1'0003'07C0ULL | EN);
  BOOST_TEST(d.read(evtsel(0)) == (0x1'0003'07C0ULL | EN));
  d.write(evtsel(1), 0x0003'07C0ULL | EN);  // event 0x0C0 with unit mask 0x07
  d.run(seg(10, {{"amd.0x1C0.0x07", 3}, {"amd.0x0C0.0x07", 5}, {"instructions", 7}}));
  BOOST_TEST(d.read(perfctr(0)) == 30u);
  BOOST_TEST(d.read(perfctr(1)) == 50u);
  // Bit 21 and 36-39 are reserved from family 10h on, 42-63 too.
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 21)); }));
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 36)); }));
  BOOST_TEST(gp([&] { d.write(evtsel(2), INSTRUCTIONS | (1ULL << 42)); }));
  // Family 11h (CPUID.1:EAX = 0x200F31: base 0xF + extended 2): 12-bit codes, no host/guest.
  pmc::CpuInfo griffin = dump_cpu("amd-fam10h-revc.txt");
  griffin.family = 0x11;
  griffin.model = 3;
  AmdDevice g(griffin);
  g.write(evtsel(0), event(0x1E9) | USR);
  BOOST_TEST(g.read(evtsel(0)) == (event(0x1E9) | USR));
  BOOST_TEST(gp([&] { g.write(evtsel(0), INSTRUCTIONS | HOST); }));
  BOOST_TEST(gp([&] { g.write(evtsel(0), INSTRUCTIONS | GUEST); }));
}

BOOST_AUTO_TEST_CASE(item10_family_15h_counter_restrictions_in_the_model) {
  // [5.2, 5.3]: an event on a PERF_CTL it cannot use counts nothing. Program the same event on
  // all six counters and see which count: 10 cycles x 1 of its signal.
  auto counting = [](u64 code, u64 um) {
    AmdDevice d(dump_cpu("amd-fam15h.txt"));
    for (unsigned i = 0; i < 6; ++i) d.write(perf_ctl(i), event(code) | umask(um) | USR | OS | EN);
    const std::string sig = [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "amd.0x%03llX.0x%02llX", static_cast<unsigned long long>(code),
                    static_cast<unsigned long long>(um));
      return std::string(buf);
    }();
    d.run(seg(10, {{sig.c_str(), 1}}));
    unsigned mask = 0;
    for (unsigned i = 0; i < 6; ++i)
      if (d.read(perf_ctr(i)) == 10u) mask |= 1u << i;
    return mask;
  };
  BOOST_TEST(counting(0x003, 0xFF) == 0x08u);  // 0x003: counter 3 only
  BOOST_TEST(counting(0x08F, 0x00) == 0x01u);  // 0x08F: counter 0 only
  BOOST_TEST(counting(0x031, 0x03) == 0x00u);  // 0x031, two unit-mask bits: nowhere
  BOOST_TEST(counting(0x031, 0x01) == 0x07u);  // one bit: 0, 1, 2
  BOOST_TEST(counting(0x000, 0x11) == 0x08u);  // 0x000, bits in both nibbles: 3 only
  BOOST_TEST(counting(0x000, 0x03) == 0x38u);  // one nibble: 3, 4, 5
  BOOST_TEST(counting(0x004, 0x03) == 0x08u);  // 0x004, two bits: 3 only
  BOOST_TEST(counting(0x004, 0x02) == 0x38u);
  BOOST_TEST(counting(0x0C0, 0x00) == 0x3Fu);  // EX_LS: every counter
  BOOST_TEST(counting(0x07D, 0x00) == 0x07u);  // CU: 0, 1, 2
  BOOST_TEST(counting(0x1C0, 0x00) == 0x38u);
  BOOST_TEST(counting(0x02E, 0x00) == 0x09u);  // 0 and 3
}

BOOST_AUTO_TEST_CASE(item10_family_15h_through_the_backend) {
  // The backend's encodings (golden rows and [5.3 items 1-3]) and the scheduler.
  const fs::path extra = fs::temp_directory_path() / "pmchal-test-sim-amd-fam15h.toml";
  {
    // Events the catalog lacks, to reach the umask rules with combinable masks: 0x031, and
    // 0x000 / 0x004 with combinable bits.
    std::ofstream out(extra);
    out << "backend = \"amd\"\nmodifiers = [\"u\", \"k\", \"e\", \"i\", \"c\", \"h\", \"g\"]\n"
           "[[event]]\nname = \"TEST_031\"\ncode = 0x31\ncpus = [\"fam15h\"]\ncounters = [0, 1, 2]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"A\"]\n"
           "masks = [ { name = \"A\", value = 0x01, desc = \"a\" }, { name = \"B\", value = 0x02, desc = \"b\" } ]\n"
           "[[event]]\nname = \"TEST_000\"\ncode = 0x00\ncpus = [\"fam15h\"]\ncounters = [3, 4, 5]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"L1\"]\n"
           "masks = [ { name = \"L1\", value = 0x01, desc = \"a\" }, { name = \"L2\", value = 0x02, desc = \"b\" },"
           " { name = \"H1\", value = 0x10, desc = \"c\" } ]\n"
           "[[event]]\nname = \"TEST_004\"\ncode = 0x04\ncpus = [\"fam15h\"]\ncounters = [3, 4, 5]\ndesc = \"t\"\n"
           "[event.umasks]\ncombinable = true\ndefault = [\"A\"]\n"
           "masks = [ { name = \"A\", value = 0x01, desc = \"a\" }, { name = \"B\", value = 0x02, desc = \"b\" } ]\n";
  }
  pmc::Config cfg = config_for("amd-fam15h.txt");
  cfg.events_path = {extra};
  pmc::Hal hal = pmc::Hal::open(cfg);
  using V = std::vector<unsigned>;
  BOOST_TEST(hal.encode("RETIRED_SSE_OPS").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("DISPATCHED_FPU_OPS").counters == V({3}), boost::test_tools::per_element());  // ALL = 0xFF
  BOOST_TEST(hal.encode("DISPATCHED_FPU_OPS:OPS_PIPE1").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_000:L1:L2").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_000:L1:H1").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_004:A").counters == V({3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_004:A:B").counters == V({3}), boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST_031:B").counters == V({0, 1, 2}), boost::test_tools::per_element());
  try {
    (void)hal.encode("TEST_031:A:B");
    BOOST_ERROR("0x031 with two unit-mask bits encoded");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
    BOOST_TEST(std::string(e.what()).find("TEST_031:A:B") != std::string::npos, e.what());
  }
  // Two PERF_CTL3-only events cannot be counted together.
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_OPS");
  try {
    // At once (a group); two adds would take turns on PERF_CTL3 (multiplexing).
    s.add_group({"RETIRED_SSE_OPS", "DISPATCHED_FPU_OPS"});
    BOOST_ERROR("two counter-3 events scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
  }
  // The session programs RETIRED_SSE_OPS (0x0003_FF03) on PERF_CTL3 = 0xC0010206, and it counts there.
  s.add("instructions");
  s.start();
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(d.read(perf_ctl(3)) == (0x0003'FF03ULL | EN));
  d.run(seg(10, {{"amd.0x003.0xFF", 2}, {"instructions", 1}}));
  s.stop();
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "RETIRED_SSE_OPS").counter == 3u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_OPS").value == 20u);
  BOOST_TEST(reading(rs, "instructions").value == 10u);
  fs::remove(extra);
}

BOOST_AUTO_TEST_CASE(item11_zen_merge_pair_in_the_model) {
  // [5.3 item 5]: counter 0 counts RETIRED_SSE_AVX_FLOPS:ANY (0x003, unit mask 0x1F), counter 1
  // holds the merge event 0xFFF with EN (no USR/OS: the driver writes exactly that): counter 1
  // counts counter 0's wraps, so the pair reads N + 2^48 (N+1).
  for (const char* file : {"amd-zen3.txt", "amd-zen4-genoa.txt", "amd-zen4-kvm.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      AmdDevice d(dump_cpu(file));
      d.write(perfctr(0), TWO48 - 16);
      d.write(evtsel(0), 0x03 | umask(0x1F) | USR | OS | EN);
      d.write(evtsel(1), MERGE | EN);
      d.run(seg(4, {{"amd.0x003.0x1F", 8}}));  // 32 events: 2^48 - 16 + 32 = 2^48 + 16
      BOOST_TEST(d.read(perfctr(0)) == 16u);
      BOOST_TEST(d.read(perfctr(1)) == 1u);
      // 2^49 more events (2^43 cycles x 64): two more carries, counter 0 back at 16.
      d.run(seg(1ULL << 43, {{"amd.0x003.0x1F", 64}}));
      BOOST_TEST(d.read(perfctr(0)) == 16u);
      BOOST_TEST(d.read(perfctr(1)) == 3u);
      // Without EN in the partner there is no pairing: it stays, counter 0 wraps alone.
      d.write(evtsel(1), MERGE);
      d.run(seg(1, {{"amd.0x003.0x1F", 8}}));
      d.write(perfctr(0), TWO48 - 1);
      d.run(seg(1, {{"amd.0x003.0x1F", 1}}));
      BOOST_TEST(d.read(perfctr(0)) == 0u);
      BOOST_TEST(d.read(perfctr(1)) == 3u);
    }
  }
  // Before Zen the merge event pairs nothing (family 15h: 0xFFF is no event).
  AmdDevice f15(dump_cpu("amd-fam15h.txt"));
  f15.write(perf_ctr(0), TWO48 - 1);
  f15.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN);
  f15.write(perf_ctl(1), MERGE | EN);
  f15.run(seg(2, {{"instructions", 1}}));
  BOOST_TEST(f15.read(perf_ctr(0)) == 1u);
  BOOST_TEST(f15.read(perf_ctr(1)) == 0u);
}

BOOST_AUTO_TEST_CASE(item11_zen_merge_events_through_the_backend) {
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  using V = std::vector<unsigned>;
  // Even counters with an odd neighbour: 0, 2, 4 (six counters); never 1.
  BOOST_TEST(hal.encode("RETIRED_SSE_AVX_FLOPS").counters == V({0, 2, 4}), boost::test_tools::per_element());
  pmc::Hal kvm = pmc::Hal::open(config_for("amd-zen4-kvm.txt"));
  BOOST_TEST(kvm.encode("RETIRED_SSE_AVX_FLOPS").counters == V({0, 2}), boost::test_tools::per_element());

  // A session: the scheduler gives the pair the first even counter, 0, and the driver programs
  // counter 1 with the merge event 0xF_0000_00FF | EN = 0xF_0040_00FF [5.3 item 5]; the four
  // other events take counters 2-5.
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_AVX_FLOPS");
  s.add("instructions");
  s.add("cycles");
  s.add("branches");
  s.add("branch-misses");
  try {
    // no free pair left for all six at once (a group); a plain add would be multiplexed
    s.add_group({"RETIRED_SSE_AVX_FLOPS", "instructions", "cycles", "branches", "branch-misses",
                 "RETIRED_SSE_AVX_FLOPS:MULT_FLOPS"});
    BOOST_ERROR("a second pair was scheduled");
  } catch (const pmc::Error& e) {
    BOOST_TEST((e.kind() == errc::no_counter), e.what());
  }
  s.start();
  pmc::Device& d = pmc_test::device(s);
  // RETIRED_SSE_AVX_FLOPS:ANY = 0x003 | unit mask 0x1F | USR | OS = 0x0003_1F03 [3.1].
  BOOST_TEST(d.read(perf_ctl(0)) == (0x0003'1F03ULL | EN));
  BOOST_TEST(d.read(perf_ctl(1)) == 0xF'0040'00FFULL);
  BOOST_TEST(d.read(GlobalCtl) == 0x3Fu);  // counters 0-5 all in use (1 as the partner)
  d.run(seg(1000, {{"amd.0x003.0x1F", 16}, {"instructions", 2}}));
  s.stop();
  BOOST_TEST(d.read(perf_ctl(1)) == 0xF'0000'00FFULL);  // the merge event stays, without EN
  BOOST_TEST(d.read(GlobalCtl) == 0u);
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").counter == 0u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").value == 16'000u);
  BOOST_TEST(reading(rs, "instructions").counter == 2u);
  BOOST_TEST(reading(rs, "instructions").value == 2'000u);
  BOOST_TEST(reading(rs, "cycles").value == 1'000u);

  // Item 11 as written: the event on counter 2 takes counter 3 with 0xF_0000_00FF | EN. The
  // driver called directly with that assignment, on a fresh model.
  const pmc_test::LoadedForTest amd = pmc_test::LoadedForTest::of(hal);
  const pmc::PmuContext ctx = pmc_test::LoadedForTest::context(hal);
  const pmc::Encoding flops = hal.encode("RETIRED_SSE_AVX_FLOPS");
  const std::vector<pmc::Assignment> set{{&hal.pmu().counters.at(2), &flops}};
  AmdDevice g(genoa_cpu());
  g.write(perf_ctr(3), 123);  // left over: program() clears it
  amd->program(g, ctx, set);
  BOOST_TEST(g.read(GlobalCtl) == 0u);
  BOOST_TEST(g.read(perf_ctl(2)) == 0x0003'1F03ULL);
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0000'00FFULL);
  BOOST_TEST(g.read(perf_ctr(3)) == 0u);
  amd->start(g, ctx, set);
  BOOST_TEST(g.read(perf_ctl(2)) == (0x0003'1F03ULL | EN));
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0040'00FFULL);
  BOOST_TEST(g.read(GlobalCtl) == 0xCu);  // counters 2 and 3
  amd->stop(g, ctx, set);
  BOOST_TEST(g.read(GlobalCtl) == 0u);
  BOOST_TEST(g.read(perf_ctl(2)) == 0x0003'1F03ULL);
  BOOST_TEST(g.read(perf_ctl(3)) == 0xF'0000'00FFULL);
}

BOOST_AUTO_TEST_CASE(the_backend_reads_and_writes_a_pair_as_one_value) {
  // The driver's view of a merged pair: N + 2^48 (N+1) [5.3 item 5], on the model's registers.
  pmc_test::LoadedForTest amd("amd");
  const pmc::CpuInfo cpu = genoa_cpu();
  const pmc::PmuInfo pmu = amd.pmu(cpu);
  const pmc::PmuContext ctx = amd.context(cpu, pmu);
  AmdDevice d(cpu);
  d.write(perf_ctl(0), 0x03 | umask(0x1F) | USR | OS | EN);
  d.write(perf_ctl(1), MERGE | EN);
  d.write(perf_ctr(0), TWO48 - 16);
  d.run(seg(4, {{"amd.0x003.0x1F", 8}}));  // as above: counter 0 = 16, counter 1 = 1
  BOOST_TEST(amd->read_counter(d, ctx, pmu.counters.at(0)) == TWO48 + 16);
  // 2^48 * 5 + 7: counter 1 = 5, counter 0 = 7.
  amd->write_counter(d, ctx, pmu.counters.at(0), 5 * TWO48 + 7);
  BOOST_TEST(d.read(perf_ctr(0)) == 7u);
  BOOST_TEST(d.read(perf_ctr(1)) == 5u);
  // Without the merge event in counter 1, counter 0 is a plain 48-bit counter.
  d.write(perf_ctl(1), 0);
  BOOST_TEST(amd->read_counter(d, ctx, pmu.counters.at(0)) == 7u);
}

BOOST_AUTO_TEST_CASE(item13_cmask_inv_edge) {
  AmdDevice d(zen3_cpu());
  // CntMask 2: 1 per cycle with >= 2 events; with INV: 1 per cycle with < 2 [3.1, counting.hpp].
  d.write(perf_ctl(0), INSTRUCTIONS | USR | OS | EN | cmask(2));
  d.write(perf_ctl(1), INSTRUCTIONS | USR | OS | EN | cmask(2) | INV);
  // Edge with CntMask 0: one per rising edge of "at least one event".
  d.write(perf_ctl(2), INSTRUCTIONS | USR | OS | EN | E);
  d.run(seg(100, {{"instructions", 3}}));  // 0: +100, 1: +0, 2: +1 (rising)
  d.run(seg(50, {{"instructions", 1}}));   // 0: +0, 1: +50, 2: +0 (still asserted)
  d.run(seg(10, {{"instructions", 0}}));   // 0: +0, 1: +10, 2: +0 (falls)
  d.run(seg(10, {{"instructions", 2}}));   // 0: +10, 1: +0, 2: +1 (rises again)
  BOOST_TEST(d.read(perf_ctr(0)) == 110u);
  BOOST_TEST(d.read(perf_ctr(1)) == 60u);
  BOOST_TEST(d.read(perf_ctr(2)) == 2u);
}

BOOST_AUTO_TEST_CASE(item14_k7_model_1_has_no_interrupt) {
  // K7 model 1 has no local APIC: INT has no effect [4]; model 4 (the dump) interrupts.
  pmc::CpuInfo model1 = k7_cpu();
  model1.model = 1;
  for (const auto& [cpu, expected] : {std::pair{model1, 0u}, std::pair{k7_cpu(), 1u}}) {
    AmdDevice d(cpu);
    d.write(PerfCtr0, TWO48 - 1);
    d.write(PerfEvtSel0, CYCLES | USR | OS | INT | EN);
    d.run(seg(1, {}));
    BOOST_TEST(d.read(PerfCtr0) == 0u);
    BOOST_TEST(d.interrupts() == expected);
  }
}

BOOST_AUTO_TEST_CASE(privilege_halt_and_generic_signals) {
  AmdDevice d(genoa_cpu());
  d.write(perf_ctl(0), CYCLES | USR | EN);                       // user cycles
  d.write(perf_ctl(1), INSTRUCTIONS | OS | EN);                  // kernel instructions
  d.write(perf_ctl(2), 0x60 | umask(0xFF) | USR | OS | EN);      // Zen 4 cache-references [6.1]
  d.write(perf_ctl(3), 0x64 | umask(0x09) | USR | OS | EN);      // cache-misses
  d.write(perf_ctl(4), event(0x120) | umask(0x01) | USR | OS | EN);  // Zen 4 ref-cycles
  d.write(perf_ctl(5), 0x60 | umask(0xF7) | USR | OS | EN);      // Zen 5's cache-references: raw on Zen 4
  d.run(seg(100, {{"instructions", 2}, {"cache-references", 3}, {"cache-misses", 1}, {"ref-cycles", 2}}));
  d.run(seg(10, {{"instructions", 5}}, Mode::kernel));
  pmc::OwnedSegment halted = seg(1000, {{"cache-references", 1}}, Mode::user);
  halted->halted = true;
  d.run(halted);  // no cycles; other signals still count
  BOOST_TEST(d.read(perf_ctr(0)) == 100u);   // user, unhalted cycles only
  BOOST_TEST(d.read(perf_ctr(1)) == 50u);    // 10 kernel cycles x 5
  BOOST_TEST(d.read(perf_ctr(2)) == 1300u);  // 300 + 1000
  BOOST_TEST(d.read(perf_ctr(3)) == 100u);
  BOOST_TEST(d.read(perf_ctr(4)) == 200u);
  BOOST_TEST(d.read(perf_ctr(5)) == 0u);
}

// =============================================================================================
// The backend's driver on the model, through sessions.

BOOST_AUTO_TEST_CASE(perfmon_v2_global_control_programmed_by_the_driver) {
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  pmc::Device& d = pmc_test::device(s);
  d.write(GlobalStatusSet, 0x6);  // stale overflow bits from an earlier user
  s.start();
  // program(): GlobalCtl cleared, stale status cleared through StatusClr; start(): EN, then
  // GlobalCtl = counter 0 only [2.3, 3.4]. instructions = 0x0003_00C0 [3.1].
  BOOST_TEST(d.read(GlobalStatus) == 0u);
  BOOST_TEST(d.read(GlobalCtl) == 0x1u);
  BOOST_TEST(d.read(perf_ctl(0)) == (0x0003'00C0ULL | EN));
  BOOST_TEST(d.read(perf_ctl(1)) == 0u);
  d.run(seg(100, {{"instructions", 1}}));
  s.stop();
  BOOST_TEST(d.read(GlobalCtl) == 0u);
  BOOST_TEST(d.read(perf_ctl(0)) == 0x0003'00C0ULL);
  BOOST_TEST(s.read().at(0).value == 100u);
}

BOOST_AUTO_TEST_CASE(the_legacy_driver_on_this_machines_kind) {
  // amd-zen4-kvm.txt: four legacy counters, no global registers: per-counter EN only.
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-kvm.txt"));
  pmc::Session s = hal.session();
  s.add("instructions");
  s.add("cycles");
  s.start();
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(gp([&] { (void)d.read(GlobalCtl); }));
  BOOST_TEST(d.read(evtsel(0)) == (0x0003'00C0ULL | EN));
  BOOST_TEST(d.read(evtsel(1)) == (0x0003'0076ULL | EN));
  d.run(seg(100, {{"instructions", 2}}));
  s.stop();
  BOOST_TEST(d.read(evtsel(0)) == 0x0003'00C0ULL);
  BOOST_TEST(d.read(evtsel(1)) == 0x0003'0076ULL);
  const auto rs = s.read();
  BOOST_TEST(reading(rs, "instructions").value == 200u);
  BOOST_TEST(reading(rs, "cycles").value == 100u);
}

BOOST_AUTO_TEST_CASE(exact_counts_across_a_48_bit_wrap) {
  // 3 instructions per cycle for 1000 cycles, then 2^48 / 3 + 7 = 93,824,992,236,892 cycles:
  // 93,824,992,237,892 cycles in all, 3 x that = 281,474,976,713,676 instructions, past
  // 2^48 = 281,474,976,710,656. On PerfMonV2 (Genoa), PerfCtrExtCore without it (Zen 3), the
  // legacy layout (the KVM guest) and a K8.
  for (const char* file : {"amd-zen4-genoa.txt", "amd-zen3.txt", "amd-zen4-kvm.txt", "amd-k8-revf.txt"}) {
    BOOST_TEST_CONTEXT(file) {
      pmc::Hal hal = pmc::Hal::open(config_for(file));
      const pmc::Workload w = pmc::parse_workload(
          "[[segment]]\ncycles = 1000\nsignals = { instructions = 3 }\n"
          "[[segment]]\ncycles = 93824992236892\nsignals = { instructions = 3 }\n",
          "wrap.toml");
      pmc::Session s = hal.session();
      s.add("instructions");
      s.add("cycles");
      const pmc::WorkloadRun run = s.run(w);
      BOOST_TEST(run.cycles == 93'824'992'237'892ULL);
      const auto rs = s.read();
      BOOST_TEST(reading(rs, "instructions").value == 281'474'976'713'676ULL);
      BOOST_TEST(reading(rs, "cycles").value == 93'824'992'237'892ULL);
      BOOST_TEST(run.interrupts == 0u);  // the driver sets no INT
    }
  }
}

BOOST_AUTO_TEST_CASE(merge_pair_counts_exactly_end_to_end) {
  // 2^43 cycles x 64 FLOPs = 2^49 = 562,949,953,421,312 events: counter 0 wraps twice, each wrap
  // carried into counter 1; the session's total is exact [5.3 item 5].
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  pmc::Session s = hal.session();
  s.add("RETIRED_SSE_AVX_FLOPS");
  const pmc::Workload w =
      pmc::parse_workload("[[segment]]\ncycles = 8796093022208\nsignals = { \"amd.0x003.0x1F\" = 64 }\n", "flops.toml");
  s.run(w);
  BOOST_TEST(s.read().at(0).value == 562'949'953'421'312ULL);
  BOOST_TEST(s.read().at(0).counter == 0u);
  pmc::Device& d = pmc_test::device(s);
  BOOST_TEST(d.read(perf_ctr(0)) == 0u);  // 2^49 mod 2^48
  BOOST_TEST(d.read(perf_ctr(1)) == 2u);  // two carries
}

BOOST_AUTO_TEST_CASE(zen_demo_workload_totals) {
  // examples/workloads/zen-demo.toml, its header's totals (worked out there by hand):
  //   pmc stat --cpuid-dump amd-zen4-genoa --workload zen-demo -e instructions,cycles,branches,branch-misses
  pmc::Hal hal = pmc::Hal::open(config_for("amd-zen4-genoa.txt"));
  const pmc::Workload w = pmc::load_workload(kSource / "examples" / "workloads" / "zen-demo.toml");
  // The command's four events, then the others the header works out (six counters at most per
  // session; the FLOPs event takes a pair).
  auto count = [&](std::initializer_list<const char*> events) {
    pmc::Session s = hal.session();
    for (const char* e : events) s.add(e);
    const pmc::WorkloadRun run = s.run(w);
    BOOST_TEST(run.cycles == 10'100'000u);  // halted cycles included
    return s.read();
  };
  auto rs = count({"instructions", "cycles", "branches", "branch-misses"});
  BOOST_TEST(reading(rs, "instructions").value == 33'600'000u);
  BOOST_TEST(reading(rs, "cycles").value == 9'100'000u);
  BOOST_TEST(reading(rs, "branches").value == 8'900'000u);
  BOOST_TEST(reading(rs, "branch-misses").value == 500'000u);
  rs = count({"cache-references", "cache-misses", "RETIRED_SSE_AVX_FLOPS", "instructions:u", "instructions:k"});
  BOOST_TEST(reading(rs, "cache-references").value == 400'000u);
  BOOST_TEST(reading(rs, "cache-misses").value == 200'000u);
  BOOST_TEST(reading(rs, "RETIRED_SSE_AVX_FLOPS").value == 64'000'000u);
  BOOST_TEST(reading(rs, "instructions:u").value == 33'000'000u);
  BOOST_TEST(reading(rs, "instructions:k").value == 600'000u);
}
