// The archperf catalog and encoder as a golden table (tests/data/archperf_golden.toml): every row
// is an event string, the CPU it is encoded for, and the IA32_PERFEVTSELx value computed by hand
// from the SDM bit layout (or the error kind expected). Encoded end to end: CPUID dump -> Hal ->
// archperf plugin -> events.toml -> encoder. Also: the catalog checks itself, and model-specific
// catalogs can be added on events_path.
#define BOOST_TEST_MODULE archperf_golden
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string> kDumps = {
    {"v1", PMC_TEST_DATA "/cpuid/archperf-v1-yonah.txt"},
    {"core2", PMC_SOURCE_DIR "/data/cpuid/core2.txt"},
    {"v2", PMC_TEST_DATA "/cpuid/archperf-v2-penryn.txt"},
    {"v3", PMC_TEST_DATA "/cpuid/archperf-v3-nehalem.txt"},
    {"v4", PMC_TEST_DATA "/cpuid/archperf-v4-skylake.txt"},
    {"icl", PMC_SOURCE_DIR "/data/cpuid/intel-icelake.txt"},
    {"guest", PMC_TEST_DATA "/cpuid/archperf-v5-guest.txt"},
};

const std::map<std::string, pmc::errc> kErrors = {
    {"not_found", pmc::errc::not_found},
    {"not_supported", pmc::errc::not_supported},
    {"unit_mask", pmc::errc::unit_mask},
    {"attribute", pmc::errc::attribute},
    {"attribute_value", pmc::errc::attribute_value},
    {"feature_combination", pmc::errc::feature_combination},
    {"parse", pmc::errc::parse},
    {"invalid_argument", pmc::errc::invalid_argument},
    {"no_counter", pmc::errc::no_counter},
};

pmc::Hal open_dump(const std::string& dump, std::vector<fs::path> events_path = {}) {
  pmc::Config cfg;
  cfg.cpu = dump;
  cfg.backend = "auto";
  cfg.events_path = std::move(events_path);
  return pmc::Hal::open(cfg);
}

std::vector<unsigned> ints(const toml::node_view<const toml::node>& v) {
  std::vector<unsigned> out;
  for (const auto& c : *v.as_array()) out.push_back(static_cast<unsigned>(c.value<std::int64_t>().value()));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_dump_is_archperf_with_its_version_tag) {
  const std::map<std::string, std::string> tags = {{"v1", "v1"}, {"core2", "v2"}, {"v2", "v2"}, {"v3", "v3"},
                                                   {"v4", "v4"}, {"icl", "v5"},   {"guest", "v5"}};
  for (const auto& [key, dump] : kDumps) {
    BOOST_TEST_CONTEXT(dump) {
      pmc::Hal hal = open_dump(dump);
      BOOST_REQUIRE(hal.backend());
      BOOST_TEST(std::string(hal.backend()->name) == "archperf");
      BOOST_TEST(hal.pmu().cpu_tag == tags.at(key));
      BOOST_TEST(hal.pmu().device_model == "archperf");
    }
  }
}

