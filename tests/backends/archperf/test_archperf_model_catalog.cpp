// The archperf backend with a model's catalog (the keys of docs/event-format.md "Events of one
// model"), from a small events file each test writes and loads through events_path:
//  - encode: UMASK2 (47:40) and EQ (36) pass, refused only where CPUID leaf 23H says the core
//    lacks them; the extra register, exclusive flag flow into the Encoding; the EBX check holds
//    for archperf.toml's architectural events, not for a model's event of the same code;
//  - fixed counters 4-6 (CPUID.0AH:ECX bitmap) hold fixed-only events, on the device model;
//  - extra MSRs: a session writes each event's value into the MSR its placement chose before the
//    counters start and 0 after they stop (a device spy records them: the archperf model has no
//    offcore MSRs), a paired event on 0x1A7 takes its second code, a third value is multiplexed
//    into a second event set, and access "msr" writes through /dev/cpu/N/msr (a file here);
//  - an exclusive event counts in an event set of its own.
// Expected register values are worked out by hand from docs/hardware/archperf.md (sections 2, 3,
// 3.1a, 7b).
#define BOOST_TEST_MODULE archperf_model_catalog
#include <boost/test/unit_test.hpp>

#include "perf_event.hpp"
#include "session_impl.hpp"
#include "support/backend.hpp"
#include "support/child_process.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The model's events (codes are Skylake's where the name is Intel's; the rest are made up).
const char* kCatalog = R"(backend = "archperf"
description = "test: one model's events"

[[event]]
name = "TEST.DIVIDER_ACTIVE"
code = 0x14
umask = 0x09
defaults = { c = 1 }
topic = "core"
desc = "test: cycles the divider is busy"

[[event]]
name = "CPU_CLK_UNHALTED.THREAD_P"
code = 0x3C
umask = 0x00
topic = "pipeline"
desc = "test: the model's own name for core cycles"

[[event]]
name = "TEST.OCR_A"
code = 0xB7
code2 = 0xBB
umask = 0x01
extra = { offcore_rsp = 0x10001 }
topic = "memory"
period = 100003
desc = "test: offcore responses A"

[[event]]
name = "TEST.OCR_B"
code = 0xB7
code2 = 0xBB
umask = 0x01
extra = { offcore_rsp = 0x10002 }
topic = "memory"
desc = "test: offcore responses B"

[[event]]
name = "TEST.OCR_C"
code = 0xB7
code2 = 0xBB
umask = 0x01
extra = { offcore_rsp = 0x10004 }
topic = "memory"
desc = "test: offcore responses C"

[[event]]
name = "TEST.LOAD_LATENCY"
code = 0xCD
umask = 0x01
extra = { ldlat = 0x80 }
precise = 2
topic = "memory"
desc = "test: loads slower than 128 cycles"

[[event]]
name = "TEST.ALONE"
code = 0xC3
umask = 0x01
exclusive = true
topic = "pipeline"
desc = "test: taken alone"

[[event]]
name = "TEST.EXT"
code = 0x2E
umask = 0x41
umask2 = 0x02
set = { eq = 1 }
defaults = { c = 1 }
topic = "cache"
desc = "test: unit-mask extension and equal"

[[event]]
name = "TEST.OLD"
code = 0xC4
umask = 0x04
deprecated = true
topic = "pipeline"
desc = "test: deprecated"
)";

// Fixed-only events (`counters = []`): Intel's Atom top-down counters 4-6 (event 0, unit mask
// index + 1, fact sheet 7b).
const char* kFixedCatalog = R"(backend = "archperf"
description = "test: fixed counters 4-6"

[[event]]
name = "TEST.BAD_SPEC"
code = 0x00
umask = 0x05
counters = []
fixed = 4
topic = "pipeline"
desc = "test: fixed counter 4 only"

[[event]]
name = "TEST.FE_BOUND"
code = 0x00
umask = 0x06
counters = []
fixed = 5
topic = "pipeline"
desc = "test: fixed counter 5 only"

