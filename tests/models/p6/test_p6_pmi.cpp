#define BOOST_TEST_MODULE p6_pmi
#include <boost/test/unit_test.hpp>

// The P6 model's overflow interrupt at register level: INT (PerfEvtSel bit 20), the local
// APIC's LVT performance-counter entry (FEE00340H: mask bit 16, 0001_0000H after reset; Intel SDM
// vol. 3A "Local Vector Table") and the simulated PMI handler of docs/profiling.md, written
// from docs/hardware/p6.md section 4a. Expected values are worked out by hand in each test.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include "p6_model.hpp"

#include <cstdint>
#include <memory>

namespace {

using u64 = std::uint64_t;
using pmc::Mode;

constexpr std::uint32_t PerfCtr0 = 0xC1, PerfCtr1 = 0xC2, PerfEvtSel0 = 0x186, PerfEvtSel1 = 0x187;
constexpr u64 USR = 1ULL << 16, OS = 1ULL << 17, INT = 1ULL << 20, EN = 1ULL << 22;
constexpr u64 INST_RETIRED = 0xC0, CPU_CLK_UNHALTED = 0x79;
constexpr u64 TWO40 = 1ULL << 40;

// The local APIC and the handler's registers (docs/profiling.md, "The simulated PMI handler").
constexpr std::uint32_t LVTPC = 0xFEE00340;
constexpr u64 MASKED = 1ULL << 16, NMI = 0x400;
constexpr std::uint32_t HANDLER = 0x50000000, PROFILE = 0x50000001, PSTART = 0x50000002, PEND = 0x50000003,
                        KERNEL = 0x50000004, USER = 0x50000005, RELOAD0 = 0x50000100, RELOADS0 = 0x50000200,
                        BUCKET0 = 0x50100000;

std::unique_ptr<pmc::sim::P6Device> pentium_iii() {
  pmc::CpuInfo cpu;
  cpu.vendor = "GenuineIntel";
  cpu.family = 6;
  cpu.model = 8;
  cpu.stepping = 3;
  cpu.signature = 0x683;
  cpu.source = "test";
  return std::make_unique<pmc::sim::P6Device>(cpu);
}

pmc::OwnedSegment seg(u64 cycles, u64 instructions, Mode mode = Mode::user, u64 pc_begin = 0, u64 pc_end = 0) {
  pmc::OwnedSegment s(cycles, mode);
  s.signal("instructions", instructions);
  s->pc_begin = pc_begin;
  s->pc_end = pc_end;
  return s;
}

// -n as software writes it: EAX only, sign-extended to 40 bits [4].
u64 minus(u64 n) { return (TWO40 - n) & 0xFFFFFFFFULL; }

}  // namespace

BOOST_AUTO_TEST_CASE(lvtpc_resets_masked_and_keeps_its_fields) {
  auto d = pentium_iii();
  BOOST_TEST(d->read(LVTPC) == 0x00010000u);
  d->write(LVTPC, NMI | 0xFFFF'0000'0000 >> 16);  // bits above 16 are not fields of the entry
  BOOST_TEST(d->read(LVTPC) == (NMI | MASKED));
  d->write(LVTPC, 0x1000 | NMI | 0x42);  // bit 12, delivery status, is read-only
  BOOST_TEST(d->read(LVTPC) == (NMI | 0x42));
  BOOST_CHECK_THROW(d->write(LVTPC, 1ULL << 32), pmc::Error);
}

// Without a handler: counter 0 preset to -10 with INT counts 25 instructions: it wraps once
// (at the 10th) to 15. The PMI is raised; LVTPC was unmasked, so it is delivered and masks the
// entry. Preset to -1 again, one more instruction overflows: that PMI is raised but the masked
// entry does not deliver it; LVTPC stays masked until software writes it.
BOOST_AUTO_TEST_CASE(a_pmi_without_handler_masks_lvtpc) {
  auto d = pentium_iii();
  d->write(LVTPC, NMI);
  d->write(PerfCtr0, minus(10));
  d->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  d->run(seg(25, 1));
  BOOST_TEST(d->read(PerfCtr0) == 15u);
  BOOST_TEST(d->interrupts() == 1u);
  BOOST_TEST(d->read(LVTPC) == (NMI | MASKED));
  d->write(PerfCtr0, minus(1));
  d->run(seg(1, 1));
  BOOST_TEST(d->interrupts() == 2u);  // raised, not delivered
  BOOST_TEST(d->read(LVTPC) == (NMI | MASKED));
  BOOST_TEST(d->read(USER) == 0u);  // no handler, no sample
}

