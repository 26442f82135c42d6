// pmc: a file written whole or not at all (profile --folded and --flamegraph, export --textfile).
#pragma once

#include <string>
#include <string_view>

namespace pmc_cli {

// A temporary file beside the target, created at once (so that an unwritable place fails before
// the work is done) under a name nobody can guess, exclusively (O_CREAT | O_EXCL | O_NOFOLLOW: a
// file or a symbolic link planted in the directory, as root in a world-writable one, is never
// written through), and renamed over the target by commit(). `what` names the option in messages
// ("--folded FILE: cannot write there: Permission denied"). The temporary file is removed when
// the object goes without a commit.
class AtomicFile {
 public:
  AtomicFile(std::string path, std::string what);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Writes text, then renames the file into place; throws pmc::Error(io) naming the file.
  void commit(std::string_view text);

 private:
  [[noreturn]] void fail(std::string_view doing, int error);
  std::string path_, what_, temp_;
  int fd_ = -1;
};

}  // namespace pmc_cli