[[event]]
name = "TEST.RETIRING"
code = 0x00
umask = 0x07
counters = []
fixed = 6
topic = "pipeline"
desc = "test: fixed counter 6 only"
)";

// A version-6-style core (AIDA64 format): 8 general counters, fixed counters 0-6 (the ECX
// bitmap), leaf 23H with sub-leaves 0 and 1 and 23H.0:EBX = `ebx23` (bit 0 UMASK2, bit 1 EQ);
// leaf 0AH's EBX = `ebx_0a`. Model 0xFF, which no cpu/ catalog claims: only this test's events.
std::string v6_dump(std::uint32_t ebx23, std::uint32_t ebx_0a = 0) {
  return fmt::format(R"(# test: family 6 model 0xFF, perfmon v6, fixed counters 0-6, leaf 23H
CPUID 00000000: 00000023-756E6547-6C65746E-49656E69
CPUID 00000001: 000F06F1-00100800-7FFAFBBF-BFEBFBFF
CPUID 00000007: 00000001-00000000-00000000-00000000 [SL 00]
CPUID 00000007: 00000100-00000000-00000000-00000000 [SL 01]
CPUID 0000000A: 08300806-{:08X}-0000007F-00008603
CPUID 00000023: 00000003-{:08X}-00000000-00000000 [SL 00]
CPUID 00000023: 000000FF-0000007F-00000000-00000000 [SL 01]
)",
                     ebx_0a, ebx23);
}

struct Files {
  pmc_test::TempDir tmp{"pmc-test-archperf-catalog"};
  fs::path catalog = tmp.path() / "model.toml";
  Files() { pmc_test::spit(catalog, kCatalog); }
  fs::path dump(const std::string& name, const std::string& text) const {
    const fs::path p = tmp.path() / name;
    pmc_test::spit(p, text);
    return p;
  }
  pmc::Hal open(const std::string& cpu, std::vector<fs::path> more = {}) const {
    pmc::Config cfg;
    cfg.cpu = cpu;
    cfg.access = "sim";
    cfg.backend = "archperf";
    cfg.events_path = {catalog};
    cfg.events_path.insert(cfg.events_path.end(), more.begin(), more.end());
    return pmc::Hal::open(cfg);
  }
};

std::string skylake() { return std::string(PMC_SOURCE_DIR) + "/data/cpuid/skylake.txt"; }

