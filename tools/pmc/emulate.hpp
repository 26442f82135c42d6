// pmc stat --emulate, pmc profile --emulate: a command run under Valgrind's cachegrind, its
// activity counted on the chosen CPU's simulated PMU (docs/emulation.md). The library does the
// work (<pmc/emulate.hpp>); these present it.
#pragma once

#include "cli.hpp"

namespace pmc_cli {

// The counts of the events (-e; default: instructions, branches, branch-misses and the cache
// events that can be emulated) over the whole command, on stderr, -o FILE or, with --json,
// stdout. Returns the command's exit status; 2 for options that do not go with --emulate.
int stat_emulated(const Options& o);
// The same events per function and per source line, the busiest first (--top N).
int profile_emulated(const Options& o);

}  // namespace pmc_cli
