// Issue 26, files and outputs: what `pmc` echoes of a huge input, what it does when its output
// cannot be written (a full disk: /dev/full), and how it replaces files it writes (no write
// through a link planted at the temporary file's name).
#define BOOST_TEST_MODULE outputs
#include <boost/test/unit_test.hpp>

#include "support/pmc_command.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using pmc_test::PmcCommand;
using pmc_test::Result;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// pmc started with stdout to the file `out` (/dev/full: a full disk) and stderr captured; `before`
// runs as soon as it is started, with its pid. `prefix` runs pmc under another program (setpriv).
struct Started {
  pmc_test::PmcCommand& cmd;
  Result run(const std::vector<std::string>& args, const std::string& out,
             const std::function<void(pid_t)>& before = {}, const std::vector<std::string>& prefix = {}) {
    const fs::path err = cmd.tmp.path() / "started.stderr";
    const fs::path out_file = out.empty() ? cmd.tmp.path() / "started.stdout" : fs::path(out);
    std::vector<std::string> argv(prefix.begin() + (prefix.empty() ? 0 : 1), prefix.end());
    if (!prefix.empty()) argv.push_back((fs::path(PMC_BIN_DIR) / "pmc").string());
    argv.insert(argv.end(), args.begin(), args.end());
    const fs::path exe = prefix.empty() ? fs::path(PMC_BIN_DIR) / "pmc" : fs::path(prefix.front());
    const pid_t pid = pmc_test::spawn(exe, argv, cmd.env, out_file, err);
    BOOST_REQUIRE_MESSAGE(pid > 0, "posix_spawn failed");
    if (before) before(pid);
    Result r;
    r.command = "pmc";
    for (const auto& a : args) r.command += " " + a;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (::waitpid(pid, &status, WNOHANG) != pid) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
    if (out.empty()) r.out = pmc_test::slurp(out_file);
    r.err = pmc_test::slurp(err);
    return r;
  }
};

// pmc export counts whole CPUs: root (or perf_event_paranoid <= 0).
boost::test_tools::assertion_result counts_cpus(boost::unit_test::test_unit_id) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  boost::test_tools::assertion_result r(::geteuid() == 0 || paranoid <= 0);
  r.message() << "pmc export counts whole CPUs, which needs root (or perf_event_paranoid <= 0)";
  return r;
}

// Root without the capabilities that let it ignore file permissions (setpriv drops them).
boost::test_tools::assertion_result root_with_setpriv(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(::geteuid() == 0 && fs::exists("/usr/bin/setpriv"));
  r.message() << "needs root and setpriv (util-linux) to run pmc as root that obeys file permissions";
  return r;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(echoed_input, PmcCommand)

// A 100 KB event string: the message quotes its first 80 bytes once and says how long it is
// (once it quoted the whole string twice: a 200 KB message).
BOOST_AUTO_TEST_CASE(a_huge_event_string_is_cut_and_echoed_once) {
  const std::string huge(102400, 'A');
  for (const std::string& event : {huge, huge + ":u", huge + ":c=x"}) {
    const Result r = pmc({"encode", "--cpuid-dump", "pentium-iii", event});
    BOOST_TEST_CONTEXT("event of " << event.size() << " bytes") {
      BOOST_TEST(r.status == 1);
      BOOST_TEST(r.err.size() < 400u, r.err.substr(0, 400));
      BOOST_TEST(count(r.err, std::string(80, 'A')) == 1u, r.err.substr(0, 400));
      BOOST_TEST(contains(r.err, "... (" + std::to_string(event.size()) + " bytes)"), r.err.substr(0, 400));
      BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
  }
  // A short one is still quoted whole.
  const Result r = pmc({"encode", "--cpuid-dump", "pentium-iii", "NO_SUCH_EVENT_X"});
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "event 'NO_SUCH_EVENT_X'"), r.err);
  BOOST_TEST(!contains(r.err, "bytes)"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()

// Item 13: a report that cannot be written (a full disk: /dev/full) is an error naming the file,
// exit 1. It once left an empty file (or nothing) and exited 0.
BOOST_FIXTURE_TEST_SUITE(full_disk, PmcCommand)

BOOST_AUTO_TEST_CASE(stdout_of_every_command_on_a_full_disk) {
  Started started{*this};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"probe", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"list", "--cpuid-dump", "pentium-iii"},
        std::vector<std::string>{"encode", "--cpuid-dump", "pentium-iii", "INST_RETIRED"},
        std::vector<std::string>{"stat", "--cpuid-dump", "pentium-iii", "--workload", "p6-demo", "--json"},
        std::vector<std::string>{"probe", "--cpuid-dump", "pentium-iii", "--json"}}) {
    const Result r = started.run(args, "/dev/full");
    BOOST_TEST_CONTEXT(r.command) {
      BOOST_TEST(r.status == 1, r);
      BOOST_TEST(r.err == "pmc: writing standard output: No space left on device\n", r);
    }
  }
}