std::string encode_error(const pmc::Hal& hal, const std::string& event) {
  try {
    (void)hal.encode(event);
  } catch (const pmc::Error& e) {
    return e.what();
  }
  BOOST_ERROR("encoded " << event);
  return {};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_FIXTURE_TEST_CASE(encodings_carry_the_models_facts, Files) {
  const pmc::Hal hal = open(skylake());
  // Fact sheet 3.1: event 0x14, umask 0x09, USR, OS, EN, CMASK 1.
  BOOST_TEST(hal.encode("TEST.DIVIDER_ACTIVE").config == 0x01430914u);
  const pmc::Encoding ocr = hal.encode("TEST.OCR_A:u");
  BOOST_TEST(ocr.config == 0x4101B7u);
  BOOST_TEST(ocr.extra == "offcore_rsp");
  BOOST_TEST(ocr.extra_value == 0x10001u);
  BOOST_TEST(ocr.extra_msrs == (std::vector<std::uint32_t>{0x1A6, 0x1A7}), boost::test_tools::per_element());
  const pmc::Encoding ld = hal.encode("TEST.LOAD_LATENCY");
  BOOST_TEST(ld.extra_msrs == std::vector<std::uint32_t>{0x3F6}, boost::test_tools::per_element());
  BOOST_TEST(hal.encode("TEST.ALONE").exclusive);
  BOOST_TEST(!hal.encode("TEST.DIVIDER_ACTIVE").exclusive);
  // Skylake has no leaf 23H: UMASK2 and EQ are accepted (policy 10.22): 0x2E/0x41, umask2 2
  // (bit 41), EQ (bit 36), CMASK 1.
  BOOST_TEST(hal.encode("TEST.EXT").config == ((2ull << 40) | (1ull << 36) | 0x0143412Eull));
  // A deprecated event still encodes.
  BOOST_TEST(hal.encode("TEST.OLD").config == 0x4304C4u);
  // The extra MSRs are registers the driver may touch (archperf.toml's [extra.*]).
  for (std::uint32_t msr : {0x1A6u, 0x1A7u, 0x3F6u, 0x3F7u})
    BOOST_TEST((std::find(hal.pmu().registers.begin(), hal.pmu().registers.end(), msr) != hal.pmu().registers.end()),
               msr);
}

BOOST_FIXTURE_TEST_CASE(umask2_and_eq_follow_cpuid_leaf_23h, Files) {
  // 23H.0:EBX = 3: both fields exist.
  const pmc::Hal both = open(dump("both.txt", v6_dump(0x3)).string());
  BOOST_TEST(both.encode("TEST.EXT").config == ((2ull << 40) | (1ull << 36) | 0x0143412Eull));
  // EBX = 0 (Meteor Lake's value): UMASK2 is refused first, naming the CPUID bit.
  const pmc::Hal none = open(dump("none.txt", v6_dump(0x0)).string());
  std::string m = encode_error(none, "TEST.EXT");
  BOOST_TEST(has(m, "UMASK2"), m);
  BOOST_TEST(has(m, "CPUID.23H.0:EBX[0] = 0"), m);
  // EBX = 1: UMASK2 yes, EQ no.
  const pmc::Hal no_eq = open(dump("no-eq.txt", v6_dump(0x1)).string());
  m = encode_error(no_eq, "TEST.EXT");
  BOOST_TEST(has(m, "EQ"), m);
  BOOST_TEST(has(m, "CPUID.23H.0:EBX[1] = 0"), m);
  // Events that set neither are unaffected.
  BOOST_TEST(none.encode("TEST.DIVIDER_ACTIVE").config == 0x01430914u);
}

BOOST_FIXTURE_TEST_CASE(the_ebx_check_is_the_architectural_events_own, Files) {
  // EBX bit 0 set: UnHalted Core Cycles is not available (fact sheet 7a).
  const pmc::Hal hal = open(dump("no-cycles.txt", v6_dump(0x3, 0x1)).string());
  for (const char* arch : {"UNHALTED_CORE_CYCLES", "cycles", "CPU_CLK_UNHALTED.CORE"}) {
    const std::string m = encode_error(hal, arch);
    BOOST_TEST(has(m, "EBX bit 0 is set"), arch << ": " << m);
  }
  // The model's event of the same code and unit mask is its own: its list says it exists.
  BOOST_TEST(hal.encode("CPU_CLK_UNHALTED.THREAD_P").config == 0x43003Cu);
}

BOOST_FIXTURE_TEST_CASE(fixed_counters_4_to_6_count_their_events, Files) {
  const fs::path fixed = tmp.path() / "fixed.toml";
  pmc_test::spit(fixed, kFixedCatalog);
  const pmc::Hal hal = open(dump("v6.txt", v6_dump(0x3)).string(), {fixed});
  BOOST_REQUIRE(hal.pmu().fixed(6));
  BOOST_TEST(hal.pmu().fixed(6)->counter_msr == 0x30Fu);
  const pmc::Encoding e = hal.encode("TEST.RETIRING");
  BOOST_TEST(e.counters.empty());
  BOOST_TEST(e.fixed.value_or(99) == 6u);
  pmc::Session s = hal.session();
  s.add("TEST.BAD_SPEC");
  s.add("TEST.FE_BOUND");
  s.add("TEST.RETIRING");
  s.add("instructions");
  // 1000 user cycles; the model counts fixed counter i's signal fixed.<i> (policy 10.15).
  s.run(pmc::parse_workload(R"([[segment]]
cycles = 1000
signals = { instructions = 2, "fixed.4" = 1, "fixed.5" = 3, "fixed.6" = 2 }
)",
                            "inline.toml"));
  const auto r = s.read();
  BOOST_REQUIRE(r.size() == 4u);
  const std::uint64_t expected[] = {1000, 3000, 2000, 2000};
  const unsigned index[] = {4, 5, 6, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST((r[i].counter_kind == pmc::CounterKind::fixed), r[i].event);
    BOOST_TEST(r[i].counter == index[i], r[i].event);
    BOOST_TEST(r[i].value == expected[i], r[i].event);
  }
}

