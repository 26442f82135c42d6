#define BOOST_TEST_MODULE archperf_pmi
#include <boost/test/unit_test.hpp>

// The architectural PMU model's overflow interrupts against docs/hardware/archperf.md section
// 4a: INT on a general counter, the PMI bit of a fixed counter's field (bit 4i + 3 of
// IA32_FIXED_CTR_CTRL), the GLOBAL_STATUS overflow bits (GP n: bit n, fixed n: bit 32 + n)
// cleared through OVF_CTRL / STATUS_RESET, IA32_DEBUGCTL.FREEZE_PERFMON_ON_PMI (bit 12: versions
// 2-3 clear GLOBAL_CTRL, version 4 sets CTR_Frz), and the simulated PMI handler of
// docs/profiling.md. Every expected value is worked out by hand in the comments.

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include "archperf_model.hpp"

#include <cstdint>
#include <memory>

namespace {

using u64 = std::uint64_t;
using pmc::Mode;

constexpr std::uint32_t PMC0 = 0xC1, PERFEVTSEL0 = 0x186, FIXED_CTR0 = 0x309, FIXED_CTR_CTRL = 0x38D,
                        GLOBAL_STATUS = 0x38E, GLOBAL_CTRL = 0x38F, GLOBAL_OVF_CTRL = 0x390, DEBUGCTL = 0x1D9;
constexpr u64 USR = 1ULL << 16, INT = 1ULL << 20, EN = 1ULL << 22, INSTRUCTIONS = 0xC0;
constexpr u64 F_USR = 0x2, F_PMI = 0x8;
constexpr u64 FREEZE_PERFMON_ON_PMI = 1ULL << 12, CTR_FRZ = 1ULL << 59;
constexpr u64 TWO48 = 1ULL << 48;
constexpr u64 bit(unsigned n) { return 1ULL << n; }

constexpr std::uint32_t LVTPC = 0xFEE00340;
constexpr u64 MASKED = 1ULL << 16, NMI = 0x400;
constexpr std::uint32_t HANDLER = 0x50000000, PROFILE = 0x50000001, PSTART = 0x50000002, PEND = 0x50000003,
                        USER = 0x50000005, RELOAD0 = 0x50000100, RELOADS0 = 0x50000200, BUCKET0 = 0x50100000;

// Version `v`, 4 general counters and 3 fixed ones, all 48 bits wide.
std::unique_ptr<pmc::sim::ArchPerfDevice> device(unsigned v) {
  pmc::CpuInfo cpu;
  cpu.vendor = "GenuineIntel";
  cpu.family = 6;
  cpu.model = 0x55;
  cpu.stepping = 4;
  cpu.signature = 0x50654;
  cpu.max_leaf = 0x16;
  cpu.source = "test";
  cpu.arch.version = v;
  cpu.arch.gp_counters = 4;
  cpu.arch.gp_width = 48;
  cpu.arch.ebx_length = 7;
  cpu.arch.fixed_counters = v >= 2 ? 3 : 0;
  cpu.arch.fixed_width = 48;
  cpu.raw.set(1, 0, pmc::CpuidRegs{0x50654, 0, 1U << 15, 0});
  return std::make_unique<pmc::sim::ArchPerfDevice>(cpu);
}

pmc::OwnedSegment seg(u64 cycles, u64 instructions, u64 pc_begin = 0, u64 pc_end = 0) {
  pmc::OwnedSegment s(cycles, Mode::user);
  s.signal("instructions", instructions);
  s->pc_begin = pc_begin;
  s->pc_end = pc_end;
  return s;
}

// -n in IA32_PMCx: EAX sign-extended to 48 bits.
u64 minus32(u64 n) { return (0x1'0000'0000ULL - n); }

}  // namespace

