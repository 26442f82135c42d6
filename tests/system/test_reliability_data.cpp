#define BOOST_TEST_MODULE reliability_data
#include <boost/test/unit_test.hpp>

// Reliability of what pmchal reads and simulates (issue 13):
//  - a config naming a CPUID dump or an events_path entry that does not exist is an error at
//    the config's file:line:column;
//  - as root, a config or events file (or a directory above it) that someone else could have
//    written is refused, naming the file and why (plugins: tests/hal/plugins/test_plugins_hostile.cpp);
//  - a segment's length costs nothing (docs/workload-format.md): 2^63 - 1 cycles count exactly,
//    through many wraps of the 40- and 48-bit counters, and a device model that does not count
//    uniformly is either run chunk by chunk (exact) or reported, never silently miscounted.

#include "access.hpp"
#include "session_impl.hpp"
#include "support/backend.hpp"
#include "support/child_process.hpp"
#include "support/device.hpp"
#include "support/models.hpp"

#include <pmc/error.hpp>
#include <pmc/event.hpp>
#include <pmc/hal.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using pmc::errc;
using u64 = std::uint64_t;

namespace {

const fs::path kDumps = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The message of the pmc::Error a call throws ("" when it throws nothing), its kind in `kind`.
std::string error_of(const std::function<void()>& call, errc* kind = nullptr) {
  try {
    call();
  } catch (const pmc::Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

// One segment of `cycles` cycles with that many instructions in each, in a workload named "long".
pmc::Workload one_segment(u64 cycles, u64 instructions_per_cycle, pmc::Mode mode = pmc::Mode::user) {
  pmc::OwnedSegment s(cycles, mode);
  s.signal("instructions", instructions_per_cycle);
  pmc::Workload w;
  w.name = "long";
  w.add(s);
  return w;
}

boost::unit_test::precondition running_as_root() {
  return boost::unit_test::precondition([](boost::unit_test::test_unit_id) {
    boost::test_tools::assertion_result r(::geteuid() == 0);
    r.message() << "the check applies to root only, and this test runs as user " << ::geteuid();
    return r;
  });
}

// Runs `call` in a child that has become the user nobody; what it returns, or "" if the child
// could not become nobody or failed.
std::string as_nobody(const std::function<std::string()>& call) {
  int out[2];
  BOOST_REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(out[0]);
    std::string text;
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(1);
    try {
      text = call();
    } catch (const std::exception& e) {
      text = std::string("threw: ") + e.what();
    }
    if (::write(out[1], text.data(), text.size()) < 0) ::_exit(2);
    ::_exit(0);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0), "child status " << status);
  return text;
}

}  // namespace

// =============================================================================================
BOOST_AUTO_TEST_SUITE(config_positions)

// `cpu = "missing-file"`: neither a file beside the config nor a bundled dump. The error is at
// the value's position (line 2, column 7: after `cpu = `).
BOOST_AUTO_TEST_CASE(a_missing_cpuid_dump) {
  pmc_test::TempDir tmp("pmc-test-cfg");
  const fs::path config = tmp.path() / "config.toml";
  pmc_test::spit(config, "backend = \"p6\"\ncpu = \"missing-file\"\n");
  errc kind{};
  const std::string e = error_of([&] { (void)pmc::load_config(config); }, &kind);
  BOOST_TEST(e.rfind(config.string() + ":2:7: 'cpu' = \"missing-file\" is neither a CPUID dump file (" +
                         (tmp.path() / "missing-file").string() + ") nor the name of a bundled one (",
                     0) == 0u,
             e);
  BOOST_TEST((kind == errc::not_found));
  // A path: named as the config gives it and as resolved (relative to the config's directory).
  pmc_test::spit(config, "cpu = \"dumps/p3.txt\"\n");
  const std::string p = error_of([&] { (void)pmc::load_config(config); });
  BOOST_TEST(p == config.string() + ":1:7: 'cpu' = \"dumps/p3.txt\": no such CPUID dump file (" +
                      (tmp.path() / "dumps" / "p3.txt").string() + ")",
             p);
  // What Hal::open and pmc see (find_config loads it the same way).
  const std::string h = error_of([&] { (void)pmc::Hal::open(pmc::find_config(config)); });
  BOOST_TEST(h == p);
  // A bundled name and an existing file are fine.
  pmc_test::spit(config, "cpu = \"pentium-iii\"\n");
  BOOST_TEST(pmc::load_config(config).cpu == "pentium-iii");
  pmc_test::spit(tmp.path() / "dumps" / "p3.txt", pmc_test::slurp(kDumps / "pentium-iii.txt"));
  pmc_test::spit(config, "cpu = \"dumps/p3.txt\"\n");
  BOOST_TEST(pmc::load_config(config).cpu == (tmp.path() / "dumps" / "p3.txt").string());
  BOOST_TEST(pmc::Hal::open(pmc::load_config(config)).backend()->name == "p6");
}

