#define BOOST_TEST_MODULE reference_archperf
#include <boost/test/unit_test.hpp>

// Differential test of the Intel architectural-perfmon device model (model plugin "archperf")
// against a per-cycle reference interpreter written from docs/hardware/archperf.md (sections 1-4,
// 7, 10) and "Signals of the archperf model" in docs/workload-format.md, on CPUs of versions 1
// to 5. See tests/support/reference.hpp.
//
// The reference, for each cycle:
//   - general-purpose counter i counts the cycle if PERFEVTSELi.EN, its USR (user) or OS
//     (kernel) bit matches, GLOBAL_CTRL bit i is set (version 2+) and CTR_Frz (GLOBAL_STATUS bit
//     59) is clear (version 4+); k = the signal of its event and unit mask: an architectural
//     event j < EAX[31:24] counts its generic signal (nothing when EBX bit j is set), any other
//     pair its raw signal `raw.0xUUEE`; CMASK / INV / E as on the P6, with the edge memory of
//     policy 10.16; the counter wraps at EAX[23:16] bits;
//   - fixed counter i counts when its FIXED_CTR_CTRL field (bits 4i+1:4i) has OS (kernel) or USR
//     (user), GLOBAL_CTRL bit 32 + i is set and (version 4+) CTR_Frz is clear: instructions,
//     cycles, ref-cycles (the unhalted cycles unless the segment gives it), slots (5 per unhalted
//     cycle on Ice Lake unless the segment gives it: section 12); it wraps at
//     EDX[12:5] bits (a version-2 CPU with EDX[4:0] = 0 has fixed counters 0-2, and a fixed width
//     of 0 is the GP width: policy 10.2); version 5 adds the ECX bitmap;
//   - a wrap sets the counter's GLOBAL_STATUS bit (version 2+) and, with INT or the fixed PMI bit
//     (4i+3), is one interrupt (policy 10.6); 0x390 clears status bits, 0x391 (version 4+) sets
//     them (CTR_Frz included: it stops every counter).
//   - a write of IA32_PMCi keeps EAX sign-extended from bit 31, cut to the width (section 4).

#include "support/reference.hpp"

