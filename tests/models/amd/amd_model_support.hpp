// What the tests of the AMD core PMU device model (test_amd_model.cpp and the
// test_amd_model_<topic>.cpp beside it) share: the MSRs, PERF_CTL fields and events of
// docs/hardware/amd.md (section numbers in brackets), the bundled AMD dumps, segments, the check of
// a #GP, the config of a simulated CPU, and a session's reading of an event.
#pragma once

#include "support/model_checks.hpp"

#include "amd_model.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace amd_model_test {

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
inline pmc::CpuInfo dump_cpu(const std::string& file) { return pmc::load_cpuid_dump(kSource / "data" / "cpuid" / file); }

// The bundled CPUs (CPUID words in tests/backends/amd/test_amd_probe.cpp): K7 family 6 model 4 (legacy, local
// APIC); K8 revision F; family 10h revision C; family 15h (PerfCtrExtCore); Zen 3 (PerfCtrExtCore,
// no PerfMonV2); Zen 4 Genoa (PerfMonV2, EBX[3:0] = 6); Zen 4 in a KVM guest (legacy).
inline pmc::CpuInfo k7_cpu() { return dump_cpu("amd-k7.txt"); }
inline pmc::CpuInfo zen3_cpu() { return dump_cpu("amd-zen3.txt"); }
inline pmc::CpuInfo genoa_cpu() { return dump_cpu("amd-zen4-genoa.txt"); }

using pmc_test::seg;  // tests/support/model_checks.hpp

// Whether f raises pmc::Error(register_fault) (a #GP).
inline bool gp(const std::function<void()>& f) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.kind() == errc::register_fault;
  }
  return false;
}

inline pmc::Config config_for(const std::string& file) {
  pmc::Config cfg;  // built here: the user's config file is never read
  cfg.cpu = (kSource / "data" / "cpuid" / file).string();
  cfg.backend = "auto";
  cfg.access = "sim";
  return cfg;
}

inline const pmc::Reading& reading(const std::vector<pmc::Reading>& rs, const std::string& event) {
  for (const auto& r : rs)
    if (r.event == event) return r;
  throw std::runtime_error("no reading for " + event);
}

}  // namespace amd_model_test
