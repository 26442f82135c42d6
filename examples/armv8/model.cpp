// The device model of the Arm PMUv3: the "hardware" a session of access "sim" counts on, in a
// model plugin of its own (libarmv8-model.so). Written from the architecture (pmuv3.md in this
// folder, after the Arm ARM's "The Performance Monitors Extension"), never from the backend.
//
// Registers are AArch64 system registers, addressed by their 16-bit number
// op0 << 14 | op1 << 11 | CRn << 7 | CRm << 3 | op2 (sysreg() below). An access the
// architecture makes UNDEFINED (a register that does not exist, PMEVCNTR<n>_EL0 for n >= N, a
// write to a read-only register) throws register_fault, as the trap would. Writing a 1 to a RES0
// bit throws register_fault too: the architecture leaves the effect unpredictable, so a driver
// that does it is wrong, and the model says so. Read-only fields (PMCR_EL0.N, IDCODE, IMP) ignore
// writes; enable and overflow bits of counters the PMU does not have read as zero and ignore writes.
//
// Counting (pmuv3.md section 3): nothing counts while PMCR_EL0.E is 0. Event counter n counts
// when its PMCNTENSET_EL0 bit is set and PMEVTYPER<n>_EL0 does not exclude the segment's
// exception level (user segments run at EL0, U excludes them; kernel segments at EL1, P
// excludes them). It counts the signals of its event number per cycle (the table below), wraps
// at 32 bits before PMUv3p5 (at 32 or 64 bits by PMCR_EL0.LP from PMUv3p5, the counter being 64
// bits wide), sets its PMOVSSET_EL0 bit on each wrap and raises an interrupt per wrap when its
// PMINTENSET_EL1 bit is set. The cycle counter PMCCNTR_EL0 (bit 31 of those registers) counts
// unhalted cycles (the modelled core stops its clock in WFI, a halted segment) filtered by
// PMCCFILTR_EL0, every 64th cycle when PMCR_EL0.D is set, and overflows at bit 31 or, with
// PMCR_EL0.LC, bit 63. CHAIN (0x1E) on an odd counter counts the overflows of the even counter
// below it. SW_INCR (0x00) counts writes of a 1 to the counter's PMSWINC_EL0 bit.
#include <pmc/error.hpp>
#include <pmc/sdk/counting.hpp>
#include <pmc/sdk/model.hpp>

#include <array>
#include <string>

