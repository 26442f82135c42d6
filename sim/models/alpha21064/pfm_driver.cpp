// The OSF/1 pfm(7) pseudo-device of an emulated Alpha 21064 multiprocessor (PfmDriver,
// alpha21064.hpp): open modes, the ioctls and read(2) over the CPUs' Alpha21064Device. The C
// shim <pmc/pfm.h> (sim/models/alpha21064/pfm/pfm.cpp) is its user-space face.
//
// Sources: docs/hardware/alpha21064.md ("sheet", by section) and the OSF/1 3.0 pfm(7) manual
// page ("pfm(7)"). The chip's policies [U1]..[U11] are listed at the top of
// alpha21064_model.cpp; the driver's are these:
//
//  [U12] Handles: busy is per CPU. PCNTOPENONE needs the caller bound to a CPU (EINVAL if it
//       is not, ENODEV if that CPU does not exist) and finds it busy (EBUSY) only if that CPU is
//       open; EACH and ALL need every CPU free. Open flags without a mode are EINVAL.
//  [U13] Open: PCNTDISABLE, PCNTLOGALL, items = PFM_COUNTERS (pfm(7)); counts, IPL histogram
//       and the ICCSR are kept. Close: PCNTDISABLE and the profile buffer is freed.
//  [U14] ioctls act on every CPU the handle opened. ALL aggregates by summing (pr_cycle too).
//  [U15] PCNTSETITEMS refuses 0 and bits other than 1, 2, 4 (EINVAL). PCNTSETUADDR/KADDR need
//       PFM_PROFILING among the items (pfm(7) "open for profiling") and start < end (EINVAL);
//       a range of 2^24 bytes (2^20 buckets) or more per CPU is ENOMEM. Setting a range
//       starts an empty profile and selects that mode (user or kernel), replacing the other.
//  [U16] GETRSIZE = 4 bytes per bucket, ceil((end - start) / 16) buckets (pfm(7): one fourth
//       of the range), times the CPUs for EACH. read(2) returns the buckets as 32-bit counts
//       (modulo 2^32), from the first one each time.
#include "alpha21064_model.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

namespace pmc::sim {

using namespace alpha21064;

PfmDriver::PfmDriver(unsigned cpus) : processes_(std::make_shared<ProcessTable>()) {
  if (cpus == 0 || cpus > kMaxCpus) {
    throw Error(errc::invalid_argument, fmt::format("{} CPUs: the emulated system has 1..{}", cpus, kMaxCpus));
  }
  for (unsigned i = 0; i < cpus; ++i) cpus_.push_back(std::make_unique<Alpha21064Device>(i, processes_));
  busy_.assign(cpus, false);
}

Alpha21064Device& PfmDriver::cpu(unsigned index) {
  if (index >= cpus_.size()) {
    throw Error(errc::invalid_argument, fmt::format("CPU {} does not exist (the system has {})", index, cpus()));
  }
  return *cpus_[index];
}

void PfmDriver::run(const Segment& segment) { cpu(segment.cpu).run(segment); }

void PfmDriver::run(const Workload& workload) {
  for (std::size_t i = 0; i < workload.size(); ++i) {
    if (workload.segment(i).cpu >= cpus_.size()) {
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {} runs on CPU {}, but the emulated system has {} CPU(s)",
                              workload.source.empty() ? workload.name : workload.source, i + 1,
                              workload.segment(i).cpu, cpus()));
    }
  }
  for (std::size_t i = 0; i < workload.size(); ++i) {
    const Segment s = workload.segment(i);
    cpus_[s.cpu]->run(s);
  }
}

const PfmDriver::Open* PfmDriver::find(int handle) const {
  auto it = open_.find(handle);
  return it == open_.end() ? nullptr : &it->second;
}

std::vector<Alpha21064Device*> PfmDriver::cpus_of(const Open& o) {
  std::vector<Alpha21064Device*> out;
  if (o.mode == kOpenOne) {
    out.push_back(cpus_[o.cpu].get());
  } else {
    for (auto& c : cpus_) out.push_back(c.get());
  }
  return out;
}

void PfmDriver::syscall_return(const Open& o) {
  for (auto* c : cpus_of(o)) c->set_ipl(c->ipl());  // [U5], [U14]
}

int PfmDriver::open(int flags, const Caller& caller, int& handle) {
  const int mode = flags & kOpenMask;
  Open o{mode, 0};
  if (mode == kOpenOne) {
    if (!caller.bound_cpu) return EINVAL;  // pfm(7): must be bound "or the open will fail" [U12]
    if (*caller.bound_cpu >= cpus_.size()) return ENODEV;
    if (busy_[*caller.bound_cpu]) return EBUSY;
    o.cpu = *caller.bound_cpu;
    busy_[o.cpu] = true;
  } else if (mode == kOpenEach || mode == kOpenAll) {
    if (std::find(busy_.begin(), busy_.end(), true) != busy_.end()) return EBUSY;
    busy_.assign(busy_.size(), true);
  } else {
    return EINVAL;
  }
  handle = next_handle_++;
  open_[handle] = o;
  for (auto* c : cpus_of(o)) {  // [U13]
    (void)c->wrperfmon(0, 0);
    (void)c->wrperfmon(3, kLogAll);
    c->set_items(kItemCounters);
  }
  syscall_return(o);
  return 0;
}

