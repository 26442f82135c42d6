// What the differential tests of the device models share (tests/models/<model>/test_reference_<model>.cpp).
// Each of those tests holds a brute-force interpreter of its PMU, written from
// docs/hardware/<pmu>.md and docs/workload-format.md alone: it steps through a segment one cycle
// at a time, applying the documented rules to that one cycle. The device model computes each
// segment in closed form. Both get the same random register settings and activity (seeded, so a
// failure is reproducible), and every counter, interrupt and status bit must agree.
#pragma once

#include "support/models.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace reference {

using u64 = std::uint64_t;

// Random cases per model (the issue asks for at least 10^5), and the seed of the first.
constexpr unsigned kCases = 100'000;
constexpr u64 kSeed = 0x13'0D1FF;

// The CPU of a bundled CPUID dump.
inline pmc::CpuInfo dump_cpu(const std::string& file) {
  return pmc::load_cpuid_dump(std::filesystem::path(PMC_SOURCE_DIR) / "data" / "cpuid" / file);
}

// Makes fresh devices of one installed model plugin for a CPU (the plugin is loaded once).
class Factory {
 public:
  Factory(const std::string& model, pmc::CpuInfo cpu) : cpu_(std::move(cpu)) {
    registry_ = pmc_test::installed_models();
    for (const auto& m : registry_->models)
      if (m->name == model) model_ = m;
    if (!model_) throw pmc::Error(pmc::errc::not_found, "model plugin '" + model + "' is not installed");
  }
  [[nodiscard]] std::unique_ptr<pmc::Device> make() const {
    std::array<char, 256> error{};
    std::unique_ptr<pmc::Device> d(model_->descriptor->create(&cpu_, error.data(), error.size()));
    if (!d) throw pmc::Error(pmc::errc::not_supported, std::string("model refused the CPU: ") + error.data());
    return d;
  }
  [[nodiscard]] const pmc::CpuInfo& cpu() const { return cpu_; }

 private:
  pmc::CpuInfo cpu_;
  std::shared_ptr<const pmc::detail::ModelRegistry> registry_;
  std::shared_ptr<pmc::detail::LoadedModel> model_;
};

// Random choices, seeded.
class Random {
 public:
  explicit Random(u64 seed) : g_(seed) {}
  u64 below(u64 n) { return n == 0 ? 0 : std::uniform_int_distribution<u64>(0, n - 1)(g_); }
  u64 range(u64 lo, u64 hi) { return std::uniform_int_distribution<u64>(lo, hi)(g_); }
  bool chance(unsigned percent) { return below(100) < percent; }
  u64 bits() { return g_(); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::mt19937_64 g_;
};

// One segment of activity as both sides see it.
struct Seg {
  u64 cycles = 1;
  pmc::Mode mode = pmc::Mode::user;
  bool halted = false;
  unsigned ipl = 0;
  std::vector<std::pair<std::string, u64>> signals;

  [[nodiscard]] u64 per_cycle(const std::string& name) const {
    u64 n = 0;
    for (const auto& [s, k] : signals)
      if (s == name) n += k;
    return n;
  }
  [[nodiscard]] pmc::OwnedSegment owned() const {
    pmc::OwnedSegment s(cycles, mode);
    s->halted = halted;
    if (ipl != 0) s.signal("ipl", ipl);  // the Alpha model's level signal
    for (const auto& [name, k] : signals) s.signal(name, k);
    return s;
  }
  [[nodiscard]] std::string str() const {
    std::ostringstream o;
    o << cycles << " cycles " << (mode == pmc::Mode::user ? "user" : "kernel") << (halted ? " halted" : "");
    if (ipl) o << " ipl " << ipl;
    for (const auto& [name, k] : signals) o << " " << name << "=" << k;
    return o.str();
  }
};

// A segment of random length (mostly short: the reference walks every cycle; sometimes long,
// so the model's closed form meets many wraps in one call) with random rates for the signals.
inline Seg random_segment(Random& r, const std::vector<std::string>& signals, unsigned max_rate = 3) {
  Seg s;
  s.cycles = r.chance(90) ? r.range(1, 40) : r.range(41, 3000);
  s.mode = r.chance(50) ? pmc::Mode::user : pmc::Mode::kernel;
  s.halted = r.chance(15);
  for (const auto& name : signals)
    if (r.chance(60)) s.signals.emplace_back(name, r.range(0, max_rate));
  return s;
}

// Disagreements, reported in full for the first few (with everything needed to replay them).
struct Tally {
  unsigned cases = 0, disagreements = 0;
  void report(const std::string& what) {
    if (++disagreements <= 5) BOOST_ERROR(what);
  }
};

// One cycle of a counter programmed through a PerfEvtSel-style register (P6, architectural
// perfmon and AMD read CMASK, INV and E alike: CMASK in bits 31:24, E bit 18, INV bit 23): `k`
// occurrences of the event this cycle; `edge` holds the previous cycle's condition and is
// updated. Returns what the counter adds this cycle:
//  - CMASK 0: every occurrence (INV is ignored);
//  - CMASK > 0: 1 when k >= CMASK (k < CMASK with INV), else 0;
//  - E: 1 only on a cycle whose condition holds after one where it did not.
template <class EdgeRef>  // bool&, or std::vector<bool>'s reference
u64 perfevtsel_cycle(u64 sel, u64 k, EdgeRef&& edge) {
  constexpr u64 kEdge = u64{1} << 18, kInv = u64{1} << 23;
  const u64 cmask = (sel >> 24) & 0xFF;
  const bool cond = cmask == 0 ? k > 0 : (k >= cmask) != ((sel & kInv) != 0);
  u64 add = cmask == 0 ? k : (cond ? 1 : 0);
  if (sel & kEdge) add = (cond && !edge) ? 1 : 0;
  edge = cond;
  return add;
}

inline std::string hex(u64 v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

}  // namespace reference
