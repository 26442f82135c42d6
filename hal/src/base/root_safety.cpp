// What pmchal refuses to read when it runs as root (root_safety.hpp): the ownership and mode
// walk from a file up to /, and the per-thread memory of directories found safe.
#include "root_safety.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace pmc::detail {

namespace {

std::string mode_text(mode_t m) { return fmt::format("{:04o}", static_cast<unsigned>(m & 07777)); }

// What the current RootCheckScope of this thread remembers (nullptr: no scope).
struct RootChecks {
  bool root = ::geteuid() == 0;
  std::unordered_set<std::string> safe_dirs;                    // found safe, with all above them
  std::unordered_map<std::string, std::filesystem::path> real;  // directory -> its real path
};
thread_local RootChecks* t_checks = nullptr;

// The real path of `file` (symbolic links resolved), its directory's looked up once per scope.
std::filesystem::path real_path(const std::filesystem::path& file) {
  std::error_code ec;
  struct stat st {};
  if (t_checks && file.has_parent_path() && ::lstat(file.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) {
    const std::string dir = file.parent_path().native();
    auto it = t_checks->real.find(dir);
    if (it == t_checks->real.end()) {
      std::filesystem::path real = std::filesystem::canonical(file.parent_path(), ec);
      if (!ec) it = t_checks->real.emplace(dir, std::move(real)).first;
    }
    if (it != t_checks->real.end()) return it->second / file.filename();
  }
  std::filesystem::path p = std::filesystem::canonical(file, ec);
  if (ec) p = std::filesystem::absolute(file, ec);
  if (ec) p = file;
  return p;
}
}  // namespace

RootCheckScope::RootCheckScope() {
  if (!t_checks) {
    t_checks = new RootChecks;
    owner_ = true;
  }
}

RootCheckScope::~RootCheckScope() {
  if (!owner_) return;
  delete t_checks;
  t_checks = nullptr;
}

std::optional<std::string> unsafe_for_root(const std::filesystem::path& file) {
  if (t_checks ? !t_checks->root : ::geteuid() != 0) return std::nullopt;
  // The real path: a symbolic link leads to a file others may control in a directory that is
  // not above the name given.
  const std::filesystem::path p = real_path(file);
  // The file itself, then every directory above it (a writable directory lets others replace
  // the file). As sudo and ssh do for the files they trust. Within a RootCheckScope a directory
  // found safe (with all above it) is not walked again.
  std::vector<std::string> checked;
  bool first = true;
  for (std::filesystem::path at = p;; at = at.parent_path()) {
    if (!first && t_checks && t_checks->safe_dirs.count(at.native())) break;
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0) break;
    const char* what = S_ISDIR(st.st_mode) ? "directory" : "file";
    if (st.st_uid != 0)
      return fmt::format("refused while running as root: {} {} is owned by user {}, not root", what, at.string(),
                         st.st_uid);
    const bool sticky_root_dir = !first && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && st.st_uid == 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
      return fmt::format("refused while running as root: {} {} is writable by {} (mode {})", what, at.string(),
                         (st.st_mode & S_IWOTH) ? "everyone" : "its group", mode_text(st.st_mode));
    if (!first) checked.push_back(at.native());
    first = false;
    if (at == at.parent_path()) break;
  }
  if (t_checks)
    for (auto& d : checked) t_checks->safe_dirs.insert(std::move(d));
  return std::nullopt;
}

std::optional<std::string> unsafe_directory_for_root(const std::filesystem::path& dir, bool create) {
  std::error_code ec;
  std::filesystem::path full = std::filesystem::absolute(dir, ec).lexically_normal();
  if (ec) return fmt::format("refused while running as root: directory {} has no absolute path", dir.string());
  if (!full.has_filename() && full.has_relative_path()) full = full.parent_path();  // a trailing '/'
  // From / down, each component by its own name (lstat: a symbolic link is refused, never
  // followed), so that each directory is checked before anything is made or read in it.
  std::filesystem::path at;
  const std::filesystem::path last = full;
  for (const auto& part : full) {
    at /= part;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 && create && errno == ENOENT && ::mkdir(at.c_str(), 0700) != 0 &&
        errno != EEXIST)
      return fmt::format("refused while running as root: directory {} cannot be made", at.string());
    if (::lstat(at.c_str(), &st) != 0)
      return fmt::format("refused while running as root: directory {} does not exist", at.string());
    if (S_ISLNK(st.st_mode))
      return fmt::format("refused while running as root: {} is a symbolic link", at.string());
    if (!S_ISDIR(st.st_mode)) return fmt::format("refused while running as root: {} is not a directory", at.string());
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
      return fmt::format("refused while running as root: directory {} is owned by user {}, not root", at.string(),
                         st.st_uid);
    const bool sticky_root_dir = at != last && (st.st_mode & S_ISVTX) && st.st_uid == 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
      return fmt::format("refused while running as root: directory {} is writable by {} (mode {})", at.string(),
                         (st.st_mode & S_IWOTH) ? "everyone" : "its group", mode_text(st.st_mode));
  }
  return std::nullopt;
}

}  // namespace pmc::detail
