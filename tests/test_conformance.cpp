// The backend conformance kit: every backend plugin found in the plugin directory, against
// every bundled CPUID dump, must keep the contract of docs/writing-a-backend.md. An
// out-of-tree backend author runs the same checks by pointing PMC_CONFORMANCE_PLUGIN_DIR at
// their build directory.
#define BOOST_TEST_MODULE conformance
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/profile.hpp>
#include <pmc/sim/device.hpp>
#include <pmc/sim/workload.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> dumps() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid"))
    if (e.path().extension() == ".txt") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

pmc::Config config_for(const fs::path& dump, const std::string& backend = "auto") {
  pmc::Config cfg;
  cfg.cpu = dump.string();
  cfg.backend = backend;
  if (const char* dir = std::getenv("PMC_CONFORMANCE_PLUGIN_DIR")) cfg.plugin_path.push_back(dir);
  return cfg;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_plugin_loads_and_every_probe_gives_a_reason) {
  BOOST_REQUIRE(!dumps().empty());
  for (const auto& dump : dumps()) {
    pmc::Hal hal = pmc::Hal::open(config_for(dump));
    BOOST_TEST_CONTEXT(dump.filename()) {
      for (const auto& p : hal.plugins()) BOOST_TEST(p.error.empty(), p.error);
      BOOST_TEST(!hal.candidates().empty());
      for (const auto& c : hal.candidates()) {
        BOOST_TEST(!c.match.reason.empty(), c.backend << " gave no reason");
        BOOST_TEST(c.match.score >= 0);
      }
      BOOST_TEST(!hal.why().empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(matched_backends_keep_the_contract) {
  unsigned matched = 0;
  for (const auto& dump : dumps()) {
    pmc::Hal hal = pmc::Hal::open(config_for(dump));
    if (!hal.backend()) continue;
    ++matched;
    const pmc::PmuInfo& pmu = hal.pmu();
    BOOST_TEST_CONTEXT(dump.filename() << " -> " << pmu.name) {
      // Geometry: at least one counter, sane widths, unique indexes, registers declared.
      BOOST_TEST(!pmu.counters.empty());
      std::set<std::pair<int, unsigned>> seen;
      for (const auto& c : pmu.counters) {
        BOOST_TEST(c.width >= 1u);
        BOOST_TEST(c.width <= 64u);
        BOOST_TEST(seen.insert({static_cast<int>(c.kind), c.index}).second);
        BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.counter_msr) != pmu.registers.end()));
        BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.control_msr) != pmu.registers.end()));
      }
      // The catalog checks itself.
      for (const auto& problem : hal.events().validate(pmu.general_count())) BOOST_ERROR(problem);
      auto events = hal.events().for_cpu(pmu.cpu_tag);
      BOOST_TEST(!events.empty());
      for (const pmc::EventDef* e : events) {
        BOOST_TEST_CONTEXT(e->name) {
          // Every event encodes with its defaults, deterministically, and its canonical string
          // encodes to the same bits.
          pmc::Encoding a = hal.encode(e->name);
          pmc::Encoding b = hal.encode(e->name);
          BOOST_TEST(a.config == b.config);
          BOOST_TEST(a.canonical == b.canonical);
          pmc::Encoding c = hal.encode(a.canonical);
          BOOST_TEST(c.config == a.config);
          BOOST_TEST(c.canonical == a.canonical);
          BOOST_TEST((!a.counters.empty() || a.fixed.has_value()));
          // The driver can program it on the device model without a register fault.
          pmc::Session s = hal.session();
          s.add(e->name);
          BOOST_CHECK_NO_THROW(s.start());
          BOOST_CHECK_NO_THROW(s.stop());
          BOOST_CHECK_NO_THROW((void)s.read());
        }
      }
      // Counting works end to end where the backend has a generic instructions event.
      if (hal.events().find_generic("instructions", pmu.cpu_tag, nullptr)) {
        pmc::Session s = hal.session();
        s.add("instructions");
        s.start();
        auto w = pmc::sim::parse_workload("[[segment]]\ncycles = 1000\nsignals = { instructions = 3 }\n", "c.toml");
        pmc::sim::run_workload(*s.device(), w, 64, [&] { s.poll(); });
        s.stop();
        BOOST_TEST(s.read().at(0).value == 3000u);
      }
    }
  }
  BOOST_TEST(matched >= 4u);  // the four bundled P6 dumps at least
}

