// The Intel architectural PMU device model (versions 1 to 5): RDMSR, WRMSR and RDPMC. Facts cite
// docs/hardware/archperf.md by section; policies the fact sheet leaves open are marked [U] and
// explained where they are applied (and summed up in archperf_model.hpp). The geometry is in
// archperf_geometry.cpp, counting in archperf_counting.cpp.
#include "archperf_model.hpp"
#include "archperf_registers.hpp"
#include "archperf_topdown.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <bit>
#include <string>

namespace pmc::sim {

using namespace archperf;
using counting::width_mask;

namespace {

[[noreturn]] void fault(std::string_view reg, std::uint32_t msr, std::uint64_t value, std::string_view detail) {
  x86::wrmsr_fault(reg, msr, value, detail);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RDMSR / WRMSR [2, 3, 4].

std::uint64_t ArchPerfDevice::inuse() const {
  std::uint64_t v = 0;
  bool pmi = false;
  for (unsigned n = 0; n < gp_end_; ++n) {
    if (!has_gp(n)) continue;
    if (x86::event_select(evtsel_[n]) != 0) v |= std::uint64_t{1} << n;
    pmi = pmi || counting::evtsel::interrupts(evtsel_[n]);
  }
  for (unsigned i = 0; i < kMaxFixed; ++i) {
    if (!has_fixed(i)) continue;
    const std::uint64_t block = (fixed_ctrl_ >> (kBlockBits * i)) & 0xF;
    if ((block & (kFixedOs | kFixedUsr)) != 0) v |= std::uint64_t{1} << (kFixedBit0 + i);
    pmi = pmi || (block & kFixedPmi) != 0;
  }
  if (pmi) v |= kPmiInUse;
  return v;
}

std::uint64_t ArchPerfDevice::read(std::uint32_t msr) {
  if (std::uint64_t v = 0; pmi().read(msr, v)) return v;  // LVTPC, the PMI handler [4a]
  if (msr == kDebugCtlMsr) return debugctl_;
  if (archperf::extra_msr(msr)) {
    const auto it = extra_.find(msr);
    return it == extra_.end() ? 0 : it->second;
  }
  // Counters read zero-extended [4].
  if (gp_msr(msr, kPmc0)) return pmc_[msr - kPmc0];
  if (gp_msr(msr, kPerfEvtSel0)) return evtsel_[msr - kPerfEvtSel0];
  if (full_width_ && gp_msr(msr, kAPmc0)) return pmc_[msr - kAPmc0];
  if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kMaxFixed && has_fixed(msr - kFixedCtr0)) {
    return fixed_[msr - kFixedCtr0];
  }
  if (msr == kPerfCapabilities && perf_capabilities_) {
    return (full_width_ ? kFwWrite : 0) | (metric_bytes_ != 0 ? kPerfMetricsCap : 0);
  }
  if (msr == kPerfMetricsMsr && metric_bytes_ != 0) return perf_metrics();
  if (has_global()) {
    switch (msr) {
      case kFixedCtrCtrl: return fixed_ctrl_;
      case kGlobalStatus: return global_status_;
      case kGlobalCtrl: return global_ctrl_;
      case kGlobalOvfCtrl: return 0;  // [U] a command register: reads return 0
      default: break;
    }
  }
  if (version_ >= 4) {
    if (msr == kGlobalStatusSet) return 0;  // [U] as 0x390
    if (msr == kGlobalInuse) return inuse();
  }
  no_such_msr("rdmsr", msr);
}

void ArchPerfDevice::write(std::uint32_t msr, std::uint64_t value) {
  auto anythread_why = [this] {
    return version_ < 3
               ? fmt::format(" (AnyThread exists from version 3; this PMU is version {})",
                             version_)
               : std::string(" (AnyThread is deprecated: CPUID.0AH:EDX[15] = 1)");
  };

  if (pmi().write(msr, value)) return;  // LVTPC, the PMI handler [4a]
  // IA32_DEBUGCTL: FREEZE_PERFMON_ON_PMI (bit 12) from version 2 [2, 4a]; the model has none of
  // the register's other features (LBRs, BTF, SMM freeze): their bits are a #GP [U].
  if (msr == kDebugCtlMsr) {
    if (const std::uint64_t bad = value & ~(version_ >= 2 ? kFreezePerfmonOnPmi : 0); bad != 0) {
      const int bit = std::countr_zero(bad);
      fault("IA32_DEBUGCTL", msr, value,
            bit == 12 ? fmt::format("FREEZE_PERFMON_ON_PMI (bit 12) exists from version 2; this PMU is version {}",
                                    version_)
                      : fmt::format("bit {} set: the model has only FREEZE_PERFMON_ON_PMI (bit 12), no LBRs, BTF "
                                    "or SMM freeze",
                                    bit));
    }
    debugctl_ = value;
    return;
  }
  if (archperf::extra_msr(msr)) {
    extra_[msr] = value;
    // The offcore-response selects read 0x1A6 / 0x1A7: their signal follows the value.
    if (msr == kOffcoreRsp0 || msr == kOffcoreRsp1)
      for (unsigned i = 0; i < gp_end_; ++i)
        if (has_gp(i)) refresh_signal(i);
    return;
  }
  // IA32_PMCi: EAX[31:0] sign-extended to the counter width; EDX ignored [4].
  if (gp_msr(msr, kPmc0)) {
    pmc_[msr - kPmc0] = x86::sign_extended_write(value, gp_width_);
    return;
  }
  // IA32_A_PMCi: the full width, no sign extension; a bit above the width is a #GP [4, U].
  if (full_width_ && gp_msr(msr, kAPmc0)) {
    const unsigned i = msr - kAPmc0;
    if (const std::uint64_t bad = value & ~width_mask(gp_width_); bad != 0) {
      fault(gp_register("IA32_A_PMC", i), msr, value,
            fmt::format("bit {} set above the {}-bit counter width", std::countr_zero(bad),
                        gp_width_));
    }
    pmc_[i] = value;
    return;
  }
  if (gp_msr(msr, kPerfEvtSel0)) {
    const unsigned i = msr - kPerfEvtSel0;
    const std::uint64_t reserved =
        (kSelHigh & ~(version_ >= 5 ? kSelEqUmask2 : 0)) | (anythread_ ? 0 : kAnyThread);
    if (const std::uint64_t bad = value & reserved; bad != 0) {
      const int bit = std::countr_zero(bad);
      fault(gp_register("IA32_PERFEVTSEL", i), msr, value,
            fmt::format("reserved bit {} set{}", bit,
                        bit >= 32 ? std::string(" (bits 63:32 are reserved)") : anythread_why()));
    }
    evtsel_[i] = value;
    refresh_signal(i);
    // [U] as in the P6 model: writing the event select starts a new measurement, so the edge
    // detector forgets the previous condition.
    asserted_[i] = false;
    return;
  }
  // IA32_FIXED_CTRi: bits above the fixed width "must be written as zeros": #GP [4, design].
  if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kMaxFixed && has_fixed(msr - kFixedCtr0)) {
    const unsigned i = msr - kFixedCtr0;
    if (const std::uint64_t bad = value & ~width_mask(fixed_width_); bad != 0) {
      fault(gp_register("IA32_FIXED_CTR", i), msr, value,
            fmt::format("bit {} set above the {}-bit fixed counter width",
                        std::countr_zero(bad), fixed_width_));
    }
    fixed_[i] = value;
    // A write of FIXED_CTR3 clears PERF_METRICS, whose bytes are fractions of it [12].
    if (i == 3 && metric_bytes_ != 0) clear_metrics();
    return;
  }
  if (msr == kPerfMetricsMsr && metric_bytes_ != 0) {
    if (const std::uint64_t bad = value & ~width_mask(8 * metric_bytes_); bad != 0) {
      fault("MSR_PERF_METRICS", msr, value,
            fmt::format("reserved bit {} set (this CPU fills bytes 0-3 only: level 1)",
                        std::countr_zero(bad)));
    }
    write_perf_metrics(value);
    return;
  }
  if (msr == kPerfCapabilities && perf_capabilities_) {
    fault("IA32_PERF_CAPABILITIES", msr, value, "the register is read-only");
  }
  if (has_global()) {
    switch (msr) {
      case kFixedCtrCtrl: {
        std::uint64_t valid = 0;
        const std::uint64_t block =
            kFixedOs | kFixedUsr | kFixedPmi | (anythread_ ? kFixedAnyThread : 0);
        for (unsigned i = 0; i < kMaxFixed; ++i)
          if (has_fixed(i)) valid |= block << (kBlockBits * i);
        if (const std::uint64_t bad = value & ~valid; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          const unsigned counter = bit / kBlockBits;
          const std::string why =
              !has_fixed(counter) ? fmt::format(" ({})", fixed_absent(counter))
              : bit % kBlockBits == 2 ? anythread_why()
                                      : std::string();
          fault("IA32_FIXED_CTR_CTRL", msr, value, fmt::format("reserved bit {} set{}", bit, why));
        }
        fixed_ctrl_ = value;
        return;
      }
      case kGlobalCtrl: {
        const std::uint64_t valid = std::uint64_t{gp_present_} |
                                    (std::uint64_t{fixed_present_} << kFixedBit0) |
                                    (metric_bytes_ != 0 ? 1ULL << kPerfMetricsBit : 0);
        if (const std::uint64_t bad = value & ~valid; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          const std::string why =
              bit < kFixedBit0 ? fmt::format(" ({})", gp_absent(bit))
              : bit < kPerfMetricsBit ? fmt::format(" ({})", fixed_absent(bit - kFixedBit0))
              : bit == kPerfMetricsBit ? std::string(" (EN_PERF_METRICS: no PERF_METRICS)")
                                       : std::string();
          fault("IA32_PERF_GLOBAL_CTRL", msr, value,
                fmt::format("reserved bit {} set{}", bit, why));
        }
        global_ctrl_ = value;
        return;
      }
      case kGlobalStatus:
        fault("IA32_PERF_GLOBAL_STATUS", msr, value,
              "the register is read-only (clear bits through MSR 0x390)");
      case kGlobalOvfCtrl:
      case kGlobalStatusSet: {
        if (msr == kGlobalStatusSet && version_ < 4) break;
        const char* name = msr == kGlobalStatusSet ? "IA32_PERF_GLOBAL_STATUS_SET"
                           : version_ >= 4         ? "IA32_PERF_GLOBAL_STATUS_RESET"
                                                   : "IA32_PERF_GLOBAL_OVF_CTRL";
        if (const std::uint64_t bad = value & ~status_bits_; bad != 0) {
          const unsigned bit = static_cast<unsigned>(std::countr_zero(bad));
          std::string why;
          if (bit < kFixedBit0) {
            why = fmt::format(" ({})", gp_absent(bit));
          } else if (bit < kPerfMetricsBit) {
            why = fmt::format(" ({})", fixed_absent(bit - kFixedBit0));
          } else if (bit == kPerfMetricsBit) {
            why = " (no PERF_METRICS)";
          } else if (bit == kOvfUncoreBit) {
            why = " (Ovf_Uncore exists from version 3)";
          } else if (bit == kTraceToPaPmiBit || bit == kLbrFrzBit || bit == kCtrFrzBit) {
            why = " (exists from version 4)";
          } else if (bit == kAsciBit) {
            why = " (ASCI: no SGX in this model)";
          }
          fault(name, msr, value, fmt::format("reserved bit {} set{}", bit, why));
        }
        // 0x390: 1 clears the status bit, 0 has no effect; 0x391: 1 sets it [3].
        if (msr == kGlobalOvfCtrl) {
          global_status_ &= ~value;
        } else {
          global_status_ |= value;
        }
        return;
      }
      case kGlobalInuse:
        if (version_ < 4) break;
        fault("IA32_PERF_GLOBAL_INUSE", msr, value, "the register is read-only");
      default: break;
    }
  }
  no_such_msr("wrmsr", msr);
}

// ---------------------------------------------------------------------------------------------
// RDPMC [5].

std::uint64_t ArchPerfDevice::rdpmc(std::uint32_t index) {
  const std::uint32_t type = index >> 16;
  const unsigned i = index & 0xFFFF;
  std::uint64_t value = 0;
  if (type == 0 && has_gp(i)) {
    value = pmc_[i];
  } else if (type == kRdpmcFixedType && has_fixed(i)) {
    value = fixed_[i];
  } else if (index == kRdpmcMetrics && metric_bytes_ != 0) {
    value = perf_metrics();  // [5, 12]: Linux reads PERF_METRICS with ECX = 1 << 29
  } else {
    std::string why;
    if ((index & kRdpmcFast) != 0) {
      why = "bit 31 (fast read) does not exist on the architectural PMU";
    } else if ((index & kRdpmcMetrics) != 0) {
      why = metric_bytes_ == 0 ? "bit 29 (PERF_METRICS): this CPU has no PERF_METRICS"
                               : "bit 29 (PERF_METRICS) reads with ECX = 0x20000000 exactly";
    } else if (type == 0) {
      why = gp_absent(i);
    } else if (type == kRdpmcFixedType) {
      why = fixed_absent(i);
    } else {
      why = fmt::format("ECX[31:16] = {:#x} is no counter type (0 general-purpose, 0x4000 fixed)",
                        type);
    }
    x86::rdpmc_fault(index, why);
  }
  check_rdpmc_privilege();
  return value;  // EDX:EAX, unimplemented high bits 0
}

}  // namespace pmc::sim
