#define BOOST_TEST_MODULE reference_alpha21064
#include <boost/test/unit_test.hpp>

// Differential test of the Alpha 21064 device model (model plugin "alpha21064") against a
// per-cycle reference interpreter written from docs/hardware/alpha21064.md (sections 2, 3, 4b, 7)
// and "Alpha 21064 signals" in docs/workload-format.md. See tests/support/reference.hpp.
//
// The model's register view (7.18): 0 ICCSR, 1 / 2 the interrupt counts, 3 pr_cycle, 4 PERFMON
// (enable / disable, applied on return, 7.5), 5 LOG, 6 ITEMS, 0x10-0x18 the IPL histogram. The
// reference, for each cycle of a segment (all on CPU 0, logging every process):
//   - a pending interrupt (below) is taken in the first cycle of a segment below IPL 6 (7.7);
//   - a disabled chip counts nothing and pr_cycle stands still; an enabled one adds 1 to
//     pr_cycle and to each counter its events of the cycle, counted in halves: counter 0's MUX0
//     event (ISSUES: k halves, k = issues + instructions; NONISSUES: 2 halves when k = 0, 1 when
//     k = 1; CYCLES: every cycle, halted ones too; the others their signals), counter 1's MUX1
//     event (DUAL: 1 when k >= 2; the others their signals) (workload-format table, 7.3, 7.4);
//   - a counter that reaches its interval (PC0: 65,536 or 4,096; PC1: 4,096 or 256; 2.1)
//     restarts from 0 and interrupts (7.1); at IPL 6 or 7 the interrupt is pending (one per
//     counter; more are lost), else taken at once. Taking it: a counter disabled by ICCSR bit
//     35 / 36 is dismissed (7.10); otherwise, with ITEMS bit 1 its interrupt count goes up, with
//     bit 2 the IPL histogram slot (user 8; kernel 7 when IPL 0 and halted, else the IPL; 7.8);
//   - an ICCSR write that changes counter i's MUX or PC restarts counter i from 0 (7.2).

#include "support/reference.hpp"

namespace {

using namespace reference;

constexpr std::uint32_t kIccsr = 0, kIrq[2] = {1, 2}, kCycles = 3, kPerfmon = 4, kLog = 5, kItems = 6,
                        kHist = 0x10;

const std::vector<std::string> kSignals{
    "issues",    "instructions", "pf_pipedry", "pf_loadi", "loads",       "pf_pipefrozen", "pf_branchi",
    "branches",  "pf_palmode",   "pf_extpin0", "pf_dcache", "l1d-misses", "pf_icache",     "l1i-misses",
    "pf_branchmiss", "branch-misses", "pf_fpinst", "flops", "pf_intops", "pf_storei", "stores", "pf_extpin1"};

unsigned mux0(u64 iccsr) { return (iccsr >> 8) & 0xF; }
unsigned mux1(u64 iccsr) { return (iccsr >> 32) & 0x7; }
u64 interval(unsigned i, u64 iccsr) {
  if (i == 0) return (iccsr >> 3) & 1 ? 4096 : 65536;
  return iccsr & 1 ? 256 : 4096;
}

// Half events per cycle of counter i.
u64 halves(unsigned i, u64 iccsr, const Seg& s) {
  const u64 k = s.per_cycle("issues") + s.per_cycle("instructions");
  if (i == 0) {
    switch (mux0(iccsr)) {
      case 0x0: return k;
      case 0x2: return 2 * s.per_cycle("pf_pipedry");
      case 0x4: return 2 * (s.per_cycle("pf_loadi") + s.per_cycle("loads"));
      case 0x6: return 2 * s.per_cycle("pf_pipefrozen");
      case 0x8: return 2 * (s.per_cycle("pf_branchi") + s.per_cycle("branches"));
      case 0xA: return 2;
      case 0xB: return 2 * s.per_cycle("pf_palmode");
      case 0xC: return k == 0 ? 2 : k == 1 ? 1 : 0;
      case 0xE: return 2 * s.per_cycle("pf_extpin0");
      default: return 0;
    }
  }
  switch (mux1(iccsr)) {
    case 0: return 2 * (s.per_cycle("pf_dcache") + s.per_cycle("l1d-misses"));
    case 1: return 2 * (s.per_cycle("pf_icache") + s.per_cycle("l1i-misses"));
    case 2: return k >= 2 ? 2 : 0;
    case 3: return 2 * (s.per_cycle("pf_branchmiss") + s.per_cycle("branch-misses"));
    case 4: return 2 * (s.per_cycle("pf_fpinst") + s.per_cycle("flops"));
    case 5: return 2 * s.per_cycle("pf_intops");
    case 6: return 2 * (s.per_cycle("pf_storei") + s.per_cycle("stores"));
    default: return 2 * s.per_cycle("pf_extpin1");
  }
}

struct Reference {
  u64 iccsr = 0, items = 1, pr_cycle = 0;
  bool enabled = false;
  u64 count[2] = {0, 0};  // halves
  bool pending[2] = {false, false};
  u64 irq[2] = {0, 0};
  u64 hist[9] = {};

