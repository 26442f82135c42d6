// CPU lists (pmc/cpu_list.hpp): what a user typed (perf's -C), on top of the kernel's list
// parser (hal/src/cpu/cpu_list.hpp), with the checks sysfs's own lists never need.
#include <pmc/cpu_list.hpp>
#include <pmc/error.hpp>

#include "cpu_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace pmc {

std::vector<int> parse_cpu_list(std::string_view text) {
  const Error bad(errc::invalid_argument,
                  fmt::format("'{}' is not a CPU list such as 0-3,6 (numbers and ranges, comma-separated)", text));
  // What sysfs never writes and a user may: nothing, a trailing comma (which the sysfs parser
  // ends at), and numbers so long that their range would fill the memory.
  if (text.empty() || text.back() == ',') throw bad;
  std::size_t digits = 0;
  for (char c : text) {
    digits = std::isdigit(static_cast<unsigned char>(c)) ? digits + 1 : 0;
    if (digits > 6) throw bad;
  }
  std::vector<int> cpus;
  try {
    cpus = detail::parse_sysfs_cpu_list(text);
  } catch (const Error&) {
    throw bad;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> online_cpus() { return detail::online_cpus(); }

}  // namespace pmc