// GP counter 0 (INT) preset to -10 and fixed counter 0 (instructions, PMI bit 3) preset to
// 2^48 - 10 count 25 instructions: each wraps once, to 15, and sets its status bit (0 and 32);
// two PMIs. Writing 1 to OVF_CTRL clears exactly the bits written.
BOOST_AUTO_TEST_CASE(overflow_sets_the_status_bits_and_ovf_ctrl_clears_them) {
  for (unsigned v : {2U, 4U}) {
    auto d = device(v);
    d->write(GLOBAL_CTRL, 0);
    d->write(PMC0, minus32(10));
    d->write(PERFEVTSEL0, EN | USR | INT | INSTRUCTIONS);
    d->write(FIXED_CTR0, TWO48 - 10);
    d->write(FIXED_CTR_CTRL, F_USR | F_PMI);
    d->write(GLOBAL_CTRL, bit(0) | bit(32));
    d->run(seg(25, 1));
    BOOST_TEST(d->read(PMC0) == 15u);
    BOOST_TEST(d->read(FIXED_CTR0) == 15u);
    BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(0) | bit(32)));
    BOOST_TEST(d->interrupts() == 2u);
    d->write(GLOBAL_OVF_CTRL, bit(32));
    BOOST_TEST(d->read(GLOBAL_STATUS) == bit(0));
    d->write(GLOBAL_OVF_CTRL, bit(0));
    BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  }
}

// The fixed counter's PMI bit alone decides its interrupt: without it the wrap sets the status
// bit and raises nothing.
BOOST_AUTO_TEST_CASE(a_fixed_counter_without_its_pmi_bit_raises_nothing) {
  auto d = device(4);
  d->write(FIXED_CTR0, TWO48 - 10);
  d->write(FIXED_CTR_CTRL, F_USR);
  d->write(GLOBAL_CTRL, bit(32));
  d->run(seg(25, 1));
  BOOST_TEST(d->read(GLOBAL_STATUS) == bit(32));
  BOOST_TEST(d->interrupts() == 0u);
}

// Freeze on PMI. GP 0 (INT, preset -10) and GP 1 (no INT, from 0) count 1 instruction per cycle
// for 25 cycles. GP 0 overflows in cycle 9 (its 10th instruction): the PMU freezes when that
// cycle ends, so GP 0 reads 0 and GP 1 reads 10, and nothing counts afterwards. Version 2
// clears GLOBAL_CTRL; version 4 keeps it and sets CTR_Frz, and clearing CTR_Frz through
// STATUS_RESET lets the counters run again.
BOOST_AUTO_TEST_CASE(freeze_on_pmi_stops_the_pmu_after_the_overflow_cycle) {
  for (unsigned v : {2U, 4U}) {
    auto d = device(v);
    d->write(DEBUGCTL, FREEZE_PERFMON_ON_PMI);
    BOOST_TEST(d->read(DEBUGCTL) == FREEZE_PERFMON_ON_PMI);
    d->write(GLOBAL_CTRL, 0);
    d->write(PMC0, minus32(10));
    d->write(PERFEVTSEL0, EN | USR | INT | INSTRUCTIONS);
    d->write(PERFEVTSEL0 + 1, EN | USR | INSTRUCTIONS);
    d->write(GLOBAL_CTRL, bit(0) | bit(1));
    d->run(seg(25, 1));
    BOOST_TEST(d->read(PMC0) == 0u);
    BOOST_TEST(d->read(PMC0 + 1) == 10u);
    BOOST_TEST(d->interrupts() == 1u);
    if (v == 2) {
      BOOST_TEST(d->read(GLOBAL_CTRL) == 0u);
      BOOST_TEST(d->read(GLOBAL_STATUS) == bit(0));
    } else {
      BOOST_TEST(d->read(GLOBAL_CTRL) == (bit(0) | bit(1)));
      BOOST_TEST(d->read(GLOBAL_STATUS) == (bit(0) | CTR_FRZ));
    }
    d->run(seg(5, 1));  // frozen
    BOOST_TEST(d->read(PMC0 + 1) == 10u);
    if (v == 2) d->write(GLOBAL_CTRL, bit(1));
    else d->write(GLOBAL_OVF_CTRL, CTR_FRZ | bit(0));
    d->run(seg(5, 1));
    BOOST_TEST(d->read(PMC0 + 1) == 15u);
  }
}

