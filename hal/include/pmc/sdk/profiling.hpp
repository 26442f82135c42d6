// Plugin SDK: the capability of a backend whose driver samples at counter interrupts. The
// backend returns it from Backend::profiling() and declares kBackendProfiles in its descriptor.
// Each call comes with the same RegisterFile and PmuContext as the Backend driver calls.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/profiling.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>
#include <pmc/profile.hpp>
#include <pmc/sdk/backend.hpp>
#include <pmc/sdk/register_file.hpp>

#include <span>

namespace pmc {

class PMC_API ProfilingDriver {
 public:
  virtual ~ProfilingDriver();
  // Refuses a request this PMU cannot collect (throws pmc::Error saying why); called by
  // Session::profile() before anything is programmed.
  virtual void check_profile(const PmuContext& ctx, const ProfileRequest& request) const = 0;
  // Sets up the request with empty histograms, after Backend::program() and while the PMU is
  // stopped. `set` is the session's assignment of events to counters (their interrupts are
  // the samples).
  virtual void program_profile(RegisterFile& regs, const PmuContext& ctx, std::span<const Assignment> set,
                               const ProfileRequest& request) const = 0;
  // Empties the histograms of the request programmed (Session::reset()).
  virtual void clear_profile(RegisterFile& regs, const PmuContext& ctx, const ProfileRequest& request) const = 0;
  [[nodiscard]] virtual LevelHistogram read_levels(RegisterFile& regs, const PmuContext& ctx) const = 0;
  [[nodiscard]] virtual PcProfile read_pc_profile(RegisterFile& regs, const PmuContext& ctx,
                                                  const PcRange& range) const = 0;
};

}  // namespace pmc

#endif  // C++20
