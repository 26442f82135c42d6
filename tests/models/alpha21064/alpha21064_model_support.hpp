// What the tests of the emulated Alpha 21064 (test_alpha21064_model.cpp and the
// test_alpha21064_model_<topic>.cpp beside it) share: the ICCSR fields and selects of
// docs/hardware/alpha21064.md, the model's register map, segments, a chip counting an ICCSR, and
// the check of a pmc::Error's kind.
#pragma once

#include <pmc/error.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/workload.hpp>

#include "alpha21064.hpp"  // Alpha21064Device, PfmDriver (pmcmodel_alpha21064)

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace alpha21064_model_test {

using pmc::errc;
using pmc::sim::Alpha21064Device;
using pmc::Mode;
using pmc::sim::PfmDriver;
using pmc::Segment;
using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;
namespace a = pmc::sim::alpha21064;

// The ICCSR in write format (sheet 2), written out here rather than taken from the model.
constexpr u64 PC1 = 1ULL << 0, PC0 = 1ULL << 3, DISABLE0 = 1ULL << 35, DISABLE1 = 1ULL << 36;
constexpr u64 mux0(u64 v) { return v << 8; }
constexpr u64 mux1(u64 v) { return v << 32; }
// Selects (sheet 3).
constexpr u64 ISSUES = 0x0, PIPEDRY = 0x2, LOADI = 0x4, BRANCHI = 0x8, CYCLES = 0xA, PALMODE = 0xB,
              NONISSUES = 0xC;
constexpr u64 DCACHE = 0x0, ICACHE = 0x1, DUAL = 0x2, BRANCHMISS = 0x3, FPINST = 0x4, STOREI = 0x6;
// The model's register map (docs in <pmc/sim/alpha21064.hpp>).
constexpr std::uint32_t ICCSR = 0, COUNT0 = 1, COUNT1 = 2, CYCLE_COUNT = 3, PERFMON = 4, LOG = 5,
                        ITEMS = 6, PROFILE = 7, PSTART = 8, PEND = 9, IPLHIS = 0x10, BUCKET = 0x100000;
constexpr u64 ITEM_COUNTERS = 1, ITEM_IPL = 2, ITEM_PROFILING = 4;

inline pmc::OwnedSegment seg(u64 cycles, const std::map<std::string, u64, std::less<>>& signals = {},
                             Mode mode = Mode::user, unsigned ipl = 0) {
  pmc::OwnedSegment s(cycles, mode);
  for (const auto& [name, k] : signals) s.signal(name, k);
  if (ipl != 0) s.signal("ipl", ipl);  // the level signal (docs/workload-format.md)
  return s;
}

inline pmc::OwnedSegment kernel(u64 cycles, unsigned ipl, const std::map<std::string, u64, std::less<>>& signals = {}) {
  return seg(cycles, signals, Mode::kernel, ipl);
}

// A device counting `iccsr`, enabled through the register map.
struct Chip {
  Alpha21064Device d;
  explicit Chip(u64 iccsr, u64 items = ITEM_COUNTERS) {
    d.write(ICCSR, iccsr);
    d.write(ITEMS, items);
    d.write(PERFMON, 1);
  }
};

inline bool faults(const std::function<void()>& f, errc code = errc::register_fault) {
  try {
    f();
  } catch (const pmc::Error& e) {
    return e.kind() == code;
  }
  return false;
}

}  // namespace alpha21064_model_test
