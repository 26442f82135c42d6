#define BOOST_TEST_MODULE alpha21064_model_interrupts
#include <boost/test/unit_test.hpp>

// The emulated Alpha 21064 (device model and pfm(7) driver, <pmc/sim/alpha21064.hpp>) against
// docs/hardware/alpha21064.md ("sheet", by section; "5.N" is item N of section 5, "Behaviours worth
// a test") and the OSF/1 pfm(7) page: items 5.9, 5.10 and 5.12 (both counters' interrupts, the IPL
// histogram, masking at IPL 6 and 7, the PC profile and its closed form, unknown registers and
// RDPMC) and the register map that reaches the histogram and the profile. Expected values are
// worked out by hand from those and from the [U] policies listed at the top of
// sim/models/alpha21064/alpha21064_model.cpp, never from a run.

#include "alpha21064_model_support.hpp"
#include "support/models.hpp"

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

using namespace alpha21064_model_test;

BOOST_AUTO_TEST_CASE(s5_9_both_counters_in_one_window) {
  // 4096 cycles, one FP instruction each: counter 0 (CYCLES, 4096) once, counter 1 (FPINST, 256)
  // 16 times. The handler is told which counter fired: both are delivered.
  Chip c(mux0(CYCLES) | PC0 | mux1(FPINST) | PC1, ITEM_COUNTERS | ITEM_IPL);
  c.d.run(seg(4096, {{"flops", 1}}));
  BOOST_TEST(c.d.interrupts(0) == 1u);
  BOOST_TEST(c.d.interrupts(1) == 16u);
  BOOST_TEST(c.d.interrupts() == 17u);
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
  BOOST_TEST(c.d.interrupt_count(1) == 16u);
  BOOST_TEST(c.d.ipl_histogram()[8] == 17u);  // user mode, both counters' ticks
}

