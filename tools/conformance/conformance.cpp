// pmc-conformance: the contract every backend plugin and its device model keep
// (docs/writing-a-backend.md, "The conformance kit"), checked through the public API against any
// plugin directory. Installed as <prefix>/bin/pmc-conformance; the in-tree backends run it in
// ctest, an out-of-tree plugin author runs it on their build:
//
//   pmc-conformance --plugin-dir build/plugins --cpuid-dump toy-cpuid.txt --backend toy
//
// Options (any Boost.Test option may follow, e.g. --log_level=test_suite):
//   --plugin-dir DIR   a plugin directory searched before the installed one (repeatable); its
//                      backends are the ones checked (all loaded backends without it)
//   --cpuid-dump FILE  a CPUID dump to probe with (repeatable; default: every bundled dump)
//   --backend NAME     check only this backend
//   --events PATH      an events file or directory added to the catalog (repeatable)
// Each backend is checked on every dump it matches, or, matching none, forced onto the first.
// The checks are in this file (plugins, catalogs, bad input, profiling), counting.cpp and
// registers.cpp (kit.hpp says which). A failure names its check (the test case) and says what
// was found; output to a pipe or file is plain text: no colour, no source file paths.
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/output/compiler_log_formatter.hpp>
#include <boost/test/unit_test.hpp>

#include "kit.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

using namespace kit;

