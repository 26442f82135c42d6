// Issue 26, item 8: the files pmc reads by path (CPUID dumps, workloads, config files, events
// files of events_path) are read only when they are regular files and not larger than their
// kind's limit (docs/user-guide.md, "Input files"). /dev/zero or /dev/urandom was read until
// memory ran out ("pmc: std::bad_alloc", no file named); a named pipe hung pmc.
#define BOOST_TEST_MODULE input_files
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"
#include "support/pmc_command.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

using pmc_test::Result;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct Inputs : pmc_test::PmcCommand {
  // pmc with args, given `limit` to finish (then killed: status -SIGKILL). Its address space is
  // capped at 2 GB (a reader that reads /dev/zero without end fails soon instead of taking the
  // machine's memory), except in a sanitizer build, whose runtime reserves more.
  Result bounded(const std::vector<std::string>& args, std::chrono::seconds limit = 20s) {
    const fs::path out = tmp.path() / "bounded.stdout", err = tmp.path() / "bounded.stderr";
    std::vector<std::string> argv{"-c", kSanitized ? "exec \"$0\" \"$@\"" : "ulimit -v 2000000; exec \"$0\" \"$@\"",
                                  (fs::path(PMC_BIN_DIR) / "pmc").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = pmc_test::spawn("/bin/sh", argv, env, out, err);
    BOOST_REQUIRE_MESSAGE(pid > 0, "posix_spawn failed");
    Result r;
    r.command = "pmc";
    for (const auto& a : args) r.command += " " + a;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
    r.out = pmc_test::slurp(out);
    r.err = pmc_test::slurp(err);
    return r;
  }
  fs::path fifo(const std::string& name) {
    const fs::path p = tmp.path() / name;
    fs::create_directories(p.parent_path());
    BOOST_REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
    return p;
  }
  // A sparse file of `bytes` (no disk used).
  fs::path sparse(const std::string& name, std::uintmax_t bytes) {
    const fs::path p = tmp.path() / name;
    pmc_test::spit(p, "");
    fs::resize_file(p, bytes);
    return p;
  }
};

// One line on stderr, "pmc: FILE: ...", exit 1, within the time limit.
void refused(const Result& r, const std::string& file, const std::string& why) {
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: " + file + ": " + why + "\n", r);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(input_files, Inputs)

BOOST_AUTO_TEST_CASE(devices_are_not_read_as_cpuid_dumps_or_workloads) {
  refused(bounded({"probe", "--cpuid-dump", "/dev/zero"}), "/dev/zero",
          "not read as a CPUID dump: it is a character device, not a regular file");
  refused(bounded({"stat", "--cpuid-dump", "pentium-iii", "--workload", "/dev/urandom"}), "/dev/urandom",
          "not read as a workload: it is a character device, not a regular file");
  refused(bounded({"list", "--cpuid-dump", "/dev/urandom"}), "/dev/urandom",
          "not read as a CPUID dump: it is a character device, not a regular file");
}

BOOST_AUTO_TEST_CASE(named_pipes_do_not_hang_pmc) {
  const fs::path dump = fifo("dump.txt");
  refused(bounded({"probe", "--cpuid-dump", dump.string()}), dump.string(),
          "not read as a CPUID dump: it is a named pipe, not a regular file");
  const fs::path workload = fifo("work.pmcw");
  refused(bounded({"stat", "--cpuid-dump", "pentium-iii", "--workload", workload.string()}), workload.string(),
          "not read as a workload: it is a named pipe, not a regular file");
  const fs::path config = fifo("config.toml");
  refused(bounded({"--config", config.string(), "probe", "--cpuid-dump", "pentium-iii"}), config.string(),
          "not read as a config file: it is a named pipe, not a regular file");
  // A named pipe among the events files of an events_path directory.
  const fs::path events = fifo("events/zz.toml");
  pmc_test::spit(tmp.path() / "pmc.toml", "events_path = [\"events\"]\n");
  const Result r = bounded({"--config", (tmp.path() / "pmc.toml").string(), "list", "--cpuid-dump", "pentium-iii"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(contains(r.err, events.string() + ": not read as an events file: it is a named pipe, not a regular file"), r);
  // A directory given as a workload says so too.
  fs::create_directories(tmp.path() / "dir.toml");
  refused(bounded({"stat", "--cpuid-dump", "pentium-iii", "--workload", (tmp.path() / "dir.toml").string()}),
          (tmp.path() / "dir.toml").string(), "not read as a workload: it is a directory, not a regular file");
}

BOOST_AUTO_TEST_CASE(files_over_their_kinds_limit_are_refused) {
  const fs::path workload = sparse("huge.toml", 300'000'000);
  refused(bounded({"stat", "--cpuid-dump", "pentium-iii", "--workload", workload.string()}), workload.string(),
          "300 MB is over the 256 MB limit for a workload");
  const fs::path dump = sparse("huge.txt", 16'000'001);
  refused(bounded({"probe", "--cpuid-dump", dump.string()}), dump.string(),
          "17 MB is over the 16 MB limit for a CPUID dump");
  const fs::path config = sparse("huge-config.toml", 20'000'000);
  refused(bounded({"--config", config.string(), "probe", "--cpuid-dump", "pentium-iii"}), config.string(),
          "20 MB is over the 16 MB limit for a config file");
}

// Real files are read as before; a compact workload is streamed, and no limit applies to it.
BOOST_AUTO_TEST_CASE(regular_files_still_work) {
  std::string compact = "pmc-workload 1\ncolumns cycles mode instructions\n";
  for (int i = 0; i < 1000; ++i) compact += "1000 u 1\n";
  pmc_test::spit(tmp.path() / "w.pmcw", compact);
  const Result r = bounded({"stat", "--cpuid-dump", "pentium-iii", "--workload", (tmp.path() / "w.pmcw").string(), "-e",
                            "INST_RETIRED"});
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(contains(r.out, "1,000,000      INST_RETIRED"), r);
}

BOOST_AUTO_TEST_SUITE_END()
