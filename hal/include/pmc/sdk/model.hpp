// Model SDK: a device model is the simulated hardware of one PMU, register-exact, written from
// the datasheet (docs/hardware/), never from the backend that drives it. It lives in a model
// plugin of its own, found by name (PmuInfo::device_model, the [pmu] `model` of the backend's
// data). docs/writing-a-model.md walks through one.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/sdk/model.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/cpu.hpp>
#include <pmc/encoding.hpp>
#include <pmc/export.hpp>
#include <pmc/sdk/abi.hpp>
#include <pmc/sdk/register_file.hpp>
#include <pmc/workload.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace pmc {

class PMC_API Device : public RegisterFile {
 public:
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Advances the hardware through one segment of activity, in closed form: the cost must not
  // depend on segment.cycles. A call may wrap a counter many times (Session::run() fast-forwards
  // long segments): the counter ends at its count modulo 2^width, one interrupt per enabled wrap.
  virtual void run(const Segment& segment) = 0;
  // Whether run() counts this segment: a model of one CPU of a multiprocessor (the Alpha 21064)
  // skips the segments of the other CPUs. x86 models run every segment.
  [[nodiscard]] virtual bool executes(const Segment& /*segment*/) const { return true; }
  // Performance-monitoring interrupts raised so far (through the local APIC LVTPC entry).
  [[nodiscard]] virtual std::uint64_t interrupts() const = 0;
  // The privilege level RDPMC executes at, and CR4.PCE (user RDPMC allowed).
  virtual void set_reader_cpl(unsigned cpl) = 0;
  virtual void set_cr4_pce(bool enabled) = 0;
  // A setting of the machine around the PMU that software cannot change, such as a firmware
  // choice (p6: "perfmon_available" = IA32_MISC_ENABLE bit 7 on a Pentium M). Throws not_found
  // for a setting the model does not have, invalid_argument for a value it cannot take.
  virtual void configure(std::string_view setting, std::uint64_t value);
};

extern "C" {
// The descriptor a model library exports (C layout), checked before anything else is called.
struct pmc_model_descriptor {
  std::uint32_t abi_version;   // kAbiVersion when built
  std::uint32_t struct_size;   // sizeof(pmc_model_descriptor) when built
  const char* name;            // "p6": what a backend's [pmu] `model` names
  const char* description;     // one line
  // Builds the device for a CPU. Must not throw: on failure (a CPU the model cannot be) it
  // returns nullptr and writes a one-line reason into error (error_size bytes, NUL-terminated).
  pmc::Device* (*create)(const pmc::CpuInfo* cpu, char* error, std::size_t error_size) noexcept;
  // Optional (nullptr: the model has none).
  // The workload signal `device` (built by this model's create) counts for an event encoding,
  // so that a workload may name its signals after catalog events (docs/workload-format.md,
  // "Signals named after events"): the HAL maps such a name to the signal this returns. The
  // event's filters (USR/OS, CMASK, INV, E, INT, EN) are not part of the signal; the event
  // select's event and unit mask are, and so is an extra register's value when the model
  // counts by it. Writes the name into `name` (`size` bytes, NUL-terminated) and returns its
  // length, or 0 when the model counts no signal for the encoding. Must not throw.
  std::size_t (*signal_of)(const pmc::Device* device, const pmc::Encoding* encoding, char* name,
                           std::size_t size) noexcept;
};
}

// The symbol a model library exports its descriptor under.
#define PMC_MODEL_SYMBOL "pmc_model_v2"

// In exactly one source file of a model library, at global scope:
//   PMC_EXPORT_MODEL(mymodel::descriptor);
#define PMC_EXPORT_MODEL(qualified_descriptor) PMC_DETAIL_EXPORT_DESCRIPTOR(pmc_model_v2, qualified_descriptor)

// A factory for the descriptor: constructs T from the CpuInfo, reporting any exception as the error.
template <class T>
pmc::Device* make_device(const pmc::CpuInfo* cpu, char* error, std::size_t error_size) noexcept {
  auto report = [&](const char* what) {
    if (!error || !error_size) return;
    std::size_t n = 0;
    for (const char* p = what; *p && n + 1 < error_size; ++p) error[n++] = *p;
    error[n] = '\0';
  };
  try {
    if (!cpu) {
      report("no CPU given");
      return nullptr;
    }
    return new T(*cpu);
  } catch (const std::exception& e) {
    report(e.what());
  } catch (...) {
    report("unknown exception");
  }
  return nullptr;
}

// A signal_of for the descriptor: T::signal_of(const Encoding&) gives the name ("" for none).
template <class T>
std::size_t device_signal(const pmc::Device* device, const pmc::Encoding* encoding, char* name,
                          std::size_t size) noexcept {
  try {
    if (!device || !encoding || !name || size == 0) return 0;
    const std::string s = static_cast<const T*>(device)->signal_of(*encoding);
    if (s.size() >= size) return s.size();  // the caller's buffer is too small: nothing written
    s.copy(name, s.size());
    name[s.size()] = '\0';
    return s.size();
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace pmc

#endif  // C++20