// Profiling (docs/writing-a-backend.md "Profiling (optional)"): a backend that is a
// pmc::ProfilingDriver returns histograms of the shape it was asked for, which reset() empties;
// one that is not refuses Session::profile() with not_supported. Each backend runs on the
// first bundled dump it matches, or is forced onto the first dump when it matches none (the
// emulated alpha21064_sim).
BOOST_AUTO_TEST_CASE(profiling_keeps_the_contract) {
  std::map<std::string, fs::path> dump_of;
  for (const auto& dump : dumps()) {
    pmc::Hal hal = pmc::Hal::open(config_for(dump));
    for (const auto& p : hal.plugins())
      if (p.error.empty() && !dump_of.count(p.backend)) dump_of[p.backend] = dumps().front();
    for (const auto& c : hal.candidates())
      if (c.match.matched() && dump_of[c.backend] == dumps().front()) dump_of[c.backend] = dump;
  }
  unsigned profiling = 0;
  for (const auto& [name, dump] : dump_of) {
    pmc::Config cfg = config_for(dump, name);
    cfg.access = "sim";
    pmc::Hal hal = pmc::Hal::open(cfg);
    BOOST_TEST_CONTEXT(name) {
      const pmc::PmuInfo& pmu = hal.pmu();
      const pmc::EventDef* event = hal.events().find_generic("cycles", pmu.cpu_tag, nullptr);
      if (!event) event = hal.events().for_cpu(pmu.cpu_tag).at(0);
      pmc::Session s = hal.session();
      s.add(event->name);
      pmc::ProfileRequest request;
      request.levels = true;
      request.pc = pmc::PcRange{pmc::AddressSpace::user, 0x10000, 0x10400};
      const bool driver = dynamic_cast<const pmc::ProfilingDriver*>(hal.backend()) != nullptr;
      if (!driver) {
        try {
          s.profile(request);
          BOOST_ERROR("profile() accepted by a backend without a ProfilingDriver");
        } catch (const pmc::Error& e) {
          BOOST_TEST((e.code() == pmc::errc::not_supported), e.what());
        }
        continue;
      }
      ++profiling;
      pmc::ProfileRequest empty_range = request;
      empty_range.pc->end = empty_range.pc->start;
      BOOST_CHECK_THROW(s.profile(empty_range), pmc::Error);
      s.profile(request);
      BOOST_TEST(s.level_histograms().empty());  // nothing before the first start
      s.start();
      auto w = pmc::sim::parse_workload(
          "[[segment]]\ncycles = 1048576\npc = [0x10000, 0x10400]\nsignals = { instructions = 1 }\n", "p.toml");
      pmc::sim::run_workload(*s.device(), w, 64, [&] { s.poll(); });
      s.stop();
      const auto levels = s.level_histograms();
      const auto profiles = s.pc_profiles();
      BOOST_TEST_REQUIRE(levels.size() == 1u);
      BOOST_TEST_REQUIRE(profiles.size() == 1u);
      BOOST_TEST(!levels[0].bins.empty());
      std::set<std::string> labels;
      for (const auto& b : levels[0].bins) {
        BOOST_TEST(!b.label.empty());
        BOOST_TEST(labels.insert(b.label).second, "label " << b.label << " twice");
      }
      BOOST_TEST(levels[0].total() <= s.device()->interrupts());
      const pmc::PcProfile& p = profiles[0];
      BOOST_TEST((p.range.space == pmc::AddressSpace::user));
      BOOST_TEST(p.range.start == 0x10000u);
      BOOST_TEST(p.range.end == 0x10400u);
      BOOST_TEST_REQUIRE(p.bucket_bytes > 0u);
      BOOST_TEST(p.samples.size() == (0x400 + p.bucket_bytes - 1) / p.bucket_bytes);
      BOOST_TEST(p.total() <= levels[0].total());  // every PC sample is an interrupt sampled
      s.reset();
      BOOST_TEST(s.level_histograms().at(0).total() == 0u);
      BOOST_TEST(s.pc_profiles().at(0).total() == 0u);
      BOOST_TEST(s.pc_profiles().at(0).samples.size() == p.samples.size());
    }
  }
  if (!std::getenv("PMC_CONFORMANCE_PLUGIN_DIR")) BOOST_TEST(profiling >= 1u);  // alpha21064_sim
}
