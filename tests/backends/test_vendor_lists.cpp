// The bundled catalogs against the vendors' own lists (issue 23's "Done when"): every Intel core
// event list of Intel's perfmon tree, and Linux perf's AMD Zen 1-5 lists, encoded end to end the
// way a user would (CPUID dump -> Hal::open -> the backend -> its catalogs -> the encoder), by the
// vendor's name, and compared with the vendor's bits.
//   Intel: for each synthesized dump data/cpuid/intel-<tag>.txt (its header names the event list
//   it stands for), at least 95% of the list's non-deprecated events are accepted, and at least
//   97% of those encode to Intel's event select, unit mask, UMaskExt, cmask, invert, edge,
//   AnyThread and EQ bits, with Intel's extra-MSR value.
//   AMD: for Zen 1-5, at least 97% of perf's core events (the uncore lists aside) are accepted by
//   perf's name and encode to perf's event select (12 bits) and unit mask.
// The lists live outside the repository (PMC_PERFMON_DIR, PMC_PERF_AMD_DIR; by default the
// shared/perfmon and shared/perf-amd folders beside the checkout): without them the cases are
// reported as skipped, with the folder they looked for. The per-list figures are printed
// (--log_level=message, or in the ctest log on failure).
#define BOOST_TEST_MODULE vendor_lists
#include <boost/test/unit_test.hpp>

#include <pmc/encoding.hpp>
#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path material(const char* variable, const char* folder) {
  if (const char* v = std::getenv(variable); v && *v) return v;
  return fs::path(PMC_SOURCE_DIR).parent_path() / "shared" / folder;
}

boost::test_tools::assertion_result have(const char* variable, const char* folder, const char* what) {
  const fs::path dir = material(variable, folder);
  std::error_code ec;
  boost::test_tools::assertion_result r(fs::is_regular_file(dir / "mapfile.csv", ec));
  r.message() << what << " are not on this machine (" << variable << ", or " << dir.string()
              << "/mapfile.csv): they live outside the repository";
  return r;
}
boost::test_tools::assertion_result have_perfmon(boost::unit_test::test_unit_id) {
  return have("PMC_PERFMON_DIR", "perfmon", "Intel's perfmon event lists");
}
boost::test_tools::assertion_result have_perf_amd(boost::unit_test::test_unit_id) {
  return have("PMC_PERF_AMD_DIR", "perf-amd", "Linux perf's AMD event lists");
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << file.string());
  return nlohmann::json::parse(in);
}

// "0x1A" / "26" / "0xB7, 0xBB" (the first) / absent -> 0
std::uint64_t number(const nlohmann::json& e, const char* key) {
  if (!e.contains(key) || !e[key].is_string()) return 0;
  const std::string s = e[key].get<std::string>();
  if (s.empty() || s == "null") return 0;
  return std::stoull(s, nullptr, 0);
}

pmc::Hal open_dump(const fs::path& dump) {
  pmc::Config cfg;
  cfg.cpu = dump.string();
  cfg.backend = "auto";
  cfg.access = "sim";
  return pmc::Hal::open(cfg);
}

// IA32_PERFEVTSELx / PERF_CTL bits that are the driver's or the privilege modifiers' (USR, OS,
// INT, EN; AMD's host/guest bits 41:40): left out of the comparison.
constexpr std::uint64_t kIntelNotCompared = (1ull << 16) | (1ull << 17) | (1ull << 20) | (1ull << 22);
constexpr std::uint64_t kAmdNotCompared = kIntelNotCompared | (3ull << 40);

struct Tally {
  unsigned listed = 0, accepted = 0, equal = 0;
  std::vector<std::string> refused, differ;  // a few examples for the log
  void refuse(const std::string& name, const std::string& why) {
    if (refused.size() < 5) refused.push_back(name + ": " + why);
  }
  // A listed event's encoding by its name, counted as listed and as accepted or refused.
  std::optional<pmc::Encoding> encode(const pmc::Hal& hal, const std::string& name) {
    ++listed;
    try {
      pmc::Encoding enc = hal.encode(name);
      ++accepted;
      return enc;
    } catch (const pmc::Error& err) {
      refuse(name, err.what());
      return std::nullopt;
    }
  }
  void mismatch(const std::string& name, std::uint64_t got, std::uint64_t want) {
    std::ostringstream s;
    s << name << ": 0x" << std::hex << got << " where the list gives 0x" << want;
    if (differ.size() < 5) differ.push_back(s.str());
  }
  [[nodiscard]] double accepted_share() const { return listed ? 100.0 * accepted / listed : 0; }
  [[nodiscard]] double equal_share() const { return accepted ? 100.0 * equal / accepted : 0; }
  [[nodiscard]] std::string report(const std::string& list) const {
    std::ostringstream s;
    s.precision(1);
    s << std::fixed << list << ": " << listed << " listed, " << accepted << " accepted (" << accepted_share() << "%), "
      << equal << " with the vendor's bits (" << equal_share() << "% of accepted)";
    for (const auto& r : refused) s << "\n    refused " << r;
    for (const auto& d : differ) s << "\n    differs " << d;
    return s.str();
  }
};

// The event list a synthesized Intel dump stands for: its header says "the event list X.json".
std::string list_of_dump(const fs::path& dump) {
  std::ifstream in(dump);
  std::string header, line;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) header += line.substr(1);
  std::smatch m;
  const std::string flat = std::regex_replace(header, std::regex("\\s+"), " ");
  return std::regex_search(flat, m, std::regex("event list ([A-Za-z0-9_.-]+\\.json)")) ? m[1].str() : std::string();
}

