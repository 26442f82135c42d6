#include "runner.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

namespace pmc::detail {

namespace {

// An upper bound of the events any counter can add per cycle of `s`: every event counts one
// signal, or a sum of distinct signals (MESI states, self + other, a name and its alias), or at
// most 1 per cycle (CMASK, edge detect, unhalted cycles). Saturates at 2^64 - 1.
std::uint64_t max_events_per_cycle(const Segment& s) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t sum = 0;
  for (const auto& c : s.signals) sum = c.per_cycle > kMax - sum ? kMax : sum + c.per_cycle;
  return std::max<std::uint64_t>(sum, 1);
}

// The width of the PMU's narrowest counter.
unsigned narrowest_width(const PmuInfo& pmu) {
  unsigned width = 64;
  for (const auto& c : pmu.counters) width = std::min(width, c.width);
  return width;
}

// Runs `body` with the target started, stopping it after when this call started it (also when
// `body` throws: then the first error is the one reported).
template <class Body>
WorkloadRun while_started(RunTarget& target, Body&& body) {
  const bool was_running = target.running();
  if (!was_running) target.start();
  WorkloadRun out;
  try {
    out = body();
  } catch (...) {
    if (!was_running) {
      try {
        target.stop();
      } catch (...) {  // the first error is the one to report
      }
    }
    throw;
  }
  if (!was_running) target.stop();
  return out;
}

std::atomic<bool> g_closed_form_rotation{true};

}  // namespace

bool closed_form_rotation() { return g_closed_form_rotation.load(std::memory_order_relaxed); }
void set_closed_form_rotation(bool on) { g_closed_form_rotation.store(on, std::memory_order_relaxed); }

