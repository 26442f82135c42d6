// The config file: keys, types, values, relative paths, the search order, and errors with
// file:line:column.
#define BOOST_TEST_MODULE config
#include <boost/test/unit_test.hpp>

#include <pmc/error.hpp>
#include <pmc/hal.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/pmc-config-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
    return path / name;
  }
};

// Sets environment variables for one test and restores them after.
struct Env {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  void set(const std::string& k, const std::optional<std::string>& v) {
    const char* old = std::getenv(k.c_str());
    saved.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
    if (v) setenv(k.c_str(), v->c_str(), 1);
    else unsetenv(k.c_str());
  }
  ~Env() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }
};

std::string config_error(const std::string& text) {
  TempDir d;
  auto f = d.write("c.toml", text);
  try {
    (void)pmc::load_config(f);
  } catch (const pmc::Error& e) {
    std::string m = e.what();
    // Report relative to the file name for stable expectations.
    auto pos = m.find(f.string());
    BOOST_TEST(pos == 0u, m);
    return "c.toml" + m.substr(f.string().size());
  }
  BOOST_ERROR("config accepted: " << text);
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(reads_every_key_and_resolves_paths_against_the_file) {
  TempDir d;
  auto f = d.write("etc/c.toml", R"(backend = "p6"
access = "sim"
plugin_path = ["plugins", "/abs/plugins"]
events_path = ["mine.toml"]
cpu = "dumps/p3.txt"
)");
  d.write("etc/mine.toml", "");  // the files it names exist (a missing one is an error)
  d.write("etc/dumps/p3.txt", "");
  pmc::Config c = pmc::load_config(f);
  BOOST_TEST(c.backend == "p6");
  BOOST_TEST(c.access == "sim");
  BOOST_TEST(c.plugin_path.at(0) == d.path / "etc" / "plugins");
  BOOST_TEST(c.plugin_path.at(1) == fs::path("/abs/plugins"));
  BOOST_TEST(c.events_path.at(0) == d.path / "etc" / "mine.toml");
  BOOST_TEST(c.cpu == (d.path / "etc" / "dumps" / "p3.txt").string());
  BOOST_TEST(c.origin.at("backend").where == f.string() + ":1:11");
  BOOST_TEST(c.origin.at("cpu").where == f.string() + ":5:7");
  BOOST_TEST(c.origin.count("nothing") == 0u);
}

BOOST_AUTO_TEST_CASE(defaults) {
  pmc::Config c;
  BOOST_TEST(c.backend == "auto");
  BOOST_TEST(c.access == "auto");
  BOOST_TEST(c.cpu == "native");
}

BOOST_AUTO_TEST_CASE(errors_carry_file_line_column) {
  BOOST_TEST(config_error("backend = \"p6\"\nbakend = \"p6\"\n").rfind("c.toml:2:1: unknown key 'bakend'", 0) == 0u);
  BOOST_TEST(config_error("access = 3\n") == "c.toml:1:10: 'access' must be a string, not an integer");
  BOOST_TEST(config_error("access = \"fast\"\n").rfind("c.toml:1:10: unknown access 'fast'", 0) == 0u);
  BOOST_TEST(config_error("plugin_path = \"dir\"\n").rfind("c.toml:1:15: 'plugin_path' must be an array", 0) == 0u);
  BOOST_TEST(config_error("plugin_path = [1]\n").rfind("c.toml:1:16: 'plugin_path' must be an array of strings", 0) == 0u);
  BOOST_TEST(config_error("backend = \n").rfind("c.toml:1:", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(unknown_backend_is_reported_at_its_key) {
  TempDir d;
  auto f = d.write("c.toml", "\nbackend = \"p7\"\ncpu = \"" + std::string(PMC_SOURCE_DIR) + "/data/cpuid/pentium-iii.txt\"\n");
  try {
    (void)pmc::Hal::open(pmc::load_config(f));
    BOOST_ERROR("backend p7 accepted");
  } catch (const pmc::Error& e) {
    std::string m = e.what();
    BOOST_TEST(m.rfind(f.string() + ":2:11: unknown backend 'p7'; did you mean ", 0) == 0u, m);
    BOOST_TEST(m.find("(loaded backends: ") != std::string::npos, m);
    BOOST_TEST(m.find("p6") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(search_order) {
  TempDir d;
  auto explicit_file = d.write("explicit.toml", "backend = \"p6\"\n");
  auto env_file = d.write("env.toml", "access = \"sim\"\n");
  auto xdg_file = d.write("xdg/pmc/config.toml", "cpu = \"x.txt\"\n");
  d.write("xdg/pmc/x.txt", "");
  auto home_file = d.write("home/.config/pmc/config.toml", "backend = \"home\"\n");
  Env env;
  env.set("PMC_CONFIG", env_file.string());
  env.set("XDG_CONFIG_HOME", (d.path / "xdg").string());
  env.set("HOME", (d.path / "home").string());

  BOOST_TEST(pmc::find_config(explicit_file).found_by == "--config");
  BOOST_TEST(*pmc::find_config(explicit_file).file == explicit_file);
  BOOST_TEST(pmc::find_config(std::nullopt).found_by == "$PMC_CONFIG");
  env.set("PMC_CONFIG", std::nullopt);
  BOOST_TEST(pmc::find_config(std::nullopt).found_by == "$XDG_CONFIG_HOME/pmc/config.toml");
  BOOST_TEST(*pmc::find_config(std::nullopt).file == xdg_file);
  env.set("XDG_CONFIG_HOME", std::nullopt);
  BOOST_TEST(pmc::find_config(std::nullopt).found_by == "~/.config/pmc/config.toml");
  BOOST_TEST(pmc::find_config(std::nullopt).backend == "home");
  env.set("HOME", (d.path / "nowhere").string());
  if (!fs::exists("/etc/pmc/config.toml")) {
    pmc::Config c = pmc::find_config(std::nullopt);
    BOOST_TEST(c.found_by == "built-in defaults");
    BOOST_TEST(!c.file.has_value());
  }
}

BOOST_AUTO_TEST_CASE(a_named_file_that_is_missing_is_an_error) {
  Env env;
  env.set("PMC_CONFIG", "/nonexistent/pmc.toml");
  try {
    (void)pmc::find_config(std::nullopt);
    BOOST_ERROR("missing $PMC_CONFIG file accepted");
  } catch (const pmc::Error& e) {
    BOOST_TEST(std::string(e.what()) == "/nonexistent/pmc.toml: config file not found (named by $PMC_CONFIG)");
  }
  BOOST_CHECK_THROW((void)pmc::find_config(fs::path("/nonexistent/x.toml")), pmc::Error);
}
