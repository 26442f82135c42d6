#define BOOST_TEST_MODULE plugins_hostile
#include <boost/test/unit_test.hpp>

// Plugins in a hostile environment. A hostile plugin directory (issue 13): what once crashed,
// hung or stopped every command. Every loader call that once crashed or hung runs in a child
// process with a time limit, so a regression (SIGBUS inside dlopen, a read that blocks on a FIFO)
// fails the test instead of killing or hanging the test program. And, as root, a plugin that
// someone else could have written or replaced is refused. The test plugins are built by
// tests/plugins/CMakeLists.txt; the plugin contract is checked in test_plugins.cpp.

#include "plugins.hpp"
#include "plugins_test_support.hpp"
#include "support/child_process.hpp"
#include "support/messages.hpp"

#include <pmc/hal.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc_test::contains;
using plugins_test::abi_text;
using plugins_test::case_file;
using plugins_test::kPlugins;
using plugins_test::p3_dump;

// How a child running a loader call ended: `finished` with the text the call returned, or not
// (killed by a signal, or still running at the time limit and then killed).
struct Outcome {
  bool finished = false;
  std::string text;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << (o.finished ? "finished: " : "did not finish: ") << o.text;
}

Outcome in_child(const std::function<std::string()>& call, int limit_seconds = 30) {
  int out[2];
  BOOST_REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    // Die of a fatal signal rather than let Boost.Test's handlers turn it into a test error
    // and carry on running tests in the child.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP}) ::signal(sig, SIG_DFL);
    ::close(out[0]);
    std::string text;
    try {
      text = call();
    } catch (const std::exception& e) {
      text = std::string("threw: ") + e.what();
    } catch (...) {
      text = "threw something";
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(out[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(out[1]);
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_seconds);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline check above ends it
    char buf[4096];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child is done
    o.text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    o.text = "still running after " + std::to_string(limit_seconds) + " s (killed)";
  } else if (WIFSIGNALED(status)) {
    o.text = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  } else {
    o.finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return o;
}

// What the loader says about one file: "loaded <name>" or its error.
std::string load_text(const fs::path& file) {
  pmc::detail::PluginLoad p = pmc::detail::load_plugin(file);
  if (p.backend) return "loaded " + p.backend->name;
  if (p.model) return "loaded model " + p.model->name;
  return p.status.error;
}

// load_plugins over the directories: one line per result, "loaded <name>" or the error.
std::string load_dirs_text(const std::vector<fs::path>& dirs) {
  std::string out;
  for (const auto& p : pmc::detail::load_plugins(dirs))
    out += (p.backend ? "loaded " + p.backend->name : p.model ? "loaded model " + p.model->name : p.status.error) + "\n";
  return out;
}

// A directory holding a working copy of the testgood backend (library and data file).
void put_testgood(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy_file(case_file("testgood"), dir / "libtestgood.so", fs::copy_options::overwrite_existing);
  fs::copy_file(kPlugins / "testgood" / "testgood.toml", dir / "testgood.toml", fs::copy_options::overwrite_existing);
}

boost::unit_test::precondition running_as_root(bool wanted = true) {
  return boost::unit_test::precondition([wanted](boost::unit_test::test_unit_id) {
    boost::test_tools::assertion_result r((::geteuid() == 0) == wanted);
    r.message() << (wanted ? "the check applies to root only, and this test runs as user " +
                                 std::to_string(::geteuid())
                           : std::string("this test runs as root"));
    return r;
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_directory)

// The first 4 KiB of a real plugin: an ELF header and program headers whose loadable segments
// lie beyond the end of the file. dlopen would map them and die of SIGBUS on first touch.
BOOST_AUTO_TEST_CASE(a_plugin_cut_short_is_reported_not_mapped) {
  pmc_test::TempDir tmp("pmc-test-cut");
  for (const fs::path& real : {case_file("testgood"), fs::path(PMC_PLUGIN_DIR) / "libp6.so",
                               fs::path(PMC_PLUGIN_DIR) / "libp6-model.so"}) {
    BOOST_TEST_CONTEXT(real) {
      const std::string whole = pmc_test::slurp(real);
      BOOST_REQUIRE(whole.size() > 4096u);
      const fs::path cut = tmp.path() / ("libcut-" + real.stem().string() + ".so");
      pmc_test::spit(cut, whole.substr(0, 4096));
      const Outcome o = in_child([&] { return load_text(cut); });
      BOOST_TEST(o.finished, o);
      BOOST_TEST(contains(o.text, cut.string()), o);
      BOOST_TEST(contains(o.text, "truncated ELF file"), o);
      BOOST_TEST(contains(o.text, "4096-byte file"), o);
      // And in a directory beside a good plugin: reported, and the good one loads.
      const fs::path dir = tmp.path() / ("dir-" + real.stem().string());
      put_testgood(dir);
      fs::copy_file(cut, dir / "libcut.so");
      const Outcome all = in_child([&] { return load_dirs_text({dir}); });
      BOOST_TEST(all.finished, all);
      BOOST_TEST(contains(all.text, (dir / "libcut.so").string() + ": truncated ELF file"), all);
      BOOST_TEST(contains(all.text, "loaded testgood\n"), all);
    }
  }
}

// A named pipe called libx.so: opening it for reading blocks until a writer comes, forever.
BOOST_AUTO_TEST_CASE(a_fifo_named_like_a_plugin_does_not_hang) {
  pmc_test::TempDir tmp("pmc-test-fifo");
  const fs::path dir = tmp.path() / "plugins";
  put_testgood(dir);
  const fs::path fifo = dir / "libx.so";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const Outcome one = in_child([&] { return load_text(fifo); }, 20);
  BOOST_TEST(one.finished, one);
  BOOST_TEST(one.text == fifo.string() + ": not loaded: it is a named pipe, not a regular file", one);
  const Outcome all = in_child([&] { return load_dirs_text({dir}); }, 20);
  BOOST_TEST(all.finished, all);
  BOOST_TEST(contains(all.text, fifo.string() + ": not loaded: it is a named pipe"), all);
  BOOST_TEST(contains(all.text, "loaded testgood\n"), all);

  // Every command once hung on it: pmc probe with the directory on plugin_path ends, lists the
  // FIFO as a broken plugin and still chooses p6 for a Pentium III.
  const fs::path config = tmp.path() / "config.toml";
  pmc_test::spit(config, "plugin_path = [\"" + dir.string() + "\"]\n");
  const Outcome probe = in_child([&] {
    pmc_test::Env env{{"PATH", "/usr/bin:/bin"}, {"HOME", tmp.path().string()}, {"LC_ALL", "C"}};
    pmc_test::Result r = pmc_test::run(fs::path(PMC_BIN_DIR) / "pmc",
                                       {"--config", config.string(), "probe", "--cpuid-dump", p3_dump().string(),
                                        "--json"},
                                       env, tmp.path());
    return std::to_string(r.status) + "\n" + r.out + r.err;
  }, 60);
  BOOST_TEST(probe.finished, probe);
  BOOST_TEST(probe.text.rfind("0\n", 0) == 0u, probe);
  BOOST_TEST(contains(probe.text, "\"backend\": \"p6\""), probe);
  BOOST_TEST(contains(probe.text, "libx.so: not loaded: it is a named pipe"), probe);
}

// A symbolic link loop inside a plugin directory, and a plugin directory that is one: each is
// reported by name; nothing throws ("filesystem error: status: Too many levels of symbolic
// links" once stopped every command), and the good plugin beside the loop loads.
BOOST_AUTO_TEST_CASE(symbolic_link_loops) {
  pmc_test::TempDir tmp("pmc-test-loop");
  const fs::path dir = tmp.path() / "plugins";
  put_testgood(dir);
  const fs::path loop = dir / "libloop.so";
  fs::create_symlink("libloop.so", loop);  // points at itself
  const std::string eloop = std::strerror(ELOOP);
  const Outcome in_dir = in_child([&] { return load_dirs_text({dir}); });
  BOOST_TEST(in_dir.finished, in_dir);
  BOOST_TEST(contains(in_dir.text, loop.string() + ": cannot be read: " + eloop), in_dir);
  BOOST_TEST(contains(in_dir.text, "loaded testgood\n"), in_dir);

  const fs::path loop_dir = tmp.path() / "loopdir";
  fs::create_symlink("loopdir", loop_dir);
  const Outcome as_dir = in_child([&] { return load_dirs_text({loop_dir, dir}); });
  BOOST_TEST(as_dir.finished, as_dir);
  BOOST_TEST(as_dir.text.rfind(loop_dir.string() + ": plugin directory cannot be read: ", 0) == 0u, as_dir);
  BOOST_TEST(contains(as_dir.text, "loaded testgood\n"), as_dir);

  // Through Hal::open, as every command opens it: no exception, p6 chosen, both loops listed.
  const Outcome hal = in_child([&] {
    pmc::Config cfg;
    cfg.plugin_path = {loop_dir, dir};
    cfg.cpu = p3_dump().string();
    pmc::Hal h = pmc::Hal::open(cfg);
    std::string text = "backend " + (h.backend() ? h.backend()->name : std::string("none")) + "\n";
    for (const auto& s : h.plugins())
      if (!s.error.empty()) text += s.error + "\n";
    return text;
  });
  BOOST_TEST(hal.finished, hal);
  BOOST_TEST(hal.text.rfind("backend p6\n", 0) == 0u, hal);
  BOOST_TEST(contains(hal.text, loop_dir.string() + ": plugin directory cannot be read"), hal);
  BOOST_TEST(contains(hal.text, loop.string() + ": cannot be read"), hal);
}

// The descriptor symbol exported as a null pointer (the library loads, the pointer is 0): once
// a SIGSEGV in the host. Here in a child, so a regression fails rather than crashes the run.
BOOST_AUTO_TEST_CASE(a_null_descriptor_does_not_crash) {
  const Outcome o = in_child([] { return load_text(case_file("nulldescriptor")); });
  BOOST_TEST(o.finished, o);
  BOOST_TEST(o.text == case_file("nulldescriptor").string() + ": its 'pmc_backend_v2' descriptor is a null pointer", o);
}

// A plugin for ABI 2.(minor + 1) may call what this host lacks: refused, naming both versions.
BOOST_AUTO_TEST_CASE(a_newer_minor_is_refused) {
  const std::string text = load_text(case_file("newminor"));
  BOOST_TEST(contains(text, case_file("newminor").string() + ": backend built for plugin " +
                                abi_text(pmc::kAbiMajor, pmc::kAbiMinor + 1) + ", newer than this pmchal's " +
                                std::to_string(pmc::kAbiMajor) + "." + std::to_string(pmc::kAbiMinor)),
             text);
}

// Plugins come from the configured directories and the installed one, never from the current
// directory: a good plugin in the working directory is not loaded, by Hal::open or by pmc.
BOOST_AUTO_TEST_CASE(never_from_the_current_directory) {
  pmc_test::TempDir tmp("pmc-test-cwd");
  put_testgood(tmp.path());
  const Outcome hal = in_child([&] {
    if (::chdir(tmp.path().c_str()) != 0) return std::string("chdir failed");
    pmc::Config cfg;
    cfg.cpu = p3_dump().string();
    pmc::Hal h = pmc::Hal::open(cfg);
    std::string text;
    for (const auto& s : h.plugins()) text += s.file.string() + " " + s.name + "\n";
    return text;
  });
  BOOST_TEST(hal.finished, hal);
  BOOST_TEST(contains(hal.text, "libp6.so p6\n"), hal);  // the installed plugins load
  BOOST_TEST(!contains(hal.text, "testgood"), hal);
  BOOST_TEST(!contains(hal.text, tmp.path().string()), hal);

  // An empty directory name (what "" or a stray ':' in a path list gives) is not "here".
  const std::string empty = load_dirs_text({fs::path()});
  BOOST_TEST(contains(empty, "plugins are never loaded from the current directory implicitly"), empty);
  BOOST_TEST(empty == "an empty plugin directory name (\"\") is ignored: plugins are never loaded from the current "
                      "directory implicitly\n");
  BOOST_TEST(!contains(empty, "\nloaded "), empty);

  // pmc run in that directory.
  pmc_test::Env env{{"PATH", "/usr/bin:/bin"}, {"HOME", (tmp.path() / "home").string()}, {"LC_ALL", "C"}};
  fs::create_directories(tmp.path() / "home");
  pmc_test::TempDir scratch("pmc-test-cwd-out");
  const pmc_test::Result r = pmc_test::run(fs::path(PMC_BIN_DIR) / "pmc",
                                           {"probe", "--cpuid-dump", p3_dump().string(), "--json"}, env,
                                           scratch.path(), tmp.path());
  BOOST_TEST(r.status == 0, r);
  BOOST_TEST(!contains(r.out, "testgood"), r);
}

BOOST_AUTO_TEST_SUITE_END()

// As root, a plugin that someone else could have written or replaced is refused, as sudo and
// ssh refuse such files: the file or a directory above it writable by group or others, or owned
// by a user other than root. A sticky root-owned directory (/tmp) is fine: only root can replace
// root's files in it.
BOOST_AUTO_TEST_SUITE(as_root, *running_as_root())

namespace {

// tmp/<name>/libtestgood.so (+ data), every directory 0755 and root's.
fs::path good_copy(const pmc_test::TempDir& tmp, const std::string& name) {
  const fs::path dir = tmp.path() / name;
  put_testgood(dir);
  fs::permissions(tmp.path(), fs::perms(0755));
  fs::permissions(dir, fs::perms(0755));
  fs::permissions(dir / "libtestgood.so", fs::perms(0755));
  return dir / "libtestgood.so";
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_safe_copy_loads) {
  pmc_test::TempDir tmp("pmc-test-root");  // under /tmp: root's, sticky, mode 1777
  const fs::path file = good_copy(tmp, "ok");
  BOOST_TEST(load_text(file) == "loaded testgood");
}

BOOST_AUTO_TEST_CASE(a_file_writable_by_group_or_others) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path file = good_copy(tmp, "ok");
  fs::permissions(file, fs::perms(0775));
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: file " + file.string() +
                                    " is writable by its group (mode 0775)");
  fs::permissions(file, fs::perms(0757));
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: file " + file.string() +
                                    " is writable by everyone (mode 0757)");
}

BOOST_AUTO_TEST_CASE(a_directory_above_writable_by_group_or_others) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path file = good_copy(tmp, "open/deeper");
  const fs::path open = tmp.path() / "open";
  fs::permissions(open, fs::perms(0777));
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: directory " + open.string() +
                                    " is writable by everyone (mode 0777)");
  fs::permissions(open, fs::perms(0775));
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: directory " + open.string() +
                                    " is writable by its group (mode 0775)");
  // Sticky and root's, as /tmp is: accepted.
  fs::permissions(open, fs::perms(01777));
  BOOST_TEST(load_text(file) == "loaded testgood");
  // The directory Hal::open walks: the plugin is reported, not loaded.
  fs::permissions(open, fs::perms(0777));
  const std::string all = load_dirs_text({file.parent_path()});
  BOOST_TEST(contains(all, "directory " + open.string() + " is writable by everyone"), all);
  BOOST_TEST(!contains(all, "loaded testgood"), all);
}

