// Per-CPU catalogs (docs/event-format.md, "Events of one model"): the rows of a backend's
// cpu/index*.toml, matched on the display family, model and stepping and on the CPUID.1AH core
// type of hybrid parts, choose which cpu/ files Hal::open loads after the backend's directory
// and before events_path; BackendInfo::cpu_catalogs says which. The CPUs are CPUID dumps this
// test writes; the backend is a copy of the archperf plugin beside a data directory of its own.
#define BOOST_TEST_MODULE cpu_catalogs
#include <boost/test/unit_test.hpp>

#include "cpu_catalogs.hpp"
#include "support/child_process.hpp"

#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::spit;

// A `cpuid -r` dump of an Intel CPU with architectural perfmon version 4: leaf 1 EAX is the
// signature; leaf 1AH EAX, when given, the hybrid core type and native model.
std::string dump(std::uint32_t signature, std::optional<std::uint32_t> leaf_1a = std::nullopt) {
  std::string out = "CPU:\n";
  out += "   0x00000000 0x00: eax=0x00000020 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n";
  out += fmt::format("   0x00000001 0x00: eax=0x{:08x} ebx=0x00100800 ecx=0x7ffafbff edx=0xbfebfbff\n", signature);
  out += fmt::format("   0x00000007 0x00: eax=0x00000000 ebx=0x00000000 ecx=0x00000000 edx=0x{:08x}\n",
                     leaf_1a ? 0x8000u : 0u);
  out += "   0x0000000a 0x00: eax=0x07300804 ebx=0x00000000 ecx=0x00000000 edx=0x00000603\n";
  if (leaf_1a) out += fmt::format("   0x0000001a 0x00: eax=0x{:08x} ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n", *leaf_1a);
  return out;
}

const char* kIndex = R"(backend = "archperf"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = [0x4E, 0x5E]
file = "skl.toml"
name = "Skylake client"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = "0x5E"
file = "skl.toml"
name = "Skylake client again"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = 0x55
stepping = "0-4"
file = "skx.toml"
name = "Skylake server"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = 0x55
stepping = "5-0xF"
file = "clx.toml"
name = "Cascade Lake"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = 0x97
core_type = 0x40
native_model = 0x1
file = "adl-glc.toml"
name = "Alder Lake P-core"
[[catalog]]
vendor = "GenuineIntel"
family = 6
model = 0x97
core_type = 0x20
file = "adl-grt.toml"
name = "Alder Lake E-core"
[[catalog]]
vendor = ["AuthenticAMD"]
family = 6
file = "skl.toml"
name = "not this vendor"
)";

// One event named after the file, and ORDER.TEST with the file's own code.
std::string events_file(const std::string& event, unsigned order_code) {
  return fmt::format(R"(backend = "archperf"
[[event]]
name = "{}"
code = 0xA3
umask = 0x04
desc = "an event of this model"
[[event]]
name = "ORDER.TEST"
code = 0x{:X}
umask = 0x01
desc = "which file defined it last"
)", event, order_code);
}

// A plugin directory laid out as the build tree's (lib/pmchal/plugins beside lib/), with a copy
// of the archperf plugin and its data file, and the data directory archperf/ with cpu/.
class Tree {
 public:
  Tree() {
    const fs::path built(PMC_PLUGIN_DIR);
    fs::create_directories(plugins());
    fs::copy_file(built / "libarchperf.so", plugins() / "libarchperf.so");
    for (const auto& e : fs::directory_iterator(built.parent_path().parent_path()))
      if (e.path().filename().string().rfind("libpmchal.so", 0) == 0)
        fs::create_symlink(e.path(), tmp_.path() / "lib" / e.path().filename());
    fs::copy_file(fs::path(PMC_DATA_DIR) / "events" / "archperf.toml", plugins() / "archperf.toml");
    spit(plugins() / "archperf" / "base.toml", events_file("BASE.EVENT", 0x11));
    spit(cpu() / "index.toml", kIndex);
    spit(cpu() / "skl.toml", events_file("SKL.EVENT", 0x12));
    spit(cpu() / "skx.toml", events_file("SKX.EVENT", 0x12));
    spit(cpu() / "clx.toml", events_file("CLX.EVENT", 0x12));
    spit(cpu() / "adl-glc.toml", events_file("GLC.EVENT", 0x12));
    spit(cpu() / "adl-grt.toml", events_file("GRT.EVENT", 0x12));
  }
  [[nodiscard]] fs::path plugins() const { return tmp_.path() / "lib" / "pmchal" / "plugins"; }
  [[nodiscard]] fs::path cpu() const { return plugins() / "archperf" / "cpu"; }
  [[nodiscard]] fs::path path() const { return tmp_.path(); }