  void write_iccsr(u64 v) {
    if (mux0(v) != mux0(iccsr) || ((v >> 3) & 1) != ((iccsr >> 3) & 1)) count[0] = 0;
    if (mux1(v) != mux1(iccsr) || (v & 1) != (iccsr & 1)) count[1] = 0;
    iccsr = v;
  }
  void take(unsigned i, const Seg& s) {
    if ((iccsr >> (35 + i)) & 1) return;  // disabled counter: dismissed
    if (items & 1) ++irq[i];
    if (items & 2) hist[s.mode == pmc::Mode::user ? 8 : (s.ipl == 0 && s.halted) ? 7 : s.ipl]++;
  }
  void run(const Seg& s) {
    const u64 add[2] = {halves(0, iccsr, s), halves(1, iccsr, s)};
    for (u64 cycle = 0; cycle < s.cycles; ++cycle) {
      if (cycle == 0 && s.ipl < 6)
        for (unsigned i = 0; i < 2; ++i)
          if (pending[i]) {
            pending[i] = false;
            take(i, s);
          }
      if (!enabled) continue;
      ++pr_cycle;
      for (unsigned i = 0; i < 2; ++i) {
        count[i] += add[i];
        const u64 limit = 2 * interval(i, iccsr);
        while (count[i] >= limit) {
          count[i] -= limit;
          if (s.ipl >= 6) pending[i] = true;  // a second one while pending is lost
          else take(i, s);
        }
      }
    }
  }
};

u64 random_iccsr(Random& r) {
  static const std::vector<unsigned> kMux0{0x0, 0x2, 0x4, 0x6, 0x8, 0xA, 0xB, 0xC, 0xE};
  u64 v = (u64{r.pick(kMux0)} << 8) | (r.below(8) << 32) | (r.below(2) << 3) | r.below(2);
  const u64 disable = r.chance(70) ? 0 : r.range(1, 2);  // 3 (both) is refused (7.10)
  v |= disable << 35;
  // Ignore fields (2:1, 7:4, 31:12, 63:37): ignored, never a fault (5.4).
  if (r.chance(20)) v |= r.bits() & 0xFFFFFFE0FFFFF0F6ull;
  return v;
}

// Rates high enough to reach the intervals (256 to 65,536 events) within short segments.
Seg random_alpha_segment(Random& r) {
  Seg s = random_segment(r, kSignals, r.chance(50) ? 3 : 400);
  if (s.mode == pmc::Mode::user) s.ipl = 0;  // user mode runs at IPL 0 (7.8)
  else s.ipl = static_cast<unsigned>(r.chance(40) ? r.range(6, 7) : r.range(0, 5));
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_model_agrees_with_the_reference) {
  const Factory factory("alpha21064", dump_cpu("pentium-iii.txt"));
  Random r(kSeed);
  Tally tally;
  unsigned interrupted = 0, masked = 0, half_counts = 0;
  for (unsigned n = 0; n < kCases; ++n) {
    std::unique_ptr<pmc::Device> d = factory.make();
    Reference ref;
    std::ostringstream log;
    auto w = [&](std::uint32_t reg, u64 v) {
      d->write(reg, v);
      log << " [" << reg << "]=" << hex(v);
    };
    auto write_iccsr = [&] {
      const u64 v = random_iccsr(r);
      w(kIccsr, v);
      ref.write_iccsr(v & ~0xFFFFFFE0FFFFF0F6ull);
      if (mux0(v) == 0x0 || mux0(v) == 0xC) ++half_counts;
    };
    w(kLog, 1);  // every process
    ref.items = r.range(1, 3);
    w(kItems, ref.items);
    write_iccsr();
    w(kPerfmon, 1);
    ref.enabled = true;
    const unsigned segments = static_cast<unsigned>(r.range(1, 6));
    for (unsigned k = 0; k < segments; ++k) {
      // Between segments, unless an interrupt is pending (when it would be taken then is not
      // what this test is about): a new ICCSR, enable / disable, or cleared interrupt counts.
      if (k > 0 && r.chance(30) && !ref.pending[0] && !ref.pending[1]) {
        switch (r.below(3)) {
          case 0: write_iccsr(); break;
          case 1:
            ref.enabled = !ref.enabled;
            w(kPerfmon, ref.enabled ? 1 : 0);
            break;
          default: {
            const unsigned i = static_cast<unsigned>(r.below(2));
            w(kIrq[i], 0);
            ref.irq[i] = 0;
          }
        }
      }
      const Seg s = random_alpha_segment(r);
      log << " | " << s.str();
      const u64 before = ref.irq[0] + ref.irq[1];
      ref.run(s);
      d->run(s.owned());
      if (ref.irq[0] + ref.irq[1] != before) ++interrupted;
      if (s.ipl >= 6 && (ref.pending[0] || ref.pending[1])) ++masked;
    }
    ++tally.cases;
    const std::string at = "case " + std::to_string(n) + ": ";
    for (unsigned i = 0; i < 2; ++i)
      if (const u64 got = d->read(kIrq[i]); got != ref.irq[i])
        tally.report(at + "interrupt count " + std::to_string(i) + " model " + std::to_string(got) + " reference " +
                     std::to_string(ref.irq[i]) + ";" + log.str());
    if (const u64 got = d->read(kCycles); got != ref.pr_cycle)
      tally.report(at + "pr_cycle model " + std::to_string(got) + " reference " + std::to_string(ref.pr_cycle) + ";" +
                   log.str());
    for (unsigned slot = 0; slot < 9; ++slot)
      if (const u64 got = d->read(kHist + slot); got != ref.hist[slot])
        tally.report(at + "IPL histogram slot " + std::to_string(slot) + " model " + std::to_string(got) +
                     " reference " + std::to_string(ref.hist[slot]) + ";" + log.str());
  }
  BOOST_TEST(tally.disagreements == 0u);
  BOOST_TEST(interrupted > kCases / 5);
  BOOST_TEST(masked > kCases / 50);
  BOOST_TEST(half_counts > kCases / 10);
  BOOST_TEST_MESSAGE("alpha21064: " << tally.cases << " cases, " << interrupted << " segments with an interrupt, "
                                    << masked << " ending masked with one pending, " << tally.disagreements
                                    << " disagreements");
}
