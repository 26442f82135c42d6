// armv8-model-test: the PMUv3 device model (libarmv8-model.so) against the architecture, register
// by register (pmuv3.md has the facts; every expected value below is worked out from them).
// The model is loaded as pmchal loads it: the plugin file, its exported descriptor, its factory.
//
//   armv8-model-test <plugin dir> <directory of the CPU descriptions>
//
// Prints one line per failed check and exits 1 if any failed.
#include <pmc/error.hpp>
#include <pmc/pmc.hpp>
#include <pmc/sdk/model.hpp>

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

int failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
      ++failures;                                                            \
    }                                                                        \
  } while (false)

#define CHECK_EQ(a, b)                                                                                  \
  do {                                                                                                  \
    const unsigned long long va = (a), vb = (b);                                                        \
    if (va != vb) {                                                                                     \
      std::fprintf(stderr, "FAIL %s:%d: %s is %#llx, expected %#llx\n", __FILE__, __LINE__, #a, va, vb); \
      ++failures;                                                                                       \
    }                                                                                                   \
  } while (false)

// A register access the architecture refuses: the model throws register_fault.
template <class F>
bool faults(F&& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.kind() == pmc::errc::register_fault;
  }
  return false;
}

constexpr std::uint32_t sysreg(unsigned op0, unsigned op1, unsigned crn, unsigned crm, unsigned op2) {
  return (op0 << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}
constexpr std::uint32_t PMCR = sysreg(3, 3, 9, 12, 0), PMCNTENSET = sysreg(3, 3, 9, 12, 1),
                        PMCNTENCLR = sysreg(3, 3, 9, 12, 2), PMSWINC = sysreg(3, 3, 9, 12, 4),
                        PMSELR = sysreg(3, 3, 9, 12, 5), PMCEID0 = sysreg(3, 3, 9, 12, 6),
                        PMCCNTR = sysreg(3, 3, 9, 13, 0), PMXEVTYPER = sysreg(3, 3, 9, 13, 1),
                        PMXEVCNTR = sysreg(3, 3, 9, 13, 2), PMUSERENR = sysreg(3, 3, 9, 14, 0),
                        PMOVSSET = sysreg(3, 3, 9, 14, 3), PMINTENSET = sysreg(3, 0, 9, 14, 1),
                        PMCCFILTR = sysreg(3, 3, 14, 15, 7);
constexpr std::uint32_t PMEVCNTR(unsigned n) { return sysreg(3, 3, 14, 8 + n / 8, n % 8); }
constexpr std::uint32_t PMEVTYPER(unsigned n) { return sysreg(3, 3, 14, 12 + n / 8, n % 8); }

const pmc::pmc_model_descriptor* descriptor = nullptr;

std::unique_ptr<pmc::Device> make(const pmc::CpuInfo& cpu, std::string* error = nullptr) {
  std::array<char, 256> why{};
  std::unique_ptr<pmc::Device> d(descriptor->create(&cpu, why.data(), why.size()));
  if (error) *error = why.data();
  return d;
}

void run(pmc::Device& d, std::uint64_t cycles, pmc::Mode mode, std::uint64_t instructions, bool halted = false) {
  pmc::OwnedSegment s(cycles, mode);
  if (instructions) s.signal("instructions", instructions);
  s->halted = halted;
  d.run(s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: armv8-model-test PLUGIN_DIR CPU_DESCRIPTION_DIR\n");
    return 2;
  }
  const std::string plugin = std::string(argv[1]) + "/libarmv8-model.so";
  void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "FAIL: %s\n", dlerror());
    return 1;
  }
  const auto* symbol = static_cast<const void* const*>(dlsym(lib, PMC_MODEL_SYMBOL));
  if (!symbol || !*symbol) {
    std::fprintf(stderr, "FAIL: %s exports no %s\n", plugin.c_str(), PMC_MODEL_SYMBOL);
    return 1;
  }
  descriptor = static_cast<const pmc::pmc_model_descriptor*>(*symbol);
  CHECK_EQ(descriptor->abi_version >> 24, pmc::kAbiMajor);
  CHECK(std::string(descriptor->name) == "armv8");

  const std::string dir = argv[2];
  const pmc::CpuInfo a72 = pmc::load_cpu_file(dir + "/cortex-a72.toml");
  const pmc::CpuInfo a64fx = pmc::load_cpu_file(dir + "/a64fx.toml");
  auto dev = make(a72);
  CHECK(dev != nullptr);
  if (!dev) return 1;
  pmc::Device& d = *dev;
  using pmc::Mode;

  // Identification: PMCR_EL0 resets to the TRM's 0x41023000 (E = 0): IMP 0x41, IDCODE 2, N 6.
  CHECK_EQ(d.read(PMCR), 0x41023000u);
  // Counters 0..5 exist, 6 does not: UNDEFINED (PMCR_EL0.N = 6).
  CHECK(!faults([&] { (void)d.read(PMEVCNTR(5)); }));
  CHECK(faults([&] { (void)d.read(PMEVCNTR(6)); }));
  CHECK(faults([&] { d.write(PMEVTYPER(6), 0x08); }));
  // N, IDCODE and IMP are read-only: writing other values there changes nothing.
  d.write(PMCR, 0x0000F800);
  CHECK_EQ(d.read(PMCR), 0x41023000u);
  // LP (bit 7) is RES0 before PMUv3p5, and so is evtCount bit 14 before PMUv3p1 (10-bit events).
  CHECK(faults([&] { d.write(PMCR, 0x80); }));
  CHECK(faults([&] { d.write(PMEVTYPER(0), 0x4004); }));
  CHECK(faults([&] { d.write(PMEVCNTR(0), 0x100000000ull); }));  // a 32-bit counter before PMUv3p5
  CHECK(faults([&] { (void)d.read(0x1234); }));                   // no such system register
  CHECK(faults([&] { (void)d.read(PMSWINC); }));                  // write-only
  // PMCEID0_EL0: bit n = common event n is implemented; INST_RETIRED (8), CPU_CYCLES (0x11) and
  // CHAIN (0x1E) are.
  CHECK_EQ(d.read(PMCEID0) & ((1u << 8) | (1u << 0x11) | (1u << 0x1E)), (1u << 8) | (1u << 0x11) | (1u << 0x1E));

  // Counting. Counter 0: INST_RETIRED at every level; 1: INST_RETIRED with U (not at EL0);
  // 2: CPU_CYCLES with P (not at EL1); the cycle counter unfiltered.
  d.write(PMEVTYPER(0), 0x08);
  d.write(PMEVTYPER(1), 0x40000008);
  d.write(PMEVTYPER(2), 0x80000011);
  d.write(PMCCFILTR, 0);
  d.write(PMCNTENSET, 0x80000007);
  run(d, 1000, Mode::user, 2);  // PMCR_EL0.E is still 0: nothing counts
  CHECK_EQ(d.read(PMEVCNTR(0)), 0u);
  CHECK_EQ(d.read(PMCCNTR), 0u);
  d.write(PMCR, 0x41);          // E | LC
  run(d, 1000, Mode::user, 2);  // 2,000 instructions, 1,000 cycles at EL0
  run(d, 500, Mode::kernel, 1); //   500 instructions,   500 cycles at EL1
  run(d, 100, Mode::kernel, 0, true);  // WFI: the clock stops
  CHECK_EQ(d.read(PMEVCNTR(0)), 2500u);
  CHECK_EQ(d.read(PMEVCNTR(1)), 500u);
  CHECK_EQ(d.read(PMEVCNTR(2)), 1000u);
  CHECK_EQ(d.read(PMCCNTR), 1500u);
  // PMCNTENSET_EL0 reads back the counters enabled; bits of counters it lacks are RAZ/WI.
  d.write(PMCNTENSET, 0x7FFFFFC0);
  CHECK_EQ(d.read(PMCNTENSET), 0x80000007u);

  // A wrap: counter 3 at 0xFFFFFFF0 plus 20 instructions is 0x1_00000004 -> 4, with its overflow
  // flag and, its PMINTENSET_EL1 bit set, one interrupt.
  d.write(PMEVTYPER(3), 0x08);
  d.write(PMEVCNTR(3), 0xFFFFFFF0);
  d.write(PMINTENSET, 1u << 3);
  d.write(PMCNTENSET, 1u << 3);
  run(d, 10, Mode::user, 2);
  CHECK_EQ(d.read(PMEVCNTR(3)), 4u);
  CHECK_EQ(d.read(PMOVSSET) & (1u << 3), 1u << 3);
  CHECK_EQ(d.interrupts(), 1u);

  // CHAIN: counter 5 counts the overflows of counter 4.
  d.write(PMEVTYPER(4), 0x08);
  d.write(PMEVCNTR(4), 0xFFFFFFFF);
  d.write(PMEVTYPER(5), 0x1E);
  d.write(PMEVCNTR(5), 0);
  d.write(PMCNTENSET, 0x30);
  run(d, 1, Mode::user, 1);
  CHECK_EQ(d.read(PMEVCNTR(4)), 0u);
  CHECK_EQ(d.read(PMEVCNTR(5)), 1u);

  // SW_INCR counts writes of 1 to its PMSWINC_EL0 bit; a counter of another event ignores them.
  d.write(PMEVTYPER(0), 0x00);
  d.write(PMEVCNTR(0), 0);
  d.write(PMSWINC, 0x3);  // counters 0 (SW_INCR) and 1 (INST_RETIRED)
  CHECK_EQ(d.read(PMEVCNTR(0)), 1u);
  CHECK_EQ(d.read(PMEVCNTR(1)), 500u);

  // PMCR_EL0.P zeroes the event counters, not the cycle counter; .C the cycle counter.
  d.write(PMCR, 0x41 | 0x2);
  CHECK_EQ(d.read(PMEVCNTR(2)), 0u);
  CHECK_EQ(d.read(PMEVCNTR(5)), 0u);
  CHECK_EQ(d.read(PMCCNTR), 1511u);  // 1,500 + 10 + 1 cycles
  CHECK_EQ(d.read(PMCR) & 0x6, 0u);  // P and C read as 0
  d.write(PMCR, 0x41 | 0x4);
  CHECK_EQ(d.read(PMCCNTR), 0u);

  // PMCR_EL0.D: the cycle counter counts every 64th cycle: 130 cycles give 2 (2 left over),
  // 62 more give (2 + 62) / 64 = 1.
  d.write(PMCR, 0x41 | 0x8);
  run(d, 130, Mode::user, 0);
  CHECK_EQ(d.read(PMCCNTR), 2u);
  run(d, 62, Mode::user, 0);
  CHECK_EQ(d.read(PMCCNTR), 3u);

  // PMCR_EL0.LC = 0: the cycle counter's overflow is at bit 31, and the 64-bit count goes on.
  d.write(PMCR, 0x1);
  d.write(PMCCNTR, 0xFFFFFFFF);
  run(d, 1, Mode::user, 0);
  CHECK_EQ(d.read(PMCCNTR), 0x100000000ull);
  CHECK_EQ(d.read(PMOVSSET) >> 31 & 1u, 1u);

  // The cycle counter's filter: P excludes EL1. Its event field is RES0.
  d.write(PMCR, 0x41 | 0x4);
  d.write(PMCCFILTR, 0x80000000);
  run(d, 100, Mode::kernel, 0);
  run(d, 7, Mode::user, 0);
  CHECK_EQ(d.read(PMCCNTR), 7u);
  CHECK(faults([&] { d.write(PMCCFILTR, 0x11); }));

  // PMSELR_EL0 selects the counter PMXEVTYPER_EL0 / PMXEVCNTR_EL0 reach; 31 selects PMCCFILTR_EL0.
  d.write(PMEVCNTR(3), 42);
  d.write(PMSELR, 3);
  CHECK_EQ(d.read(PMXEVCNTR), 42u);
  d.write(PMSELR, 31);
  d.write(PMXEVTYPER, 0x40000000);
  CHECK_EQ(d.read(PMCCFILTR), 0x40000000u);
  CHECK(faults([&] { (void)d.read(PMXEVCNTR); }));
  d.write(PMSELR, 6);
  CHECK(faults([&] { (void)d.read(PMXEVCNTR); }));

  // EL0 reads of the counters (rdpmc): refused unless PMUSERENR_EL0 allows them.
  d.set_reader_cpl(3);
  CHECK(faults([&] { (void)d.rdpmc(0); }));
  d.write(PMUSERENR, 0x8);  // ER: event counters only
  CHECK(!faults([&] { (void)d.rdpmc(0); }));
  CHECK(faults([&] { (void)d.rdpmc(31); }));
  d.set_cr4_pce(true);  // EN
  CHECK(!faults([&] { (void)d.rdpmc(31); }));
  CHECK(faults([&] { (void)d.rdpmc(6); }));
  d.set_reader_cpl(0);
  d.write(PMCNTENCLR, 0x8000003F);
  CHECK_EQ(d.read(PMCNTENSET), 0u);

  // The A64FX: PMUv3p1 (16-bit event numbers), 8 counters, LC set at reset (0x46014040).
  auto fx = make(a64fx);
  CHECK(fx != nullptr);
  if (fx) {
    CHECK_EQ(fx->read(PMCR), 0x46014040u);
    CHECK(!faults([&] { fx->write(PMEVTYPER(7), 0x4004); }));
    CHECK(faults([&] { (void)fx->read(PMEVCNTR(8)); }));
  }

  // A CPU without a PMUv3: the factory refuses it, saying why.
  std::string why;
  CHECK(make(pmc::decode_arm(0x410FD083, 0x10305006, 0x41023000, "", "no-pmu"), &why) == nullptr);
  CHECK(why.find("PMUVer") != std::string::npos);
  pmc::CpuInfo x86;
  CHECK(make(x86, &why) == nullptr);
  CHECK(why.find("AArch64") != std::string::npos);

  if (failures) std::fprintf(stderr, "armv8-model-test: %d check(s) failed\n", failures);
  else std::printf("armv8-model-test: every check passed\n");
  return failures ? 1 : 0;
}