// Version 1 has no freeze on PMI; bit 12 faults there, as do DEBUGCTL bits the model lacks.
BOOST_AUTO_TEST_CASE(debugctl_bits_the_model_lacks_fault) {
  BOOST_CHECK_THROW(device(1)->write(DEBUGCTL, FREEZE_PERFMON_ON_PMI), pmc::Error);
  BOOST_CHECK_THROW(device(4)->write(DEBUGCTL, bit(0)), pmc::Error);
  BOOST_CHECK_NO_THROW(device(2)->write(DEBUGCTL, FREEZE_PERFMON_ON_PMI));
}

// The handler samples a GP and a fixed counter. 20 user cycles of 3 instructions (60) at
// pc [0x2000, 0x2100): cycle j at 0x2000 + floor(j x 256 / 20). GP 0 every 7: 8 samples, at
// instructions 7m in cycle ceil(7m / 3) - 1 = 2, 4, 6, 9, 11, 13, 16, 18: offsets 25, 51, 76,
// 115, 140, 166, 204, 230: buckets 1, 3, 4, 7, 8, 10, 12, 14. Fixed 0 every 10: 6 samples, in
// cycles 3, 6, 9, 13, 16, 19: offsets 38, 76, 115, 166, 204, 243: buckets 2, 4, 7, 10, 12, 15.
// The handler clears the status bits and undoes the freeze: GLOBAL_CTRL and GLOBAL_STATUS are as
// before. GP 0 ends at 2^48 - 7 + (60 - 56), fixed 0 at 2^48 - 10.
BOOST_AUTO_TEST_CASE(the_handler_samples_gp_and_fixed_counters_exactly) {
  auto d = device(2);
  d->write(DEBUGCTL, FREEZE_PERFMON_ON_PMI);
  d->write(LVTPC, NMI);
  d->write(HANDLER, 1);
  d->write(PSTART, 0x2000);
  d->write(PEND, 0x2100);
  d->write(PROFILE, 1);
  d->write(RELOAD0, TWO48 - 7);
  d->write(RELOAD0 + 32, TWO48 - 10);
  d->write(GLOBAL_CTRL, 0);
  d->write(PMC0, minus32(7));
  d->write(PERFEVTSEL0, EN | USR | INT | INSTRUCTIONS);
  d->write(FIXED_CTR0, TWO48 - 10);
  d->write(FIXED_CTR_CTRL, F_USR | F_PMI);
  d->write(GLOBAL_CTRL, bit(0) | bit(32));
  d->run(seg(20, 3, 0x2000, 0x2100));
  BOOST_TEST(d->read(USER) == 14u);
  BOOST_TEST(d->read(RELOADS0) == 8u);
  BOOST_TEST(d->read(RELOADS0 + 32) == 6u);
  BOOST_TEST(d->read(PMC0) == TWO48 - 3);
  BOOST_TEST(d->read(FIXED_CTR0) == TWO48 - 10);
  BOOST_TEST(d->read(GLOBAL_STATUS) == 0u);
  BOOST_TEST(d->read(GLOBAL_CTRL) == (bit(0) | bit(32)));
  BOOST_TEST(d->read(LVTPC) == NMI);
  const u64 expected[16] = {0, 1, 1, 1, 2, 0, 0, 2, 1, 0, 2, 0, 2, 0, 1, 1};
  for (std::uint32_t b = 0; b < 16; ++b) BOOST_TEST(d->read(BUCKET0 + b) == expected[b], "bucket " << b);
}

// Without the handler a delivered PMI masks LVTPC.
BOOST_AUTO_TEST_CASE(a_delivered_pmi_masks_lvtpc) {
  auto d = device(4);
  d->write(LVTPC, NMI);
  d->write(FIXED_CTR0, TWO48 - 1);
  d->write(FIXED_CTR_CTRL, F_USR | F_PMI);
  d->write(GLOBAL_CTRL, bit(32));
  d->run(seg(1, 1));
  BOOST_TEST(d->read(LVTPC) == (NMI | MASKED));
}
