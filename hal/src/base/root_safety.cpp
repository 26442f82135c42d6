// What pmchal refuses to read when it runs as root (root_safety.hpp): the ownership and mode
// walk from a file up to /, and a scope's memory of directories found safe.
#include "root_safety.hpp"

#include <fmt/format.h>

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <type_traits>

#include <string>
#include <string_view>
#include <deque>
#include <utility>
#include <vector>

namespace pmc::detail {

namespace {

std::string mode_text(mode_t m) { return fmt::format("{:04o}", static_cast<unsigned>(m & 07777)); }

// What the current RootCheckScope of this thread remembers (nullptr: no scope). Flat vectors
// searched in order: a scope holds a few dozen paths, and a hash table's nodes and buckets were
// most of what the memory cost a freshly started process (each first touch of a heap page is a
// page fault there).
struct StatMemo {
  std::string path;
  bool follow = true;
  int rc = 0;
  int err = 0;
  struct stat st {};
};
struct RootChecks {
  bool root = ::geteuid() == 0;
  std::vector<std::string> safe_dirs;                         // found safe, with all above them
  std::vector<std::pair<std::string, std::string>> real;      // directory -> its real path
  std::vector<StatMemo> stats;                                // scoped_stat's answers
  // scoped_listing's: a deque, so that the listing it hands out stays where it is.
  std::deque<std::pair<std::string, std::optional<std::vector<std::string>>>> listings;
  RootChecks() {
    stats.reserve(24);  // what a Hal::open that keeps its probes asks
    real.reserve(8);
    safe_dirs.reserve(8);
  }
  bool safe(std::string_view dir) const {
    return std::find(safe_dirs.begin(), safe_dirs.end(), dir) != safe_dirs.end();
  }
  const std::string* real_of(std::string_view dir) const {
    for (const auto& [d, r] : real)
      if (d == dir) return &r;
    return nullptr;
  }
  const StatMemo* stat_of(std::string_view p, bool follow) const {
    for (const StatMemo& m : stats)
      if (m.follow == follow && m.path == p) return &m;
    return nullptr;
  }
};
// The memory of the process's current scope and the thread that owns it: one scope at a time,
// and a thread that opens a HAL while another thread's scope lasts works without the memory, as
// outside a scope (it is only a memory). Not thread_local: in a shared library the first access
// to one costs a process a lookup of __tls_get_addr through every library it has loaded, with a
// page fault at each, which was a sixth of a fresh process's Hal::open (docs/performance.md).
// g_memo is written and read only by the thread g_owner names.
std::atomic<std::uintptr_t> g_owner{0};
RootChecks* g_memo = nullptr;

std::uintptr_t this_thread_id() {
  const pthread_t self = ::pthread_self();
  if constexpr (std::is_pointer_v<pthread_t>) return reinterpret_cast<std::uintptr_t>(self);
  else return static_cast<std::uintptr_t>(self);
}

// This thread's scope's memory; nullptr outside a scope (or inside one that owns none).
RootChecks* memo() { return g_owner.load(std::memory_order_acquire) == this_thread_id() ? g_memo : nullptr; }

// The paths here are strings: std::filesystem::path splits itself into components at every
// construction, which was most of what opening a HAL spent on these checks.

// An absolute path with no empty, "." or ".." component and no trailing '/' (not "/" itself):
// its parent and its last name are what the text before and after its last '/' say.
bool plain_absolute(std::string_view p) {
  if (p.size() < 2 || p.front() != '/' || p.back() == '/') return false;
  for (std::size_t at = 1; at <= p.size();) {
    const std::size_t end = std::min(p.find('/', at), p.size());
    const std::string_view part = p.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

// The text before the last '/': "/a/b" -> "/a", "/a" -> "/", "a" -> "".
std::string parent_of(const std::string& p) {
  const std::size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? std::string("/") : p.substr(0, slash);
}

// The real path of a directory within a scope: its parent's real path and its own name when it is
// not a symbolic link (one lstat; the parent's answer is shared by its other children), else
// what std::filesystem::canonical says. Empty when it cannot be resolved.
std::string real_dir(const std::string& dir) {
  RootChecks* const checks = memo();  // (called within a scope)
  if (const std::string* known = checks->real_of(dir)) return *known;
  std::string out;
  struct stat st {};
  if (plain_absolute(dir) && scoped_stat(dir, st, false) == 0 && S_ISDIR(st.st_mode)) {
    const std::string parent = parent_of(dir);
    const std::string real_parent = parent == "/" ? parent : real_dir(parent);
    if (!real_parent.empty())
      out = (real_parent == "/" ? std::string() : real_parent) + dir.substr(dir.find_last_of('/'));
  } else {
    std::error_code ec;
    out = std::filesystem::canonical(dir, ec).native();
    if (ec) out.clear();
  }
  checks->real.emplace_back(dir, out);
  return out;
}

// The real path of `file` (symbolic links resolved), its directory's looked up once per scope.
std::string real_path(const std::filesystem::path& file) {
  std::error_code ec;
  struct stat st {};
  if (memo() && file.has_parent_path() && scoped_stat(file.native(), st, false) == 0 && !S_ISLNK(st.st_mode)) {
    const std::string dir = real_dir(file.parent_path().native());
    if (!dir.empty()) return (dir == "/" ? std::string() : dir) + "/" + file.filename().native();
  }
  std::filesystem::path p = std::filesystem::canonical(file, ec);
  if (ec) p = std::filesystem::absolute(file, ec);
  if (ec) p = file;
  return p.native();
}
}  // namespace

RootCheckScope::RootCheckScope() {
  const std::uintptr_t me = this_thread_id();
  std::uintptr_t none = 0;
  // Nested in this thread's scope, or beside another thread's: no memory of its own.
  if (!g_owner.compare_exchange_strong(none, me, std::memory_order_acq_rel)) return;
  try {
    g_memo = new RootChecks;
  } catch (...) {
    g_owner.store(0, std::memory_order_release);
    throw;
  }
  owner_ = true;
}

RootCheckScope::~RootCheckScope() {
  if (!owner_) return;
  delete g_memo;
  g_memo = nullptr;
  g_owner.store(0, std::memory_order_release);
}

std::optional<std::string> unsafe_for_root(const std::filesystem::path& file) {
  RootChecks* const checks = memo();
  if (checks ? !checks->root : ::geteuid() != 0) return std::nullopt;
  // The real path: a symbolic link leads to a file others may control in a directory that is
  // not above the name given.
  const std::string p = real_path(file);
  // The file itself, then every directory above it (a writable directory lets others replace
  // the file). As sudo and ssh do for the files they trust. Within a RootCheckScope a directory
  // found safe (with all above it) is not walked again.
  std::vector<std::string> checked;
  bool first = true;
  for (std::string at = p; !at.empty(); at = parent_of(at)) {
    if (!first && checks && checks->safe(at)) break;
    struct stat st {};
    if (scoped_stat(at, st) != 0) break;
    const char* what = S_ISDIR(st.st_mode) ? "directory" : "file";
    if (st.st_uid != 0)
      return fmt::format("refused while running as root: {} {} is owned by user {}, not root", what, at, st.st_uid);
    const bool sticky_root_dir = !first && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
      return fmt::format("refused while running as root: {} {} is writable by {} (mode {})", what, at,
                         (st.st_mode & S_IWOTH) ? "everyone" : "its group", mode_text(st.st_mode));
    if (!first) checked.push_back(at);
    first = false;
    if (at == "/") break;
  }
  if (checks)
    for (auto& d : checked)
      if (!checks->safe(d)) checks->safe_dirs.push_back(std::move(d));
  return std::nullopt;
}

int scoped_stat(const std::filesystem::path& p, struct stat& st, bool follow) { return scoped_stat(p.native(), st, follow); }

int scoped_stat(const std::string& p, struct stat& st, bool follow) {
  RootChecks* const checks = memo();
  if (!checks) return follow ? ::stat(p.c_str(), &st) : ::lstat(p.c_str(), &st);
  const StatMemo* m = checks->stat_of(p, follow);
  if (!m) {
    StatMemo made;
    // What lstat said of a path that is no symbolic link is what stat says of it.
    const StatMemo* l = follow ? checks->stat_of(p, false) : nullptr;
    if (l && l->rc == 0 && !S_ISLNK(l->st.st_mode)) {
      made = *l;
    } else {
      made.path = p;
      made.rc = follow ? ::stat(p.c_str(), &made.st) : ::lstat(p.c_str(), &made.st);
      made.err = made.rc == 0 ? 0 : errno;
    }
    made.follow = follow;
    checks->stats.push_back(std::move(made));
    m = &checks->stats.back();
  }
  if (m->rc != 0) {
    errno = m->err;
    return -1;
  }
  st = m->st;
  return 0;
}

std::optional<std::vector<std::string>>* scoped_listing(const std::string& dir) {
  RootChecks* const checks = memo();
  if (!checks) return nullptr;
  for (auto& [d, listing] : checks->listings)
    if (d == dir) return &listing;
  return &checks->listings.emplace_back(dir, std::nullopt).second;
}

std::optional<std::string> unsafe_directory_for_root(const std::filesystem::path& dir, bool create) {
  // Its absolute, normal text: as given when it is so already (the parse cache's directory is),
  // else as std::filesystem makes it.
  std::string full = dir.native();
  while (full.size() > 1 && full.back() == '/') full.pop_back();  // a trailing '/'
  if (full != "/" && !plain_absolute(full)) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(dir, ec).lexically_normal();
    if (ec) return fmt::format("refused while running as root: directory {} has no absolute path", dir.string());
    if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
    full = p.native();
  }
  // From / down, each component by its own name (lstat: a symbolic link is refused, never
  // followed), so that each directory is checked before anything is made or read in it.
  const uid_t euid = ::geteuid();
  for (std::size_t end = 1;; end = full.find('/', end + 1)) {
    const std::string at = full.substr(0, end == 1 ? 1 : end);  // "/", "/a", "/a/b", ...
    struct stat st {};
    // (Remembered within a RootCheckScope when nothing is made: the parse cache's directory is
    // checked before each of the records Hal::open reads.)
    int rc = create ? ::lstat(at.c_str(), &st) : scoped_stat(at, st, false);
    if (rc != 0 && create && errno == ENOENT) {
      if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST)
        return fmt::format("refused while running as root: directory {} cannot be made", at);
      rc = ::lstat(at.c_str(), &st);
    }
    if (rc != 0) return fmt::format("refused while running as root: directory {} does not exist", at);
    if (S_ISLNK(st.st_mode)) return fmt::format("refused while running as root: {} is a symbolic link", at);
    if (!S_ISDIR(st.st_mode)) return fmt::format("refused while running as root: {} is not a directory", at);
    if (st.st_uid != 0 && st.st_uid != euid)
      return fmt::format("refused while running as root: directory {} is owned by user {}, not root", at, st.st_uid);
    const bool last = end == std::string::npos || (end == 1 && full == "/");
    const bool sticky_root_dir = !last && (st.st_mode & S_ISVTX) && st.st_uid == 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
      return fmt::format("refused while running as root: directory {} is writable by {} (mode {})", at,
                         (st.st_mode & S_IWOTH) ? "everyone" : "its group", mode_text(st.st_mode));
    if (last) break;
  }
  return std::nullopt;
}

}  // namespace pmc::detail
