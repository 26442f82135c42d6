// Input files (read_input_file in <pmc/input_file.hpp>): the one place the library opens a file it
// reads by path. A file is opened with O_NONBLOCK (a named pipe cannot hang the open), checked
// with fstat to be a regular file, and read up to its kind's limit. Internal.
#pragma once

#include <pmc/input_file.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace pmc::detail {

// "workload", "CPUID dump", ... (for "cannot read the workload"), and the same with its article
// ("a workload", "an events file").
std::string_view input_name(InputKind kind);
std::string_view input_name_with_article(InputKind kind);

// An input file, open for reading at its start once the constructor returns: a regular file (or
// an Error naming the file and what it is instead). Its size is checked when it is read whole.
class InputFile {
 public:
  InputFile(const std::filesystem::path& file, InputKind kind);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // What is left of the file, up to the kind's limit (an Error past it, also for a file that
  // grows while it is read).
  std::string read_all();
  // Its first n bytes (fewer when it is shorter), without moving the read position.
  std::string peek(std::size_t n) const;
  // The file as a stdio stream, for a reader that streams it (the compact workload form): the
  // caller owns it and closes it with fclose; this object no longer does.
  std::FILE* release_stream();

 private:
  [[noreturn]] void over_limit(std::uint64_t size) const;
  std::filesystem::path file_;
  InputKind kind_;
  int fd_ = -1;
};

}  // namespace pmc::detail
