// Running a program under Valgrind's cachegrind (docs/emulation.md, "How it works", step 2): with
// the chosen CPU's caches, branch simulation and no option file, its messages kept in a log apart
// from the program's output, and its output file read by parse_cachegrind() (cachegrind.cpp).
#include "cache_geometry.hpp"
#include "cachegrind.hpp"

#include <pmc/error.hpp>
#include <pmc/input_file.hpp>
#include <pmc/process.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <system_error>

namespace pmc {

namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pmc-emulate-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error(errc::io, fmt::format("cannot create a temporary directory {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string valgrind_cache(const CacheGeometry& g) { return fmt::format("{},{},{}", g.size, g.ways, g.line); }

// The lines of Valgrind's log (empty when it cannot be read: the log only explains a failure).
std::vector<std::string> log_lines(const std::filesystem::path& log) {
  std::string text;
  try {
    text = read_input_file(log, InputKind::tool_log);
  } catch (const Error&) {
    return {};
  }
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// The lines of Valgrind's log that say what went wrong (its own, not the summary).
std::string log_excerpt(const std::filesystem::path& log) {
  std::string last;
  for (const std::string& line : log_lines(log)) {
    std::string_view v = line;
    const std::string_view mark = v.substr(0, 2);
    if (mark == "==" || mark == "--") {  // "==123== text", "--123-- text"
      const std::size_t close = v.find(mark, 2);
      v = close == std::string_view::npos ? std::string_view() : detail::trim_blanks(v.substr(close + 2));
    }
    if (!v.empty()) last = std::string(v);
  }
  return last;
}

std::string valgrind_version(const std::filesystem::path& log) {
  for (const std::string& line : log_lines(log)) {
    const auto at = line.find("Using Valgrind-");
    if (at == std::string::npos) continue;
    std::string v = line.substr(at + 6);
    v = v.substr(0, v.find(' '));
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  }
  return {};
}

}  // namespace

EmulatedRun run_under_valgrind(const std::vector<std::string>& argv, const CacheHierarchy& caches,
                               const ValgrindOptions& options) {
  if (argv.empty()) throw Error(errc::invalid_argument, "no program to run under Valgrind");
  (void)find_executable(argv.front());  // the program's own error, before Valgrind's
  std::filesystem::path valgrind;
  try {
    valgrind = find_executable(options.valgrind);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("emulated counting runs the program under Valgrind's cachegrind, and {} "
                                      "(install Debian's valgrind package)",
                                      e.what()));
  }
  std::vector<std::string> notes;
  // Fitted again: a hierarchy made by hand must fit Valgrind too (a fitted one is unchanged).
  const CacheGeometry l1i = detail::fit_for_valgrind(caches.l1i, "L1 instruction cache", notes);
  const CacheGeometry l1d = detail::fit_for_valgrind(caches.l1d, "L1 data cache", notes);
  const CacheGeometry ll = detail::fit_for_valgrind(caches.ll, "last-level cache", notes);
  TempDir dir;
  const std::filesystem::path out = dir.path() / "cachegrind.out";
  const std::filesystem::path log = dir.path() / "valgrind.log";
  EmulatedRun run;
  run.caches = caches;
  run.caches.l1i = l1i;
  run.caches.l1d = l1d;
  run.caches.ll = ll;
  run.caches.notes.insert(run.caches.notes.end(), notes.begin(), notes.end());
  run.command = {valgrind.string(),
                 "--tool=cachegrind",
                 "--command-line-only=yes",  // no ~/.valgrindrc, ./.valgrindrc or $VALGRIND_OPTS
                 "--cache-sim=yes",
                 "--branch-sim=yes",
                 "--I1=" + valgrind_cache(l1i),
                 "--D1=" + valgrind_cache(l1d),
                 "--LL=" + valgrind_cache(ll),
                 "--cachegrind-out-file=" + out.string(),
                 "--log-file=" + log.string(),
                 "--"};
  run.command.insert(run.command.end(), argv.begin(), argv.end());
  run.child = run_child(run.command);
  run.valgrind = valgrind_version(log);
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) {
    const std::string said = log_excerpt(log);
    throw Error(errc::io, fmt::format("Valgrind wrote no cachegrind output for '{}' (it exited with status {}){}",
                                      argv.front(), run.child.exit_status,
                                      said.empty() ? std::string() : ": " + said));
  }
  run.activity = load_cachegrind(out);
  if (!options.keep.empty()) {
    std::filesystem::copy_file(out, options.keep, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec)
      throw Error(errc::io, fmt::format("{}: cannot write cachegrind's output there: {}", options.keep.string(),
                                        ec.message()));
  }
  return run;
}

}  // namespace pmc