  pmc::Hal open(const std::string& cpu_dump, std::vector<std::string> events_path = {}) const {
    const fs::path file = tmp_.path() / "cpu.txt";
    spit(file, cpu_dump);
    pmc::Config cfg;
    cfg.plugin_path = {plugins()};
    cfg.backend = "archperf";
    cfg.cpu = file.string();
    for (auto& p : events_path) cfg.events_path.emplace_back(p);
    return pmc::Hal::open(cfg);
  }

 private:
  pmc_test::TempDir tmp_;
};

std::vector<std::string> loaded(const pmc::Hal& hal) {
  BOOST_REQUIRE(hal.backend());
  return hal.backend()->cpu_catalogs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_matching_row_loads_its_file_once_after_the_backends_directory) {
  Tree tree;
  const pmc::Hal hal = tree.open(dump(0x000506E3));  // family 6 model 0x5E stepping 3
  BOOST_TEST(hal.backend()->data == tree.plugins() / "archperf.toml");
  BOOST_TEST(loaded(hal) == std::vector<std::string>{"cpu/skl.toml (Skylake client)"});
  BOOST_TEST(hal.events().find("SKL.EVENT"));
  BOOST_TEST(hal.events().find("BASE.EVENT"));
  BOOST_TEST(!hal.events().find("SKX.EVENT"));
  BOOST_TEST(hal.events().find("ORDER.TEST")->code == 0x12u);  // cpu/ after <name>/
  BOOST_TEST(hal.encode("SKL.EVENT:u").config == 0x4104A3u);    // EN, USR, umask 04, event A3
  // The architectural events are still there.
  BOOST_TEST(hal.events().find("INSTRUCTION_RETIRED"));
  // events_path comes last.
  const fs::path mine = tree.path() / "mine.toml";
  spit(mine, events_file("MINE.EVENT", 0x13));
  const pmc::Hal with_mine = tree.open(dump(0x000506E3), {mine.string()});
  BOOST_TEST(with_mine.events().find("ORDER.TEST")->code == 0x13u);
}

BOOST_AUTO_TEST_CASE(a_cpu_no_row_names_loads_none) {
  Tree tree;
  const pmc::Hal hal = tree.open(dump(0x000306C3));  // Haswell: family 6 model 0x3C
  BOOST_TEST(loaded(hal).empty());
  BOOST_TEST(!hal.events().find("SKL.EVENT"));
  BOOST_TEST(hal.events().find("ORDER.TEST")->code == 0x11u);
}

BOOST_AUTO_TEST_CASE(stepping_ranges_tell_models_of_one_number_apart) {
  Tree tree;
  BOOST_TEST(loaded(tree.open(dump(0x00050654))) == std::vector<std::string>{"cpu/skx.toml (Skylake server)"});
  BOOST_TEST(loaded(tree.open(dump(0x00050657))) == std::vector<std::string>{"cpu/clx.toml (Cascade Lake)"});
}

BOOST_AUTO_TEST_CASE(a_hybrid_dump_loads_the_file_of_its_core_type) {
  Tree tree;
  const pmc::Hal p = tree.open(dump(0x00090672, 0x40000001));  // Alder Lake, read on a P-core
  BOOST_TEST(p.cpu().core_type == 0x40u);
  BOOST_TEST(p.cpu().native_model == 0x1u);
  BOOST_TEST(loaded(p) == std::vector<std::string>{"cpu/adl-glc.toml (Alder Lake P-core)"});
  BOOST_TEST(p.events().find("GLC.EVENT"));
  BOOST_TEST(!p.events().find("GRT.EVENT"));
  const pmc::Hal e = tree.open(dump(0x00090672, 0x20000001));  // on an E-core
  BOOST_TEST(loaded(e) == std::vector<std::string>{"cpu/adl-grt.toml (Alder Lake E-core)"});
  // The P-core row names native model 1: another native model is not that core.
  BOOST_TEST(loaded(tree.open(dump(0x00090672, 0x40000002))).empty());
  // Without leaf 1AH no core-type row matches.
  BOOST_TEST(loaded(tree.open(dump(0x00090672))).empty());
}