BOOST_AUTO_TEST_CASE(s5_10_ipl_histogram_slots) {
  // Slots: 0-5 IPL, 6 unused, 7 idle (kernel, IPL 0, halted), 8 user [U8].
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_IPL);
  c.d.run(seg(3 * 4096));            // user: 3 -> slot 8
  c.d.run(kernel(4096, 0));          // kernel IPL 0: slot 0
  pmc::OwnedSegment idle = kernel(2 * 4096, 0);
  idle->halted = true;                // the idle thread: slot 7; CYCLES counts its cycles [U4]
  c.d.run(idle);
  for (unsigned ipl = 1; ipl <= 5; ++ipl) c.d.run(kernel(ipl * 4096, ipl));  // slot ipl: ipl ticks
  pmc::OwnedSegment halted_at_3 = kernel(4096, 3);
  halted_at_3->halted = true;         // not IPL 0: not idle
  c.d.run(halted_at_3);
  const a::IplHistogram expected{1, 1, 2, 3 + 1, 4, 5, 0, 2, 3};
  BOOST_TEST(c.d.ipl_histogram() == expected, boost::test_tools::per_element());

  // Invalid segments for this model.
  BOOST_TEST(faults([&] { c.d.run(seg(1, {}, Mode::user, 3)); }, errc::invalid_argument));
  BOOST_TEST(faults([&] { c.d.run(kernel(1, 8)); }, errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(s5_10_masked_at_ipl_6_and_7) {
  // Counter interrupts are at IPL 6: at IPL 6 or 7 the first overflow pends, the rest are lost,
  // and the pending one is taken in the first cycle of the next segment below IPL 6 [U7].
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING);
  c.d.set_profile(a::ProfileMode::kernel, 0x1000, 0x2000);
  c.d.run(kernel(3 * 4096, 6));
  BOOST_TEST(c.d.pending(0));
  BOOST_TEST(c.d.interrupts() == 0u);
  BOOST_TEST(c.d.lost_interrupts(0) == 2u);
  c.d.run(kernel(4096, 7));
  BOOST_TEST(c.d.lost_interrupts(0) == 3u);
  pmc::OwnedSegment after = kernel(100, 2);
  after->pc_begin = 0x1800;
  after->pc_end = 0x1900;
  c.d.run(after);                    // delivered at its cycle 0, PC 0x1800, IPL 2
  BOOST_TEST(!c.d.pending(0));
  BOOST_TEST(c.d.interrupt_count(0) == 1u);
  BOOST_TEST(c.d.ipl_histogram()[2] == 1u);
  BOOST_TEST(c.d.ipl_histogram()[6] == 0u);
  BOOST_TEST(c.d.ipl_histogram()[7] == 0u);
  BOOST_TEST(c.d.profile().buckets.at((0x1800 - 0x1000) / 16) == 1u);
}

BOOST_AUTO_TEST_CASE(s5_10_profile_samples_only_inside_the_range) {
  // Profile [0x2000, 0x2100): 16 buckets. Segment over [0x1F00, 0x2200) (0x300 bytes) for
  // 0x300 x 16 cycles: one byte every 16 cycles. CYCLES every 4096: interrupt m in cycle
  // 4096 m - 1, at offset floor((4096 m - 1) / 16) = 256 m - 1: PCs 0x1FFF, 0x20FF, 0x21FF.
  // Only 0x20FF is inside: bucket 15.
  Chip c(mux0(CYCLES) | PC0, ITEM_COUNTERS | ITEM_PROFILING);
  c.d.set_profile(a::ProfileMode::user, 0x2000, 0x2100);
  pmc::OwnedSegment s = seg(0x300 * 16);
  s->pc_begin = 0x1F00;
  s->pc_end = 0x2200;
  c.d.run(s);
  BOOST_TEST(c.d.interrupt_count(0) == 3u);
  std::vector<u64> expected(16, 0);
  expected[15] = 1;
  BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
  // Kernel code is not sampled by a user profile, nor code without PCs.
  pmc::OwnedSegment k = kernel(4096, 0);
  k->pc_begin = 0x2000;
  k->pc_end = 0x2100;
  c.d.run(k);
  c.d.run(seg(4096));
  BOOST_TEST(c.d.interrupt_count(0) == 5u);
  BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
  BOOST_TEST(faults([&] { c.d.set_profile(a::ProfileMode::user, 5, 5); }, errc::invalid_argument));
  c.d.set_profile(a::ProfileMode::off, 0, 0);
  BOOST_TEST(c.d.profile().buckets.empty());
}

BOOST_AUTO_TEST_CASE(profile_closed_form_matches_a_cycle_by_cycle_count) {
  // Random segments, small enough to walk cycle by cycle: the model's closed form (by interrupt
  // or by bucket, whichever is shorter) must give the same buckets as counting every cycle.
  std::mt19937_64 rng(21064);
  for (int round = 0; round < 200; ++round) {
    const bool pc = rng() % 2;
    const u64 interval = pc ? 256 : 4096;
    Chip c(mux0(LOADI) | mux1(DCACHE) | (pc ? PC1 : 0), ITEM_COUNTERS | ITEM_PROFILING);  // counter 0 idle
    const u64 start = 0x10000 + (rng() % 64) * 4, end = start + 16 * (1 + rng() % 40) + rng() % 16;
    c.d.set_profile(a::ProfileMode::user, start, end);
    std::vector<u64> expected(c.d.profile().buckets.size(), 0);
    u64 acc = 0;
    for (int k = 0; k < 4; ++k) {
      pmc::OwnedSegment s = seg(1 + rng() % 20000, {{"pf_dcache", rng() % 5}});
      s->pc_begin = 0x10000 + rng() % 0x300;
      s->pc_end = s->pc_begin + 1 + rng() % 0x400;
      const u64 rate = s->per_cycle("pf_dcache");
      for (u64 j = 0; j < s->cycles; ++j) {
        const u64 before = acc / interval;
        acc += rate;
        for (u64 m = before; m < acc / interval; ++m) {  // overflows in cycle j
          const u64 at = s->pc_begin + static_cast<u64>(static_cast<u128>(j) *
                                                         (s->pc_end - s->pc_begin) / s->cycles);
          if (at >= start && at < end) ++expected[(at - start) / 16];
        }
      }
      c.d.run(s);
    }
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_TEST(c.d.profile().buckets == expected, boost::test_tools::per_element());
      BOOST_TEST(c.d.interrupt_count(1) == acc / interval);
    }
  }
}

BOOST_AUTO_TEST_CASE(s5_12_unknown_registers_and_rdpmc) {
  Alpha21064Device d;
  BOOST_TEST(faults([&] { (void)d.read(0xA); }));
  BOOST_TEST(faults([&] { (void)d.read(IPLHIS + 9); }));     // slots 0..8 only
  BOOST_TEST(faults([&] { (void)d.read(BUCKET); }));         // no profile, no buckets
  BOOST_TEST(faults([&] { d.write(0x186, 0); }));
  BOOST_TEST(faults([&] { (void)d.rdpmc(0); }));   // the counters are not readable (sheet 4b)
  BOOST_TEST(faults([&] { d.write(ITEMS, 0); }));
  BOOST_TEST(faults([&] { d.write(ITEMS, 8); }));
  BOOST_TEST(d.name() == "alpha21064");
  // What a session of the alpha21064_sim backend gets: the model plugin's device.
  auto made = pmc_test::plugin_device("alpha21064", pmc::CpuInfo{});
  BOOST_TEST(made.device->name() == "alpha21064");
}