// A missing events_path entry: the error is at that entry (line 3, column 29: the second string
// of the array).
BOOST_AUTO_TEST_CASE(a_missing_events_path_entry) {
  pmc_test::TempDir tmp("pmc-test-cfg");
  const fs::path config = tmp.path() / "config.toml";
  pmc_test::spit(tmp.path() / "mine.toml", "");
  pmc_test::spit(config, "backend = \"p6\"\n\nevents_path = [\"mine.toml\", \"gone.toml\"]\n");
  errc kind{};
  const std::string e = error_of([&] { (void)pmc::load_config(config); }, &kind);
  BOOST_TEST(e == config.string() + ":3:29: 'events_path' entry \"gone.toml\": no such events file or directory (" +
                      (tmp.path() / "gone.toml").string() + ")",
             e);
  BOOST_TEST((kind == errc::not_found));
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// As root, files that steer what root does are refused when someone else could have written
// them: the config (it names plugin directories) and events files (they decide register values).
BOOST_AUTO_TEST_SUITE(as_root, *running_as_root())

BOOST_AUTO_TEST_CASE(a_config_others_can_write) {
  pmc_test::TempDir tmp("pmc-test-root");  // under /tmp: sticky and root's, so fine
  const fs::path config = tmp.path() / "config.toml";
  pmc_test::spit(config, "backend = \"p6\"\n");
  fs::permissions(config, fs::perms(0644));
  BOOST_TEST(pmc::load_config(config).backend == "p6");
  fs::permissions(config, fs::perms(0666));
  errc kind{};
  std::string e = error_of([&] { (void)pmc::load_config(config); }, &kind);
  BOOST_TEST(e == config.string() + ": not read: refused while running as root: file " + config.string() +
                      " is writable by everyone (mode 0666)",
             e);
  BOOST_TEST((kind == errc::permission));
  // Found by the search order ($PMC_CONFIG here): the same error.
  BOOST_TEST(error_of([&] { (void)pmc::find_config(config); }) == e);
  // A directory above it, group-writable.
  fs::permissions(config, fs::perms(0644));
  const fs::path dir = tmp.path() / "etc";
  fs::create_directories(dir);
  fs::rename(config, dir / "config.toml");
  fs::permissions(dir, fs::perms(0775));
  e = error_of([&] { (void)pmc::load_config(dir / "config.toml"); });
  BOOST_TEST(e == (dir / "config.toml").string() + ": not read: refused while running as root: directory " +
                      dir.string() + " is writable by its group (mode 0775)",
             e);
  // Owned by another user.
  fs::permissions(dir, fs::perms(0755));
  BOOST_REQUIRE(::chown((dir / "config.toml").c_str(), 4242, 4242) == 0);
  e = error_of([&] { (void)pmc::load_config(dir / "config.toml"); });
  BOOST_TEST(contains(e, "file " + (dir / "config.toml").string() + " is owned by user 4242, not root"), e);
}

BOOST_AUTO_TEST_CASE(an_events_file_others_can_write) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path events = tmp.path() / "mine.toml";
  pmc_test::spit(events, "backend = \"p6\"\n");
  fs::permissions(events, fs::perms(0664));
  pmc::EventCatalog catalog;
  errc kind{};
  std::string e = error_of([&] { catalog.load(events, "p6"); }, &kind);
  BOOST_TEST(e == events.string() + ": not read: refused while running as root: file " + events.string() +
                      " is writable by its group (mode 0664)",
             e);
  BOOST_TEST((kind == errc::permission));
  // In a directory of events files that everyone may write: each file is refused.
  fs::permissions(events, fs::perms(0644));
  const fs::path dir = tmp.path() / "events.d";
  fs::create_directories(dir);
  fs::rename(events, dir / "mine.toml");
  fs::permissions(dir, fs::perms(0777));
  e = error_of([&] { catalog.load(dir, "p6"); });
  BOOST_TEST(contains(e, ": not read: refused while running as root: directory " + dir.string() +
                             " is writable by everyone (mode 0777)"),
             e);
  // Through a config's events_path, as pmc reads it: Hal::open fails with that error.
  const fs::path config = tmp.path() / "config.toml";
  pmc_test::spit(config, "cpu = \"pentium-iii\"\nevents_path = [\"events.d\"]\n");
  e = error_of([&] { (void)pmc::Hal::open(pmc::load_config(config)); });
  BOOST_TEST(contains(e, "directory " + dir.string() + " is writable by everyone"), e);
  // Safe again: loads.
  fs::permissions(dir, fs::perms(0755));
  BOOST_TEST(pmc::Hal::open(pmc::load_config(config)).backend()->name == "p6");
}

