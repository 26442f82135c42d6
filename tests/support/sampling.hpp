// Sampling tests' shared parts (tests/backends/*/test_*_sampling.cpp): the hand-worked
// workload tests/data/workloads/hand-worked-sampling.toml, a session profiled over it, and the
// buckets of a PC profile that hold samples.
#pragma once

#include <pmc/hal.hpp>
#include <pmc/profile.hpp>
#include <pmc/workload.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace pmc_test {

inline pmc::Workload hand_worked_sampling() {
  return pmc::load_workload(std::string(PMC_TEST_DATA) + "/workloads/hand-worked-sampling.toml");
}

struct Profiled {
  std::vector<std::uint64_t> counts;
  pmc::LevelHistogram levels;
  pmc::PcProfile profile;
};

// A session of the CPU of data/cpuid/<dump> (access "auto": sim for a dump) counting `events`,
// profiled over `range`, after one run of the hand-worked workload.
inline Profiled profile_hand_worked(const std::string& dump, const std::vector<std::string>& events,
                                    const pmc::PcRange& range) {
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/" + dump;
  pmc::Session s = pmc::Hal::open(cfg).session();
  for (const auto& e : events) s.add(e);
  s.profile({true, range});
  s.run(hand_worked_sampling());
  Profiled out;
  for (const auto& r : s.read()) out.counts.push_back(r.value);
  const auto levels = s.level_histograms();
  const auto profiles = s.pc_profiles();
  BOOST_REQUIRE_EQUAL(levels.size(), 1u);
  BOOST_REQUIRE_EQUAL(profiles.size(), 1u);
  out.levels = levels.front();
  out.profile = profiles.front();
  return out;
}

// The samples of the level bin whose label starts with `prefix` ("user", "kernel").
inline std::uint64_t level_samples(const pmc::LevelHistogram& h, const std::string& prefix) {
  for (const auto& b : h.bins)
    if (b.label.rfind(prefix, 0) == 0) return b.samples;
  BOOST_FAIL("no level bin " + prefix);
  return 0;
}

// A bucket of a PC profile that holds samples.
struct Filled {
  std::uint64_t bucket = 0;
  std::uint64_t samples = 0;
  friend bool operator==(const Filled&, const Filled&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Filled& f) {
    return out << "bucket " << f.bucket << ": " << f.samples;
  }
};
using Buckets = std::vector<Filled>;

// The buckets with samples.
inline Buckets filled_buckets(const pmc::PcProfile& p) {
  Buckets out;
  for (std::size_t b = 0; b < p.samples.size(); ++b)
    if (p.samples[b] != 0) out.push_back({b, p.samples[b]});
  return out;
}

inline const pmc::PcRange kHandWorkedUser{pmc::AddressSpace::user, 0x400000, 0x400400};
inline const pmc::PcRange kHandWorkedKernel{pmc::AddressSpace::kernel, 0xC0100000, 0xC0100100};

}  // namespace pmc_test