// With the handler and RELOAD = 2^40 - 10: 25 instructions at 1 per cycle overflow at the 10th
// and 20th; each is a user sample, the counter is reloaded with -10 plus the events past the
// wrap, so it ends at 2^40 - 10 + 5. LVTPC stays unmasked (the handler re-arms it).
BOOST_AUTO_TEST_CASE(the_handler_reloads_and_samples) {
  auto d = pentium_iii();
  d->write(LVTPC, NMI);
  d->write(HANDLER, 1);
  d->write(RELOAD0, TWO40 - 10);
  d->write(PerfCtr0, minus(10));
  d->write(PerfEvtSel0, EN | USR | OS | INT | INST_RETIRED);
  d->run(seg(25, 1));
  BOOST_TEST(d->read(PerfCtr0) == TWO40 - 5);
  BOOST_TEST(d->read(RELOADS0) == 2u);
  BOOST_TEST(d->read(USER) == 2u);
  BOOST_TEST(d->read(KERNEL) == 0u);
  BOOST_TEST(d->interrupts() == 2u);
  BOOST_TEST(d->read(LVTPC) == NMI);
  // 7 kernel cycles of 3 instructions: 5 to the next overflow, then every 10: events 5 and 15
  // of the 21, two kernel samples; the counter ends at 2^40 - 10 + 6.
  d->run(seg(7, 3, Mode::kernel));
  BOOST_TEST(d->read(KERNEL) == 2u);
  BOOST_TEST(d->read(PerfCtr0) == TWO40 - 4);
  BOOST_TEST(d->read(RELOADS0) == 4u);
}

// INT clear: the counter only wraps, the handler sees nothing. LVTPC masked: no PMI is
// delivered, so the handler does not run either and the counter wraps at 2^40.
BOOST_AUTO_TEST_CASE(no_int_or_a_masked_lvtpc_gives_no_sample) {
  for (const bool masked : {false, true}) {
    auto d = pentium_iii();
    d->write(LVTPC, masked ? NMI | MASKED : NMI);
    d->write(HANDLER, 1);
    d->write(RELOAD0, TWO40 - 10);
    d->write(PerfCtr0, minus(10));
    d->write(PerfEvtSel0, EN | USR | (masked ? INT : 0) | INST_RETIRED);
    d->run(seg(25, 1));
    BOOST_TEST(d->read(PerfCtr0) == 15u);
    BOOST_TEST(d->read(USER) == 0u);
    BOOST_TEST(d->read(RELOADS0) == 0u);
  }
}

// The PC of each sample: 4 instructions per cycle over 100 cycles at pc [0x1000, 0x1100)
// (256 bytes), period 50: overflows at instructions 50, 100, ..., 400: 8 samples, instruction
// 50m in cycle ceil(50m / 4) - 1, at 0x1000 + floor(cycle x 256 / 100):
//   m  cycle  offset  bucket     m  cycle  offset  bucket
//   1   12     30      1          5   62    158      9
//   2   24     61      3          6   74    189     11
//   3   37     94      5          7   87    222     13
//   4   49    125      7          8   99    253     15
// Counter 1 counts cycles with a period of 40 too (100 cycles: 2 samples, at cycles 39 and
// 79: offsets 99 and 202, buckets 6 and 12).
BOOST_AUTO_TEST_CASE(samples_fall_at_the_pc_of_the_overflow_cycle) {
  auto d = pentium_iii();
  d->write(LVTPC, NMI);
  d->write(HANDLER, 1);
  d->write(PSTART, 0x1000);
  d->write(PEND, 0x1100);
  d->write(PROFILE, 1);
  d->write(RELOAD0, TWO40 - 50);
  d->write(RELOAD0 + 1, TWO40 - 40);
  d->write(PerfCtr0, minus(50));
  d->write(PerfCtr1, minus(40));
  d->write(PerfEvtSel1, USR | INT | CPU_CLK_UNHALTED);
  d->write(PerfEvtSel0, EN | USR | INT | INST_RETIRED);
  d->run(seg(100, 4, Mode::user, 0x1000, 0x1100));
  const u64 expected[16] = {0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1};
  for (std::uint32_t b = 0; b < 16; ++b) BOOST_TEST(d->read(BUCKET0 + b) == expected[b], "bucket " << b);
  BOOST_TEST(d->read(USER) == 10u);
  BOOST_CHECK_THROW(d->read(BUCKET0 + 16), pmc::Error);  // 16 buckets of 16 bytes
  BOOST_CHECK_THROW(d->write(BUCKET0, 0), pmc::Error);   // read-only
  d->write(PROFILE, 1);                                   // a new, empty profile
  BOOST_TEST(d->read(BUCKET0 + 1) == 0u);
}

BOOST_AUTO_TEST_CASE(bad_handler_writes_fault) {
  auto d = pentium_iii();
  BOOST_CHECK_THROW(d->write(HANDLER, 2), pmc::Error);
  BOOST_CHECK_THROW(d->write(PROFILE, 1), pmc::Error);  // empty range
  BOOST_CHECK_THROW(d->write(USER, 5), pmc::Error);     // only cleared
  BOOST_CHECK_THROW(d->write(RELOADS0, 5), pmc::Error);
}
