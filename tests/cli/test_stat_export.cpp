#define BOOST_TEST_MODULE stat_export
#include <boost/test/unit_test.hpp>

// `pmc export`: counts and metrics of every CPU in the Prometheus text format, written for
// node_exporter's textfile collector (atomically) or served over HTTP; and the whole path with
// a real Prometheus (Debian's `prometheus`, scripts/install-prometheus.sh) scraping pmc export
// every second on loopback: two scrapes, then rate() of task-clock through the HTTP query API.
// What needs a program this machine may lack, or whole-CPU counting (root), reports itself
// skipped with the reason.

#include "support/child_process.hpp"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const fs::path kPmc = fs::path(PMC_BIN_DIR) / "pmc";

boost::test_tools::assertion_result cpu_wide(boost::unit_test::test_unit_id) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  boost::test_tools::assertion_result r(geteuid() == 0 || paranoid <= 0);
  r.message() << "pmc export counts whole CPUs, which needs root (or perf_event_paranoid <= 0; it is " << paranoid
              << ")";
  return r;
}

std::optional<fs::path> program(const char* name) {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const fs::path p = fs::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

boost::test_tools::assertion_result prometheus_and_curl(boost::unit_test::test_unit_id id) {
  if (!cpu_wide(id)) return cpu_wide(id);
  boost::test_tools::assertion_result r(program("prometheus") && program("curl"));
  r.message() << "needs Debian's prometheus and curl (scripts/install-prometheus.sh installs them)";
  return r;
}

boost::test_tools::assertion_result has_curl(boost::unit_test::test_unit_id id) {
  if (!cpu_wide(id)) return cpu_wide(id);
  boost::test_tools::assertion_result r(program("curl").has_value());
  r.message() << "needs curl";
  return r;
}

// A loopback port nobody listens on now.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  BOOST_REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

// A background process with its output in files; ended with SIGTERM (then SIGKILL) and reaped
// by the destructor, so nothing is left running whatever the test does.
class Background {
 public:
  Background(const std::vector<std::string>& args, const fs::path& log) {
    std::vector<std::string> owned = args;
    std::vector<char*> argv = pmc_test::c_strings(owned);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    BOOST_REQUIRE_MESSAGE(rc == 0, "cannot start " << args[0]);
  }
  ~Background() { (void)stop(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  // SIGTERM, at most 10 s, then SIGKILL. The exit status (or -signal).
  int stop() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = 0;
    return status_ = -SIGKILL;
  }

 private:
  pid_t pid_ = 0;
  int status_ = -1;
};

// curl -s URL: the body, or nullopt when it failed.
std::optional<std::string> http_get(const fs::path& scratch, const std::string& url) {
  pmc_test::Env env;
  env["PATH"] = "/usr/bin:/bin";
  const pmc_test::Result r = pmc_test::run(*program("curl"), {"-s", "--max-time", "5", url}, env, scratch);
  if (r.status != 0) return std::nullopt;
  return r.out;
}

// Polls until pred(body) holds (bounded: a hang guard, not a timing assertion).
std::optional<std::string> wait_for(const fs::path& scratch, const std::string& url,
                                    const std::function<bool(const std::string&)>& pred, int seconds = 60) {
  for (int i = 0; i < seconds * 5; ++i) {
    if (auto body = http_get(scratch, url); body && pred(*body)) return body;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return std::nullopt;
}

}  // namespace

BOOST_AUTO_TEST_CASE(textfile_for_node_exporter, *boost::unit_test::precondition(cpu_wide)) {
  pmc_test::TempDir tmp("pmc-test-export");
  const fs::path dir = tmp.path() / "textfile";
  fs::create_directories(dir);
  const fs::path file = dir / "pmc.prom";
  pmc_test::Env env;
  env["PATH"] = "/usr/bin:/bin";
  env["HOME"] = tmp.path().string();
  env["XDG_CONFIG_HOME"] = tmp.path().string();
  const pmc_test::Result r = pmc_test::run(kPmc,
                                           {"export", "--textfile", file.string(), "--interval", "0.2", "--timeout",
                                            "700", "-e", "task-clock,context-switches", "-M", "CPU_UTILIZATION"},
                                           env, tmp.path());
  BOOST_TEST(r.status == 0, r);
  const std::string text = pmc_test::slurp(file);
  // Counters end in _total, clock events are in seconds, every series says its event, CPU and
  // backend; the metric is a gauge.
  BOOST_TEST(contains(text, "# TYPE pmc_event_seconds_total counter"), text);
  BOOST_TEST(contains(text, "# TYPE pmc_events_total counter"), text);
  // One rule for the backend label: the backend pmc export runs with, on every series (the HAL's
  // own events too), as pmc_export_info says it.
  std::smatch info;
  BOOST_TEST_REQUIRE(std::regex_search(text, info, std::regex(R"re(pmc_export_info\{backend="([a-z0-9_]+)",)re")), text);
  const std::string backend = info[1];
  BOOST_TEST(std::regex_search(text, std::regex("pmc_event_seconds_total\\{event=\"task-clock\",backend=\"" + backend +
                                                "\",cpu=\"0\"\\} [0-9.e+-]+")),
             text);
  BOOST_TEST(std::regex_search(text, std::regex("pmc_events_total\\{event=\"context-switches\",backend=\"" + backend +
                                                "\",cpu=\"0\"\\} [0-9.e+-]+")),
             text);
  BOOST_TEST(std::regex_search(text, std::regex("pmc_metric_cpu_utilization\\{backend=\"" + backend + "\",cpu=\"0\"\\} ")),
             text);
  BOOST_TEST(!contains(text, "backend=\"hal\""), text);
  BOOST_TEST(contains(text, "# TYPE pmc_metric_cpu_utilization gauge"), text);
  // Written then renamed: no temporary file is left beside it.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    BOOST_TEST(e.path() == file, e.path());
    ++files;
  }
  BOOST_TEST(files == 1u);
  // --aggregate: one series per event, no cpu label.
  const pmc_test::Result a = pmc_test::run(
      kPmc, {"export", "--textfile", file.string(), "--interval", "0.2", "--timeout", "300", "-e", "task-clock", "--aggregate"},
      env, tmp.path());
  BOOST_TEST(a.status == 0, a);
  const std::string summed = pmc_test::slurp(file);
  BOOST_TEST(contains(summed, "pmc_event_seconds_total{event=\"task-clock\",backend=\"" + backend + "\"} "), summed);
  // Usage: one destination, exactly.
  const pmc_test::Result none = pmc_test::run(kPmc, {"export"}, env, tmp.path());
  BOOST_TEST(none.status == 2, none);
}

BOOST_AUTO_TEST_CASE(nothing_to_export_is_an_error, *boost::unit_test::precondition(cpu_wide)) {
  // A simulated PMU counts its workloads, not this machine: none of its events can be exported,
  // and the exporter says so and exits 1 instead of serving nothing but pmc_export_info.
  pmc_test::TempDir tmp("pmc-test-export");
  const fs::path file = tmp.path() / "pmc.prom";
  pmc_test::Env env{{"PATH", std::string("/usr/bin:/bin")}, {"HOME", tmp.path().string()},
                    {"XDG_CONFIG_HOME", tmp.path().string()}};
  const pmc_test::Result r = pmc_test::run(kPmc,
                                           {"export", "--cpuid-dump", "pentium-iii", "--textfile", file.string(), "--timeout",
                                            "300", "-e", "INST_RETIRED,CPU_CLK_UNHALTED"},
                                           env, tmp.path());
  BOOST_TEST(r.status == 1, r);
  BOOST_TEST(r.err.rfind("pmc: none of the requested events can be exported: INST_RETIRED: ", 0) == 0, r);
  BOOST_TEST(contains(r.err, "; CPU_CLK_UNHALTED: "), r);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r);
  BOOST_TEST(!fs::exists(file), r);
  // One of them exportable (task-clock, a HAL event): the other is named, and it runs.
  const pmc_test::Result some = pmc_test::run(kPmc,
                                              {"export", "--cpuid-dump", "pentium-iii", "--textfile", file.string(),
                                               "--interval", "0.2", "--timeout", "300", "-e", "INST_RETIRED,task-clock"},
                                              env, tmp.path());
  BOOST_TEST(some.status == 0, some);
  BOOST_TEST(contains(some.err, "pmc: not exporting INST_RETIRED: "), some);
  BOOST_TEST(contains(pmc_test::slurp(file), "pmc_event_seconds_total{event=\"task-clock\",backend=\"p6\""));
}

