#define BOOST_TEST_MODULE reference_p5
#include <boost/test/unit_test.hpp>

// Differential test of the Pentium (P5) device model (model plugin "p5") against a per-cycle
// reference interpreter written from docs/hardware/p5.md (sections 3, 4, 5.4, 7.3) and the
// generic signals of docs/workload-format.md. See tests/support/reference.hpp.
//
// The reference, for each cycle and each counter i (0, 1), with the counter's CESR half
// h = CESR >> (16 i) (ES 5:0, CC 8:6, PC 9):
//   - CC bit 0 counts kernel cycles (CPL 0-2), bit 1 user cycles (CPL 3); neither: nothing;
//   - k = the cycle's occurrences of the event ES selects on counter i. Only the events whose
//     signals the documents name are given activity: 16H INSTRUCTIONS_EXECUTED `instructions`,
//     12H BRANCHES `branches`, and on a Pentium with MMX 30H on CTR0 (unhalted cycles, the
//     implicit `cycles`) and 35H on CTR0 `branch-misses` (5.4); every other code counts 0 of
//     this activity, MMX codes on a Pentium without MMX and reserved codes count nothing (7.3);
//   - CC bit 2 (clock mode) adds 1 in a cycle with k >= 1, occurrence mode adds k, uncapped (7.3);
//   - the counter is 40 bits and wraps; nothing ever interrupts (section 2).

#include "support/reference.hpp"

namespace {

using namespace reference;

constexpr std::uint32_t kCesr = 0x11;
constexpr std::uint32_t kCtr[2] = {0x12, 0x13};
constexpr u64 kMask40 = (u64{1} << 40) - 1;

const std::vector<std::string> kSignals{"instructions", "branches", "branch-misses", "flops-unrelated", "uops"};

u64 occurrences(unsigned es, unsigned i, bool mmx, const Seg& s) {
  switch (es) {
    case 0x16: return s.per_cycle("instructions");
    case 0x12: return s.per_cycle("branches");
    case 0x30: return mmx && i == 0 && !s.halted ? 1 : 0;
    case 0x35: return mmx && i == 0 ? s.per_cycle("branch-misses") : 0;
    default: return 0;
  }
}

struct Reference {
  bool mmx = false;
  u64 cesr = 0;
  u64 ctr[2] = {0, 0};
  void run(const Seg& s) {
    for (u64 cycle = 0; cycle < s.cycles; ++cycle)
      for (unsigned i = 0; i < 2; ++i) {
        const u64 half = (cesr >> (16 * i)) & 0x3FF;
        const unsigned es = half & 0x3F, cc = (half >> 6) & 7;
        const bool user = s.mode == pmc::Mode::user;
        if (!((user && (cc & 2)) || (!user && (cc & 1)))) continue;
        const u64 k = occurrences(es, i, mmx, s);
        const u64 add = (cc & 4) ? (k >= 1 ? 1 : 0) : k;
        ctr[i] = (ctr[i] + add) & kMask40;
      }
  }
};

u64 random_half(Random& r) {
  static const std::vector<unsigned> kCodes{0x16, 0x12, 0x30, 0x35, 0x00, 0x28, 0x10, 0x3C};
  return r.pick(kCodes) | (r.below(8) << 6) | (r.chance(10) ? u64{1} << 9 : 0);
}

u64 random_preset(Random& r) { return r.chance(70) ? kMask40 - r.below(100) : r.bits() & kMask40; }

void run_cases(const std::string& dump, bool mmx, u64 seed) {
  const Factory factory("p5", dump_cpu(dump));
  Random r(seed);
  Tally tally;
  unsigned wrapped = 0, clock_mode = 0;
  for (unsigned n = 0; n < kCases / 2; ++n) {
    std::unique_ptr<pmc::Device> d = factory.make();
    Reference ref;
    ref.mmx = mmx;
    std::ostringstream log;
    auto write_cesr = [&](u64 v) {
      d->write(kCesr, v);
      ref.cesr = v;
      log << " cesr=" << hex(v);
      if (v & ((1u << 8) | (1u << 24))) ++clock_mode;
    };
    auto write_ctr = [&](unsigned i, u64 v) {
      d->write(kCtr[i], v);
      ref.ctr[i] = v;
      log << " ctr" << i << "=" << hex(v);
    };
    write_ctr(0, random_preset(r));
    write_ctr(1, random_preset(r));
    write_cesr(random_half(r) | (random_half(r) << 16));
    const unsigned segments = static_cast<unsigned>(r.range(1, 6));
    for (unsigned k = 0; k < segments; ++k) {
      if (k > 0 && r.chance(25)) {
        if (r.chance(50)) write_cesr(random_half(r) | (random_half(r) << 16));
        else write_ctr(static_cast<unsigned>(r.below(2)), random_preset(r));
      }
      const Seg s = random_segment(r, kSignals);
      log << " | " << s.str();
      const u64 c0 = ref.ctr[0], c1 = ref.ctr[1];
      ref.run(s);
      d->run(s.owned());
      if (ref.ctr[0] < c0 || ref.ctr[1] < c1) ++wrapped;
    }
    ++tally.cases;
    for (unsigned i = 0; i < 2; ++i) {
      const u64 got = d->read(kCtr[i]);
      if (got != ref.ctr[i])
        tally.report(dump + " case " + std::to_string(n) + ": CTR" + std::to_string(i) + " model " + hex(got) +
                     " reference " + hex(ref.ctr[i]) + ";" + log.str());
    }
    if (d->interrupts() != 0) tally.report(dump + " case " + std::to_string(n) + ": the P5 interrupted;" + log.str());
  }
  BOOST_TEST(tally.disagreements == 0u);
  BOOST_TEST(wrapped > kCases / 50);
  BOOST_TEST(clock_mode > kCases / 10);
  BOOST_TEST_MESSAGE(dump << ": " << tally.cases << " cases, " << wrapped << " with a wrap, " << tally.disagreements
                          << " disagreements");
}

}  // namespace

// Half the cases on a Pentium with MMX, half on a plain Pentium.
BOOST_AUTO_TEST_CASE(pentium_with_mmx) { run_cases("pentium-mmx.txt", true, kSeed); }
BOOST_AUTO_TEST_CASE(pentium) { run_cases("pentium.txt", false, kSeed + 1); }