namespace {

using namespace reference;

constexpr u64 EN = u64{1} << 22, USR = u64{1} << 16, OS = u64{1} << 17, E = u64{1} << 18, PC = u64{1} << 19,
              INT = u64{1} << 20, INV = u64{1} << 23;
constexpr std::uint32_t kPmc = 0xC1, kSel = 0x186, kFixed = 0x309, kFixedCtrl = 0x38D, kStatus = 0x38E,
                        kGlobalCtrl = 0x38F, kStatusReset = 0x390, kStatusSet = 0x391;
constexpr u64 kCtrFrz = u64{1} << 59;

const std::vector<std::string> kSignals{"instructions", "ref-cycles", "llc-references", "llc-misses", "branches",
                                        "branch-misses", "slots", "raw.0x01C2", "raw.0x01C0", "raw.0x0073",
                                        "raw.0x02A4", "raw.0x01A4", "unrelated"};

u64 mask_of(unsigned width) { return width >= 64 ? ~u64{0} : (u64{1} << width) - 1; }

// The CPU's geometry as section 1 and policies 10.2 read it from CpuInfo.
struct Geometry {
  unsigned version = 0, gp = 0, gp_width = 0, ebx_length = 0;
  std::uint32_t unavailable = 0;
  std::vector<unsigned> fixed;  // the fixed counters that exist
  unsigned fixed_width = 0;
  // Slots per unhalted cycle fixed counter 3 counts when a segment gives no `slots`: 5 on the
  // Ice Lake generation (section 12, policy 10.27: Intel's `( 5 )`), which is the only top-down
  // part among the CPUs below; 0 (no default) elsewhere.
  unsigned slot_width = 0;
  explicit Geometry(const pmc::CpuInfo& cpu) {
    if (cpu.family == 6 && (cpu.model == 0x7D || cpu.model == 0x7E)) slot_width = 5;
    const pmc::ArchPerfmon& a = cpu.arch;
    version = a.version;
    gp = a.gp_counters;
    gp_width = a.gp_width;
    ebx_length = a.ebx_length;
    unavailable = a.unavailable_events;
    if (version >= 2) {
      unsigned count = a.fixed_counters;
      if (version == 2 && count == 0) count = 3;  // the Core 2 quirk, policy 10.2
      for (unsigned i = 0; i < 16; ++i)
        if (i < count || (version >= 5 && ((a.fixed_bitmap >> i) & 1))) fixed.push_back(i);
      fixed_width = a.fixed_width == 0 ? gp_width : a.fixed_width;
    }
  }
};

// The architectural events of section 7a: index, event, unit mask, generic signal (empty: none).
struct Arch {
  unsigned index, event, umask;
  const char* signal;
};
const Arch kArch[] = {{0, 0x3C, 0x00, "cycles"},        {1, 0xC0, 0x00, "instructions"},
                      {2, 0x3C, 0x01, "ref-cycles"},    {3, 0x2E, 0x4F, "llc-references"},
                      {4, 0x2E, 0x41, "llc-misses"},    {5, 0xC4, 0x00, "branches"},
                      {6, 0xC5, 0x00, "branch-misses"}, {7, 0xA4, 0x01, "slots"},
                      {8, 0xA4, 0x02, ""},              {9, 0x73, 0x00, ""},
                      {10, 0x9C, 0x01, ""},             {11, 0xC2, 0x02, ""},
                      {12, 0xE4, 0x01, ""}};

bool gives(const Seg& s, const std::string& name) {
  for (const auto& [n, k] : s.signals)
    if (n == name) return true;
  return false;
}

u64 generic(const std::string& name, const Seg& s) {
  if (name == "cycles") return s.halted ? 0 : 1;
  if (name == "ref-cycles") return gives(s, "ref-cycles") ? s.per_cycle("ref-cycles") : (s.halted ? 0 : 1);
  return s.per_cycle(name);
}

u64 gp_occurrences(const Geometry& g, u64 sel, const Seg& s) {
  const unsigned event = sel & 0xFF, umask = (sel >> 8) & 0xFF;
  for (const Arch& a : kArch)
    if (a.event == event && a.umask == umask && a.index < g.ebx_length) {
      if ((g.unavailable >> a.index) & 1) return 0;
      if (*a.signal) return generic(a.signal, s);
    }
  char raw[16];
  std::snprintf(raw, sizeof raw, "raw.0x%02X%02X", umask, event);
  return s.per_cycle(raw);
}

u64 fixed_occurrences(const Geometry& g, unsigned i, const Seg& s) {
  static const char* const kEvent[4] = {"instructions", "cycles", "ref-cycles", "slots"};
  if (i == 3 && !gives(s, "slots")) return s.halted ? 0 : g.slot_width;
  return i < 4 ? generic(kEvent[i], s) : s.per_cycle("fixed." + std::to_string(i));
}

struct Reference {
  const Geometry& g;
  std::vector<u64> sel, pmc, fixed_ctr;
  std::vector<bool> edge;
  u64 fixed_ctrl = 0, global_ctrl = 0, status = 0, interrupts = 0;
  explicit Reference(const Geometry& geometry)
      : g(geometry), sel(g.gp, 0), pmc(g.gp, 0), fixed_ctr(16, 0), edge(g.gp, false) {
    global_ctrl = mask_of(g.gp);  // reset value (section 3.3)
  }
  [[nodiscard]] bool frozen() const { return g.version >= 4 && (status & kCtrFrz); }
  void run(const Seg& s) {
    const bool user = s.mode == pmc::Mode::user;
    // Each cycle of a segment has the same occurrences: looked up once, applied cycle by cycle.
    std::vector<u64> gp_k(g.gp), fixed_k(16);
    for (unsigned i = 0; i < g.gp; ++i) gp_k[i] = gp_occurrences(g, sel[i], s);
    for (unsigned i : g.fixed) fixed_k[i] = fixed_occurrences(g, i, s);
    for (u64 cycle = 0; cycle < s.cycles; ++cycle) {
      for (unsigned i = 0; i < g.gp; ++i) {
        if (!(sel[i] & EN) || !(user ? (sel[i] & USR) : (sel[i] & OS))) continue;
        if (g.version >= 2 && !((global_ctrl >> i) & 1)) continue;
        if (frozen()) continue;
        const u64 k = gp_k[i];
        const u64 add = perfevtsel_cycle(sel[i], k, edge[i]);
        const u64 next = pmc[i] + add;
        if (next > mask_of(g.gp_width)) {
          if (g.version >= 2) status |= u64{1} << i;
          if (sel[i] & INT) ++interrupts;
        }
        pmc[i] = next & mask_of(g.gp_width);
      }
      for (unsigned i : g.fixed) {
        const u64 field = (fixed_ctrl >> (4 * i)) & 0xF;
        if (!(user ? (field & 2) : (field & 1))) continue;
        if (!((global_ctrl >> (32 + i)) & 1) || frozen()) continue;
        const u64 next = fixed_ctr[i] + fixed_k[i];
        if (next > mask_of(g.fixed_width)) {
          status |= u64{1} << (32 + i);
          if (field & 8) ++interrupts;
        }
        fixed_ctr[i] = next & mask_of(g.fixed_width);
      }
    }
  }
};

u64 random_sel(Random& r) {
  static const std::vector<std::pair<unsigned, unsigned>> kPairs{
      {0x3C, 0x00}, {0xC0, 0x00}, {0x3C, 0x01}, {0x2E, 0x4F}, {0x2E, 0x41}, {0xC4, 0x00}, {0xC5, 0x00},
      {0xA4, 0x01}, {0xA4, 0x02}, {0x73, 0x00}, {0xC2, 0x01}, {0xC0, 0x01}, {0x00, 0x00}};
  const auto [event, umask] = r.pick(kPairs);
  const u64 cmask = r.chance(50) ? 0 : r.chance(90) ? r.range(1, 4) : r.range(5, 255);
  u64 v = event | (u64{umask} << 8) | (cmask << 24);
  if (r.chance(70)) v |= USR;
  if (r.chance(70)) v |= OS;
  if (r.chance(25)) v |= E;
  if (r.chance(30)) v |= INV;
  if (r.chance(50)) v |= INT;
  if (r.chance(10)) v |= PC;
  if (r.chance(85)) v |= EN;
  return v;
}

void run_cases(const std::filesystem::path& dump, unsigned cases, u64 seed) {
  const Factory factory("archperf", pmc::load_cpuid_dump(dump));
  const Geometry g(factory.cpu());
  BOOST_TEST_MESSAGE(dump.filename().string() << ": version " << g.version << ", " << g.gp << " GP counters of "
                                             << g.gp_width << " bits, " << g.fixed.size() << " fixed of "
                                             << g.fixed_width << " bits");
  BOOST_REQUIRE(g.gp > 0);
  Random r(seed);
  Tally tally;
  unsigned wrapped = 0, interrupted = 0;
  for (unsigned n = 0; n < cases; ++n) {
    std::unique_ptr<pmc::Device> d = factory.make();
    Reference ref(g);
    std::ostringstream log;
    auto w = [&](std::uint32_t msr, u64 v) {
      d->write(msr, v);
      log << " [" << hex(msr) << "]=" << hex(v);
    };
    auto write_sel = [&](unsigned i, u64 v) {
      w(kSel + i, v);
      ref.sel[i] = v;
      ref.edge[i] = false;
    };
    auto write_pmc = [&](unsigned i) {
      const u64 v = r.chance(70) ? 0xFFFFFFFFull - r.below(200) : r.bits() & 0xFFFFFFFFull;
      w(kPmc + i, v);
      ref.pmc[i] = ((v & 0x80000000u) ? (v | ~u64{0xFFFFFFFF}) : v) & mask_of(g.gp_width);
    };
    auto write_fixed = [&](unsigned i) {
      const u64 top = mask_of(g.fixed_width);
      const u64 v = r.chance(70) ? top - r.below(200) : r.bits() & top;
      w(kFixed + i, v);
      ref.fixed_ctr[i] = v;
    };
    auto write_fixed_ctrl = [&] {
      u64 v = 0;
      for (unsigned i : g.fixed) v |= (r.below(4) | (r.chance(50) ? 8 : 0)) << (4 * i);
      w(kFixedCtrl, v);
      ref.fixed_ctrl = v;
    };
    auto write_global_ctrl = [&] {
      u64 v = 0;
      for (unsigned i = 0; i < g.gp; ++i)
        if (r.chance(85)) v |= u64{1} << i;
      for (unsigned i : g.fixed)
        if (r.chance(85)) v |= u64{1} << (32 + i);
      w(kGlobalCtrl, v);
      ref.global_ctrl = v;
    };
    for (unsigned i = 0; i < g.gp; ++i) {
      write_pmc(i);
      write_sel(i, random_sel(r));
    }
    if (g.version >= 2) {
      for (unsigned i : g.fixed) write_fixed(i);
      write_fixed_ctrl();
      write_global_ctrl();
    }
    const unsigned segments = static_cast<unsigned>(r.range(1, 6));
    for (unsigned k = 0; k < segments; ++k) {
      if (k > 0 && r.chance(30)) {
        switch (r.below(g.version >= 4 ? 6 : g.version >= 2 ? 5 : 2)) {
          case 0: write_sel(static_cast<unsigned>(r.below(g.gp)), random_sel(r)); break;
          case 1: write_pmc(static_cast<unsigned>(r.below(g.gp))); break;
          case 2: write_global_ctrl(); break;
          case 3: write_fixed_ctrl(); break;
          case 4: {  // clear some status bits (and CTR_Frz)
            const u64 v = ref.status & r.bits();
            w(kStatusReset, v);
            ref.status &= ~v;
            break;
          }
          default:  // version 4: freeze (or set a counter's status bit)
            const u64 v = r.chance(50) ? kCtrFrz : u64{1} << r.below(g.gp);
            w(kStatusSet, v);
            ref.status |= v;
        }
      }
      const Seg s = random_segment(r, kSignals);
      log << " | " << s.str();
      const u64 before = ref.interrupts;
      const u64 status = ref.status;
      ref.run(s);
      d->run(s.owned());
      if (ref.status != status || ref.interrupts != before) ++wrapped;
      if (ref.interrupts != before) ++interrupted;
    }
    ++tally.cases;
    const std::string at = dump.filename().string() + " case " + std::to_string(n) + ": ";
    for (unsigned i = 0; i < g.gp; ++i)
      if (const u64 got = d->read(kPmc + i); got != ref.pmc[i])
        tally.report(at + "IA32_PMC" + std::to_string(i) + " model " + hex(got) + " reference " + hex(ref.pmc[i]) +
                     ";" + log.str());
    for (unsigned i : g.fixed)
      if (const u64 got = d->read(kFixed + i); got != ref.fixed_ctr[i])
        tally.report(at + "IA32_FIXED_CTR" + std::to_string(i) + " model " + hex(got) + " reference " +
                     hex(ref.fixed_ctr[i]) + ";" + log.str());
    if (g.version >= 2)
      if (const u64 got = d->read(kStatus); got != ref.status)
        tally.report(at + "GLOBAL_STATUS model " + hex(got) + " reference " + hex(ref.status) + ";" + log.str());
    if (d->interrupts() != ref.interrupts)
      tally.report(at + "interrupts model " + std::to_string(d->interrupts()) + " reference " +
                   std::to_string(ref.interrupts) + ";" + log.str());
  }
  BOOST_TEST(tally.disagreements == 0u);
  BOOST_TEST(wrapped > cases / 20);
  if (g.version >= 2) BOOST_TEST(interrupted > cases / 40);
  BOOST_TEST_MESSAGE(dump.filename().string() << ": " << tally.cases << " cases, " << wrapped << " with a wrap, "
                                             << interrupted << " with an interrupt, " << tally.disagreements
                                             << " disagreements");
}

const std::filesystem::path kData = std::filesystem::path(PMC_SOURCE_DIR) / "data" / "cpuid";
const std::filesystem::path kTestData = std::filesystem::path(PMC_TEST_DATA) / "cpuid";

}  // namespace

// 10^5 cases over five CPUs, one per version.
BOOST_AUTO_TEST_CASE(version_1_yonah) { run_cases(kTestData / "archperf-v1-yonah.txt", kCases / 5, kSeed); }
BOOST_AUTO_TEST_CASE(version_2_core2) { run_cases(kData / "core2.txt", kCases / 5, kSeed + 1); }
BOOST_AUTO_TEST_CASE(version_3_nehalem) { run_cases(kTestData / "archperf-v3-nehalem.txt", kCases / 5, kSeed + 2); }
BOOST_AUTO_TEST_CASE(version_4_skylake) { run_cases(kTestData / "archperf-v4-skylake.txt", kCases / 5, kSeed + 3); }
BOOST_AUTO_TEST_CASE(version_5_icelake) { run_cases(kData / "intel-icelake.txt", kCases / 5, kSeed + 4); }