// Every core type of a hybrid CPU is a part with its own events and PMU (docs/event-format.md,
// "Hybrid parts"): the one the CPU was read on is the Hal's, the others are named by their file
// or by Linux perf's PMU; `PART::EVENT` encodes with that part's events.
BOOST_AUTO_TEST_CASE(a_hybrid_cpu_has_each_core_type_as_a_part) {
  Tree tree;
  const pmc::Hal p = tree.open(dump(0x00090672, 0x40000001));  // read on a P-core
  const auto& parts = p.backend()->hybrid;
  BOOST_REQUIRE(parts.size() == 2u);
  BOOST_TEST(parts[0].name == "adl_glc");
  BOOST_TEST(parts[0].perf_pmu == "cpu_core");
  BOOST_TEST(parts[0].own);
  BOOST_TEST(parts[0].core_type == 0x40u);
  BOOST_TEST(parts[1].name == "adl_grt");
  BOOST_TEST(parts[1].perf_pmu == "cpu_atom");
  BOOST_TEST(!parts[1].own);
  BOOST_TEST(parts[1].shown == "cpu/adl-grt.toml (Alder Lake E-core)");
  // Each part's events: the E-core's are not the Hal's own, and are there by either name.
  BOOST_TEST(!p.events().find("GRT.EVENT"));
  BOOST_TEST(p.events("adl_grt").find("GRT.EVENT"));
  BOOST_TEST(p.events("CPU_ATOM").find("GRT.EVENT"));
  BOOST_TEST(!p.events("cpu_atom").find("GLC.EVENT"));
  BOOST_TEST(&p.events("cpu_core") == &p.events());
  BOOST_TEST(p.events("adl_grt").find("BASE.EVENT"));  // the backend's own files too
  BOOST_TEST(p.pmu("adl_grt").name == p.pmu().name);
  // Encoding: EN, USR, umask 04, event A3, with the part in the canonical form.
  const pmc::Encoding e = p.encode("adl_grt::GRT.EVENT:u");
  BOOST_TEST(e.config == 0x4104A3u);
  BOOST_TEST(e.canonical.rfind("adl_grt::GRT.EVENT:", 0) == 0, e.canonical);
  BOOST_TEST(e.event == "adl_grt::GRT.EVENT:u");
  BOOST_TEST(p.encode("cpu_core::GLC.EVENT").canonical.rfind("adl_glc::GLC.EVENT", 0) == 0);
  BOOST_TEST(p.encode("GLC.EVENT").canonical.rfind("archperf::GLC.EVENT", 0) == 0);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const pmc::Error& err) {
      return std::string(err.what());
    }
    return std::string("(no error)");
  };
  const std::string wrong = message([&] { (void)p.encode("cpu_atom::GLC.EVENT"); });
  BOOST_TEST(wrong.find("unknown event 'GLC.EVENT'") != std::string::npos, wrong);
  BOOST_TEST(wrong.find("(on adl_grt, cpu/adl-grt.toml (Alder Lake E-core))") != std::string::npos, wrong);
  const std::string nopart = message([&] { (void)p.events("cpu_lowpower"); });
  BOOST_TEST(nopart.find("no part 'cpu_lowpower' of this hybrid CPU; its parts: adl_glc (cpu_core), adl_grt (cpu_atom)") !=
                 std::string::npos,
             nopart);
  // The simulated device is the P-core the CPU was read on: an E-core event is refused there.
  pmc::Session s = p.session();
  s.add("cpu_core::GLC.EVENT");
  const std::string refused = message([&] { s.add("adl_grt::GRT.EVENT"); });
  BOOST_TEST(refused.find("is an event of the adl_grt cores of this hybrid CPU") != std::string::npos, refused);
  BOOST_TEST(refused.find("access 'sim' counts the core it was read on (adl_glc)") != std::string::npos, refused);
  BOOST_TEST(s.encodings().size() == 1u);
  // Read on an E-core, the parts swap roles.
  const pmc::Hal e_core = tree.open(dump(0x00090672, 0x20000001));
  BOOST_TEST(e_core.backend()->hybrid.at(0).name == "adl_grt");
  BOOST_TEST(e_core.events().find("GRT.EVENT"));
  BOOST_TEST(e_core.events("cpu_core").find("GLC.EVENT"));
  // A CPU that is not hybrid has no parts.
  const pmc::Hal skl = tree.open(dump(0x000506E3));
  BOOST_TEST(skl.backend()->hybrid.empty());
  const std::string none = message([&] { (void)skl.events("cpu_atom"); });
  BOOST_TEST(none.find("no part 'cpu_atom': the CPU") != std::string::npos, none);
  BOOST_TEST(none.find("is not a hybrid part") != std::string::npos, none);
}

