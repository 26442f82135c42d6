// The files pmchal reads by path (docs/user-guide.md, "Input files"): each is read only when it
// is a regular file (a named pipe, a device such as /dev/zero, a directory or a socket is
// refused, never waited on or read without end) and not larger than its kind's limit. A compact
// workload is streamed a line at a time: a regular file too, without a limit.
#pragma once
#if __cplusplus < 202002L
#error "<pmc/input_file.hpp> is pmchal's C++20 API: compile with -std=c++20, or use <pmc/pmc.h> from C or older C++"
#else

#include <pmc/export.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace pmc {

enum class InputKind {
  config,             // the config file
  cpuid_dump,         // a CPUID dump (--cpuid-dump, the config's `cpu`)
  cpu_description,    // a CPU description (.toml) in place of a CPUID dump
  events,             // an events file (a catalog, a cpu/ index) of the data or events_path
  metrics,            // a metric file
  workload,           // a workload in the TOML form
  emulation_rules,    // the emulation layer's rules (emulation.toml, a model's emulation-events.toml)
  region_report,      // the region report a program under `pmc stat --regions` wrote
  cachegrind_output,  // Cachegrind's output file (pmc stat --emulate)
  tool_log,           // the log of a tool the library ran (Valgrind's)
  vendor_data,        // pmc catalog import: a vendor's mapfile.csv and JSON files, the importer's tables
};

// The most bytes read of a file of that kind.
PMC_API std::uint64_t input_limit(InputKind kind);

// The whole file. Throws Error naming the file: io "FILE: cannot read the workload: REASON"
// (permission when the system refused it), io "FILE: not read as a workload: it is a named
// pipe, not a regular file", invalid_argument "FILE: 300 MB is over the 256 MB limit for a
// workload" (MB: 10^6 bytes).
PMC_API std::string read_input_file(const std::filesystem::path& file, InputKind kind);

}  // namespace pmc

#endif  // C++20
