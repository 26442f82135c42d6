// LVTPC and the simulated PMI handler (x86_pmi.hpp).
#include "x86_pmi.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace pmc::sim::x86 {

using counting::u128;

namespace {

[[noreturn]] void fault(std::string what) { throw Error(errc::register_fault, std::move(what)); }

// The increment (from 0) that brings the event numbered `event` (from 1), per_time events each.
u128 increment_of(u128 event, u128 per_time) { return (event + per_time - 1) / per_time - 1; }

}  // namespace

Increments increments(std::uint64_t n, u128 k, const counting::Filter& f, bool& asserted) {
  Increments inc;
  if (n == 0) return inc;
  // The condition and what each cycle adds: counting::advance's rules (pmc/sdk/counting.hpp).
  const bool holds = f.cmask == 0 ? k > 0 : (f.inv ? k < f.cmask : k >= f.cmask);
  inc.per_time = k;
  inc.times = n;
  if (f.edge) {
    inc.per_time = 1;
    inc.times = (holds && !asserted) ? 1 : 0;
    inc.first_cycle = true;
  } else if (f.cmask != 0) {
    inc.per_time = 1;
    inc.times = holds ? n : 0;
  }
  asserted = holds;
  return inc;
}

std::optional<std::uint64_t> PmiUnit::first_overflow(std::uint64_t value, unsigned width, const Increments& inc) {
  const u128 modulus = u128{1} << width;
  const u128 total = static_cast<u128>(inc.times) * inc.per_time;
  const u128 to_wrap = modulus - value;
  if (inc.per_time == 0 || total < to_wrap) return std::nullopt;
  return inc.first_cycle ? 0 : static_cast<std::uint64_t>(increment_of(to_wrap, inc.per_time));
}

CounterStep PmiUnit::advance(unsigned c, std::uint64_t value, unsigned width, const Segment& segment,
                             const Increments& inc, bool interrupt) {
  const u128 modulus = u128{1} << width;
  // At most 2^64 cycles of fewer than 2^67 events each (every model's rates): within 128 bits.
  const u128 total = static_cast<u128>(inc.times) * inc.per_time;
  const u128 to_wrap = modulus - value;  // events up to and including the first overflow
  CounterStep out;
  if (inc.per_time == 0 || total < to_wrap) {
    out.value = static_cast<std::uint64_t>(value + total);
    return out;
  }
  const bool sample = interrupt && sampling() && c < kHandlerCounters;
  if (sample && freq_[c] != 0) return advance_at_frequency(c, value, width, segment, inc);
  out.first = inc.first_cycle ? 0 : static_cast<std::uint64_t>(increment_of(to_wrap, inc.per_time));
  const u128 reload = sample ? reload_[c] & (modulus - 1) : 0;
  const u128 period = modulus - reload;  // events from one overflow to the next
  const u128 after = total - to_wrap;
  out.wraps = 1 + after / period;
  out.value = static_cast<std::uint64_t>(reload + after % period);
  if (!sample) return out;

  reloads_[c] = counting::saturating_add(reloads_[c], out.wraps);
  std::uint64_t& level = segment.mode == Mode::kernel ? kernel_ : user_;
  level = counting::saturating_add(level, out.wraps);
  const bool profiled = profile_ != 0 && (profile_ == 2) == (segment.mode == Mode::kernel) &&
                        segment.pc_begin < segment.pc_end && !buckets_.empty();
  if (!profiled) return out;
  // One sample per overflow, at the cycle it happens in: O(samples), the cost of a handler.
  for (u128 k = 0; k < out.wraps; ++k) {
    const u128 event = to_wrap + k * period;
    record(segment, inc.first_cycle ? 0 : static_cast<std::uint64_t>(increment_of(event, inc.per_time)));
  }
  return out;
}