BOOST_AUTO_TEST_CASE(register_map_reaches_the_ipl_histogram_and_the_profile) {
  // What a driver sees of the handler's data through the RegisterFile: PCNTSETITEMS,
  // PCNTSETUADDR / KADDR as PSTART, PEND, PROFILE; PCNTGETIPLHIS as slots 0x10-0x18; read(2) of
  // the profile as buckets 0x100000 + b.
  Chip c(mux0(CYCLES) | PC0 | DISABLE1, ITEM_COUNTERS | ITEM_IPL);
  c.d.write(PSTART, 0x1000);
  c.d.write(PEND, 0x1100);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));  // ITEMS has no PFM_PROFILING: refused
  BOOST_TEST(c.d.read(PROFILE) == 0u);
  c.d.write(ITEMS, ITEM_COUNTERS | ITEM_IPL | ITEM_PROFILING);
  c.d.write(PROFILE, 1);  // user PCs in [0x1000, 0x1100): 16 buckets
  BOOST_TEST(c.d.read(PROFILE) == 1u);
  BOOST_TEST(c.d.read(PSTART) == 0x1000u);
  BOOST_TEST(c.d.read(PEND) == 0x1100u);
  BOOST_TEST(c.d.profile().buckets.size() == 16u);
  BOOST_TEST(faults([&] { (void)c.d.read(BUCKET + 16); }));  // one past the last bucket

  // 8192 user cycles over [0x1000, 0x1100): interrupts in cycles 4095 and 8191 at PCs
  // 0x1000 + floor(4095 * 256 / 8192) = 0x107F (bucket 7) and 0x10FF (bucket 15); then 4096
  // cycles at IPL 3: one more, slot 3.
  pmc::OwnedSegment user = seg(8192);
  user->pc_begin = 0x1000;
  user->pc_end = 0x1100;
  c.d.run(user);
  c.d.run(kernel(4096, 3));
  BOOST_TEST(c.d.read(IPLHIS + 8) == 2u);
  BOOST_TEST(c.d.read(IPLHIS + 3) == 1u);
  BOOST_TEST(c.d.read(IPLHIS + 0) == 0u);
  for (std::uint32_t b = 0; b < 16; ++b)
    BOOST_TEST(c.d.read(BUCKET + b) == (b == 7 || b == 15 ? 1u : 0u), "bucket " << b);

  // The histogram is cleared one slot at a time, with 0 only; buckets are read only.
  BOOST_TEST(faults([&] { c.d.write(IPLHIS + 8, 5); }));
  c.d.write(IPLHIS + 8, 0);
  BOOST_TEST(c.d.read(IPLHIS + 8) == 0u);
  BOOST_TEST(c.d.read(IPLHIS + 3) == 1u);
  BOOST_TEST(faults([&] { c.d.write(BUCKET + 7, 0); }));
  // Writing PROFILE again starts an empty profile; 0 stops and frees it.
  c.d.write(PROFILE, 2);
  BOOST_TEST(c.d.read(PROFILE) == 2u);
  BOOST_TEST(c.d.read(BUCKET + 7) == 0u);
  c.d.write(PROFILE, 0);
  BOOST_TEST(c.d.profile().buckets.empty());
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 3); }));

  // Ranges: empty, and 2^24 bytes (pfm(7) ENOMEM) are refused; one byte less is 2^20 buckets.
  c.d.write(PSTART, 0x2000);
  c.d.write(PEND, 0x2000);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));
  c.d.write(PSTART, 0);
  c.d.write(PEND, u64{1} << 24);
  BOOST_TEST(faults([&] { c.d.write(PROFILE, 1); }));
  BOOST_TEST(c.d.read(PROFILE) == 0u);  // a refused write changes nothing
  c.d.write(PEND, (u64{1} << 24) - 1);
  c.d.write(PROFILE, 1);
  BOOST_TEST(c.d.profile().buckets.size() == (std::size_t{1} << 20));
  BOOST_TEST(c.d.read(BUCKET + (1u << 20) - 1) == 0u);
}