BOOST_AUTO_TEST_CASE(stat_output_file_on_a_full_disk) {
  const Result r = pmc({"stat", "-e", "task-clock", "-o", "/dev/full", "--", "true"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: writing /dev/full: No space left on device\n", r);
  // The same report to a file that can be written: exit 0 and the report in it.
  const fs::path file = tmp.path() / "report.txt";
  const Result ok = pmc({"stat", "-e", "task-clock", "-o", file.string(), "--", "true"});
  BOOST_TEST(ok.status == 0, ok);
  BOOST_TEST(contains(pmc_test::slurp(file), "task-clock"), ok);
}

BOOST_AUTO_TEST_SUITE_END()

// Item 12: pmc export --textfile, as root in a directory others can write, wrote through a
// symbolic link planted at its temporary file's name (FILE.PID.tmp, PID known as soon as pmc
// starts), overwriting the link's target; and said "No such file or directory" for a directory
// it may not write (the errno of its clean-up).
BOOST_FIXTURE_TEST_SUITE(temporary_files, PmcCommand)

BOOST_AUTO_TEST_CASE(a_planted_link_is_not_written_through, *boost::unit_test::precondition(counts_cpus)) {
  const fs::path dir = tmp.path() / "textfile";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);  // mode 0777: anyone may plant a file here
  const fs::path victim = tmp.path() / "victim";
  pmc_test::spit(victim, "precious\n");
  const fs::path file = dir / "pmc.prom";
  std::vector<fs::path> planted;
  Started started{*this};
  const Result r = started.run(
      {"export", "--cpuid-dump", "pentium-iii", "-e", "task-clock", "--textfile", file.string(), "--interval", "0.2",
       "--timeout", "500"},
      "", [&](pid_t pid) {
        // The old name (known once pmc started, long before its first write) and guesses.
        for (const std::string& name : {"pmc.prom." + std::to_string(pid) + ".tmp", std::string("pmc.prom.tmp"),
                                        std::string(".pmc.prom.tmp")}) {
          fs::create_symlink(victim, dir / name);
          planted.push_back(dir / name);
        }
      });
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(pmc_test::slurp(victim) == "precious\n");
  BOOST_TEST(!fs::is_symlink(file));
  BOOST_TEST(contains(pmc_test::slurp(file), "pmc_export_info"), r);
  // The planted links are left as they were, and nothing else is left behind.
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++entries;
    if (e.path() == file) continue;
    BOOST_TEST(std::count(planted.begin(), planted.end(), e.path()) == 1, e.path());
    BOOST_TEST(fs::read_symlink(e.path()) == victim);
  }
  BOOST_TEST(entries == planted.size() + 1);
}

// Root obeys file permissions once setpriv drops CAP_DAC_OVERRIDE (and the two like it) from
// its bounding set; it keeps what pmc export needs to count CPUs.
BOOST_AUTO_TEST_CASE(a_permission_error_says_so, *boost::unit_test::precondition(root_with_setpriv)) {
  const fs::path dir = tmp.path() / "readonly";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  const fs::path file = dir / "pmc.prom";
  Started started{*this};
  const Result r = started.run(
      {"export", "--cpuid-dump", "pentium-iii", "-e", "task-clock", "--textfile", file.string(), "--interval", "0.2",
       "--timeout", "300"},
      "", {}, {"/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"});
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err == "pmc: --textfile " + file.string() + ": cannot write there: Permission denied\n", r);
  BOOST_TEST(fs::is_empty(dir));
}

BOOST_AUTO_TEST_SUITE_END()