namespace {

bool has_error(const std::function<void()>& f, pmc::errc code, std::string& what) {
  try {
    f();
  } catch (const pmc::Error& e) {
    what = e.what();
    return e.kind() == code;
  }
  what = "no error";
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(there_is_something_to_check) {
  BOOST_TEST_REQUIRE(!g.dumps.empty(), "no CPUID dump given and none bundled");
  BOOST_TEST(!targets().empty(), "no backend to check (--backend " << g.backend << ")");
}

BOOST_AUTO_TEST_CASE(every_plugin_loads_and_every_probe_gives_a_reason) {
  for (const auto& dump : g.dumps) {
    pmc::Hal hal = pmc::Hal::open(config_for(dump));
    BOOST_TEST_CONTEXT(dump.filename()) {
      for (const auto& p : hal.plugins())
        if (in_dirs(p.file)) BOOST_TEST(p.error.empty(), p.error);
      BOOST_TEST(!hal.candidates().empty());
      for (const auto& c : hal.candidates()) {
        BOOST_TEST(!c.match.reason.empty(), c.backend << " gave no reason");
        BOOST_TEST(c.match.score >= 0);
        if (c.match.matched()) BOOST_TEST(!c.match.cpu_tag.empty(), c.backend << " matched without a cpu tag");
      }
      BOOST_TEST(!hal.why().empty());
    }
  }
}

// The catalog checks itself; every event encodes with its defaults, deterministically, to bits
// the PMU does not reserve, and its canonical string encodes to the same bits.
BOOST_AUTO_TEST_CASE(catalogs_encode_deterministically_within_the_register_format) {
  for (const auto& [name, dumps] : targets())
    for (const auto& dump : dumps) {
      pmc::Hal hal = pmc::Hal::open(config_for(dump, name));
      const pmc::PmuInfo& pmu = hal.pmu();
      BOOST_TEST_CONTEXT(name << " on " << dump.filename()) {
        BOOST_TEST(pmu.name == name);
        BOOST_TEST(!pmu.counters.empty());
        std::set<std::pair<int, unsigned>> seen;
        for (const auto& c : pmu.counters) {
          BOOST_TEST(c.width >= 1u);
          BOOST_TEST(c.width <= 64u);
          BOOST_TEST(seen.insert({static_cast<int>(c.kind), c.index}).second);
          BOOST_TEST((std::find(pmu.registers.begin(), pmu.registers.end(), c.counter_msr) != pmu.registers.end()));
        }
        for (const auto& problem : hal.events().validate(pmu.general_count(), pmu.cpu_tag)) BOOST_ERROR(problem);
        const auto events = hal.events().for_cpu(pmu.cpu_tag);
        BOOST_TEST(!events.empty());
        for (const pmc::EventDef* e : events) {
          BOOST_TEST_CONTEXT(e->name) {
            const pmc::Encoding a = hal.encode(default_string(*e));
            const pmc::Encoding b = hal.encode(default_string(*e));
            BOOST_TEST(a.config == b.config);
            BOOST_TEST(a.canonical == b.canonical);
            BOOST_TEST(a.name == e->name);
            const pmc::Encoding c = hal.encode(a.canonical);
            BOOST_TEST(c.config == a.config);
            BOOST_TEST(c.canonical == a.canonical);
            BOOST_TEST((a.config & pmu.reserved) == 0u, "sets reserved bits " << (a.config & pmu.reserved));
            BOOST_TEST((!a.counters.empty() || a.fixed.has_value()));
            for (unsigned i : a.counters) BOOST_TEST(pmu.general(i) != nullptr);
          }
        }
      }
    }
}

// Bad input is one clear error of the right kind, naming the string.
BOOST_AUTO_TEST_CASE(bad_event_strings_are_refused_with_their_reason) {
  for (const auto& [name, dumps] : targets()) {
    pmc::Hal hal = pmc::Hal::open(config_for(dumps.front(), name));
    BOOST_TEST_CONTEXT(name) {
      std::string what;
      BOOST_TEST(has_error([&] { (void)hal.encode("NO_SUCH_EVENT_PMCCONF"); }, pmc::errc::not_found, what), what);
      BOOST_TEST(what.find("NO_SUCH_EVENT_PMCCONF") != std::string::npos, what);
      BOOST_TEST(has_error([&] { (void)hal.encode("EVENT::"); }, pmc::errc::parse, what), what);
      const auto events = hal.events().for_cpu(hal.pmu().cpu_tag);
      BOOST_TEST_REQUIRE(!events.empty());
      const std::string first = events.front()->name;
      BOOST_TEST(has_error([&] { (void)hal.encode(first + ":nosuchmodifier=1"); }, pmc::errc::attribute, what), what);
      for (const pmc::EventDef* e : events)
        if (e->unit_masks) {
          BOOST_TEST(has_error([&] { (void)hal.encode(e->name + ":NO_SUCH_MASK"); }, pmc::errc::unit_mask, what), what);
          break;
        }
    }
  }
}

// Profiling (docs/writing-a-backend.md "Profiling"): a backend with a ProfilingDriver returns
// histograms of the shape it was asked for, which reset() empties; one without refuses. A
// driver samples the events given a period (docs/profiling.md): the event gets period=4096 (an
// interrupt interval of the Alpha 21064's too) when its backend takes one.
BOOST_AUTO_TEST_CASE(profiling_keeps_the_contract) {
  for (const auto& [name, dumps] : targets()) {
    pmc::Hal hal = pmc::Hal::open(config_for(dumps.front(), name));
    BOOST_TEST_CONTEXT(name) {
      const pmc::PmuInfo& pmu = hal.pmu();
      const pmc::EventDef* event = hal.events().find_generic("cycles", pmu.cpu_tag, nullptr);
      if (!event) event = hal.events().for_cpu(pmu.cpu_tag).at(0);
      pmc::Session s = hal.session();
      bool sampled = false;
      if (hal.backend()->profiles) {
        try {
          s.add(default_string(*event) + ":period=4096");
          sampled = true;
        } catch (const pmc::Error&) {  // a backend without period=: the event as it is
        }
      }
      if (!sampled) s.add(default_string(*event));
      pmc::ProfileRequest request;
      request.levels = true;
      request.pc = pmc::PcRange{pmc::AddressSpace::user, 0x10000, 0x10400};
      if (!hal.backend()->profiles) {
        std::string what;
        BOOST_TEST(has_error([&] { s.profile(request); }, pmc::errc::not_supported, what), what);
        continue;
      }
      pmc::ProfileRequest empty_range = request;
      empty_range.pc->end = empty_range.pc->start;
      BOOST_CHECK_THROW(s.profile(empty_range), pmc::Error);
      s.profile(request);
      BOOST_TEST(s.level_histograms().empty());  // nothing before the first start
      const auto w = pmc::parse_workload(
          "[[segment]]\ncycles = 1048576\npc = [0x10000, 0x10400]\nsignals = { instructions = 1 }\n", "p.toml");
      const pmc::WorkloadRun run = s.run(w);
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
      BOOST_TEST(levels[0].total() <= run.interrupts);
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
    }
  }
}

// Boost.Test's report, without the source file and line it prefixes to each entry: they are
// the kit's, on the machine that built it, and mean nothing to the plugin's author. A failure
// reads `error: in "<check>": <what was found>`.
class PlainFormatter final : public boost::unit_test::output::compiler_log_formatter {
 protected:
  void print_prefix(std::ostream&, boost::unit_test::const_string, std::size_t) override {}
};
bool g_plain_log = true;  // false when the command line chose a log format or sink

bool init_unit_test() {
  boost::unit_test::framework::master_test_suite().p_name.value = "pmc-conformance";
  if (g_plain_log) boost::unit_test::unit_test_log.set_formatter(new PlainFormatter);
  return true;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

int main(int argc, char** argv) {
  std::vector<char*> rest{argv[0]};
  bool colour_chosen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "pmc-conformance: " << what << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--plugin-dir") g.plugin_dirs.emplace_back(fs::absolute(value("--plugin-dir")));
    else if (a == "--cpuid-dump") g.dumps.emplace_back(pmc::resolve_data(value("--cpuid-dump"), pmc::DataKind::cpuid_dump));
    else if (a == "--backend") g.backend = value("--backend");
    else if (a == "--events") g.events.emplace_back(fs::absolute(value("--events")));
    else {
      if (starts_with(a, "--log_format") || starts_with(a, "-f") || starts_with(a, "--output_format") ||
          starts_with(a, "-o") || starts_with(a, "--logger"))
        g_plain_log = false;
      if (starts_with(a, "--color_output") || starts_with(a, "--no_color_output") || a == "-x") colour_chosen = true;
      rest.push_back(argv[i]);
    }
  }
  // Colour only on a terminal: a pipe or a file gets plain text, whatever Boost's default.
  static char no_colour[] = "--color_output=no";
  if (!colour_chosen && !std::getenv("BOOST_TEST_COLOR_OUTPUT") && !(isatty(STDOUT_FILENO) && isatty(STDERR_FILENO)))
    rest.push_back(no_colour);
  if (g.dumps.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(pmc::default_paths().data / "cpuid", ec))
      if (e.path().extension() == ".txt") g.dumps.push_back(e.path());
    std::sort(g.dumps.begin(), g.dumps.end());
  }
  for (const auto& d : g.plugin_dirs)
    if (!fs::is_directory(d)) {
      std::cerr << "pmc-conformance: " << d.string() << ": not a directory\n";
      return 2;
    }
  return boost::unit_test::unit_test_main(&init_unit_test, static_cast<int>(rest.size()), rest.data());
}
