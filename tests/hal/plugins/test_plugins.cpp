#define BOOST_TEST_MODULE plugins
#include <boost/test/unit_test.hpp>

// The plugin contract (shared/design.md "Plugin contract"): a library that fails to load, lacks
// the descriptor, speaks another ABI, or whose factory fails is one clear error naming the file
// and what went wrong; the other plugins still load; a config naming the broken backend gets
// that error; and the library of the chosen backend stays loaded while a session lives.
//
// The broken plugins are built by tests/plugins/CMakeLists.txt, one per directory under
// PMC_TEST_PLUGIN_DIR, and all of them together with the valid "testgood" in mixed/.

#include "plugins.hpp"
#include "support/child_process.hpp"
#include "support/device.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc::errc;

const fs::path kPlugins = PMC_TEST_PLUGIN_DIR;
const fs::path kMixed = kPlugins / "mixed";

fs::path case_file(const std::string& name) { return kPlugins / name / ("lib" + name + ".so"); }

// The P6 CPUID dump: data/cpuid/pentium-iii.txt, else any dump of the tests.
fs::path p3_dump() {
  fs::path p = fs::path(PMC_SOURCE_DIR) / "data" / "cpuid" / "pentium-iii.txt";
  if (fs::exists(p)) return p;
  for (const auto& e : fs::directory_iterator(fs::path(PMC_TEST_DATA) / "cpuid")) return e.path();
  return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Loads one case alone and checks the one-line error names the file and says what went wrong.
void expect_broken(const std::string& name, const std::vector<std::string>& words) {
  const fs::path file = case_file(name);
  BOOST_TEST_CONTEXT("plugin " << file) {
    BOOST_REQUIRE(fs::exists(file));
    pmc::detail::PluginLoad p = pmc::detail::load_plugin(file);
    BOOST_TEST(!p.backend);
    BOOST_TEST(!p.model);
    BOOST_TEST(p.status.file == file);
    BOOST_TEST(p.status.name.empty());
    const std::string& error = p.status.error;
    BOOST_TEST_MESSAGE(name << ": " << error);
    BOOST_TEST(!error.empty());
    BOOST_TEST(contains(error, file.string()), "error does not name the file: " << error);
    BOOST_TEST(!contains(error, "\n"), "error is more than one line: " << error);
    for (const auto& w : words) BOOST_TEST(contains(error, w), "error lacks '" << w << "': " << error);
  }
}

const std::vector<std::string> kBrokenCases = {"unloadable", "noexport", "abinext",        "newminor",
                                               "abi1",       "throwing", "nullfactory",    "nocreate",
                                               "nulldescriptor", "small", "garbage"};

// "ABI 2.0", "ABI 3.0": how the loader names an ABI version.
std::string abi_text(unsigned major, unsigned minor) {
  return "ABI " + std::to_string(major) + "." + std::to_string(minor);
}

const pmc::PluginStatus* status_of(const pmc::Hal& hal, const fs::path& file) {
  for (const auto& s : hal.plugins())
    if (s.file == file) return &s;
  return nullptr;
}

const pmc::PluginStatus* loaded_backend(const pmc::Hal& hal, const std::string& backend) {
  for (const auto& s : hal.plugins())
    if (s.kind == pmc::PluginKind::backend && s.name == backend && s.error.empty()) return &s;
  return nullptr;
}

pmc::Config mixed_config() {
  pmc::Config cfg;
  cfg.plugin_path = {kMixed};
  cfg.cpu = p3_dump().string();
  return cfg;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(load_one)

BOOST_AUTO_TEST_CASE(undefined_symbol_fails_to_load) {
  expect_broken("unloadable", {"cannot load", "undefined symbol: pmc_test_missing_symbol"});
}

BOOST_AUTO_TEST_CASE(no_descriptor) {
  expect_broken("noexport", {"not a pmchal plugin", "exports neither 'pmc_backend_v2' nor 'pmc_model_v2'"});
}

BOOST_AUTO_TEST_CASE(other_abi_major) {
  expect_broken("abinext", {abi_text(pmc::kAbiMajor + 1, 0), abi_text(pmc::kAbiMajor, pmc::kAbiMinor), "rebuild the plugin"});
}

BOOST_AUTO_TEST_CASE(newer_abi_minor) {
  expect_broken("newminor", {abi_text(pmc::kAbiMajor, pmc::kAbiMinor + 1), "newer than",
                             abi_text(pmc::kAbiMajor, pmc::kAbiMinor).substr(4)});
}

BOOST_AUTO_TEST_CASE(old_abi_1_plugin) {
  expect_broken("abi1", {"ABI 1", "'pmc_backend_v1'", abi_text(pmc::kAbiMajor, pmc::kAbiMinor), "rebuild"});
}

// The factory reports the constructor's exception through its error buffer (it may not throw).
BOOST_AUTO_TEST_CASE(factory_throws) { expect_broken("throwing", {"'throwing'", "failed", "deliberate failure"}); }

BOOST_AUTO_TEST_CASE(factory_returns_null) {
  expect_broken("nullfactory", {"'nullfactory'", "failed and gave no reason"});
}

BOOST_AUTO_TEST_CASE(descriptor_without_factory) { expect_broken("nocreate", {"backend descriptor", "no factory"}); }

BOOST_AUTO_TEST_CASE(null_descriptor) { expect_broken("nulldescriptor", {"'pmc_backend_v2'", "null pointer"}); }

BOOST_AUTO_TEST_CASE(descriptor_too_small) {
  expect_broken("small", {std::to_string(2 * sizeof(std::uint32_t)) + " bytes", "smaller than",
                          std::to_string(sizeof(pmc::pmc_backend_descriptor))});
}

BOOST_AUTO_TEST_CASE(not_an_elf_file) { expect_broken("garbage", {"not an ELF shared library"}); }

BOOST_AUTO_TEST_CASE(missing_file) {
  const fs::path file = kPlugins / "no-such-dir" / "libnothing.so";
  pmc::detail::PluginLoad p = pmc::detail::load_plugin(file);
  BOOST_TEST(!p.backend);
  BOOST_TEST(!p.model);
  BOOST_TEST(contains(p.status.error, file.string()), p.status.error);
  BOOST_TEST(contains(p.status.error, "cannot be read"), p.status.error);
}

// What the loader refuses before dlopen: anything but a regular file (a FIFO must not hang it), a
// truncated ELF file, and, as root, a file others may write. Each error names the file.
BOOST_AUTO_TEST_CASE(unsafe_files_are_refused_before_loading) {
  pmc_test::TempDir tmp("pmc-test-plugins");
  auto refused = [](const fs::path& file, const std::string& why) {
    BOOST_TEST_CONTEXT(file) {
      pmc::detail::PluginLoad p = pmc::detail::load_plugin(file);
      BOOST_TEST(!p.backend);
      BOOST_TEST(!p.model);
      BOOST_TEST(contains(p.status.error, file.string()), p.status.error);
      BOOST_TEST(contains(p.status.error, why), p.status.error);
    }
  };
  const fs::path fifo = tmp.path() / "libfifo.so";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused(fifo, "a named pipe, not a regular file");
  const fs::path dir = tmp.path() / "libdir.so";
  fs::create_directory(dir);
  refused(dir, "a directory, not a regular file");
  // The first kilobyte of a good plugin: its headers promise segments the file does not hold.
  const std::string good = pmc_test::slurp(case_file("testgood"));
  BOOST_REQUIRE(good.size() > 1024u);
  const fs::path truncated = tmp.path() / "libtruncated.so";
  pmc_test::spit(truncated, good.substr(0, 1024));
  refused(truncated, "truncated ELF file");
  // A whole copy loads; made writable by everyone, root refuses it.
  const fs::path copy = tmp.path() / "libtestgood.so";
  pmc_test::spit(copy, good);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write);
  BOOST_TEST(pmc::detail::load_plugin(copy).status.error.empty(), pmc::detail::load_plugin(copy).status.error);
  fs::permissions(copy, fs::perms::all & ~fs::perms::owner_exec & ~fs::perms::group_exec & ~fs::perms::others_exec);
  if (::geteuid() == 0) refused(copy, "writable by everyone");
  else BOOST_TEST(pmc::detail::load_plugin(copy).status.error.empty());  // the check is root's only
}

BOOST_AUTO_TEST_CASE(good_backend_loads) {
  pmc::detail::PluginLoad p = pmc::detail::load_plugin(case_file("testgood"));
  BOOST_REQUIRE(p.backend);
  BOOST_TEST(p.status.error.empty(), p.status.error);
  BOOST_TEST((p.status.kind == pmc::PluginKind::backend));
  BOOST_TEST(p.status.name == "testgood");
  BOOST_TEST(p.backend->name == "testgood");
  BOOST_REQUIRE(p.backend->backend);
  BOOST_TEST(p.backend->file == case_file("testgood").string());
}

BOOST_AUTO_TEST_CASE(each_case_is_alone_in_its_directory) {
  for (const auto& name : kBrokenCases) {
    std::vector<pmc::detail::PluginLoad> all = pmc::detail::load_plugins({kPlugins / name});
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(all.size() == 1u);
      for (const auto& p : all) BOOST_TEST(!p.status.error.empty());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(directory)

BOOST_AUTO_TEST_CASE(mixed_directory_reports_each_broken_one_and_loads_the_rest) {
  std::vector<pmc::detail::PluginLoad> all = pmc::detail::load_plugins({kMixed});
  BOOST_TEST(all.size() == kBrokenCases.size() + 1);
  unsigned loaded = 0;
  for (const auto& p : all) {
    if (p.backend) {
      ++loaded;
      BOOST_TEST(p.status.name == "testgood");
    } else {
      BOOST_TEST(contains(p.status.error, p.status.file.string()), p.status.error);
    }
  }
  BOOST_TEST(loaded == 1u);
}

BOOST_AUTO_TEST_CASE(missing_directory_is_reported) {
  const fs::path dir = kPlugins / "no-such-dir";
  std::vector<pmc::detail::PluginLoad> all = pmc::detail::load_plugins({dir});
  BOOST_REQUIRE(all.size() == 1u);
  BOOST_TEST(!all[0].backend);
  BOOST_TEST(contains(all[0].status.error, dir.string()), all[0].status.error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(deferred_models)

// A library whose dynamic symbols define only a model descriptor is checked and listed by the
// loader, but not loaded (counting on real hardware needs no model); when a simulated PMU needs
// a model, or the plugins are listed, it is loaded, and a failure is reported then, naming it.
BOOST_AUTO_TEST_CASE(a_model_library_is_loaded_when_a_model_is_needed) {
  const fs::path dir = kPlugins / "unloadablemodel";
  const fs::path file = dir / "libunloadablemodel.so";
  BOOST_REQUIRE(fs::exists(file));
  const std::vector<pmc::detail::PluginLoad> all = pmc::detail::load_plugins({dir});
  BOOST_REQUIRE(all.size() == 1u);
  BOOST_TEST(all[0].deferred);
  BOOST_TEST(!all[0].model);
  BOOST_TEST(all[0].status.error.empty(), all[0].status.error);
  BOOST_TEST((all[0].status.kind == pmc::PluginKind::model));

  pmc::Config cfg;
  cfg.plugin_path = {dir};
  cfg.cpu = p3_dump().string();
  pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.backend()->name == "p6");
  // The p6 model (installed) builds the device; the broken library beside it stays broken.
  pmc::Session session = hal.session();
  session.add("INST_RETIRED");
  pmc::OwnedSegment seg(1000);
  seg.signal("instructions", 2);
  session.start();
  pmc_test::device(session).run(seg);
  session.stop();
  BOOST_TEST(session.read().at(0).value == 2000u);
  const pmc::PluginStatus* s = status_of(hal, file);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->kind == pmc::PluginKind::model));
  BOOST_TEST(contains(s->error, file.string()), s->error);
  BOOST_TEST(contains(s->error, "undefined symbol: pmc_test_missing_model_symbol"), s->error);
  // The installed models are listed as before.
  bool p6_model = false;
  for (const auto& p : hal.plugins())
    if (p.kind == pmc::PluginKind::model && p.name == "p6" && p.error.empty()) p6_model = true;
  BOOST_TEST(p6_model);
}

// Hal::open loads no model library; the first simulated event does. In a child process, so that
// nothing this test program loaded before decides.
BOOST_AUTO_TEST_CASE(hal_open_loads_no_model_library) {
  const fs::path model = fs::path(PMC_PLUGIN_DIR) / "libp6-model.so";
  BOOST_REQUIRE(fs::exists(model));
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    int bits = 0;
    try {
      auto loaded = [&] {
        void* h = dlopen(model.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (h) dlclose(h);
        return h != nullptr;
      };
      if (loaded()) bits |= 1;  // already there before: the test could not tell
      pmc::Config cfg;
      cfg.cpu = p3_dump().string();
      pmc::Hal hal = pmc::Hal::open(cfg);
      if (loaded()) bits |= 2;  // Hal::open loaded it
      pmc::Session session = hal.session();
      session.add("INST_RETIRED");
      if (!loaded()) bits |= 4;  // the simulated event did not
    } catch (...) {
      bits |= 8;
    }
    _exit(bits);
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  const int bits = WEXITSTATUS(status);
  BOOST_TEST((bits & 1) == 0, "libp6-model.so was loaded before the test");
  BOOST_TEST((bits & 2) == 0, "Hal::open loaded libp6-model.so");
  BOOST_TEST((bits & 4) == 0, "a simulated event did not load libp6-model.so");
  BOOST_TEST((bits & 8) == 0, "Hal::open or the session threw");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(hal)

BOOST_AUTO_TEST_CASE(open_with_broken_plugins_still_chooses_p6) {
  pmc::Hal hal = pmc::Hal::open(mixed_config());
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.backend()->name == "p6");

  const pmc::PluginStatus* good = loaded_backend(hal, "testgood");
  BOOST_REQUIRE(good);
  BOOST_TEST(good->file == kMixed / "libtestgood.so");
  const pmc::PluginStatus* p6 = loaded_backend(hal, "p6");
  BOOST_REQUIRE(p6);
  BOOST_TEST(p6->file.parent_path() == fs::path(PMC_PLUGIN_DIR), p6->file);

  for (const auto& name : kBrokenCases) {
    const fs::path file = kMixed / ("lib" + name + ".so");
    BOOST_TEST_CONTEXT(file) {
      const pmc::PluginStatus* s = status_of(hal, file);
      BOOST_REQUIRE(s);
      BOOST_TEST(s->name.empty());
      BOOST_TEST(!s->error.empty());
      BOOST_TEST(contains(s->error, file.string()), s->error);
    }
  }
  BOOST_TEST(contains(status_of(hal, kMixed / "libthrowing.so")->error, "deliberate failure"));
  BOOST_TEST(contains(status_of(hal, kMixed / "libunloadable.so")->error, "undefined symbol: pmc_test_missing_symbol"));

  // Both good backends were probed; the broken ones were not.
  std::vector<std::string> probed;
  for (const auto& c : hal.candidates()) probed.push_back(c.backend);
  BOOST_TEST((std::find(probed.begin(), probed.end(), "testgood") != probed.end()));
  BOOST_TEST((std::find(probed.begin(), probed.end(), "p6") != probed.end()));
  for (const auto& broken : kBrokenCases)
    BOOST_TEST((std::find(probed.begin(), probed.end(), broken) == probed.end()), broken << " was probed");

  // The chosen backend works.
  pmc::Encoding e = hal.encode("INST_RETIRED");
  BOOST_TEST(e.config == 0x300C0u);
}

BOOST_AUTO_TEST_CASE(naming_a_broken_backend_throws_its_error) {
  for (const auto& name : kBrokenCases) {
    BOOST_TEST_CONTEXT("backend = " << name) {
      pmc::Config cfg = mixed_config();
      cfg.backend = name;
      const fs::path file = kMixed / ("lib" + name + ".so");
      // What load_plugin says about this file is what Hal::open must say.
      const std::string expected = pmc::detail::load_plugin(file).status.error;
      BOOST_REQUIRE(!expected.empty());
      bool threw = false;
      try {
        (void)pmc::Hal::open(cfg);
      } catch (const pmc::Error& err) {
        threw = true;
        BOOST_TEST(err.kind() == errc::plugin, "kind " << static_cast<int>(err.kind()) << ": " << err.what());
        const std::string what = err.what();
        BOOST_TEST(contains(what, expected), what);
        BOOST_TEST(contains(what, "'" + name + "'"), what);
      }
      BOOST_TEST(threw);
    }
  }
}

BOOST_AUTO_TEST_CASE(naming_the_good_test_backend_uses_it) {
  pmc::Config cfg = mixed_config();
  cfg.backend = "testgood";
  pmc::Hal hal = pmc::Hal::open(cfg);
  BOOST_REQUIRE(hal.backend());
  BOOST_TEST(hal.backend()->name == "testgood");
  BOOST_TEST(hal.backend()->data == kMixed / "testgood.toml");  // its data file, found next to it
  BOOST_TEST(hal.pmu().counters.size() == 1u);
  BOOST_TEST(contains(hal.why(), "testgood"), hal.why());
}

BOOST_AUTO_TEST_CASE(naming_an_unknown_backend_is_not_a_plugin_error) {
  pmc::Config cfg = mixed_config();
  cfg.backend = "nosuchbackend";
  try {
    (void)pmc::Hal::open(cfg);
    BOOST_FAIL("Hal::open accepted an unknown backend");
  } catch (const pmc::Error& err) {
    BOOST_TEST(err.kind() == errc::not_found, err.what());
    BOOST_TEST(contains(err.what(), "nosuchbackend"), err.what());
  }
}

// A session keeps the chosen backend's library loaded after the Hal is gone: start, stop and
// read call into the p6 plugin's code.
BOOST_AUTO_TEST_CASE(session_outlives_hal) {
  pmc::Config cfg;
  cfg.cpu = p3_dump().string();
  std::optional<pmc::Hal> hal(pmc::Hal::open(cfg));
  BOOST_REQUIRE(hal->backend());
  BOOST_REQUIRE(hal->backend()->name == "p6");
  const pmc::PluginStatus* p6 = loaded_backend(*hal, "p6");
  BOOST_REQUIRE(p6);
  const std::string p6_file = p6->file.string();

  pmc::Session session = hal->session();
  session.add("INST_RETIRED");
  hal.reset();

  // Still mapped: RTLD_NOLOAD only finds a library that is loaded.
  void* handle = dlopen(p6_file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  BOOST_TEST(handle != nullptr, p6_file << " was unloaded with the Hal");
  if (handle) dlclose(handle);

  pmc::Device& device = pmc_test::device(session);
  pmc::OwnedSegment seg(1000);
  seg.signal("instructions", 3);
  session.start();
  BOOST_TEST(session.running());
  device.run(seg);
  session.stop();
  BOOST_TEST(!session.running());
  std::vector<pmc::Reading> r = session.read();
  BOOST_REQUIRE(r.size() == 1u);
  BOOST_TEST(r[0].event == "INST_RETIRED");
  BOOST_TEST(r[0].value == 3000u);
  BOOST_TEST(contains(r[0].canonical, "INST_RETIRED"), r[0].canonical);

  // And once more after a reset, to be sure the driver is still callable.
  session.reset();
  session.start();
  device.run(seg);
  session.stop();
  r = session.read();
  BOOST_REQUIRE(r.size() == 1u);
  BOOST_TEST(r[0].value == 3000u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(an_error_thrown_by_a_plugin_outlives_the_plugin) {
  // The Hal (and with it the last reference to the p6 library) dies at the end of the full
  // expression, while the exception the plugin threw is still being handled.
  pmc::Config cfg;
  cfg.cpu = std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt";
  try {
    (void)pmc::Hal::open(cfg).encode("NO_SUCH_EVENT");
    BOOST_ERROR("an unknown event encoded");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()).find("NO_SUCH_EVENT") != std::string::npos);
  }
}

// =============================================================================================
// A hostile plugin directory (issue 13): what once crashed, hung or stopped every command. Each
// load runs in a child process with a time limit, so a regression (SIGBUS inside dlopen, a read
// that blocks on a FIFO) fails the test instead of killing or hanging the test program.

namespace {

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