// Overflow by overflow, each reloading the period the handler has just adjusted: one step per
// cycle in which the counter overflows (the overflows of one cycle after the first come in
// closed form: their time delta is 0, so the period stays).
CounterStep PmiUnit::advance_at_frequency(unsigned c, std::uint64_t value, unsigned width, const Segment& segment,
                                          const Increments& inc) {
  const u128 modulus = u128{1} << width;
  const u128 total = static_cast<u128>(inc.times) * inc.per_time;
  std::uint64_t& level = segment.mode == Mode::kernel ? kernel_ : user_;
  const bool profiled = profile_ != 0 && (profile_ == 2) == (segment.mode == Mode::kernel) &&
                        segment.pc_begin < segment.pc_end && !buckets_.empty();
  CounterStep out;
  if (period_[c] == 0) period_[c] = 1;  // a driver that wrote FREQ and no PERIOD: the kernel's start
  u128 pos = 0;  // the segment's events counted so far
  u128 v = value;
  for (;;) {
    const u128 to_wrap = modulus - v;
    if (total - pos < to_wrap) {
      v += total - pos;
      break;
    }
    pos += to_wrap;  // the overflow: event `pos` of the segment
    const std::uint64_t cycle = inc.first_cycle ? 0 : static_cast<std::uint64_t>(increment_of(pos, inc.per_time));
    if (!out.first) out.first = cycle;
    elapsed_[c] += period_[c];  // modulo 2^64, as the register is
    const std::uint64_t t = now_ + cycle;
    if (timed_[c] && t > last_[c]) period_[c] = adjusted_period(c, t - last_[c], width);
    last_[c] = t;
    timed_[c] = true;
    // The other overflows of the same cycle, at the new period.
    const u128 cycle_end = inc.first_cycle ? total : std::min(total, static_cast<u128>(cycle + 1) * inc.per_time);
    const u128 more = (cycle_end - pos) / period_[c];
    pos += more * period_[c];
    elapsed_[c] += static_cast<std::uint64_t>(more * period_[c]);
    const u128 samples = 1 + more;
    out.wraps += samples;
    reloads_[c] = counting::saturating_add(reloads_[c], samples);
    level = counting::saturating_add(level, samples);
    if (profiled) record(segment, cycle, samples);
    v = modulus - period_[c];  // the reload
  }
  out.value = static_cast<std::uint64_t>(v & (modulus - 1));
  return out;
}

std::uint64_t PmiUnit::adjusted_period(unsigned c, std::uint64_t cycles, unsigned width) const {
  const u128 p = period_[c];
  // W = P x CLOCK / (cycles x N): floor(floor(a / b) / c) is floor(a / (b c)), without the product.
  const u128 want = p * clock_hz_ / cycles / freq_[c];
  u128 next = p;
  if (want >= p) next = p + (want - p + 7) / 8;
  else if (p - want > 7) next = p - (p - want - 7) / 8;  // C's division truncates toward 0
  const u128 most = (u128{1} << (width - 1)) - 1;
  return static_cast<std::uint64_t>(std::clamp<u128>(next, 1, most));
}

void PmiUnit::record(const Segment& segment, std::uint64_t cycle, u128 samples) {
  const u128 span = segment.pc_end - segment.pc_begin;
  const std::uint64_t pc =
      segment.pc_begin + static_cast<std::uint64_t>(static_cast<u128>(cycle) * span / segment.cycles);
  if (pc < start_ || pc >= end_) return;
  std::uint64_t& b = buckets_[(pc - start_) / kBucketBytes];
  b = counting::saturating_add(b, samples);
}

void PmiUnit::raised(u128 pmis) {
  if (pmis == 0 || masked() || sampling() || !mask_on_delivery_) return;  // the handler unmasks LVTPC at each PMI
  lvtpc_ |= kLvtMask;  // delivered: the entry masks itself; the others are lost
}

bool PmiUnit::read(std::uint32_t msr, std::uint64_t& value) const {
  switch (msr) {
    case kLvtpc: value = lvtpc_; return true;
    case kHandler: value = handler_ ? 1 : 0; return true;
    case kProfile: value = profile_; return true;
    case kProfileStart: value = start_; return true;
    case kProfileEnd: value = end_; return true;
    case kKernelSamples: value = kernel_; return true;
    case kUserSamples: value = user_; return true;
    case kClock: value = clock_hz_; return true;
    default: break;
  }
  for (auto [base, regs] : {std::pair{kFreq0, &freq_}, std::pair{kPeriod0, &period_}, std::pair{kElapsed0, &elapsed_}})
    if (msr >= base && msr < base + kHandlerCounters) {
      value = (*regs)[msr - base];
      return true;
    }
  if (msr >= kReload0 && msr < kReload0 + kHandlerCounters) {
    value = reload_[msr - kReload0];
    return true;
  }
  if (msr >= kReloads0 && msr < kReloads0 + kHandlerCounters) {
    value = reloads_[msr - kReloads0];
    return true;
  }
  if (msr >= kBucket0 && msr - kBucket0 < kMaxBuckets) {
    if (msr - kBucket0 >= buckets_.size())
      fault(fmt::format("read of register {:#x}: PC profile bucket {} does not exist (the profile has {})", msr,
                        msr - kBucket0, buckets_.size()));
    value = buckets_[msr - kBucket0];
    return true;
  }
  return false;
}