// The check is root's: an ordinary user reads their own world-writable files.
BOOST_AUTO_TEST_CASE(an_ordinary_user_is_not_refused) {
  pmc_test::TempDir tmp("pmc-test-root");
  fs::permissions(tmp.path(), fs::perms(0777));
  const fs::path config = tmp.path() / "config.toml";
  const fs::path events = tmp.path() / "mine.toml";
  pmc_test::spit(config, "backend = \"p6\"\n");
  pmc_test::spit(events, "backend = \"p6\"\n");
  fs::permissions(config, fs::perms(0666));
  fs::permissions(events, fs::perms(0666));
  const std::string text = as_nobody([&] {
    pmc::EventCatalog catalog;
    catalog.load(events, "p6");
    return pmc::load_config(config).backend;
  });
  BOOST_TEST(text == "p6");
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// Segment length costs nothing: a segment of 2^63 - 1 cycles, run by Session::run on each x86
// device model, counts exactly. Expected values by hand: with 2 instructions in every user-mode
// cycle of N = 2^63 - 1 cycles,
//   cycles            N                 = 9,223,372,036,854,775,807
//   instructions      2N = 2^64 - 2     = 18,446,744,073,709,551,614
// These pass the counters' 40 or 48 bits 2^23 (2^15) times and more; the session's 64-bit totals
// must hold every wrap. (Once, Session::run split such a segment into 2^24 chunks, 0.8 s; now
// it costs what 1,000 cycles cost. The time is reported by bench, never asserted here.)
BOOST_AUTO_TEST_SUITE(long_segments)

namespace {

constexpr u64 kN = (u64{1} << 63) - 1;

std::vector<u64> count(const std::string& dump, const std::vector<std::string>& events, const pmc::Workload& w) {
  pmc::Config cfg;
  cfg.cpu = (kDumps / dump).string();
  pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_REQUIRE(hal.backend());
  pmc::Session s = hal.session();
  for (const auto& e : events) s.add(e);
  (void)s.run(w);
  std::vector<u64> out;
  for (const auto& r : s.read()) out.push_back(r.value);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cycles_and_instructions_on_every_x86_model) {
  const std::vector<std::string> dumps{"pentium-mmx.txt", "pentium-iii.txt", "core2.txt", "intel-icelake.txt",
                                       "amd-k8-revf.txt", "amd-zen3.txt"};
  for (const auto& dump : dumps) {
    BOOST_TEST_CONTEXT(dump) {
      const std::vector<u64> v = count(dump, {"cycles", "instructions"}, one_segment(kN, 2));
      BOOST_REQUIRE(v.size() == 2u);
      BOOST_TEST(v[0] == 9'223'372'036'854'775'807ull);
      BOOST_TEST(v[1] == 18'446'744'073'709'551'614ull);
    }
  }
}

// The counter-mask rules over the long segment, on the P6 (PerfEvtSel: CMASK, INV, E; docs/
// hardware/p6.md section 3). 2 instructions in every cycle:
//   c=2     the count reaches 2 in every cycle          -> N
//   c=3     it never reaches 3                          -> 0
//   c=3:i=1 inverted: fewer than 3 in every cycle       -> N
//   c=2:e=1 the condition rises once, at the start      -> 1
//   :k      user-mode cycles only, kernel mode counted  -> 0
BOOST_AUTO_TEST_CASE(counter_mask_invert_edge_over_the_long_segment) {
  const pmc::Workload w = one_segment(kN, 2);
  std::vector<u64> v = count("pentium-iii.txt", {"INST_RETIRED:u:c=2", "INST_RETIRED:u:c=3"}, w);
  BOOST_TEST(v == (std::vector<u64>{kN, 0}), boost::test_tools::per_element());
  v = count("pentium-iii.txt", {"INST_RETIRED:u:c=3:i=1", "INST_RETIRED:u:c=2:e=1"}, w);
  BOOST_TEST(v == (std::vector<u64>{kN, 1}), boost::test_tools::per_element());
  v = count("pentium-iii.txt", {"INST_RETIRED:k", "INST_RETIRED:u"}, w);
  BOOST_TEST(v == (std::vector<u64>{0, 18'446'744'073'709'551'614ull}), boost::test_tools::per_element());
}

// Several long segments in a row, user and kernel: 2^62 user cycles of 1 instruction, 2^61
// kernel cycles of 3, 2^60 user cycles of 0 (halted: no unhalted cycle either).
//   instructions:u = 2^62                  cycles:u = 2^62
//   instructions   = 2^62 + 3 * 2^61       cycles   = 2^62 + 2^61
BOOST_AUTO_TEST_CASE(several_long_segments) {
  pmc::Workload w;
  w.name = "several";
  pmc::OwnedSegment a(u64{1} << 62, pmc::Mode::user);
  a.signal("instructions", 1);
  pmc::OwnedSegment b(u64{1} << 61, pmc::Mode::kernel);
  b.signal("instructions", 3);
  pmc::OwnedSegment c(u64{1} << 60, pmc::Mode::user);
  c->halted = true;
  w.add(a);
  w.add(b);
  w.add(c);
  const std::vector<u64> v = count("pentium-iii.txt", {"INST_RETIRED:u", "CPU_CLK_UNHALTED:u"}, w);
  BOOST_TEST(v == (std::vector<u64>{u64{1} << 62, u64{1} << 62}), boost::test_tools::per_element());
  const std::vector<u64> all = count("pentium-iii.txt", {"INST_RETIRED", "CPU_CLK_UNHALTED"}, w);
  BOOST_TEST(all == (std::vector<u64>{(u64{1} << 62) + 3 * (u64{1} << 61), (u64{1} << 62) + (u64{1} << 61)}),
             boost::test_tools::per_element());
}

// The device agrees with the session: after the long segment its 40-bit counter holds the
// count modulo 2^40 ((2^64 - 2) mod 2^40 = 2^40 - 2).
BOOST_AUTO_TEST_CASE(the_device_holds_the_count_modulo_its_width) {
  pmc::Config cfg;
  cfg.cpu = (kDumps / "pentium-iii.txt").string();
  pmc::Hal hal = pmc::Hal::open(cfg);
  pmc::Session s = hal.session();
  s.add("INST_RETIRED:u");
  (void)s.run(one_segment(kN, 2));
  const pmc::Reading r = s.read().at(0);
  BOOST_TEST(r.value == 18'446'744'073'709'551'614ull);
  const std::uint32_t perfctr = 0xC1 + r.counter;  // PerfCtr0, PerfCtr1 (docs/hardware/p6.md)
  BOOST_TEST(pmc_test::device(s).read(perfctr) == (u64{1} << 40) - 2);
}

BOOST_AUTO_TEST_SUITE_END()

// =============================================================================================
// Session::run's fast forward trusts a model only as far as it checks: a device whose chunks
// do not add the same count is run chunk by chunk (exact), and one that changes its rate after
// the chunks measured is an error, never a wrong total. The devices here are fakes with a
// P6-like register file (PerfEvtSel0/1 at 0x186/0x187, PerfCtr0/1 at 0xC1/0xC2), driven by the
// p6 backend with its counters declared 8 bits wide (so a few thousand cycles need many chunks).
BOOST_AUTO_TEST_SUITE(fast_forward_checks)

namespace {

// Counts, on each counter enabled for user mode, `rule(clock, cycles)` events for a segment of
// `cycles` starting at cycle `clock` of the device's life.
class FakeP6 : public pmc::Device {
 public:
  using Rule = std::function<u64(u64 clock, u64 cycles)>;
  static inline Rule rule;
  FakeP6() = default;
  [[nodiscard]] std::string_view name() const override { return "fake-p6"; }
  std::uint64_t read(std::uint32_t msr) override { return regs_[msr]; }
  void write(std::uint32_t msr, std::uint64_t value) override {
    regs_[msr] = (msr == 0xC1 || msr == 0xC2) ? value & 0xFFFFFFFFFFull : value;
  }
  std::uint64_t rdpmc(std::uint32_t index) override { return regs_[0xC1 + index]; }
  void run(const pmc::Segment& s) override {
    const u64 n = rule(clock_, s.cycles);
    clock_ += s.cycles;
    if (!(regs_[0x186] & (u64{1} << 22))) return;  // EN
    for (std::uint32_t i = 0; i < 2; ++i)
      if (regs_[0x186 + i] & (u64{1} << 16)) regs_[0xC1 + i] = (regs_[0xC1 + i] + n) & 0xFFFFFFFFFFull;  // USR
  }
  [[nodiscard]] std::uint64_t interrupts() const override { return 0; }
  void set_reader_cpl(unsigned) override {}
  void set_cr4_pce(bool) override {}

 private:
  std::map<std::uint32_t, u64> regs_;
  u64 clock_ = 0;
};

pmc::Session fake_session() {
  static const pmc_test::LoadedForTest backend("p6");
  pmc::Config cfg;
  cfg.cpu = (kDumps / "pentium-iii.txt").string();
  const pmc::CpuInfo cpu = pmc::Hal::open(cfg).cpu();
  auto ctx = pmc_test::spy_context<FakeP6>(backend, cpu);
  for (auto& c : ctx->pmu.counters) c.width = 8;
  pmc::Session s(std::make_unique<pmc::detail::SessionImpl>(ctx));
  s.add("INST_RETIRED:u");
  return s;
}

}  // namespace

// One event every third cycle: chunks of 127 cycles (8-bit counters: 127 events at most between
// folds) add 42 or 43. Not uniform, so chunk by chunk: floor(12,700 / 3) = 4,233.
BOOST_AUTO_TEST_CASE(a_non_uniform_device_is_run_chunk_by_chunk) {
  FakeP6::rule = [](u64 clock, u64 cycles) { return (clock + cycles) / 3 - clock / 3; };
  pmc::Session s = fake_session();
  const u64 before = pmc_test::chunks_run;
  (void)s.run(one_segment(12'700, 1));
  BOOST_TEST(s.read().at(0).value == 4'233u);
  BOOST_TEST(pmc_test::chunks_run - before == 100u);  // 12,700 / 127
}

// A uniform device: one event a cycle, 12,700 cycles in 4 runs (3 measured chunks of 127, then
// the other 12,319 at once): 12,700 counted.
BOOST_AUTO_TEST_CASE(a_uniform_device_is_fast_forwarded) {
  FakeP6::rule = [](u64, u64 cycles) { return cycles; };
  pmc::Session s = fake_session();
  const u64 before = pmc_test::chunks_run;
  (void)s.run(one_segment(12'700, 1));
  BOOST_TEST(s.read().at(0).value == 12'700u);
  BOOST_TEST(pmc_test::chunks_run - before == 4u);
}

// Uniform while measured, then it stops counting: the totals would be wrong; an error says so.
BOOST_AUTO_TEST_CASE(a_device_that_changes_its_rate_is_reported) {
  FakeP6::rule = [](u64 clock, u64 cycles) { return clock < 3 * 127 ? cycles : 0; };
  pmc::Session s = fake_session();
  errc kind{};
  const std::string e = error_of([&] { (void)s.run(one_segment(12'700, 1)); }, &kind);
  BOOST_TEST((kind == errc::plugin));
  BOOST_TEST(contains(e, "long: segment 1: device model 'fake-p6' counted 1 per cycle"), e);
  BOOST_TEST(contains(e, "does not count a uniform segment uniformly"), e);
  BOOST_TEST(!s.running());  // the run started the session and stopped it on the error
}

BOOST_AUTO_TEST_SUITE_END()