namespace armv8_model {

namespace {

using pmc::counting::u128;

constexpr std::uint32_t sysreg(unsigned op0, unsigned op1, unsigned crn, unsigned crm, unsigned op2) {
  return (op0 << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}

constexpr std::uint32_t kPmcr = sysreg(3, 3, 9, 12, 0);
constexpr std::uint32_t kPmcntenset = sysreg(3, 3, 9, 12, 1);
constexpr std::uint32_t kPmcntenclr = sysreg(3, 3, 9, 12, 2);
constexpr std::uint32_t kPmovsclr = sysreg(3, 3, 9, 12, 3);
constexpr std::uint32_t kPmswinc = sysreg(3, 3, 9, 12, 4);
constexpr std::uint32_t kPmselr = sysreg(3, 3, 9, 12, 5);
constexpr std::uint32_t kPmceid0 = sysreg(3, 3, 9, 12, 6);
constexpr std::uint32_t kPmceid1 = sysreg(3, 3, 9, 12, 7);
constexpr std::uint32_t kPmccntr = sysreg(3, 3, 9, 13, 0);
constexpr std::uint32_t kPmxevtyper = sysreg(3, 3, 9, 13, 1);
constexpr std::uint32_t kPmxevcntr = sysreg(3, 3, 9, 13, 2);
constexpr std::uint32_t kPmuserenr = sysreg(3, 3, 9, 14, 0);
constexpr std::uint32_t kPmovsset = sysreg(3, 3, 9, 14, 3);
constexpr std::uint32_t kPmintenset = sysreg(3, 0, 9, 14, 1);
constexpr std::uint32_t kPmintenclr = sysreg(3, 0, 9, 14, 2);
constexpr std::uint32_t kPmccfiltr = sysreg(3, 3, 14, 15, 7);
constexpr std::uint32_t pmevcntr(unsigned n) { return sysreg(3, 3, 14, 8 + n / 8, n % 8); }
constexpr std::uint32_t pmevtyper(unsigned n) { return sysreg(3, 3, 14, 12 + n / 8, n % 8); }
static_assert(kPmcr == 0xDCE0 && kPmccntr == 0xDCE8 && pmevcntr(0) == 0xDF40 && pmevtyper(30) == 0xDF7E &&
              kPmccfiltr == 0xDF7F && kPmintenset == 0xC4F1);

// PMCR_EL0
constexpr std::uint64_t kE = 1u << 0, kP = 1u << 1, kC = 1u << 2, kD = 1u << 3, kX = 1u << 4, kDp = 1u << 5,
                        kLc = 1u << 6, kLp = 1u << 7;
constexpr std::uint64_t kPmcrReadOnly = 0xFFFFF800u;  // IMP, IDCODE, N
// PMEVTYPER<n>_EL0 / PMCCFILTR_EL0
constexpr std::uint64_t kTypeP = 1ull << 31, kTypeU = 1ull << 30, kTypeNsh = 1ull << 27;
constexpr unsigned kCycle = 31;  // the cycle counter's bit in the enable, overflow and interrupt registers

constexpr unsigned kSwIncr = 0x00, kChain = 0x1E, kCpuCycles = 0x11;

// The common events this model counts: each its own signal (the name in lower case), and the
// generic signal of pmchal's workload format it also counts, if any.
struct EventSignal {
  unsigned code;
  const char* own;
  const char* generic;
};
constexpr std::array kEvents{
    EventSignal{0x01, "l1i_cache_refill", nullptr},  EventSignal{0x02, "l1i_tlb_refill", nullptr},
    EventSignal{0x03, "l1d_cache_refill", nullptr},  EventSignal{0x04, "l1d_cache", nullptr},
    EventSignal{0x05, "l1d_tlb_refill", nullptr},    EventSignal{0x06, "ld_retired", "loads"},
    EventSignal{0x07, "st_retired", "stores"},       EventSignal{0x08, "inst_retired", "instructions"},
    EventSignal{0x09, "exc_taken", nullptr},         EventSignal{0x0A, "exc_return", nullptr},
    EventSignal{0x0B, "cid_write_retired", nullptr}, EventSignal{0x0C, "pc_write_retired", nullptr},
    EventSignal{0x0D, "br_immed_retired", nullptr},  EventSignal{0x0E, "br_return_retired", nullptr},
    EventSignal{0x0F, "unaligned_ldst_retired", nullptr}, EventSignal{0x10, "br_mis_pred", nullptr},
    EventSignal{0x12, "br_pred", nullptr},           EventSignal{0x13, "mem_access", nullptr},
    EventSignal{0x14, "l1i_cache", nullptr},         EventSignal{0x15, "l1d_cache_wb", nullptr},
    EventSignal{0x16, "l2d_cache", nullptr},         EventSignal{0x17, "l2d_cache_refill", nullptr},
    EventSignal{0x18, "l2d_cache_wb", nullptr},      EventSignal{0x19, "bus_access", nullptr},
    EventSignal{0x1A, "memory_error", nullptr},      EventSignal{0x1B, "inst_spec", nullptr},
    EventSignal{0x1C, "ttbr_write_retired", nullptr}, EventSignal{0x1D, "bus_cycles", nullptr},
    EventSignal{0x1F, "l1d_cache_allocate", nullptr}, EventSignal{0x20, "l2d_cache_allocate", nullptr},
    EventSignal{0x21, "br_retired", "branches"},     EventSignal{0x22, "br_mis_pred_retired", "branch-misses"},
    EventSignal{0x23, "stall_frontend", nullptr},    EventSignal{0x24, "stall_backend", nullptr},
    EventSignal{0x25, "l1d_tlb", nullptr},           EventSignal{0x26, "l1i_tlb", nullptr},
    EventSignal{0x27, "l2i_cache", nullptr},         EventSignal{0x28, "l2i_cache_refill", nullptr},
    EventSignal{0x29, "l3d_cache_allocate", nullptr}, EventSignal{0x2A, "l3d_cache_refill", nullptr},
    EventSignal{0x2B, "l3d_cache", nullptr},         EventSignal{0x2C, "l3d_cache_wb", nullptr},
    EventSignal{0x2D, "l2d_tlb_refill", nullptr},    EventSignal{0x2E, "l2i_tlb_refill", nullptr},
    EventSignal{0x2F, "l2d_tlb", nullptr},           EventSignal{0x30, "l2i_tlb", nullptr},
};

[[noreturn]] void undefined(const std::string& what) {
  throw pmc::Error(pmc::errc::register_fault, "UNDEFINED: " + what);
}

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

class Pmuv3 final : public pmc::Device {
 public:
  explicit Pmuv3(const pmc::CpuInfo& cpu) {
    if (cpu.isa != pmc::Isa::aarch64) throw pmc::Error(pmc::errc::not_supported, "an Arm PMUv3 needs an AArch64 CPU");
    version_ = cpu.arm.pmu_version;
    if (version_ == 0 || version_ == 2 || version_ == 3 || version_ >= 0xA)
      throw pmc::Error(pmc::errc::not_supported,
                       "ID_AA64DFR0_EL1.PMUVer " + hex(version_) + " is not a PMUv3 (1, or 4 to 9)");
    pmcr_ = cpu.arm.pmcr & ~(kE | kP | kC);  // the reset value; E is 0 at reset
    n_ = static_cast<unsigned>((pmcr_ >> 11) & 0x1F);
    if (n_ > 31) throw pmc::Error(pmc::errc::not_supported, "PMCR_EL0.N above 31");
    for (const auto& e : kEvents) {
      own_[e.code] = pmc::signal(e.own);
      if (e.generic) {
        generic_[e.code] = pmc::signal(e.generic);
        has_generic_[e.code] = true;
      }
      implemented_[e.code] = true;
    }
    implemented_[kCpuCycles] = implemented_[kSwIncr] = implemented_[kChain] = true;
  }

  std::string_view name() const override { return "armv8"; }

  std::uint64_t read(std::uint32_t reg) override {
    if (const int n = event_counter(reg); n >= 0) return evcntr_[static_cast<unsigned>(check_counter(n, reg))];
    if (const int n = event_type(reg); n >= 0) return evtyper_[static_cast<unsigned>(check_counter(n, reg))];
    switch (reg) {
      case kPmcr: return pmcr_;
      case kPmcntenset:
      case kPmcntenclr: return cnten_;
      case kPmovsset:
      case kPmovsclr: return ovs_;
      case kPmintenset:
      case kPmintenclr: return inten_;
      case kPmselr: return selr_;
      case kPmuserenr: return userenr_;
      case kPmccntr: return ccntr_;
      case kPmccfiltr: return ccfiltr_;
      case kPmceid0: return ceid(0);
      case kPmceid1: return ceid(0x20);
      case kPmxevtyper: return selected_type();
      case kPmxevcntr: return evcntr_[selected_counter()];
      case kPmswinc: undefined("PMSWINC_EL0 is write-only");
      default: undefined("no system register " + hex(reg) + " in this PMU");
    }
  }

  void write(std::uint32_t reg, std::uint64_t value) override {
    if (const int n = event_counter(reg); n >= 0) return write_counter(static_cast<unsigned>(check_counter(n, reg)), value);
    if (const int n = event_type(reg); n >= 0) return write_type(static_cast<unsigned>(check_counter(n, reg)), value);
    switch (reg) {
      case kPmcr: {
        const std::uint64_t writable = kE | kP | kC | kD | kX | kDp | kLc | (version_ >= 6 ? kLp : 0);
        res0(value & ~(writable | kPmcrReadOnly), "PMCR_EL0", value);
        if (value & kP) evcntr_.fill(0);  // P resets every event counter, not the cycle counter
        if (value & kC) ccntr_ = 0;
        pmcr_ = (pmcr_ & kPmcrReadOnly) | (value & writable & ~(kP | kC));
        return;
      }
      case kPmcntenset: cnten_ |= bitmap(value, "PMCNTENSET_EL0"); return;
      case kPmcntenclr: cnten_ &= ~bitmap(value, "PMCNTENCLR_EL0"); return;
      case kPmovsset: ovs_ |= bitmap(value, "PMOVSSET_EL0"); return;
      case kPmovsclr: ovs_ &= ~bitmap(value, "PMOVSCLR_EL0"); return;
      case kPmintenset: inten_ |= bitmap(value, "PMINTENSET_EL1"); return;
      case kPmintenclr: inten_ &= ~bitmap(value, "PMINTENCLR_EL1"); return;
      case kPmswinc: return software_increment(bitmap(value, "PMSWINC_EL0") & ~(std::uint64_t{1} << kCycle));
      case kPmselr:
        res0(value & ~0x1Full, "PMSELR_EL0", value);
        selr_ = value;
        return;
      case kPmuserenr:
        res0(value & ~0xFull, "PMUSERENR_EL0", value);
        userenr_ = value;
        return;
      case kPmccntr: ccntr_ = value; return;
      case kPmccfiltr:
        res0(value & ~(kTypeP | kTypeU | kTypeNsh), "PMCCFILTR_EL0", value);
        ccfiltr_ = value;
        return;
      case kPmxevtyper:
        if ((selr_ & 0x1F) == kCycle) {
          res0(value & ~(kTypeP | kTypeU | kTypeNsh), "PMCCFILTR_EL0 (through PMXEVTYPER_EL0)", value);
          ccfiltr_ = value;
        } else {
          write_type(selected_counter(), value);
        }
        return;
      case kPmxevcntr: return write_counter(selected_counter(), value);
      case kPmceid0:
      case kPmceid1: undefined("PMCEID0/1_EL0 are read-only");
      default: undefined("no system register " + hex(reg) + " in this PMU");
    }
  }

  // An EL0 read of a counter (PMEVCNTR<n>_EL0 for index n, PMCCNTR_EL0 for index 31): allowed at
  // EL0 by PMUSERENR_EL0.EN, or .ER (event counters) / .CR (cycle counter); at EL1 always.
  std::uint64_t rdpmc(std::uint32_t index) override {
    const bool cycle = index == kCycle;
    if (!cycle && index >= n_) undefined("counter " + std::to_string(index) + ": PMCR_EL0.N is " + std::to_string(n_));
    if (el_ == 0 && !(userenr_ & 1u) && !(userenr_ & (cycle ? 4u : 8u)))
      undefined("EL0 read of " + std::string(cycle ? "PMCCNTR_EL0" : "PMEVCNTR<n>_EL0") +
                " with PMUSERENR_EL0.EN and ." + (cycle ? "CR" : "ER") + " clear (trapped to EL1)");
    return cycle ? ccntr_ : evcntr_[index];
  }

  void run(const pmc::Segment& s) override {
    if (!(pmcr_ & kE) || s.cycles == 0) return;
    const bool el0 = s.mode == pmc::Mode::user;
    auto counts_here = [&](std::uint64_t type) { return !(type & (el0 ? kTypeU : kTypeP)); };
    std::array<u128, 31> wraps{};
    for (unsigned n = 0; n < n_; ++n) {
      if (!(cnten_ >> n & 1u) || !counts_here(evtyper_[n])) continue;
      const unsigned event = static_cast<unsigned>(evtyper_[n] & event_mask());
      u128 increment = 0;
      if (event == kChain) {
        if (n % 2 == 1) increment = wraps[n - 1];
      } else {
        increment = static_cast<u128>(s.cycles) * per_cycle(s, event);
      }
      wraps[n] = add(evcntr_[n], increment, event_width());
      if (wraps[n]) overflow(n, wraps[n]);
    }
    if ((cnten_ >> kCycle & 1u) && counts_here(ccfiltr_)) {
      u128 cycles = static_cast<u128>(s.cycles) * s.per_cycle(pmc::kCyclesSignal);
      if (pmcr_ & kD) {  // every 64th cycle
        const u128 total = cycles + prescale_;
        cycles = total / 64;
        prescale_ = static_cast<unsigned>(total % 64);
      }
      const u128 w = add(ccntr_, cycles, (pmcr_ & kLc) ? 64 : 32);
      if (w) overflow(kCycle, w);
    }
  }

  std::uint64_t interrupts() const override { return interrupts_; }
  void set_reader_cpl(unsigned cpl) override { el_ = cpl == 0 ? 1 : 0; }  // CPL 0 is EL1, above it EL0
  void set_cr4_pce(bool enabled) override {  // user reads allowed: PMUSERENR_EL0.EN
    userenr_ = enabled ? (userenr_ | 1u) : (userenr_ & ~std::uint64_t{1});
  }

 private:
  // Index n of PMEVCNTR<n>_EL0 / PMEVTYPER<n>_EL0, or -1.
  static int event_counter(std::uint32_t reg) {
    return reg >= pmevcntr(0) && reg <= pmevcntr(30) ? static_cast<int>(reg - pmevcntr(0)) : -1;
  }
  static int event_type(std::uint32_t reg) {
    return reg >= pmevtyper(0) && reg <= pmevtyper(30) ? static_cast<int>(reg - pmevtyper(0)) : -1;
  }
  int check_counter(int n, std::uint32_t reg) const {
    if (static_cast<unsigned>(n) >= n_)
      undefined("register " + hex(reg) + " is counter " + std::to_string(n) + ", and PMCR_EL0.N is " + std::to_string(n_));
    return n;
  }
  unsigned selected_counter() const {
    const unsigned sel = static_cast<unsigned>(selr_ & 0x1F);
    if (sel >= n_) undefined("PMSELR_EL0.SEL = " + std::to_string(sel) + " selects no event counter (PMCR_EL0.N is " +
                             std::to_string(n_) + ")");
    return sel;
  }
  std::uint64_t selected_type() const {
    if ((selr_ & 0x1F) == kCycle) return ccfiltr_;
    return evtyper_[selected_counter()];
  }
  static void res0(std::uint64_t bits, const char* reg, std::uint64_t value) {
    if (bits) undefined(std::string(reg) + " = " + hex(value) + " sets RES0 bits " + hex(bits));
  }
  // The bits of a counter bitmap register the PMU has: counters 0..N-1 and the cycle counter;
  // the others are RAZ/WI, bits 63:32 RES0.
  std::uint64_t bitmap(std::uint64_t value, const char* reg) const {
    res0(value >> 32 << 32, reg, value);
    const std::uint64_t have = (n_ ? (std::uint64_t{1} << n_) - 1 : 0) | (std::uint64_t{1} << kCycle);
    return value & have;
  }
  std::uint64_t event_mask() const { return version_ >= 4 ? 0xFFFF : 0x3FF; }
  unsigned event_width() const { return version_ >= 6 && (pmcr_ & kLp) ? 64 : 32; }
  std::uint64_t counter_mask() const { return version_ >= 6 ? ~std::uint64_t{0} : 0xFFFFFFFFull; }

  void write_type(unsigned n, std::uint64_t value) {
    res0(value & ~(event_mask() | kTypeP | kTypeU | kTypeNsh), "PMEVTYPER<n>_EL0", value);
    evtyper_[n] = value;
  }
  void write_counter(unsigned n, std::uint64_t value) {
    res0(value & ~counter_mask(), "PMEVCNTR<n>_EL0", value);
    evcntr_[n] = value;
  }

  std::uint64_t ceid(unsigned first) const {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < 32; ++i)
      if (implemented_[first + i]) v |= std::uint64_t{1} << i;
    return v;
  }

  std::uint64_t per_cycle(const pmc::Segment& s, unsigned event) const {
    if (event == kCpuCycles) return s.per_cycle(pmc::kCyclesSignal);
    if (event >= own_.size() || !implemented_[event] || event == kSwIncr) return 0;
    std::uint64_t k = s.per_cycle(own_[event]);
    if (has_generic_[event]) k += s.per_cycle(generic_[event]);
    return k;
  }

  // counter += increment, overflowing at bit `width` - 1 (32 or 64): the number of overflows.
  // The counter register is 64 bits from PMUv3p5 and 32 before.
  u128 add(std::uint64_t& counter, u128 increment, unsigned width) const {
    const bool wide_register = version_ >= 6 || &counter == &ccntr_;
    const u128 low = width >= 64 ? static_cast<u128>(counter) : static_cast<u128>(counter & 0xFFFFFFFFull);
    const u128 wraps = (low + increment) >> width;
    const u128 sum = static_cast<u128>(counter) + increment;
    counter = wide_register ? static_cast<std::uint64_t>(sum) : static_cast<std::uint64_t>(sum & 0xFFFFFFFFull);
    return wraps;
  }

  void overflow(unsigned bit, u128 wraps) {
    ovs_ |= std::uint64_t{1} << bit;
    if (inten_ >> bit & 1u) interrupts_ = pmc::counting::saturating_add(interrupts_, wraps);
  }

  void software_increment(std::uint64_t bits) {
    if (!(pmcr_ & kE)) return;
    for (unsigned n = 0; n < n_; ++n) {
      if (!(bits >> n & 1u) || !(cnten_ >> n & 1u) || (evtyper_[n] & event_mask()) != kSwIncr) continue;
      const u128 w = add(evcntr_[n], 1, event_width());
      if (w) overflow(n, w);
    }
  }

  unsigned version_ = 0;
  unsigned n_ = 0;
  std::uint64_t pmcr_ = 0, cnten_ = 0, ovs_ = 0, inten_ = 0, selr_ = 0, userenr_ = 0;
  std::array<std::uint64_t, 31> evcntr_{}, evtyper_{};
  std::uint64_t ccntr_ = 0, ccfiltr_ = 0;
  unsigned prescale_ = 0;  // cycles towards the next count with PMCR_EL0.D
  std::uint64_t interrupts_ = 0;
  unsigned el_ = 1;        // the exception level reads happen at (set_reader_cpl)
  std::array<pmc::Signal, 0x40> own_{}, generic_{};
  std::array<bool, 0x40> implemented_{}, has_generic_{};
};

}  // namespace

const pmc::pmc_model_descriptor descriptor{pmc::kAbiVersion, sizeof(pmc::pmc_model_descriptor), "armv8",
                                           "the Arm PMUv3 (ARMv8-A): PMCR_EL0.N event counters and the cycle counter",
                                           &pmc::make_device<Pmuv3>, nullptr};

}  // namespace armv8_model

PMC_EXPORT_MODEL(armv8_model::descriptor);