// Access "perf": the extra value is perf_event_attr.config1 (Linux picks the MSR, and the
// second code with it); fixed-only events get Linux's pseudo-encodings, event 0 with unit mask
// index + 1 from fixed counter 2 on (fact sheet 7b).
BOOST_FIXTURE_TEST_CASE(access_perf_passes_config1, Files) {
  const pmc::Hal hal = open(skylake());
  const pmc::RegisterFormat& format = hal.events().format();
  const pmc::detail::PerfEventSpec ocr = pmc::detail::perf_raw_event(hal.encode("TEST.OCR_A:u"), format);
  BOOST_TEST(ocr.config == 0x01B7u);  // USR, OS and EN are the kernel's
  BOOST_TEST(ocr.config1 == 0x10001u);
  BOOST_TEST(!ocr.exclude_user);
  BOOST_TEST(ocr.exclude_kernel);
  BOOST_TEST(has(ocr.describe(), "config1 0x10001"), ocr.describe());
  BOOST_TEST(pmc::detail::perf_raw_event(hal.encode("TEST.LOAD_LATENCY"), format).config1 == 0x80u);
  BOOST_TEST(pmc::detail::perf_raw_event(hal.encode("TEST.DIVIDER_ACTIVE"), format).config1 == 0u);
  for (unsigned i = 2; i < 7; ++i) {
    pmc::Encoding e;
    e.event = "fixed";
    e.fixed = i;
    e.config = (std::uint64_t{i + 1} << 8) | 0x430000;  // event 0, unit mask i + 1, USR, OS, EN
    e.fixed_control = 0x3;
    BOOST_TEST(pmc::detail::perf_raw_event(e, format).config == (std::uint64_t{i + 1} << 8), i);
  }
}

// ---------------------------------------------------------------------------------------------
// Extra MSRs through a session: the archperf device model behind a spy that keeps the extra
// MSRs (0x1A6, 0x1A7, 0x3F6, 0x3F7) itself and logs their writes.
namespace {

std::vector<std::pair<std::uint32_t, std::uint64_t>> extra_writes;

class ExtraMsrSpy final : public pmc::Device {
 public:
  explicit ExtraMsrSpy(const pmc::CpuInfo& cpu) : inner_(pmc_test::plugin_device("archperf", cpu)) {}
  [[nodiscard]] std::string_view name() const override { return inner_.device->name(); }
  std::uint64_t read(std::uint32_t msr) override { return extra(msr) ? held_[msr] : inner_.device->read(msr); }
  void write(std::uint32_t msr, std::uint64_t value) override {
    if (!extra(msr)) {
      inner_.device->write(msr, value);
      if (msr >= 0x186 && msr < 0x18E) selects_[msr] = value;
      return;
    }
    held_[msr] = value;
    extra_writes.emplace_back(msr, value);
  }
  std::uint64_t rdpmc(std::uint32_t index) override { return inner_.device->rdpmc(index); }
  void run(const pmc::Segment& segment) override { inner_.device->run(segment); }
  [[nodiscard]] bool executes(const pmc::Segment& segment) const override { return inner_.device->executes(segment); }
  [[nodiscard]] std::uint64_t interrupts() const override { return inner_.device->interrupts(); }
  void set_reader_cpl(unsigned cpl) override { inner_.device->set_reader_cpl(cpl); }
  void set_cr4_pce(bool enabled) override { inner_.device->set_cr4_pce(enabled); }
  [[nodiscard]] std::uint64_t select(std::uint32_t msr) const {
    auto it = selects_.find(msr);
    return it == selects_.end() ? 0 : it->second;
  }