BOOST_AUTO_TEST_CASE(golden_table) {
  const toml::table doc = toml::parse_file(PMC_TEST_DATA "/archperf_golden.toml");
  std::map<std::string, pmc::Hal> hals;
  for (const auto& [key, dump] : kDumps) hals.emplace(key, open_dump(dump));
  unsigned rows = 0, errors = 0;
  for (const auto& node : *doc["row"].as_array()) {
    const auto& row = *node.as_table();
    const std::string event = row["event"].value<std::string>().value();
    const std::string cpu = row["cpu"].value<std::string>().value();
    ++rows;
    BOOST_TEST_CONTEXT("archperf_golden.toml:" << node.source().begin.line << " " << event << " on " << cpu) {
      const pmc::Hal& hal = hals.at(cpu);
      if (auto expected = row["error"].value<std::string>()) {
        ++errors;
        try {
          (void)hal.encode(event);
          BOOST_ERROR("expected error " << *expected << " but it encoded");
        } catch (const pmc::Error& e) {
          BOOST_TEST(static_cast<int>(e.kind()) == static_cast<int>(kErrors.at(*expected)), e.what());
          BOOST_TEST(std::string(e.what()).find(event) != std::string::npos, "the message quotes the event: " << e.what());
          if (auto part = row["message"].value<std::string>())
            BOOST_TEST(std::string(e.what()).find(*part) != std::string::npos, e.what());
        }
        continue;
      }
      const pmc::Encoding enc = hal.encode(event);
      BOOST_TEST(enc.config == static_cast<std::uint64_t>(row["config"].value<std::int64_t>().value()),
                 "config 0x" << std::hex << enc.config);
      BOOST_TEST(enc.counters == ints(row["counters"]), boost::test_tools::per_element());
      BOOST_TEST(enc.canonical == row["canonical"].value<std::string>().value());
      if (auto fixed = row["fixed"].value<std::int64_t>()) {
        BOOST_TEST(enc.fixed.has_value());
        if (enc.fixed) BOOST_TEST(*enc.fixed == static_cast<unsigned>(*fixed));
        BOOST_TEST(enc.fixed_control == static_cast<std::uint64_t>(row["fixed_control"].value<std::int64_t>().value()));
      } else {
        BOOST_TEST(!enc.fixed.has_value());
      }
      BOOST_TEST(enc.interrupt == false);
      BOOST_TEST((enc.def == nullptr) == row["raw"].value_or(false));
      // The canonical string is an event string that encodes to the same bits.
      const pmc::Encoding again = hal.encode(enc.canonical);
      BOOST_TEST(again.config == enc.config);
      BOOST_TEST(again.canonical == enc.canonical);
      BOOST_TEST((again.fixed == enc.fixed));
    }
  }
  BOOST_TEST(rows >= 130u);
  BOOST_TEST(errors >= 25u);
}

BOOST_AUTO_TEST_CASE(catalog_validates_clean_on_every_cpu) {
  for (const auto& [key, dump] : kDumps) {
    pmc::Hal hal = open_dump(dump);
    BOOST_TEST_CONTEXT(key) {
      for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
      // TOPDOWN_SLOTS is listed for version 5 parts only.
      const bool v5 = hal.pmu().cpu_tag == "v5";
      BOOST_TEST((hal.events().find("TOPDOWN_SLOTS", hal.pmu().cpu_tag) != nullptr) == v5);
      BOOST_TEST(hal.events().for_cpu(hal.pmu().cpu_tag).size() == (v5 ? 8u : 7u));
    }
  }
}

BOOST_AUTO_TEST_CASE(encode_is_pure) {
  // The same string gives the same bits, whichever Hal and however often: no state.
  pmc::Hal a = open_dump(kDumps.at("v3"));
  pmc::Hal b = open_dump(kDumps.at("v3"));
  for (const char* ev : {"instructions:t", "r01C2:c=3", "LLC_MISSES:i=1:c=1", "ref-cycles:k"}) {
    const pmc::Encoding x = a.encode(ev), y = b.encode(ev), z = a.encode(ev);
    BOOST_TEST(x.config == y.config);
    BOOST_TEST(x.config == z.config);
    BOOST_TEST(x.canonical == z.canonical);
    BOOST_TEST(x.fixed_control == y.fixed_control);
  }
}

