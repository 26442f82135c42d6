// pmc profile --call-graph dwarf: the user stacks copied at each sample (Session::
// sampled_user_stacks()) unwound into call chains with elfutils' libdwfl, through the call frame
// information (.eh_frame, .debug_frame) of the files each process had mapped.
#pragma once

#include "profile_symbols.hpp"

#include <pmc/profile.hpp>

#include <vector>

namespace pmc_cli {

// The most frames one stack is unwound to (perf's default, kernel.perf_event_max_stack).
inline constexpr std::size_t kMaxUnwoundFrames = 127;

// Each sample as the stack -g would give: its kernel frames, then the user frames from the sampled
// instruction out to the outermost caller the call frame information reaches, each caller by its
// return address; samples with the same stack counted together. `symbols` gives the Dwfl of each
// process, the same that names the frames afterwards.
std::vector<pmc::SampledStack> unwind_stacks(const pmc::UserStacks& copies, Symbolizer& symbols);

}  // namespace pmc_cli
