// pmc export's Prometheus side, kept out of the pmc program: prometheus-cpp and its civetweb
// server are five shared libraries, and mapping them cost every pmc command, pmc stat included,
// 0.25 ms of start-up (docs/performance.md). They live in libpmc-prometheus.so
// (exposition_prometheus.cpp), beside the plugin directory, which pmc export alone loads.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pmc_cli {

// One metric family of the Prometheus data model, without prometheus-cpp's types.
struct ExpoSample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};
struct ExpoFamily {
  std::string name;
  std::string help;
  bool counter = false;  // a counter (else a gauge)
  std::vector<ExpoSample> samples;
};

// An HTTP server answering scrapes with the families last published.
class ExpoServer {
 public:
  virtual ~ExpoServer() = default;
  virtual void publish(std::vector<ExpoFamily> families) = 0;
};

// What the module exports (extern "C", so that the names are plain), each catching everything:
//  pmc_expo_text:  the families in the text exposition format into *out; false (and *error) on failure;
//  pmc_expo_serve: a server listening on `address` (civetweb's form: "ADDR:PORT", "[v6]:PORT",
//                  "PORT"), or nullptr and *error.
using ExpoTextFn = bool (*)(const std::vector<ExpoFamily>& families, std::string* out, std::string* error);
using ExpoServeFn = ExpoServer* (*)(const std::string& address, std::string* error);
inline constexpr const char* kExpoTextSymbol = "pmc_expo_text";
inline constexpr const char* kExpoServeSymbol = "pmc_expo_serve";

// The module, loaded on first use (the library handle is kept for the process's life). Throws
// pmc::Error naming the file when it is missing or broken.
class Exposition {
 public:
  Exposition();
  [[nodiscard]] std::string text(const std::vector<ExpoFamily>& families) const;
  [[nodiscard]] std::unique_ptr<ExpoServer> serve(const std::string& address) const;

 private:
  ExpoTextFn text_ = nullptr;
  ExpoServeFn serve_ = nullptr;
};

}  // namespace pmc_cli