WorkloadRun run_workload(RunTarget& target, const PmuInfo& pmu, const Workload& workload) {
  RegisterAccess& regs = target.simulated();
  Device& device = *regs.device();
  SignalMap* const names = target.signal_map();
  const unsigned width = narrowest_width(pmu);
  if (width < 2)
    throw Error(errc::invalid_argument, fmt::format("counter width {} is not in 2..64", width));
  // A chunk may add at most half the counter range minus one, so a reader that folds the
  // difference of two readings modulo 2^width can never miss a wrap.
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  // Every segment's rate is checked before anything runs, so a refused workload counts nothing.
  for (std::size_t index = 0; index < workload.size(); ++index) {
    const Segment segment = workload.segment(index);
    if (names) names->learn(segment);  // every event-named signal resolved before anything runs
    const std::uint64_t rate = max_events_per_cycle(segment);
    if (segment.cycles != 0 && budget / rate == 0)
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {}: up to {} events per cycle overflow half of a {}-bit counter in a single "
                              "cycle",
                              workload.source.empty() ? workload.name : workload.source, index + 1, rate, width));
  }
  // A segment of more chunks than this is fast-forwarded (below) when it can be.
  constexpr std::uint64_t kChunksBeforeFastForward = 64;
  // A multiplexed segment of more rounds than this is rotated in closed form (below).
  constexpr std::uint64_t kRoundsBeforeClosedForm = 4;
  const bool samples = target.samples();
  // The segment being run, as the workload gives it: its PCs and length, and the cycles of it
  // run so far.
  std::uint64_t pc_begin = 0, pc_end = 0, whole = 0, done = 0;
  // Runs `chunk` cycles of the segment, then folds the counters. A chunk of cycles [o, o + L) of
  // a segment of N cycles over pc = [b, e) runs over [b + floor(o (e - b) / N),
  // b + floor((o + L) (e - b) / N)) (at least one byte), so that the PC a device gives a cycle
  // (docs/workload-format.md, `pc`) is about the one it has in the whole segment.
  auto run_chunk = [&](Segment& segment, std::uint64_t cycles) {
    segment.cycles = cycles;
    if (pc_begin < pc_end && cycles != whole) {
      __extension__ typedef unsigned __int128 u128;  // cycles x bytes
      const auto at = [&](std::uint64_t c) {
        return pc_begin + static_cast<std::uint64_t>(static_cast<u128>(c) * (pc_end - pc_begin) / whole);
      };
      segment.pc_begin = at(done);
      segment.pc_end = std::max(at(done + cycles), segment.pc_begin + 1);
    }
    done += cycles;
    device.run(segment);
    regs.advance(cycles);  // the session's time; the next set when the slice is over
    target.poll();
  };
  // Segment length costs nothing (docs/workload-format.md): every cycle of a segment is the
  // same, so after its first chunk (an edge detector may count the segment's start) each chunk
  // adds the same amount to a counter. Three chunks are run and measured; when the second and
  // third agree (a whole number per cycle), the device runs the rest in one call, and each
  // event's total gets the exact count, per cycle x cycles, of which the fold saw only the part
  // modulo 2^width. Returns the cycles left to run chunk by chunk (0 when done).
  std::vector<std::uint64_t> t0, t1, t2;
  auto fast_forward = [&](std::size_t index, Segment& segment, std::uint64_t chunk, std::uint64_t total) {
    auto totals = [&](std::vector<std::uint64_t>& t) {
      t.resize(regs.events());
      for (std::size_t e = 0; e < t.size(); ++e) t[e] = regs.total(e);
    };
    run_chunk(segment, chunk);
    totals(t0);
    run_chunk(segment, chunk);
    totals(t1);
    run_chunk(segment, chunk);
    totals(t2);
    const std::uint64_t left = total - 3 * chunk;
    for (std::size_t e = 0; e < t0.size(); ++e) {
      const std::uint64_t per_chunk = t1[e] - t0[e];
      if (t2[e] - t1[e] != per_chunk || per_chunk % chunk != 0) return left;  // not uniform: chunk by chunk
    }
    run_chunk(segment, left);
    for (std::size_t e = 0; e < t0.size(); ++e) {
      const std::uint64_t exact = (t1[e] - t0[e]) / chunk * left;  // modulo 2^64, as the total is
      const std::uint64_t folded = regs.total(e) - t2[e];
      if (((exact - folded) & regs.counter(e)->width_mask()) != 0)
        throw Error(errc::plugin,
                    fmt::format("{}: segment {}: device model '{}' counted {} per cycle on counter {} over {} cycles, "
                                "then a count that differs from {} x {} modulo 2^{}: the model does not count a "
                                "uniform segment uniformly",
                                workload.source.empty() ? workload.name : workload.source, index + 1, device.name(),
                                (t1[e] - t0[e]) / chunk, regs.counter(e)->index, 2 * chunk, (t1[e] - t0[e]) / chunk,
                                left, regs.counter(e)->width));
      regs.add_to_total(e, exact - folded);
    }
    return std::uint64_t{0};
  };
  // Multiplexing (several event sets) in closed form: a uniform segment counts the same in
  // every slice of a set, so after the sets have taken turns slice by slice up to a slice start
  // and then for two whole rounds that agree slice by slice, W more whole rounds are run as one
  // chunk per set of W slices: the device counts the chunk in closed form, the access's clock
  // advances by W slices and rotates once (each set's running time grows by W slices, as W
  // rotations would give it), and each event's total gets the exact W x its slice's count, of
  // which the fold saw the part modulo 2^width. Counts, time enabled and time running are those
  // of the slice-by-slice loop (tests/hal/session/test_multiplex_closed_form.cpp). Not when the
  // target samples (each slice restarts the sampling counters): then slice by slice. Returns
  // the cycles left to run slice by slice.
  std::vector<std::uint64_t> before, snap;
  std::vector<std::uint64_t> round1, round2;  // per slice of a round, per event: its count
  auto rotate_in_closed_form = [&](std::size_t index, Segment& segment, std::uint64_t chunk, std::uint64_t total) {
    const std::size_t sets = regs.set_count();
    const std::size_t events = regs.events();
    std::uint64_t left = total;
    auto one_slice = [&] {  // to the end of the active set's slice, chunk by chunk
      std::uint64_t in_slice = regs.cycles_to_rotation();
      while (in_slice > 0 && left > 0) {
        const std::uint64_t cycles = std::min({left, chunk, in_slice});
        left -= cycles;
        in_slice -= cycles;
        run_chunk(segment, cycles);
      }
    };
    auto a_round = [&](std::vector<std::uint64_t>& counts) {  // sets slices: each event's count in each
      counts.assign(sets * events, 0);
      for (std::size_t k = 0; k < sets; ++k) {
        before.resize(events);
        for (std::size_t e = 0; e < events; ++e) before[e] = regs.total(e);
        one_slice();
        for (std::size_t e = 0; e < events; ++e) counts[k * events + e] = regs.total(e) - before[e];
      }
    };
    one_slice();  // to a slice start (the segment's first cycles, where an edge may count, in it)
    const std::uint64_t slice = regs.cycles_to_rotation();  // a whole slice: the rotation just happened
    const std::size_t first = regs.active_set();
    a_round(round1);
    a_round(round2);
    const std::uint64_t round = slice * sets;
    const std::uint64_t whole_rounds = left / round;
    if (whole_rounds == 0 || round1 != round2 || regs.active_set() != first || regs.cycles_to_rotation() != slice)
      return left;  // not uniform (or too short): slice by slice
    for (std::size_t k = 0; k < sets; ++k) {
      snap.resize(events);
      for (std::size_t e = 0; e < events; ++e) snap[e] = regs.total(e);
      run_chunk(segment, whole_rounds * slice);  // folds, and rotates to the next set
      left -= whole_rounds * slice;
      for (std::size_t e = 0; e < events; ++e) {
        const std::uint64_t exact = round2[k * events + e] * whole_rounds;  // modulo 2^64, as the total is
        const std::uint64_t folded = regs.total(e) - snap[e];
        if (((exact - folded) & regs.counter(e)->width_mask()) != 0)
          throw Error(errc::plugin,
                      fmt::format("{}: segment {}: device model '{}' counted {} on counter {} in each of two slices, "
                                  "then a count that differs from {} x {} modulo 2^{} over {} slices at once: the "
                                  "model does not count a uniform segment uniformly",
                                  workload.source.empty() ? workload.name : workload.source, index + 1, device.name(),
                                  round2[k * events + e], regs.counter(e)->index, round2[k * events + e], whole_rounds,
                                  regs.counter(e)->width, whole_rounds));
        regs.add_to_total(e, exact - folded);
      }
    }
    return left;
  };
  WorkloadRun out = while_started(target, [&] {
    WorkloadRun run;
    for (std::size_t index = 0; index < workload.size(); ++index) {
      // Signals named after catalog events become the device's own (signal_map.hpp); this is
      // where every segment, read from a file or built by the emulation layer, meets the device.
      Segment segment = names ? names->apply(workload.segment(index)) : workload.segment(index);
      if (segment.cycles == 0) continue;
      pc_begin = segment.pc_begin;
      pc_end = segment.pc_end;
      whole = segment.cycles;
      done = 0;
      run.cycles += segment.cycles;
      if (!device.executes(segment)) run.cycles_not_counted += segment.cycles;
      // A 64-bit counter needs no split: its fold modulo 2^64 is the 64-bit total's own
      // arithmetic.
      const std::uint64_t chunk = width == 64 ? segment.cycles : budget / max_events_per_cycle(segment);
      const std::uint64_t total = segment.cycles;
      std::uint64_t left = total;
      if (total / chunk > kChunksBeforeFastForward && regs.set_count() < 2)
        left = fast_forward(index, segment, chunk, total);
      else if (regs.set_count() >= 2 && closed_form_rotation() && !samples &&
               total / std::max<std::uint64_t>(regs.cycles_to_rotation(), 1) >
                   kRoundsBeforeClosedForm * regs.set_count())
        left = rotate_in_closed_form(index, segment, chunk, total);
      while (left > 0) {
        // Multiplexing: a chunk ends where the active event set's slice does (issue 14).
        const std::uint64_t cycles = std::min({left, chunk, regs.cycles_to_rotation()});
        left -= cycles;
        run_chunk(segment, cycles);
      }
    }
    return run;
  });
  out.interrupts = device.interrupts();
  return out;
}

