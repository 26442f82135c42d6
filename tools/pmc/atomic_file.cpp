// pmc: a file written whole or not at all (atomic_file.hpp).
#include "atomic_file.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace pmc_cli {

namespace {

// 16 random hex digits (the kernel's random source): a name no one can plant in advance.
std::string random_suffix() {
  std::uint64_t bits = 0;
  std::size_t got = 0;
  while (got < sizeof bits) {
    const ssize_t n = ::getrandom(reinterpret_cast<char*>(&bits) + got, sizeof bits - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return fmt::format("{:016x}", bits);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  namespace fs = std::filesystem;
  const fs::path target(path_);
  std::error_code ec;
  if (fs::is_directory(target, ec))
    throw pmc::Error(pmc::errc::invalid_argument, fmt::format("{} {}: is a directory", what_, path_));
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // O_EXCL: a name that exists (a file, or a symbolic link to anywhere) is not opened but
  // another name tried; the chance of meeting one by accident is nil.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string temp = (dir / ("." + target.filename().string() + "." + random_suffix() + ".tmp")).string();
    fd_ = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      temp_ = temp;
      return;
    }
    const int error = errno;
    if (error != EEXIST && error != EINTR) fail("cannot write there", error);
  }
  fail("cannot write there", EEXIST);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::fail(std::string_view doing, int error) {
  throw pmc::Error(error == EACCES || error == EPERM ? pmc::errc::permission : pmc::errc::io,
                   fmt::format("{} {}: {}: {}", what_, path_, doing, std::strerror(error)));
}

void AtomicFile::commit(std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing", n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  const int closed = ::close(fd_);
  const int close_error = errno;
  fd_ = -1;
  if (closed != 0) fail("writing", close_error);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(fmt::format("cannot rename {} to it", temp_), errno);
  temp_.clear();
}

}  // namespace pmc_cli