// Leaf 1AH from either dump format, and only where leaf 0 says the CPU has it.
BOOST_AUTO_TEST_CASE(dumps_give_the_core_type_of_leaf_1ah) {
  const char* aida = "CPUID 00000000: 00000020-756E6547-6C65746E-49656E69\n"
                     "CPUID 00000001: 000B06A2-00000800-7FFAFBFF-BFEBFBFF\n"
                     "CPUID 0000001A: 20000001-00000000-00000000-00000000\n";
  const pmc::CpuInfo e = pmc::decode_cpuid(pmc::parse_cpuid_dump(aida, "aida.txt"), "aida.txt");
  BOOST_TEST(e.core_type == 0x20u);
  BOOST_TEST(e.native_model == 0x1u);
  const pmc::CpuInfo p = pmc::decode_cpuid(pmc::parse_cpuid_dump(dump(0x00090672, 0x40000002), "r.txt"), "r.txt");
  BOOST_TEST(p.core_type == 0x40u);
  BOOST_TEST(p.native_model == 0x2u);
  // A leaf beyond the maximum leaf 0 gives is not the CPU's.
  std::string low = dump(0x00090672, 0x40000001);
  low.replace(low.find("eax=0x00000020"), 14, "eax=0x00000016");
  BOOST_TEST(pmc::decode_cpuid(pmc::parse_cpuid_dump(low, "low.txt"), "low.txt").core_type == 0u);
  // The hybrid dumps of the test data: one read on a P-core, one on an E-core.
  BOOST_TEST(pmc::load_cpuid_dump(fs::path(PMC_TEST_DATA) / "cpuid" / "archperf-hybrid-adl.txt").core_type == 0x40u);
  BOOST_TEST(pmc::load_cpuid_dump(fs::path(PMC_TEST_DATA) / "cpuid" / "archperf-hybrid-mtl.txt").core_type == 0x20u);
}

BOOST_AUTO_TEST_CASE(a_matching_row_whose_file_is_missing_is_an_error_naming_the_row) {
  Tree tree;
  spit(tree.cpu() / "index-sdm.toml",
       "backend = \"archperf\"\n[[catalog]]\nvendor = \"GenuineIntel\"\nfamily = 6\nmodel = 0x0F\nfile = \"core2.toml\"\n"
       "name = \"Core 2\"\n");
  try {
    (void)tree.open(dump(0x000006F6));
    BOOST_FAIL("a missing cpu/ file was not reported");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("index-sdm.toml:2:1: the events file 'core2.toml' of Core 2 is not in") != std::string::npos, m);
  }
  // Other CPUs do not need that file.
  BOOST_TEST(loaded(tree.open(dump(0x000506E3))).size() == 1u);
}

// The parse cache keeps each CPU's choice (ctest gives the tests a cache directory): an edited
// index, a new index file and a chosen file gone are all seen at the next open.
BOOST_AUTO_TEST_CASE(the_choice_follows_edits_of_the_index_and_new_index_files) {
  BOOST_REQUIRE(std::getenv("PMC_CACHE_DIR"));
  Tree tree;
  const std::string skylake = dump(0x000506E3), haswell = dump(0x000306C3);
  BOOST_TEST(loaded(tree.open(skylake)) == std::vector<std::string>{"cpu/skl.toml (Skylake client)"});
  BOOST_TEST(loaded(tree.open(skylake)) == std::vector<std::string>{"cpu/skl.toml (Skylake client)"});
  std::string index = kIndex;
  index.replace(index.find("\"Skylake client\""), 16, "\"Skylake client, edited\"");
  spit(tree.cpu() / "index.toml", index);
  BOOST_TEST(loaded(tree.open(skylake)) == std::vector<std::string>{"cpu/skl.toml (Skylake client, edited)"});
  BOOST_TEST(loaded(tree.open(haswell)).empty());
  spit(tree.cpu() / "hsw.toml", events_file("HSW.EVENT", 0x14));
  spit(tree.cpu() / "index-more.toml",
       "backend = \"archperf\"\n[[catalog]]\nvendor = \"GenuineIntel\"\nfamily = 6\nmodel = 0x3C\nfile = \"hsw.toml\"\n"
       "name = \"Haswell\"\n");
  const pmc::Hal hsw = tree.open(haswell);
  BOOST_TEST(loaded(hsw) == std::vector<std::string>{"cpu/hsw.toml (Haswell)"});
  BOOST_TEST(hsw.events().find("HSW.EVENT"));
  fs::remove(tree.cpu() / "skl.toml");
  try {
    (void)tree.open(skylake);
    BOOST_FAIL("a chosen cpu/ file gone was not reported");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("index.toml:2:1: the events file 'skl.toml' of Skylake client, edited is not in") != std::string::npos, m);
  }
}