boost::test_tools::assertion_result has_promtool(boost::unit_test::test_unit_id id) {
  if (!cpu_wide(id)) return cpu_wide(id);
  boost::test_tools::assertion_result r(program("promtool").has_value());
  r.message() << "needs Prometheus' promtool (Debian's prometheus; scripts/install-prometheus.sh installs it)";
  return r;
}

BOOST_AUTO_TEST_CASE(textfile_names_pass_promtool, *boost::unit_test::precondition(has_promtool)) {
  // node_exporter's textfile collector takes what `promtool check metrics` accepts: every family
  // named pmc_..., counters ending in _total, base units (seconds), HELP on each.
  pmc_test::TempDir tmp("pmc-test-export");
  const fs::path file = tmp.path() / "pmc.prom";
  pmc_test::Env env{{"PATH", std::string("/usr/bin:/bin")}, {"HOME", tmp.path().string()},
                    {"XDG_CONFIG_HOME", tmp.path().string()}};
  const pmc_test::Result r = pmc_test::run(kPmc,
                                           {"export", "--textfile", file.string(), "--interval", "0.2", "--timeout", "700",
                                            "-e", "task-clock,context-switches,page-faults", "-M", "CPU_UTILIZATION"},
                                           env, tmp.path());
  BOOST_TEST_REQUIRE(r.status == 0, r);
  const std::string text = pmc_test::slurp(file);
  std::size_t families = 0;
  const std::regex type_line(R"(# TYPE ([^ ]+) ([a-z]+))");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) {
    const std::string name = (*it)[1], type = (*it)[2];
    ++families;
    BOOST_TEST(name.rfind("pmc_", 0) == 0, name);
    if (type == "counter") BOOST_TEST(name.substr(name.size() - 6) == "_total", name);
  }
  BOOST_TEST(families >= 5u, text);
  const pmc_test::Result check =
      pmc_test::run("/bin/sh", {"-c", "\"$0\" check metrics < \"$1\"", program("promtool")->string(), file.string()}, env,
                    tmp.path());
  BOOST_TEST(check.status == 0, check << "\n--- the file:\n" << text);
  BOOST_TEST(check.out + check.err == "", check);
}

