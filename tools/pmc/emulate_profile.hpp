// pmc profile --emulate as the sampled profile shows it (emulate_profile.cpp): the table by
// --sort's keys (dso, sym, srcline), --folded and --flamegraph, and --json's rows, with the
// emulated event's count in place of samples. Cachegrind counts by function and source line and
// records no call stacks: each stack is the object and the function ("libc.so.6;memcpy").
#pragma once

#include "atomic_file.hpp"
#include "cli.hpp"
#include "emulate.hpp"
#include "profile_report.hpp"

#include <pmc/emulate.hpp>

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pmc_cli {

// The object (the file's name, "libc.so.6") each function of a program is defined in, for the
// functions cachegrind names, whose output has no objects or addresses. The program's files are
// found as its dynamic loader would at start-up: the executable, the libraries its DT_NEEDED
// entries name (and theirs) in its DT_RUNPATH or DT_RPATH ($ORIGIN expanded), $LD_LIBRARY_PATH,
// /etc/ld.so.conf.d's directories and the system's, and its interpreter (PT_INTERP). A name is
// the first file's in that order that defines a function of that name (its ELF symbol tables,
// with separate debug files through libdwfl), as the loader's symbol lookup goes for global
// symbols; "[unknown]" when none does (a library loaded with dlopen, "???").
class FunctionObjects {
 public:
  explicit FunctionObjects(const std::string& executable);
  const std::string& object(const std::string& function);
  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }

 private:
  std::vector<std::string> files_;                        // paths, in lookup order
  std::map<std::string, std::string> objects_;            // function -> object, all files read
  std::map<std::string, std::string> asked_;              // the answers given
};

// Created before the run: --sort's keys parsed and the pictures' files created (so that a bad key
// or an unwritable place is refused before the command runs).
class EmulatedProfile {
 public:
  explicit EmulatedProfile(const Options& o);
  // The views of the emulated run: writes --folded and --flamegraph, adds "sort", "row_event" and
  // "rows" to doc (when not null) and prints the table to out (when not null and --sort was
  // given). Returns whether the table was printed.
  bool show(const pmc::ProgramActivity& activity, const pmc::EmulatedCounts& counts, json* doc, std::FILE* out);

 private:
  const Options& o_;
  std::vector<SortKey> keys_;
  std::unique_ptr<AtomicFile> folded_, flamegraph_;
};

}  // namespace pmc_cli