fs::path find_list(const fs::path& perfmon, const std::string& name) {
  for (const auto& platform : fs::directory_iterator(perfmon))
    if (fs::is_regular_file(platform.path() / "events" / name)) return platform.path() / "events" / name;
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(intel_lists, *boost::unit_test::precondition(have_perfmon)) {
  const fs::path perfmon = material("PMC_PERFMON_DIR", "perfmon");
  unsigned lists = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid")) {
    const std::string stem = entry.path().stem().string();
    if (stem.rfind("intel-", 0) != 0 || stem == "intel-icelake") continue;
    const std::string list = list_of_dump(entry.path());
    if (list.empty()) continue;  // a dump of a real part, not one standing for a list
    const fs::path file = find_list(perfmon, list);
    BOOST_TEST_REQUIRE(!file.empty(), entry.path().filename().string() << " names " << list
                                                                       << ", which is not in " << perfmon.string());
    ++lists;
    const pmc::Hal hal = open_dump(entry.path());
    BOOST_TEST_REQUIRE(hal.backend() != nullptr, stem << ": " << hal.why());
    BOOST_TEST(hal.backend()->name == "archperf", stem);
    Tally t;
    const nlohmann::json vendor = read_json(file);
    for (const auto& e : vendor["Events"]) {
      if (e.value("Deprecated", "0") == "1") continue;
      const std::string name = e["EventName"].get<std::string>();
      const std::optional<pmc::Encoding> encoded = t.encode(hal, name);
      if (!encoded) continue;
      const pmc::Encoding& enc = *encoded;
      const std::uint64_t want = number(e, "EventCode") | number(e, "UMask") << 8 | number(e, "EdgeDetect") << 18 |
                                 number(e, "AnyThread") << 21 | number(e, "Invert") << 23 |
                                 number(e, "CounterMask") << 24 | number(e, "Equal") << 36 |
                                 number(e, "UMaskExt") << 40;
      std::uint64_t got = enc.config & ~kIntelNotCompared;
      // Explained in docs/hardware/intel-catalogs.md: Knights Landing's offcore events that name
      // MSR 1A7H alone are written with unit mask 02H, the select of OFFCORE_RSP_1, where the list
      // gives 01H.
      if (e.value("MSRIndex", "") == "0x1a7" && number(e, "EventCode") == 0xB7 && number(e, "UMask") == 0x01 &&
          (got & 0xFFFF) == 0x02B7)
        got = (got & ~0xFF00ull) | 0x0100;
      const bool msr = number(e, "MSRIndex") != 0;
      if (got != want) {
        t.mismatch(name, got, want);
      } else if (msr && enc.extra_value != number(e, "MSRValue")) {
        t.mismatch(name + " (extra MSR value)", enc.extra_value, number(e, "MSRValue"));
      } else {
        ++t.equal;
      }
    }
    BOOST_TEST_MESSAGE(t.report(stem + " (" + list + ")"));
    BOOST_TEST(t.accepted_share() >= 95.0, t.report(stem + " (" + list + ")"));
    BOOST_TEST(t.equal_share() >= 97.0, t.report(stem + " (" + list + ")"));
  }
  BOOST_TEST(lists >= 40u, "only " << lists << " Intel dumps name an event list");
}

BOOST_AUTO_TEST_CASE(amd_zen_lists, *boost::unit_test::precondition(have_perf_amd)) {
  const fs::path perf = material("PMC_PERF_AMD_DIR", "perf-amd");
  const std::map<std::string, std::string> dumps = {{"amdzen1", "amd-zen1.txt"}, {"amdzen2", "amd-zen2.txt"},
                                                    {"amdzen3", "amd-zen3.txt"}, {"amdzen4", "amd-zen4-genoa.txt"},
                                                    {"amdzen5", "amd-zen5.txt"}};
  for (const auto& [folder, dump] : dumps) {
    const pmc::Hal hal = open_dump(fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / dump);
    BOOST_TEST_REQUIRE(hal.backend() != nullptr, folder << ": " << hal.why());
    Tally t;
    for (const auto& file : fs::directory_iterator(perf / folder)) {
      const std::string topic = file.path().stem().string();
      if (topic == "data-fabric" || topic == "l3-cache" || topic == "memory-controller") continue;  // uncore
      for (const auto& e : read_json(file.path())) {
        // metrics, and the L3 PMU's events some core files carry (they name their "Unit")
        if (!e.contains("EventName") || !e.contains("EventCode") || e.contains("Unit")) continue;
        const std::string name = e["EventName"].get<std::string>();
        const std::optional<pmc::Encoding> encoded = t.encode(hal, name);
        if (!encoded) continue;
        const pmc::Encoding& enc = *encoded;
        const std::uint64_t code = number(e, "EventCode");
        const std::uint64_t want = (code & 0xFF) | (code >> 8) << 32 | number(e, "UMask") << 8 |
                                   number(e, "EdgeDetect") << 18 | number(e, "Invert") << 23 |
                                   number(e, "CounterMask") << 24;
        const std::uint64_t got = enc.config & ~kAmdNotCompared;
        if (got == want)
          ++t.equal;
        else
          t.mismatch(name, got, want);
      }
    }
    const double both = t.listed ? 100.0 * t.equal / t.listed : 0;
    BOOST_TEST_MESSAGE(t.report(folder));
    BOOST_TEST(both >= 97.0, t.report(folder));
  }
}
