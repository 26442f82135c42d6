// The device model of the imaginary toy PMU: the "hardware" a session of access "sim" counts
// on, in a model plugin of its own (libtoy-model.so). A model is written from the datasheet,
// never from the backend; the toy PMU's datasheet is this comment:
//
//   ToyEvtSel0 0x7000  counter 0's event select: event 7:0, unit mask 15:8, USR 16 (count in
//   ToyEvtSel1 0x7002  user mode), OS 17 (count in kernel mode), EN 22 (count); every other bit
//                      reserved: writing one is a #GP
//   ToyCtr0    0x7001  32-bit counters; writing a value of more than 32 bits is a #GP; each wraps
//   ToyCtr1    0x7003  to 0 past 2^32 - 1, with no interrupt, and sets its bit in ToyOvf
//   ToyOvf     0x7004  bit i: counter i wrapped since ToyOvf was last written; writing 0 clears
//                      it, any other value is a #GP. pmchal folds the counters often enough to
//                      need no overflow flag, so the driver never touches ToyOvf and toy.toml does
//                      not declare it (on hardware the msr access refuses what it does not declare)
//   RDPMC      ECX = 0 or 1 reads ToyCtr0 or ToyCtr1; any other index is a #GP, and so is CPL > 0
//              with CR4.PCE = 0
//   events     0x01 cycles: 1 per unhalted cycle
//              0x02 instructions: unit mask 0x00 every instruction ("instructions" signal),
//                   0x01 loads only ("loads" signal); other unit masks count nothing
//              other codes count nothing
//
// docs/writing-a-model.md in pmchal explains the Device interface; <pmc/sdk/counting.hpp> has
// the closed-form counting helpers (a segment of N cycles costs the same whatever N is).
#include <pmc/error.hpp>
#include <pmc/sdk/counting.hpp>
#include <pmc/sdk/model.hpp>

#include <string>

namespace toy {

namespace {

constexpr std::uint32_t kEvtSel0 = 0x7000;  // counter i: ToyEvtSel at 0x7000 + 2i, ToyCtr at 0x7001 + 2i
constexpr std::uint32_t kOvf = 0x7004;
constexpr unsigned kCounters = 2;
constexpr std::uint64_t kUsr = 1ull << 16, kOs = 1ull << 17, kEn = 1ull << 22;
constexpr std::uint64_t kWritable = 0xFFFFull | kUsr | kOs | kEn;
constexpr unsigned kWidth = 32;

[[noreturn]] void gp(const std::string& what) { throw pmc::Error(pmc::errc::register_fault, "#GP: " + what); }

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

class ToyDevice final : public pmc::Device {
 public:
  explicit ToyDevice(const pmc::CpuInfo&) {}

  std::string_view name() const override { return "toy"; }

  std::uint64_t read(std::uint32_t msr) override {
    if (msr == kOvf) return ovf_;
    if (msr < kEvtSel0 || msr >= kEvtSel0 + 2 * kCounters)
      gp("rdmsr of " + hex(msr) + ": the toy PMU has no such register");
    const unsigned i = (msr - kEvtSel0) / 2;
    return (msr - kEvtSel0) % 2 == 0 ? evtsel_[i] : ctr_[i];
  }

  void write(std::uint32_t msr, std::uint64_t value) override {
    if (msr == kOvf) {
      if (value != 0) gp("wrmsr ToyOvf = " + hex(value) + ": only 0 may be written");
      ovf_ = 0;
      return;
    }
    if (msr < kEvtSel0 || msr >= kEvtSel0 + 2 * kCounters)
      gp("wrmsr of " + hex(msr) + ": the toy PMU has no such register");
    const unsigned i = (msr - kEvtSel0) / 2;
    if ((msr - kEvtSel0) % 2 == 0) {
      if (value & ~kWritable) gp("wrmsr ToyEvtSel" + std::to_string(i) + " = " + hex(value) + ": reserved bits set");
      evtsel_[i] = value;
    } else {
      if (value >> kWidth) gp("wrmsr ToyCtr" + std::to_string(i) + " = " + hex(value) + ": more than 32 bits");
      ctr_[i] = value;
    }
  }

  std::uint64_t rdpmc(std::uint32_t index) override {
    if (index >= kCounters) gp("rdpmc with ECX = " + hex(index) + ": the toy PMU has counters 0 and 1");
    if (cpl_ > 0 && !pce_) gp("rdpmc at CPL " + std::to_string(cpl_) + " with CR4.PCE = 0");
    return ctr_[index];
  }

  void run(const pmc::Segment& s) override {
    for (unsigned i = 0; i < kCounters; ++i) {
      const std::uint64_t sel = evtsel_[i];
      if (!(sel & kEn)) continue;
      if (!(sel & (s.mode == pmc::Mode::user ? kUsr : kOs))) continue;
      const unsigned event = sel & 0xFF, umask = (sel >> 8) & 0xFF;
      std::uint64_t k = 0;
      if (event == 0x01) k = s.per_cycle(pmc::kCyclesSignal);
      else if (event == 0x02 && umask == 0x00) k = s.per_cycle(instructions_);
      else if (event == 0x02 && umask == 0x01) k = s.per_cycle(loads_);
      bool asserted = false;  // no edge detection on this PMU
      const pmc::counting::Advance a =
          pmc::counting::advance(ctr_[i], kWidth, s.cycles, k, pmc::counting::Filter{}, asserted);
      ctr_[i] = a.value;
      if (a.wraps != 0) ovf_ |= 1u << i;
    }
  }

  std::uint64_t interrupts() const override { return 0; }  // the toy PMU has no interrupt
  void set_reader_cpl(unsigned cpl) override { cpl_ = cpl; }
  void set_cr4_pce(bool enabled) override { pce_ = enabled; }

 private:
  std::uint64_t evtsel_[kCounters] = {};
  std::uint64_t ctr_[kCounters] = {};
  std::uint64_t ovf_ = 0;
  unsigned cpl_ = 0;
  bool pce_ = false;
  // Signal names are resolved once; a segment is then searched by number.
  pmc::Signal instructions_ = pmc::signal("instructions");
  pmc::Signal loads_ = pmc::signal("loads");
};

}  // namespace

const pmc::pmc_model_descriptor descriptor{pmc::kAbiVersion, sizeof(pmc::pmc_model_descriptor), "toy",
                                           "the imaginary toy PMU (two 32-bit counters)",
                                           &pmc::make_device<ToyDevice>, nullptr};

}  // namespace toy

// Exports the descriptor under the symbol "pmc_model_v2".
PMC_EXPORT_MODEL(toy::descriptor);
