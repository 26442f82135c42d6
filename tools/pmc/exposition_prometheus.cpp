// libpmc-prometheus.so: pmc export's use of prometheus-cpp (exposition.hpp says why it is a
// library of its own): the families in the text exposition format, and the HTTP server.
#include "exposition.hpp"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <exception>
#include <mutex>
#include <sstream>
#include <type_traits>

namespace {

using pmc_cli::ExpoFamily;

std::vector<prometheus::MetricFamily> convert(const std::vector<ExpoFamily>& in) {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(in.size());
  for (const ExpoFamily& f : in) {
    prometheus::MetricFamily family{f.name, f.help,
                                    f.counter ? prometheus::MetricType::Counter : prometheus::MetricType::Gauge, {}};
    for (const auto& s : f.samples) {
      prometheus::ClientMetric m;
      for (const auto& [k, v] : s.labels) m.label.push_back({k, v});
      if (f.counter)
        m.counter.value = s.value;
      else
        m.gauge.value = s.value;
      family.metric.push_back(std::move(m));
    }
    out.push_back(std::move(family));
  }
  return out;
}

// What the HTTP server hands out: the families of the last reading (one mutex, swapped whole).
class Snapshot final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return families_;
  }
  void set(std::vector<prometheus::MetricFamily> f) {
    std::lock_guard<std::mutex> lock(mutex_);
    families_ = std::move(f);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<prometheus::MetricFamily> families_;
};

// The server's civetweb options (docs/user-guide.md, "Serving"): 16 worker threads, each
// connection one thread, so a few slow or idle clients leave threads for scrapes; a request
// whose headers have not all arrived within 5 s, or a response not taken in 5 s, ends its
// connection (civetweb's default is 30 s, with prometheus-cpp's default of 2 threads: two
// clients sending a byte a second stopped every scrape).
constexpr const char* kServerThreads = "16";
constexpr const char* kRequestTimeoutMs = "5000";

std::vector<std::string> server_options(const std::string& address) {
  return {"listening_ports", address, "num_threads", kServerThreads, "request_timeout_ms", kRequestTimeoutMs};
}

class Server final : public pmc_cli::ExpoServer {
 public:
  explicit Server(const std::string& address) : exposer_(server_options(address)) {
    exposer_.RegisterCollectable(snapshot_);
  }
  void publish(std::vector<ExpoFamily> families) override { snapshot_->set(convert(families)); }

 private:
  prometheus::Exposer exposer_;
  std::shared_ptr<Snapshot> snapshot_ = std::make_shared<Snapshot>();
};

}  // namespace

extern "C" __attribute__((visibility("default"))) bool pmc_expo_text(const std::vector<ExpoFamily>& families,
                                                                     std::string* out, std::string* error) {
  try {
    std::ostringstream text;
    prometheus::TextSerializer().Serialize(text, convert(families));
    *out = text.str();
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error";
  }
  return false;
}

extern "C" __attribute__((visibility("default"))) pmc_cli::ExpoServer* pmc_expo_serve(const std::string& address,
                                                                                     std::string* error) {
  try {
    return new Server(address);
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error";
  }
  return nullptr;
}

static_assert(std::is_same_v<decltype(&pmc_expo_text), pmc_cli::ExpoTextFn>);
static_assert(std::is_same_v<decltype(&pmc_expo_serve), pmc_cli::ExpoServeFn>);
