// pmc profile: where a command (Linux perf sampling) or a simulated workload (the backend's
// driver at counter interrupts) spends its samples, by execution level and by PC.
#include "cli.hpp"
#include "emulate.hpp"
#include "emulate_profile.hpp"
#include "profile_report.hpp"
#include "profile_unwind.hpp"
#include "stat.hpp"

#include <pmc/process.hpp>

#include <algorithm>
#include <charconv>
#include <memory>

namespace pmc_cli {

pmc::PcRange parse_pc_range(const std::string& text, bool kernel) {
  auto number = [&](std::string part) {
    part.erase(std::remove(part.begin(), part.end(), '_'), part.end());
    int base = 10;
    if (part.size() > 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
      part.erase(0, 2);
      base = 16;
    }
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v, base);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw pmc::Error(pmc::errc::invalid_argument,
                       fmt::format("'{}' is not START:END, two addresses such as 0x120000000:0x120001000", text));
    return v;
  };
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("'{}' is not START:END, two addresses such as 0x120000000:0x120001000", text));
  pmc::PcRange r;
  r.space = kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user;
  r.start = number(text.substr(0, colon));
  r.end = number(text.substr(colon + 1));
  if (r.start >= r.end)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("'{}' is an empty range: START must be below END (END is exclusive)", text));
  return r;
}

// Without --pc: the workload's busiest code in the address space asked for, that is, of the
// overlapping `pc` ranges of its user (or kernel) segments merged, the one run for the most
// cycles. nullopt when no segment of that space has a `pc`.
namespace {

std::optional<pmc::PcRange> busiest_code(const pmc::Workload& w, bool kernel) {
  struct Span {
    std::uint64_t begin, end, cycles;
  };
  std::vector<Span> spans;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const pmc::Segment s = w.segment(i);
    if ((s.mode == pmc::Mode::kernel) == kernel && s.pc_begin < s.pc_end)
      spans.push_back({s.pc_begin, s.pc_end, s.cycles});
  }
  if (spans.empty()) return std::nullopt;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, s.end);
      merged.back().cycles += s.cycles;
    } else {
      merged.push_back(s);
    }
  }
  const Span& best = *std::max_element(merged.begin(), merged.end(),
                                       [](const Span& a, const Span& b) { return a.cycles < b.cycles; });
  return pmc::PcRange{kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user, best.begin, best.end};
}

