// CPU lists: "0-3,6" (the sysfs format, perf stat's -C), and the CPUs online.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/cpu_list.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <string_view>
#include <vector>

namespace pmc {

// The CPUs of a list of numbers and ranges, comma-separated ("0-3,6"), ascending and each once;
// Scope::on_cpu(n) counts one of them. Throws invalid_argument quoting the text otherwise.
PMC_API std::vector<int> parse_cpu_list(std::string_view text);
// The CPUs online now (/sys/devices/system/cpu/online; the number the C library reports when
// that file cannot be read).
PMC_API std::vector<int> online_cpus();

}  // namespace pmc

#endif  // C++20