BOOST_AUTO_TEST_CASE(owned_by_another_user) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path file = good_copy(tmp, "theirs/sub");
  const uid_t other = 4242;  // any user but root
  BOOST_REQUIRE(::chown(file.c_str(), other, 0) == 0);
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: file " + file.string() +
                                    " is owned by user 4242, not root");
  BOOST_REQUIRE(::chown(file.c_str(), 0, 0) == 0);
  const fs::path theirs = tmp.path() / "theirs";
  BOOST_REQUIRE(::chown(theirs.c_str(), other, 0) == 0);
  BOOST_TEST(load_text(file) == file.string() + ": refused while running as root: directory " + theirs.string() +
                                    " is owned by user 4242, not root");
  // Even sticky: its owner may replace anything in it.
  fs::permissions(theirs, fs::perms(01777));
  BOOST_TEST(contains(load_text(file), "directory " + theirs.string() + " is owned by user 4242"));
}

// A symbolic link in a safe directory to a plugin in an unsafe one: the real path is checked.
BOOST_AUTO_TEST_CASE(a_link_to_an_unsafe_place) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path real = good_copy(tmp, "open");
  fs::permissions(tmp.path() / "open", fs::perms(0777));
  fs::create_directories(tmp.path() / "safe");
  const fs::path link = tmp.path() / "safe" / "libtestgood.so";
  fs::create_symlink(real, link);
  BOOST_TEST(load_text(link) == link.string() + ": refused while running as root: directory " +
                                    (tmp.path() / "open").string() + " is writable by everyone (mode 0777)");
}

// The same world-writable plugin loads for an ordinary user: the check is root's (a user may
// load what they could have written themselves). In a child that gives up root.
BOOST_AUTO_TEST_CASE(an_ordinary_user_is_not_refused) {
  pmc_test::TempDir tmp("pmc-test-root");
  const fs::path file = good_copy(tmp, "open");
  fs::permissions(tmp.path() / "open", fs::perms(0777));
  fs::permissions(file, fs::perms(0777));
  const Outcome o = in_child([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return std::string("cannot become nobody");
    return load_text(file);
  });
  BOOST_TEST(o.finished, o);
  BOOST_TEST(o.text == "loaded testgood", o);
}

BOOST_AUTO_TEST_SUITE_END()