std::string bar(std::uint64_t value, std::uint64_t max, std::size_t width = 40) {
  if (max == 0 || value == 0) return {};
  const auto n = static_cast<std::size_t>((static_cast<double>(value) * static_cast<double>(width)) / static_cast<double>(max) + 0.5);
  return std::string(std::max<std::size_t>(n, 1), '#');
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

const char* space_name(pmc::AddressSpace s) { return s == pmc::AddressSpace::kernel ? "kernel" : "user"; }

// The `levels` and `pc_profile` members of a profile's JSON document; `chosen` says where the
// range came from.
void profile_json(json& out, const pmc::LevelHistogram* levels, const pmc::PcProfile* profile, std::size_t top,
                  const std::string& chosen) {
  if (levels) {
    json bins = json::array();
    for (const auto& b : levels->bins) bins.push_back({{"label", b.label}, {"samples", b.samples}});
    out["levels"] = {{"total", levels->total()}, {"bins", bins}};
  } else {
    out["levels"] = nullptr;
  }
  if (profile) {
    const std::size_t with_samples = static_cast<std::size_t>(
        std::count_if(profile->samples.begin(), profile->samples.end(), [](std::uint64_t v) { return v != 0; }));
    json hottest = json::array();
    for (const auto& b : profile->hottest(top))
      hottest.push_back({{"start", hex(b.start)}, {"end", hex(b.end)}, {"samples", b.samples}});
    out["pc_profile"] = {{"space", space_name(profile->range.space)},
                         {"start", hex(profile->range.start)},
                         {"end", hex(profile->range.end)},
                         {"chosen", chosen},
                         {"bucket_bytes", profile->bucket_bytes},
                         {"buckets", profile->samples.size()},
                         {"buckets_with_samples", with_samples},
                         {"total", profile->total()},
                         {"hottest", hottest}};
  } else {
    out["pc_profile"] = nullptr;
  }
}

// The level histogram as bars scaled to the fullest bin; `samples` names what a sample is.
void print_levels(std::FILE* out, const pmc::LevelHistogram& levels, const char* samples) {
  std::uint64_t max = 0;
  for (const auto& b : levels.bins) max = std::max(max, b.samples);
  print_to(out, " Execution level at each of the {} {}:\n\n", group_digits(levels.total()), samples);
  for (const auto& b : levels.bins)
    print_to(out, "   {:<16} {:>12} {:>6.1f}%  |{}\n", b.label, group_digits(b.samples), percent(b.samples, levels.total()),
               bar(b.samples, max));
  print_to(out, "\n");
}

// The PC profile's hottest buckets; `chosen_note` (when the range was not given) says how it was
// chosen.
void print_pc_profile(std::FILE* out, const pmc::PcProfile& profile, std::size_t top, const std::string& chosen_note,
                      const char* none) {
  const std::size_t with_samples = static_cast<std::size_t>(
      std::count_if(profile.samples.begin(), profile.samples.end(), [](std::uint64_t v) { return v != 0; }));
  print_to(out, " PC profile of {} addresses [{}, {}): {} buckets of {} bytes, {} samples\n",
             space_name(profile.range.space), hex(profile.range.start), hex(profile.range.end),
             group_digits(profile.samples.size()), profile.bucket_bytes, group_digits(profile.total()));
  if (!chosen_note.empty()) print_to(out, " ({}; choose a range with --pc START:END)\n", chosen_note);
  const auto hottest = profile.hottest(top);
  if (hottest.empty()) {
    print_to(out, " No {} fell in this range.\n\n", none);
    return;
  }
  print_to(out, " Hottest {} of the {} buckets with samples:\n\n", hottest.size(), with_samples);
  const std::uint64_t max = hottest.front().samples;
  for (const auto& b : hottest)
    print_to(out, "   {:<37} {:>12} {:>6.1f}%  |{}\n", hex(b.start) + "-" + hex(b.end - 1), group_digits(b.samples),
               percent(b.samples, profile.total()), bar(b.samples, max));
  print_to(out, "\n");
}

int profile_workload(const Options& o) {
  const pmc::Hal& hal = open_hal(o);
  (void)hal.require_backend();
  std::vector<std::string> events = split_events(o.events);
  if (events.empty()) events = {"cycles"};
  std::optional<pmc::PcRange> asked;
  if (!o.pc_range.empty()) asked = parse_pc_range(o.pc_range, o.kernel);
  std::optional<pmc::PcRange> range;
  std::vector<EventGroup> groups;
  for (const auto& e : events) groups.push_back({{e}, false});
  const SimulatedRun run = run_simulated(hal, o, groups, [&](pmc::Session& s, const pmc::Workload& w) {
    range = asked ? asked : busiest_code(w, o.kernel);
    pmc::ProfileRequest request;
    request.levels = true;
    request.pc = range;
    try {
      s.profile(request);
    } catch (const pmc::Error& e) {
      if (asked || !range || e.kind() != pmc::errc::invalid_argument) throw;
      throw pmc::Error(e.kind(), fmt::format("the workload's busiest {} code [{:#x}, {:#x}) cannot be profiled: {}; "
                                             "choose a range with --pc START:END",
                                             space_name(range->space), range->start, range->end, e.what()));
    }
  });
  const pmc::LevelHistogram* levels = run.levels.empty() ? nullptr : &run.levels.front();
  const pmc::PcProfile* profile = run.profiles.empty() ? nullptr : &run.profiles.front();

  if (o.json) {
    json out = run_json(hal, run);
    profile_json(out, levels, profile, o.top, asked ? "--pc" : "busiest code of the workload");
    print("{}\n", out.dump(2));
    return 0;
  }

  print_counts(hal, run, "Profile");
  if (levels) print_levels(stdout, *levels, "counter interrupts sampled");
  if (profile) {
    print_pc_profile(stdout, *profile, o.top,
                     asked ? std::string() : fmt::format("the workload's busiest {} code", space_name(profile->range.space)),
                     "interrupt");
  } else {
    print(" No PC profile: no {} segment of the workload has a `pc` range; give one with --pc START:END{}.\n\n",
               o.kernel ? "kernel" : "user", o.kernel ? "" : " (--kernel for kernel code)");
  }
  return 0;
}

// Without --pc: the 64 KiB-aligned window of 64 KiB with the most samples of the address space,
// the lowest such window on a tie; nullopt when there is no sample.
std::optional<pmc::PcRange> busiest_window(const std::vector<pmc::PcCount>& pcs, pmc::AddressSpace space) {
  constexpr std::uint64_t kWindow = 64 * 1024;
  std::optional<pmc::PcRange> best;
  std::uint64_t best_samples = 0;
  for (std::size_t i = 0; i < pcs.size();) {  // ascending: one window's PCs are adjacent
    const std::uint64_t start = pcs[i].pc & ~(kWindow - 1);
    std::uint64_t n = 0;
    for (; i < pcs.size() && (pcs[i].pc & ~(kWindow - 1)) == start; ++i) n += pcs[i].samples;
    if (n > best_samples) {
      best_samples = n;
      const std::uint64_t end = start + kWindow == 0 ? ~0ull : start + kWindow;  // the top window ends at 2^64 - 1
      best = pmc::PcRange{space, start, end};
    }
  }
  return best;
}

// --call-graph dwarf[,SIZE]: the bytes of user stack copied at each sample (perf's default 8192;
// SIZE a multiple of 8 up to 65528, as the kernel takes sample_stack_user); 0 for fp or none.
// Throws the message for a bad SIZE.
std::uint32_t dwarf_stack_bytes(const std::string& mode) {
  if (mode == "dwarf") return 8192;
  if (mode.rfind("dwarf,", 0) != 0) return 0;
  const std::string size = mode.substr(6);
  std::uint32_t v = 0;
  auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), v);
  if (size.empty() || ec != std::errc() || end != size.data() + size.size() || v == 0 || v % 8 != 0 || v > 65528)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("--call-graph dwarf,SIZE: '{}' is not a stack dump size: SIZE is a number of bytes, a "
                                 "multiple of 8 from 8 to 65528 (default 8192)",
                                 size));
  return v;
}

