// pmc-conformance: what the checks share (the options, the backends to check, the events of
// known count). The checks are Boost.Test cases in conformance.cpp (plugins, catalogs, bad input,
// profiling), counting.cpp (the driver on its model, every counter, the user/kernel filter,
// wraps through a session) and registers.cpp (the driver on a recording register file: the
// declared registers, the model's wrap); docs/writing-a-backend.md "The conformance kit".
#pragma once

#include <pmc/pmc.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kit {

namespace fs = std::filesystem;

struct Options {
  std::vector<fs::path> plugin_dirs;
  std::vector<fs::path> dumps;
  std::vector<fs::path> events;
  std::string backend;
};
extern Options g;

// The config of a check: the dump, the backend ("auto": whichever matches), access "sim".
pmc::Config config_for(const fs::path& dump, const std::string& backend = "auto");
// Whether a plugin file is in one of the --plugin-dir directories (every file without one).
bool in_dirs(const fs::path& file);
// The backends to check and, for each, the dumps it runs on.
std::map<std::string, std::vector<fs::path>> targets();
// The string that encodes an event with its defaults: its name, plus its first unit mask when
// its unit-mask group has no default (such an event needs one, docs/event-format.md).
std::string default_string(const pmc::EventDef& e);

// Runs one step of a check; an exception fails the check with the step's name and the
// exception's text (Boost's own NO_THROW checks print neither). Returns whether it ran.
bool step(const std::string& what, const std::function<void()>& f);

// An event whose count on a workload the kit knows without asking the model: a generic event
// the catalog has, "cycles" (one per cycle) or "instructions" (the segment's "instructions"
// signal per cycle), as a string with its defaults.
struct KnownEvent {
  std::string generic;   // "cycles" or "instructions"
  std::string string;    // what a session adds: the catalog event with its defaults
  pmc::Encoding encoding;
};
std::vector<KnownEvent> known_events(const pmc::Hal& hal);
// Its count on a segment of `cycles` cycles with `instructions` instructions a cycle.
std::uint64_t expected(const KnownEvent& e, std::uint64_t cycles, std::uint64_t instructions);

// One event of known count per counter of the PMU, all on at once: for each counter (general,
// then fixed) a known event that may be scheduled there (of those that may, the one given to the
// fewest counters so far), nullopt for a counter no known event may use.
struct CounterPlan {
  const pmc::CounterInfo* counter = nullptr;
  std::optional<KnownEvent> event;
};
std::vector<CounterPlan> plan_every_counter(const pmc::Hal& hal);

// "0x7004"
std::string hex(std::uint64_t v);

}  // namespace kit