bool PmiUnit::write(std::uint32_t msr, std::uint64_t value) {
  auto only_zero = [&](const char* what) {
    if (value != 0)
      fault(fmt::format("write of {:#x} to register {:#x} ({}): it can only be cleared (written 0)", value, msr, what));
  };
  switch (msr) {
    case kLvtpc:
      if (value > 0xFFFFFFFF) fault(fmt::format("LVTPC (FEE00340H) = {:#x}: a local APIC register has 32 bits", value));
      lvtpc_ = value & kLvtWritable;
      return true;
    case kHandler:
      if (value > 1) fault(fmt::format("PMI HANDLER (register {:#x}) = {:#x}: 1 installs it, 0 removes it", msr, value));
      handler_ = value == 1;
      return true;
    case kProfile:
      if (value > 2)
        fault(fmt::format("PMI PROFILE (register {:#x}) = {:#x}: 0 none, 1 user PCs, 2 kernel PCs", msr, value));
      if (value != 0 && start_ >= end_)
        fault(fmt::format("PMI PROFILE = {}: the range [PSTART, PEND) = [{:#x}, {:#x}) is empty", value, start_, end_));
      if (value != 0 && (end_ - start_ - 1) / kBucketBytes >= kMaxBuckets)
        fault(fmt::format("PMI PROFILE = {}: the range [{:#x}, {:#x}) needs more than {} buckets of {} bytes", value,
                          start_, end_, kMaxBuckets, kBucketBytes));
      profile_ = static_cast<unsigned>(value);
      buckets_.assign(value == 0 ? 0 : static_cast<std::size_t>((end_ - start_ - 1) / kBucketBytes + 1), 0);
      return true;
    case kProfileStart: start_ = value; return true;
    case kProfileEnd: end_ = value; return true;
    case kKernelSamples: only_zero("kernel samples"); kernel_ = 0; return true;
    case kUserSamples: only_zero("user samples"); user_ = 0; return true;
    case kClock:
      fault(fmt::format("write of {:#x} to CLOCK (register {:#x}): read-only; the device setting clock_hz sets it",
                        value, msr));
    default: break;
  }
  if (msr >= kFreq0 && msr < kFreq0 + kHandlerCounters) {
    if (value != 0 && clock_hz_ == 0)
      fault(fmt::format("FREQ[{}] = {}: frequency mode needs the CPU's clock, and CLOCK is 0 (none known)",
                        msr - kFreq0, value));
    freq_[msr - kFreq0] = value;
    timed_[msr - kFreq0] = false;
    return true;
  }
  if (msr >= kPeriod0 && msr < kPeriod0 + kHandlerCounters) {
    if (value == 0) fault(fmt::format("PERIOD[{}] = 0: a period is at least 1 event", msr - kPeriod0));
    period_[msr - kPeriod0] = value;
    return true;
  }
  if (msr >= kElapsed0 && msr < kElapsed0 + kHandlerCounters) {
    only_zero("elapsed events");
    elapsed_[msr - kElapsed0] = 0;
    return true;
  }
  if (msr >= kReload0 && msr < kReload0 + kHandlerCounters) {
    reload_[msr - kReload0] = value;
    return true;
  }
  if (msr >= kReloads0 && msr < kReloads0 + kHandlerCounters) {
    only_zero("reload count");
    reloads_[msr - kReloads0] = 0;
    return true;
  }
  if (msr >= kBucket0 && msr - kBucket0 < kMaxBuckets)
    fault(fmt::format("write of register {:#x}: PC profile buckets are read-only; write PROFILE to empty them", msr));
  return false;
}

}  // namespace pmc::sim::x86