// perf record's default: an event given neither period= nor freq= samples about 4,000 times a
// second (freq=4000); one that cannot sample that way (page-faults) is added as it is.
void add_sampling(pmc::Session& session, const std::string& event) {
  try {
    const pmc::EventSpec spec = pmc::parse_event(event);
    if (!spec.modifier("period") && !spec.modifier("freq") && !spec.perf_terms()) {
      try {
        return session.add(event + ":freq=4000");
      } catch (const pmc::Error&) {  // refused with the frequency: as given, and its own message
      }
    }
  } catch (const pmc::Error&) {  // the session says what is wrong with it
  }
  session.add(event);
}

int profile_command(const Options& o) {
  const std::vector<SortKey> keys = parse_sort_keys(o.sort.value_or("dso,sym"));
  const std::uint32_t stack_bytes = dwarf_stack_bytes(o.call_graph);
  const bool callchain = o.callchain || !o.call_graph.empty();
  // A copied stack makes a sample kilobytes long: perf's default rate (4,000 a second) then, not 10,000.
  const char* period = stack_bytes ? "period=250000" : "period=100000";
  // The pictures' files are created (as temporary files) now: an unwritable place fails before
  // the command runs, and the files appear whole or not at all.
  std::unique_ptr<AtomicFile> folded, flamegraph;
  if (!o.folded.empty()) folded = std::make_unique<AtomicFile>(o.folded, "--folded");
  if (!o.flamegraph.empty()) flamegraph = std::make_unique<AtomicFile>(o.flamegraph, "--flamegraph");
  const pmc::Hal& hal = open_hal(o);
  const std::vector<std::string> events =
      o.events.empty() ? std::vector<std::string>{fmt::format("cpu-clock:{}", period)} : split_events(o.events);
  std::optional<pmc::PcRange> asked;
  if (!o.pc_range.empty()) asked = parse_pc_range(o.pc_range, o.kernel);
  const pmc::AddressSpace space = o.kernel ? pmc::AddressSpace::kernel : pmc::AddressSpace::user;
  Report report(o.output, stderr);
  std::FILE* out = report.out();
  std::optional<pmc::Session> session;
  pmc::ChildOptions child;
  child.before_exec = [&](int pid) {
        session.emplace(hal.session(command_scope(pid)));
        for (const auto& e : events) {
          try {
            add_sampling(*session, e);
          } catch (const pmc::Error& err) {
            // The default when perf refuses kernel mode to this user (perf_event_paranoid 2):
            // user mode only, as pmc stat does.
            if (!o.events.empty() || err.kind() != pmc::errc::permission) throw;
            session->add(fmt::format("cpu-clock:u:{}", period));
          }
        }
        pmc::ProfileRequest request;
        request.levels = true;
        request.pc = asked;
        request.callchain = callchain && !stack_bytes;
        request.user_stack_bytes = stack_bytes;
        try {
          session->profile(request);
        } catch (const pmc::Error& e) {
          if (!callchain) throw;
          throw pmc::Error(e.kind(), fmt::format("{}: call chains cannot be recorded here: {}",
                                                 stack_bytes ? "--call-graph dwarf" : "-g", e.what()));
        }
        session->start();
  };
  child.tick = [&] { session->poll(); };
  const pmc::ChildResult run = pmc::run_child(o.command, child);
  session->stop();
  const std::vector<pmc::Reading> readings = session->read();
  std::optional<pmc::PcRange> range = asked;
  if (!range) {
    range = busiest_window(session->sampled_pcs(space), space);
    if (range) {  // every sampled PC is kept: only the view changes
      pmc::ProfileRequest view = session->profile_request();
      view.pc = range;
      session->profile(view);
    }
  }
  const std::vector<pmc::LevelHistogram> levels = session->level_histograms();
  const std::vector<pmc::PcProfile> profiles = session->pc_profiles();
  const std::uint64_t lost = session->lost_samples();
  const pmc::LevelHistogram* histogram = levels.empty() ? nullptr : &levels.front();
  const pmc::PcProfile* profile = profiles.empty() ? nullptr : &profiles.front();
  const std::string chosen = asked ? "--pc" : fmt::format("64 KiB window with the most {} samples", space_name(space));
  // The functions: the stacks named through the mappings the kernel reported (profile_symbols.hpp).
  const bool lines = std::find(keys.begin(), keys.end(), SortKey::srcline) != keys.end() || (o.json && callchain);
  Symbolizer symbols(session->sampled_mappings(), lines);
  std::vector<pmc::SampledStack> sampled = session->sampled_stacks();
  if (stack_bytes) {  // the copies unwound (profile_unwind.hpp), beside any sample without one
    std::vector<pmc::SampledStack> unwound = unwind_stacks(session->sampled_user_stacks(), symbols);
    sampled.insert(sampled.end(), std::make_move_iterator(unwound.begin()), std::make_move_iterator(unwound.end()));
    std::stable_sort(sampled.begin(), sampled.end(),
                     [](const pmc::SampledStack& a, const pmc::SampledStack& b) { return a.samples > b.samples; });
  }
  const std::vector<NamedStack> stacks = name_stacks(sampled, symbols);
  std::uint64_t total = 0;
  for (const NamedStack& st : stacks) total += st.samples;
  const std::vector<ProfileRow> rows = profile_rows(stacks, keys);
  const std::string title = "pmc profile " + quote_command(o.command);
  if (folded) folded->commit(folded_stacks(stacks));
  if (flamegraph) flamegraph->commit(flame_graph_svg(stacks, title));

  if (o.json) {
    json doc{{"command", o.command},
             {"exit_status", run.exit_status},
             {"elapsed_ns", run.elapsed_ns},
             {"counters", counters_json(readings)},
             {"lost_samples", lost}};
    profile_json(doc, histogram, profile, o.top, chosen);
    json sort = json::array();
    for (SortKey k : keys) sort.push_back(sort_key_name(k));
    doc["sort"] = sort;
    doc["rows"] = rows_json(rows, keys, total);
    if (callchain) doc["stacks"] = stacks_json(stacks);
    print_to(out, "{}\n", doc.dump(2));
    return run.exit_status;
  }
  report_table(out, o.command, readings, run, "Profile");
  if (histogram) print_levels(out, *histogram, "samples");
  if (lost)
    print_to(out, " {} samples lost: a ring buffer was full; a longer period samples less often\n\n",
               group_digits(lost));
  if (asked && profile) print_pc_profile(out, *profile, o.top, std::string(), "sample");
  if (rows.empty())
    print_to(out, " No user or kernel sample: the command ran for less than one period of the event.\n\n");
  else
    print_rows(out, rows, keys, total, o.top);
  if (callchain && !rows.empty()) print_call_tree(out, stacks, total);
  return run.exit_status;
}

}  // namespace