BOOST_AUTO_TEST_CASE(served_over_http, *boost::unit_test::precondition(has_curl)) {
  pmc_test::TempDir tmp("pmc-test-export");
  const int port = free_port();
  Background exporter({kPmc.string(), "export", "--listen", "127.0.0.1:" + std::to_string(port), "--interval", "0.2",
                       "-e", "task-clock"},
                      tmp.path() / "pmc.log");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  auto body = wait_for(tmp.path(), url, [](const std::string& b) { return contains(b, "pmc_event_seconds_total"); }, 20);
  BOOST_REQUIRE_MESSAGE(body, "no /metrics from pmc export: " << pmc_test::slurp(tmp.path() / "pmc.log"));
  BOOST_TEST(contains(*body, "event=\"task-clock\""), *body);
  // prometheus-cpp's own families about its server (docs/fleet.md), with the machine's.
  for (const char* family : {"# TYPE exposer_transferred_bytes_total counter", "# TYPE exposer_scrapes_total counter",
                             "# TYPE exposer_request_latencies summary"})
    BOOST_TEST(contains(*body, family), family << " not in\n" << *body);
  // The port is taken now: a second exporter says so in one line and exits 1.
  const pmc_test::Result busy =
      pmc_test::run(kPmc, {"export", "--listen", "127.0.0.1:" + std::to_string(port), "-e", "task-clock"},
                    pmc_test::Env{{"PATH", std::string("/usr/bin:/bin")}}, tmp.path());
  BOOST_TEST(busy.status == 1, busy);
  BOOST_TEST(contains(busy.err, "cannot listen on 127.0.0.1:" + std::to_string(port)), busy);
  BOOST_TEST(exporter.stop() == 0, pmc_test::slurp(tmp.path() / "pmc.log"));  // SIGTERM: a clean exit
}

