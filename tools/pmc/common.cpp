// pmc: output and formatting the subcommands share.
#include "cli.hpp"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

namespace pmc_cli {

namespace {
// The first failed write of each output stream of the command (stdout, the file of -o), with its
// errno, said once when the command ends (finish_output). Failures on stderr have nowhere to go.
struct WriteFailure {
  std::FILE* stream;  // nullptr once the stream is closed (its address may be reused)
  std::string name;
  int error;
};
std::mutex g_outputs_lock;
std::vector<WriteFailure> g_failures;
std::vector<std::pair<std::FILE*, std::string>> g_report_files;  // open, with their names

void note_failure(std::FILE* out, std::string name, int error) noexcept {
  if (out == stderr) return;
  try {
    const std::lock_guard lock(g_outputs_lock);
    for (const auto& [stream, file] : g_report_files)
      if (name.empty() && stream == out) name = file;
    if (name.empty()) name = out == stdout ? "standard output" : "an output file";
    for (const WriteFailure& f : g_failures)
      if ((out && f.stream == out) || f.name == name) return;  // the first failure of a stream says it
    g_failures.push_back({out, std::move(name), error != 0 ? error : EIO});
  } catch (...) {  // out of memory: the exit status cannot say it either
  }
}
}  // namespace

bool write(std::FILE* out, std::string_view text) noexcept {
  if (!out) return false;
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  int error = errno;  // fwrite's, before fflush can change it
  const bool flushed = std::fflush(out) == 0;
  if (flushed && ok) return true;
  if (error == 0) error = errno;
  note_failure(out, {}, error);
  return false;
}

int finish_output(int status) noexcept {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) note_failure(stdout, {}, errno);
  const std::lock_guard lock(g_outputs_lock);
  for (const WriteFailure& f : g_failures) {
    // A reader that went away (`pmc list | head -1`) had what it wanted: not an error.
    if (f.stream == stdout && f.error == EPIPE) continue;
    error_line(fmt::format("writing {}: {}", f.name, std::strerror(f.error)));
    if (status == 0) status = 1;
  }
  g_failures.clear();
  return status;
}

void error_line(std::string_view message) noexcept {
  try {
    write(stderr, fmt::format("pmc: {}\n", message));
  } catch (...) {  // nothing more can be said
  }
}

const pmc::Hal& open_hal(const Options& o) {
  static const pmc::Hal* hal = nullptr;  // reachable to the end (a leak checker sees no leak)
  if (!hal) hal = new pmc::Hal(pmc::Hal::open(make_config(o)));
  return *hal;
}

pmc::Config make_config(const Options& o) {
  pmc::Config cfg = pmc::find_config(o.config);
  if (!o.backend.empty()) {
    cfg.backend = o.backend;
    cfg.origin["backend"].where = "command line (--backend)";
  }
  if (!o.cpuid_dump.empty()) {
    cfg.cpu = pmc::resolve_data(o.cpuid_dump, pmc::DataKind::cpuid_dump).string();
    cfg.origin["cpu"].where = "command line (--cpuid-dump)";
  }
  if (!o.access.empty()) {
    cfg.access = o.access;
    cfg.origin["access"].where = "command line (--access)";
  }
  return cfg;
}

std::vector<std::string> split_events(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& g : given) {
    std::size_t pos = 0;
    while (pos <= g.size()) {
      std::size_t comma = g.find(',', pos);
      std::string part = g.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (part.empty()) throw pmc::Error(pmc::errc::parse, fmt::format("event list '{}' has an empty entry", g));
      out.push_back(part);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

std::string group_digits(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string hex(std::uint64_t v) { return fmt::format("0x{:X}", v); }

const char* kind_name(pmc::CounterKind k) { return k == pmc::CounterKind::fixed ? "fixed" : "general"; }

std::string msec(std::uint64_t ns) {
  std::string whole = group_digits(ns / 1000000);
  return fmt::format("{}.{:02}", whole, (ns % 1000000) / 10000);
}

std::string per_second(double rate) {
  if (rate >= 1e9) return fmt::format("{:.3f} G/sec", rate / 1e9);
  if (rate >= 1e6) return fmt::format("{:.3f} M/sec", rate / 1e6);
  if (rate >= 1e3) return fmt::format("{:.3f} K/sec", rate / 1e3);
  return fmt::format("{:.3f} /sec", rate);
}

std::string quote_command(const std::vector<std::string>& cmd) {
  std::string out;
  for (const auto& c : cmd) out += (out.empty() ? "" : " ") + c;
  return out;
}

json counters_json(const std::vector<pmc::Reading>& readings) {
  json counters = json::array();
  for (const auto& r : readings) {
    json c{{"event", r.event},
           {"canonical", r.canonical},
           {"name", r.name},
           {"generic", r.generic.empty() ? json(nullptr) : json(r.generic)},
           {"value", r.value},
           {"unit", r.unit},
           {"counter", r.counter},
           {"granularity", r.granularity},
           {"time_enabled", r.time_enabled},
           {"time_running", r.time_running},
           {"extrapolated", r.extrapolated}};
    if (r.cpu >= 0) c["cpu"] = r.cpu;
    counters.push_back(std::move(c));
  }
  return counters;
}

Report::Report(const std::string& path, std::FILE* fallback, bool append) : out_(fallback) {
  if (path.empty()) return;
  out_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!out_) throw pmc::Error(pmc::errc::io, fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  owned_ = true;
  path_ = path;
  const std::lock_guard lock(g_outputs_lock);
  g_report_files.emplace_back(out_, path_);
}

Report::~Report() {
  if (!owned_) return;
  // What is still buffered is written here: a failure (a full disk) is the command's error.
  errno = 0;
  if (std::fflush(out_) != 0 || std::ferror(out_)) note_failure(out_, path_, errno);
  errno = 0;
  if (std::fclose(out_) != 0) note_failure(nullptr, path_, errno);
  const std::lock_guard lock(g_outputs_lock);
  std::erase_if(g_report_files, [&](const auto& f) { return f.first == out_; });
  for (WriteFailure& f : g_failures)
    if (f.stream == out_) f.stream = nullptr;
}

}  // namespace pmc_cli