 private:
  static bool extra(std::uint32_t msr) { return msr == 0x1A6 || msr == 0x1A7 || msr == 0x3F6 || msr == 0x3F7; }
  pmc::detail::DeviceHandle inner_;
  std::map<std::uint32_t, std::uint64_t> held_;
  std::map<std::uint32_t, std::uint64_t> selects_;
};

struct SpySession : Files {
  pmc_test::LoadedForTest archperf{"archperf"};
  pmc::CpuInfo cpu = pmc::load_cpu_file(skylake());
  std::shared_ptr<pmc::detail::Context> ctx = pmc_test::spy_context<ExtraMsrSpy>(archperf, cpu);
  SpySession() {
    extra_writes.clear();
    ctx->catalog.load(catalog, "archperf");
    ctx->pmu = archperf.backend().pmu(cpu, ctx->catalog, archperf.probe(cpu));
  }
  pmc::Session session() const { return pmc::Session(std::make_unique<pmc::detail::SessionImpl>(ctx)); }
  static ExtraMsrSpy& spy(pmc::Session& s) {
    return dynamic_cast<pmc_test::ChunkSpy<ExtraMsrSpy>&>(pmc_test::device(s)).inner();
  }
};

// The extra MSR writes since `from`, as "0x1A6=0x10001 0x1A7=0x10002".
std::string writes(std::size_t from = 0, std::size_t count = ~std::size_t{0}) {
  std::string out;
  for (std::size_t i = from; i < extra_writes.size() && i - from < count; ++i)
    out += fmt::format("{}0x{:X}=0x{:X}", out.empty() ? "" : " ", extra_writes[i].first, extra_writes[i].second);
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(extra_msrs_are_written_before_counting_and_cleared_after, SpySession) {
  pmc::Session s = session();
  s.add("TEST.OCR_A");
  s.add("TEST.OCR_B");
  BOOST_TEST(pmc::detail::SessionAccess::impl(s).event_sets() == 1u);
  BOOST_TEST(extra_writes.empty());  // nothing before start
  s.start();
  BOOST_TEST(writes() == "0x1A6=0x10001 0x1A7=0x10002");
  // OCR_B uses 0x1A7: its event select has the second code, 0xBB (USR, OS, EN: 0x4301BB).
  std::vector<std::uint64_t> selects;
  for (std::uint32_t sel = 0x186; sel < 0x18A; ++sel) selects.push_back(spy(s).select(sel));
  BOOST_TEST((std::find(selects.begin(), selects.end(), 0x4301B7u) != selects.end()));
  BOOST_TEST((std::find(selects.begin(), selects.end(), 0x4301BBu) != selects.end()));
  extra_writes.clear();
  s.stop();
  BOOST_TEST(writes() == "0x1A6=0x0 0x1A7=0x0");
  // The readings name the events as given, not the second code.
  BOOST_TEST(s.read().at(1).name == "TEST.OCR_B");
}

BOOST_FIXTURE_TEST_CASE(a_third_value_is_multiplexed_and_a_group_refused, SpySession) {
  pmc::Session s = session();
  s.add("TEST.OCR_A");
  s.add("TEST.OCR_B");
  s.add("TEST.OCR_C");  // no MSR left in the first set: a second one
  BOOST_TEST(pmc::detail::SessionAccess::impl(s).event_sets() == 2u);
  s.start();
  BOOST_TEST(writes() == "0x1A6=0x10001 0x1A7=0x10002");
  extra_writes.clear();
  // One slice (AccessOptions::rotation_cycles) later the second set is on: the first set's
  // values cleared, then OCR_C's written.
  s.run(pmc::parse_workload("[[segment]]\ncycles = 150000\n", "inline.toml"));
  BOOST_TEST((extra_writes.size() >= 3u));
  BOOST_TEST(writes(0, 3) == "0x1A6=0x0 0x1A7=0x0 0x1A6=0x10004");
  s.stop();

  // As one group they cannot count: the message names the events, the values and the MSRs.
  pmc::Session g = session();
  try {
    g.add_group({"TEST.OCR_A", "TEST.OCR_B", "TEST.OCR_C"});
    BOOST_ERROR("grouped three offcore values");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(has(m, "TEST.OCR_A, TEST.OCR_B and TEST.OCR_C"), m);
    BOOST_TEST(has(m, "MSRs 0x1A6 and 0x1A7 hold one value each"), m);
  }
}

BOOST_FIXTURE_TEST_CASE(an_exclusive_event_gets_a_set_of_its_own, SpySession) {
  pmc::Session s = session();
  s.add("TEST.ALONE");
  s.add("TEST.DIVIDER_ACTIVE");
  s.add("instructions");
  BOOST_TEST(pmc::detail::SessionAccess::impl(s).event_sets() == 2u);
  s.run(pmc::parse_workload("[[segment]]\ncycles = 400000\nsignals = { instructions = 1 }\n", "inline.toml"));
  for (const pmc::Reading& r : s.read()) BOOST_TEST(r.extrapolated, r.event);
  pmc::Session g = session();
  try {
    g.add_group({"TEST.ALONE", "instructions"});
    BOOST_ERROR("grouped an exclusive event");
  } catch (const pmc::Error& e) {
    BOOST_TEST(has(e.what(), "must be the only event counting"), e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Access "msr" over a file-backed /dev/cpu/0/msr (as tests/hal/access/test_msr.cpp builds it):
// the load-latency threshold lands in MSR 0x3F6 at start and is cleared at stop.
BOOST_FIXTURE_TEST_CASE(access_msr_programs_the_extra_msr, Files) {
  pmc::detail::AccessOptions options;
  options.msr_root = tmp.path() / "dev" / "cpu";
  options.proc_root = tmp.path() / "proc";
  options.sysfs_root = tmp.path() / "sys";
  options.load_msr_module = false;
  pmc_test::spit(options.proc_root / "sys" / "kernel" / "nmi_watchdog", "0\n");
  const fs::path dev = options.msr_root / "0" / "msr";
  fs::create_directories(dev.parent_path());
  {
    const int fd = ::open(dev.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(ftruncate(fd, 0x1000) == 0);
    ::close(fd);
  }
  auto peek = [&](std::uint32_t msr) {
    const int fd = ::open(dev.c_str(), O_RDONLY);
    std::uint64_t v = 0;
    BOOST_REQUIRE(pread(fd, &v, 8, msr) == 8);
    ::close(fd);
    return v;
  };
  const pmc_test::LoadedForTest archperf("archperf");
  auto ctx = std::make_shared<pmc::detail::Context>();
  ctx->loaded = archperf.b;
  ctx->cpu = pmc::load_cpu_file(skylake());
  ctx->cpu.from = pmc::CpuSource::native;  // access "msr" programs this machine: pretend it is one
  ctx->catalog = archperf.data;
  ctx->catalog.load(catalog, "archperf");
  ctx->pmu = archperf.backend().pmu(ctx->cpu, ctx->catalog, archperf.probe(ctx->cpu));
  ctx->access = pmc::detail::AccessKind::msr;
  pmc::detail::SessionImpl s(ctx, pmc::Scope::on_cpu(0), options);
  s.add("TEST.LOAD_LATENCY");
  s.start();
  BOOST_TEST(peek(0x3F6) == 0x80u);
  s.stop();
  BOOST_TEST(peek(0x3F6) == 0u);
}
