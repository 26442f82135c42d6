// Linux perf's own `perf stat`, run beside `pmc stat` to compare rows, fields and keys: found on
// PATH, usable when it counts task-clock here. A test that compares with it has the
// precondition requires_perf() and is reported skipped, with the reason, where perf is missing.
#pragma once

#include "pmc_command.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace pmc_test {

inline fs::path perf_program() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::error_code ec;
    const fs::path p = fs::path(dir) / "perf";
    if (!dir.empty() && fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

// perf stat ARGS in the fixture's environment.
inline Result perf_stat(PmcCommand& f, std::vector<std::string> args) {
  args.insert(args.begin(), "stat");
  return run(perf_program(), args, f.env, f.tmp.path());
}

namespace detail {
inline boost::test_tools::assertion_result perf_usable(boost::unit_test::test_unit_id) {
  const fs::path perf = perf_program();
  if (perf.empty()) {
    boost::test_tools::assertion_result r(false);
    r.message() << "perf is not installed (no perf on PATH) to compare with";
    return r;
  }
  PmcCommand f;
  const Result r = perf_stat(f, {"-x,", "-e", "task-clock", "--", "true"});
  boost::test_tools::assertion_result ok(r.status == 0 && r.err.find("task-clock") != std::string::npos);
  ok.message() << "perf stat cannot count task-clock here: " << r.err;
  return ok;
}
}  // namespace detail

inline boost::unit_test::precondition requires_perf() { return boost::unit_test::precondition(&detail::perf_usable); }

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> f;
  std::size_t pos = 0, at;
  while ((at = line.find(sep, pos)) != std::string::npos) {
    f.push_back(line.substr(pos, at - pos));
    pos = at + 1;
  }
  f.push_back(line.substr(pos));
  return f;
}

// The lines of a CSV report that are rows (at least `min_fields` fields), split.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& text, std::size_t min_fields = 7) {
  std::vector<std::vector<std::string>> out;
  for (const auto& l : lines_of(text)) {
    auto f = split(l, ',');
    if (f.size() >= min_fields) out.push_back(f);
  }
  return out;
}

// Whitespace-separated words.
inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace pmc_test
