// Cache files handled where nobody else can interfere (catalog_cache_file.hpp): the directory
// trusted before anything in it is opened or made (as root by root_safety's rules for a
// directory root writes to), files opened without blocking and without following links, their
// sections checked against a CRC-32C, written to a temporary file nobody can predict and renamed
// into place. The cache is an optimisation: every refusal here means "parse the TOML", said on
// stderr only when PMC_DEBUG names "cache".
#include "environment.hpp"
#include "catalog_cache_file.hpp"
#include "cpu_native.hpp"
#include "root_safety.hpp"

#include <boost/crc.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

namespace pmc::detail {

namespace fs = std::filesystem;

namespace {

// A file or directory this user may trust: its own, written by nobody else.
bool trusted(const struct stat& st) { return st.st_uid == ::geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)); }

bool debugging() {
  static const bool on = debug_topic("cache");
  return on;
}

// A name in dir nobody can guess ahead: 16 random hex digits (the clock and the pid when the
// kernel has no randomness to give).
std::string unpredictable_suffix() {
  std::uint64_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r))
    r = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<std::uint64_t>(::getpid()) << 40) ^ reinterpret_cast<std::uintptr_t>(&r);
  return fmt::format(".{:016x}.tmp", r);
}

}  // namespace

void cache_debug(const std::string& line) {
  if (!debugging()) return;
  const std::string text = fmt::format("pmchal: cache: {}\n", line);
  if (::write(STDERR_FILENO, text.data(), text.size()) < 0) { /* stderr gone: nothing to tell */ }
}

namespace {

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_instruction(std::uint32_t crc, const void* data,
                                                                    std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = __builtin_ia32_crc32qi(c32, *p);
  return c32;
}
// CPUID.1:ECX[20] (SSE4.2), read at the first checksum. Not __builtin_cpu_supports: it links
// libgcc's CPU model code, whose constructor runs a dozen CPUID instructions when the library is
// loaded, each a trap to the hypervisor in a virtual machine (about 4 us each on the project's
// guests), in every program that links pmchal, whether it checksums anything or not.
bool has_crc32c_instruction() {
  static const bool has = [] {
    // This machine's reading when it was made (Hal::open makes it first), else one CPUID of its
    // own: every x86-64 CPU has leaf 1.
    if (native_cpu_read())
      if (const auto l1 = native_cpu().raw.get(1)) return (l1->ecx & bit_SSE4_2) != 0;
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(1, a, b, c, d);
    return (c & bit_SSE4_2) != 0;
  }();
  return has;
}
#else
std::uint32_t crc32c_instruction(std::uint32_t crc, const void*, std::size_t) { return crc; }
bool has_crc32c_instruction() { return false; }
#endif

}  // namespace

Checksum::Checksum() : hardware_(has_crc32c_instruction()) {}
Checksum::Checksum(bool hardware) : hardware_(hardware && has_crc32c_instruction()) {}

void Checksum::add(const void* data, std::size_t n) {
  if (hardware_) state_ = crc32c_instruction(state_, data, n);
  else table_.process_bytes(data, n);
}

std::uint32_t Checksum::value() const { return hardware_ ? ~state_ : table_.checksum(); }

std::uint32_t checksum(const void* data, std::size_t size) {
  Checksum sum;
  sum.add(data, size);
  return sum.value();
}

bool usable_cache_directory(const fs::path& dir, bool create) {
  // A directory found usable for reading is not checked again while the process runs (each
  // load of a catalog asks); making files in it is checked each time.
  // (Never destroyed: a destructor to run at exit is registered with the C library, a write to
  // its data, a copy-on-write fault in a freshly forked process.)
  static std::mutex mutex;
  static std::string& known_good = *new std::string;
  if (!create) {
    std::lock_guard lock(mutex);
    if (!known_good.empty() && known_good == dir.native()) return true;
  }
  if (::geteuid() == 0) {
    struct stat st{};
    // (scoped_stat: the walk below asks the same of the directory itself.)
    if (!create && scoped_stat(dir.native(), st, false) != 0 && errno == ENOENT) return false;  // no cache yet
    if (auto why = unsafe_directory_for_root(dir, create)) {
      cache_debug(fmt::format("{}: not used ({})", dir.string(), *why));
      return false;
    }
  } else {
    std::error_code ec;
    if (create && fs::create_directories(dir, ec))
      fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0) return false;  // no cache yet: nothing to say
    if (!S_ISDIR(st.st_mode) || !trusted(st)) {
      cache_debug(fmt::format("{}: not used (not a directory of user {} that only it may write)", dir.string(),
                              ::geteuid()));
      return false;
    }
  }
  std::lock_guard lock(mutex);
  known_good = dir.native();
  return true;
}

std::optional<FileCloser> open_for_reading(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) cache_debug(fmt::format("{}: not read ({})", file.string(), std::strerror(errno)));
    return std::nullopt;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(st)) {
    cache_debug(fmt::format("{}: not read (not a regular file of user {} that only it may write)", file.string(),
                            ::geteuid()));
    ::close(fd);
    return std::nullopt;
  }
  std::FILE* f = ::fdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    return std::nullopt;
  }
  FileCloser out(f);
  // A buffer that holds a record's header in one read (the header is what Hal::open reads of
  // each record; stdio's own would be 4 KiB, after an fstat of its own).
  const auto size = static_cast<std::size_t>(std::clamp<off_t>(st.st_size + 1, 4096, 16384));
  out.buffer = std::make_unique_for_overwrite<char[]>(size);  // not zeroed: stdio fills what it reads
  if (std::setvbuf(f, out.buffer.get(), _IOFBF, size) != 0) out.buffer.reset();
  return out;
}

std::optional<std::string> read_whole(const fs::path& file, struct stat& opened) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) cache_debug(fmt::format("{}: not read ({})", file.string(), std::strerror(errno)));
    return std::nullopt;
  }
  if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || !trusted(opened)) {
    cache_debug(fmt::format("{}: not read (not a regular file of user {} that only it may write)", file.string(),
                            ::geteuid()));
    ::close(fd);
    return std::nullopt;
  }
  std::string bytes(static_cast<std::size_t>(opened.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // an error, or shorter than it was: the header check fails
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

void discard(const fs::path& file, const struct stat& opened, const char* why) {
  cache_debug(fmt::format("{}: discarded ({}); it is written again at the next load", file.string(), why));
  struct stat named{};
  if (::lstat(file.c_str(), &named) != 0) return;
  if (opened.st_dev == named.st_dev && opened.st_ino == named.st_ino) ::unlink(file.c_str());
}

void discard(const fs::path& file, std::FILE* f, const char* why) {
  struct stat opened{};  // (all zero when unknown: then no file is its)
  if (f && ::fstat(fileno(f), &opened) != 0) opened = {};
  discard(file, opened, why);
}

bool write_atomically(const fs::path& target, const std::string& bytes) {
  // O_EXCL with O_NOFOLLOW: a name someone made first (a file, a link) fails the open, it is
  // never written through; a fresh random name is tried instead.
  fs::path tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
    tmp = target.native() + unpredictable_suffix();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    cache_debug(fmt::format("{}: not written ({})", target.string(), std::strerror(errno)));
    return false;
  }
  bool ok = true;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), target.c_str()) == 0) return true;
  cache_debug(fmt::format("{}: not written ({})", target.string(), std::strerror(errno)));
  ::unlink(tmp.c_str());
  return false;
}

}  // namespace pmc::detail
