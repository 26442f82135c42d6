#define BOOST_TEST_MODULE input_file_kinds
#include <boost/test/unit_test.hpp>

// Issue 26, item 8, through the library's own loaders: every kind of file pmchal reads by path
// (config, CPUID dump, CPU description, events file or directory, metric file, workload, region
// report) is refused when it is a named pipe (once: the loader waited for a writer forever) or
// larger than its kind's limit (once: read whole, whatever its size), with one message naming the
// file (docs/user-guide.md, "Input files").

#include "support/child_process.hpp"

#include <pmc/catalog.hpp>
#include <pmc/config.hpp>
#include <pmc/cpu.hpp>
#include <pmc/error.hpp>
#include <pmc/input_file.hpp>
#include <pmc/metrics.hpp>
#include <pmc/region.hpp>
#include <pmc/workload.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Loader {
  std::string name;        // the file's name (its extension chooses the form for some loaders)
  std::string what;        // as the message says it: "a config file"
  pmc::InputKind kind;
  std::function<void(const fs::path&)> load;
};

std::vector<Loader> loaders() {
  using pmc::InputKind;
  return {
      {"config.toml", "a config file", InputKind::config, [](const fs::path& f) { (void)pmc::load_config(f); }},
      {"dump.txt", "a CPUID dump", InputKind::cpuid_dump, [](const fs::path& f) { (void)pmc::load_cpuid_dump(f); }},
      {"cpu.toml", "a CPU description", InputKind::cpu_description, [](const fs::path& f) { (void)pmc::load_cpu_file(f); }},
      {"events.toml", "an events file", InputKind::events,
       [](const fs::path& f) {
         pmc::EventCatalog c;
         c.load(f, "p6");
       }},
      {"metrics.toml", "a metric file", InputKind::metrics,
       [](const fs::path& f) {
         pmc::MetricCatalog c;
         c.load(f);
       }},
      {"work.toml", "a workload", InputKind::workload, [](const fs::path& f) { (void)pmc::load_workload(f); }},
      {"reader.toml", "a workload", InputKind::workload, [](const fs::path& f) { pmc::WorkloadReader r(f); }},
      {"regions.json", "a region report", InputKind::region_report,
       [](const fs::path& f) { (void)pmc::load_region_report(f); }},
  };
}

// The loader's error message, or what it did instead.
std::string error_of(const Loader& l, const fs::path& file) {
  try {
    l.load(file);
    return "(no error)";
  } catch (const pmc::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a pmc::Error) ") + e.what();
  }
}

// Opens the named pipe's writing end, and closes it at once, whenever a reader waits on it: a
// loader that opened it (and would wait for ever) sees an empty file instead, so that a
// regression fails the test rather than hanging it.
class Unblocker {
 public:
  explicit Unblocker(fs::path fifo) : fifo_(std::move(fifo)), thread_([this] { loop(); }) {}
  ~Unblocker() {
    stop_ = true;
    thread_.join();
  }
  Unblocker(const Unblocker&) = delete;
  Unblocker& operator=(const Unblocker&) = delete;

 private:
  void loop() {
    const auto start = std::chrono::steady_clock::now();
    while (!stop_) {
      std::this_thread::sleep_for(50ms);
      if (std::chrono::steady_clock::now() - start < 2s) continue;
      const int fd = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // only while a reader has it
      if (fd >= 0) ::close(fd);
    }
  }
  fs::path fifo_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(named_pipes_are_refused_by_every_loader) {
  pmc_test::TempDir tmp("pmc-test-input-kinds");
  for (const Loader& l : loaders()) {
    const fs::path fifo = tmp.path() / l.name;
    BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string message;
    {
      Unblocker unblock(fifo);
      message = error_of(l, fifo);
    }
    BOOST_TEST(message == fifo.string() + ": not read as " + l.what + ": it is a named pipe, not a regular file");
    fs::remove(fifo);
  }
  // One among the files of an events directory.
  const fs::path dir = tmp.path() / "events";
  fs::create_directories(dir);
  pmc_test::spit(dir / "a.toml", "backend = \"p6\"\n");
  const fs::path fifo = dir / "b.toml";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string message;
  {
    Unblocker unblock(fifo);
    message = error_of(loaders()[3], dir);
  }
  BOOST_TEST(message == fifo.string() + ": not read as an events file: it is a named pipe, not a regular file");
}

BOOST_AUTO_TEST_CASE(files_over_the_limit_are_refused_by_every_loader) {
  pmc_test::TempDir tmp("pmc-test-input-kinds");
  for (const Loader& l : loaders()) {
    const fs::path file = tmp.path() / l.name;
    const std::uint64_t limit = pmc::input_limit(l.kind);
    pmc_test::spit(file, "");
    fs::resize_file(file, limit + 1);  // sparse: no disk used
    const std::string limit_mb = std::to_string(limit / 1000000) + " MB";
    const std::string size_mb = std::to_string(limit / 1000000 + 1) + " MB";
    BOOST_TEST(error_of(l, file) == file.string() + ": " + size_mb + " is over the " + limit_mb + " limit for " + l.what);
    fs::remove(file);
  }
}

// The limits are generous for real data (the largest bundled events file is 0.7 MB, a million
// TOML segments 70 to 100 MB), and a reader that asks gets the whole file.
BOOST_AUTO_TEST_CASE(limits_and_a_regular_file) {
  BOOST_TEST(pmc::input_limit(pmc::InputKind::workload) == 256'000'000u);
  BOOST_TEST(pmc::input_limit(pmc::InputKind::events) == 64'000'000u);
  BOOST_TEST(pmc::input_limit(pmc::InputKind::cpuid_dump) == 16'000'000u);
  pmc_test::TempDir tmp("pmc-test-input-kinds");
  const std::string text(200000, 'x');
  pmc_test::spit(tmp.path() / "f", text);
  BOOST_TEST(pmc::read_input_file(tmp.path() / "f", pmc::InputKind::config) == text);
  try {
    (void)pmc::read_input_file(tmp.path() / "missing", pmc::InputKind::metrics);
    BOOST_FAIL("no error");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()) == (tmp.path() / "missing").string() +
                                            ": cannot read the metric file: No such file or directory");
  }
}
