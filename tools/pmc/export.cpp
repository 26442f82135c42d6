// pmc export: counts and metrics of every CPU (or their sums) for a fleet's Prometheus, in the
// Prometheus text exposition format (prometheus-cpp): served over HTTP (--listen, the library's
// civetweb server) or written for node_exporter's textfile collector (--textfile, atomically).
// Names follow Prometheus's rules: counters end in _total, times are seconds; every series has the
// label backend (the one pmc export runs with, "none" without one), per-CPU series cpu, events
// event (docs/fleet.md).
#include "stat.hpp"

#include "atomic_file.hpp"
#include "exposition.hpp"

#include <pmc/hal.hpp>

#include <dlfcn.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>

namespace pmc_cli {

namespace {

volatile std::sig_atomic_t g_export_stop = 0;
extern "C" void on_export_signal(int) { g_export_stop = 1; }

// "IPC" -> "ipc", "L2_MISS_RATE" -> "l2_miss_rate": a metric name Prometheus accepts.
std::string prometheus_name(std::string_view name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  return out;
}

std::vector<ExpoFamily> families(const pmc::Hal& hal, const std::vector<Row>& rows, const std::vector<MetricRow>& metrics) {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  const std::string backend = hal.backend() ? hal.backend()->name : "none";
  ExpoFamily counts{"pmc_events_total", "Events counted since pmc export started (scaled when multiplexed)", true, {}};
  ExpoFamily seconds{"pmc_event_seconds_total",
                     "Clock events (task-clock, cpu-clock) counted since pmc export started, in seconds", true, {}};
  ExpoFamily enabled{"pmc_event_enabled_seconds_total", "Time each event was enabled, in seconds", true, {}};
  ExpoFamily running{"pmc_event_running_seconds_total",
                     "Time each event was on a counter, in seconds (below enabled: multiplexed)", true, {}};
  for (const Row& r : rows) {
    if (!r.reading) continue;
    Labels labels{{"event", r.event}, {"backend", backend}};  // one rule: pmc export's backend (docs/fleet.md)
    if (r.cpu >= 0) labels.emplace_back("cpu", std::to_string(r.cpu));
    const double v = static_cast<double>(r.reading->value);
    if (r.reading->unit == "ns")
      seconds.samples.push_back({labels, v / 1e9});
    else
      counts.samples.push_back({labels, v});
    enabled.samples.push_back({labels, static_cast<double>(r.reading->time_enabled) / 1e9});
    running.samples.push_back({labels, static_cast<double>(r.reading->time_running) / 1e9});
  }
  std::vector<ExpoFamily> out;
  for (auto* f : {&counts, &seconds, &enabled, &running})
    if (!f->samples.empty()) out.push_back(std::move(*f));
  std::vector<ExpoFamily> derived;
  for (const MetricRow& m : metrics) {
    if (!m.value.value) continue;
    const std::string name = "pmc_metric_" + prometheus_name(m.def->name);
    auto it = std::find_if(derived.begin(), derived.end(), [&](const auto& f) { return f.name == name; });
    if (it == derived.end()) {
      derived.push_back({name, fmt::format("{} ({}), over the last interval", m.def->description, m.def->unit), false, {}});
      it = derived.end() - 1;
    }
    Labels labels{{"backend", backend}};
    if (m.cpu >= 0) labels.emplace_back("cpu", std::to_string(m.cpu));
    it->samples.push_back({labels, *m.value.value});
  }
  out.insert(out.end(), derived.begin(), derived.end());
  out.push_back({"pmc_export_info", "The pmc export process: its backend and access method", false,
                 {{{{"backend", backend}, {"access", hal.backend() ? hal.access() : "none"}, {"version", PMC_VERSION}}, 1}}});
  return out;
}

// civetweb's listening_ports: "ADDR:PORT", "[v6]:PORT" or "PORT" (every address; ":PORT" too).
std::string civetweb_address(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size() ||
      listen.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    throw pmc::Error(pmc::errc::invalid_argument,
                     fmt::format("--listen '{}' is not ADDR:PORT (127.0.0.1:9464, [::1]:9464 or :9464)", listen));
  return colon == 0 ? listen.substr(1) : listen;
}

}  // namespace

Exposition::Exposition() {
  // Beside the plugin directory, in the tree pmc and libpmchal come from (trusted as they are).
  const std::string file = (pmc::default_paths().plugins.parent_path() / "libpmc-prometheus.so").string();
  dlerror();
  void* lib = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw pmc::Error(pmc::errc::plugin, fmt::format("pmc export needs its Prometheus module: {}",
                                                    why ? std::string(why) : file + ": cannot be loaded"));
  }
  text_ = reinterpret_cast<ExpoTextFn>(::dlsym(lib, kExpoTextSymbol));
  serve_ = reinterpret_cast<ExpoServeFn>(::dlsym(lib, kExpoServeSymbol));
  if (!text_ || !serve_)
    throw pmc::Error(pmc::errc::plugin,
                     fmt::format("{}: not pmc's Prometheus module (no {} or {})", file, kExpoTextSymbol, kExpoServeSymbol));
}