BOOST_AUTO_TEST_CASE(a_real_prometheus_scrapes_pmc_export, *boost::unit_test::precondition(prometheus_and_curl)) {
  pmc_test::TempDir tmp("pmc-test-prometheus");
  const int pmc_port = free_port();
  const int prom_port = free_port();
  Background exporter({kPmc.string(), "export", "--listen", "127.0.0.1:" + std::to_string(pmc_port), "--interval",
                       "0.5", "-e", "task-clock,context-switches"},
                      tmp.path() / "pmc.log");
  pmc_test::spit(tmp.path() / "prometheus.yml",
                 "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: pmc\n"
                 "    static_configs:\n      - targets: ['127.0.0.1:" +
                     std::to_string(pmc_port) + "']\n");
  Background prometheus({program("prometheus")->string(), "--config.file=" + (tmp.path() / "prometheus.yml").string(),
                         "--storage.tsdb.path=" + (tmp.path() / "data").string(),
                         "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                        tmp.path() / "prometheus.log");
  const std::string api = "http://127.0.0.1:" + std::to_string(prom_port) + "/api/v1/query?query=";
  auto logs = [&] {
    return "pmc: " + pmc_test::slurp(tmp.path() / "pmc.log") + "\nprometheus: " +
           pmc_test::slurp(tmp.path() / "prometheus.log");
  };
  // Two successful scrapes of pmc export: two samples of `up` equal to 1.
  auto two = wait_for(tmp.path(), api + "sum_over_time(up%7Bjob%3D%22pmc%22%7D%5B1m%5D)", [](const std::string& b) {
    const json j = json::parse(b, nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success" || j["data"]["result"].empty()) return false;
    return std::stod(j["data"]["result"][0]["value"][1].get<std::string>()) >= 2.0;
  });
  BOOST_REQUIRE_MESSAGE(two, "Prometheus did not scrape pmc export twice: " << logs());
  // rate() of task-clock per CPU: CPU seconds per second, so between 0 and 1 (a little more for
  // the jitter of the sampling), on every online CPU.
  auto rates = wait_for(tmp.path(), api + "rate(pmc_event_seconds_total%7Bevent%3D%22task-clock%22%7D%5B5s%5D)",
                        [](const std::string& b) {
                          const json j = json::parse(b, nullptr, false);
                          return !j.is_discarded() && j.value("status", "") == "success" &&
                                 !j["data"]["result"].empty();
                        });
  BOOST_REQUIRE_MESSAGE(rates, "no rate of task-clock: " << logs());
  const json j = json::parse(*rates);
  // The backend label is pmc export's backend on every series (docs/fleet.md), as pmc_export_info has it.
  const auto metrics = http_get(tmp.path(), "http://127.0.0.1:" + std::to_string(pmc_port) + "/metrics");
  BOOST_REQUIRE(metrics);
  std::smatch info;
  BOOST_REQUIRE_MESSAGE(std::regex_search(*metrics, info, std::regex(R"re(pmc_export_info\{backend="([a-z0-9_]+)",)re")),
                        *metrics);
  const std::string backend = info[1];
  for (const auto& series : j["data"]["result"]) {
    const double v = std::stod(series["value"][1].get<std::string>());
    BOOST_TEST(series["metric"].contains("cpu"), series.dump());
    BOOST_TEST(series["metric"]["backend"] == backend, series.dump());
    BOOST_TEST((v >= 0.0 && v <= 1.1), "rate " << v << " of " << series.dump());
  }
  BOOST_TEST(prometheus.stop() == 0, logs());
  BOOST_TEST(exporter.stop() == 0, logs());
}