int PfmDriver::close(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) {
    (void)c->wrperfmon(0, 0);
    c->set_profile(ProfileMode::off, 0, 0);
  }
  syscall_return(*o);
  if (o->mode == kOpenOne) busy_[o->cpu] = false;
  else busy_.assign(busy_.size(), false);
  open_.erase(handle);
  return 0;
}

int PfmDriver::disable(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(0, 0);
  syscall_return(*o);
  return 0;
}

int PfmDriver::enable(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(1, 0);
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_mux(int handle, std::uint64_t iccsr) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (!refusal(iccsr).empty()) return EINVAL;  // pfm(7): disable = 3; sheet 5.3: undefined MUX0
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(2, iccsr);
  syscall_return(*o);
  return 0;
}

int PfmDriver::log_all(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(3, kLogAll);
  syscall_return(*o);
  return 0;
}

int PfmDriver::log_select(int handle, const Caller& caller) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (caller.pid != 0) processes_->set_monitored(caller.pid, true);  // pfm(7): "for this process"
  for (auto* c : cpus_of(*o)) (void)c->wrperfmon(3, kLogSelect);
  syscall_return(*o);
  return 0;
}

int PfmDriver::clear(int handle) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  const unsigned items = cpus.front()->items();
  if (!(items & (kItemCounters | kItemIpl))) return EINVAL;  // pfm(7): profiling only
  for (auto* c : cpus) {
    if (items & kItemCounters) c->clear_counts();
    if (items & kItemIpl) c->clear_ipl_histogram();
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_counts(int handle, std::vector<Counts>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (!(cpus.front()->items() & kItemCounters)) return EINVAL;  // pfm(7)
  out.clear();
  for (auto* c : cpus) {
    Counts n{c->interrupt_count(0), c->interrupt_count(1), c->cycle_count()};
    if (o->mode == kOpenAll && !out.empty()) {  // [U14]
      out[0].cntr0 = sat_add(out[0].cntr0, n.cntr0);
      out[0].cntr1 = sat_add(out[0].cntr1, n.cntr1);
      out[0].cycles = sat_add(out[0].cycles, n.cycles);
    } else {
      out.push_back(n);
    }
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_ipl_histograms(int handle, std::vector<IplHistogram>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (!(cpus.front()->items() & kItemIpl)) return EINVAL;  // pfm(7)
  out.clear();
  for (auto* c : cpus) {
    if (o->mode == kOpenAll && !out.empty()) {
      for (std::size_t k = 0; k < kIplSlots; ++k) out[0][k] = sat_add(out[0][k], c->ipl_histogram()[k]);
    } else {
      out.push_back(c->ipl_histogram());
    }
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::get_rsize(int handle, std::uint64_t& bytes) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  const Alpha21064Device& c = *cpus.front();
  bytes = 0;
  if ((c.items() & kItemProfiling) && c.profile().mode != ProfileMode::off) {  // [U16]
    bytes = 4 * c.profile().buckets.size() * (o->mode == kOpenEach ? cpus.size() : 1);
  }
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_items(int handle, std::int64_t items) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  if (items <= 0 || items > static_cast<std::int64_t>(kItemsAll)) return EINVAL;  // pfm(7), [U15]
  for (auto* c : cpus_of(*o)) c->set_items(static_cast<unsigned>(items));
  syscall_return(*o);
  return 0;
}

int PfmDriver::set_range(int handle, ProfileMode mode, std::uint64_t start, std::uint64_t end) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  const auto cpus = cpus_of(*o);
  if (mode == ProfileMode::off || !(cpus.front()->items() & kItemProfiling)) return EINVAL;
  if (start >= end) return EINVAL;
  if ((end - start) / kBucketBytes >= kMaxProfileBuckets) return ENOMEM;  // [U15]
  for (auto* c : cpus) c->set_profile(mode, start, end);
  syscall_return(*o);
  return 0;
}

int PfmDriver::read_profile(int handle, std::vector<std::uint32_t>& out) {
  const Open* o = find(handle);
  if (!o) return EBADF;
  std::uint64_t bytes = 0;
  if (int e = get_rsize(handle, bytes)) return e;
  out.clear();
  if (bytes == 0) return 0;
  const auto cpus = cpus_of(*o);
  const std::size_t n = cpus.front()->profile().buckets.size();
  if (o->mode == kOpenEach) {
    for (auto* c : cpus)
      for (std::uint64_t v : c->profile().buckets) out.push_back(static_cast<std::uint32_t>(v));  // [U16]
  } else {
    std::vector<std::uint64_t> sum(n, 0);
    for (auto* c : cpus)
      for (std::size_t k = 0; k < n; ++k) sum[k] = sat_add(sum[k], c->profile().buckets[k]);
    for (std::uint64_t v : sum) out.push_back(static_cast<std::uint32_t>(v));
  }
  return 0;
}

int PfmDriver::entries(int handle, std::size_t& n) const {
  const Open* o = find(handle);
  if (!o) return EBADF;
  n = o->mode == kOpenEach ? cpus_.size() : 1;
  return 0;
}

}  // namespace pmc::sim