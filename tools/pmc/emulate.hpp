// pmc stat --emulate, pmc profile --emulate: a command run under Valgrind's cachegrind, its
// activity counted on the chosen CPU's simulated PMU (docs/emulation.md). The library does the
// work (<pmc/emulate.hpp>); these present it.
#pragma once

#include "cli.hpp"

#include <pmc/emulate.hpp>

#include <cstdio>
#include <functional>

namespace pmc_cli {

// The counts of the events (-e; default: instructions, branches, branch-misses and the cache
// events that can be emulated) over the whole command, on stderr, -o FILE or, with --json,
// stdout. Returns the command's exit status; 2 for options that do not go with --emulate.
int stat_emulated(const Options& o);
// The views pmc profile adds (emulate_profile.hpp): called with the run's activity and counts,
// the JSON report to add to (or nullptr) and the text report (or nullptr); returns whether it
// printed a table that takes the place of the function and source-line tables.
using EmulatedViews =
    std::function<bool(const pmc::ProgramActivity&, const pmc::EmulatedCounts&, json*, std::FILE*)>;
// The same events per function and per source line, the busiest first (--top N).
int profile_emulated(const Options& o, const EmulatedViews& views = {});

}  // namespace pmc_cli