BOOST_AUTO_TEST_CASE(refusals_name_the_event_the_ebx_bit_and_the_cpu) {
  pmc::Hal guest = open_dump(kDumps.at("guest"));
  try {
    (void)guest.encode("LLC_MISSES:u");
    BOOST_ERROR("LLC_MISSES encoded on a CPU whose EBX marks it unavailable");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("event 'LLC_MISSES:u'") != std::string::npos, m);
    BOOST_TEST(m.find("architectural event 4 (LLC Misses)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EBX bit 4 is set (EBX = 0x00000050)") != std::string::npos, m);
    BOOST_TEST(m.find("Intel Xeon Processor (Icelake)") != std::string::npos, m);
  }
  pmc::Hal core2 = open_dump(kDumps.at("core2"));
  try {
    (void)core2.encode("TOPDOWN_SLOTS");
    BOOST_ERROR("TOPDOWN_SLOTS encoded on a CPU whose EBX vector is 7 bits long");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("architectural event 7 (Topdown Slots)") != std::string::npos, m);
    BOOST_TEST(m.find("CPUID.0AH:EAX[31:24] = 7, so the EBX vector has no bit 7") != std::string::npos, m);
    BOOST_TEST(m.find("Core(TM)2") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(anythread_messages_say_why) {
  // The Hal outlives the exception: its plugin's code destroys the exception object.
  const pmc::Hal v2 = open_dump(kDumps.at("v2"));
  const pmc::Hal icl = open_dump(kDumps.at("icl"));
  try {
    (void)v2.encode("instructions:t=1");
    BOOST_ERROR("AnyThread accepted on version 2");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::attribute);
    BOOST_TEST(std::string(e.what()).find("column 14") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("needs architectural perfmon version 3 or later") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("has version 2") != std::string::npos, e.what());
  }
  try {
    (void)icl.encode("cycles:t");
    BOOST_ERROR("AnyThread accepted where CPUID deprecates it");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("CPUID.0AH:EDX[15] = 1") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(model_specific_catalog_on_events_path) {
  // A user's Nehalem file: two model-specific events, one overriding built-in description, one
  // with a unit-mask group and a counter constraint, and an SDM-named alias.
  const fs::path dir = fs::temp_directory_path() / ("pmc-archperf-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "nehalem.toml";
  std::ofstream(file) << R"toml(backend = "archperf"
description = "a few Nehalem events (SDM vol 3B table 19-19)"
[cpus]
v3 = "version 3"

[[event]]
name = "UOPS_RETIRED"
code = 0xC2
desc = "Micro-ops retired"
cpus = ["v3"]
umasks = { default = ["ANY"], masks = [
  { name = "ANY", value = 0x01, desc = "all micro-ops" },
  { name = "RETIRE_SLOTS", value = 0x02, desc = "retirement slots used" },
] }

[[event]]
name = "L1D_PEND_MISS"
code = 0x48
umask = 0x00
counters = [2]
desc = "Outstanding L1D misses, each cycle (counter 2 only)"
aliases = ["L1D_PEND_MISS.PENDING"]
)toml";
  pmc::Hal hal = open_dump(kDumps.at("v3"), {file});
  const pmc::Encoding uops = hal.encode("UOPS_RETIRED");
  BOOST_TEST(uops.config == 0x4301C2u);  // same bits as r01C2
  BOOST_TEST(uops.canonical == "archperf::UOPS_RETIRED:ANY:u=1:k=1:e=0:i=0:c=0:t=0");
  BOOST_TEST(uops.def->source.file == file.string());
  BOOST_TEST(hal.encode("UOPS_RETIRED:RETIRE_SLOTS:u").config == 0x4102C2u);
  const pmc::Encoding pend = hal.encode("L1D_PEND_MISS.PENDING:c=1");
  BOOST_TEST(pend.config == 0x01430048u);
  BOOST_TEST(pend.counters == std::vector<unsigned>{2}, boost::test_tools::per_element());
  BOOST_TEST(hal.encode("instructions").config == 0x4300C0u);  // built-ins still there
  for (const auto& p : hal.events().validate(hal.pmu().general_count())) BOOST_ERROR(p);
  // On another version the v3 event does not exist, and says where it does.
  pmc::Hal v4 = open_dump(kDumps.at("v4"), {file});
  try {
    (void)v4.encode("UOPS_RETIRED");
    BOOST_ERROR("a v3-only event encoded on v4");
  } catch (const pmc::Error& e) {
    BOOST_TEST(e.kind() == pmc::errc::not_found);
    BOOST_TEST(std::string(e.what()).find("exists on: v3") != std::string::npos, e.what());
  }
  // A session schedules the constrained event onto counter 2.
  pmc::Session s = hal.session();
  s.add("L1D_PEND_MISS");
  s.add("instructions");
  const auto r = s.read();
  BOOST_TEST(r.at(0).counter == 2u);
  BOOST_TEST((r.at(1).counter_kind == pmc::CounterKind::fixed));
  fs::remove_all(dir);
}
