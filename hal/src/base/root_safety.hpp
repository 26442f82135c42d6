// What pmchal refuses to read when it runs as root: a file that someone other than root could
// have written or replaced (plugins, configs, events files). Internal.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

struct stat;  // <sys/stat.h>, not included here: it declares umask, which tests name too

namespace pmc::detail {

// nullopt when the process is not root, or when neither the file nor a directory above it (on
// its real path, symbolic links resolved) is writable by group or others or owned by a user
// other than root; a sticky root-owned directory such as /tmp is accepted (only root can
// replace root's files in it). Otherwise one line saying which file or directory and why, as
// sudo and ssh say it.
std::optional<std::string> unsafe_for_root(const std::filesystem::path& file);

// For a directory that root writes to and reads back from (the parse cache), by the rules above
// and stricter: nullopt when every component of its absolute path, from / down to it, is a
// directory, not a symbolic link, owned by root, and not writable by group or others (a sticky
// root-owned directory above it is accepted, not the directory itself). Otherwise one line
// saying which component and why. With `create`, a missing component is made (mode 0700) as
// the walk reaches it, inside a directory already found safe. Checks whoever runs it; callers
// ask only when the process is root.
std::optional<std::string> unsafe_directory_for_root(const std::filesystem::path& dir, bool create);

// While one exists on a thread (Hal::open makes one), unsafe_for_root remembers the directories
// it found safe and does not walk them again, and scoped_stat remembers what each path's stat
// said: opening a HAL reads twenty-odd files under the same few directories, and the safety
// walk, the parse cache's key and the plugin checks would each stat them again. Scopes nest;
// the outermost one owns the memory. One thread's scope has it at a time: a scope made while
// another thread's lasts has none, and works as outside a scope.
class RootCheckScope {
 public:
  RootCheckScope();
  ~RootCheckScope();
  RootCheckScope(const RootCheckScope&) = delete;
  RootCheckScope& operator=(const RootCheckScope&) = delete;

 private:
  bool owner_ = false;
};

// stat(2) (follow true) or lstat(2) of `p`. Within a RootCheckScope the answer (a failure's
// errno too) is remembered for the scope: a file that changes while a HAL opens is seen as it
// was when first looked at, as if it had changed just after. Outside a scope, the call itself.
// Returns 0 or -1 with errno set, as the system calls do.
int scoped_stat(const std::filesystem::path& p, struct stat& st, bool follow = true);
int scoped_stat(const std::string& p, struct stat& st, bool follow = true);

// Within a RootCheckScope, where list_directory keeps a directory's listing for the scope (the
// plugin directories are listed to choose what to load and then to load it); null outside one.
std::optional<std::vector<std::string>>* scoped_listing(const std::string& dir);

}  // namespace pmc::detail
