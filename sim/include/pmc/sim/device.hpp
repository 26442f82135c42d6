// Simulated PMU hardware: register-exact device models, written from the datasheets in
// shared/reference (not from the backends), behind the same RegisterFile a driver programs.
#pragma once

#include <pmc/cpu.hpp>
#include <pmc/export.hpp>
#include <pmc/register_file.hpp>
#include <pmc/sim/workload.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace pmc::sim {

class PMC_API Device : public RegisterFile {
 public:
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Advances the hardware through one segment of activity.
  virtual void run(const Segment& segment) = 0;
  // Whether run() counts this segment: a model of one CPU of a multiprocessor (the Alpha 21064)
  // skips the segments of the other CPUs. x86 models run every segment.
  [[nodiscard]] virtual bool executes(const Segment& /*segment*/) const { return true; }
  // Performance-monitoring interrupts raised so far (through the local APIC LVTPC entry).
  [[nodiscard]] virtual std::uint64_t interrupts() const = 0;
  // The privilege level RDPMC executes at, and CR4.PCE (user RDPMC allowed).
  virtual void set_reader_cpl(unsigned cpl) = 0;
  virtual void set_cr4_pce(bool enabled) = 0;
};

// The device model for a PMU family ("p6"), configured for the CPU. Throws not_found.
PMC_API std::unique_ptr<Device> make_device(std::string_view model, const CpuInfo& cpu);

// Runs a workload, splitting segments so that no counter of width `counter_width` can pass
// half its range between two calls of between_chunks (which a session uses to fold the
// hardware counts into 64-bit totals).
PMC_API void run_workload(Device& device, const Workload& workload, unsigned counter_width,
                          const std::function<void()>& between_chunks);

}  // namespace pmc::sim