int cmd_profile(const Options& o) {
  if (!o.workload.empty() && !o.command.empty()) {
    error_line("profile samples either a simulated workload (--workload) or a command, not both (see 'pmc profile --help')");
    return 2;
  }
  if (o.workload.empty() && o.command.empty()) {
    error_line("profile needs a command (pmc profile [-e EVENTS] -- COMMAND ARGS...) or --workload FILE (see 'pmc profile --help')");
    return 2;
  }
  if (!o.call_graph.empty() && o.call_graph != "fp" && o.call_graph != "dwarf" && o.call_graph.rfind("dwarf,", 0) != 0) {
    error_line(fmt::format("unknown --call-graph mode '{}' (fp, or dwarf[,SIZE])", o.call_graph));
    return 2;
  }
  try {
    (void)dwarf_stack_bytes(o.call_graph);
  } catch (const pmc::Error& e) {
    error_line(e.what());
    return 1;
  }
  if (!o.command.empty()) {
    try {
      (void)parse_sort_keys(o.sort.value_or("dso,sym"));
    } catch (const pmc::Error& e) {
      error_line(e.what());
      return 2;
    }
  }
  if (o.emulate && (o.callchain || !o.call_graph.empty())) {
    error_line(fmt::format("{} does not go with --emulate: cachegrind records no call stacks, so an emulated "
                           "profile's stacks are the object and the function alone (docs/emulation.md)",
                           o.callchain ? "-g" : "--call-graph"));
    return 2;
  }
  if (!o.workload.empty()) {
    const char* what = o.callchain || !o.call_graph.empty() ? "-g (call chains)"
                       : o.sort                            ? "--sort"
                       : !o.folded.empty()                 ? "--folded"
                       : !o.flamegraph.empty()             ? "--flamegraph"
                                                           : nullptr;
    if (what) {
      error_line(fmt::format("{} needs a command sampled by Linux perf (pmc profile [OPTIONS] -- COMMAND); a "
                             "simulated workload has no call stacks to give",
                             what));
      return 2;
    }
  }
  if (o.emulate) {
    if (o.command.empty()) return profile_emulated(o);  // refused there, with the reason
    EmulatedProfile views(o);
    return profile_emulated(o, [&](const pmc::ProgramActivity& a, const pmc::EmulatedCounts& c, json* doc,
                                   std::FILE* out) { return views.show(a, c, doc, out); });
  }
  if (!o.workload.empty()) {
    if (!o.output.empty()) {
      error_line("-o applies to profiling a command, not --workload (see 'pmc profile --help')");
      return 2;
    }
    return profile_workload(o);
  }
  return profile_command(o);
}

}  // namespace pmc_cli
