// Input files (input_file.hpp): every file the library reads by path is opened here, refused
// unless it is a regular file, and read up to the limit of its kind.
#include "input_file.hpp"

#include <pmc/error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pmc {

namespace {

constexpr std::uint64_t kMB = 1000 * 1000;

struct KindInfo {
  std::string_view name;
  std::string_view with_article;
  std::uint64_t limit;
};

// The limits are generous for real data: the largest bundled events file is 0.7 MB, the largest
// metric file 0.3 MB, a CPUID dump 8 KB, and a TOML workload of a million segments 70 to 100 MB
// (docs/user-guide.md, "Input files").
KindInfo info(InputKind kind) {
  switch (kind) {
    case InputKind::config: return {"config file", "a config file", 16 * kMB};
    case InputKind::cpuid_dump: return {"CPUID dump", "a CPUID dump", 16 * kMB};
    case InputKind::cpu_description: return {"CPU description", "a CPU description", 16 * kMB};
    case InputKind::events: return {"events file", "an events file", 64 * kMB};
    case InputKind::metrics: return {"metric file", "a metric file", 64 * kMB};
    case InputKind::workload: return {"workload", "a workload", 256 * kMB};
    case InputKind::emulation_rules: return {"emulation rules", "emulation rules", 64 * kMB};
    case InputKind::region_report: return {"region report", "a region report", 64 * kMB};
    case InputKind::cachegrind_output: return {"Cachegrind output", "Cachegrind's output", 1000 * kMB};
    case InputKind::tool_log: return {"log", "a log", 64 * kMB};
    case InputKind::vendor_data: return {"vendor file", "a vendor file", 256 * kMB};
  }
  return {"file", "a file", 16 * kMB};
}

const char* file_type(mode_t mode) {
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "300 MB" (rounded up: a file one byte over a 256 MB limit is "257 MB").
std::string megabytes(std::uint64_t bytes) { return fmt::format("{} MB", (bytes + kMB - 1) / kMB); }

errc open_error_code(int err) { return err == EACCES || err == EPERM ? errc::permission : errc::io; }

}  // namespace

std::uint64_t input_limit(InputKind kind) { return info(kind).limit; }

std::string read_input_file(const std::filesystem::path& file, InputKind kind) {
  return detail::InputFile(file, kind).read_all();
}

namespace detail {

std::string_view input_name(InputKind kind) { return info(kind).name; }
std::string_view input_name_with_article(InputKind kind) { return info(kind).with_article; }

InputFile::InputFile(const std::filesystem::path& file, InputKind kind) : file_(file), kind_(kind) {
  const std::string name = file.string();
  auto refuse = [&](mode_t mode) {
    throw Error(errc::io, fmt::format("{}: not read as {}: it is {}, not a regular file", name,
                                      input_name_with_article(kind), file_type(mode)));
  };
  // A special file is refused before it is opened (opening a device may do something); the
  // descriptor is checked again below, in case the name changed hands in between.
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(open_error_code(err), fmt::format("{}: cannot read the {}: {}", name, input_name(kind), std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) refuse(st.st_mode);
  do fd_ = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    const int err = errno;
    throw Error(open_error_code(err), fmt::format("{}: cannot read the {}: {}", name, input_name(kind), std::strerror(err)));
  }
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error(errc::io, fmt::format("{}: cannot read the {}: {}", name, input_name(kind), std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    refuse(st.st_mode);
  }
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::over_limit(std::uint64_t size) const {
  throw Error(errc::invalid_argument, fmt::format("{}: {} is over the {} limit for {}", file_.string(), megabytes(size),
                                                  megabytes(input_limit(kind_)), input_name_with_article(kind_)));
}

std::string InputFile::read_all() {
  const std::uint64_t limit = input_limit(kind_);
  std::string text;
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    if (static_cast<std::uint64_t>(st.st_size) > limit) over_limit(static_cast<std::uint64_t>(st.st_size));
    text.reserve(static_cast<std::size_t>(st.st_size) + 1);
  }
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      throw Error(errc::io, fmt::format("{}: cannot read the {}: {}", file_.string(), input_name(kind_), std::strerror(err)));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > limit) over_limit(text.size() + static_cast<std::size_t>(n));
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

std::string InputFile::peek(std::size_t n) const {
  std::string head(n, '\0');
  ssize_t got = 0;
  do got = ::pread(fd_, head.data(), n, 0);
  while (got < 0 && errno == EINTR);
  if (got < 0) {
    const int err = errno;
    throw Error(errc::io, fmt::format("{}: cannot read the {}: {}", file_.string(), input_name(kind_), std::strerror(err)));
  }
  head.resize(static_cast<std::size_t>(got));
  return head;
}

std::FILE* InputFile::release_stream() {
  std::FILE* f = ::fdopen(fd_, "rb");
  if (!f) {
    const int err = errno;
    throw Error(errc::io, fmt::format("{}: cannot read the {}: {}", file_.string(), input_name(kind_), std::strerror(err)));
  }
  fd_ = -1;
  return f;
}

}  // namespace detail

}  // namespace pmc
