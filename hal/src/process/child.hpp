// Running a command (pmc/process.hpp), the parts the tests reach: where the helper program is,
// and run_child with a given helper (none: the fork path).
#pragma once

#include <pmc/process.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace pmc::detail {

// The helper program run_child starts instead of forking (hal/helper/pmc_child.c): <libdir>/
// pmchal/pmc-child beside the plugin directory, when it is there, executable and, as root, safe
// (root_safety.hpp); empty otherwise.
std::filesystem::path child_helper();

// run_child through `helper`: the command's process and the watchdog are posix_spawn()ed
// helpers, so this process is never copied. An empty path, or a helper that cannot be started,
// forks instead (the child waits and executes the command itself; the watchdog is a fork).
ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options,
                      const std::filesystem::path& helper);

}  // namespace pmc::detail