// Every segment is checked as a workload is (the rate that a chunk of the narrowest counter's
// half range must hold, and the reader's own checks) before anything runs; then the file is
// read again and counted batch by batch.
WorkloadRun run_workload(RunTarget& target, const PmuInfo& pmu, WorkloadReader& reader) {
  const unsigned width = narrowest_width(pmu);
  if (width < 2) return run_workload(target, pmu, Workload{});  // its refusal
  const std::uint64_t budget = (std::uint64_t{1} << (width - 1)) - 1;
  target.simulated();  // the device first: the signal map resolves names for it
  SignalMap* const names = target.signal_map();
  reader.rewind();
  std::size_t index = 0;
  while (const Segment* segment = reader.next()) {
    ++index;
    if (names) names->learn(*segment);
    const std::uint64_t rate = max_events_per_cycle(*segment);
    if (segment->cycles != 0 && budget / rate == 0)
      throw Error(errc::invalid_argument,
                  fmt::format("{}: segment {}: up to {} events per cycle overflow half of a {}-bit counter in a single "
                              "cycle",
                              reader.where(), index, rate, width));
  }
  reader.rewind();
  constexpr std::size_t kBatch = 4096;
  Workload batch;
  batch.name = reader.name();
  batch.source = reader.source();
  return while_started(target, [&] {
    WorkloadRun out;
    for (bool more = true; more;) {
      batch.clear();
      while (batch.size() < kBatch) {
        const Segment* segment = reader.next();
        if (!segment) {
          more = false;
          break;
        }
        batch.add(*segment);
      }
      if (batch.empty()) break;
      const WorkloadRun part = run_workload(target, pmu, batch);
      out.cycles += part.cycles;
      out.cycles_not_counted += part.cycles_not_counted;
      out.interrupts = part.interrupts;  // the device's total
    }
    return out;
  });
}

}  // namespace pmc::detail
