#define BOOST_TEST_MODULE plugins
#include <boost/test/unit_test.hpp>

// The plugin contract (shared/design.md "Plugin contract"): a library that fails to load, lacks
// the descriptor, speaks another ABI, or whose factory fails is one clear error naming the file
// and what went wrong; the other plugins still load; a config naming the broken backend gets
// that error; and the library of the chosen backend stays loaded while a session lives.
//
// The broken plugins are built by tests/plugins/CMakeLists.txt, one per directory under
// PMC_TEST_PLUGIN_DIR, and all of them together with the valid "testgood" in mixed/.
//
// The hostile plugin directories and the checks made as root are in test_plugins_hostile.cpp.

#include "plugins.hpp"
#include "plugins_test_support.hpp"
#include "support/child_process.hpp"
#include "support/device.hpp"
#include "support/messages.hpp"

#include <pmc/error.hpp>
#include <pmc/hal.hpp>
#include <pmc/sdk/model.hpp>
#include <pmc/session.hpp>
#include <pmc/workload.hpp>

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pmc::errc;
using pmc_test::contains;
using plugins_test::abi_text;
using plugins_test::case_file;
using plugins_test::kPlugins;
using plugins_test::p3_dump;

const fs::path kMixed = kPlugins / "mixed";

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