// The checks as root are each file's as it is read: a cpu/ index is checked when the open reads
// it, and a choice the parse cache keeps from an earlier open reads none, so a directory above
// cpu/ made writable by others since is refused when the catalog's files are read (the first
// use), not by the open.
boost::test_tools::assertion_result running_as_root(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(::geteuid() == 0);
  r.message() << "not running as root (the checks are root's)";
  return r;
}

BOOST_AUTO_TEST_CASE(a_kept_choice_under_a_directory_others_can_write_is_refused_at_its_first_use,
                     *boost::unit_test::precondition(running_as_root)) {
  BOOST_REQUIRE(std::getenv("PMC_CACHE_DIR"));
  Tree tree;
  const std::string skylake = dump(0x000506E3);
  BOOST_TEST(loaded(tree.open(skylake)) == std::vector<std::string>{"cpu/skl.toml (Skylake client)"});
  const fs::path above = tree.cpu().parent_path();
  fs::permissions(above, fs::perms(0777));
  const pmc::Hal hal = tree.open(skylake);
  BOOST_TEST(loaded(hal) == std::vector<std::string>{"cpu/skl.toml (Skylake client)"});
  try {
    (void)hal.events();
    BOOST_FAIL("a catalog under a directory everyone may write was read as root");
  } catch (const pmc::Error& e) {
    const std::string m = e.what();
    BOOST_TEST(m.find("refused while running as root: directory " + above.string() + " is writable by everyone") !=
                   std::string::npos,
               m);
    BOOST_TEST((e.kind() == pmc::errc::permission));
  }
  fs::permissions(above, fs::perms(0755));
  BOOST_TEST(tree.open(skylake).events().find("SKL.EVENT"));
}

BOOST_AUTO_TEST_CASE(index_refusals_name_file_line_and_column) {
  struct Case {
    const char* row;
    const char* message;
  };
  const Case cases[] = {
      {"file = \"x.toml\"\nname = \"x\"\ncolour = 1\n", "i.toml:5:1: unknown key 'colour' in [[catalog]]"},
      {"file = \"../x.toml\"\nname = \"x\"\n", "i.toml:3:8: 'file' \"../x.toml\" must name a .toml file inside cpu/"},
      {"file = \"x.json\"\nname = \"x\"\n", "i.toml:3:8: 'file' \"x.json\" must name a .toml file"},
      {"file = \"x.toml\"\n", "missing required key 'name'"},
      {"file = \"x.toml\"\nname = \"x\"\ncore_type = 0x100\n", "i.toml:5:13: 'core_type' 256 is out of range 1-0xFF"},
      {"file = \"x.toml\"\nname = \"x\"\nmodel = \"0x5E-0x4E\"\n", "i.toml:5:9: 'model' \"0x5E-0x4E\" is an empty range"},
  };
  for (const auto& c : cases) {
    std::string m;
    try {
      (void)pmc::detail::read_cpu_index_string(std::string("backend = \"archperf\"\n[[catalog]]\n") + c.row, "i.toml",
                                               "archperf");
    } catch (const pmc::Error& e) {
      m = e.what();
    }
    BOOST_TEST(m.find(c.message) != std::string::npos, "got: " << m << "\nwanted: " << c.message);
  }
  // An index for another backend has no rows for this one.
  BOOST_TEST(pmc::detail::read_cpu_index_string("backend = \"amd\"\n[[catalog]]\nfile = \"x.toml\"\nname = \"x\"\n", "i.toml",
                                                "archperf")
                 .empty());
}