std::string Exposition::text(const std::vector<ExpoFamily>& f) const {
  std::string out, error;
  if (!text_(f, &out, &error)) throw pmc::Error(pmc::errc::io, fmt::format("Prometheus text exposition: {}", error));
  return out;
}

std::unique_ptr<ExpoServer> Exposition::serve(const std::string& address) const {
  std::string error;
  std::unique_ptr<ExpoServer> server(serve_(address, &error));
  if (!server) throw pmc::Error(pmc::errc::io, error);
  return server;
}

int cmd_export(const Options& o) {
  if (o.listen.empty() == o.textfile.empty()) {
    error_line("export needs one of --listen ADDR:PORT and --textfile FILE (see 'pmc export --help')");
    return 2;
  }
  const Exposition exposition;  // first: a missing module stops it before anything is counted
  const pmc::Hal& hal = open_hal(o);
  std::vector<pmc::Scope> scopes;
  for (int c : o.cpu_list.empty() ? pmc::online_cpus() : pmc::parse_cpu_list(o.cpu_list))
    scopes.push_back(pmc::Scope::on_cpu(c));
  // perf stat's defaults for a task (task-clock: a CPU's busy time, which docs/fleet.md's
  // queries rate), without tsc: a fleet's Prometheus has its own clock.
  const Plan plan = make_plan(hal, o, [&] {
    std::vector<std::string> events = pmc::default_events(hal, pmc::DefaultEvents::task);
    std::erase(events, "tsc");
    return events;
  });
  Counters counters(hal, plan, scopes, !o.aggregate);
  const std::vector<Row> first = counters.read();
  if (std::none_of(first.begin(), first.end(), [](const Row& r) { return r.reading.has_value(); })) {
    // Nothing to export: an exporter serving only pmc_export_info would look healthy to a fleet.
    std::vector<std::string> named;  // "EVENT: why", once per event (the rows are per CPU)
    std::string why;
    for (const Row& r : first) {
      if (std::find(named.begin(), named.end(), r.event) != named.end()) continue;
      named.push_back(r.event);
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", r.event, r.reason);
    }
    throw pmc::Error(pmc::errc::not_supported, fmt::format("none of the requested events can be exported: {}", why));
  }
  for (const Row& r : first)
    if (!r.reading) print_to(stderr, "pmc: not exporting {}: {}\n", r.event, r.reason);
  std::unique_ptr<ExpoServer> server;
  if (!o.listen.empty()) {
    const std::string address = civetweb_address(o.listen);
    try {
      server = exposition.serve(address);
    } catch (const pmc::Error& e) {
      throw pmc::Error(pmc::errc::io, fmt::format("cannot listen on {}: {}", o.listen, e.what()));
    }
  }
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_export_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  g_export_stop = 0;
  const auto interval = std::chrono::nanoseconds(static_cast<std::int64_t>(o.export_interval * 1e9));
  const auto started = std::chrono::steady_clock::now();
  counters.start();
  std::vector<Row> previous = counters.read();
  if (server) server->publish(families(hal, previous, {}));  // a scrape before the first interval sees the events
  auto last = std::chrono::steady_clock::now();
  int status = 0;
  try {
    while (!g_export_stop) {
      auto next = last + interval;
      if (o.timeout_ms) next = std::min(next, started + std::chrono::milliseconds(o.timeout_ms));
      while (!g_export_stop && std::chrono::steady_clock::now() < next) {
        const timespec pause{0, 10'000'000};
        nanosleep(&pause, nullptr);
        counters.poll();
      }
      const auto now = std::chrono::steady_clock::now();
      const std::vector<Row> rows = counters.read();
      const double span = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count());
      const std::vector<MetricRow> metrics = evaluate(plan, difference(rows, previous), span);
      std::vector<ExpoFamily> f = families(hal, rows, metrics);
      if (!o.textfile.empty()) AtomicFile(o.textfile, "--textfile").commit(exposition.text(f));  // never half a file
      if (server) server->publish(std::move(f));
      previous = rows;
      last = now;
      if (o.timeout_ms && now - started >= std::chrono::milliseconds(o.timeout_ms)) break;
    }
  } catch (...) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    throw;
  }
  counters.stop();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return status;
}

}  // namespace pmc_cli
