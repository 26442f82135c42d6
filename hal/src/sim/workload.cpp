// The workload's value types (docs/workload-format.md): signal names interned once per
// process, segments, and Workload's compact storage of its segments. The file formats are
// workload_toml.cpp and workload_compact.cpp.
#include "workload_format.hpp"

#include <pmc/error.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace pmc {

using detail::checked_add;
using detail::checked_mul;
using detail::kCycles;

// ---------------------------------------------------------------------------------------------
// Signal names, interned once per process.

namespace {
struct SignalTable {
  std::mutex mutex;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::deque<std::string> names;  // stable storage: signal_name() hands out views of it
  SignalTable() {
    names.emplace_back(kCycles);
    ids.emplace(names.back(), 0);
  }
};
SignalTable& signal_table() {
  static SignalTable table;
  return table;
}
}  // namespace

Signal signal(std::string_view name) {
  SignalTable& t = signal_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) return Signal{it->second};
  const auto id = static_cast<std::uint32_t>(t.names.size());
  t.names.emplace_back(name);
  t.ids.emplace(t.names.back(), id);
  return Signal{id};
}

std::string_view signal_name(Signal s) {
  SignalTable& t = signal_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return s.id < t.names.size() ? std::string_view(t.names[s.id]) : std::string_view();
}

std::uint64_t Segment::per_cycle(std::string_view name) const { return per_cycle(signal(name)); }

OwnedSegment::OwnedSegment(std::uint64_t cycles, Mode mode) {
  segment_.cycles = cycles;
  segment_.mode = mode;
}

OwnedSegment::OwnedSegment(const OwnedSegment& other) : segment_(other.segment_), storage_(other.storage_) {
  segment_.signals = storage_;
}

OwnedSegment& OwnedSegment::operator=(const OwnedSegment& other) {
  if (this != &other) {
    segment_ = other.segment_;
    storage_ = other.storage_;
    segment_.signals = storage_;
  }
  return *this;
}

OwnedSegment& OwnedSegment::signal(std::string_view name, std::uint64_t per_cycle) {
  const Signal id = pmc::signal(name);
  if (id == kCyclesSignal)
    throw Error(errc::invalid_argument, "signal 'cycles' is implicit (1 per unhalted cycle) and cannot be set");
  auto it = std::find_if(storage_.begin(), storage_.end(), [&](const SignalCount& c) { return c.signal == id; });
  if (it != storage_.end()) it->per_cycle = per_cycle;
  else storage_.push_back({id, per_cycle});
  segment_.signals = storage_;
  return *this;
}

// ---------------------------------------------------------------------------------------------
// Workload

void Workload::add(const Segment& s) {
  if (s.cpu > std::numeric_limits<std::uint16_t>::max())
    throw Error(errc::invalid_argument,
                fmt::format("workload '{}': a segment's cpu {} is out of range (below 65536)", name, s.cpu));
  if (s.signals.size() > std::numeric_limits<std::uint16_t>::max())
    throw Error(errc::invalid_argument,
                fmt::format("workload '{}': a segment counts {} signals, more than 65535", name, s.signals.size()));
  if (signals_.size() + s.signals.size() > std::numeric_limits<std::uint32_t>::max() ||
      extras_.size() >= kNoExtra)
    throw Error(errc::invalid_argument, fmt::format("workload '{}': too many signals", name));
  Record r{};
  r.cycles = s.cycles;
  r.first = static_cast<std::uint32_t>(signals_.size());
  r.count = static_cast<std::uint16_t>(s.signals.size());
  r.extra = kNoExtra;
  if (s.pc_begin || s.pc_end || s.pid || s.parent) {
    r.extra = static_cast<std::uint32_t>(extras_.size());
    extras_.push_back({s.pc_begin, s.pc_end, s.pid, s.parent});
  }
  r.cpu = static_cast<std::uint16_t>(s.cpu);
  r.mode = s.mode;
  r.halted = s.halted;
  signals_.insert(signals_.end(), s.signals.begin(), s.signals.end());
  records_.push_back(r);
}

void Workload::reserve(std::size_t segments, std::size_t signals) {
  records_.reserve(segments);
  signals_.reserve(signals);
}

void Workload::clear() {
  records_.clear();
  signals_.clear();
  extras_.clear();
}

Segment Workload::segment(std::size_t i) const {
  const Record& r = records_.at(i);
  Segment s;
  s.cycles = r.cycles;
  s.mode = r.mode;
  s.halted = r.halted;
  if (r.extra != kNoExtra) {
    const Extra& x = extras_[r.extra];
    s.pc_begin = x.pc_begin;
    s.pc_end = x.pc_end;
    s.pid = x.pid;
    s.parent = x.parent;
  }
  s.cpu = r.cpu;
  s.signals = std::span<const SignalCount>(signals_.data() + r.first, r.count);
  return s;
}

std::uint64_t Workload::total_cycles() const {
  std::uint64_t sum = 0;
  for (const Record& r : records_) {
    auto next = checked_add(sum, r.cycles);
    if (!next) {
      throw Error(errc::invalid_argument,
                  fmt::format("workload '{}': total cycles exceed 2^64 - 1", name));
    }
    sum = *next;
  }
  return sum;
}

std::uint64_t Workload::total(std::string_view name_of_signal) const {
  const Signal id = signal(name_of_signal);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Segment s = segment(i);
    auto add = checked_mul(s.cycles, s.per_cycle(id));
    auto next = add ? checked_add(sum, *add) : std::nullopt;
    if (!next) {
      throw Error(
          errc::invalid_argument,
          fmt::format("workload '{}': total of signal '{}' exceeds 2^64 - 1", name, name_of_signal));
    }
    sum = *next;
  }
  return sum;
}

}  // namespace pmc
