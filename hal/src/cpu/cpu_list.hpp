// The kernel's CPU lists: which CPUs this machine has online.
//
// Two functions read "0-3,6", and they mean different things:
// - parse_sysfs_cpu_list (here) reads what the kernel writes in /sys/devices/system/cpu/online
//   and the other sysfs CPU lists: every CPU, in the kernel's order, as written; a malformed list
//   is a parse error of that file;
// - pmc::parse_cpu_list (hal/src/session/cpu_list.cpp, perf's -C) reads the CPUs a user selects
//   with this parser: repeats dropped, sorted, and a malformed list is the user's invalid argument.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

// "0-3,6,8-9" (the sysfs CPU list format, a trailing newline allowed) -> {0, 1, 2, 3, 6, 8, 9}.
// Throws parse.
std::vector<int> parse_sysfs_cpu_list(std::string_view text);

// The first line of a small kernel file (a sysfs value: "1", "0-3", a MIDR), without its newline;
// nullopt when it cannot be read.
std::optional<std::string> read_first_line(const std::filesystem::path& file);

// <sysfs_root>/devices/system/cpu/online; without it, 0 .. the online count of sysconf - 1.
std::vector<int> online_cpus(const std::filesystem::path& sysfs_root = "/sys");

}  // namespace pmc::detail
